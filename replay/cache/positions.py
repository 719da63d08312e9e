"""Position hashing: the chain hash that names a whole transcript prefix, and the windows of
turns a chat whose front is missing is recognised by (see :mod:`replay.cache`).

Position ``i`` of a chat has a chain hash: the hash of (engine version, ruleset digest, game
seed, start state) for position 0, and ``H(chain[i-1], turn i)`` after it."""

from __future__ import annotations

import bisect
import hashlib
import itertools
from collections.abc import Iterable, Iterator, Sequence
from typing import Any, TypeVar, overload

from engine import ENGINE_VERSION, Game, State

from ..transcript import Turn

T = TypeVar("T")

SNAPSHOT_FORMAT = "gmtags-snapshot/2"
WINDOW_TURNS = 3  # a window holds at least this many consecutive whole turns ...
WINDOW_REPLIES = 2  # ... with at least this many GM replies among them
MAX_WINDOW = 8  # turns a window may span; a run of turns needing more holds no window
LOOKUP_BATCH = 64  # chain positions asked for at once, newest first


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


def chain_link(key: bytes, turn: Turn) -> bytes:
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
        key = chain_link(key, turn)
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


def turns_before(turns: Sequence[Turn], message: int) -> int:
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
    key and turn i (:func:`chain_link`).

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
            key = chain_link(key, turn)
            new.append(key)
        self._keys = keys.extended(len(keys), new)

    def __len__(self) -> int:
        return len(self.turns) + 1

    def keys(self, first: int, last: int) -> list[bytes]:
        """Keys of positions ``first`` to ``last`` (inclusive)."""
        return self._keys[first:last + 1]

