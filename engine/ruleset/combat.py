"""What an item does in a fight and when used: ``attack`` (docs/rules/items.md#9-weapons-in-combat
and the two sections after it), ``toggle`` (docs/rules/items.md#48-toggle), ``use`` and ``charges``
(docs/rules/items.md#13-using-items-in-combat, docs/rules/items.md#21-using-items-outside-combat).
The fight and use capabilities read these; the load-time rules are in :mod:`.references`."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from .base import Dice, Id, Label, RulesetModel
from .fakes import CheckName
from .formula import FormulaText
from .values import Threshold, ValueRef


class StatRead(RulesetModel):
    """ITM-WPN-21: ``{"stat": "damage"}`` reads one of the item's own stats instead."""

    stat: Id


Number = float | StatRead
DiceOrStat = Dice | StatRead
Abilities = Id | list[Id] | StatRead


class ToHit(RulesetModel):
    """ITM-WPN-6..11: what a weapon (or a use's attack roll, ITM-USE-7) adds to hit."""

    abilities: Abilities | None = None
    """ITM-WPN-6: ability ids (the best counts), or an enum stat of ability ids."""
    skill: Id | StatRead | None = None
    """ITM-WPN-7: what a check of this skill adds."""
    proficiency: ValueRef | None = None
    """ITM-WPN-8: above 0 adds the ruleset's proficiency bonus."""
    bonus: Number | None = None
    """ITM-WPN-9: a number added to hit."""
    sheet_bonus: ValueRef | None = None
    """ITM-WPN-10 (v1.95): a number from the wearer's sheet, added as it is."""
    target: Annotated[int, Field(ge=2, le=20)] | StatRead | None = None
    """ITM-WPN-11: the weapon's own per-die target in a dice-pool fight."""


class Damage(RulesetModel):
    """ITM-WPN-12..15: the dice a weapon deals and what is added."""

    dice: DiceOrStat | None = None
    abilities: Abilities | None = None
    bonus: Number | None = None
    type: Id | StatRead | None = None
    sheet_bonus: ValueRef | None = None
    """ITM-WPN-14 (v1.97)."""
    one_handed: bool = False
    """ITM-WPN-14 (v1.97): the sheet bonus counts only while held in one hand."""
    reroll_up_to: ValueRef | None = None
    """ITM-WPN-15 (v1.98)."""


class Range(RulesetModel):
    """ITM-WPN-16: ``normal`` and ``long`` in the combat block's distance unit."""

    normal: Annotated[float, Field(ge=0)]
    long: Annotated[float, Field(ge=0)] | None = None


class Ammo(RulesetModel):
    """ITM-AMMO-2..7 (v1.57): what the weapon shoots, by item tag."""

    tag: Id
    per_attack: int = Field(default=1, ge=1, le=100)
    recover: float = Field(default=0, ge=0, le=1)


class Clip(RulesetModel):
    """ITM-CLIP-1..9 (v1.57): a loaded count the weapon keeps."""

    max: Annotated[int, Field(ge=1, le=1000)] | StatRead
    reload: Id
    """ITM-CLIP-3: the budget a reload spends."""


class Mode(RulesetModel):
    """ITM-MODE-2..6 (v1.58): another way of making the attack."""

    id: Id
    label: Label
    ammo: int | None = Field(default=None, ge=1, le=100)
    to_hit: int | None = Field(default=None, ge=-100, le=100)
    target: int | None = Field(default=None, ge=-10, le=10)
    targets: int | None = Field(default=None, ge=1, le=20)


class SaveRoll(RulesetModel):
    """ITM-ONHIT-5, ITM-PLUS-3: a save with its own difficulty."""

    save: Id
    difficulty: int | None = Field(default=None, ge=1, le=100)
    on_success: Literal["half", "none", "negates"] | None = None


class SaveEnds(RulesetModel):
    """ITM-ONHIT-6 (v1.169): the condition lasts until this save is made."""

    save: Id
    difficulty: int = Field(ge=1, le=100)
    at: Literal["turn-start", "turn-end", "damaged"]


class OnHit(RulesetModel):
    """ITM-ONHIT-1..7 (v1.58): a condition the target gets when the damage reached ``atLeast``."""

    condition: Id
    at_least: int = Field(default=1, ge=0, le=10_000)
    rounds: int | None = Field(default=None, ge=1, le=100)
    save: SaveRoll | None = None
    save_ends: SaveEnds | None = None


class TargetIs(RulesetModel):
    """ITM-PLUS-4: only against targets of these creature types or tags."""

    types: list[Id] = Field(default_factory=list, max_length=24)
    tags: list[Id] = Field(default_factory=list, max_length=24)


class Plus(RulesetModel):
    """ITM-PLUS-1..8 (v1.169): a further amount dealt on every hit."""

    dice: Dice | None = None
    flat: int | None = Field(default=None, ge=0, le=10_000)
    type: Id | None = None
    save: SaveRoll | None = None
    target_is: TargetIs | None = None
    when: Literal["critical", "toggled"] | None = None
    """``toggled`` (v1.170): only while the item's switch is on (ITM-TOG-6)."""


class Attack(RulesetModel):
    """ITM-WPN-1..31: an item's ``attack`` (v1.55), the shape of a combat attack row."""

    budget: Id
    """ITM-WPN-5: one of ``combat.economy.budgets``."""
    to_hit: ToHit | None = None
    damage: Damage | None = None
    reach: Annotated[float, Field(ge=0)] | None = None
    range: Range | None = None
    versatile: DiceOrStat | None = None
    """ITM-WPN-19: the dice dealt while as much room again is free."""
    strikes: ValueRef | None = None
    """ITM-WPN-20: attacks one spend buys, read from the wearer's sheet."""
    reads: dict[Id, FormulaText] = Field(default_factory=dict, max_length=16)
    """CMB-READS-6: the weapon's own values of ``combat.attack.reads``, by name; each takes
    precedence over the system's value of that name (computed for the wearer)."""
    ammo: Ammo | None = None
    clip: Clip | None = None
    modes: list[Mode] = Field(default_factory=list, max_length=6)
    off_hand: bool = False
    floor: Annotated[int, Field(ge=0, le=10_000)] | StatRead | None = None
    on_hit: list[OnHit] = Field(default_factory=list, max_length=4)
    plus: list[Plus] = Field(default_factory=list, max_length=3)
    effect: Annotated[int, Field(ge=-3, le=3)] | None = None
    """CMB-OUTC-2 read for arms: in an outcome fight the harm levels the weapon adds to (or takes
    off) what the action's effect deals, whenever its tier achieves something."""


class Toggle(RulesetModel):
    """ITM-TOG-1..6 (v1.170): a switch the item carries, flipped on a ``budget`` in a fight."""

    label: Label
    budget: Id


class Amount(RulesetModel):
    """An amount of dice and a flat number (ITM-USE-13, ITM-RCHG-2)."""

    dice: Dice | None = None
    flat: int | None = Field(default=None, ge=-10_000, le=10_000)


class Restore(RulesetModel):
    """ITM-USE-13..19 (v1.60): a pool the use gives back."""

    pool: Id
    amount: Amount


class Duration(RulesetModel):
    """How long an applied condition lasts."""

    rounds: int = Field(ge=1, le=100)


class Applies(RulesetModel):
    """ITM-OUT-6: a condition a use applies."""

    condition: Id
    duration: Duration | None = None


# ITM-GATE-2: a gate names what it rolls as a tell does (ITM-TELL-3).
GateCheck = CheckName


class Gate(RulesetModel):
    """ITM-GATE-1..9 (v1.62): a check the user must pass first."""

    check: GateCheck
    difficulty: Annotated[int, Field(ge=1, le=100)] | StatRead
    unless: Threshold | None = None


class Use(RulesetModel):
    """ITM-USE-2..25 (v1.59): what using the item does, in the terms of a catalog entry's
    ``mechanics``. ITM-USE-6's entry-only keys (``cost``, ``check``, ...) are unknown keys here."""

    kind: Literal["heal", "attack", "buff", "debuff"]
    budget: Id | None = None
    free: bool = False
    amount: Amount | None = None
    damage_type: Id | None = None
    plus: list[Plus] = Field(default_factory=list, max_length=3)
    attack_roll: bool = False
    to_hit: ToHit | None = None
    save: SaveRoll | None = None
    save_difficulty: Annotated[int, Field(ge=1, le=100)] | StatRead | None = None
    applies: list[Applies] = Field(default_factory=list, max_length=8)
    temporary: Amount | None = None
    range: Annotated[float, Field(ge=0)] | None = None
    area: Annotated[float, Field(ge=0)] | None = None
    targets: Literal["self", "ally", "enemy", "any"] | None = None
    target_count: int | None = Field(default=None, ge=1, le=20)
    friendly_fire: bool = False
    concentration: bool | None = None
    """v1.174 (OQ-31)."""
    zone: bool | None = None
    """v1.174."""
    consumes: bool = False
    """ITM-USE-11: takes one item from the stack on every use."""
    charges: int | None = Field(default=None, ge=1, le=100)
    """ITM-CHG-1: spends that many of the item's charges."""
    restore: Restore | None = None
    gate: Gate | None = None


class Recharge(RulesetModel):
    """ITM-RCHG-1..7 (v1.61): which rests bring charges back, and how many."""

    rests: list[Id] = Field(min_length=1, max_length=12)
    amount: Literal["max"] | Amount


class BreaksOn(RulesetModel):
    """ITM-BRK-1 (v1.61): spending the last charge rolls a d``die``; ``atMost`` or less breaks."""

    die: int = Field(ge=2, le=1000)
    at_most: int = Field(ge=1, le=1000)


class Charges(RulesetModel):
    """ITM-CHG-2..7: how many charges the item holds (1..100, or one of its number stats)."""

    max: Annotated[int, Field(ge=1, le=100)] | StatRead
    recharge: Recharge | None = None
    breaks_on: BreaksOn | None = None
