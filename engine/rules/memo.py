"""Remembering what immutable values compute to, by their identity.

State values, ruleset items and bags are immutable, so what a pure function computes from
them never changes while they live. A fold asks the same questions of the same objects many
times (every check walks the roller's bag for what their items do), so the answer is kept
with the objects it was computed from and reused only while *those very objects* are asked
about again. The memo holds the objects, so their ids cannot be reused by other objects while
an entry lives; it is bounded and starts over when full. Results never depend on what is
remembered, which keeps the engine pure.

A rule function is memoised with :func:`remembered`, keyed on its own arguments: the key is
everything the function is given, so changing the rule can never leave it incomplete.
:class:`IdentityMemo` is the lower-level store for the incremental writers (a state's
canonical JSON, the prompt's bag lines) that look up the *last* tuple seen beginning with a
value and then check by identity how much of it the new one shares.
"""

from __future__ import annotations

import functools
import operator
from collections.abc import Callable, Iterable, Sequence
from itertools import chain, takewhile
from typing import Any, Generic, ParamSpec, Protocol, TypeVar, cast

V = TypeVar("V")
T = TypeVar("T")
R = TypeVar("R")
R_co = TypeVar("R_co", covariant=True)
P = ParamSpec("P")

_KEYWORDS = object()  # in a held key, between the positional arguments and the keyword ones


class Remembered(Protocol[P, R_co]):
    """A function memoised by :func:`remembered`: called as the function, plus its bound."""

    size: int
    most: int

    def __call__(self, *args: P.args, **kwargs: P.kwargs) -> R_co: ...

    def clear(self) -> None: ...

    def held(self) -> int:
        """How many results are remembered now (never more than ``size``)."""
        ...

    def weight(self) -> int:
        """What the results remembered now cost together, by ``weigh`` (0 without it)."""
        ...

    def calls(self) -> list[tuple[tuple[Any, ...], dict[str, Any], Any]]:
        """The calls remembered now: (arguments, keyword arguments, result)."""
        ...


# Every function memoised with :func:`remembered`, so tests can check what each remembers.
REMEMBERED: list[Remembered[..., Any]] = []


def remembered(size: int, weigh: Callable[[Any], int] | None = None,
               most: int = 0) -> Callable[[Callable[P, R]], Remembered[P, R]]:
    """Memoise a pure function of immutable values on all its arguments, matched by identity.

    A call is answered from memory only when every argument, positional and keyword, is the
    very object an earlier call was given (equal but distinct objects are computed again,
    which is never wrong). The entry holds the arguments, so their ids cannot be reused while
    it lives. At most ``size`` results; ``weigh`` with ``most`` also bound what the results
    cost together (a result heavier than ``most`` on its own is not remembered), for results
    that grow with what they describe. When full it starts over.

    Safe under threads without a lock, as :class:`IdentityMemo`: each lookup and store is one
    dict operation, and a lost entry is only computed again.
    """

    def decorate(function: Callable[P, R]) -> Remembered[P, R]:
        # keyed by the arguments' ids: one id alone for one argument (the commonest, and the
        # cheapest key), else their tuple; the two kinds of key never equal each other
        entries: dict[int | tuple[int, ...], tuple[tuple[object, ...], R]] = {}
        weight = [0]  # what the results held cost together, by ``weigh``

        @functools.wraps(function)
        def memoised(*args: P.args, **kwargs: P.kwargs) -> R:
            held: tuple[object, ...] = args
            key: int | tuple[int, ...]
            if kwargs:
                held = (*args, _KEYWORDS, *chain.from_iterable(sorted(kwargs.items())))
                key = tuple(map(id, held))
            elif len(args) == 1:
                key = id(args[0])
            else:
                key = tuple(map(id, args))
            found = entries.get(key)
            if found is not None:
                return found[1]
            value = function(*args, **kwargs)
            if weigh is not None:
                cost = weigh(value)
                if cost > most:
                    return value
                if weight[0] + cost > most:
                    clear()
                weight[0] += cost
            if len(entries) >= size:
                clear()
            entries[key] = (held, value)
            return value

        def clear() -> None:
            entries.clear()
            weight[0] = 0

        memoised_ = cast(Remembered[P, R], memoised)
        memoised_.size = size
        memoised_.most = most
        memoised_.clear = clear  # type: ignore[method-assign]
        memoised_.held = entries.__len__  # type: ignore[method-assign]
        memoised_.weight = lambda: weight[0]  # type: ignore[method-assign]

        def calls() -> list[tuple[tuple[Any, ...], dict[str, Any], Any]]:
            found: list[tuple[tuple[Any, ...], dict[str, Any], Any]] = []
            for held, value in list(entries.values()):
                at = next((i for i, v in enumerate(held) if v is _KEYWORDS), len(held))
                named = held[at + 1:]
                keywords = {str(k): v for k, v in zip(named[::2], named[1::2], strict=True)}
                found.append((held[:at], keywords, value))
            return found

        memoised_.calls = calls  # type: ignore[method-assign]
        REMEMBERED.append(memoised_)
        return memoised_

    return decorate


class IdentityMemo(Generic[V]):
    """Values keyed by a tuple of objects, matched by identity (``is``), at most ``size``.

    ``weigh``, with ``most``: what one value costs (in bytes, say) and the most all of them
    may cost together. Values that grow (the text of a bag that keeps filling) are then bounded
    by what they hold, not only by their number. A value heavier than ``most`` on its
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
