"""Remembering what immutable values compute to, by their identity.

State values, ruleset items and bags are immutable, so what a pure function computes from
them never changes while they live. A fold asks the same questions of the same objects many
times (every check walks the roller's bag for what their items do), so the answer is kept
with the objects it was computed from and reused only while *those very objects* are asked
about again. The memo holds the objects, so their ids cannot be reused by other objects while
an entry lives; it is bounded and starts over when full. Results never depend on what is
remembered, which keeps the engine pure.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from itertools import takewhile
from typing import Generic, TypeVar

V = TypeVar("V")
T = TypeVar("T")
R = TypeVar("R")


class IdentityMemo(Generic[V]):
    """Values keyed by a tuple of objects, matched by identity (``is``), at most ``size``.

    ``weigh``, with ``most``: what one value costs (in bytes, say) and the most all of them
    may cost together. Values that grow (the text of a bag that keeps filling) are then bounded
    by what they hold, not only by their number (issue 22). A value heavier than ``most`` on its
    own is not remembered.

    Safe under threads without a lock: each get and put is one dict operation, and a lost
    entry is only computed again (the running weight may drift by a lost entry until the next
    start-over, which resets it).
    """

    def __init__(self, size: int = 1024, weigh: Callable[[V], int] | None = None,
                 most: int = 0) -> None:
        self.size = size
        self.weigh = weigh
        self.most = most
        self.weight = 0  # what the values held cost together, by ``weigh``
        self._entries: dict[int, tuple[tuple[object, ...], V]] = {}

    def get(self, keys: tuple[object, ...]) -> V | None:
        """The value remembered for exactly these objects, or None."""
        entry = self._entries.get(id(keys[0]))
        if entry is None:
            return None
        held, value = entry
        if len(held) != len(keys) or not all(map(operator.is_, held, keys)):
            return None
        return value

    def put(self, keys: tuple[object, ...], value: V) -> V:
        """Remember ``value`` for these objects (replacing what the first one had); returns it."""
        if self.weigh is not None:
            cost = self.weigh(value)
            if cost > self.most:
                return value
            if self.weight + cost > self.most:
                self.clear()
            self.weight += cost
        if len(self._entries) >= self.size:
            self.clear()
        self._entries[id(keys[0])] = (keys, value)
        return value

    def clear(self) -> None:
        self._entries.clear()
        self.weight = 0


def same_run(first: Iterable[object], second: Iterable[object]) -> int:
    """How many values two sequences share from the start, by identity (a loop in C)."""
    return len(list(takewhile(bool, map(operator.is_, first, second))))


def shared_ends(before: Sequence[T], now: Sequence[T]) -> tuple[int, int]:
    """How many values ``now`` shares with ``before`` at its start, and then at its end (the
    two runs never overlap), by identity."""
    head = same_run(before, now)
    return head, same_run(reversed(before[head:]), reversed(now[head:]))


def reuse_ends(before: Sequence[T], done: Sequence[R], now: Sequence[T],
               make: Callable[[T], R]) -> list[R]:
    """``[make(v) for v in now]``, given ``done == [make(v) for v in before]``: the runs of
    values ``now`` shares with ``before`` at its start and at its end (by identity: a changed
    bag or journal keeps most of the tuple before it) keep what ``make`` gave for them."""
    head, tail = shared_ends(before, now)
    return [*done[:head], *map(make, now[head:len(now) - tail]), *done[len(before) - tail:]]
