"""The snapshot cache and the incremental fold (DESIGN.md "State, snapshots and scale")."""

from __future__ import annotations

import json
import logging
from typing import Any

import pytest
from helpers import harrow, harrow_party
from stage_servers import RedisServer, free_port

from engine import Game, State
from replay import replay
from replay.cache import (
    ENTRY_OVERHEAD,
    MemoryStore,
    RedisStore,
    SnapshotCache,
    Store,
    fold_turns,
)
from replay.cache import snapshots as cache_module
from replay.formats import transcript_from_openai
from replay.formats.openai import read_turns
from replay.transcript import Turn

TAGS = [
    'Found. [inventory: action="add" item="Torch" count="2" who="Ada"]',
    'Paid. [inventory: action="pay" amount="3 pennies" who="Ada"]',
    "Nothing happens.",
    'Oops [inventory: action="remove" item="Lantern of Dreams"] [inventory: action="earn" '
    'amount="2 shillings" who="Bram the Quiet"]',
    '[inventory: action="add" item="Rope" | ok="false" text="lies"]',
]


def chat(turns: int) -> list[dict[str, Any]]:
    """A system message, then player and GM turns with a tag in most GM replies."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM of Harrow Vale."}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"turn {index}"})
        messages.append({"role": "assistant", "content": TAGS[index % len(TAGS)]})
    return messages


def turns_of(messages: list[dict[str, Any]]) -> list[Turn]:
    return read_turns(messages)


@pytest.fixture(scope="module")
def game() -> Game:
    return harrow()


@pytest.fixture(scope="module")
def start(game: Game) -> State:
    return harrow_party(game)


def test_the_incremental_fold_equals_the_full_replay(game: Game, start: State) -> None:
    messages = chat(12)
    expected = replay(game, transcript_from_openai(messages), start)
    outcome = fold_turns(game, start, turns_of(messages), SnapshotCache(MemoryStore()))
    assert outcome.snapshot.state.canonical() == expected.state.canonical()
    assert [a.to_json() for a in outcome.answers] == [a.to_json() for a in expected.answers]
    assert outcome.anchor == "start" and outcome.folded == 24


def test_a_new_reply_folds_only_the_turns_after_the_cached_prefix(game: Game,
                                                                   start: State) -> None:
    cache = SnapshotCache(MemoryStore())
    fold_turns(game, start, turns_of(chat(10)), cache)
    longer = chat(11)
    outcome = fold_turns(game, start, turns_of(longer), cache)
    assert (outcome.anchor, outcome.reused, outcome.folded) == ("cached", 20, 2)
    whole = replay(game, transcript_from_openai(longer), start)
    assert outcome.snapshot.state.canonical() == whole.state.canonical()
    again = fold_turns(game, start, turns_of(longer), cache)  # a regenerated reply
    assert again.folded == 0 and again.snapshot.state == outcome.snapshot.state


def test_the_last_answers_come_back_from_the_snapshot(game: Game, start: State) -> None:
    cache = SnapshotCache(MemoryStore())
    cold = fold_turns(game, start, turns_of(chat(4)), cache)
    warm = fold_turns(game, start, turns_of(chat(4)), cache)
    assert [a.to_json() for a in warm.snapshot.last_answers] == \
        [a.to_json() for a in cold.snapshot.last_answers]
    assert len(warm.snapshot.last_answers) == 2


def test_system_messages_anywhere_do_not_change_the_fold(game: Game, start: State) -> None:
    cache = SnapshotCache(MemoryStore())
    plain = chat(6)
    fold_turns(game, start, turns_of(plain), cache)
    injected = [*plain[:5], {"role": "system", "content": "[World info: mills]"}, *plain[5:]]
    outcome = fold_turns(game, start, turns_of(injected), cache)
    assert outcome.anchor == "cached" and outcome.folded == 0


@pytest.mark.parametrize("corruption", [
    b"not json", b"[]", b'{"format": "gmtags-snapshot/1"}',
    json.dumps({"format": "gmtags-snapshot/1", "engine": "0.0.0-old"}).encode(),
])
def test_a_corrupt_or_stale_snapshot_is_ignored_and_recomputed(
        game: Game, start: State, corruption: bytes) -> None:
    store = MemoryStore()
    cache = SnapshotCache(store)
    messages = chat(5)
    expected = fold_turns(game, start, turns_of(messages), cache).snapshot.state
    for key in list(store._items):
        if key.startswith("gmtags:snap:"):
            store._items[key] = corruption
    outcome = fold_turns(game, start, turns_of(messages), cache)
    assert outcome.snapshot.state.canonical() == expected.canonical()
    assert outcome.folded == 10


def test_a_state_whose_bytes_do_not_match_its_hash_is_ignored(game: Game, start: State) -> None:
    store = MemoryStore()
    cache = SnapshotCache(store)
    messages = chat(5)
    expected = fold_turns(game, start, turns_of(messages), cache).snapshot.state
    for key in list(store._items):
        if key.startswith("gmtags:state:"):
            store._items[key] = store._items[key].replace(b'"count":2', b'"count":9')
    outcome = fold_turns(game, start, turns_of(messages), cache)
    assert outcome.snapshot.state.canonical() == expected.canonical()


def test_the_lru_keeps_at_most_its_bytes() -> None:
    store = MemoryStore(max_bytes=3 * (1 + 1 + ENTRY_OVERHEAD))
    store.put_many({"a": b"1", "b": b"2", "c": b"3"})
    assert store.get_many(["a"]) == [b"1"]  # a is now the most recent
    store.put_many({"d": b"4"})
    assert store.get_many(["a", "b", "c", "d"]) == [b"1", None, b"3", b"4"]
    assert len(store) == 3


def test_redis_down_is_a_miss_logged_once(caplog: pytest.LogCaptureFixture, game: Game,
                                          start: State) -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", timeout=0.2)
    with caplog.at_level(logging.WARNING, logger="gmtags.cache"):
        outcome = fold_turns(game, start, turns_of(chat(3)), SnapshotCache(store))
        fold_turns(game, start, turns_of(chat(3)), SnapshotCache(store))
    assert outcome.folded == 6 and store.down
    assert [r.message.count("Redis unavailable") for r in caplog.records] == [1]
    assert "redis://" not in caplog.text  # the URL may hold a password


def test_redis_store_round_trip_and_ttl(redis_server: RedisServer, game: Game,
                                        start: State) -> None:
    redis_server.flush()  # the session's server: other tests stored with other TTLs
    store: Store = RedisStore(redis_server.url, ttl=60)
    cache = SnapshotCache(store)
    cold = fold_turns(game, start, turns_of(chat(4)), cache)
    warm = fold_turns(game, start, turns_of(chat(4)), SnapshotCache(RedisStore(redis_server.url)))
    assert warm.anchor == "cached" and warm.folded == 0
    assert warm.snapshot.state.canonical() == cold.snapshot.state.canonical()
    import redis

    client = redis.Redis.from_url(redis_server.url)
    keys = client.keys("gmtags:snap:*")
    assert keys and all(0 < client.ttl(k) <= 60 for k in keys)


@pytest.mark.parametrize("edited", [1, 63, 64, 65, 130])
def test_an_edit_in_the_middle_resumes_just_before_it(game: Game, start: State,
                                                      edited: int) -> None:
    cache = SnapshotCache(MemoryStore())
    messages = chat(100)
    fold_turns(game, start, turns_of(messages), cache)
    messages[1 + edited] = {"role": messages[1 + edited]["role"],
                            "content": TAGS[0] + " (edited)"}
    outcome = fold_turns(game, start, turns_of(messages), cache)
    assert outcome.reused == edited and outcome.folded == 200 - edited
    expected = replay(game, transcript_from_openai(messages), start)
    assert outcome.snapshot.state.canonical() == expected.state.canonical()


class CountingStore(MemoryStore):
    """A memory store that remembers how many keys each lookup asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.lookups: list[int] = []

    def get_many(self, keys: Any) -> list[bytes | None]:
        self.lookups.append(len(keys))
        return super().get_many(keys)


def test_the_next_reply_is_found_with_small_lookups_and_an_edit_with_batches(
        game: Game, start: State) -> None:
    """The next request of a chat resumes a few positions before its end: it is found by
    asking for the last position, then the four before it, not a batch of 64 (issue 12); a
    position further back is still found, in batches."""
    store = CountingStore()
    cache = SnapshotCache(store)
    fold_turns(game, start, turns_of(chat(100)), cache)
    store.lookups.clear()
    outcome = fold_turns(game, start, turns_of(chat(101)), cache)
    assert (outcome.reused, outcome.folded) == (200, 2)
    assert store.lookups == [1, 4]
    edited = chat(101)
    edited[21] = {"role": "assistant", "content": "An edit far back."}
    store.lookups.clear()
    outcome = fold_turns(game, start, turns_of(edited), cache)
    assert (outcome.reused, outcome.folded) == (20, 182)
    # Positions 201, 197..200, then batches down to 20; then the state kept at position 20,
    # no longer parsed in this process, is read.
    assert store.lookups == [1, 4, 64, 64, 64, 1]


class _CountingStore(MemoryStore):
    """A MemoryStore that counts the snapshot entries it is asked for."""

    def __init__(self) -> None:
        super().__init__()
        self.asked: list[str] = []

    def get_many(self, keys: Any) -> list[bytes | None]:
        self.asked.extend(k for k in keys if ":snap:" in k or ":reply:" in k)
        return super().get_many(keys)


def test_a_snapshot_stored_is_kept_as_its_object_and_found_without_its_entry(
        game: Game, start: State) -> None:
    """A chat's next request starts from the snapshots its last one saved: once stored they
    are kept as objects (LIVE_SNAPSHOTS), so the very same snapshot is found, whatever the
    store's entry holds, and the answer is the full replay's."""
    store = _CountingStore()
    cache = SnapshotCache(store, deferred=True)
    messages = chat(6)
    first = fold_turns(game, start, turns_of([*messages, {"role": "user", "content": "a"}]),
                       cache)
    cache.flush()
    for key in list(store._items):  # every stored entry unreadable: only kept objects serve
        if ":snap:" in key and key.endswith(first.end.hex()):
            store._items[key] = b"corrupt"
    more = [*messages, {"role": "user", "content": "a"}, {"role": "assistant",
                                                           "content": TAGS[0]}]
    second = fold_turns(game, start, turns_of([*more, {"role": "user", "content": "b"}]), cache)
    assert second.reused == len(turns_of(messages)) + 1 and second.folded == 2
    assert second.snapshot.state == replay(game, transcript_from_openai(
        [*more, {"role": "user", "content": "b"}]), start).state


def test_kept_snapshots_are_bounded_and_a_failed_store_keeps_none(
        game: Game, start: State, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(cache_module, "LIVE_SNAPSHOTS", 3)
    cache = SnapshotCache(MemoryStore(), deferred=True)
    for index in range(5):
        fold_turns(game, start, turns_of([{"role": "user", "content": f"chat {index}"}]), cache)
        cache.flush()
        assert len(cache._live) <= 3

    class Failing(MemoryStore):
        def put_many(self, items: Any) -> None:
            if any(":next:" in key for key in items):  # the rows of a fold, not the start
                raise RuntimeError("disk on fire")
            super().put_many(items)

    failing = SnapshotCache(Failing(), deferred=True)
    fold_turns(game, start, turns_of([{"role": "user", "content": "x"}]), failing)
    failing.flush()
    assert not failing._live and not failing._pending
