"""Snapshots of the fold, so a new reply folds only what is new (DESIGN.md "State, snapshots and
scale").

A chat is a chain of turns (player and GM messages; system messages never change the state).
Position ``i`` of a chat has a chain hash: the hash of (engine version, ruleset digest, game seed,
start state) for position 0, and ``H(chain[i-1], turn i)`` after it, so a chain hash names a whole
transcript prefix. At each position the cache keeps a snapshot: the state, how many GM replies the
prefix holds (the turn number of the next reply) and the answers of the latest GM reply.

The store behind it is one small protocol (:class:`Store`): an in-process LRU by default, or
Redis, shared by every process. A missing, corrupt or stale entry is only a miss; a store that is
down is logged once and the fold recomputes, so a request never fails because of the cache.

Re-anchoring: chat front ends drop the oldest messages once the context is full. A chat's state
must never come from another chat (DESIGN.md "Interfaces"), so a chat whose front is missing
continues from an earlier chat only on evidence that another chat cannot give by sharing a line:
the cache remembers, per game, each *window* of a chat (the fewest consecutive turns from a turn
on that hold at least :data:`WINDOW_TURNS` turns and :data:`WINDOW_REPLIES` GM replies) with the
chain hash before it, or that it was seen at two different places; and, for each position, that a
turn followed it. A request re-anchors where one of its first windows was seen at exactly one
place, when the earlier chat holds every turn of the request from there on but its last
:data:`TAIL_TURNS`, and ended where the request goes on. Anything weaker is folded from the party
file. Whether a chat is ``anchored`` is read from the chat itself: its GM replies' recorded answer
parts must be what the fold gives them, else its front (or the ruleset) is not what they were
answered with.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import logging
import struct
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar, overload
from urllib.parse import unquote, urlsplit

from pydantic import ValidationError

from engine import ENGINE_VERSION, Answer, Game, State

from .fold import Diagnostic, MessageAnswer, Position, begin_session, fold_message
from .formats.openai import read_turns
from .transcript import Turn

log = logging.getLogger("gmtags.cache")
T = TypeVar("T")

SNAPSHOT_FORMAT = "gmtags-snapshot/2"
PREFIX = "gmtags:"
DEFAULT_CACHE_MB = 256  # the in-process store's bound, in MiB of keys and values
ENTRY_OVERHEAD = 200  # bytes an entry of the in-process store costs besides the characters of
# its key and value: the str and bytes headers (~80) and the ordered dict's slot and node (~100)
DEFAULT_NEAR_MB = 32  # with Redis: the in-process layer in front of it, per process
DEFAULT_TTL = 7 * 24 * 3600  # seconds a Redis entry lives after it was last written
RETRY_AFTER = 5.0  # seconds a store that failed is left alone before it is tried again
WINDOW_TURNS = 3  # a window holds at least this many consecutive whole turns ...
WINDOW_REPLIES = 2  # ... with at least this many GM replies among them
MAX_WINDOW = 8  # turns a window may span; a run of turns needing more holds no window
TAIL_TURNS = 2  # turns a re-anchored request may add to the earlier chat: the reply, the player
AMBIGUOUS = b"*"  # a window's value once it was seen at two different places
LOOKUP_BATCH = 64  # chain positions asked for at once, newest first
# The newest positions are asked for in small lookups first: a chat's next request is found
# one to three positions before its end (the last reply, or the player's turn before it), and
# each position asked for is a hash to finish and a key to look up.
LOOKUP_FIRST = (1, 4)
MAX_PENDING = 4096  # snapshots a deferred cache keeps unstored before it stores them itself
PARSED_STATES = 64  # states a SnapshotCache keeps parsed in this process, newest used
LIVE_SNAPSHOTS = 128  # snapshots (and reply snapshots) it keeps as objects once stored, newest
# used: a chat's next request starts from the two its last one saved (the fold's and the
# reply's) without reading their entries' JSON and answers again
RECENT_CHATS = 8  # requests (and chains) a SnapshotCache keeps to reuse what they share: at most
# this many request bodies stay in memory, besides the snapshots


def claimed(held: bytes | None, value: bytes) -> bytes:
    """What a window key holds once ``value`` is claimed for it while it holds ``held``."""
    return value if held is None or held == value else AMBIGUOUS


class Store(Protocol):
    """Where snapshots live: bytes by string key. Misses are ``None``; nothing here raises."""

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...

    def put_many(self, items: Mapping[str, bytes]) -> None: ...

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        """Set each key that is missing to its value; a key that holds another value becomes
        :data:`AMBIGUOUS` (so a window seen at two places stays known as such)."""


class MemoryStore:
    """The default store: a thread-safe in-process LRU bounded in bytes (keys, values and
    :data:`ENTRY_OVERHEAD` per entry), least recently used first out."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_MB * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.size = 0  # bytes held now, as counted against max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        found: list[bytes | None] = []
        with self._lock:
            for key in keys:
                value = self._items.get(key)
                if value is not None:
                    self._items.move_to_end(key)
                found.append(value)
        return found

    def _set(self, key: str, value: bytes) -> None:
        old = self._items.get(key)
        if old is not None:
            self.size -= len(old)
        else:
            self.size += len(key) + ENTRY_OVERHEAD
        self._items[key] = value
        self._items.move_to_end(key)
        self.size += len(value)

    def _trim(self) -> None:
        while self.size > self.max_bytes and self._items:
            key, value = self._items.popitem(last=False)
            self.size -= len(key) + len(value) + ENTRY_OVERHEAD

    def put_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                self._set(key, value)
            self._trim()

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                old = self._items.get(key)
                self._set(key, claimed(old, value))
            self._trim()

    def clear(self) -> None:
        """Forget everything (a restarted server)."""
        with self._lock:
            self._items.clear()
            self.size = 0

    def usage(self) -> dict[str, int]:
        """Bytes held now (as counted against the bound), the bound, and entries."""
        with self._lock:
            return {"bytes": self.size, "maxBytes": self.max_bytes,
                    "entries": len(self._items)}

    def __len__(self) -> int:
        return len(self._items)


CLUSTER_SCHEME = "redis+cluster"
SENTINEL_SCHEME = "redis+sentinel"


def redis_client(url: str, timeout: float) -> Any:
    """A redis-py client for ``url``, through redis-py's own clients:

    - ``redis://``, ``rediss://``, ``unix://``: one server (``Redis.from_url``);
    - ``redis+cluster://[user:password@]host:port[,host:port...]``: a Redis Cluster
      (``RedisCluster``, those nodes its startup nodes; it finds the others itself);
    - ``redis+sentinel://[user:password@]host:port[,host:port...]/service[/db]``: the master
      the Sentinels name ``service`` (``Sentinel.master_for``, which follows a failover); the
      user and password are the master's.

    Nothing connects here: a cluster's client is made on first use (its constructor asks the
    nodes for the slots)."""
    import redis  # lazy: only the Redis backend needs the package

    scheme, nodes, path, options = _many_hosts(url)
    if scheme not in (CLUSTER_SCHEME, SENTINEL_SCHEME):
        return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    options = {**options, "socket_timeout": timeout, "socket_connect_timeout": timeout}
    if scheme == CLUSTER_SCHEME:
        from redis.cluster import ClusterNode, RedisCluster

        startup = [ClusterNode(host, port) for host, port in nodes]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=startup, **options)
    from redis.sentinel import Sentinel

    service, _, db = path.strip("/").partition("/")
    sentinels = Sentinel(  # type: ignore[no-untyped-call]
        nodes, socket_timeout=timeout, socket_connect_timeout=timeout)
    return sentinels.master_for(service, db=int(db or 0), **options)  # type: ignore[no-untyped-call]


def _many_hosts(url: str) -> tuple[str, list[tuple[str, int]], str, dict[str, Any]]:
    """(scheme, hosts, path, user and password) of a ``redis+cluster://`` or
    ``redis+sentinel://`` URL; raises ValueError when it is malformed. Any other URL is
    (scheme, [], "", {}): redis-py reads it."""
    scheme, _, rest = url.partition("://")
    if scheme not in (CLUSTER_SCHEME, SENTINEL_SCHEME):
        return scheme, [], "", {}
    netloc, _, path = rest.partition("/")
    credentials, _, hosts = netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    nodes = [_host_port(host) for host in hosts.split(",") if host]
    if not nodes:
        raise ValueError(f"{scheme}:// needs at least one host:port")
    if scheme == SENTINEL_SCHEME:
        service, _, db = path.strip("/").partition("/")
        if not service:
            raise ValueError(f"{scheme}://hosts/<service> names the master's service")
        if db and not db.isdigit():
            raise ValueError(f"{scheme}://hosts/{service}/<db>: the db is a number, not {db!r}")
    return scheme, nodes, path, {"username": unquote(username) or None,
                                 "password": unquote(password) or None}


def _host_port(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6; the port defaults to 6379, 26379 is a
    Sentinel's: give it) as (host, port)."""
    parsed = urlsplit(f"//{text}")
    if parsed.hostname is None:
        raise ValueError(f"{text!r} is not host:port")
    return parsed.hostname, parsed.port or 6379


class RedisStore:
    """Redis, shared by every gmtags process; entries expire ``ttl`` seconds after writing.

    One server, a Sentinel-watched master or a Redis Cluster (:func:`redis_client`). In a
    cluster no command spans two hash slots: lookups go through ``mget_nonatomic`` (one MGET
    per slot) and writes are pipelines of one-key commands, so the keys need no hash tags and
    spread over every node (a chat's positions are hashes: they fall on any slot).

    Redis being down is never an error: the first failure is logged (without the URL, which may
    hold a password), lookups miss and writes are dropped; the server is tried again after
    :data:`RETRY_AFTER` seconds, and its return is logged too.
    """

    def __init__(self, url: str, ttl: int = DEFAULT_TTL, timeout: float = 0.5,
                 clock: Callable[[], float] | None = None) -> None:
        import redis  # lazy: only the Redis backend needs the package
        from redis.exceptions import RedisClusterException

        self._errors: tuple[type[BaseException], ...] = (
            redis.RedisError, RedisClusterException, OSError)
        self._url = url
        self._timeout = timeout
        self._client: Any = None
        self.cluster = _many_hosts(url)[0] == CLUSTER_SCHEME  # raises for a malformed URL
        if not self.cluster:
            self._client = redis_client(url, timeout)
        self.ttl = ttl
        self._clock = clock or (lambda: time.monotonic())  # looked up per call: freezegun
        self._down_since: float | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The redis-py client (made on first use for a cluster; raises when none answers)."""
        if self._client is None:
            self._client = redis_client(self._url, self._timeout)
        return self._client

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def _usable(self) -> bool:
        with self._lock:
            return self._down_since is None or self._clock() - self._down_since >= RETRY_AFTER

    def _failed(self, error: BaseException) -> None:
        with self._lock:
            if self._down_since is None:
                log.warning("snapshot cache: Redis unavailable (%s); recomputing from the "
                            "transcript until it is back", type(error).__name__)
            self._down_since = self._clock()

    def _worked(self) -> None:
        if self._down_since is not None:
            with self._lock:
                if self._down_since is not None:
                    log.warning("snapshot cache: Redis is back")
                self._down_since = None

    def _mget(self, keys: list[str]) -> list[Any]:
        client = self.client
        values: list[Any] = client.mget_nonatomic(keys) if self.cluster else client.mget(keys)
        return values

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys or not self._usable():
            return [None] * len(keys)
        try:
            values = self._mget(list(keys))
        except self._errors as error:
            self._failed(error)
            return [None] * len(keys)
        self._worked()
        return [v if isinstance(v, bytes) else None for v in values]

    def get_lasting(self, keys: Sequence[str]) -> list[tuple[bytes, float] | None]:
        """Each key's value and the seconds it has left in Redis (GET and PTTL), or None."""
        if not keys or not self._usable():
            return [None] * len(keys)
        try:
            pipe = self.client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
                pipe.pttl(key)
            replies = pipe.execute()
        except self._errors as error:
            self._failed(error)
            return [None] * len(keys)
        self._worked()
        found: list[tuple[bytes, float] | None] = []
        for value, left in zip(replies[::2], replies[1::2], strict=True):
            # PTTL -1: no expiry (written by something else); -2: gone since the GET
            lasting = isinstance(value, bytes) and isinstance(left, int) and left != -2
            found.append((value, self.ttl if left == -1 else left / 1000) if lasting else None)
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        if not items or not self._usable():
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for key, value in items.items():
                pipe.set(key, value, ex=self.ttl)
            pipe.execute()
        except self._errors as error:
            self._failed(error)
            return
        self._worked()

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        """SET NX each key; where another value is there, it becomes AMBIGUOUS (two writers of
        two values race only to the same AMBIGUOUS)."""
        if not items or not self._usable():
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for key, value in items.items():
                pipe.set(key, value, ex=self.ttl, nx=True)
            taken = pipe.execute()
            held = [key for key, done in zip(items, taken, strict=True) if not done]
            if held:
                values = self._mget(held)
                pipe = self.client.pipeline(transaction=False)
                for key, value in zip(held, values, strict=True):
                    if value == items[key]:
                        pipe.expire(key, self.ttl)
                    else:
                        pipe.set(key, AMBIGUOUS, ex=self.ttl)
                pipe.execute()
        except self._errors as error:
            self._failed(error)
            return
        self._worked()


def _lasting(key: str) -> bool:
    """Whether a key's value, once written, is the only value it ever holds: a snapshot (named
    by its chain position, a reply's too) or a state (named by its digest). Windows become
    AMBIGUOUS and ``next`` marks are read only to decide a re-anchoring, so those are always
    Redis's."""
    return key.startswith((f"{PREFIX}snap:", f"{PREFIX}state:", f"{PREFIX}reply:"))


class LayeredStore:
    """Redis with a small in-process LRU of this process in front of it (each worker's own).

    Only :func:`_lasting` keys are kept near, each no longer than Redis keeps it (its PTTL when
    read from Redis, the TTL when written), so a near hit is a value Redis holds too (unless
    Redis lost it: a restart without persistence, a write while it was down). A snapshot is
    the fold of the prefix its key names, so a hit only saves folding again; windows and
    ``next`` marks, which decide re-anchoring, are always Redis's. Which worker answers thus
    changes how much is reused, never the answer. With Redis down, the near layer still
    answers and takes what is written.
    """

    def __init__(self, far: RedisStore, near_bytes: int,
                 clock: Callable[[], float] | None = None) -> None:
        self.far = far
        self.near = MemoryStore(near_bytes)
        self._clock = clock or (lambda: time.monotonic())

    def _keep(self, items: Mapping[str, tuple[bytes, float]]) -> None:
        now = self._clock()
        self.near.put_many({key: struct.pack("<d", now + left) + value
                            for key, (value, left) in items.items()})

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        found: list[bytes | None] = [None] * len(keys)
        lasting = [at for at, key in enumerate(keys) if _lasting(key)]
        now = self._clock()
        for at, held in zip(lasting, self.near.get_many([keys[at] for at in lasting]),
                            strict=True):
            if held is not None and struct.unpack_from("<d", held)[0] > now:
                found[at] = held[8:]
        missing = [at for at in lasting if found[at] is None]
        if missing:
            read = self.far.get_lasting([keys[at] for at in missing])
            for at, value in zip(missing, read, strict=True):
                if value is not None:
                    found[at] = value[0]
            self._keep({keys[at]: value for at, value in zip(missing, read, strict=True)
                        if value is not None})
        others = [at for at, key in enumerate(keys) if not _lasting(key)]
        if others:
            for at, raw in zip(others, self.far.get_many([keys[at] for at in others]),
                               strict=True):
                found[at] = raw
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        self._keep({key: (value, self.far.ttl) for key, value in items.items()
                    if _lasting(key)})
        self.far.put_many(items)

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        self.far.claim_many(items)


def store_usage(store: Store) -> dict[str, Any]:
    """What ``store`` holds in this process: ``{"store": "memory" or "redis", "bytes",
    "maxBytes", "entries"}`` of the in-process LRU (with Redis, the layer in front of it;
    Redis's own memory is Redis's to report)."""
    if isinstance(store, LayeredStore):
        return {"store": "redis", **store.near.usage()}
    if isinstance(store, MemoryStore):
        return {"store": "memory", **store.usage()}
    return {"store": type(store).__name__}


def open_store(redis_url: str | None, ttl: int = DEFAULT_TTL,
               cache_mb: int | None = None) -> Store:
    """Without a URL, the in-process LRU of ``cache_mb`` MiB (default
    :data:`DEFAULT_CACHE_MB`); else Redis at ``redis_url`` behind an in-process layer of
    ``cache_mb`` MiB (default :data:`DEFAULT_NEAR_MB`)."""
    if redis_url is None:
        return MemoryStore((cache_mb or DEFAULT_CACHE_MB) * 1024 * 1024)
    return LayeredStore(RedisStore(redis_url, ttl=ttl),
                        (cache_mb or DEFAULT_NEAR_MB) * 1024 * 1024)


# --- position keys ------------------------------------------------------------------------------

class SharedPrefixSequence(Sequence[T]):
    """An immutable sequence kept in shared blocks of :data:`LOOKUP_BATCH` items, so that a
    new sequence beginning with the first ``keep`` items of another (:meth:`extended`) shares
    its whole blocks instead of copying every item: a chat's next request takes its messages,
    turns and encoded turns this way, in time that does not grow with the chat."""

    __slots__ = ("_blocks", "_length")

    def __init__(self, items: Iterable[T] = ()) -> None:
        self._blocks: list[tuple[T, ...]] = []
        self._length = 0
        self._append(list(items))

    def _append(self, items: list[T]) -> None:
        for start in range(0, len(items), LOOKUP_BATCH):
            block = tuple(items[start:start + LOOKUP_BATCH])
            self._blocks.append(block)
            self._length += len(block)

    def extended(self, keep: int, items: Iterable[T] = ()) -> SharedPrefixSequence[T]:
        """The first ``keep`` items of this run, then ``items``."""
        keep = max(0, min(keep, self._length))
        whole, part = divmod(keep, LOOKUP_BATCH)
        run: SharedPrefixSequence[T] = SharedPrefixSequence()
        run._blocks = self._blocks[:whole]
        run._length = whole * LOOKUP_BATCH
        run._append([*(self._blocks[whole][:part] if part else ()), *items])
        return run

    def __len__(self) -> int:
        return self._length

    @overload
    def __getitem__(self, index: int) -> T: ...

    @overload
    def __getitem__(self, index: slice) -> list[T]: ...

    def __getitem__(self, index: int | slice) -> T | list[T]:
        if isinstance(index, slice):
            start, stop, step = index.indices(self._length)
            if step != 1:
                return list(self)[index]
            found: list[T] = []
            while start < stop:
                block, at = divmod(start, LOOKUP_BATCH)
                found.extend(self._blocks[block][at:at + stop - start])
                start = (block + 1) * LOOKUP_BATCH
            return found
        if index < 0:
            index += self._length
        if not 0 <= index < self._length:
            raise IndexError("SharedPrefixSequence index out of range")
        return self._blocks[index // LOOKUP_BATCH][index % LOOKUP_BATCH]

    def __iter__(self) -> Iterator[T]:
        return itertools.chain.from_iterable(self._blocks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SharedPrefixSequence({list(self)!r})"


def as_shared_prefix(items: Sequence[T]) -> SharedPrefixSequence[T]:
    """``items`` as a :class:`SharedPrefixSequence` (itself when it is one)."""
    return items if isinstance(items, SharedPrefixSequence) else SharedPrefixSequence(items)


def _digest(*parts: bytes) -> bytes:
    hasher = hashlib.blake2b(digest_size=20)
    for part in parts:
        hasher.update(len(part).to_bytes(8, "little"))
        hasher.update(part)
    return hasher.digest()


_SCOPES: dict[tuple[int, int], tuple[Game, State, bytes]] = {}


def game_scope(game: Game, start: State) -> bytes:
    """Position 0 of a game: engine version, ruleset digest, game seed and start state."""
    known = _SCOPES.get((id(game), id(start)))
    if known is not None and known[0] is game and known[1] is start:
        return known[2]
    scope = _digest(SNAPSHOT_FORMAT.encode(), ENGINE_VERSION.encode(), game.digest.encode(),
                   start.seed.encode("utf-8"), start.canonical().encode("utf-8"))
    if len(_SCOPES) < 1024:  # the stage's games; one-off callers do not fill it
        _SCOPES[(id(game), id(start))] = (game, start, scope)
    return scope


def _link(key: bytes, turn: Turn) -> bytes:
    """The key of the position after ``turn``, from the key of the position before it.

    A hidden turn, or a turn on another swipe than the first, is marked (``T``, role, hidden,
    swipe): the fold gives it another state than the same text shown as swipe 0. A prompt's
    turns are never marked, so their keys are what they always were."""
    text = turn.text.encode("utf-8", "surrogatepass")
    mark = b"P" if turn.role == "player" else b"G"
    if turn.hidden or turn.swipe:
        mark = b"T" + mark + bytes((turn.hidden,)) + turn.swipe.to_bytes(8, "little")
    return hashlib.blake2b(b"".join((key, mark, len(text).to_bytes(8, "little"), text)),
                           digest_size=20).digest()


def window_length(turns: Sequence[Turn], first: int) -> int | None:
    """How many turns the window beginning at ``turns[first]`` spans: the fewest consecutive
    turns, at least :data:`WINDOW_TURNS`, that hold :data:`WINDOW_REPLIES` GM replies; None when
    the turns run out first or it would span more than :data:`MAX_WINDOW`."""
    replies = 0
    for length, turn in enumerate(turns[first:first + MAX_WINDOW], 1):
        replies += turn.role == "gm"
        if length >= WINDOW_TURNS and replies >= WINDOW_REPLIES:
            return length
    return None


def window_hash(turns: Sequence[Turn]) -> bytes:
    """The hash of a run of whole turns (roles and texts), to find where else it was seen."""
    key = b""
    for turn in turns:
        key = _link(key, turn)
    return key


def common_prefix(left: Sequence[Any], right: Sequence[Any]) -> int:
    """How many leading items two sequences share, compared a block at a time (C speed)."""
    size = min(len(left), len(right))
    if not size or left[0] != right[0]:  # most often, two chats that differ from the start
        return 0
    at = 0
    while at < size:
        end = min(at + 256, size)
        if left[at:end] != right[at:end]:
            while left[at] == right[at]:
                at += 1
            return at
        at = end
    return size


def _turns_before(turns: Sequence[Turn], message: int) -> int:
    """How many of ``turns`` (in message order) come from messages before ``message``: a walk
    back from the end, where a chat's next request differs from the last (its last few
    messages), else a binary search."""
    cut = len(turns)
    for _ in range(8):
        if cut == 0 or turns[cut - 1].at < message:
            return cut
        cut -= 1
    return bisect.bisect_left(turns, message, 0, cut, key=lambda turn: turn.at)


class PositionKeys:
    """Position keys of a chat: position 0 is the root, position i the hash of position i-1's
    key and turn i (:func:`_link`).

    The keys form a hash chain whose root is the game's position 0 (:func:`game_scope`).
    Because each key follows from the one before it alone, keys begun at any position of
    another chat (re-anchoring: the root is the key where a chat whose front is missing
    continues) name the very positions that chat's own keys name, so the two share snapshots,
    windows and ``next`` marks.
    """

    def __init__(self, root: bytes, turns: Sequence[Turn], known: PositionKeys | None = None,
                 shared: int | None = None) -> None:
        """``known``: keys of the same root whose turns these may begin with; the keys
        of the turns they share (``shared``, counted here when not given) are not hashed
        again."""
        self.root = root
        self.turns: Sequence[Turn] = as_shared_prefix(turns)  # a list may change afterwards
        self._keys: SharedPrefixSequence[bytes]
        if known is None or known.root != root:
            shared = 0
        elif shared is None:
            shared = common_prefix(known.turns, turns)
        keys = known._keys.extended(shared + 1) if known is not None and shared \
            else SharedPrefixSequence([root])
        key = keys[-1]
        new: list[bytes] = []
        for turn in self.turns[shared:]:  # a slice of the new turns (islice walked them all)
            key = _link(key, turn)
            new.append(key)
        self._keys = keys.extended(len(keys), new)

    def __len__(self) -> int:
        return len(self.turns) + 1

    def keys(self, first: int, last: int) -> list[bytes]:
        """Keys of positions ``first`` to ``last`` (inclusive)."""
        return self._keys[first:last + 1]


# --- snapshots ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Snapshot:
    """The fold after a transcript prefix: state, GM replies so far, the latest reply's answers."""

    state: State
    replies: int
    last_answers: tuple[Answer, ...] = ()
    # GM replies so far whose recorded answer parts are not what the fold gives them: a chat
    # folded from the wrong start (its front is missing) or answered under other rules
    doubts: int = 0


def _snap_key(position: bytes) -> str:
    return f"{PREFIX}snap:{position.hex()}"


def _reply_key(position: bytes) -> str:
    """A snapshot :meth:`SnapshotCache.save_reply` saved after a reply the stage answered."""
    return f"{PREFIX}reply:{position.hex()}"


def reply_position(end: bytes, text: str) -> bytes:
    """The position after a GM reply of ``text`` that follows the position ``end``."""
    return _link(end, Turn(0, "gm", text))


def _state_key(digest: str) -> str:
    return f"{PREFIX}state:{digest}"


def _window_key(scope: bytes, window: bytes) -> str:
    return f"{PREFIX}win:{scope.hex()}:{window.hex()}"


def _next_key(position: bytes) -> str:
    """Set once a turn was folded after ``position``: the chat went on from there."""
    return f"{PREFIX}next:{position.hex()}"


def _state_digest(canonical: str) -> str:
    return hashlib.blake2b(canonical.encode("utf-8"), digest_size=20).hexdigest()


def _read_entry(raw: bytes | None, position: bytes) -> dict[str, Any] | None:
    """A snapshot entry if it is well formed and really the one for ``position``."""
    if raw is None:
        return None
    try:
        entry = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if (not isinstance(entry, dict) or entry.get("format") != SNAPSHOT_FORMAT
            or entry.get("engine") != ENGINE_VERSION or entry.get("key") != position.hex()
            or not isinstance(entry.get("replies"), int) or entry["replies"] < 0
            or not isinstance(entry.get("state"), str)
            or not isinstance(entry.get("last"), list)
            or not isinstance(entry.get("doubts"), int) or entry["doubts"] < 0):
        return None
    return entry


Row = tuple[bytes, bytes, "Snapshot"]  # (key before a turn, key after it, snapshot after it)


class SnapshotCache:
    """Snapshots on a :class:`Store`, with per-game windows and ``next`` marks for re-anchoring.

    The states used last are also kept parsed in this process (by their digest, with their
    canonical bytes), so a warm request neither parses its snapshot's JSON nor writes the
    canonical JSON of a state it has already written. A state is named by the digest of its
    canonical JSON, so a parsed copy is always the state its digest names. The snapshots
    saved or found last are kept as objects too (:data:`LIVE_SNAPSHOTS`): a position's
    snapshot never changes (its key is the hash of the chat up to it), so a kept one is the
    one the store holds, or held before it let it go.
    """

    def __init__(self, store: Store, parsed: int = PARSED_STATES, deferred: bool = False,
                 replies: bool = False) -> None:
        """``deferred``: :meth:`save` keeps snapshots in this process until :meth:`flush`.
        ``replies``: the fold looks for the snapshots :meth:`save_reply` saves (the stage's)."""
        self.store = store
        self.deferred = deferred
        self.replies = replies
        # (rows, windows, replies) kept back by save() and save_reply() until flush()
        self._queue: list[tuple[Sequence[Row], Mapping[str, bytes], Mapping[bytes, Snapshot]]] = []
        self._queued = 0
        self._pending: dict[bytes, Snapshot] = {}  # position key -> snapshot not stored yet
        self._pending_windows: dict[str, bytes] = {}  # window key -> its value, not stored yet
        self._pending_next: set[bytes] = set()  # positions a turn followed, not stored yet
        self._pending_replies: dict[bytes, Snapshot] = {}  # see save_reply(), not stored yet
        # (kind, position key) -> snapshot stored or found; kind "snap" or "reply"
        self._live: OrderedDict[tuple[str, bytes], Snapshot] = OrderedDict()
        self._parsed = parsed
        self._states: OrderedDict[str, tuple[State, bytes]] = OrderedDict()
        self._digests: dict[int, str] = {}  # id(state) -> digest, for states in _states
        self._lock = threading.Lock()
        self._requests: deque[tuple[Sequence[Any], SharedPrefixSequence[Turn]]] = deque(
            maxlen=RECENT_CHATS)
        self._recent_positions: deque[PositionKeys] = deque(maxlen=RECENT_CHATS)
        # (turns given, the recent turns they begin with, how many): what position_keys()
        # may reuse
        self._turns_built_from: deque[tuple[Sequence[Turn], Sequence[Turn], int]] = deque(
            maxlen=2 * RECENT_CHATS)

    def turns(self, messages: Sequence[Any],
              like: tuple[Sequence[Any], int] | None = None) -> SharedPrefixSequence[Turn]:
        """:func:`read_turns` of ``messages``, reusing the turns of a recent request that
        began with the same messages (a chat's next request repeats all of the last one), so
        only the new messages are read. ``messages`` must not change in place afterwards (a
        parsed request body never does).

        ``like``: (a recent request's messages, how many leading messages ``messages`` shares
        with it), when the caller knows (:class:`replay.stage.body.BodyReader` compared their
        bytes); the messages are then not compared again."""
        with self._lock:
            recent = list(self._requests)
        known: SharedPrefixSequence[Turn] = SharedPrefixSequence()
        shared = 0
        if like is not None:
            for old_messages, old_turns in reversed(recent):
                if old_messages is like[0]:
                    known, shared = old_turns, like[1]
                    break
        if not shared:
            for old_messages, old_turns in reversed(recent):  # newest first: the longest
                if min(len(old_messages), len(messages)) <= shared:
                    continue  # cannot share more than the best so far
                common = common_prefix(old_messages, messages)
                if common > shared:
                    known, shared = old_turns, common
        cut = _turns_before(known, shared)
        turns = known.extended(cut, read_turns(messages, shared))
        with self._lock:
            self._requests.append((messages, turns))
            self._turns_built_from.append((turns, known, cut))
        return turns

    def drop_last(self, turns: SharedPrefixSequence[Turn]) -> SharedPrefixSequence[Turn]:
        """``turns[:-1]``, still known to share its first turns with recent keys."""
        dropped = turns.extended(len(turns) - 1)
        with self._lock:
            for new, known, cut in reversed(self._turns_built_from):
                if new is turns:
                    self._turns_built_from.append((dropped, known, min(cut, len(dropped))))
                    break
        return dropped

    def position_keys(self, root: bytes, turns: Sequence[Turn]) -> PositionKeys:
        """The :class:`PositionKeys` of ``turns``, reusing what recent keys of the same root
        that share its first turns have already encoded and hashed (known from :meth:`turns`
        without comparing them, for turns it gave)."""
        with self._lock:
            recent = [c for c in self._recent_positions if c.root == root]
            built_from = next(((known, cut) for new, known, cut
                               in reversed(self._turns_built_from) if new is turns), None)
        known: PositionKeys | None = None
        shared = 0
        if built_from is not None and built_from[1]:
            known = next((c for c in reversed(recent) if c.turns is built_from[0]), None)
            shared = built_from[1] if known is not None else 0
        if known is None:
            for candidate in reversed(recent):  # newest first, as in turns()
                if min(len(candidate.turns), len(turns)) <= shared:
                    continue
                common = common_prefix(candidate.turns, turns)
                if common > shared:
                    known, shared = candidate, common
        positions = PositionKeys(root, turns, known, shared)
        with self._lock:
            self._recent_positions.append(positions)
        return positions

    def _remember(self, digest: str, state: State, canonical: bytes) -> None:
        with self._lock:
            if digest in self._states:
                self._states.move_to_end(digest)
                return
            self._states[digest] = (state, canonical)
            self._digests[id(state)] = digest
            while len(self._states) > self._parsed:
                gone, (old, _) = self._states.popitem(last=False)
                if self._digests.get(id(old)) == gone:
                    del self._digests[id(old)]

    def _recall(self, digest: str) -> State | None:
        with self._lock:
            found = self._states.get(digest)
            if found is None:
                return None
            self._states.move_to_end(digest)
            return found[0]

    def _written(self, state: State) -> tuple[str, bytes]:
        """The digest and canonical bytes of ``state``, computed once per state kept."""
        with self._lock:
            digest = self._digests.get(id(state))
            found = self._states.get(digest) if digest is not None else None
        if digest is not None and found is not None and found[0] is state:
            return digest, found[1]
        canonical = state.canonical().encode("utf-8")
        digest = hashlib.blake2b(canonical, digest_size=20).hexdigest()
        self._remember(digest, state, canonical)
        return digest, canonical

    def load(self, entry: dict[str, Any]) -> Snapshot | None:
        """The snapshot an entry describes, or None when its state is missing or corrupt."""
        digest: str = entry["state"]
        try:
            state = self._recall(digest)
            if state is None:
                raw = self.store.get_many([_state_key(digest)])[0]
                if raw is None:
                    return None
                text = raw.decode("utf-8")
                if _state_digest(text) != digest:
                    return None
                state = State.model_validate_json(text)
                self._remember(digest, state, raw)
            answers = tuple(Answer.model_validate(a) for a in entry["last"])
        except (UnicodeDecodeError, ValidationError, TypeError):
            return None
        return Snapshot(state, entry["replies"], answers, entry["doubts"])

    def _kept(self, kind: str, position: bytes) -> Snapshot | None:
        """A snapshot not stored yet, or kept as an object since (the caller holds the lock)."""
        kept = (self._pending if kind == "snap" else self._pending_replies).get(position)
        if kept is None:
            kept = self._live.get((kind, position))
            if kept is not None:
                self._live.move_to_end((kind, position))
        return kept

    def _keep(self, kind: str, items: Iterable[tuple[bytes, Snapshot]]) -> None:
        """Keep snapshots as objects (:data:`LIVE_SNAPSHOTS`; the caller holds the lock)."""
        for position, snapshot in items:
            self._live[(kind, position)] = snapshot
            self._live.move_to_end((kind, position))
        while len(self._live) > LIVE_SNAPSHOTS:
            self._live.popitem(last=False)

    def longest(self, positions: PositionKeys,
                last: int | None = None) -> tuple[int, bytes, Snapshot] | None:
        """The latest of ``positions`` (up to position ``last``, when given) with a good
        snapshot: (position, key, snapshot)."""
        # positions below ``end`` are still to be tried, newest first
        end = len(positions) if last is None else min(len(positions), last + 1)
        lookups = 0
        while end > 0:
            size = LOOKUP_FIRST[lookups] if lookups < len(LOOKUP_FIRST) else LOOKUP_BATCH
            lookups += 1
            first = max(0, end - size)
            keys = positions.keys(first, end - 1)
            with self._lock:
                kept = [self._kept("snap", k) for k in keys] \
                    if self._pending or self._live else []
            newest = kept[-1] if kept else None
            if newest is not None:
                return end - 1, keys[-1], newest
            raws = self.store.get_many([_snap_key(k) for k in keys])
            for offset in range(len(keys) - 1, -1, -1):
                known = kept[offset] if kept else None
                if known is not None:
                    return first + offset, keys[offset], known
                entry = _read_entry(raws[offset], keys[offset])
                if entry is not None:
                    snapshot = self.load(entry)
                    if snapshot is not None:
                        with self._lock:
                            self._keep("snap", [(keys[offset], snapshot)])
                        return first + offset, keys[offset], snapshot
            end = first
        return None

    @property
    def pending(self) -> bool:
        """Whether :meth:`save` kept anything back that :meth:`flush` has to store."""
        return bool(self._queue)

    @property
    def queued(self) -> int:
        """How many snapshots :meth:`save` kept back."""
        return self._queued

    def windows(self, keys: Sequence[str]) -> list[bytes | None]:
        """Each window key's value: the chain hash before it (hex), AMBIGUOUS, or None."""
        raws = self.store.get_many(keys)
        with self._lock:
            for index, key in enumerate(keys):
                kept = self._pending_windows.get(key)
                if kept is not None:
                    raws[index] = claimed(raws[index], kept)
        return raws

    def continued(self, position: bytes) -> bool:
        """Whether a turn was folded after ``position`` (in any chat of any process)."""
        with self._lock:
            if position in self._pending_next:
                return True
        return self.store.get_many([_next_key(position)])[0] is not None

    def save_reply(self, position: bytes, snapshot: Snapshot) -> None:
        """The snapshot after a GM reply the stage has just answered, at the position the
        reply's text as the client got it makes (:func:`reply_position`). The chat's next
        request holds that very text, and :func:`fold_turns` then takes the reply's state from
        here instead of answering its tags again. Kept apart from the fold's own snapshots
        (``reply:`` keys), so what decides re-anchoring (snapshots, windows, ``next`` marks) is
        what it was: this only saves the work."""
        self.save((), {}, {position: snapshot})

    def reply(self, position: bytes) -> Snapshot | None:
        """The snapshot :meth:`save_reply` saved at ``position``, if any (and good)."""
        with self._lock:
            kept = self._kept("reply", position)
        if kept is not None:
            return kept
        entry = _read_entry(self.store.get_many([_reply_key(position)])[0], position)
        found = self.load(entry) if entry is not None else None
        if found is not None:
            with self._lock:
                self._keep("reply", [(position, found)])
        return found

    def save(self, rows: Sequence[Row], windows: Mapping[str, bytes],
             replies: Mapping[bytes, Snapshot] | None = None) -> None:
        """Store (key before the turn, key after it, snapshot after it) rows and the windows
        they complete (and :meth:`save_reply`'s snapshots); in a deferred cache, keep them
        here (lookups see them) until :meth:`flush` stores them."""
        replies = replies or {}
        if not self.deferred:
            self._stored(rows, windows, replies)
            return
        with self._lock:
            self._queue.append((rows, windows, replies))
            self._queued += len(rows) + len(replies)
            self._pending_replies.update(replies)
            for before, position, snapshot in rows:
                self._pending[position] = snapshot
                self._pending_next.add(before)
            for key, value in windows.items():
                kept = self._pending_windows.get(key)
                self._pending_windows[key] = claimed(kept, value)
            full = self._queued > MAX_PENDING
        if full:  # nobody flushes: store now rather than hold without bound
            self.flush()

    def taken(self) -> Callable[[], None]:
        """What :meth:`save` has kept back until now, as a :meth:`flush` of only that (to run
        elsewhere): what is saved after this call waits for the next flush, wherever this one
        runs and however late it starts."""
        with self._lock:
            queue, self._queue, self._queued = self._queue, [], 0
        return lambda: self._flushed(queue)

    def flush(self) -> None:
        """Store what :meth:`save` has kept back (the stage does it while the model writes:
        the state's canonical JSON, ~3 ms for a 500-stack state, is not on the reply's path).

        What cannot be stored is dropped and logged: a kept-back snapshot never outlives its
        flush, so one bad entry cannot fail later requests."""
        self.taken()()

    def _flushed(self, queue: list[tuple[Sequence[Row], Mapping[str, bytes],
                                         Mapping[bytes, Snapshot]]]) -> None:
        stored: list[bool] = []
        try:
            for rows, windows, replies in queue:
                stored.append(False)
                try:
                    self._stored(rows, windows, replies)
                    stored[-1] = True
                except Exception:  # a bug in one entry must not keep the others pending
                    log.exception("snapshot cache: could not store %d snapshots; dropped",
                                  len(rows))
        finally:
            with self._lock:
                for index, (rows, windows, replies) in enumerate(queue):
                    for before, position, snapshot in rows:
                        if self._pending.get(position) is snapshot:
                            del self._pending[position]
                        self._pending_next.discard(before)
                    for key in windows:
                        self._pending_windows.pop(key, None)
                    for position, snapshot in replies.items():
                        if self._pending_replies.get(position) is snapshot:
                            del self._pending_replies[position]
                    if index < len(stored) and stored[index]:
                        # the last rows of a fold, and a reply: where the chat goes on from
                        self._keep("snap", [(position, snapshot)
                                            for _, position, snapshot in rows[-2:]])
                        self._keep("reply", replies.items())

    def _stored(self, rows: Sequence[Row], windows: Mapping[str, bytes],
                replies: Mapping[bytes, Snapshot]) -> None:
        items: dict[str, bytes] = {}
        digests: dict[int, str] = {}

        def state_of(snapshot: Snapshot) -> str:
            digest = digests.get(id(snapshot.state))
            if digest is None:
                digest, canonical = self._written(snapshot.state)
                digests[id(snapshot.state)] = digest
                items[_state_key(digest)] = canonical
            return digest

        for before, position, snapshot in rows:
            items[_snap_key(position)] = _entry(position, snapshot, state_of(snapshot))
            items[_next_key(before)] = b"1"
        for position, snapshot in replies.items():
            items[_reply_key(position)] = _entry(position, snapshot, state_of(snapshot))
        self.store.put_many(items)
        if windows:
            self.store.claim_many(windows)

    def save_start(self, scope: bytes, start: State) -> None:
        """The snapshot of position 0 (the party file), so every chain has a first link."""
        digest, canonical = self._written(start)
        self.store.put_many({_state_key(digest): canonical,
                             _snap_key(scope): _entry(scope, Snapshot(start, 0), digest)})


def _entry(position: bytes, snapshot: Snapshot, digest: str) -> bytes:
    """The stored entry of one snapshot (its state is stored once, by digest)."""
    return json.dumps({"format": SNAPSHOT_FORMAT, "engine": ENGINE_VERSION,
                       "key": position.hex(), "replies": snapshot.replies, "state": digest,
                       "last": [a.to_json() for a in snapshot.last_answers],
                       "doubts": snapshot.doubts}, separators=(",", ":")).encode()


# --- the incremental fold -------------------------------------------------------------------------

Anchor = Literal["cached", "start", "re-anchored"]
NOTES: dict[Anchor, str] = {
    "cached": "resumed from a cached snapshot of this chat",
    "start": "folded from the party file",
    "re-anchored": "the front of the chat is missing; it continues the one earlier chat of "
                   "this game that holds its first turns",
}


@dataclass
class FoldOutcome:
    """The fold of a chat's turns, and how it was reached."""

    snapshot: Snapshot
    anchor: Anchor
    reused: int  # turns covered by the snapshot the fold resumed from
    folded: int  # turns folded in this call
    answers: list[MessageAnswer] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # some first turns of the chat were seen in another chat, too weakly to continue from it
    weak_match: bool = False
    end: bytes = b""  # the key of the position after the last turn (see reply_position)

    @property
    def anchored(self) -> bool:
        """Whether every recorded answer of the chat is what its fold gives (DESIGN.md
        "Interfaces"): read from the chat alone, so no other chat can change it."""
        return self.snapshot.doubts == 0

    def to_json(self) -> dict[str, Any]:
        note = NOTES[self.anchor]
        if self.weak_match and self.anchor != "re-anchored":
            note += ("; some of its first turns were also seen in another chat, too few or "
                     "not in one place, so nothing was taken from it")
        if not self.anchored:
            note += (f"; {self.snapshot.doubts} earlier GM "
                     f"{'reply was' if self.snapshot.doubts == 1 else 'replies were'} answered "
                     "differently than this fold answers them: the front of the chat is "
                     "probably missing (or the ruleset changed), so earlier effects are missing")
        return {"anchored": self.anchored, "anchor": self.anchor, "note": note,
                "reusedTurns": self.reused, "foldedTurns": self.folded,
                "replies": self.snapshot.replies}


class OverBudget(Exception):
    """The work asked for is more than the caller's :class:`Budget`: nothing was done, and it
    is to be done again where it may take long (the stage: in a worker thread)."""


@dataclass(frozen=True)
class Budget:
    """The most work a caller lets one call do where it runs (the stage: on its event loop)."""

    turns: int  # turns folded
    chars: int  # characters of their text

    def allows(self, turns: Sequence[Turn]) -> bool:
        return len(turns) <= self.turns and sum(len(t.text) for t in turns) <= self.chars


def fold_turns(game: Game, start: State, turns: Sequence[Turn],
               cache: SnapshotCache, pause: Callable[[], None] | None = None,
               budget: Budget | None = None, *, whole: bool = False,
               answer_from: int | None = None) -> FoldOutcome:
    """Fold the player and GM ``turns`` of one conversation (see :func:`read_turns`) through
    the fold of every transcript (:func:`replay.fold.fold_message`), around the cache.

    ``pause`` is called after each GM reply folded: the stage passes ``time.sleep(0)`` for a
    large fold in a worker thread, which lets the event loop take the GIL between replies.
    With a ``budget``, a fold of more turns (or text) than it allows raises
    :class:`OverBudget` before any turn is folded (the stage then folds in a worker thread).

    Resumes from the longest prefix already cached. A chat whose cached prefix is shorter than
    a window may have lost its front: it continues an earlier chat only on the evidence
    :func:`_re_anchor` asks for. Every position folded here is stored for the next call,
    with the windows it completes.

    ``whole``: the turns are a whole chat (the state view reads SillyTavern's own): it is
    never re-anchored, and it adds no windows (its hidden messages, which a prompt leaves
    out, would make the prompt's windows look seen at two places). ``answer_from``: resume
    no later than that turn, and fold every turn from it on (no reply snapshot is taken), so
    that the outcome holds their answers.
    """
    scope = game_scope(game, start)
    positions = cache.position_keys(scope, turns)
    found = cache.longest(positions, answer_from)
    anchor: Anchor = "cached"
    weak = False
    window = window_length(turns, 0)
    # a prefix as long as a window (or MAX_WINDOW turns) is the chat's own start
    enough = window if window is not None else min(len(turns), MAX_WINDOW)
    if turns and not whole and (found is None or found[0] < enough):
        anchored, weak = _re_anchor(cache, scope, turns, found[0] if found else 0)
        if anchored is not None:
            positions, found = anchored
            anchor = "re-anchored"
    if found is None:  # a game this server has not seen (or a cache that was emptied)
        cache.save_start(scope, start)
        found = (0, scope, Snapshot(start, 0))
    if anchor == "cached" and found[0] == 0:
        anchor = "start"
    begin, before, snapshot = found
    outcome = FoldOutcome(snapshot, anchor, reused=begin, folded=0, weak_match=weak)
    # A request is one session without events: a snapshot's replies are its whole position.
    position = Position(snapshot.state, 0, snapshot.replies)
    if begin == 0:
        position = begin_session(position, 0)
    last, doubts = snapshot.last_answers, snapshot.doubts
    rows: list[Row] = []
    if cache.replies and answer_from is None and begin < len(turns) and \
            turns[begin].role == "gm":
        # A reply the stage answered itself, sent back as the client got it: its state was
        # saved then (save_reply), and folding its text gives exactly that state.
        key = positions.keys(begin + 1, begin + 1)[0]
        answered = cache.reply(key)
        if answered is not None:
            rows.append((before, key, answered))
            before, begin = key, begin + 1
            position = Position(answered.state, 0, answered.replies)
            last, doubts = answered.last_answers, answered.doubts
            outcome.reused = begin
    todo = turns[begin:]
    if budget is not None and not budget.allows(todo):
        raise OverBudget
    keys = positions.keys(begin + 1, begin + len(todo)) if todo else []
    for turn, key in zip(todo, keys, strict=True):
        position, answers, differs = fold_message(game, position, turn.at, turn.message(),
                                                  outcome.diagnostics)
        if turn.role == "gm":
            outcome.answers.extend(answers)
            last = tuple(a.answer for a in answers)
            doubts += differs
            if pause is not None:
                pause()
        rows.append((before, key, Snapshot(position.state, position.replies, last, doubts)))
        before = key
    outcome.folded = len(todo)
    if rows:
        cache.save(rows, {} if whole else _windows(scope, positions, turns, found[0]))
    outcome.snapshot = Snapshot(position.state, position.replies, last, doubts)
    outcome.end = before
    return outcome


def _windows(scope: bytes, positions: PositionKeys, turns: Sequence[Turn],
             begin: int) -> dict[str, bytes]:
    """The windows of ``turns`` (the turns of ``positions``) that end after position
    ``begin``, each with the key of the position before it."""
    windows: dict[str, bytes] = {}
    first = max(0, begin - MAX_WINDOW + 1)
    for at in range(first, len(turns)):
        length = window_length(turns, at)
        if length is None or at + length <= begin:
            continue
        key = _window_key(scope, window_hash(turns[at:at + length]))
        windows[key] = positions.keys(at, at)[0].hex().encode("ascii")
    return windows


def _re_anchor(cache: SnapshotCache, scope: bytes, turns: Sequence[Turn], covered: int,
               ) -> tuple[tuple[PositionKeys, tuple[int, bytes, Snapshot]] | None, bool]:
    """Where a chat whose front is missing continues, if the evidence is strong: ((position
    keys, snapshot found) or None, whether weaker evidence was seen).

    Strong means: the window the chat begins with was seen at exactly one place; the earlier
    chat holds every turn of this one from there on, or all but the last :data:`TAIL_TURNS`
    and then no turn followed (it ended where this one goes on); and that covers more than the
    ``covered`` turns already known from a chat's start. The window must be the chat's first
    turns: a chat with turns of its own before a run that another chat holds is another chat
    (a new chat that shares the run, or one edited near its start), whatever it shares.
    """
    length = window_length(turns, 0)
    if length is None:
        return None, False
    value = cache.windows([_window_key(scope, window_hash(turns[:length]))])[0]
    if value is None:
        return None, False
    if value == AMBIGUOUS:
        return None, True
    try:
        before = bytes.fromhex(value.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return None, False
    positions = PositionKeys(before, turns)
    found = cache.longest(positions)
    if found is None or found[0] < length:
        return None, True  # the window was seen, but its snapshots are gone
    rest = len(turns) - found[0]
    if rest and (rest > TAIL_TURNS or cache.continued(found[1])):
        return None, True  # the earlier chat went on otherwise: this one only shares turns
    if found[0] <= covered:
        return None, False
    return (positions, found), False
