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
    MAX_PENDING,
    MemoryStore,
    PositionKeys,
    SharedPrefixSequence,
    SnapshotCache,
    common_prefix,
    fold_turns,
    game_scope,
)
from replay.formats.openai import read_turns
from replay.transcript import Turn

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
    """PositionKeys(root, turns, known) gives every position the key PositionKeys(root, turns) gives, whatever
    the turns share with ``known`` (none, part of a block, whole blocks, all of them)."""
    known_turns = _turns(known_length, "a")
    shared = min(shared, known_length)
    turns = known_turns[:shared] + [Turn(i, "gm", f"b{i}") for i in range(shared, shared + extra)]
    known = PositionKeys(b"r" * 20, known_turns)
    root = b"r" * 20 if same_root else b"s" * 20
    fresh, reused = PositionKeys(root, turns), PositionKeys(root, turns, known)
    assert fresh.keys(0, len(turns)) == reused.keys(0, len(turns))
    assert fresh.keys(len(turns), len(turns)) == reused.keys(len(turns), len(turns))


@given(st.lists(st.integers(0, 3), max_size=600), st.lists(st.integers(0, 3), max_size=600))
def test_common_prefix_counts_the_shared_leading_items(left: list[int], right: list[int]) -> None:
    expected = 0
    while expected < min(len(left), len(right)) and left[expected] == right[expected]:
        expected += 1
    assert common_prefix(left, right) == expected


def test_turns_of_a_request_that_repeats_an_earlier_one_are_the_full_reading() -> None:
    """SnapshotCache.turns reads only the new messages, and gives exactly read_turns."""
    cache = SnapshotCache(MemoryStore())
    first = chat(300)
    assert cache.turns(first) == read_turns(first)
    grown = json.loads(json.dumps(first))  # a new request body: equal, not the same objects
    grown += [{"role": "user", "content": "more"}, {"role": "assistant", "content": TAGS[0]}]
    assert cache.turns(grown) == read_turns(grown)
    edited = copy.deepcopy(grown)
    edited[250]["content"] = "an edited message"
    assert cache.turns(edited) == read_turns(edited)
    other = chat(40, salt="x")
    assert cache.turns(other) == read_turns(other)
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
        cold = fold_turns(game, start, read_turns(messages), SnapshotCache(MemoryStore()))
        assert outcome.snapshot.state.canonical() == cold.snapshot.state.canonical()
        assert outcome.snapshot.replies == cold.snapshot.replies
        assert [a.to_json() for a in outcome.snapshot.last_answers] == [
            a.to_json() for a in cold.snapshot.last_answers]
        if round_:
            assert (outcome.anchor, outcome.folded) == ("cached", 2)


@given(st.lists(st.integers(), max_size=300), st.integers(-5, 305),
       st.lists(st.integers(), max_size=140), st.integers(0, 305), st.lists(st.integers(),
                                                                            max_size=70))
@settings(max_examples=200, deadline=None)
def test_a_run_reads_as_the_list_it_stands_for(items: list[int], keep: int, more: list[int],
                                               keep_again: int, again: list[int]) -> None:
    """A SharedPrefixSequence, and a SharedPrefixSequence extended from the first items of another (twice), read exactly as the
    lists they stand for: length, items, negative indexes, slices, iteration, equality."""
    run = SharedPrefixSequence(items)
    assert run == items and list(run) == items and len(run) == len(items)
    grown = run.extended(keep, more)
    expected = items[:max(0, keep)] + more
    again_expected = expected[:keep_again] + again
    for got, want in ((grown, expected), (grown.extended(keep_again, again), again_expected)):
        assert list(got) == want and len(got) == len(want) and got == want
        assert [got[i] for i in range(-len(want), len(want))] == want[-len(want):] + want
        for start, stop, step in ((None, None, None), (3, -2, None), (-70, None, None),
                                  (1, 200, 2), (None, None, -1), (65, 64, None)):
            assert got[start:stop:step] == want[start:stop:step]
        with pytest.raises(IndexError):
            got[len(want)]
    assert run == items  # the run extended from is unchanged


def _stored(store: MemoryStore) -> dict[str, bytes]:
    return dict(store._items)


def test_a_deferred_cache_stores_exactly_what_a_direct_one_stores(game: Game,
                                                                  start: State) -> None:
    """A deferred cache keeps a fold's snapshots until flush(): the next request resumes from
    them meanwhile (and re-anchors on them), and flush() stores the very entries a direct
    cache stores at once."""
    direct, deferred = SnapshotCache(MemoryStore()), SnapshotCache(MemoryStore(), deferred=True)
    scope = f"gmtags:snap:{game_scope(game, start).hex()}"
    messages = chat(70)
    grown = [*messages, {"role": "user", "content": "more"},
             {"role": "assistant", "content": TAGS[1]}]
    dropped = [grown[0], *grown[21:]]  # the front dropped, before anything is stored
    seen: dict[bool, list[tuple[str, int, int, str]]] = {}
    for cache in (direct, deferred):
        cold = fold_turns(game, start, read_turns(messages), cache)
        assert cold.anchor == "start"
        if cache is deferred:  # only the start is stored so far
            assert [k for k in _stored(cache.store) if k.startswith("gmtags:snap:")] == [scope]
        warm = fold_turns(game, start, read_turns(grown), cache)
        assert (warm.anchor, warm.reused, warm.folded) == ("cached", 140, 2)
        anchored = fold_turns(game, start, read_turns(dropped), cache)
        assert anchored.anchor == "re-anchored" and anchored.reused > 1
        seen[cache.deferred] = [(o.anchor, o.reused, o.folded, o.snapshot.state.canonical())
                                for o in (cold, warm, anchored)]
    assert seen[True] == seen[False]
    deferred.flush()
    assert _stored(deferred.store) == _stored(direct.store)
    assert not deferred._pending and not deferred._pending_windows and not deferred._pending_next
    again = fold_turns(game, start, read_turns(grown), deferred)
    assert (again.anchor, again.folded) == ("cached", 0)


def test_a_deferred_cache_nobody_flushes_stores_by_itself(game: Game, start: State) -> None:
    """Kept-back snapshots are bounded: past MAX_PENDING rows they are stored at once."""
    cache = SnapshotCache(MemoryStore(), deferred=True)
    messages = chat(MAX_PENDING // 2 + 10)
    fold_turns(game, start, read_turns(messages), cache)
    assert not cache._pending and len(cache.store) > MAX_PENDING
