"""The attribute readers most actions share: text, counts and who (the standard refusals:
``missing-attribute``, ``bad-count``, ``unknown-character``, each written once here)."""

from __future__ import annotations

from ..rules import reasons
from ..rules.game import Game
from ..rules.state import State
from .declare import Reader, Refusal

MAX_COUNT = 1_000_000  # the most one tag may add or remove at once


def _text(raw: str | None, game: Game, state: State) -> str:
    return (raw or "").strip()


def _raw(raw: str | None, game: Game, state: State) -> str | None:
    return raw


TEXT = Reader("text", _text, {"type": "string"}, absent="", fixed_absent=True)
"""The attribute's text, trimmed ("" when absent)."""

RAW = Reader("text", _raw, {"type": "string"}, fixed_absent=True)
"""The attribute as written, None when absent (for values read further by the handler)."""

JSON = Reader("JSON value", _raw, {}, json=True, fixed_absent=True)
"""A host event's payload value as it is (a number, a list, true), None when absent."""


def count_problem(raw: str) -> str | None:
    """Why ``count="raw"`` is not a whole number from 1 to :data:`MAX_COUNT`, or None."""
    if not raw.isascii() or not raw.isdigit() or len(raw) > 7:
        return f'count="{raw[:40]}" is not a whole number from 1 to {MAX_COUNT}'
    if not 1 <= int(raw) <= MAX_COUNT:
        return f'count="{raw}" is not a whole number from 1 to {MAX_COUNT}'
    return None


def read_count(raw: str | None) -> int | Refusal:
    """``count=``: a whole number from 1 to :data:`MAX_COUNT`, 1 when absent, or why not."""
    if raw is None or not raw.strip():
        return 1
    problem = count_problem(raw.strip())
    if problem is not None:
        return Refusal(reasons.BAD_COUNT, problem + ".")
    return int(raw.strip())


def _count(raw: str | None, game: Game, state: State) -> int | Refusal:
    return read_count(raw)


COUNT = Reader("count", _count, {"type": "string", "pattern": r"^\s*[0-9]{1,7}\s*$"},
               (reasons.BAD_COUNT,), absent=1, fixed_absent=True)
"""``count=``: a whole number from 1 to 1,000,000; 1 when absent."""


def _total(raw: str | None, game: Game, state: State) -> int | Refusal:
    if raw is not None and raw.strip() == "0":
        return 0
    if raw is None or not raw.strip():
        return Refusal(reasons.BAD_COUNT, f'set needs count="<n>" (0 to {MAX_COUNT}).')
    return _count(raw, game, state)


TOTAL = Reader("total", _total, {"type": "string", "pattern": r"^\s*[0-9]{1,7}\s*$"},
               (reasons.BAD_COUNT,))
"""``count=`` of a set: a whole number from 0 to 1,000,000, required."""


def unknown_character(state: State, name: str | None) -> Refusal:
    names = ", ".join(c.name for c in state.characters)
    return Refusal(reasons.UNKNOWN_CHARACTER,
                   f'Nobody called "{(name or state.player)[:80]}" is in the party ({names}).')


def _who(raw: str | None, game: Game, state: State) -> int | Refusal:
    index = state.character_index(raw)
    return unknown_character(state, raw) if index is None else index


def _who_or_party(raw: str | None, game: Game, state: State) -> int | Refusal | None:
    if not (raw or "").strip():
        return None
    return _who(raw, game, state)


WHO = Reader("character", _who, {"type": "string"}, (reasons.UNKNOWN_CHARACTER,))
"""``who=``: a character of the party by name (any case); the player's when absent."""

WHO_OR_PARTY = Reader("character", _who_or_party, {"type": "string"},
                      (reasons.UNKNOWN_CHARACTER,), fixed_absent=True)
"""``who=``: a character of the party by name; None (the whole party) when absent."""
