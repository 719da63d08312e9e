"""What the snapshot cache reuses between requests (issue 12: a reply's cost must not grow with
the chat): chains built on a recent chain, turns read on a recent request, parsed states. Each
shortcut must give exactly what the full computation gives."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import harrow, harrow_party
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, State
from replay.cache import (
    LOOKUP_BATCH,
    Chain,
    MemoryStore,
    SnapshotCache,
    Turn,
    common_prefix,
    fold_turns,
    openai_turns,
)

TAGS = [
    'Found. [inventory: action="add" item="Torch" count="2" who="Ada"]',
    'Paid. [inventory: action="pay" amount="3 pennies" who="Ada"]',
    "Nothing happens.",
]


def chat(turns: int, salt: str = "") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM of Harrow Vale."}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"turn {index}{salt}"})
        messages.append({"role": "assistant", "content": TAGS[index % len(TAGS)]})
    return messages


@pytest.fixture(scope="module")
def game() -> Game:
    return harrow()


@pytest.fixture(scope="module")
def start(game: Game) -> State:
    return harrow_party(game)


def _turns(count: int, salt: str) -> list[Turn]:
    return [Turn(i, "player" if i % 3 else "gm", f"{salt}{i}") for i in range(count)]


@given(st.integers(0, 3 * LOOKUP_BATCH + 5), st.integers(0, 3 * LOOKUP_BATCH + 5),
       st.integers(0, 2 * LOOKUP_BATCH), st.booleans())
@settings(max_examples=200, deadline=None)
def test_a_chain_built_on_a_known_chain_has_the_same_keys(
        known_length: int, shared: int, extra: int, same_root: bool) -> None:
    """Chain(root, turns, known) gives every position the key Chain(root, turns) gives, whatever
    the turns share with ``known`` (none, part of a block, whole blocks, all of them)."""
    known_turns = _turns(known_length, "a")
    shared = min(shared, known_length)
    turns = known_turns[:shared] + [Turn(i, "gm", f"b{i}") for i in range(shared, shared + extra)]
    known = Chain(b"r" * 20, known_turns)
    root = b"r" * 20 if same_root else b"s" * 20
    fresh, reused = Chain(root, turns), Chain(root, turns, known)
    assert fresh.keys(0, len(turns)) == reused.keys(0, len(turns))
    assert fresh.keys(len(turns), len(turns)) == reused.keys(len(turns), len(turns))


@given(st.lists(st.integers(0, 3), max_size=600), st.lists(st.integers(0, 3), max_size=600))
def test_common_prefix_counts_the_shared_leading_items(left: list[int], right: list[int]) -> None:
    expected = 0
    while expected < min(len(left), len(right)) and left[expected] == right[expected]:
        expected += 1
    assert common_prefix(left, right) == expected


def test_turns_of_a_request_that_repeats_an_earlier_one_are_the_full_reading() -> None:
    """SnapshotCache.turns reads only the new messages, and gives exactly openai_turns."""
    cache = SnapshotCache(MemoryStore())
    first = chat(300)
    assert cache.turns(first) == openai_turns(first)
    grown = json.loads(json.dumps(first))  # a new request body: equal, not the same objects
    grown += [{"role": "user", "content": "more"}, {"role": "assistant", "content": TAGS[0]}]
    assert cache.turns(grown) == openai_turns(grown)
    edited = copy.deepcopy(grown)
    edited[250]["content"] = "an edited message"
    assert cache.turns(edited) == openai_turns(edited)
    other = chat(40, salt="x")
    assert cache.turns(other) == openai_turns(other)
    assert cache.turns([]) == []


def test_a_warm_fold_equals_a_cold_one_request_after_request(game: Game, start: State) -> None:
    """Reusing chains, turns and parsed states changes nothing: each request of a growing chat
    folds to the state and answers a cache that saw nothing before gives (and the same keys,
    so it resumes from the snapshot the previous request stored)."""
    warm = SnapshotCache(MemoryStore())
    messages = chat(70)
    for round_ in range(4):
        messages = json.loads(json.dumps(messages))
        messages += [{"role": "user", "content": f"more {round_}"},
                     {"role": "assistant", "content": TAGS[round_ % len(TAGS)]}]
        outcome = fold_turns(game, start, warm.turns(messages), warm)
        cold = fold_turns(game, start, openai_turns(messages), SnapshotCache(MemoryStore()))
        assert outcome.snapshot.state.canonical() == cold.snapshot.state.canonical()
        assert outcome.snapshot.replies == cold.snapshot.replies
        assert [a.to_json() for a in outcome.snapshot.last_answers] == [
            a.to_json() for a in cold.snapshot.last_answers]
        if round_:
            assert (outcome.anchor, outcome.folded) == ("cached", 2)
