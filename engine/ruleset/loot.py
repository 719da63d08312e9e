"""``items.lootTables``: what a won fight and the GM's ``[loot:]`` drop
(docs/rules/items.md#15-loot, v1.63; ``coins`` rows v1.64)."""

from __future__ import annotations

from typing import Annotated

from pydantic import Field, model_validator

from .base import CountOrDice, Dice, Id, ItemRef, Label, RulesetModel


class ItemFilter(RulesetModel):
    """ITM-MKT-6, ITM-LOOT-8: selects the items that have every named ``rarity``, ``category``
    and ``tag``."""

    rarity: Id | None = None
    category: Id | None = None
    tag: Id | None = None


class LootRow(RulesetModel):
    """ITM-LOOT-7..9: one row, exactly one of ``item``, ``filter`` or ``coins``."""

    item: ItemRef | None = None
    filter: ItemFilter | None = None
    coins: Id | None = None
    """v1.64: one of the ruleset's coins by id."""
    weight: int = Field(default=1, ge=1, le=1_000_000)
    count: CountOrDice = 1

    @model_validator(mode="after")
    def _exactly_one(self) -> LootRow:
        if sum(x is not None for x in (self.item, self.filter, self.coins)) != 1:
            raise ValueError('a loot row names exactly one of "item", "filter" or "coins"')
        return self


class LootTable(RulesetModel):
    """ITM-LOOT-5..6: a table of weighted rows drawn ``rolls`` times (0..20 or dice)."""

    id: Id
    label: Label
    rolls: Annotated[int, Field(ge=0, le=20)] | Dice = 1
    """ITM-LOOT-6: how many draws, 0 to 20 or dice."""
    entries: list[LootRow] = Field(min_length=1, max_length=96)
