"""The whole ruleset file (DESIGN.md "File formats → Ruleset")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Id, Label, RulesetModel
from .items import Catalog, ItemBlock
from .sheet import Condition, Layer, Live, Rest, Sheet


class Resolution(RulesetModel):
    """How checks roll (spec/checks.md); the kind's own keys are read by the check modules."""

    model_config = RulesetModel.model_config | {"extra": "allow"}
    kind: Literal["dice-sum", "dice-pool", "dice-highest", "roll-against", "symbol-pool"]


class Ruleset(RulesetModel):
    id: Id
    label: Label
    capability_api: str = Field(default="1.49", pattern=r"^\d+(\.\d+){0,3}$")
    sheet: Sheet = Field(default_factory=Sheet)
    live: Live = Field(default_factory=Live)
    conditions: list[Condition] = Field(default_factory=list, max_length=96)
    rests: list[Rest] = Field(default_factory=list, max_length=12)
    resolution: Resolution | None = None
    items: ItemBlock | None = None
    catalogs: list[Catalog] = Field(default_factory=list, max_length=64)
    catalog_files: list[str] = Field(default_factory=list, max_length=64)
    layers: list[Layer] = Field(default_factory=list, max_length=24)
    combat: dict[str, Any] | None = None
