"""Answering a reply as it streams: held-back tags, random chunk splits, continued replies."""

from __future__ import annotations

import random

import pytest
from helpers import harrow, harrow_party

import tagparse
from replay.stage.answering import ReplyStream, settled

REPLIES = [
    'Plain prose with [brackets] and [1] and a [Note: aside].',
    'You find rope. [inventory: action="add" item="Rope" who="Ada"] Onward.',
    "[INVENTORY : action='pay' amount=\"3 pennies\"] then [inventory: action=\"add\" item=\"Torch\""
    " count=\"2\"]",
    'Broken [inventory: action="add" item="Rope" [inventory: action="add" item="Torch"] end',
    'Across lines [inventory: action="add"\n item="Rope"] done',
    'A model copies answers [inventory: action="add" item="Rope" | ok="false" text="x"] here',
    "Unfinished at the end [inventory: action=\"add\" item=\"Ro",
]


def whole(text: str, before: str = "") -> str:
    game = harrow()
    stream = ReplyStream(game, harrow_party(game), 0, before=before)
    return stream.feed(text) + stream.finish()


@pytest.mark.parametrize("text", REPLIES)
def test_any_chunk_split_gives_the_same_answered_text(text: str) -> None:
    game = harrow()
    state = harrow_party(game)
    expected = whole(text)
    for seed in range(40):
        rng = random.Random(seed)
        stream = ReplyStream(game, state, 0)
        out, at = "", 0
        while at < len(text):
            step = rng.randint(1, 6)
            out += stream.feed(text[at:at + step])
            at += step
        assert out + stream.finish() == expected


def test_well_formed_tags_come_back_answered_and_malformed_ones_as_written() -> None:
    out = whole(REPLIES[3])
    tags = tagparse.scan(out).tags
    assert tags[0].malformed is not None and tags[0].raw in REPLIES[3]
    assert tags[1].answer is not None and dict(tags[1].answer)["ok"] == "true"


def test_a_model_written_answer_part_is_replaced_by_the_engines() -> None:
    tags = tagparse.scan(whole(REPLIES[5])).tags
    assert dict(tags[0].answer or ())["ok"] == "true"


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", 5), ("a [", 2), ("a [inv", 2), ("a [sighs", 8), ("a [inventory ", 2),
    ("a [inventory: x", 2), ('a [inventory: x="1"] b', 22), ("a [ski", 2), ("a [zz", 5),
    ('a [inventory: item="unclosed\nnext', 33),
])
def test_what_is_held_back(text: str, expected: int) -> None:
    assert settled(text, 0, final=False) == expected


def test_a_continued_reply_answers_the_tag_that_straddles_the_old_text() -> None:
    before = 'You find [inventory: action="add" '
    out = whole('item="Rope" who="Ada"] and more.', before=before)
    assert out.startswith('item="Rope" who="Ada" | ok="true"')
    assert tagparse.scan(before + out).tags[0].attrs == (
        ("action", "add"), ("item", "Rope"), ("who", "Ada"))


def test_a_straddling_tag_closed_markdown_style_gets_its_answer_before_the_escape() -> None:
    """issue 28's ``\\]`` close, in a continued reply: the answer goes before ``\\]``, so the
    tag reads back without stray repairs."""
    before = 'You find \\[inventory: action="add" '
    out = whole('item="Rope" who="Ada"\\] and more.', before=before)
    assert out.startswith('item="Rope" who="Ada" | ok="true"') and '"\\] and more.' in out
    scanned = tagparse.scan(before + out)
    assert scanned.tags[0].attrs == (("action", "add"), ("item", "Rope"), ("who", "Ada"))
    assert {d.code for d in scanned.diagnostics} <= {"markdown-escape"}
