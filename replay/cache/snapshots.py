"""The snapshot cache: the fold's state after each transcript prefix, kept in a
:class:`~replay.cache.stores.Store` under the prefix's chain hash, with the windows and
"a turn followed" marks re-anchoring reads (see :mod:`replay.cache`). A missing, corrupt or
stale entry is only a miss."""

from __future__ import annotations

import hashlib
import json
import logging
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from engine import ENGINE_VERSION, Answer, State

from ..formats.openai import read_turns
from ..transcript import Turn
from .positions import (
    LOOKUP_BATCH,
    SNAPSHOT_FORMAT,
    PositionKeys,
    SharedPrefixSequence,
    chain_link,
    common_prefix,
    turns_before,
)
from .stores import PREFIX, Store, claimed

log = logging.getLogger("gmtags.cache")

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
    return chain_link(end, Turn(0, "gm", text))


def _state_key(digest: str) -> str:
    return f"{PREFIX}state:{digest}"


def window_key(scope: bytes, window: bytes) -> str:
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
        cut = turns_before(known, shared)
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

