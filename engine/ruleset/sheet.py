"""The character sheet a ruleset declares: abilities, skills, saves, fields, derived values,
live pools, conditions and rests (DESIGN.md "Ruleset", "Sheet model")."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from .base import Id, Label, Labelled, RulesetModel
from .values import ValueRef


class Ability(Labelled):
    min: int = 0
    max: int = 30
    default: int = 0


class Skill(Labelled):
    """A skill or a save; CoC-style skills name no ability (DESIGN.md, OQ-CHK-4/5/6/30)."""

    ability: Id | None = None
    bonus_range: tuple[int, int] | None = None


class SheetField(Labelled):
    type: Literal["number", "text", "boolean"] = "number"
    default: float | str | bool | None = None


class Derived(Labelled):
    op: Literal["sum", "max", "min", "product", "floorDiv"] = "sum"
    of: list[ValueRef] = Field(min_length=1, max_length=24)


class Sheet(RulesetModel):
    abilities: list[Ability] = Field(default_factory=list, max_length=24)
    skills: list[Skill] = Field(default_factory=list, max_length=96)
    saves: list[Skill] = Field(default_factory=list, max_length=24)
    fields: list[SheetField] = Field(default_factory=list, max_length=48)
    derived: list[Derived] = Field(default_factory=list, max_length=48)


class Pool(Labelled):
    health: bool = False
    max: ValueRef


class Live(RulesetModel):
    pools: list[Pool] = Field(default_factory=list, max_length=24)


class Condition(Labelled):
    modifiers: list[dict[str, Any]] = Field(default_factory=list, max_length=24)


class Rest(Labelled):
    pass


class Layer(RulesetModel):
    id: Id
    label: Label | None = None
    hides: list[str] = Field(default_factory=list, max_length=1000)
    coins: list[Id] = Field(default_factory=list, max_length=60)
    items: dict[str, Any] | None = None
