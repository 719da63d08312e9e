"""What a resolution kind reads (the named check, the sheet number, modifiers, tag values) and
what it gives back (the dice, the plain result, the numbers the tiers read)."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, TypeVar

from ...ruleset.resolution import DcStep, EntryCheck, Range, RerollRule
from ..sheet import SheetView

CheckKind = Literal["skill", "save", "ability"]
Critical = Literal["success", "failure"] | None



class _Step(Protocol):
    @property
    def label(self) -> str: ...


S = TypeVar("S", bound=_Step)
_INTEGER = re.compile(r"\s*([+-]?)\s*(\d{1,6})\s*")


def whole(text: str | None) -> int | None:
    """A tag's whole number (``"3"``, ``"+2"``, ``"-1"``); anything else is absent (OQ-CHK-16)."""
    if text is None:
        return None
    match = _INTEGER.fullmatch(text)
    if match is None:
        return None
    return int(match.group(2)) * (-1 if match.group(1) == "-" else 1)


def clamp(value: int, low: int, high: int) -> int:
    return min(max(value, low), high)


def pool_dice(request: CheckRead, situational: Range | None, low: int,
              high: int) -> tuple[int, int]:
    """How many dice a pool rolls: the sheet number, modifiers, the ``bonus=`` dice (clamped to
    ``situationalDice``, CHK-TAG-4) and bought dice, clamped to the pool's limits; and the
    bonus dice used (for the record)."""
    bonus = whole(request.attrs.get("bonus"))
    used = 0
    if situational is not None and bonus is not None:
        used = clamp(bonus, situational.min, situational.max)
    size = clamp(int(request.sheet) + request.flat + used + request.bought_dice,
                 low, high)
    return size, used


def ladder_step(steps: list[S], name: str | None) -> S | None:
    """CHK-TAG-9, OQ-CHK-18: the one step named (exact label, else ignoring case); else None."""
    if name is None or not steps:
        return None
    wanted = name.strip()
    for matches in ([s for s in steps if s.label == wanted],
                    [s for s in steps if s.label.casefold() == wanted.casefold()]):
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            return None
    return None


def dc_from(attrs: Mapping[str, str], ladder: list[DcStep]) -> tuple[int | None, DcStep | None]:
    """CHK-SUM-A1 / CHK-TAG-7..9: ``dc=`` wins; else the ``difficulty=`` step's ``dc``."""
    step = ladder_step(ladder, attrs.get("difficulty"))
    dc = whole(attrs.get("dc"))
    if dc is not None:
        return dc, step
    return (step.dc if step is not None else None), step


@dataclass(frozen=True)
class CheckRead:
    """One check, named and read off the roller's sheet (CHK-GEN-A1..A4, ITM-CHK)."""

    who: str
    kind: CheckKind
    ident: str
    label: str
    attrs: Mapping[str, str]
    view: SheetView
    ability: str | None  # the ability used, after with=
    ability_part: float  # abilityModifier of the ability (plus a second one, CHK-TAG-6)
    rank: float  # the tier contribution (CHK-GEN-10)
    own_bonus: float  # the skill's own sheet bonus (docs/design.md#sheet-model)
    with_ability: str | None = None  # recorded when with= replaced or added (CHK-TAG-16)
    flat: int = 0  # ITM-CHK-3: modifiers, their dice rolled (a sum's number, a pool's dice)
    lean: int = 0  # +1 roll twice keep the higher, -1 the lower, 0 once (ITM-CHK-5/6)
    bought_dice: int = 0  # CHK-POOL-A3 D
    bought_successes: int = 0  # CHK-POOL-A17
    bought_reroll: RerollRule | None = None  # CHK-POOL-A11
    entry: EntryCheck | None = None  # CHK-TAL-2..6: a chosen entry used and paid for

    @property
    def sheet(self) -> float:
        """CHK-GEN-A4, OQ-CHK-4: ability part + tier contribution + the skill's own bonus."""
        return self.ability_part + self.rank + self.own_bonus


@dataclass
class Rolled:
    """What a kind's algorithm rolled and read, before the tiers (CHK-OUT) may replace it."""

    rolls: list[int]
    success: bool
    critical: Critical = None
    value: float = 0  # what by: "total" reads
    margin: float = 0  # what by: "margin" reads
    dc: int | None = None
    shift: int = 0  # CHK-OUT-A5: +1 best face of a single die, -1 worst
    fraction: tuple[int, int] | None = None  # roll-against (roll, threshold) for by: "fraction"
    tiers_read_criticals: bool = True  # OQ-CHK-40: symbol pools keep their marks apart
    empty: bool = False  # OQ-CHK-26: a pool that rolled nothing never lands in a success tier
    record: dict[str, Any] = field(default_factory=dict)
    shown: str = ""  # the dice part of the answer's sentence
    notices: list[str] = field(default_factory=list)
