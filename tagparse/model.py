"""The values tagparse hands to the engine: tags, repair diagnostics, scan results.

``Tag`` and ``Diagnostic`` are immutable tuples underneath (a scan makes one per tag, so they
must be cheap to build); read them by field name, never by position.
"""

from __future__ import annotations

from dataclasses import dataclass
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from tagparse.canonical import Pairs, read_canonical

_TagItems = tuple[str, Pairs | None, int, int, str, Pairs | None, str | None]


def _not_equal(other: object) -> bool:
    """``==`` with another type: never equal to a tuple; others may answer for themselves."""
    return False if isinstance(other, tuple) else NotImplemented


def _unordered(self: object, other: object) -> Any:
    """Tags and diagnostics have no order (as the dataclasses they replace had none)."""
    return NotImplemented


class Diagnostic(tuple[int, int, str, str]):
    """One repair or refusal the reader made, with its span in the scanned text."""

    __slots__ = ()
    __match_args__ = ("start", "end", "code", "message")

    def __new__(cls, start: int, end: int, code: str, message: str) -> Diagnostic:
        return tuple.__new__(cls, (start, end, code, message))

    if TYPE_CHECKING:

        @property
        def start(self) -> int: ...
        @property
        def end(self) -> int: ...
        @property
        def code(self) -> str: ...
        @property
        def message(self) -> str: ...

    else:
        start = property(itemgetter(0))
        end = property(itemgetter(1))
        code = property(itemgetter(2))
        message = property(itemgetter(3))

    def __eq__(self, other: object) -> bool:
        if type(other) is not Diagnostic:
            return _not_equal(other)
        return tuple.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    __hash__ = tuple.__hash__
    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __repr__(self) -> str:
        return (
            f"Diagnostic(start={self.start!r}, end={self.end!r}, code={self.code!r}, "
            f"message={self.message!r})"
        )

    def __reduce__(self) -> tuple[type[Diagnostic], tuple[int, int, str, str]]:
        return (Diagnostic, (self.start, self.end, self.code, self.message))

    def to_json(self) -> dict[str, object]:
        """The diagnostic as plain JSON data, for transcripts and the GM's feedback."""
        return {"code": self.code, "message": self.message, "span": [self.start, self.end]}


class Tag(tuple[str, Pairs | None, int, int, str, Pairs | None, str | None]):
    """One tag the GM wrote: its kind, request attributes and (when answered) answer attributes.

    ``text[start:end] == raw``. A tag with ``malformed`` set could not be read; its attributes
    are empty and the engine must refuse it.

    A canonical tag from the scanner's fast path is stored without its attributes (the regex
    that found it proved it reads without a diagnostic) and reads them from ``raw`` on first
    use; equality, hashing and pickling see the attributes either way.
    """

    __slots__ = ()
    __match_args__ = ("kind", "attrs", "start", "end", "raw", "answer", "malformed")

    def __new__(
        cls,
        kind: str,
        attrs: Pairs,
        start: int,
        end: int,
        raw: str,
        answer: Pairs | None,
        malformed: str | None = None,
    ) -> Tag:
        return tuple.__new__(cls, (kind, attrs, start, end, raw, answer, malformed))

    if TYPE_CHECKING:

        @property
        def kind(self) -> str: ...
        @property
        def start(self) -> int: ...
        @property
        def end(self) -> int: ...
        @property
        def raw(self) -> str: ...
        @property
        def malformed(self) -> str | None: ...

    else:
        kind = property(itemgetter(0))
        start = property(itemgetter(2))
        end = property(itemgetter(3))
        raw = property(itemgetter(4))
        malformed = property(itemgetter(6))

    @property
    def attrs(self) -> Pairs:
        """Request attributes in text order (keys lower case, each key once)."""
        attrs = self[1]
        return read_canonical(self[4])[0] if attrs is None else attrs

    @property
    def answer(self) -> Pairs | None:
        """Answer attributes after "|", or None for a tag that has not been answered."""
        return read_canonical(self[4])[1] if self[1] is None else self[5]

    def _items(self) -> _TagItems:
        if self[1] is None:
            attrs, answer = read_canonical(self[4])
            return (self[0], attrs, self[2], self[3], self[4], answer, self[6])
        return (self[0], self[1], self[2], self[3], self[4], self[5], self[6])

    def __eq__(self, other: object) -> bool:
        if type(other) is not Tag:
            return _not_equal(other)
        if (self[1] is None) == (other[1] is None):  # both read lazily, or neither
            return tuple.__eq__(self, other)
        return self._items() == other._items()

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash(self._items())

    __lt__ = __le__ = __gt__ = __ge__ = _unordered

    def __repr__(self) -> str:
        return (
            f"Tag(kind={self.kind!r}, attrs={self.attrs!r}, start={self.start!r}, "
            f"end={self.end!r}, raw={self.raw!r}, answer={self.answer!r}, "
            f"malformed={self.malformed!r})"
        )

    def __reduce__(self) -> tuple[type[Tag], _TagItems]:
        return (Tag, self._items())

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of request attribute ``key`` (keys are lower case), or ``default``."""
        for name, value in self.attrs:
            if name == key:
                return value
        return default

    def to_json(self) -> dict[str, object]:
        """The tag as plain JSON data."""
        answer = self.answer
        return {
            "kind": self.kind,
            "attrs": dict(self.attrs),
            "raw": self.raw,
            "answer": None if answer is None else dict(answer),
            "span": [self.start, self.end],
            "malformed": self.malformed,
        }


@dataclass(frozen=True, slots=True)
class ScanResult:
    """All tags of a text in text order, and every diagnostic the reading produced."""

    tags: tuple[Tag, ...]
    diagnostics: tuple[Diagnostic, ...]
