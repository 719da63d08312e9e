"""The COMBAT block of a narrative fight (docs/design.md#combat-prompt;
docs/rules/combat.md#part-b--narrative-d100-fights): each side's momentum, every fighter with its
rank, hit points and — for a foe — the gap label from each hero's side (D100-RANK-6), each hero's
fatigue, the strikes the foes announced (D100-DEF-1) and this round's defences, then the grades the
GM is taught."""

from __future__ import annotations

from ...actions.examples import party_of
from ...actions.fight.narrative.combat import FOES, PARTY, pool_now, teach_fight
from ...rules.fight.formula import hero_health, standing
from ...rules.fight.narrative import DEFAULT_RANK, fatigue, gap_label, power, rank_name
from ...rules.game import Game
from ...rules.state import Combatant, State


def narrative_block(game: Game, state: State, teach: bool = True) -> str:
    """The COMBAT block of ``state``'s narrative fight, or ``""`` out of one
    (``teach``: with the combat lines of the instructions under it)."""
    encounter = state.encounter
    if encounter is None:
        return ""
    narrative = game.ruleset.combat.narrative if game.ruleset.combat is not None else None
    fought = f"round {encounter.round} fought" if encounter.round else "no attack yet"
    momentum = encounter.momentum or {}
    lines = [f"COMBAT (narrative; {fought}; the next reply with an attack or defence is round "
             f"{encounter.round + 1})",
             f"Momentum: party {momentum.get(PARTY, 0):+d}, foes {momentum.get(FOES, 0):+d}",
             "Fighters (every hero acts first, then the foes' announced strikes land):"]
    heroes = [c for c in encounter.combatants if c.side == PARTY]
    for place, combatant in enumerate(encounter.combatants, 1):
        rank = rank_name(combatant.rank or DEFAULT_RANK, narrative)
        if combatant.side == FOES:
            gaps = ", ".join(f"{h.name}: {gap_label(_power(h) - _power(combatant))}"
                             for h in heroes)
            shown = f"hp {combatant.hp or 0}/{combatant.hp_max or 0}"
            state_of = "FELLED" if not combatant.hp else f"gap {gaps}" if gaps else ""
            lines.append(f"{place}. {combatant.name} (foe, rank {rank}): {shown}; {state_of}")
            continue
        lines.append(f"{place}. {combatant.name} (hero, rank {rank}): "
                     + _hero(game, state, combatant))
    if encounter.announced:
        lines.append("Announced, landing next round: " + "; ".join(
            f"{a.foe} → {a.target}" + (" (undodgeable)" if a.undodgeable else "")
            for a in encounter.announced))
    this_round = [d for d in encounter.defences if d.round == encounter.round]
    if this_round:
        lines.append(f"Defences of round {encounter.round}: " + "; ".join(
            f"{d.who} {d.how}" + (f" for {d.shields}" if d.shields else "") for d in this_round))
    return "\n".join([*lines, *(teach_fight(game, party_of(state)) if teach else [])])


def _power(combatant: Combatant) -> int:
    return power(combatant.rank or DEFAULT_RANK)


def _hero(game: Game, state: State, combatant: Combatant) -> str:
    """A hero's hit points (DOWNED at 0) and the fatigue of each pool its effort draws on."""
    who = state.character_index(combatant.name)
    if who is None:
        return "left the party"
    health = hero_health(game, state, who)
    parts = [f"hp {health.hp}/{health.hp_max}" if health is not None else "no hit points"]
    if not standing(game, state, combatant):
        return "DOWNED (" + parts[0] + ")"
    narrative = game.ruleset.combat.narrative if game.ruleset.combat is not None else None
    for pool in dict.fromkeys((narrative.stamina, narrative.mana) if narrative else ()):
        if pool is None:
            continue
        current, most = pool_now(game, state, who, pool)
        parts.append(f"{pool} {current}/{most} (fatigue {fatigue(current, most):+d})")
    return "; ".join(parts)
