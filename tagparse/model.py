"""The values tagparse hands to the engine: tags, repair diagnostics, scan results."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """One repair or refusal the reader made, with its span in the scanned text."""

    start: int
    end: int
    code: str
    message: str

    def to_json(self) -> dict[str, object]:
        """The diagnostic as plain JSON data, for transcripts and the GM's feedback."""
        return {"code": self.code, "message": self.message, "span": [self.start, self.end]}


@dataclass(frozen=True, slots=True)
class Tag:
    """One tag the GM wrote: its kind, request attributes and (when answered) answer attributes.

    ``text[start:end] == raw``. A tag with ``malformed`` set could not be read; its attributes
    are empty and the engine must refuse it.
    """

    kind: str
    attrs: tuple[tuple[str, str], ...]
    start: int
    end: int
    raw: str
    answer: tuple[tuple[str, str], ...] | None
    malformed: str | None = None

    def get(self, key: str, default: str | None = None) -> str | None:
        """The value of request attribute ``key`` (keys are lower case), or ``default``."""
        for name, value in self.attrs:
            if name == key:
                return value
        return default

    def to_json(self) -> dict[str, object]:
        """The tag as plain JSON data."""
        return {
            "kind": self.kind,
            "attrs": dict(self.attrs),
            "raw": self.raw,
            "answer": None if self.answer is None else dict(self.answer),
            "span": [self.start, self.end],
            "malformed": self.malformed,
        }


@dataclass(frozen=True, slots=True)
class ScanResult:
    """All tags of a text in text order, and every diagnostic the reading produced."""

    tags: tuple[Tag, ...]
    diagnostics: tuple[Diagnostic, ...]
