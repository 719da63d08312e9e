"""The character sheet a ruleset declares: abilities, skills, saves, fields, derived values, live
pools and tracks, conditions, rests and layers (docs/design.md#ruleset-file,
docs/design.md#sheet-model)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Id, ItemRef, Label, Labelled, RulesetModel
from .effects import Modifier
from .loot import ItemFilter
from .values import ValueRef


class Ability(Labelled):
    """An ability score with its range and the score a new character starts with."""

    min: int = Field(default=0, ge=-1000, le=1000)
    max: int = Field(default=30, ge=-1000, le=1000)
    default: int = Field(default=0, ge=-1000, le=1000)


class Skill(Labelled):
    """A skill or a save; CoC-style skills name no ability (docs/design.md#sheet-model,
    OQ-CHK-4/5/6/30)."""

    ability: Id | None = None
    bonus_range: tuple[int, int] | None = None
    """The range of a per-character bonus (e.g. ``[0, 100]``)."""


class SheetField(Labelled):
    """A plain value on the sheet (a class level, a name)."""

    type: Literal["number", "text", "boolean"] = "number"
    default: float | str | bool | None = None


class Derived(Labelled):
    """A number computed from value references; derived values never read each other in a
    cycle."""

    op: Literal["sum", "max", "min", "product", "floorDiv"] = "sum"
    of: list[ValueRef] = Field(min_length=1, max_length=24)


class Sheet(RulesetModel):
    """What every character of the ruleset has on its sheet."""

    abilities: list[Ability] = Field(default_factory=list, max_length=24)
    skills: list[Skill] = Field(default_factory=list, max_length=96)
    saves: list[Skill] = Field(default_factory=list, max_length=24)
    fields: list[SheetField] = Field(default_factory=list, max_length=48)
    derived: list[Derived] = Field(default_factory=list, max_length=48)


class Pool(Labelled):
    """A running resource with a current value and a ``max`` (no ``itemStat``, ITM-ISTAT-12)."""

    health: bool = False
    """The health pool (at most one)."""
    max: ValueRef


MAX_TRACK = 1000  # a track's max is read from the sheet and held to 0..1000 (marks or points)


class WoundPenalty(RulesetModel):
    """From ``atLeast`` marks on, what a wound track does to its bearer's checks and saves
    (ITM-OUT-11 "the user's wound penalty"; CHK-HIGH-3, CHK-POOL-A3 *W*, CHK-SYM-16): the ITM-WORN-4
    modifiers, so every resolution kind applies them as it applies a condition's (a flat number on a
    sum, dice on a pool, the threshold of a roll-against)."""

    at_least: int = Field(ge=1, le=MAX_TRACK)
    """The marks from which this penalty holds; the highest row met is the one that applies."""
    modifiers: list[Modifier] = Field(min_length=1, max_length=24)
    """What the wounds do: ``{"to": "checks" | "saves", "flat": -1, ...}`` (ITM-WORN-4)."""


class Track(Labelled):
    """A sheet bar (docs/rules/items.md#1-glossary "track"): a plain ``health`` track of points, or
    a ``wounds`` track of marks taken. Its ``max`` reads the sheet alone, never ``itemStat``
    (ITM-ISTAT-12, ITM-ABIL-6)."""

    kind: Literal["health", "wounds"]
    """``health``: points, full at ``max``, a heal adds its amount; ``wounds``: marks taken,
    none at first, a heal removes one mark (ITM-OUT-3)."""
    max: ValueRef
    """How many points or marks the track holds (floored, held to 0..1000)."""
    penalties: list[WoundPenalty] = Field(default_factory=list, max_length=24)
    """A wound track's penalty by marks taken, rows in rising ``atLeast`` order."""


class Live(RulesetModel):
    """The live parts of a sheet."""

    pools: list[Pool] = Field(default_factory=list, max_length=24)
    tracks: list[Track] = Field(default_factory=list, max_length=8)
    """Health and wound tracks; at most one health pool or health track in all."""


class Condition(Labelled):
    """A condition a character can have, and what it does to checks (ITM-WORN-4)."""

    modifiers: list[Modifier] = Field(default_factory=list, max_length=24)


class Rest(Labelled):
    """A rest a character can take (what it brings back: ITM-RCHG-1)."""


class LayerItems(RulesetModel):
    """ITM-MKT-18 (v1.813): the item filters a layer adds."""

    unsold: list[ItemFilter] = Field(default_factory=list, max_length=24)


class Layer(RulesetModel):
    """An overlay that hides entries, takes coins out (v1.64) and adds ``unsold`` filters."""

    id: Id
    label: Label | None = None
    hides: list[ItemRef] = Field(default_factory=list, max_length=1000)
    coins: list[Id] = Field(default_factory=list, max_length=60)
    items: LayerItems | None = None
