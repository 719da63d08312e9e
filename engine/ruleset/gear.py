"""``items.startingGear``: packages a character may take at the start
(docs/rules/items.md#17-starting-gear, v1.78)."""

from __future__ import annotations

from pydantic import Field, model_validator

from .base import Id, ItemRef, Label, PlainName, RulesetModel
from .values import Threshold


class GearLine(RulesetModel):
    """ITM-GEAR-6..9: exactly one of ``item``, ``coins``, ``oneOf`` (2..48 items) or ``name``."""

    item: ItemRef | None = None
    coins: Id | None = None
    one_of: list[ItemRef] | None = Field(default=None, min_length=2, max_length=48)
    name: PlainName | None = None
    """ITM-GEAR-6/7: a plain item, only where ``freeform`` allows plain items."""
    count: int = Field(default=1, ge=1, le=999)
    equip: bool = False
    """ITM-GEAR-9: equip on taking, where its slots are free."""

    @model_validator(mode="after")
    def _exactly_one(self) -> GearLine:
        given = (self.item, self.coins, self.one_of, self.name)
        if sum(x is not None for x in given) != 1:
            raise ValueError('a gear line names exactly one of "item", "coins", "oneOf" or "name"')
        return self


class GearOption(RulesetModel):
    """ITM-GEAR-10: one option of a choice, made of its own lines."""

    label: Label
    lines: list[GearLine] = Field(min_length=1, max_length=24)


class GearChoice(RulesetModel):
    """ITM-GEAR-10: 2 to 6 options; the player takes one."""

    label: Label
    options: list[GearOption] = Field(min_length=2, max_length=6)


class StartingGear(RulesetModel):
    """ITM-GEAR-1..14: one package (a class's, a background's)."""

    id: Id
    label: Label
    group: Id | None = None
    """ITM-GEAR-11/13: taken once per group; without it the gear is its own group."""
    fits: Threshold | None = None
    """ITM-GEAR-14: reads the sheet without live state; only orders the list."""
    lines: list[GearLine] = Field(default_factory=list, max_length=24)
    choices: list[GearChoice] = Field(default_factory=list, max_length=8)
