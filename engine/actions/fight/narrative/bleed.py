"""The bleeding-out clock of a narrative fight (docs/rules/combat.md#b7-overexertion "far over: you
collapse and are bleeding to death", D100-PARTY-7 "bare hands can only stop the bleeding",
OQ-D100-12): a hero down in a narrative fight bleeds out, and dies once
``combat.narrative.bleedRounds`` (default 3) full rounds have passed since the round it fell in,
unless it was healed above 0 by then (an item's heal, D100-PARTY-7) or an ally stopped the bleeding
with bare hands (``[combat: op="defend" how="tend" for="<ally>"]``, :func:`stanch`). The clock runs
in the fight's rounds only: a fight that ends stops it (what happens to a downed hero after the
fight is the GM's story and CMB-HP0's rules)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ....rules import reasons
from ....rules.context import TurnContext
from ....rules.fight.formula import standing
from ....rules.fight.narrative import bleeds_out
from ....rules.fight.zero_hp import dead_condition, is_dead, zero_meaning
from ....rules.game import Game
from ....rules.state import Bleeding, Encounter, State
from ...answers import Answer

"""The condition a hero that bled out gets where the ruleset names no ``combat.zeroHp.dead``."""


def rounds(game: Game) -> int | None:
    """``combat.narrative.bleedRounds`` (default 3; null: no clock)."""
    combat = game.ruleset.combat
    narrative = combat.narrative if combat is not None else None
    return narrative.bleed_rounds if narrative is not None else 3


def died(encounter: Encounter, name: str) -> bool:
    """Whether ``name`` bled out in this fight (healing does not raise it)."""
    return any(b.died and b.who.casefold() == name.casefold() for b in encounter.bleeding)


def _bleeds(game: Game, state: State, name: str) -> bool:
    """Whether a downed hero bleeds: not one that died already, nor one a condition or the
    world makes stable at 0 (CMB-HP0-4: "the bleeding stops")."""
    who = state.character_index(name)
    if who is None:
        return False
    conditions = state.characters[who].conditions
    return not is_dead(game, conditions) and zero_meaning(game, conditions) != "stable"


def stanch(game: Game, state: State, encounter: Encounter, tender: str,
           named: str) -> Encounter | tuple[str, str]:
    """D100-PARTY-7: ``tender`` stops the bleeding of the downed ally ``named`` with bare
    hands — it stays down, but its clock stops (the encounter after). A refusal (code,
    words) when ``named`` is no ally in the fight, stands, or bleeds no more (stanched
    already, or dead)."""
    index = encounter.find(named)
    me = encounter.find(tender)
    if index is None or me is None or index == me or \
            encounter.combatants[index].side != encounter.combatants[me].side:
        return (reasons.UNKNOWN_COMBATANT, f'Tend whom? for="{named[:60]}" names no ally of '
                f"{tender} in the fight; nothing was done.")
    ally = encounter.combatants[index]
    if standing(game, state, ally):
        return (reasons.NOT_BLEEDING, f"{ally.name} is standing: there is no bleeding to "
                "stop; nothing was done.")
    found = next((b for b in encounter.bleeding if b.who == ally.name), None)
    if (found is not None and (found.stanched or found.died)) or (
            found is None and not _bleeds(game, state, ally.name)):
        why = "died" if found is not None and found.died else "is not bleeding"
        return (reasons.NOT_BLEEDING, f"{ally.name} {why}: there is no bleeding to stop; "
                "nothing was done.")
    kept = tuple(b for b in encounter.bleeding if b.who != ally.name)
    since = found.since if found is not None else encounter.round
    return encounter.model_copy(update={"bleeding": (
        *kept, Bleeding(who=ally.name, since=since, stanched=True))})


def bleed(game: Game, before: State, state: State, answers: list[Answer], ctx: TurnContext,
          in_round: Callable[[Answer], bool]) -> tuple[State, list[Answer]]:
    """At the end of a reply with a round of a narrative fight in it: the clocks of heroes
    healed above 0 are dropped, every hero down now and not on a clock starts one at this
    round, and a hero whose clock ran out (:func:`bleeds_out`) dies — the dead condition on
    its sheet, ``dead:<hero>`` in the events and ``bled`` in the record of the round's last
    answered action, whose text says so."""
    encounter = state.encounter
    length = rounds(game)
    if encounter is None or encounter.turn != ctx.turn_key or length is None:
        return state, answers
    if before.encounter is not None and before.encounter.turn == ctx.turn_key:
        return state, answers
    clocks: list[Bleeding] = []
    for clock in encounter.bleeding:
        index = encounter.find(clock.who)
        if clock.died or (index is not None and not standing(
                game, state, encounter.combatants[index])):
            clocks.append(clock)
    for combatant in encounter.combatants:
        if combatant.side == "party" and not standing(game, state, combatant) \
                and all(c.who != combatant.name for c in clocks) \
                and _bleeds(game, state, combatant.name):
            clocks.append(Bleeding(who=combatant.name, since=encounter.round))
    bled: list[dict[str, Any]] = []
    condition = dead_condition(game)
    for number, clock in enumerate(clocks):
        if clock.died or clock.stanched or not bleeds_out(encounter.round, clock.since,
                                                          length):
            continue
        clocks[number] = clock.model_copy(update={"died": True})
        bled.append({"who": clock.who, "since": clock.since})
        who = state.character_index(clock.who)
        assert who is not None
        character = state.characters[who]
        if condition not in character.conditions:
            state = state.with_character(who, character.model_copy(update={
                "conditions": (*character.conditions, condition)}))
    encounter = encounter.model_copy(update={"bleeding": tuple(clocks)})
    state = state.model_copy(update={"encounter": encounter})
    last = next((i for i in range(len(answers) - 1, -1, -1)
                 if in_round(answers[i])), None)
    if not bled or last is None:
        return state, answers
    told = answers[last]
    answers = list(answers)
    names = [row["who"] for row in bled]
    record = {**told.record, "bled": bled, "events": [
        *told.record.get("events", []), *(f"dead:{name}" for name in names)]}
    text = " ".join(f"{name} bleeds out and dies." for name in names)
    answers[last] = told.model_copy(update={"text": f"{told.text} {text}", "record": record})
    return state, answers
