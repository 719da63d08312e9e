"""Where a problem is in a ruleset file (an RFC 6901 JSON pointer and a message), and the small
helpers every check of a ruleset uses: repeated ids, and the name a typo most likely meant."""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Iterator, Sequence
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


def duplicates(ids: Iterable[str]) -> Iterator[tuple[int, str]]:
    """Every id seen before, with its index."""
    seen: set[str] = set()
    for index, ident in enumerate(ids):
        if ident in seen:
            yield index, ident
        seen.add(ident)


# How alike a typo and a known name must be (difflib's ratio) to be suggested: "sneek" and
# "sneak" are 0.8, "traned" and "trained" 0.92; "catalogs" and "tags" (0.67) are not.
CLOSE = 0.75


def nearest(word: str, known: Iterable[str]) -> str | None:
    """The known name a typo most likely meant: the same name in another case, else the
    closest by :mod:`difflib`'s ratio (at least :data:`CLOSE`), else None. A catalog reference
    (``kit/hand-ax``) is compared by its entry id among the same catalog's, so a shared
    ``kit/`` never makes two different entries look alike."""
    names = sorted(set(known))
    folded = word.casefold()
    for name in names:
        if name.casefold() == folded:
            return name
    head, slash, tail = word.rpartition("/")
    if slash:
        inside = {name[len(head) + 1:]: name for name in names if name.startswith(head + "/")}
        close = difflib.get_close_matches(tail, list(inside), n=1, cutoff=CLOSE)
        return inside[close[0]] if close else None
    close = difflib.get_close_matches(word, names, n=1, cutoff=CLOSE)
    return close[0] if close else None


def did_you_mean(word: str, known: Iterable[str]) -> str:
    """`` (did you mean "sneak"?)`` for a name that is not known, or nothing."""
    found = nearest(word, known)
    return f' (did you mean "{found}"?)' if found is not None else ""
