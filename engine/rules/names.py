"""Names and numbers as people write them: ``who="Bram"`` for the party's only
Bram, Bram the Quiet; ``item="rope"`` for the bag's Rope ladder; ``dc="DC 10"`` for 10.

**Names.** A *word* is a run of letters and digits, compared ignoring case; spaces and
punctuation between words do not count. A written name that is no name exactly (any case)
means a name whose leading words it is, the last of them possibly cut short to no fewer than
:data:`SHORTEST_CUT` letters (a number is never cut): "Bram", "bram the" and "Bram the Qui"
all mean Bram the Quiet; "Bram the Q", "Br" and "Quiet" do not. An exact name wins over
everything, whole words win over a cut word ("Bram" is Bram the Quiet, not Bramble), and a
name that fits two names equally means neither: it names the candidates instead.

**Numbers.** A value that holds exactly one whole number, wherever its label sits, is that
number: "DC 10", "10 (hard)", "x2", "difficulty: 12", "3 torches". A value with none, with
several ("2 or 3", "1.5") or with dice in it ("d20", "2d6") is no number.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from .state import State

SHORTEST_CUT = 3  # a cut word keeps at least this many letters: "Bra" is Bram, "Br" is not
_WORD = re.compile(r"\w+")
_DIGITS = re.compile(r"[0-9]+")


@dataclass(frozen=True, slots=True)
class Meant:
    """What a written name means among some names: ``found``, the position of the one it
    means (None: none or several), whether it is that name ``exact``ly, and the
    ``candidates`` (positions) when it fits several equally."""

    found: int | None = None
    exact: bool = False
    candidates: tuple[int, ...] = ()


NOBODY = Meant()


def words(name: str) -> list[str]:
    """A name's words, case folded: "Bram the Quiet" -> ["bram", "the", "quiet"]."""
    return _WORD.findall(name.casefold())


def _distinct(names: Sequence[str], positions: list[int]) -> list[int]:
    """``positions`` without a name already met (any case), first kept."""
    seen: set[str] = set()
    kept = []
    for position in positions:
        folded = names[position].casefold()
        if folded not in seen:
            seen.add(folded)
            kept.append(position)
    return kept


def meant_name(written: str | None, names: Sequence[str]) -> Meant:
    """Which of ``names`` a written name means (see the module's rules): exact first, then
    leading whole words, then a cut last word; several at one step mean none."""
    wanted = (written or "").strip().casefold()
    if not wanted:
        return NOBODY
    for position, name in enumerate(names):
        if name.casefold() == wanted:
            return Meant(position, exact=True)
    said = words(wanted)
    if not said:
        return NOBODY
    last = said[-1]
    may_cut = len(last) >= SHORTEST_CUT and not last.isdigit()
    whole: list[int] = []
    cut: list[int] = []
    for position, name in enumerate(names):
        theirs = words(name)
        if len(theirs) < len(said) or theirs[:len(said) - 1] != said[:-1]:
            continue
        word = theirs[len(said) - 1]
        if word == last:
            whole.append(position)
        elif may_cut and word.startswith(last):
            cut.append(position)
    for fitting in (whole, cut):
        distinct = _distinct(names, fitting)
        if len(distinct) == 1:
            return Meant(distinct[0])
        if distinct:
            return Meant(candidates=tuple(distinct))
    return NOBODY


def party_names(state: State) -> list[str]:
    """The names of the party's characters, in party order (a ``who=`` names one)."""
    return [character.name for character in state.characters]


def fighter_names(state: State) -> list[str]:
    """The names a fight's ``who=`` or ``target=`` may name: the party's, then the fight's
    combatants not of the party (each name once, any case)."""
    names = party_names(state)
    if state.encounter is not None:
        known = {name.casefold() for name in names}
        names += [c.name for c in state.encounter.combatants if c.name.casefold() not in known]
    return names


def meant_fighter(state: State, written: str) -> str:
    """The name a fight's ``who=`` or ``target=`` means: the party member's or combatant's
    whose name it is or uniquely begins (:func:`meant_name`), else ``written`` as it is (the
    action refuses a name it cannot find)."""
    names = fighter_names(state)
    meant = meant_name(written, names)
    return names[meant.found] if meant.found is not None and not meant.exact else written


def either(names: Sequence[str]) -> str:
    """Candidates as a sentence names them: "A or B", "A, B or C"."""
    if len(names) <= 1:
        return "".join(names)
    return ", ".join(names[:-1]) + " or " + names[-1]


def _is_die(text: str, start: int) -> bool:
    """Whether the digits at ``start`` follow a die's ``d`` ("d20", "2d6")."""
    if start == 0 or text[start - 1] not in "dD":
        return False
    return start == 1 or not text[start - 2].isalpha()


def number_in(text: str) -> str | None:
    """The one whole number a person sees in ``text``, with its sign when one stands right
    before it ("DC 10" -> "10", "bonus -2" -> "-2", "x2" -> "2"); None when there is none,
    several, or a die. The digits are given as written (any length): the caller holds them
    to its limits before reading them as a number."""
    found: re.Match[str] | None = None
    for match in _DIGITS.finditer(text):
        if found is not None or _is_die(text, match.start()):
            return None
        found = match
    if found is None:
        return None
    start = found.start()
    signed = (start > 0 and text[start - 1] in "+-"
              and (start == 1 or not text[start - 2].isalnum()))
    return (text[start - 1] if signed else "") + found.group()
