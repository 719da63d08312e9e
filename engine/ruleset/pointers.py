"""Where a problem is in a ruleset file: an RFC 6901 JSON pointer and a message."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with a ruleset, at a JSON pointer into the file."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


class RulesetError(Exception):
    """A ruleset that cannot be loaded; ``problems`` lists every reason, not just the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _escape(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(*parts: str | int) -> str:
    """The RFC 6901 JSON pointer of a path into the ruleset document."""
    return "".join("/" + _escape(part) for part in parts)
