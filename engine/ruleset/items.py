"""The ``items`` block (docs/rules/items.md#3-the-item-block) and the ``item`` object of a catalog
entry (docs/rules/items.md#4-an-item-catalog-entry)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, NonNegativeInt

from .base import CountOrDice, Id, ItemRef, Label, Labelled, RulesetModel, Text
from .combat import Attack, Charges, Toggle, Use
from .effects import Effects, Requirement
from .fakes import RevealWay, Tell
from .gear import StartingGear
from .loot import LootTable
from .market import Market
from .values import ValueRef

StatValue = bool | int | float | str


class Stat(Labelled):
    """ITM-BLOCK-8: an item stat, declared like a list column."""

    type: Literal["number", "text", "boolean", "enum", "dice"]
    min: float | None = None
    max: float | None = None
    values: list[Label] | None = Field(default=None, min_length=1, max_length=48)
    """The words of an ``enum`` stat."""
    default: StatValue | None = None
    """OQ-3: the value of an item that leaves the stat unset."""
    integer: bool = True
    """ITM-BLOCK-9: a number stat takes whole numbers unless ``false``."""
    prompt_visible: bool = True
    """ITM-BLOCK-10/11: ``false`` keeps the value from the GM."""
    example: str | None = Field(default=None, max_length=120)


class Slot(Labelled):
    """ITM-BLOCK-12: where an item is worn, and how many of it a character has."""

    count: int = Field(ge=1, le=20)


class Binding(RulesetModel):
    """ITM-BLOCK-13..15: attunement or anything that limits bound items."""

    label: Label
    max: ValueRef
    """ITM-BLOCK-15: read from the sheet, never live state."""


class Carry(RulesetModel):
    """ITM-BLOCK-16..20: which stat is weight, and how much a character carries."""

    stat: Id
    encumbered_above: ValueRef
    limit: ValueRef | None = None
    unit: str | None = Field(default=None, min_length=1, max_length=12)
    """ITM-BLOCK-20 (v1.791): the unit a weight is counted in, e.g. "lb"."""


class Coin(Labelled):
    """ITM-CUR-2..7: one coin of a family, valued in the family's smallest coin."""

    value: int = Field(ge=1, le=1_000_000_000)
    one: Label | None = None
    """ITM-CUR-7 (v1.89): the name for exactly one."""


class Currency(Labelled):
    """ITM-CUR-1: a family of coins that convert into each other by value."""

    per_weight: int | None = Field(default=None, ge=1, le=1_000_000)
    """ITM-CUR-8: how many coins weigh one unit of the carry stat (needs ``carry``)."""
    units: list[Coin] = Field(min_length=1, max_length=10)


class RarityCap(RulesetModel):
    """ITM-CAPS-1..6 (v1.51): caps on what a GM-invented item of a rarity may give."""

    rarity: Id
    stats: dict[Id, float] = Field(default_factory=dict, max_length=24)
    """ITM-CAPS-2: number stat id → the largest value."""
    bonus: int | None = Field(default=None, ge=0, le=100)
    """ITM-CAPS-3 (v1.53): the largest fixed bonus of a worn/carried modifier."""


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
    propose: bool = True
    """ITM-BLOCK-21 (v1.51): ``false`` forbids the GM to invent items."""
    native: bool = True
    """ITM-BLOCK-22: ``false`` turns off plain (untyped) items."""
    freeform: Literal["plain", "refuse"] = "plain"
    """ITM-BLOCK-23: what becomes of an item the player types."""
    loot_tables: list[LootTable] = Field(default_factory=list, max_length=24)  # ITM-BLOCK-24
    starting_gear: list[StartingGear] = Field(default_factory=list, max_length=96)
    market: Market | None = None
    names_it_at: int | None = Field(default=None, ge=0, le=100)
    """ITM-INSP-5 (v1.802): a tell won by this much also names the fake."""
    passive_base: int = Field(default=10, ge=0, le=100)
    """ITM-NOTICE-1 (v1.802): the base of a check made without dice."""
    warn_by: Literal["roll"] | None = None
    """ITM-NOTICE-7 (v1.802): ``roll`` rolls the noticing checks instead of evaluating them."""
    reveals_fakes: list[RevealWay] = Field(default_factory=list, max_length=24)
    """ITM-SEE-1 (v1.802): ways to see through fakes."""


class Cost(RulesetModel):
    """ITM-ENTRY-11: a whole amount of one coin, named by its id."""

    amount: NonNegativeInt
    unit: Id


class Sold(RulesetModel):
    """ITM-ENTRY-13/14: the smallest place size that sells the item (v1.65) and/or how many a
    place has on one day (v1.69)."""

    place: Id | None = None
    limited: CountOrDice | None = None


class Binds(RulesetModel):
    """ITM-ENTRY-15..17 (OQ-6): the item must be bound to work while worn."""

    restriction: Text | None = None
    """Who may bind it, in words (shown, not enforced)."""
    cursed: bool = False
    """ITM-BIND-3: does not let go once bound."""


class Item(RulesetModel):
    """The ``item`` object of a catalog entry (ITM-ENTRY-3..22)."""

    category: Id
    rarity: Id | None = None
    tags: list[Id] = Field(default_factory=list, max_length=48)
    stats: dict[Id, StatValue] = Field(default_factory=dict, max_length=24)
    slots: dict[Id, int] = Field(default_factory=dict, max_length=12)
    stack: int | None = Field(default=None, ge=1, le=999_999)  # ITM-ENTRY-8
    cost: Cost | None = None
    sold: Sold | None = None
    service: bool = False
    """ITM-SVC-1 (v1.65): bought like an item, never carried."""
    binds: Binds | None = None
    worn: Effects | None = None
    """ITM-ENTRY-19 (v1.53): what it does while worn."""
    carried: Effects | None = None
    """ITM-ENTRY-19 (v1.53): what it does while only carried."""
    requires: list[Requirement] | None = Field(default=None, max_length=4)
    """ITM-ENTRY-20, ITM-REQ-1 (v1.54)."""
    attack: Attack | None = None
    toggle: Toggle | None = None
    use: Use | None = None
    charges: Charges | None = None
    risky: Text | None = None
    """ITM-RISK-1 (v1.79): what an honest seller warns of."""
    passes_for: ItemRef | None = None
    """ITM-FAKE-2 (v1.79): this item is a fake of that one."""
    tells: list[Tell] | None = Field(default=None, max_length=6)
    """ITM-TELL-2 (v1.802): checks that give the fake away."""
    fools_reveal: list[Id] | None = Field(default=None, max_length=24)
    """ITM-SEE-6 (v1.802): ways of ``revealsFakes`` this fake fools."""


class Entry(RulesetModel):
    """One entry of a catalog; item catalogs carry an ``item`` (ITM-CAT-2)."""

    id: Id
    label: Label
    summary: Text | None = None
    filters: dict[Id, Any] | None = None
    item: Item | None = None
    rows: list[Any] | None = None
    creature: dict[str, Any] | None = None
    mechanics: Any = None


class Catalog(Labelled):
    """A named list of entries; ``"holds": "items"`` makes an item catalog (ITM-CAT-1)."""

    holds: str = "items"
    feeds: Any = None
    entries: list[Entry] = Field(default_factory=list, max_length=20_000)

