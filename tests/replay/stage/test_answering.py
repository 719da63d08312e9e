"""Answering a reply as it streams: held-back tags, random chunk splits, continued replies."""

from __future__ import annotations

import random
from collections.abc import Iterator

import pytest
from helpers import FIXTURES, harrow, harrow_party

import tagparse
from engine import MAX_TAGS_PER_REPLY, Answer, Game, State
from replay import load_party, load_ruleset, replay
from replay.formats import transcript_from_openai
from replay.stage.answering import ReplyStream

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


def random_chunks(text: str, seed: int, most: int) -> Iterator[str]:
    """``text`` in pieces of 1 to ``most`` characters, cut where ``seed`` says."""
    rng = random.Random(seed)
    at = 0
    while at < len(text):
        step = rng.randint(1, most)
        yield text[at:at + step]
        at += step


def streamed(game: Game, state: State, text: str, seed: int, most: int) -> str:
    """What the stage sends of ``text`` streamed in :func:`random_chunks`."""
    stream = ReplyStream(game, state, 0)
    return "".join(stream.feed(piece) for piece in random_chunks(text, seed, most)) + \
        stream.finish()


@pytest.mark.parametrize("text", REPLIES)
def test_any_chunk_split_gives_the_same_answered_text(text: str) -> None:
    game = harrow()
    state = harrow_party(game)
    expected = whole(text)
    for seed in range(40):
        assert streamed(game, state, text, seed, 6) == expected


def test_well_formed_tags_come_back_answered_and_malformed_ones_as_written() -> None:
    out = whole(REPLIES[3])
    tags = tagparse.scan(out).tags
    assert tags[0].malformed is not None and tags[0].raw in REPLIES[3]
    assert tags[1].answer is not None and dict(tags[1].answer)["ok"] == "true"


def test_a_model_written_answer_part_is_replaced_by_the_engines() -> None:
    tags = tagparse.scan(whole(REPLIES[5])).tags
    assert dict(tags[0].answer or ())["ok"] == "true"


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


# Replies of several tags, answered as they stream (issue 23: each tag once, as it completes):
# two tags of one kind (the second rolls the turn's second check's dice), [place:] first,
# [place:] after other tags (resolved before them: the reply is answered whole again), and
# malformed tags among them.
LIVE = [
    'Ada listens. [skill_check: skill="ward" dc="10" who="Ada"] And again, harder '
    '[skill_check: skill="ward" dc="14" who="Ada"], then pays [inventory: action="pay" '
    'amount="1 penny" who="Ada"] and listens once more [skill_check: skill="ward" dc="12"].',
    'The square. [place: name="Millbrook" size="market town"] A price. [inventory: '
    'action="buy" item="Oilskin coat" level="dear" who="Ada"] and [inventory: action="buy" '
    'item="Warming tonic" who="Ada"] [skill_check: skill="insight" dc="10" who="Mira"]',
    'A price. [inventory: action="buy" item="Oilskin coat" who="Ada"] in [place: '
    'name="Millbrook" size="market town"], then [skill_check: skill="ward" dc="10"] and '
    '[inventory: action="buy" item="Warming tonic" who="Mira"] [place: name="Caer Ys" '
    'size="city"]',
    'Broken [inventory: action="add" item="Rope" [skill_check: skill="ward" dc="9"] then '
    '[inventory: action="add"\n item="Torch"] and [skill_check: skill="ward" dc="11"]',
]


@pytest.fixture(scope="module")
def market() -> tuple[Game, State]:
    game = load_ruleset(FIXTURES / "rulesets" / "gravewatch.json")
    return game, load_party(game, FIXTURES / "parties" / "markets.json")


def replayed(game: Game, state: State, text: str) -> list[Answer]:
    """The answers the fold gives GM reply ``text`` once the chat is saved and replayed."""
    transcript = transcript_from_openai([{"role": "user", "content": "Go on."},
                                         {"role": "assistant", "content": text}])
    return [found.answer for found in replay(game, transcript, state).answers]


def test_the_live_test_replies_roll_each_check_of_a_kind_with_its_own_dice(
        market: tuple[Game, State]) -> None:
    """A wrong ordinal would give the second check the first one's dice: these differ."""
    first, second = [a.record["rolls"] for a in replayed(*market, LIVE[0])
                     if a.tag.kind == "skill_check"][:2]
    assert first != second


@pytest.mark.parametrize("text", LIVE)
def test_live_answers_are_the_whole_reply_answers_at_every_chunk(
        market: tuple[Game, State], text: str) -> None:
    game, state = market
    expected = replayed(game, state, text)
    assert len(expected) >= 3
    for seed in range(12):
        stream = ReplyStream(game, state, 0)
        for piece in random_chunks(text, seed, 9):
            stream.feed(piece)
            # what was sent so far is answered as the whole reply up to there would be
            assert stream.answers == replayed(game, state, stream.full[:stream.sent])
        stream.finish()
        assert stream.answers == expected


# Not LIVE[2]: a [place:] after other tags changes the answers of tags already sent.
@pytest.mark.parametrize("text", [LIVE[0], LIVE[1], LIVE[3]])
def test_a_streamed_reply_sends_the_text_of_the_reply_answered_whole(
        market: tuple[Game, State], text: str) -> None:
    game, state = market
    whole_reply = ReplyStream(game, state, 0)
    answered = whole_reply.feed(text) + whole_reply.finish()
    for seed in range(12):
        assert streamed(game, state, text, seed, 9) == answered


def test_a_live_reply_past_the_tag_limit_is_answered_as_the_whole_reply(
        market: tuple[Game, State]) -> None:
    """Past MAX_TAGS_PER_REPLY the reply is answered whole (the tags over it are refused
    unapplied, by their place in apply_reply's order)."""
    game, state = market
    text = "".join(f'{i} [inventory: action="add" item="Rope" count="{i + 1}"] '
                   for i in range(MAX_TAGS_PER_REPLY + 5))  # no tag repeated (MAX_REPEATS)
    stream = ReplyStream(game, state, 0)
    for piece in random_chunks(text, 0, 400):
        stream.feed(piece)
    stream.finish()
    expected = replayed(game, state, text)
    assert expected[-1].reason == "too-many-tags"
    assert stream.answers == expected
