"""A formula strike as a value, then what the answer says of it: the strike is rolled once
(:mod:`engine.actions.fight.formula`) into a :class:`HeroStrike` or a :class:`FoeStrike`, and
its record and its sentence are each written from that value by a function of their own, as
avrae/d20 rolls a tree and then stringifies it. What follows the blow (a condition it put on,
the ammunition shot, who fell) adds its own record fields and words after these."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ...rules.armour import Guard
from ...rules.checks.read import Rolled
from ...rules.fight.formula import Health, Struck
from .arms import Extra

NO_EXTRA = Extra(0, (), ())


@dataclass(frozen=True, slots=True)
class Damage:
    """What a strike that landed dealt (CMB-ATK-A5/A6): the dice and the damage before
    anything changed it (``struck``), the formula they came from as written and the number
    added to them (``flat``), the weapon's floor it was raised to when it was below
    (ITM-FLOOR-1/2), the target's typed defences that changed it (ITM-DEF-4..8), the
    further amounts (ITM-PLUS-1..8), and what the target lost in all (``dealt``)."""

    struck: Struck
    formula: str
    dealt: int
    kind: str | None
    flat: int = 0
    floor: int | None = None
    guards: tuple[Guard, ...] = ()
    extra: Extra = NO_EXTRA

    def dice(self) -> str:
        """The damage dice as the sentence shows them: ``1d8 (5) + 1d6 (2)``."""
        return " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in self.struck.rolls.rolls)

    def rolls(self) -> list[list[int]]:
        """The faces of each dice term, for the record."""
        return [list(r.faces) for r in self.struck.rolls.rolls]

    def typed(self) -> int:
        """What the weapon's own damage dealt after the target's typed defences."""
        return self.dealt - self.extra.dealt


@dataclass(frozen=True, slots=True)
class HeroStrike:
    """A hero's strike on a foe (CMB-ATK-A1..A6): who at whom with what (``weapon`` as the
    answer names it, the off hand marked), the turn action spent and the reach, the attack
    check rolled against the foe's defence and its result, the foe's hit points before, the
    conditions' edges read before the dice (CMB-MOD-2), the weapon's mode (ITM-MODE-2), what
    the kind's hit rule adds to the record (roll-against, symbol-pool), and the damage of a
    strike that landed."""

    round: int
    attacker: str
    target: str
    weapon: str
    budget: str
    range: str
    rolled: Rolled
    modifier: int
    defence: int
    result: str
    hp: int | None
    hp_max: int | None
    affected_by: tuple[str, ...] = ()
    mode: str | None = None
    hit_rule: Mapping[str, Any] | None = None
    damage: Damage | None = None

    def hp_after(self) -> int | None:
        """The foe's hit points after the strike."""
        if self.damage is None:
            return self.hp
        return max((self.hp or 0) - self.damage.dealt, 0)


@dataclass(frozen=True, slots=True)
class FoeStrike:
    """A foe's strike on a hero (CMB-ATK-7, CMB-ATK-A1..A7): as :class:`HeroStrike`, with the
    hero's standing reaction to it (CMB-REACT-1..7: its record and words) and the hero's
    health before and after."""

    round: int
    attacker: str
    target: str
    range: str
    rolled: Rolled
    modifier: int
    defence: int
    result: str
    health: Health
    after: Health
    affected_by: tuple[str, ...] = ()
    hit_rule: Mapping[str, Any] | None = None
    reaction: tuple[dict[str, Any], str] | None = None
    damage: Damage | None = None


def _affected_by(edges: tuple[str, ...], damage: Damage | None) -> list[str] | None:
    """CMB-MOD-2: what affected the strike, the conditions' edges first; None: nothing new."""
    if damage is not None and damage.guards:
        return [*edges, *(g.text for g in damage.guards)]
    return None


def hero_record(strike: HeroStrike) -> dict[str, Any]:
    """The record of a hero's strike (engine/actions/fight/tags.py ``ATTACK_RECORD``)."""
    record: dict[str, Any] = {
        "attacker": strike.attacker, "target": strike.target, "weapon": strike.weapon,
        "budget": strike.budget, "range": strike.range, "rolls": strike.rolled.rolls,
        "modifier": strike.modifier, "total": int(strike.rolled.value),
        "defence": strike.defence, "result": strike.result, "damage": 0, "hp": strike.hp,
        "hpMax": strike.hp_max}
    record["round"] = strike.round
    record.update(strike.hit_rule or {})
    if strike.affected_by:
        record["affectedBy"] = list(strike.affected_by)
    if strike.mode is not None:
        record["mode"] = strike.mode
    damage = strike.damage
    if damage is not None:
        record.update({"damage": damage.dealt, "hp": strike.hp_after(),
                       "damageRolls": damage.rolls()})
        guarded = _affected_by(strike.affected_by, damage)
        if guarded is not None:
            record["affectedBy"] = guarded
        if damage.kind is not None:
            record["damageType"] = damage.kind
        if damage.floor is not None:
            record["floor"] = damage.floor
        if damage.extra.rows:
            record["plus"] = list(damage.extra.rows)
    return record


def hero_text(strike: HeroStrike) -> str:
    """The sentence of a hero's strike: ``Ada → Goblin 1 (Sword): d20 (14) + 3 = 17 vs 12 ·
    hit, 1d8 (5) + 2 = 7 slashing · Goblin 1 0/7.``"""
    text = f"{strike.attacker} → {strike.target} ({strike.weapon}): {strike.rolled.shown} · " \
           f"{strike.result}"
    damage = strike.damage
    if damage is not None:
        flat = damage.flat
        added = f" {'+' if flat >= 0 else '-'} {abs(flat)}" if flat else ""
        kind = f" {damage.kind}" if damage.kind else ""
        text += f", {damage.dice() or damage.formula}{added} = {damage.struck.damage}{kind}"
        if damage.floor is not None:
            text += f", raised to {damage.floor} (at least {damage.floor} on a hit)"
        if damage.guards:
            text += f" ({'; '.join(g.text for g in damage.guards)}: {damage.typed()})"
        if damage.extra.rows:
            text += " " + " ".join(damage.extra.texts)
    text += f" · {strike.target} {strike.hp_after()}/{strike.hp_max}."
    if strike.affected_by:  # CMB-MOD-2: "Affected by: Prone (near): advantage"
        text += f" Affected by: {' · '.join(strike.affected_by)}."
    return text


def foe_record(strike: FoeStrike) -> dict[str, Any]:
    """The record of a foe's strike (engine/actions/fight/tags.py ``ATTACK_RECORD``)."""
    record: dict[str, Any] = {
        "round": strike.round, "attacker": strike.attacker, "target": strike.target,
        "range": strike.range, "rolls": strike.rolled.rolls, "modifier": strike.modifier,
        "total": int(strike.rolled.value), "defence": strike.defence,
        "result": strike.result, "damage": 0, "hp": strike.health.hp,
        "hpMax": strike.health.hp_max}
    record.update(strike.hit_rule or {})
    if strike.affected_by:
        record["affectedBy"] = list(strike.affected_by)
    if strike.reaction is not None:
        record["reaction"] = strike.reaction[0]
    damage = strike.damage
    if damage is not None:
        record.update({"damage": damage.dealt, "hp": strike.after.hp,
                       "damageRolls": damage.rolls()})
        if damage.kind is not None:
            record["damageType"] = damage.kind
        guarded = _affected_by(strike.affected_by, damage)
        if guarded is not None:
            record["affectedBy"] = guarded
    if strike.health.temporary:
        record["temporary"] = strike.after.temporary
    return record


def foe_text(strike: FoeStrike) -> str:
    """The sentence of a foe's strike: ``Goblin 1 → Ada: d20 (15) + 4 = 19 vs 14 · hit,
    1d6 (4) + 2 = 6 · Ada 6/12.``"""
    text = f"{strike.attacker} → {strike.target}: {strike.rolled.shown}"
    if strike.reaction is not None:
        text += strike.reaction[1]
    text += f" · {strike.result}"
    damage = strike.damage
    if damage is not None:
        dice = damage.dice()
        rest = damage.struck.damage - sum(sum(r.faces) for r in damage.struck.rolls.rolls)
        added = f" {'+' if rest >= 0 else '-'} {abs(rest)}" if rest and dice else ""
        kind = f" {damage.kind}" if damage.kind else ""
        text += f", {dice or damage.struck.damage}{added} = {damage.struck.damage}{kind}"
        if damage.guards:
            text += f" ({'; '.join(g.text for g in damage.guards)}: {damage.dealt})"
    after = strike.after
    text += f" · {strike.target} {after.hp}/{after.hp_max}"
    text += f" (+{after.temporary} temporary)." if after.temporary else "."
    if strike.affected_by:
        text += f" Affected by: {' · '.join(strike.affected_by)}."
    return text
