"""``items.market``: what a place sells and at what price, market days, sellers
(docs/rules/items.md#18-markets; fakes: docs/rules/items.md#19-honest-and-dishonest-sellers-fakes;
v1.65, market day v1.69, ``honest`` v1.79, ``manner`` v1.802, ``unsold`` v1.813)."""

from __future__ import annotations

from pydantic import Field

from .base import CountOrDice, Id, Label, RulesetModel
from .fakes import Tell
from .loot import ItemFilter
from .values import Threshold


class PriceLevel(RulesetModel):
    """ITM-MKT-2: a price level, ``times`` the item's cost; exactly one is the ``default``."""

    id: Id
    label: Label
    times: float = Field(gt=0, le=1000)
    default: bool = False


class Purse(RulesetModel):
    """ITM-DAY-16: ``{amount, unit}`` — the most a place's sellers pay out in one day."""

    amount: int = Field(ge=0, le=1_000_000_000)
    unit: Id


class Place(RulesetModel):
    """ITM-MKT-3: a place size, smallest first, in the author's words."""

    id: Id
    label: Label
    purse: Purse | None = None
    """ITM-DAY-16 (v1.69)."""


class SoldRule(RulesetModel):
    """ITM-MKT-5..7, ITM-DAY-6..8: the smallest ``place`` that sells what ``filter`` selects,
    and/or how many a place has on one day (``limited``, v1.69)."""

    filter: ItemFilter
    place: Id | None = None
    limited: CountOrDice | None = None


class Stock(RulesetModel):
    """ITM-DAY-10: a loot table rolled once a day for the seller's odd lots."""

    table: Id


class Seller(RulesetModel):
    """ITM-MKT-10..14: a kind of seller; ``honest: false`` (ITM-FAKE-6) and ``manner``
    (ITM-TELL-7) for dishonest ones."""

    id: Id
    label: Label
    sells: list[ItemFilter] = Field(min_length=1, max_length=24)
    place: Id | None = None
    only: Threshold | None = None
    stock: Stock | None = None
    honest: bool = True
    manner: Tell | None = None


class Market(RulesetModel):
    """ITM-MKT-1: the market block."""

    prices: list[PriceLevel] = Field(min_length=1, max_length=8)
    places: list[Place] = Field(min_length=1, max_length=12)
    sold: list[SoldRule] = Field(default_factory=list, max_length=96)
    sellers: list[Seller] = Field(default_factory=list, max_length=24)
    unsold: list[ItemFilter] = Field(default_factory=list, max_length=24)
    """ITM-MKT-15 (v1.813): what no seller carries in its range."""
    buy_back: float | None = Field(default=None, gt=0, le=1)
    """ITM-DAY-13 (v1.69): fraction of the default-level price a seller pays."""
