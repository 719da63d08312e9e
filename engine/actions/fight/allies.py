"""A hero's ability aimed at heroes of the fight (the ally-targeted abilities of
docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary; ITM-OUT-3/6's heal and buff): an
entry whose ``mechanics`` say ``targets: "ally"`` (the user too) or ``"self"`` (the user alone),
used with ``[attack: who="Ada" use="Cure Wounds" target="Brannoc"]``.

Nothing is rolled against an ally: the ``amount`` is rolled once and heals each target (never
above its most; a dead hero, CMB-HP0-3, is not raised), and each condition it ``applies`` lands
on each target's sheet and in the fight — for its rounds, and marked as the caster's when it
is sustained, so that it leaves everyone when the sustaining ends (CMB-SUS-2/7). Its cost,
budget and sustaining are those of every ability (:mod:`engine.actions.fight_abilities`)."""

from __future__ import annotations

from typing import Any

from ...rules import reasons
from ...rules.abilities import Chosen
from ...rules.context import TurnContext
from ...rules.fight.conditions import label_of
from ...rules.fight.formula import hero_health, strike
from ...rules.fight.zero_hp import is_dead
from ...rules.formula import sheet_reader
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...rules.state import Encounter, FightCondition, State
from ...rules.tracks import health_pool
from ...ruleset import Formula, parse_formula
from ..declare import Refusal
from .encounter import target_names


def ally_targets(state: State, encounter: Encounter, me: int, named: str, most: int,
                 label: str, alone: bool) -> list[int] | Refusal:
    """``target=``: heroes of the fight, comma-separated, each once, at most ``most`` (the user
    without any; only the user for a ``self`` ability). A downed hero may be aimed at (a heal
    stands it up again)."""
    found: list[int] = []
    for name in target_names(named):
        index = encounter.find(name)
        if index is None:
            return Refusal(reasons.UNKNOWN_COMBATANT, f'Nobody called "{name[:60]}" is in the '
                           "fight; nothing was done.")
        if encounter.combatants[index].side != "party":
            return Refusal(reasons.UNSUPPORTED, f"{label} is aimed at heroes, and "
                           f"{encounter.combatants[index].name} is a foe; nothing was done.")
        if alone and index != me:
            return Refusal(reasons.UNSUPPORTED, f"{label} is used on its user alone; nothing "
                           "was done.")
        if index not in found:
            found.append(index)
    if len(found) > most:
        return Refusal(reasons.TOO_MANY_TARGETS, f"{label} is aimed at {most} hero"
                       f"{'es' if most != 1 else ''} at most, not {len(found)}; nothing was "
                       "done.")
    return found or [me]


def _mend(game: Game, state: State, who: int, amount: int) -> tuple[State, int, int, int]:
    """ITM-OUT-3: ``amount`` onto hero ``who``'s health pool or health track, never above its
    most; a dead hero is not healed. Returns the state, healed, hit points after, most."""
    health = hero_health(game, state, who)
    if health is None:
        return state, 0, 0, 0
    character = state.characters[who]
    if is_dead(game, character.conditions):
        return state, 0, health.hp, health.hp_max
    after = min(health.hp + max(amount, 0), max(health.hp_max, health.hp))
    pool = health_pool(game)
    if pool is not None:
        character = character.model_copy(update={"pools": {**character.pools, pool.id: after}})
    else:
        track = next(t for t in game.ruleset.live.tracks if t.kind == "health")
        character = character.model_copy(update={"tracks": {**character.tracks,
                                                            track.id: after}})
    return state.with_character(who, character), after - health.hp, after, health.hp_max


def on_allies(game: Game, state: State, encounter: Encounter, chosen: Chosen, me: int,
              targets: list[int], ctx: TurnContext,
              key: str) -> tuple[State, list[dict[str, Any]], list[str]]:
    """The ability on heroes ``targets``: the amount rolled once heals each, and what it
    applies lands on each (marked as the caster's while sustained). Returns the state (its
    encounter too), the rows and the words."""
    ability = chosen.ability
    caster = encounter.combatants[me]
    hero = state.character_index(caster.name)
    assert hero is not None
    reader = sheet_reader(SheetView(game, state.characters[hero], state))
    healing: int | None = None
    if ability.amount is not None:
        parts = [p for p in (ability.amount.dice, None if ability.amount.flat is None
                             else str(ability.amount.flat)) if p]
        formula = parse_formula(" + ".join(parts) or "0")
        if isinstance(formula, Formula):
            healing = strike(formula, reader, False, 0,
                             ctx.for_tag(0).stream(key, "heal")).damage
    rows: list[dict[str, Any]] = []
    words: list[str] = []
    for index in targets:
        ally = encounter.combatants[index]
        who = state.character_index(ally.name)
        assert who is not None
        row: dict[str, Any] = {"target": ally.name}
        said = ally.name
        if healing is not None:
            state, healed, hp, most = _mend(game, state, who, healing)
            row.update({"healed": healed, "hp": hp, "hpMax": most})
            said += f" heals {healed} ({hp}/{most})"
        applied = []
        for entry in ability.applies:
            lasting = FightCondition(
                name=entry.condition,
                rounds=entry.duration.rounds if entry.duration is not None else None,
                by=caster.name if ability.concentration else None)
            encounter = state.encounter or encounter
            combatants = list(encounter.combatants)
            kept = tuple(c for c in combatants[index].conditions if c.name != entry.condition)
            combatants[index] = combatants[index].model_copy(
                update={"conditions": (*kept, lasting)})
            encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
            character = state.characters[who]
            if entry.condition not in character.conditions:
                character = character.model_copy(
                    update={"conditions": (*character.conditions, entry.condition)})
            state = state.with_character(who, character).model_copy(
                update={"encounter": encounter})
            applied.append({"condition": entry.condition, **lasting.model_dump(
                exclude={"name"})})
        if applied:
            row["applied"] = applied
            said += ("; " if healing is not None else " is ") + ", ".join(
                label_of(game, a["condition"]) for a in applied)
        rows.append(row)
        words.append(said)
    if healing is not None:
        words[0] = f"{healing} healing: " + words[0]
    return state, rows, words
