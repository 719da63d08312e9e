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

Re-anchoring: chat front ends drop the oldest messages once the context is full. The cache also
remembers, per game, the chain hash before each turn it has seen (``seen`` entries keyed by the
turn's own hash), so a chat whose front is missing continues from the snapshot where its first
turns were last seen rather than from the party file.
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import logging
import threading
import time
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypeVar, overload

from pydantic import ValidationError

from engine import ENGINE_VERSION, Answer, Game, State, TurnContext

from .fold import Diagnostic, MessageAnswer, _reply, turn_key
from .formats import openai
from .transcript import Message

log = logging.getLogger("gmtags.cache")
T = TypeVar("T")

SNAPSHOT_FORMAT = "gmtags-snapshot/1"
PREFIX = "gmtags:"
DEFAULT_ENTRIES = 200_000
DEFAULT_TTL = 7 * 24 * 3600  # seconds a Redis entry lives after it was last written
RETRY_AFTER = 5.0  # seconds a store that failed is left alone before it is tried again
ANCHOR_CANDIDATES = 8  # leading turns of a chat tried when its front is not known
LOOKUP_BATCH = 64  # chain positions asked for at once, newest first
# The newest positions are asked for in small lookups first: a chat's next request is found
# one to three positions before its end (the last reply, or the player's turn before it), and
# each position asked for is a hash to finish and a key to look up.
LOOKUP_FIRST = (1, 4)
NEW_CHAT_TURNS = 2  # an unknown chat of a known game this short is taken as a new chat
MAX_PENDING = 4096  # snapshots a deferred cache keeps unstored before it stores them itself
PARSED_STATES = 64  # states a SnapshotCache keeps parsed in this process, newest used
RECENT_CHATS = 8  # requests (and chains) a SnapshotCache keeps to reuse what they share: at most
# this many request bodies stay in memory, besides the snapshots


class Store(Protocol):
    """Where snapshots live: bytes by string key. Misses are ``None``; nothing here raises."""

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...

    def put_many(self, items: Mapping[str, bytes]) -> None: ...


class MemoryStore:
    """The default store: a thread-safe in-process LRU of at most ``entries`` entries."""

    def __init__(self, entries: int = DEFAULT_ENTRIES) -> None:
        self.entries = entries
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

    def put_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                self._items[key] = value
                self._items.move_to_end(key)
            while len(self._items) > self.entries:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


class RedisStore:
    """Redis, shared by every gmtags process; entries expire ``ttl`` seconds after writing.

    Redis being down is never an error: the first failure is logged (without the URL, which may
    hold a password), lookups miss and writes are dropped; the server is tried again after
    :data:`RETRY_AFTER` seconds, and its return is logged too.
    """

    def __init__(self, url: str, ttl: int = DEFAULT_TTL, timeout: float = 0.5,
                 clock: Callable[[], float] = time.monotonic) -> None:
        import redis  # lazy: only the Redis backend needs the package

        self._errors: tuple[type[BaseException], ...] = (redis.RedisError, OSError)
        self._client = redis.Redis.from_url(url, socket_timeout=timeout,
                                            socket_connect_timeout=timeout)
        self.ttl = ttl
        self._clock = clock
        self._down_since: float | None = None
        self._lock = threading.Lock()

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

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys or not self._usable():
            return [None] * len(keys)
        try:
            values: list[Any] = self._client.mget(list(keys))  # type: ignore[assignment]
        except self._errors as error:
            self._failed(error)
            return [None] * len(keys)
        self._worked()
        return [v if isinstance(v, bytes) else None for v in values]

    def put_many(self, items: Mapping[str, bytes]) -> None:
        if not items or not self._usable():
            return
        try:
            pipe = self._client.pipeline(transaction=False)
            for key, value in items.items():
                pipe.set(key, value, ex=self.ttl)
            pipe.execute()
        except self._errors as error:
            self._failed(error)
            return
        self._worked()


def open_store(redis_url: str | None, ttl: int = DEFAULT_TTL) -> Store:
    """The LRU without a URL, else Redis at ``redis_url``."""
    return MemoryStore() if redis_url is None else RedisStore(redis_url, ttl=ttl)


# --- chain hashes -------------------------------------------------------------------------------

ROLES = {"system": "system", "developer": "system", "user": "player", "assistant": "gm",
         "tool": "system", "function": "system"}  # as replay.formats.openai reads them


class Turn(NamedTuple):
    """A player or GM message of a request: its position in the array, role and text."""

    at: int
    role: str
    text: str


class Run(Sequence[T]):
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

    def extended(self, keep: int, items: Iterable[T] = ()) -> Run[T]:
        """The first ``keep`` items of this run, then ``items``."""
        keep = max(0, min(keep, self._length))
        whole, part = divmod(keep, LOOKUP_BATCH)
        run: Run[T] = Run()
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
            raise IndexError("Run index out of range")
        return self._blocks[index // LOOKUP_BATCH][index % LOOKUP_BATCH]

    def __iter__(self) -> Iterator[T]:
        return itertools.chain.from_iterable(self._blocks)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Sequence) or isinstance(other, (str, bytes)):
            return NotImplemented
        return len(self) == len(other) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"Run({list(self)!r})"


def as_run(items: Sequence[T]) -> Run[T]:
    """``items`` as a :class:`Run` (itself when it is one)."""
    return items if isinstance(items, Run) else Run(items)


def openai_turns(messages: Sequence[Any], first: int = 0) -> list[Turn]:
    """The player and GM turns of an OpenAI ``messages`` array, read as the OpenAI reader does
    (from message ``first`` on; ``Turn.at`` is always the index in the whole array).

    A light reader for the stage's hot path: it builds no message model for the turns that a
    cached snapshot already covers. System, developer, tool and unreadable entries are skipped.
    """
    turns: list[Turn] = []
    append = turns.append
    roles = ROLES
    new = tuple.__new__  # Turn(...) without its Python-level __new__: this loop sees every turn
    for index, value in enumerate(messages[first:] if first else messages, first):
        if not isinstance(value, dict):
            continue
        role = roles.get(value.get("role"))  # type: ignore[arg-type]
        if role == "player" or role == "gm":
            content = value.get("content")
            if not isinstance(content, str):
                content = openai.content_text(content, index + 1, [])
            append(new(Turn, (index, role, content)))
    return turns


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


def _encoded(turn: Turn) -> bytes:
    text = turn.text.encode("utf-8", "surrogatepass")
    return (b"P" if turn.role == "player" else b"G") + len(text).to_bytes(8, "little") + text


def _all_encoded(turns: Sequence[Turn]) -> list[bytes]:
    """``[_encoded(turn) for turn in turns]``, inlined: the stage encodes every turn."""
    return [(b"P" if role == "player" else b"G") + len(text).to_bytes(8, "little") + text
            for role, text in ((turn[1], turn[2].encode("utf-8", "surrogatepass"))
                               for turn in turns)]


def turn_hash(turn: Turn) -> bytes:
    """A turn's own hash (role and text), for finding where a chat's first turns were seen."""
    return hashlib.blake2b(_encoded(turn), digest_size=20).digest()


def common_prefix(left: Sequence[Any], right: Sequence[Any]) -> int:
    """How many leading items two sequences share, compared a block at a time (C speed)."""
    size = min(len(left), len(right))
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


class Chain:
    """Position keys of a chat: the hash of (root, turns 1..i) for each position i.

    The root is the game's position 0 or, for a chat whose front is missing, the key of the
    position where it was re-anchored. The turns are encoded once and hashed in blocks of
    :data:`LOOKUP_BATCH` (one ``update`` per block: the same digest as one per turn); a copy
    of the running hash is kept before each block, and a position's key is only finished
    (``copy().digest()``) when it is asked for.
    """

    def __init__(self, root: bytes, turns: Sequence[Turn], known: Chain | None = None,
                 shared: int | None = None) -> None:
        """``known``: a chain of the same root whose turns this one may begin with; the turns
        they share (``shared``, counted here when not given) are neither encoded nor hashed
        again."""
        self.root = root
        self.turns = turns
        if known is None or known.root != root:
            shared = 0
        elif shared is None:
            shared = common_prefix(known.turns, turns)
        kept = 0  # blocks of the shared turns whose running hash ``known`` already holds
        if known is not None and shared:
            kept = min(shared // LOOKUP_BATCH, len(known._marks) - 1)
        if known is not None and kept:
            self._encoded: Run[bytes] = known._encoded.extended(
                shared, _all_encoded(turns[shared:]))
            self._marks: list[Any] = known._marks[:kept + 1]
            hasher = self._marks[-1].copy()
        else:
            self._encoded = Run(_all_encoded(turns))
            self._marks = []
            hasher = hashlib.blake2b(root, digest_size=20)
        for block in range(kept * LOOKUP_BATCH, len(self._encoded), LOOKUP_BATCH):
            if block // LOOKUP_BATCH == len(self._marks):
                self._marks.append(hasher.copy())
            hasher.update(b"".join(self._encoded[block:block + LOOKUP_BATCH]))
        if not self._marks:
            self._marks.append(hasher.copy())
        self._end = hasher

    def __len__(self) -> int:
        return len(self.turns) + 1

    def keys(self, first: int, last: int) -> list[bytes]:
        """Keys of positions ``first`` to ``last`` (inclusive)."""
        if first == last == len(self.turns):
            return [self._end.copy().digest() if self.turns else self.root]
        mark = min(first // LOOKUP_BATCH, len(self._marks) - 1)
        hasher = self._marks[mark].copy()
        start = mark * LOOKUP_BATCH
        encoded = self._encoded[start:last]  # the turns hashed on the way to ``last``
        found: list[bytes] = []
        for position in range(start, last + 1):
            if position >= first:
                found.append(hasher.copy().digest() if position else self.root)
            if position - start < len(encoded):
                hasher.update(encoded[position - start])
        return found


# --- snapshots ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Snapshot:
    """The fold after a transcript prefix: state, GM replies so far, the latest reply's answers."""

    state: State
    replies: int
    last_answers: tuple[Answer, ...] = ()


def _snap_key(position: bytes) -> str:
    return f"{PREFIX}snap:{position.hex()}"


def _state_key(digest: str) -> str:
    return f"{PREFIX}state:{digest}"


def _seen_key(scope: bytes, turn: bytes) -> str:
    return f"{PREFIX}seen:{scope.hex()}:{turn.hex()}"


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
            or not isinstance(entry.get("last"), list)):
        return None
    return entry


class SnapshotCache:
    """Snapshots on a :class:`Store`, with per-game ``seen`` entries for re-anchoring.

    The states used last are also kept parsed in this process (by their digest, with their
    canonical bytes), so a warm request neither parses its snapshot's JSON nor writes the
    canonical JSON of a state it has already written. A state is named by the digest of its
    canonical JSON, so a parsed copy is always the state its digest names.
    """

    def __init__(self, store: Store, parsed: int = PARSED_STATES, deferred: bool = False) -> None:
        """``deferred``: :meth:`save` keeps snapshots in this process until :meth:`flush`."""
        self.store = store
        self.deferred = deferred
        self._queue: list[tuple[bytes, Sequence[tuple[bytes, bytes, bytes, Snapshot]]]] = []
        self._queued = 0
        self._pending: dict[bytes, Snapshot] = {}  # position key -> snapshot not stored yet
        self._pending_seen: dict[str, bytes] = {}  # seen key -> its value, not stored yet
        self._parsed = parsed
        self._states: OrderedDict[str, tuple[State, bytes]] = OrderedDict()
        self._digests: dict[int, str] = {}  # id(state) -> digest, for states in _states
        self._lock = threading.Lock()
        self._requests: deque[tuple[Sequence[Any], Run[Turn]]] = deque(maxlen=RECENT_CHATS)
        self._chains: deque[Chain] = deque(maxlen=RECENT_CHATS)
        # (turns given, the recent turns they begin with, how many): what chain() may reuse
        self._lineage: deque[tuple[Sequence[Turn], Sequence[Turn], int]] = deque(
            maxlen=2 * RECENT_CHATS)

    def turns(self, messages: Sequence[Any],
              like: tuple[Sequence[Any], int] | None = None) -> Run[Turn]:
        """:func:`openai_turns` of ``messages``, reusing the turns of a recent request that
        began with the same messages (a chat's next request repeats all of the last one), so
        only the new messages are read. ``messages`` must not change in place afterwards (a
        parsed request body never does).

        ``like``: (a recent request's messages, how many leading messages ``messages`` shares
        with it), when the caller knows (:class:`replay.stage.body.BodyReader` compared their
        bytes); the messages are then not compared again."""
        with self._lock:
            recent = list(self._requests)
        known: Run[Turn] = Run()
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
        turns = known.extended(cut, openai_turns(messages, shared))
        with self._lock:
            self._requests.append((messages, turns))
            self._lineage.append((turns, known, cut))
        return turns

    def drop_last(self, turns: Run[Turn]) -> Run[Turn]:
        """``turns[:-1]``, still known to share its first turns with a recent chain."""
        dropped = turns.extended(len(turns) - 1)
        with self._lock:
            for new, known, cut in reversed(self._lineage):
                if new is turns:
                    self._lineage.append((dropped, known, min(cut, len(dropped))))
                    break
        return dropped

    def chain(self, root: bytes, turns: Sequence[Turn]) -> Chain:
        """The :class:`Chain` of ``turns``, reusing what a recent chain of the same root that
        shares its first turns has already encoded and hashed (known from :meth:`turns`
        without comparing them, for turns it gave)."""
        with self._lock:
            recent = [c for c in self._chains if c.root == root]
            lineage = next(((known, cut) for new, known, cut in reversed(self._lineage)
                            if new is turns), None)
        known: Chain | None = None
        shared = 0
        if lineage is not None and lineage[1]:
            known = next((c for c in reversed(recent) if c.turns is lineage[0]), None)
            shared = lineage[1] if known is not None else 0
        if known is None:
            for candidate in reversed(recent):  # newest first, as in turns()
                if min(len(candidate.turns), len(turns)) <= shared:
                    continue
                common = common_prefix(candidate.turns, turns)
                if common > shared:
                    known, shared = candidate, common
        chain = Chain(root, turns, known, shared)
        with self._lock:
            self._chains.append(chain)
        return chain

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
        return Snapshot(state, entry["replies"], answers)

    def longest(self, chain: Chain) -> tuple[int, bytes, Snapshot] | None:
        """The latest position of ``chain`` with a good snapshot: (position, key, snapshot)."""
        end = len(chain)  # positions below ``end`` are still to be tried, newest first
        lookups = 0
        while end > 0:
            size = LOOKUP_FIRST[lookups] if lookups < len(LOOKUP_FIRST) else LOOKUP_BATCH
            lookups += 1
            first = max(0, end - size)
            keys = chain.keys(first, end - 1)
            with self._lock:
                pending = [self._pending.get(k) for k in keys] if self._pending else []
            if pending and pending[-1] is not None:
                return end - 1, keys[-1], pending[-1]
            raws = self.store.get_many([_snap_key(k) for k in keys])
            for offset in range(len(keys) - 1, -1, -1):
                kept = pending[offset] if pending else None
                if kept is not None:
                    return first + offset, keys[offset], kept
                entry = _read_entry(raws[offset], keys[offset])
                if entry is not None:
                    snapshot = self.load(entry)
                    if snapshot is not None:
                        return first + offset, keys[offset], snapshot
            end = first
        return None

    def seen_before(self, scope: bytes, turns: Sequence[bytes]) -> list[bytes | None]:
        """For each turn hash, the chain hash before it when this game last saw it."""
        keys = [_seen_key(scope, t) for t in turns]
        raws = self.store.get_many(keys)
        with self._lock:
            for index, key in enumerate(keys):
                if key in self._pending_seen:
                    raws[index] = self._pending_seen[key]
        found: list[bytes | None] = []
        for raw in raws:
            try:
                found.append(bytes.fromhex(raw.decode("ascii")) if raw is not None else None)
            except (ValueError, UnicodeDecodeError):
                found.append(None)
        return found

    def save(self, scope: bytes, rows: Sequence[tuple[bytes, bytes, bytes, Snapshot]]) -> None:
        """Store (key before the turn, turn hash, key after it, snapshot after it) rows; in a
        deferred cache, keep them here (lookups see them) until :meth:`flush` stores them."""
        if not self.deferred:
            self._store_rows(scope, rows)
            return
        with self._lock:
            self._queue.append((scope, rows))
            self._queued += len(rows)
            for before, turn, position, snapshot in rows:
                self._pending[position] = snapshot
                self._pending_seen[_seen_key(scope, turn)] = before.hex().encode("ascii")
            full = self._queued > MAX_PENDING
        if full:  # nobody flushes: store now rather than hold without bound
            self.flush()

    def flush(self) -> None:
        """Store what :meth:`save` has kept back (the stage does it while the model writes:
        the state's canonical JSON, ~3 ms for a 500-stack state, is not on the reply's path)."""
        with self._lock:
            queue, self._queue, self._queued = self._queue, [], 0
        for scope, rows in queue:
            self._store_rows(scope, rows)
        with self._lock:
            for scope, rows in queue:
                for _, turn, position, snapshot in rows:
                    if self._pending.get(position) is snapshot:
                        del self._pending[position]
                    self._pending_seen.pop(_seen_key(scope, turn), None)

    def _store_rows(self, scope: bytes,
                    rows: Sequence[tuple[bytes, bytes, bytes, Snapshot]]) -> None:
        items: dict[str, bytes] = {}
        digests: dict[int, str] = {}
        for before, turn, position, snapshot in rows:
            digest = digests.get(id(snapshot.state))
            if digest is None:
                digest, canonical = self._written(snapshot.state)
                digests[id(snapshot.state)] = digest
                items[_state_key(digest)] = canonical
            entry = {"format": SNAPSHOT_FORMAT, "engine": ENGINE_VERSION, "key": position.hex(),
                     "replies": snapshot.replies, "state": digest,
                     "last": [a.to_json() for a in snapshot.last_answers]}
            items[_snap_key(position)] = json.dumps(entry, separators=(",", ":")).encode()
            items[_seen_key(scope, turn)] = before.hex().encode("ascii")
        self.store.put_many(items)

    def save_start(self, scope: bytes, start: State) -> None:
        """The snapshot of position 0 (the party file), so every chain has a first link."""
        digest, canonical = self._written(start)
        entry = {"format": SNAPSHOT_FORMAT, "engine": ENGINE_VERSION, "key": scope.hex(),
                 "replies": 0, "state": digest, "last": []}
        self.store.put_many({_state_key(digest): canonical,
                             _snap_key(scope): json.dumps(entry).encode()})


# --- the incremental fold -------------------------------------------------------------------------

Anchor = Literal["cached", "start", "re-anchored", "unanchored"]


@dataclass
class FoldOutcome:
    """The fold of a chat's turns, and how it was reached."""

    snapshot: Snapshot
    anchor: Anchor
    reused: int  # turns covered by the snapshot the fold resumed from
    folded: int  # turns folded in this call
    answers: list[MessageAnswer] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        notes = {
            "cached": "resumed from a cached snapshot of this chat",
            "start": "folded from the party file (the chat is new to this server)",
            "re-anchored": "the front of the chat is missing; resumed where its first turns "
                           "were last seen",
            "unanchored": "the front of the chat is missing and none of its turns were seen "
                          "before; folded from the party file, so earlier effects are missing",
        }
        return {"anchored": self.anchor != "unanchored", "anchor": self.anchor,
                "note": notes[self.anchor], "reused_turns": self.reused,
                "folded_turns": self.folded, "replies": self.snapshot.replies}


def fold_turns(game: Game, start: State, turns: Sequence[Turn],
               cache: SnapshotCache) -> FoldOutcome:
    """Fold the player and GM ``turns`` of one conversation (see :func:`openai_turns`).

    Resumes from the longest prefix already cached; when the chat's front is missing, from where
    its leading turns were last seen. Every position folded here is stored for the next call.
    """
    scope = game_scope(game, start)
    chain = cache.chain(scope, turns)
    found = cache.longest(chain)
    anchor: Anchor = "cached"
    offset = 0  # turns of this chat skipped before the anchor (re-anchoring)
    if found is None or found[0] == 0:
        anchored = _re_anchor(cache, scope, turns) if turns else None
        if anchored is not None:
            offset, chain, found = anchored
            anchor = "re-anchored"
        elif found is None:  # a game this server has not seen (or a cache that was emptied)
            cache.save_start(scope, start)
            found = (0, scope, Snapshot(start, 0))
            anchor = "start"
        else:
            # A game this server knows, a chat it does not: a new chat is a few turns long;
            # a longer one most likely lost its front.
            anchor = "unanchored" if len(turns) > NEW_CHAT_TURNS else "start"
    begin, before, snapshot = found
    outcome = FoldOutcome(snapshot, anchor, reused=offset + begin, folded=0)
    state, replies, last = snapshot.state, snapshot.replies, snapshot.last_answers
    todo = turns[offset + begin:]
    keys = chain.keys(begin + 1, begin + len(todo)) if todo else []
    rows: list[tuple[bytes, bytes, bytes, Snapshot]] = []
    for turn, key in zip(todo, keys, strict=True):
        if turn.role == "gm":
            message = Message(role="gm", text=turn.text)
            reply_answers: list[MessageAnswer] = []
            ctx = TurnContext(state.seed, turn_key(state, 0, replies, message))
            state = _reply(game, state, turn.at, message, ctx, reply_answers,
                           outcome.diagnostics)
            outcome.answers.extend(reply_answers)
            last = tuple(a.answer for a in reply_answers)
            replies += 1
        rows.append((before, turn_hash(turn), key, Snapshot(state, replies, last)))
        before = key
    outcome.folded = len(rows)
    if rows:
        cache.save(scope, rows)
    outcome.snapshot = Snapshot(state, replies, last)
    return outcome


def _re_anchor(cache: SnapshotCache, scope: bytes, turns: Sequence[Turn],
               ) -> tuple[int, Chain, tuple[int, bytes, Snapshot]] | None:
    """Where a chat whose front is missing continues: (turns skipped, chain, snapshot found)."""
    leading = [turn_hash(t) for t in turns[:ANCHOR_CANDIDATES]]
    best: tuple[int, Chain, tuple[int, bytes, Snapshot]] | None = None
    for offset, before in enumerate(cache.seen_before(scope, leading)):
        if before is None:
            continue
        chain = Chain(before, turns[offset:])
        found = cache.longest(chain)
        if found is None:
            continue  # the turn was seen, but its snapshots are gone
        if best is None or found[0] + offset > best[2][0] + best[0]:
            best = (offset, chain, found)
    return best
