"""The ``items`` block (spec/items.md §3) and the ``item`` object of a catalog entry (§4)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, NonNegativeInt

from .base import Id, Label, Labelled, RulesetModel, Text
from .values import ValueRef

StatValue = bool | int | float | str


class Stat(Labelled):
    """ITM-BLOCK-8: an item stat, declared like a list column."""

    type: Literal["number", "text", "boolean", "enum", "dice"]
    min: float | None = None
    max: float | None = None
    values: list[Label] | None = Field(default=None, max_length=48)
    default: StatValue | None = None
    integer: bool = True  # ITM-BLOCK-9
    prompt_visible: bool = True  # ITM-BLOCK-10
    example: str | None = None


class Slot(Labelled):
    """ITM-BLOCK-12: where an item is worn, and how many of it a character has."""

    count: int = Field(ge=1, le=20)


class Binding(RulesetModel):
    """ITM-BLOCK-13..15: attunement or anything that limits bound items."""

    label: Label
    max: ValueRef


class Carry(RulesetModel):
    """ITM-BLOCK-16..20: which stat is weight, and how much a character carries."""

    stat: Id
    encumbered_above: ValueRef
    limit: ValueRef | None = None
    unit: str | None = Field(default=None, max_length=12)


class Coin(Labelled):
    """ITM-CUR-2..7: one coin of a family, valued in the family's smallest coin."""

    value: int = Field(ge=1, le=1_000_000_000)
    one: Label | None = None


class Currency(Labelled):
    """ITM-CUR-1: a family of coins that convert into each other by value."""

    per_weight: int | None = Field(default=None, ge=1)
    units: list[Coin] = Field(min_length=1, max_length=10)


class RarityCap(RulesetModel):
    rarity: Id
    stats: dict[Id, float] = Field(default_factory=dict)
    bonus: int | None = None


class ItemBlock(RulesetModel):
    """The optional top-level ``items`` object (ITM-BLOCK-1)."""

    categories: list[Labelled] = Field(min_length=1, max_length=24)  # ITM-BLOCK-2
    rarities: list[Labelled] = Field(default_factory=list, max_length=12)  # ITM-BLOCK-4
    tags: list[Labelled] = Field(default_factory=list, max_length=48)  # ITM-BLOCK-6
    stats: list[Stat] = Field(default_factory=list, max_length=24)  # ITM-BLOCK-7
    slots: list[Slot] = Field(default_factory=list, max_length=12)  # ITM-BLOCK-12
    binding: Binding | None = None
    carry: Carry | None = None
    currencies: list[Currency] = Field(default_factory=list, max_length=6)  # ITM-CUR-1
    rarity_caps: list[RarityCap] = Field(default_factory=list, max_length=12)
    propose: bool = True  # ITM-BLOCK-21
    native: bool = True  # ITM-BLOCK-22
    freeform: Literal["plain", "refuse"] = "plain"  # ITM-BLOCK-23
    # Blocks whose rules later capabilities implement; kept as the author wrote them.
    loot_tables: list[dict[str, Any]] = Field(default_factory=list, max_length=24)
    starting_gear: list[dict[str, Any]] = Field(default_factory=list, max_length=96)
    market: dict[str, Any] | None = None
    names_it_at: Any = None
    passive_base: Any = None
    warn_by: Any = None
    reveals_fakes: Any = None


class Cost(RulesetModel):
    """ITM-ENTRY-11: a whole amount of one coin, named by its id."""

    amount: NonNegativeInt
    unit: Id


class Item(RulesetModel):
    """The ``item`` object of a catalog entry (ITM-ENTRY-3..22)."""

    category: Id
    rarity: Id | None = None
    tags: list[Id] = Field(default_factory=list, max_length=48)
    stats: dict[Id, StatValue] = Field(default_factory=dict)
    slots: dict[Id, int] = Field(default_factory=dict)
    stack: int | None = Field(default=None, ge=1, le=999_999)  # ITM-ENTRY-8
    cost: Cost | None = None
    service: bool = False
    # Keys whose rules later capabilities implement; kept as the author wrote them.
    sold: dict[str, Any] | None = None
    binds: dict[str, Any] | None = None
    worn: dict[str, Any] | None = None
    carried: dict[str, Any] | None = None
    requires: Any = None
    attack: dict[str, Any] | None = None
    toggle: dict[str, Any] | None = None
    use: dict[str, Any] | None = None
    charges: dict[str, Any] | None = None
    risky: Text | None = None
    passes_for: str | None = None
    tells: list[dict[str, Any]] | None = None
    fools_reveal: Any = None


class Entry(RulesetModel):
    """One entry of a catalog; item catalogs carry an ``item`` (ITM-CAT-2)."""

    id: Id
    label: Label
    summary: Text | None = None
    filters: dict[str, Any] | None = None
    item: Item | None = None
    rows: list[Any] | None = None
    creature: dict[str, Any] | None = None
    mechanics: Any = None


class Catalog(Labelled):
    holds: str = "items"
    feeds: Any = None
    entries: list[Entry] = Field(default_factory=list, max_length=20_000)
