"""Redis Cluster, Sentinel and each process's layer in front of Redis (issue 30), against real
redis-servers on loopback; the clock (near entries' lives, the retry after a failure) frozen."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from click.testing import CliRunner
from freezegun import freeze_time
from helpers import harrow, harrow_party
from stage_servers import RedisCluster, RedisSentinel, RedisServer, free_port

from engine import Game, State
from replay import replay
from replay.cache import (
    AMBIGUOUS,
    RETRY_AFTER,
    LayeredStore,
    RedisStore,
    SnapshotCache,
    fold_turns,
    open_store,
    redis_client,
)
from replay.formats import transcript_from_openai
from replay.formats.openai import read_turns
from replay.stage.cli import serve

REPLIES = ['Found. [inventory: action="add" item="Torch" count="2" who="Ada"]',
           'Paid. [inventory: action="pay" amount="3 pennies" who="Ada"]', "Nothing happens."]
ROOT = Path(__file__).resolve().parents[3]


def chat(turns: int, name: str = "turn") -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM of Harrow Vale."}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"{name} {index}"})
        messages.append({"role": "assistant", "content": REPLIES[index % len(REPLIES)]})
    return messages


@pytest.fixture(scope="module")
def game() -> Game:
    return harrow()


@pytest.fixture(scope="module")
def start(game: Game) -> State:
    return harrow_party(game)


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisCluster]:
    running = RedisCluster(tmp_path_factory.mktemp("cluster"))
    yield running
    running.stop()


@pytest.fixture(scope="module")
def sentinel(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RedisSentinel]:
    running = RedisSentinel(tmp_path_factory.mktemp("sentinel"))
    yield running
    running.stop()


def test_a_cluster_shares_snapshots_across_its_nodes(cluster: RedisCluster, game: Game,
                                                     start: State) -> None:
    """Two processes' caches on a three-node cluster: the second resumes from the first's
    snapshots; the keys spread over every node, and no command failed (a command whose keys
    span two slots would fail, and a failure reads as Redis being down)."""
    messages = chat(30, "cluster")
    first = RedisStore(cluster.url)
    cold = fold_turns(game, start, read_turns(messages), SnapshotCache(first))
    second = RedisStore(cluster.url)
    warm = fold_turns(game, start, read_turns(messages), SnapshotCache(second))
    assert not first.down and not second.down
    assert warm.anchor == "cached" and warm.folded == 0 and warm.reused == 60
    expected = replay(game, transcript_from_openai(messages), start).state.canonical()
    assert cold.snapshot.state.canonical() == warm.snapshot.state.canonical() == expected
    sizes = [redis.Redis(port=port).dbsize() for port in cluster.ports]
    assert all(size > 0 for size in sizes), sizes


def test_a_cluster_re_anchors_a_chat_whose_front_was_dropped(cluster: RedisCluster, game: Game,
                                                            start: State) -> None:
    """Windows and ``next`` marks work across slots too: the chat without its first turns
    continues where another process saw them."""
    messages = chat(12, "front")
    fold_turns(game, start, read_turns(messages), SnapshotCache(RedisStore(cluster.url)))
    front_dropped = [messages[0], *messages[9:]]
    outcome = fold_turns(game, start, read_turns(front_dropped),
                         SnapshotCache(RedisStore(cluster.url)))
    assert outcome.anchor == "re-anchored" and outcome.folded == 0
    expected = replay(game, transcript_from_openai(messages), start).state.canonical()
    assert outcome.snapshot.state.canonical() == expected


def test_a_cluster_claim_of_two_values_is_ambiguous(cluster: RedisCluster) -> None:
    one, other = RedisStore(cluster.url), RedisStore(cluster.url)
    keys = {f"gmtags:win:test:{index}": b"before-1" for index in range(20)}
    one.claim_many(keys)
    other.claim_many({key: b"before-1" for key in list(keys)[:10]})  # the same place: kept
    other.claim_many({key: b"before-2" for key in list(keys)[10:]})  # another place
    assert one.get_many(list(keys)) == [b"before-1"] * 10 + [AMBIGUOUS] * 10
    assert not one.down and not other.down


def test_a_cluster_behind_the_stage_store(cluster: RedisCluster, game: Game,
                                          start: State) -> None:
    cluster.flush()  # the other tests stored with the default TTL
    store = open_store(cluster.url, ttl=60)
    assert isinstance(store, LayeredStore)
    fold_turns(game, start, read_turns(chat(3, "layered")), SnapshotCache(store))
    assert not store.far.down
    node = next(redis.Redis(port=port) for port in cluster.ports
                if redis.Redis(port=port).keys("gmtags:snap:*"))
    assert all(0 < node.ttl(key) <= 60 for key in node.keys("gmtags:snap:*"))


def test_a_sentinel_url_reaches_the_master_it_names(sentinel: RedisSentinel, game: Game,
                                                    start: State) -> None:
    messages = chat(4, "sentinel")
    store = RedisStore(sentinel.url)
    fold_turns(game, start, read_turns(messages), SnapshotCache(store))
    warm = fold_turns(game, start, read_turns(messages),
                      SnapshotCache(RedisStore(sentinel.url)))
    assert not store.down and warm.folded == 0
    assert redis.Redis(port=sentinel.master.port).keys("gmtags:snap:*")


@pytest.mark.parametrize(("url", "message"), [
    ("redis+cluster://", "needs at least one host:port"),
    ("redis+sentinel://127.0.0.1:26379", "names the master's service"),
    ("redis+sentinel://127.0.0.1:26379/gm/x", "the db is a number, not 'x'"),
    ("redis+cluster://[::1:7000", "Invalid IPv6 URL"),
    ("http://127.0.0.1:6379", "must specify one of the following schemes"),
])
def test_a_malformed_url_is_an_error_before_anything_connects(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(")):
        redis_client(url, 0.5)


def test_a_sentinel_url_carries_the_masters_user_password_and_db() -> None:
    client = redis_client("redis+sentinel://ada:p%40ss@127.0.0.1:26379,127.0.0.1:26380/gm/3",
                          0.5)
    options = client.connection_pool.connection_kwargs
    assert (options["username"], options["password"], options["db"]) == ("ada", "p@ss", 3)
    assert client.connection_pool.service_name == "gm"
    assert [(s.connection_pool.connection_kwargs["host"], s.connection_pool.connection_kwargs[
        "port"]) for s in client.connection_pool.sentinel_manager.sentinels] == [
        ("127.0.0.1", 26379), ("127.0.0.1", 26380)]


def test_serve_refuses_a_malformed_redis_url_in_one_message(tmp_path: Path) -> None:
    (tmp_path / "harrow").mkdir()
    (tmp_path / "harrow" / "ruleset.json").write_text(
        (ROOT / "fixtures" / "rulesets" / "harrow.json").read_text())
    result = CliRunner().invoke(serve, [
        "--upstream", "http://127.0.0.1:9/v1", "--games", str(tmp_path),
        "--redis", "redis+cluster://", "--port", str(free_port())])
    assert result.exit_code == 2
    assert "Invalid value for --redis: redis+cluster:// needs at least one host:port" \
        in result.output


# --- the layer in front of Redis -------------------------------------------------------------

@pytest.fixture
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


def test_the_near_layer_answers_what_it_was_told_without_redis(own_redis: RedisServer) -> None:
    """Snapshots and states read once come from this process afterwards (Redis stopped here,
    so nothing else could answer); windows and ``next`` marks are always Redis's."""
    store = LayeredStore(RedisStore(own_redis.url, ttl=60), 1 << 20)
    other = RedisStore(own_redis.url, ttl=60)
    other.put_many({"gmtags:snap:a": b"A", "gmtags:state:s": b"S", "gmtags:next:a": b"1"})
    other.claim_many({"gmtags:win:w": b"a"})
    keys = ["gmtags:snap:a", "gmtags:state:s", "gmtags:next:a", "gmtags:win:w"]
    assert store.get_many(keys) == [b"A", b"S", b"1", b"a"]
    own_redis.stop()
    assert store.get_many(keys) == [b"A", b"S", None, None]
    assert store.far.down


def test_a_near_entry_lives_no_longer_than_redis_keeps_it(own_redis: RedisServer) -> None:
    """An entry read from Redis is kept for the seconds Redis has left for it (PTTL), one this
    process wrote for the TTL; past that the near copy is not used, Redis is asked."""
    client = redis.Redis.from_url(own_redis.url)
    client.set("gmtags:snap:short", b"S", ex=10)
    with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen:
        store = LayeredStore(RedisStore(own_redis.url, ttl=100), 1 << 20)
        store.put_many({"gmtags:snap:mine": b"M"})
        assert store.get_many(["gmtags:snap:short"]) == [b"S"]
        client.delete("gmtags:snap:short", "gmtags:snap:mine")  # as if Redis expired them
        frozen.tick(9)
        assert store.get_many(["gmtags:snap:short", "gmtags:snap:mine"]) == [b"S", b"M"]
        frozen.tick(2)  # 11 s: past the 10 s Redis had left for it
        assert store.get_many(["gmtags:snap:short", "gmtags:snap:mine"]) == [None, b"M"]
        frozen.tick(90)  # 101 s: past the TTL of what it wrote
        assert store.get_many(["gmtags:snap:short", "gmtags:snap:mine"]) == [None, None]


def test_a_key_written_without_expiry_is_kept_near_for_the_ttl(own_redis: RedisServer) -> None:
    client = redis.Redis.from_url(own_redis.url)
    client.set("gmtags:state:forever", b"F")
    with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen:
        store = LayeredStore(RedisStore(own_redis.url, ttl=30), 1 << 20)
        assert store.get_many(["gmtags:state:forever"]) == [b"F"]
        client.delete("gmtags:state:forever")
        frozen.tick(29)
        assert store.get_many(["gmtags:state:forever"]) == [b"F"]
        frozen.tick(2)
        assert store.get_many(["gmtags:state:forever"]) == [None]


def test_redis_restarted_is_tried_again_after_the_retry_interval(
        own_redis: RedisServer, caplog: pytest.LogCaptureFixture) -> None:
    """Down: a miss, logged once; left alone for RETRY_AFTER seconds (back meanwhile, it is
    still not asked); then asked again, and its return logged."""
    with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen, caplog.at_level(
            logging.WARNING, logger="gmtags.cache"):
        store = RedisStore(own_redis.url, ttl=60, timeout=0.5)
        store.put_many({"gmtags:snap:x": b"1"})
        own_redis.stop()
        assert store.get_many(["gmtags:snap:x"]) == [None] and store.down
        own_redis.start()  # empty, as a restart without persistence is
        redis.Redis.from_url(own_redis.url).set("gmtags:snap:x", b"2")
        frozen.tick(RETRY_AFTER - 1)
        assert store.get_many(["gmtags:snap:x"]) == [None] and store.down
        frozen.tick(1)
        assert store.get_many(["gmtags:snap:x"]) == [b"2"] and not store.down
    messages = [r.message for r in caplog.records]
    assert sum("Redis unavailable" in m for m in messages) == 1
    assert sum("Redis is back" in m for m in messages) == 1


def test_a_chat_folded_while_redis_was_down_is_answered_alike_by_another_process(
        own_redis: RedisServer, game: Game, start: State) -> None:
    """A worker that folded with Redis down keeps its snapshots near; another worker, which
    never saw them, folds the chat itself: both give the one replay's state."""
    messages = chat(9, "down")
    own_redis.stop()
    one = SnapshotCache(open_store(own_redis.url))
    first = fold_turns(game, start, read_turns(messages), one)
    again = fold_turns(game, start, read_turns(messages), one)
    other = fold_turns(game, start, read_turns(messages), SnapshotCache(open_store(own_redis.url)))
    assert again.folded == 0 and other.folded == 18  # near hits; the other folds it all
    expected = replay(game, transcript_from_openai(messages), start).state.canonical()
    assert {first.snapshot.state.canonical(), again.snapshot.state.canonical(),
            other.snapshot.state.canonical()} == {expected}
