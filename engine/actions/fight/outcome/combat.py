"""Outcome-based combat's answers (docs/rules/combat.md#a4-outcome-based-combat-position-and-effect,
CMB-OUTC-1..4, OQ-CMB-6; docs/design.md#outcome-and-pool-fights: ``combat.kind`` ``outcome``). A
fight starts, foes join, conditions come and go and it ends as in formula combat
(engine/actions/fight/formula.py), except that a foe is measured in **harm levels** (its template's
``combat.harm``) rather than hit points. A hero's ``[attack:]`` carries the GM's grades —
``position=`` (controlled, risky, desperate) and ``effect=`` (limited, standard, great) — and the
engine rolls the ruleset's ``combat.outcome.check`` read through its outcome tiers
(docs/rules/checks.md#8-outcome-tiers-more-than-success-or-failure) **both ways**: the effect's harm
levels dealt to the foe and the position's harm level coming back, one harm of level k taking f_k of
the hero's maximum health. Only heroes roll; a foe's ``[attack:]`` is refused ``players-roll``."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from tagparse import Tag

from ....dice import Stream
from ....rules import reasons
from ....rules.context import TurnContext
from ....rules.fight.formula import hero_health, hurt, standing
from ....rules.fight.outcome import (
    exchange,
    foe_harm,
    grade_effect,
    grade_position,
    harm_points,
    harm_share,
    reading,
    tier_kind,
)
from ....rules.game import Game
from ....rules.sheet import SheetView
from ....rules.state import Combatant, Encounter, Stack, State
from ....rules.weapons import numbers
from ....ruleset import Item, Template
from ....ruleset.combat import Attack
from ....ruleset.fight import EFFECTS, POSITIONS, OutcomeRule
from ....ruleset.resolution import Outcomes
from ...answers import Answer, fraction
from ...checks.pipeline import effective_resolution, roll_check
from ...declare import Refusal
from ...examples import END_LINE, FOE_NAMES, Party, example, join_line
from ..encounter import answered, refuse, round_of, weapon_of
from ..formula import fighters
from ..hp0 import downed
from ..requests import OutcomeStrike
from ..victory import ended

ACTION = "action"  # what a hero's outcome action spends: one a round
@dataclass(frozen=True)
class Arms:
    """The weapon of a hero's outcome action (``with=``, else its first worn weapon, as in a
    formula fight): its name, its ``toHit`` (added to the outcome check as its bonus) and its
    ``attack.effect`` (harm levels added to what the effect deals)."""

    name: str
    to_hit: int
    effect: int


def arms_of(game: Game, state: State, who: int, armed: tuple[Stack, Item, Attack] | None
            ) -> Arms | None:
    """CMB-OUTC-1..4 read for weapons: what the hero's weapon brings to an
    outcome action (None unarmed)."""
    if armed is None:
        return None
    view = SheetView(game, state.characters[who], state)
    return Arms(armed[0].name, numbers(game, view, armed[1], armed[2]).to_hit,
                armed[2].effect or 0)


def _rule(game: Game) -> OutcomeRule:
    combat = game.ruleset.combat
    assert combat is not None and combat.outcome is not None  # checked at load
    return combat.outcome


def harmed(game: Game, template: Template, tier: int, foe: Combatant,
           stream: Stream) -> Combatant:
    """CMB-OUTC-4: a foe of an outcome fight, its ``hp``/``hpMax`` its harm levels left and in
    all (its template's ``combat.harm`` at ``tier``), without formula combat's numbers."""
    levels = foe_harm(game, template, tier, foe.modifier or 0, stream)
    return foe.model_copy(update={"hp": levels, "hp_max": levels, "defence": None,
                                  "attack": None, "damage": None, "attacks": None})


def joined(foe: Combatant) -> dict[str, Any]:
    """A new foe's numbers in the record of ``op="start"``/``"join"``: its harm levels."""
    return {"name": foe.name, "harm": foe.hp, "role": foe.role, "tier": foe.tier}


class Graded(Protocol):
    """What an outcome ``[attack:]`` reads
    (:class:`engine.actions.fight.requests.OutcomeStrike`), and an ability's use read as one."""

    @property
    def tag(self) -> Tag: ...
    @property
    def position(self) -> str: ...
    @property
    def effect(self) -> str: ...
    @property
    def weapon(self) -> str | None: ...


@dataclass(frozen=True)
class Done:
    """An outcome action that happened: the state after, its record, text, rule-card events,
    notes, and how it ended the fight (None: it goes on)."""

    state: State
    record: dict[str, Any]
    text: str
    events: tuple[str, ...]
    notes: tuple[str, ...] = field(default=())
    ends: Literal["victory", "defeat"] | None = None


def _landed(game: Game, state: State, who: int) -> Outcomes:
    """The outcome tiers the hero's check was read through (an override may give its own)."""
    res = game.ruleset.resolution
    assert res is not None
    effective, _ = effective_resolution(res, "skill", _rule(game).check,
                                        SheetView(game, state.characters[who], state))
    outcomes = effective.outcomes or res.outcomes
    assert outcomes is not None  # checked at load (engine/ruleset/outcome_problems.py)
    return outcomes


def strike(game: Game, state: State, request: Graded, encounter: Encounter,
           ctx: TurnContext, me: int, target: int,
           armed: tuple[Stack, Item, Attack] | None = None) -> Done | Refusal:
    """CMB-OUTC-1..3: hero ``me``'s action against foe ``target`` in ``encounter`` (its round
    already begun), graded by ``position=`` and ``effect=``: the check is rolled and its tier
    read both ways; the foe loses the harm levels achieved (felled at 0), the hero takes the
    harm that comes back from its health (temporary points first). ``armed``, the hero's
    weapon, adds its toHit to the check and its ``attack.effect`` to the harm dealt. A Refusal
    when it cannot happen, the state unchanged."""
    attacker = encounter.combatants[me]
    if attacker.side == "foes":
        return Refusal(reasons.PLAYERS_ROLL, f"In an outcome fight only heroes roll: what "
                       f"{attacker.name} does comes back through a hero's roll (its "
                       'position=); write the hero\'s [attack: position="..." effect="..."]; '
                       "nothing was done.")
    who = state.character_index(attacker.name)
    assert who is not None
    health = hero_health(game, state, who)
    if health is None:
        return Refusal(reasons.UNSUPPORTED, "This ruleset keeps no hit points for heroes (no "
                       "health pool or health track), so no harm can come back; nothing was "
                       "done.")
    if ACTION in attacker.spent:
        return Refusal(reasons.NO_TIME, f"NO TIME: {attacker.name} has acted this round; "
                       "nothing was done.")
    rule = _rule(game)
    notes: list[str] = []
    position = grade_position(request.position, notes)
    effect = grade_effect(request.effect, notes)
    name = attacker.name
    arms = arms_of(game, state, who, armed)
    # docs/design.md#combat-dice: keyed by the round's reply and the hero, never the tag's place
    state_after, checked = roll_check(game, state, who, {"skill": rule.check, "dc": str(rule.dc)},
                                      ctx.for_tag(0), f"attack/{name.casefold()}/0",
                                      added=arms.to_hit if arms is not None else 0)
    if not checked.ok:
        return Refusal(checked.reason or reasons.UNSUPPORTED, checked.text)
    outcomes = _landed(game, state, who)
    label = checked.record.get("outcome")
    tier = next((t for t in outcomes.tiers if t.label == label), outcomes.tiers[-1])
    kind = tier_kind(outcomes, tier, checked.record.get("critical"))
    exchanged = exchange(rule, reading(rule, tier, kind), position, effect,
                         arms.effect if arms is not None else 0)
    foe = encounter.combatants[target]
    dealt = min(exchanged.dealt, foe.hp or 0)
    foe = foe.model_copy(update={"hp": (foe.hp or 0) - dealt})
    points = harm_points(rule, exchanged.level, health.hp_max)
    combatants = list(encounter.combatants)
    combatants[target] = foe
    combatants[me] = attacker.model_copy(update={"spent": (*attacker.spent, ACTION)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    next_state = state_after.model_copy(update={"encounter": encounter})
    after = health
    if points:
        next_state, after = hurt(game, next_state, who, points)
    record: dict[str, Any] = {
        "round": encounter.round, "attacker": name, "target": foe.name,
        "check": rule.check, "rolls": checked.record.get("rolls", []),
        "total": checked.record.get("total"), "outcome": tier.label, "tier": tier.id,
        "reading": kind, "position": position, "effect": effect, "harmDealt": dealt,
        "harm": foe.hp, "harmMax": foe.hp_max, "harmLevel": exchanged.level,
        "harmShare": fraction(harm_share(rule, exchanged.level)), "damage": points,
        "hp": after.hp, "hpMax": after.hp_max}
    if checked.record.get("critical") is not None:
        record["critical"] = checked.record["critical"]
    if arms is not None:
        record["weapon"] = arms.name
        if arms.to_hit:
            record["toHit"] = arms.to_hit
        if arms.effect:
            record["weaponEffect"] = arms.effect
    if health.temporary:
        record["temporary"] = after.temporary
    skill = next((s.label for s in game.ruleset.sheet.skills if s.id == rule.check), rule.check)
    dice = ", ".join(map(str, record["rolls"]))
    weapon = f"{arms.name}, " if arms is not None else ""
    text = (f"{name} → {foe.name} ({weapon}{position}, {effect}): {skill} ({dice}) = "
            f"{record['total']} · {tier.label} · "
            f"{foe.name} takes {dealt} harm ({foe.hp}/{foe.hp_max} left)")
    if exchanged.level:
        text += (f"; {name} suffers level-{exchanged.level} harm, {points} "
                 f"({after.hp}/{after.hp_max})")
    else:
        text += f"; nothing comes back at {name}"
    text += "."
    events: list[str] = [f"harm:{foe.name}:{dealt}"] if dealt else []
    if points:
        events.append(f"damage:{name}:{points}")
    if not foe.hp:
        events.append(f"felled:{foe.name}")
        text += f" {foe.name} is felled."
    if points and not after.hp:  # CMB-HP0-1..4, CMB-CARD-1: what 0 means for the hero
        next_state, said = downed(game, next_state, who, events, record)
        text += said
    # the last foe felled wins, even by a blow that downs the hero; else the last hero down
    ends: Literal["victory", "defeat"] | None = None
    if not any(c.side == "foes" and c.hp for c in encounter.combatants):
        ends = "victory"
    elif not any(c.side == "party" and standing(game, next_state, c)
                 for c in encounter.combatants):
        ends = "defeat"
    if ends is not None:
        events.append(f"end:{ends}")
    return Done(next_state, record, text, tuple(events), tuple(notes), ends)


OUTCOME_RECORD = {
    "check": "outcome fights: the skill rolled (combat.outcome.check)",
    "outcome": "outcome fights: the tier the roll landed in, by label (CHK-OUT-20)",
    "tier": "outcome fights: that tier's id",
    "reading": "outcome fights: critical, full, partial, failure or critical-failure — how "
               "the tier was read both ways (CMB-OUTC-1)",
    "position": "outcome fights: controlled, risky or desperate (CMB-OUTC-2)",
    "effect": "outcome fights: limited, standard or great (CMB-OUTC-2)",
    "harmDealt": "outcome fights: the foe harm levels the action achieved",
    "harm": "outcome fights: the foe's harm levels left (CMB-OUTC-4)",
    "harmMax": "outcome fights: the foe's harm levels in all",
    "harmLevel": "outcome fights: the level of the harm that came back (0: none)",
    "harmShare": "outcome fights: the share of maximum health one harm of that level takes "
                 "(CMB-OUTC-3), as a fraction {num, den}",
    "toHit": "outcome fights: the weapon's toHit, added to the check as its bonus",
    "weaponEffect": "outcome fights: the weapon's attack.effect, harm levels added to what "
                    "the effect dealt",
}
"""The record keys an outcome action adds to a formula attack's (``damage``, ``hp``,
``hpMax``, ``rolls``, ``total``, ``events`` …: then the hero's health)."""


def teach_fight(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: the GM's lines while an outcome fight is on, each grade shown
    once in the example and its other words beside it."""
    combat = game.ruleset.combat
    assert combat is not None
    lines = ["How to fight: a reply with an attack tag is one round. Write no numbers: the hero "
             "rolls, and the roll says both what the hero achieves and what comes back.",
             "- A hero acts: " + example("attack", who=party.hero, target=FOE_NAMES[0],
                                         position=POSITIONS[1], effect=EFFECTS[1])
             + f". position= how hard a failure comes back: {', '.join(POSITIONS)}; effect= "
             f"how much a success achieves (the foe's harm levels): {', '.join(EFFECTS)}. One "
             "action a hero a round; with= a weapon other than the first worn one, or use= a "
             "sheet ability instead of a weapon.",
             "- Foes do not roll: what they do comes back through the hero's roll."]
    if combat.templates:
        lines.append(join_line([t.role for t in combat.templates]) + ".")
    lines.append(END_LINE)
    return lines


def attack(game: Game, state: State, request: OutcomeStrike,
           ctx: TurnContext) -> tuple[State, Answer]:
    """CMB-OUTC-1..4: a hero's outcome action (:func:`strike`), and the end of the fight it
    wins or loses, as a formula strike's."""
    found = fighters(game, state, request)
    if isinstance(found, Refusal):
        return refuse(state, request.tag, found)
    encounter, me, target = round_of(found.encounter, ctx), found.me, found.target
    attacker = encounter.combatants[me]
    who = state.character_index(attacker.name) if attacker.side == "party" else None
    armed = weapon_of(game, state, who, request.weapon) if who is not None else None
    if isinstance(armed, Refusal):  # a weapon adds its toHit and attack.effect
        return refuse(state, request.tag, armed)
    done = strike(game, state, request, encounter, ctx, me, target, armed)
    if isinstance(done, Refusal):
        return refuse(state, request.tag, done)
    next_state, words = ended(game, done.state, done.ends, encounter, ctx, done.record)
    return answered(request, next_state, done.record, done.text + words, list(done.events),
                    list(done.notes), ctx)


def rank(encounter: Encounter, found: int) -> int:
    """Without initiative an outcome fight's actions go in text order; with it, as formula
    combat's (CMB-TURN-14)."""
    return found if any(c.initiative for c in encounter.combatants) else 0
