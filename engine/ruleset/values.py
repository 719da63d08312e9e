"""Value references: how a ruleset reads a number off a character's sheet
(docs/design.md#sheet-model; docs/rules/items.md#6-items-on-the-sheet-itemstat for ``itemStat``)."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BeforeValidator, Field, WithJsonSchema, model_validator

from .base import Id, Label, RulesetModel

# Reference kinds of docs/design.md#sheet-model; exactly one is given.
REFERENCE_KINDS = ("const", "ability_score", "ability_mod", "field", "derived", "pool", "item_stat")
# Kinds that read live state (they change with every hit), which ITM-BLOCK-15 and ITM-ISTAT-12
# forbid in binding.max, carry numbers and pool maxima.
LIVE_KINDS = frozenset({"pool", "item_stat"})


class ItemStatRef(RulesetModel):
    """ITM-ISTAT-1..10: read one stat off the items a character owns (``{"itemStat": {...}}``)."""

    stat: Id | None = None
    """ITM-ISTAT-7/8: an item stat of the block; ``sum``/``max``/``min`` need a number stat."""
    from_: Literal["worn", "carried", "all"] = Field(default="all", alias="from")
    """ITM-ISTAT-2: the items on the character, the rest of what it owns, or both."""
    pick: Literal["sum", "max", "min", "count"] = "sum"
    """ITM-ISTAT-4..6: add value × count, the highest or lowest value, or count the items."""
    slot: Id | None = None
    """ITM-ISTAT-9: keep only items that take this slot."""
    category: Id | None = None
    """ITM-ISTAT-9: keep only items of this category."""
    tag: Id | None = None
    """ITM-ISTAT-9: keep only items with this tag."""
    default: float = 0
    """ITM-ISTAT-10: the value read when no selected item gives the stat."""

    @model_validator(mode="after")
    def _stat_unless_count(self) -> ItemStatRef:
        if self.stat is None and self.pick != "count":  # ITM-ISTAT-8
            raise ValueError(f'pick "{self.pick}" reads a stat: name one with "stat"')
        return self


def _item_stat(value: Any) -> dict[str, Any]:
    """Validate an ``itemStat`` as :class:`ItemStatRef`, keep it as the author's mapping (the
    sheet reader looks keys up by their wire names)."""
    return ItemStatRef.model_validate(value).model_dump(by_alias=True, exclude_none=True)


ItemStatSpec = Annotated[dict[str, Any], BeforeValidator(_item_stat),
                         WithJsonSchema(ItemStatRef.model_json_schema(by_alias=True))]


class ValueRef(RulesetModel):
    """One number read from the sheet: ``{"const": 3}``, ``{"abilityMod": "wits"}``, ..."""

    const: float | None = None
    ability_score: Id | None = None
    ability_mod: Id | None = None
    field: Id | None = None
    derived: Id | None = None
    pool: Id | None = None
    """A live pool's current value (live state)."""
    item_stat: ItemStatSpec | None = None
    """ITM-ISTAT-1 (v1.52): a value read off the character's items (live state)."""

    @model_validator(mode="after")
    def _exactly_one(self) -> ValueRef:
        given = [kind for kind in REFERENCE_KINDS if getattr(self, kind) is not None]
        if len(given) != 1:
            raise ValueError(
                "a value reference names exactly one of const, abilityScore, abilityMod, "
                f"field, derived, pool, itemStat (found {len(given)})"
            )
        return self

    @property
    def kind(self) -> str:
        return next(kind for kind in REFERENCE_KINDS if getattr(self, kind) is not None)

    @property
    def item_stat_ref(self) -> ItemStatRef | None:
        """The typed ``itemStat`` reference, if this reads items."""
        return None if self.item_stat is None else ItemStatRef.model_validate(self.item_stat)


class Threshold(RulesetModel):
    """A sheet value that must reach ``atLeast`` (ITM-GEAR-14 ``fits``, ITM-MKT-12 ``only``,
    ITM-GATE-5 ``unless``, ITM-TELL-4/6 rows, OQ-58)."""

    value: ValueRef
    at_least: float
    label: Label | None = None
    """What the GM is told (ITM-MKT-12, e.g. "wardens of Nerve 3 or more")."""
