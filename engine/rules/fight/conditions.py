"""Conditions in a formula fight, as pure rules (CMB-MOD-1/2, CMB-COND-1..6, CMB-TYPE-2, OQ-CMB-8 of
docs/rules/combat.md#a6-modifiers-attack-types-and-combatants-who-cannot-act; ITM-DEF-1/3): what a
combatant bears, what its conditions do to an attack before the dice are rolled, who cannot act,
which conditions a combatant is immune to, and how a condition counts down. The ``[combat:
op="condition"]`` tag and the end of a round are in :mod:`engine.actions.fight.conditions`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ...ruleset.fight import CombatCondition
from ...ruleset.resolution import SumResolution
from ...ruleset.sheet import Condition
from ..checks.modifiers import Applied
from ..game import Game
from ..state import Encounter, FightCondition, State

ATTACK = "attack"  # CMB-COND-1: the name a condition's ``checks`` gives attack rolls
MAX_ROUNDS = 100  # rounds= is held to 1..100: a fight of a hundred rounds is long enough


def find_condition(game: Game, named: str) -> Condition | None:
    """The ruleset condition ``named`` names, by id or label, in any case."""
    wanted = named.strip().casefold()
    if not wanted:
        return None
    return next((c for c in game.ruleset.conditions
                 if wanted in (c.id.casefold(), c.label.casefold())), None)


def label_of(game: Game, ident: str) -> str:
    """A condition's label, as the player reads it."""
    return next((c.label for c in game.ruleset.conditions if c.id == ident), ident)


def fight_keys(game: Game, ident: str) -> CombatCondition | None:
    """The fight keys (``combat.conditions``) of the condition ``ident``, or None."""
    combat = game.ruleset.combat
    if combat is None:
        return None
    return next((c for c in combat.conditions if c.name == ident), None)


def names_of(state: State, encounter: Encounter, index: int) -> tuple[str, ...]:
    """The conditions combatant ``index`` bears: a hero's are on its sheet (where checks and
    item uses read them, and where op="condition" also writes them); a foe's are the fight's."""
    combatant = encounter.combatants[index]
    if combatant.side == "party":
        hero = state.character_index(combatant.name)
        if hero is not None:
            return state.characters[hero].conditions
    return tuple(c.name for c in combatant.conditions)


def held_back(game: Game, names: Iterable[str]) -> list[str]:
    """CMB-TYPE-2: the labels of the conditions among ``names`` that stop their bearer acting
    (``noActions``)."""
    stopping = []
    for ident in dict.fromkeys(names):
        keys = fight_keys(game, ident)
        if keys is not None and keys.no_actions:
            stopping.append(label_of(game, ident))
    return stopping


@dataclass(frozen=True, slots=True)
class Edge:
    """What conditions do to one attack, read before its dice (CMB-MOD-1): ``lean`` +1 rolls
    twice and keeps the higher, -1 the lower, 0 once; ``critical`` makes a hit a critical
    hit; ``affected_by`` lists each part for the record (CMB-MOD-2)."""

    lean: int = 0
    critical: bool = False
    affected_by: tuple[str, ...] = ()


def _word(edge: int) -> str:
    return "advantage" if edge > 0 else "disadvantage"


def attack_edge(game: Game, attacker: Sequence[str], target: Sequence[str],
                reach: str) -> Edge:
    """CMB-COND-1/2, OQ-CMB-8: the attacker's own conditions that give an ``edge`` on the
    ``checks`` they list (``attack``, or the attack check's own id), and the target's
    ``against`` entries for this ``reach`` (an entry without a reach holds from anywhere).
    Several edges combine by the ruleset's advantage rule, the one every check follows
    (ITM-CHK-5/6): any advantage and any disadvantage cancel, and only a ruleset that rolls
    twice leans at all. A ``crit`` entry makes a hit critical."""
    combat = game.ruleset.combat
    checks = {ATTACK}
    if combat is not None and combat.attack is not None:
        checks.add(combat.attack.check)
    up = down = 0
    critical = False
    parts: list[str] = []
    for ident in dict.fromkeys(attacker):
        keys = fight_keys(game, ident)
        if keys is None or not keys.edge or checks.isdisjoint(keys.checks):
            continue
        up, down = up + (keys.edge > 0), down + (keys.edge < 0)
        parts.append(f"{label_of(game, ident)}: {_word(keys.edge)}")
    for ident in dict.fromkeys(target):
        keys = fight_keys(game, ident)
        for entry in keys.against if keys is not None else ():
            if entry.reach is not None and entry.reach != reach:
                continue
            where = f"{label_of(game, ident)}" + (f" ({entry.reach})" if entry.reach else "")
            if entry.edge:
                up, down = up + (entry.edge > 0), down + (entry.edge < 0)
                parts.append(f"{where}: {_word(entry.edge)}")
            if entry.crit:
                critical = True
                parts.append(f"{where}: critical")
    res = game.ruleset.resolution
    rolls_twice = isinstance(res, SumResolution) and res.advantage
    lean = Applied(advantage=up, disadvantage=down).lean(None, rolls_twice)
    return Edge(lean, critical, tuple(parts))


def immunities(game: Game, names: Iterable[str]) -> dict[str, str]:
    """ITM-DEF-1, ITM-ARM-5: the conditions a bearer of ``names`` is immune to, each with the
    label of what grants it — here the ``conditionImmunities`` of its own fight conditions.

    Worn items, levels and sheet rows grant immunities too (ITM-ARM-5, ITM-HIDES):
    :func:`engine.rules.armour.defences_of` gathers those, and a weapon's ``onHit`` reads a foe's,
    but they are not merged in here, so ``op="condition"`` does not refuse them."""
    found: dict[str, str] = {}
    for ident in dict.fromkeys(names):
        keys = fight_keys(game, ident)
        for immune in (keys.condition_immunities or ()) if keys is not None else ():
            found.setdefault(immune, label_of(game, ident))
    return found


def count_down(condition: FightCondition) -> FightCondition | None:
    """CMB-COND-6: one round off a condition that lasts ``rounds``; None when it ends (at 0).
    A condition without rounds lasts until removed or saved."""
    if condition.rounds is None:
        return condition
    if condition.rounds <= 1:
        return None
    return condition.model_copy(update={"rounds": condition.rounds - 1})


def fight_over(state: State) -> State:
    """The state once the fight is over: no encounter, and each hero's conditions that counted
    rounds or waited for a save end with it (their clock was the fight's rounds); what it
    bears until removed stays on its sheet."""
    encounter = state.encounter
    if encounter is None:
        return state
    state = state.model_copy(update={"encounter": None})
    for combatant in encounter.combatants:
        timed = {c.name for c in combatant.conditions if c.rounds is not None or c.save}
        hero = state.character_index(combatant.name) if combatant.side == "party" else None
        if not timed or hero is None:
            continue
        character = state.characters[hero]
        kept = tuple(c for c in character.conditions if c not in timed)
        if kept != character.conditions:
            state = state.with_character(hero, character.model_copy(
                update={"conditions": kept}))
    return state
