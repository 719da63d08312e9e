"""The attribute readers most actions share: text, counts, numbers, who and the items of a
bag (the standard refusals: ``missing-attribute``, ``bad-count``, ``unknown-character``, each
written once here).

Names and numbers are read as people write them (:mod:`engine.rules.names`): a
``who=`` that is the first word or the leading words of one party member's name is that
member, an ``item=`` that is so of one stack of the bag is that stack, and ``count="3
torches"`` is 3 — each noted on the answer (``read who="Bram" as Bram the Quiet``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ..rules import reasons
from ..rules.bags import MAX_LISTED, meant_stack, named_things
from ..rules.game import Game
from ..rules.names import either, fighter_names, meant_name, number_in, party_names
from ..rules.state import State
from .declare import Read, Reader, Reading, Refusal

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


def read_count(raw: str | None) -> Reading[int]:
    """``count=``: a whole number from 1 to :data:`MAX_COUNT`, 1 when absent, or why not; the
    one number in a labelled count (``"3 torches"``, ``"x2"``) is read as that number."""
    if raw is None or not raw.strip():
        return 1
    text = raw.strip()
    problem = count_problem(text)
    if problem is None:
        return int(text)
    number = number_in(text)
    if number is None or count_problem(number.removeprefix("+")) is not None:
        return Refusal(reasons.BAD_COUNT, problem + ".")
    return Read(int(number), str(int(number)))


def _count(raw: str | None, game: Game, state: State) -> Reading[int]:
    return read_count(raw)


COUNT = Reader("count", _count, {"type": "string", "pattern": r"^\s*[0-9]{1,7}\s*$"},
               (reasons.BAD_COUNT,), absent=1, fixed_absent=True)
"""``count=``: a whole number from 1 to 1,000,000; 1 when absent."""


def _total(raw: str | None, game: Game, state: State) -> Reading[int]:
    if raw is not None and raw.strip() == "0":
        return 0
    if raw is None or not raw.strip():
        return Refusal(reasons.BAD_COUNT, f'set needs count="<n>" (0 to {MAX_COUNT}).')
    number = number_in(raw)
    if number is not None and not number.lstrip("+-").strip("0"):
        return Read(0, "0")  # "0 torches"
    return _count(raw, game, state)


TOTAL = Reader("total", _total, {"type": "string", "pattern": r"^\s*[0-9]{1,7}\s*$"},
               (reasons.BAD_COUNT,))
"""``count=`` of a set: a whole number from 0 to 1,000,000, required."""

_PLAIN_NUMBER = re.compile(r"\s*[+-]?\s*[0-9]+\s*")
MAX_DIGITS = 6  # the longest number a numeral reads out of a labelled value (checks: OQ-CHK-16)


def _numeral(raw: str | None, game: Game, state: State) -> Reading[str | None]:
    if raw is None or _PLAIN_NUMBER.fullmatch(raw):
        return raw
    number = number_in(raw)
    if number is None or len(number.lstrip("+-")) > MAX_DIGITS:
        return raw  # no number: the action ignores or refuses it as it always did
    return Read(number, number)


NUMERAL = Reader("number", _numeral, {"type": "string"}, fixed_absent=True)
"""A number the action reads further (a dc, a bonus, a tier), as written; the one whole number
in a labelled value (``dc="DC 10"``, ``dc="10 (hard)"``, ``tier="tier 2"``) is read as it."""


def unknown_character(state: State, name: str | None) -> Refusal:
    names = ", ".join(c.name for c in state.characters)
    return Refusal(reasons.UNKNOWN_CHARACTER,
                   f'Nobody called "{(name or state.player)[:80]}" is in the party ({names}).')


def several(written: str, names: list[str]) -> str:
    """The sentence of a name that fits several: which, and what to write instead."""
    return (f'"{written.strip()[:60]}" could be {either(names)}: write the whole name; '
            "nothing was done.")


def read_character(state: State, raw: str | None) -> Reading[int]:
    """OQ-CHK-5, the party member a name names — by name (any case; the player's
    without one), else the one whose first word or leading words it is
    (:func:`engine.rules.names.meant_name`), read so; a name that fits several members, or
    none, is refused ``unknown-character``."""
    index = state.character_index(raw)
    if index is not None:
        return index
    names = party_names(state)
    meant = meant_name(raw, names)
    if meant.found is not None:
        return Read(meant.found, names[meant.found])
    if meant.candidates:
        return Refusal(reasons.UNKNOWN_CHARACTER,
                       several(raw or "", [names[i] for i in meant.candidates]))
    return unknown_character(state, raw)


def _who(raw: str | None, game: Game, state: State) -> Reading[int]:
    return read_character(state, raw)


def _who_or_party(raw: str | None, game: Game, state: State) -> Reading[int | None]:
    if not (raw or "").strip():
        return None
    return read_character(state, raw)


WHO = Reader("character", _who, {"type": "string"}, (reasons.UNKNOWN_CHARACTER,))
"""``who=``: a character of the party by name (any case) or by its first words; the
player's when absent."""

WHO_OR_PARTY = Reader("character", _who_or_party, {"type": "string"},
                      (reasons.UNKNOWN_CHARACTER,), fixed_absent=True)
"""``who=``: a character of the party by name or first words; None (the whole party) when
absent."""


def _fighter(raw: str | None, game: Game, state: State) -> Reading[str]:
    written = (raw or "").strip()
    names = fighter_names(state)
    meant = meant_name(written, names)
    if meant.found is not None and not meant.exact:
        return Read(names[meant.found], names[meant.found])
    if meant.candidates:
        return Refusal(reasons.UNKNOWN_COMBATANT,
                       several(written, [names[i] for i in meant.candidates]))
    return written


def _fighters(raw: str | None, game: Game, state: State) -> Reading[str]:
    written = (raw or "").strip()
    if "," not in written:
        return _fighter(written, game, state)
    parts = [part.strip() for part in written.split(",") if part.strip()]
    if len(parts) > MAX_LISTED:
        return written  # the action refuses that many as it always did
    read = []
    for part in parts:
        one = _fighter(part, game, state)
        if isinstance(one, Refusal):
            return one
        read.append(one.value if isinstance(one, Read) else one)
    if read == parts:
        return written
    joined = ", ".join(read)
    return Read(joined, joined)


FIGHTER = Reader("combatant", _fighter, {"type": "string"}, (reasons.UNKNOWN_COMBATANT,),
                 absent="", fixed_absent=True)
"""A fight's ``who=``: a party member or a combatant by name (any case) or by its first
words, as written when it is neither ("" when absent; the action says who that is)."""

FIGHTERS = Reader("combatants", _fighters, {"type": "string"}, (reasons.UNKNOWN_COMBATANT,),
                  absent="", fixed_absent=True)
"""A fight's ``target=``: :data:`FIGHTER` names, comma-separated."""


def read_held(value: str, values: Mapping[str, Any], game: Game, state: State) -> Reading[str]:
    """An item name read in the bag of the request's ``who`` — each name of a comma list — as
    :func:`engine.rules.bags.meant_stack` reads it: the stack whose first words it is, read so; one
    that fits several stacks is refused ``not-held``, naming them."""
    who = values.get("who")
    if isinstance(who, str):  # an attack's who=: a hero's name, or a foe's
        who = state.character_index(who) if who else None
    if not value.strip() or not isinstance(who, int):
        return value
    character = state.characters[who]
    names = [name.strip() for name in named_things(game, state, value, (character,))]
    if len(names) > MAX_LISTED:
        return value  # refused by the action, before any name is looked up
    read = []
    for name in names:
        meant = meant_stack(game, state, character.bag, name)
        if isinstance(meant, list):
            return Refusal(reasons.NOT_HELD, f"{character.name}'s " + several(name, meant))
        read.append(meant)
    if read == names:
        return value
    joined = ", ".join(read)
    return Read(joined, joined)


def _wielded(value: str | None, values: Mapping[str, Any], game: Game,
             state: State) -> Reading[str | None]:
    return value if value is None else read_held(value, values, game, state)


HELD = Reader("item held", _text, {"type": "string"}, (reasons.NOT_HELD,), absent="",
              fixed_absent=True, settle=read_held)
"""``item=`` of an item in ``who=``'s bag: by name (any case), or by the first words of one
stack's name; a comma list names each."""

WIELDED = Reader("item held", _raw, {"type": "string"}, (reasons.NOT_HELD,), fixed_absent=True,
                 settle=_wielded)
"""``with=`` of a weapon in the attacker's bag, as :data:`HELD` reads it; None when absent."""
