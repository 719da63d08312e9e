"""What conditions, worn and carried items and unmet requirements do to a check
(docs/rules/items.md#7-checks-outside-combat): the typed ``worn``/``carried``/``otherwise``
vocabulary and ``requires``."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, model_validator

from .base import Id, RulesetModel
from .values import ValueRef

# ITM-WORN-3: the effects a check outside combat reads.
CHECK_EFFECTS = frozenset({
    "own-checks-advantage", "own-checks-disadvantage",
    "own-saves-advantage", "own-saves-disadvantage",
})


class Modifier(RulesetModel):
    """ITM-WORN-4: a change ``to`` checks or saves (or a combat target, read by combat)."""

    to: Id
    flat: int | None = Field(default=None, ge=-100, le=100)
    dice: str | None = Field(default=None, max_length=32)
    minus: bool = False
    mode: Literal["advantage", "disadvantage"] | None = None
    skills: list[Id] | None = Field(default=None, max_length=96)
    saves: list[Id] | None = Field(default=None, max_length=24)


class AbilityChange(RulesetModel):
    """ITM-ABIL-1: ``{"set": N}`` (at least N) or ``{"add": N}``."""

    set: int | None = None
    add: int | None = None

    @model_validator(mode="after")
    def _one(self) -> AbilityChange:
        if (self.set is None) == (self.add is None):
            raise ValueError('an ability change is either {"set": N} or {"add": N}')
        return self


class Effects(RulesetModel):
    """``worn``, ``carried`` and a requirement's ``otherwise`` (ITM-WORN-2).

    Only the parts a check reads are typed here; the combat parts
    (docs/rules/items.md#12-armour-and-worn-effects-in-combat: defence, attacks, speed, resistances,
    ...) are kept as written for the combat capability.
    """

    model_config = RulesetModel.model_config | {"extra": "allow"}
    effects: list[str] = Field(default_factory=list, max_length=32)
    modifiers: list[Modifier] = Field(default_factory=list, max_length=24)
    fails_saves: list[Id] = Field(default_factory=list, max_length=24)
    skills: list[Id] | None = Field(default=None, max_length=96)
    saves: list[Id] | None = Field(default=None, max_length=24)
    abilities: dict[Id, AbilityChange] = Field(default_factory=dict)


class Requirement(RulesetModel):
    """ITM-REQ-2: ``value`` must reach ``atLeast``; ``otherwise`` applies while it does not."""

    value: ValueRef
    at_least: float
    otherwise: Effects

    @model_validator(mode="after")
    def _no_abilities(self) -> Requirement:
        if self.otherwise.abilities:  # ITM-REQ-3: a requirement may read the ability it changes
            raise ValueError("a requirement's otherwise cannot change an ability")
        return self


Requirements = list[Requirement]
MAX_REQUIREMENTS = 4  # ITM-REQ-1
