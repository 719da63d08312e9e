"""Hostile input (issue #14): nothing a model or player writes crashes gmtags, hangs it, or
makes it allocate without bound. Each case gets a refusal or a diagnostic."""

from __future__ import annotations

import json

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

import tagparse
from engine.apply import MAX_TAGS_PER_REPLY
from engine.ruleset import validate
from replay import TranscriptError, parse_transcript, replay
from replay.files import InputError, parse_json

GAME = harrow()


def fold_text(text: str):
    return replay(GAME, parse_transcript(json.dumps({"role": "gm", "text": text}),
                                         format="gmtags"), harrow_party(GAME))


def test_a_one_megabyte_tag_is_refused_or_read_not_crashed():
    result = fold_text('[inventory: action="add" item="' + "x" * 1_000_000 + '"]')
    assert len(result.answers) == 1
    stack = result.state.characters[0].bag[-1]
    assert len(stack.name) <= 200  # names are cut to a sane length


def test_one_hundred_thousand_tags_in_a_reply():
    text = '[inventory: action="add" item="Torch" who="Ada"] ' * 100_000
    result = fold_text(text)
    assert len(result.answers) == 100_000
    torches = sum(s.count for s in result.state.characters[0].bag if s.item == "kit/torch")
    assert torches == MAX_TAGS_PER_REPLY
    assert {a.answer.reason for a in result.answers[MAX_TAGS_PER_REPLY:]} == {"too-many-tags"}


@pytest.mark.parametrize("text", [
    "[" * 100_000,
    "]" * 100_000,
    '"' * 100_000,
    "[inventory: " * 20_000,
    '[inventory: a="' * 20_000,
    "[[[[inventory: action=\"add\" item=\"Rope\"]]]]" * 1_000,
    "\x00\x01\x02[inventory: action=\"add\" item=\"Ro\x07pe\"]\x1b[0m" * 100,
])
def test_brackets_quotes_and_control_characters(text):
    result = tagparse.scan(text)
    assert isinstance(result.tags, tuple)
    fold_text(text)


def test_invalid_utf8_in_a_transcript_is_a_diagnostic():
    data = b'{"role": "gm", "text": "caf\xe9 [inventory: action=\\"add\\" item=\\"Rope\\"]"}\n'
    transcript = parse_transcript(data, format="gmtags")
    result = replay(GAME, transcript, harrow_party(GAME))
    assert result.answers[0].answer.ok
    assert any(d.code == "bad-utf8" for d in result.diagnostics)


@pytest.mark.parametrize(("tag", "reason"), [
    ('[inventory: action="add" item="Rope" count="999999999999999999999"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="-1"]', "bad-count"),
    ('[inventory: action="earn" amount="1e400 crowns"]', "bad-amount"),
    ('[inventory: action="pay" amount="99999999999999999999999 pennies"]', "bad-amount"),
])
def test_huge_or_negative_numbers_are_refused(tag, reason):
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert new is state


def test_a_ten_kilobyte_name():
    state = harrow_party(GAME)
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="' + "n" * 10_000 + '"]')
    assert reply.ok
    assert len(new.characters[0].bag[-1].name) == 200


def test_json_nested_ten_thousand_deep_is_an_input_error():
    with pytest.raises(InputError):
        parse_json("[" * 10_000 + "]" * 10_000, "deep.json")
    deep_line = '{"role": "gm", "text": ' + "[" * 10_000 + "]" * 10_000 + "}"
    transcript = parse_transcript('{"role": "player", "text": "hi"}\n' + deep_line,
                                  format="gmtags")
    assert [d.code for d in transcript.diagnostics] == ["bad-json"]
    with pytest.raises(TranscriptError):
        parse_transcript(deep_line)


def test_a_ruleset_with_a_derived_cycle_is_refused_at_load():
    document = fixture_json("rulesets/harrow.json")
    document["sheet"]["derived"] = [
        {"id": "a", "label": "A", "of": [{"derived": "b"}]},
        {"id": "b", "label": "B", "of": [{"derived": "c"}]},
        {"id": "c", "label": "C", "of": [{"derived": "a"}]},
    ]
    _, problems = validate(document)
    assert any("cycle" in p.message for p in problems)


def test_a_ruleset_nested_ten_thousand_deep_is_refused():
    document: object = {}
    for _ in range(10_000):
        document = {"x": document}
    _, problems = validate({"id": "deep", "label": "Deep", "items": document})
    assert problems
