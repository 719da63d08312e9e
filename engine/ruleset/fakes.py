"""Fakes and how they are found out: ``tells`` and ``foolsReveal`` on an item, a dishonest seller's
``manner``, and the block's ``revealsFakes``
(docs/rules/items.md#19-honest-and-dishonest-sellers-fakes, docs/rules/items.md#20-detecting-fakes;
v1.79/v1.802)."""

from __future__ import annotations

from pydantic import Field

from .base import Id, ItemRef, Label, RulesetModel, Text
from .values import Threshold, ValueRef


class CheckName(RulesetModel):
    """ITM-TELL-3: what is rolled, named as a gate names it (ITM-GATE-2): a skill, an ability or
    a sheet value — exactly one."""

    skill: Id | None = None
    ability: Id | None = None
    value: ValueRef | None = None


class Carries(RulesetModel):
    """ITM-TELL-5: items the checker must have in its own bag (any one of ``anyOf``)."""

    any_of: list[ItemRef] = Field(min_length=1, max_length=24)


class Tell(RulesetModel):
    """ITM-TELL-3..6: a check anyone may make on a fake (also a seller's ``manner``,
    ITM-TELL-7)."""

    check: CheckName
    dc: int = Field(ge=0, le=100)
    says: Text | None = None
    """What a success lets the character notice."""
    needs: list[Threshold] = Field(default_factory=list, max_length=8)
    """ITM-TELL-4, OQ-58: every row must be met for the check to be possible."""
    needs_any: list[Threshold] = Field(default_factory=list, max_length=8)
    """ITM-TELL-4, OQ-58: one row is enough."""
    carries: Carries | None = None
    advantage_if: list[Threshold] = Field(default_factory=list, max_length=8)
    disadvantage_if: list[Threshold] = Field(default_factory=list, max_length=8)


class RevealWay(RulesetModel):
    """ITM-SEE-1..3: a way to see through fakes (a spell, a ritual); with neither ``tags`` nor
    ``items`` it sees through every fake (OQ-62)."""

    id: Id
    label: Label
    tags: list[Id] = Field(default_factory=list, max_length=48)
    items: list[ItemRef] = Field(default_factory=list, max_length=96)
    """ITM-SEE-2, ITM-FAKEV-3: the fakes it sees through, by reference (fakes only)."""
