"""Value references: how a ruleset reads a number off a character's sheet."""

from __future__ import annotations

from typing import Any

from pydantic import model_validator

from .base import Id, RulesetModel

# Reference kinds of DESIGN.md "Sheet model"; exactly one is given.
REFERENCE_KINDS = ("const", "ability_score", "ability_mod", "field", "derived", "pool", "item_stat")
# Kinds that read live state (they change with every hit), which ITM-BLOCK-15 forbids in
# binding.max and carry limits.
LIVE_KINDS = frozenset({"pool", "item_stat"})


class ValueRef(RulesetModel):
    """One number read from the sheet: ``{"const": 3}``, ``{"abilityMod": "wits"}``, ..."""

    const: float | None = None
    ability_score: Id | None = None
    ability_mod: Id | None = None
    field: Id | None = None
    derived: Id | None = None
    pool: Id | None = None
    item_stat: dict[str, Any] | None = None

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
