"""The COMBAT block of an outcome fight (docs/design.md#combat-prompt;
docs/rules/combat.md#a4-outcome-based-combat-position-and-effect): every combatant in order — a foe
with its harm levels left (CMB-OUTC-4), a hero with its health and conditions — then the lines the
GM is taught (position and effect)."""

from __future__ import annotations

from ...actions.examples import party_of
from ...actions.fight.outcome.combat import teach_fight
from ...rules.fight.formula import hero_health
from ...rules.game import Game
from ...rules.state import Combatant, State


def outcome_block(game: Game, state: State, teach: bool = True) -> str:
    """The COMBAT block of ``state``'s outcome fight, or ``""`` out of one
    (``teach``: with the combat lines of the instructions under it)."""
    encounter = state.encounter
    if encounter is None:
        return ""
    fought = f"round {encounter.round} fought" if encounter.round else "no action yet"
    lines = [f"COMBAT (outcome; {fought}; the next reply with an attack is round "
             f"{encounter.round + 1})", "Order:"]
    for place, combatant in enumerate(encounter.combatants, 1):
        lines.append(f"{place}. " + _line(game, state, combatant))
    return "\n".join([*lines, *(teach_fight(game, party_of(state)) if teach else [])])


def _line(game: Game, state: State, combatant: Combatant) -> str:
    """``Thug 1 (foe: minion, tier 1): harm 2/2`` or ``Cutter (hero): health 7/10``; a felled
    foe or a downed hero says so."""
    if combatant.side == "foes":
        kind = [k for k in (combatant.role, f"tier {combatant.tier}"
                            if combatant.tier is not None else None) if k]
        who = f"{combatant.name} (foe{': ' + ', '.join(kind) if kind else ''})"
        harm = f"harm {combatant.hp or 0}/{combatant.hp_max or 0}"
        return f"{who}: FELLED ({harm})" if not combatant.hp else f"{who}: {harm}"
    who = f"{combatant.name} (hero)"
    index = state.character_index(combatant.name)
    health = hero_health(game, state, index) if index is not None else None
    if health is None:
        return who
    shown = f"health {health.hp}/{health.hp_max}" + (
        f" (+{health.temporary} temporary)" if health.temporary else "")
    conditions = state.characters[index].conditions if index is not None else ()
    parts = [shown] + ([f"conditions: {', '.join(conditions)}"] if conditions else [])
    return f"{who}: {'DOWNED; ' if not health.hp else ''}{'; '.join(parts)}"
