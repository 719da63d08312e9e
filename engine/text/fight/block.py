"""The COMBAT block: what the GM sees of the fight on now (docs/design.md#combat-prompt;
CMB-TURN-13: the order with each combatant's initiative is an engine output). Each combatant
in initiative order with its hit points, defence, conditions and the attacks it has in the
round the GM writes next, then the combat lines of the instructions (:func:`teach_fight`).
Nothing here when no fight is on: the instructions then say only how to start one."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ...actions.examples import party_of
from ...actions.fight import teach_fight
from ...actions.use import pool_max
from ...dice import Stream
from ...rules.abilities import abilities_of, entry_of
from ...rules.fight.conditions import held_back
from ...rules.fight.formula import attacks_left, hero_defence
from ...rules.fight.pool import pool_parts
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...rules.state import Character, Combatant, Encounter, FightCondition, State
from ...rules.tracks import health_bar, track_max, track_value
from ...rules.weapons import first_worn_weapon
from ...ruleset.ruleset import NARRATIVE, OUTCOME
from ...ruleset.sheet import Track
from .narrative import narrative_block
from .outcome import outcome_block

BLOCKS: dict[str, Callable[[Game, State, bool], str]] = {
    NARRATIVE: narrative_block, OUTCOME: outcome_block}
"""The kinds of combat whose COMBAT block is their own (narrative fights; outcome fights, with
their harm levels); the others show formula combat's."""


def combat_block(game: Game, state: State, teach: bool = True) -> str:
    """The COMBAT block of ``state``'s fight, or ``""`` out of a fight (``teach``: with the
    combat lines of the instructions under it; the stage may put those up front instead)."""
    encounter = state.encounter
    if encounter is None:
        return ""
    own = BLOCKS.get(game.fight.kind)
    if own is not None:
        return own(game, state, teach)
    if game.ruleset.combat is None:
        return ""
    stream = Stream(state.seed, (encounter.round,), "combat/prompt")
    fought = (f"round {encounter.round} fought" if encounter.round
              else "no attack yet")
    lines = [f"COMBAT ({fought}; the next reply with an attack is round "
             f"{encounter.round + 1})", "Order, highest initiative first:"]
    for place, combatant in enumerate(encounter.combatants, 1):
        lines.append(f"{place}. " + combatant_line(game, state, encounter, combatant, stream))
    return "\n".join([*lines, *(teach_fight(game, party_of(state)) if teach else [])])


def combatant_line(game: Game, state: State, encounter: Encounter, combatant: Combatant,
                   stream: Stream) -> str:
    """One combatant as the GM sees it: who, initiative, hit points, defence, conditions and
    the attacks it has next round (``Goblin 1 (foe: standard, tier 1; initiative 14): hp
    9/14; defence 13``); a felled foe or a downed hero says so and nothing more."""
    if combatant.side == "foes":
        kind = [combatant.role] if combatant.role else []
        if combatant.tier is not None:
            kind.append(f"tier {combatant.tier}")
        shown = f": {', '.join(kind)}" if kind else ""
        who = f"{combatant.name} (foe{shown}; initiative {combatant.initiative})"
        hp = f"hp {combatant.hp or 0}/{combatant.hp_max or 0}"
        if not combatant.hp:
            return f"{who}: FELLED ({hp})"
        parts = [hp, f"defence {combatant.defence or 0}", *pool_parts(combatant)]  # ITM-HARD-1
        names = tuple(c.name for c in combatant.conditions)
        parts += _conditions(game, names, combatant.conditions)
        stopped = held_back(game, names)
        if stopped:
            parts.append(f"cannot act ({', '.join(stopped)})")
        return f"{who}: " + "; ".join(parts)
    who = f"{combatant.name} (hero; initiative {combatant.initiative})"
    index = state.character_index(combatant.name)
    if index is None:  # a hero who left the party: only the fight remembers it
        return who
    character = state.characters[index]
    health = health_of(game, state, character)
    if health is not None and health.now == 0:
        return f"{who}: DOWNED ({health})"
    parts = [str(health)] if health is not None else []
    parts.append(f"defence {hero_defence(game, state, index)}")
    parts += pool_parts(combatant)  # ITM-HARD-1
    parts += _conditions(game, character.conditions, combatant.conditions)
    stopped = held_back(game, character.conditions)
    if stopped:
        parts.append(f"cannot act ({', '.join(stopped)})")
    else:
        parts.append(_budget_text(game, SheetView(game, character, state), stream))
    parts += _abilities_text(game, character, combatant)
    return f"{who}: " + "; ".join(parts)


def _abilities_text(game: Game, character: Character, combatant: Combatant) -> list[str]:
    """What the hero sustains (CMB-SUS-8: the GM sees it), the abilities it can use
    on foes (``[attack: use=]``) and its standing reactions (CMB-REACT-3)."""
    parts = []
    if combatant.sustains is not None:
        found = entry_of(game, combatant.sustains)
        parts.append(f"sustaining {found.label if found is not None else combatant.sustains}")
    chosen = abilities_of(game, character)
    usable = [c.entry.label for c in chosen if not c.ability.is_reaction]
    if usable:
        parts.append(f"abilities: {', '.join(usable)}")
    labels = {c.ref: c.entry.label for c in chosen}
    orders = [f"{labels.get(o.use, o.use)} when {REACTION_WORDS[o.on]}"
              for o in character.reactions]
    if orders:
        parts.append(f"reacts: {', '.join(orders)}")
    return parts


REACTION_WORDS = {"hit": "hit", "spell": "a spell is cast", "leave": "someone leaves"}


@dataclass(frozen=True, slots=True)
class Health:
    """A hero's hit points: the bar's label, the points now and at most, temporary ones."""

    label: str
    now: int
    most: int
    temporary: int = 0

    def __str__(self) -> str:
        extra = f" (+{self.temporary} temporary)" if self.temporary else ""
        return f"{self.label} {self.now}/{self.most}{extra}"


def health_of(game: Game, state: State, character: Character) -> Health | None:
    """A hero's hit points as the SHEET block reads them: the ruleset's health pool (with its
    temporary points, ITM-OUT-4), else its health track; None for a ruleset with neither (a
    wound track counts marks, not points)."""
    bar = health_bar(game)
    if bar is None or (isinstance(bar, Track) and bar.kind != "health"):
        return None
    if isinstance(bar, Track):
        return Health(bar.label, track_value(game, character, state, bar),
                      track_max(game, character, state, bar))
    most = pool_max(game, character, state, bar.id)
    return Health(bar.label, character.pools.get(bar.id, most), most,
                  character.pools.get(f"{bar.id}:temporary", 0))


def _budget_text(game: Game, view: SheetView, stream: Stream) -> str:
    """CMB-TURN-9/16: the attacks each turn action allows a hero in the round the GM writes
    next (``attacks: 1 (Action)``). That round starts afresh: every attack of the reply
    shown last was spent in the round before it, so nothing is spent yet."""
    combat = game.ruleset.combat
    assert combat is not None
    weapon = None  # ITM-WPN-20: the strikes of the weapon an attack is made with by default
    if view.character is not None and view.state is not None:
        armed = first_worn_weapon(game, view.state, view.character)
        weapon = armed[2] if armed is not None else None
    counts = [(action.name, attacks_left(
        action, view, stream, (),
        strikes=weapon.strikes if weapon is not None and weapon.budget == action.id else None))
        for action in combat.turn_actions]
    shown = [f"{count} ({name})" for name, count in counts if count]
    return "attacks: " + ", ".join(shown) if shown else "no attacks"


def _conditions(game: Game, names: tuple[str, ...],
                lasting: tuple[FightCondition, ...]) -> list[str]:
    """``conditions: Paralyzed (save dex DC 13), Prone (2 rounds)`` (labels, each once, with
    what the fight counts for each: rounds left, the save and its DC), or nothing."""
    if not names:
        return []
    labels = {c.id: c.label for c in game.ruleset.conditions}
    timed = {c.name: c for c in lasting}
    shown = []
    for name in dict.fromkeys(names):
        found = timed.get(name)
        extra = []
        if found is not None and found.rounds is not None:
            extra.append(f"{found.rounds} round{'s' if found.rounds != 1 else ''}")
        if found is not None and found.save and found.dc is not None:
            extra.append(f"save {found.save} DC {found.dc}")
        shown.append(labels.get(name, name) + (f" ({', '.join(extra)})" if extra else ""))
    return ["conditions: " + ", ".join(shown)]
