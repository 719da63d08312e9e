"""Where the GM section goes, and how the model reads its past replies (replay.stage.layout).

A local model server re-reads the prompt from the first token that differs from the last one,
so what changes rarely is up front and what changes each turn near the end; the model's past
replies reach it without answer parts, which it would imitate. None of it changes what is
folded or answered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from helpers import harrow, harrow_party

import tagparse
from engine import Game
from engine.text.prompt import front_context, reply_reminder, turn_context, with_last_answers
from replay.cache import MemoryStore, SnapshotCache
from replay.files import InputError
from replay.stage.app import FRONT_BEGIN, SECTION_BEGIN, SECTION_END, GameFolder, prepare
from replay.stage.body import BodyReader
from replay.stage.layout import Layout, read_layout

SYSTEM = {"role": "system", "content": "GM of Harrow Vale."}
REPLIES = [
    'Found. [inventory: action="add" item="Torch" count="2" who="Ada" | ok="true" '
    'text="Added Torch ×2 to Ada\'s bag."]',
    'You climb. [skill_check: skill="Climb" dc="9" who="Ada" | ok="true" text="Climb: 14 vs 9: '
    'success." success="true"] The wall is behind you.',
    "Nothing happens.",
    'A wolf! [combat: op="start" foe="Wolf" rank="D" tier="1" count="1" | ok="true" '
    'text="A fight begins."]',
]


@pytest.fixture(scope="module")
def game() -> Game:
    return harrow()


def chat(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [SYSTEM]
    for index in range(turns):
        messages += [{"role": "user", "content": f"turn {index}"},
                     {"role": "assistant", "content": REPLIES[index % len(REPLIES)]}]
    return [*messages, {"role": "user", "content": "go on"}]


@pytest.mark.parametrize("depth", [0, 1, 2, 3, 50])
def test_the_front_part_follows_the_system_messages_and_the_turn_part_sits_at_its_depth(
        game: Game, depth: int) -> None:
    folder = GameFolder("harrow", game, harrow_party(game), layout=Layout(state_depth=depth))
    body = {"messages": chat(2)}  # the last reply has a tag: LAST ANSWERS
    prepared = prepare(folder, SnapshotCache(MemoryStore()), body)
    sent = prepared.body["messages"]
    state, last = prepared.outcome.snapshot.state, prepared.outcome.snapshot.last_answers
    front = "\n".join([FRONT_BEGIN, front_context(game, state), SECTION_END])
    turn = "\n".join([SECTION_BEGIN, with_last_answers(turn_context(game, state), last),
                      reply_reminder(game, state), SECTION_END])
    assert sent[0] == SYSTEM and sent[1] == {"role": "system", "content": front}
    where = max(2, len(sent) - 1 - depth)  # never before the front part
    assert sent[where] == {"role": "system", "content": turn}
    assert len(sent) == len(body["messages"]) + 2
    assert "INVENTORY" in turn and "INVENTORY" not in front
    assert "LAST ANSWERS" in turn
    assert turn.splitlines()[-2].startswith("Now reply to the player")  # last before the player


def test_the_front_part_is_the_same_on_every_turn_until_a_fight_starts(game: Game) -> None:
    """What a model server caches: the prompt up to the turn part does not change between
    turns, but for the turn's own messages (a fight's start adds how to fight)."""
    folder = GameFolder("harrow", game, harrow_party(game))
    cache = SnapshotCache(MemoryStore())
    fronts = []
    for turns in range(1, 5):
        sent = prepare(folder, cache, {"messages": chat(turns)}).body["messages"]
        fronts.append(sent[1]["content"])
    assert fronts[0] == fronts[1] == fronts[2]  # the fight starts in the 4th reply
    assert fronts[3] != fronts[2] and fronts[3].startswith(fronts[2][:-len(SECTION_END)].rstrip())
    assert "How to fight" in fronts[3] or "[attack:" in fronts[3]


def test_the_model_reads_its_past_replies_without_answer_parts(game: Game) -> None:
    folder = GameFolder("harrow", game, harrow_party(game))
    body = {"messages": chat(4)}
    sent = prepare(folder, SnapshotCache(MemoryStore()), body).body["messages"]
    replies = [m["content"] for m in sent if m["role"] == "assistant"]
    assert replies[0] == 'Found. [inventory: action="add" item="Torch" count="2" who="Ada"]'
    assert replies[1] == ('You climb. [skill_check: skill="Climb" dc="9" who="Ada"] The wall is '
                          "behind you.")
    assert replies[2] == "Nothing happens."
    for reply in replies:
        assert all(tag.answer is None for tag in tagparse.scan(reply).tags)
    inline = GameFolder("harrow", game, harrow_party(game),
                        layout=Layout(past_answers="inline"))
    sent = prepare(inline, SnapshotCache(MemoryStore()), body).body["messages"]
    assert [m["content"] for m in sent if m["role"] == "assistant"] == [
        m["content"] for m in body["messages"] if m["role"] == "assistant"]


@pytest.mark.parametrize("layout", [Layout(), Layout(state_depth=None), Layout(state_depth=4),
                                    Layout(past_answers="inline")])
def test_the_bytes_sent_on_are_the_body_as_built_and_the_fold_does_not_depend_on_the_layout(
        game: Game, layout: Layout) -> None:
    """The client's bytes with the parts spliced in and the past replies rewritten read as the
    very body :attr:`Prepared.body` builds; the fold and its answers are the same whatever
    the layout."""
    folder = GameFolder("harrow", game, harrow_party(game), layout=layout)
    plain = GameFolder("harrow", game, harrow_party(game), layout=Layout(state_depth=None,
                                                                         past_answers="inline"))
    reader = BodyReader()
    for turns in (1, 2, 5, 6):
        raw = json.dumps({"model": "m", "messages": chat(turns), "stream": False},
                         indent=1).encode()
        read = reader.read(raw)
        prepared = prepare(folder, SnapshotCache(MemoryStore()), read)
        assert json.loads(prepared.content()) == prepared.body
        other = prepare(plain, SnapshotCache(MemoryStore()), json.loads(raw))
        assert prepared.outcome.snapshot.state == other.outcome.snapshot.state
        assert prepared.outcome.snapshot.last_answers == other.outcome.snapshot.last_answers


@pytest.mark.parametrize(("options", "problem"), [
    ({"stateDepth": -1}, "stateDepth"), ({"stateDepth": "1"}, "stateDepth"),
    ({"stateDepth": True}, "stateDepth"), ({"stateDepth": 10_001}, "stateDepth"),
    ({"pastAnswers": "none"}, "pastAnswers"),
])
def test_bad_layout_options_name_their_pointer(options: dict[str, Any], problem: str) -> None:
    with pytest.raises(InputError, match=f"#/{problem}:"):
        read_layout(options, "options.json")


def test_layout_options_default_and_read() -> None:
    assert read_layout({}, "o") == Layout(1, "section")
    assert read_layout({"stateDepth": None, "pastAnswers": "inline"}, "o") == Layout(None,
                                                                                      "inline")
