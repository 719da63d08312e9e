"""A foe leaving the heroes' reach, and the reactions it sets off
(docs/rules/combat.md#a8-reactions: CMB-REACT-1..6, OQ-CMB-11's ``leave`` trigger; ITM-MODE-9,
ITM-OFF-6).

Where the foes stand belongs to the story (CMB-GRID-4), so nothing in an ``[attack:]`` says a
foe moved away; the GM says so: ``[combat: op="leave" who="Goblin 1"]`` (``how="disengage"``
or ``"teleport"`` provoke nothing, CMB-REACT-6). It acts among the round's attacks, in its
initiative place. Each standing hero whose standing order on ``leave`` names an entry it
chose that reacts to ``leave`` (``"react": {"on": "leave"}``), who has not reacted this round
and can act and pay the entry's cost, strikes the leaving foe at once with its first worn
weapon, unchanged and in its default mode (ITM-MODE-9), never as an off-hand strike
(ITM-OFF-6) and spending none of its turn's actions (CMB-REACT-1/5: it counts as
``reaction``). The strike is every other strike (:func:`engine.actions.fight._strike`):
its dice are keyed by the round, the hero and its strike number, so a swipe rolls the same."""

from __future__ import annotations

from typing import Any

from tagparse import Tag

from ...rules import reasons
from ...rules.abilities import chosen_ability, entry_of, paid, reacted_this_round
from ...rules.context import TurnContext
from ...rules.fight.conditions import held_back
from ...rules.fight.formula import standing
from ...rules.game import Game
from ...rules.state import State
from ...ruleset.abilities import ability_of
from ..answers import Answer, accepted
from ..attrs import FIGHTER, TEXT
from ..declare import ROUND, Refusal, Request, action, attr, read_request, request
from ..examples import FOE_NAMES, Party, example
from .arms import PLAIN, ready
from .encounter import budget_of, encounter_on, refuse, round_of, weapon_of
from .formula import hero_strike
from .requests import FormulaStrike

LEAVE = "leave"  # OQ-CMB-11: the trigger
REACTION = "reaction"  # what a reaction's strike counts as in ``spent`` (no turn action)
HOWS = ("move", "disengage", "teleport")


@request
class Leave(Request):
    """A foe leaves the reach of the heroes near it (CMB-REACT-4/6, OQ-CMB-11)."""

    who: str = attr(FIGHTER, "the foe that leaves", shown="required")
    how: str = attr(TEXT, "move, disengage or teleport (the last two provoke nothing, "
                    "CMB-REACT-6)", shown="move")


RECORD = {
    "round": "the encounter's round", "who": "the foe that left", "how": "move, disengage "
    "or teleport", "reactions": "each hero's reaction strike (CMB-REACT-1..5, ITM-MODE-9): "
    "who, use, ref, on, paid, and the strike's record (target, weapon, rolls, total, "
    "defence, result, damage, hp, …)", "events": "the strikes' events (CMB-CARD-1)",
}


def _orders(game: Game, state: State, hero: int) -> list[tuple[str, str, str]]:
    """The hero's standing orders on ``leave`` it can carry out: (ref, label, paid) of the
    first whose entry reacts to ``leave`` and whose cost it can pay — paying is left to the
    caller."""
    character = state.characters[hero]
    found = []
    for order in character.reactions:
        if order.on != LEAVE or entry_of(game, order.use) is None:
            continue
        chosen = chosen_ability(game, character, order.use)
        react = chosen.ability.react if chosen is not None else None
        if chosen is None or react is None or react.on != LEAVE:
            continue
        found.append((chosen.ref, chosen.entry.label, order.use))
    return found


def _teach(game: Game, party: Party) -> list[str]:
    """The GM's line for a foe leaving, where some entry of the ruleset reacts to it."""
    for catalog in game.ruleset.catalogs:
        for entry in catalog.entries:
            ability = ability_of(entry.mechanics)
            if ability is not None and ability.react is not None and ability.react.on == LEAVE:
                return ["- A foe moves away from the heroes near it: "
                        + example("combat", op="leave", who=FOE_NAMES[0])
                        + ' (how="disengage" or how="teleport" provokes nothing); the '
                        "heroes' standing reactions strike it by themselves."]
    return []


@action("combat", "leave", Leave, phase=ROUND, record=RECORD, teach=_teach,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.MISSING_ATTRIBUTE, reasons.TARGET_DOWN))
def leave(game: Game, state: State, request: Leave, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="leave" who="<foe>" how=]``: the heroes' reactions on ``leave`` strike
    the foe leaving (CMB-REACT-1..6, ITM-MODE-9, ITM-OFF-6)."""
    encounter = encounter_on(game, state)
    if isinstance(encounter, Refusal):
        return refuse(state, request.tag, encounter)
    if not request.who.strip():
        return refuse(state, request.tag, Refusal(
            reasons.MISSING_ATTRIBUTE, 'Name the foe that leaves: who="<foe>".'))
    at = encounter.find(request.who)
    if at is None:
        return refuse(state, request.tag, Refusal(
            reasons.UNKNOWN_COMBATANT, f'Nobody called "{request.who.strip()[:60]}" is in the '
            "fight; nothing was done."))
    foe = encounter.combatants[at]
    if foe.side != "foes":
        return refuse(state, request.tag, Refusal(
            reasons.UNSUPPORTED, f"{foe.name} is a hero: where heroes go is the story's, and "
            "foes' reactions are not answered by this version of gmtags; nothing was done."))
    if not standing(game, state, foe):
        return refuse(state, request.tag, Refusal(
            reasons.TARGET_DOWN, f"{foe.name} is down and goes nowhere; nothing was done."))
    notes: list[str] = []
    how = request.how.strip().casefold() or "move"
    if how not in HOWS:
        notes.append(f'how="{request.how[:20]}" is not move, disengage or teleport: move was '
                     "used")
        how = "move"
    encounter = round_of(encounter, ctx)
    state = state.model_copy(update={"encounter": encounter})
    record: dict[str, Any] = {"round": encounter.round, "who": foe.name, "how": how}
    text = f"{foe.name} leaves the heroes' reach" + (f" ({how})" if how != "move" else "") + "."
    rows: list[dict[str, Any]] = []
    events: list[str] = []
    if how == "move":  # CMB-REACT-6: a disengage or a teleport provokes nothing
        for combatant in encounter.combatants:
            now = state.encounter
            if now is None or not (now.combatants[now.find(foe.name) or 0].hp):
                break  # the fight is over, or the foe fell to an earlier reaction
            state, row, said = _react(game, state, combatant.name, foe.name, ctx)
            if row is not None:
                rows.append(row)
                events += row.pop("events", [])
                text += " " + said
    if rows:
        record["reactions"] = rows
    if events:
        record["events"] = events
    return state, accepted(request.tag, text, record, tuple(notes))


def _react(game: Game, state: State, name: str, foe: str,
           ctx: TurnContext) -> tuple[State, dict[str, Any] | None, str]:
    """One hero's reaction strike on the leaving foe, if it is a hero whose order on
    ``leave`` can be carried out now; else nothing."""
    encounter = state.encounter
    assert encounter is not None
    me = encounter.find(name)
    hero = state.character_index(name)
    if me is None or hero is None or encounter.combatants[me].side != "party":
        return state, None, ""
    combatant = encounter.combatants[me]
    character = state.characters[hero]
    if not standing(game, state, combatant) or reacted_this_round(combatant, encounter.round) \
            or held_back(game, character.conditions):  # CMB-REACT-2, CMB-TYPE-2
        return state, None, ""
    for ref, label, use in _orders(game, state, hero):
        chosen = chosen_ability(game, character, use)
        assert chosen is not None
        armed = weapon_of(game, state, hero, None)  # ITM-MODE-9: the first worn weapon as it is
        if isinstance(armed, Refusal) or ready(game, state, hero, armed, None) is not None:
            continue  # nothing to strike with now (nothing loaded, no ammunition)
        bought = paid(game, state, character, chosen.ability)
        if isinstance(bought, str):
            continue
        payer, taken = bought
        budget = budget_of(game, "", armed[2] if armed is not None else None)
        if isinstance(budget, Refusal):
            continue
        raw = f'[attack: who="{name}" target="{foe}" range="near"]'
        tag = Tag("attack", (("who", name), ("target", foe), ("range", "near")), 0, len(raw),
                  raw, None)
        strike = read_request(FormulaStrike, tag, game, state)
        if isinstance(strike, Refusal):
            continue
        state = state.with_character(hero, payer)
        target = encounter.find(foe)
        assert target is not None
        after, answer = hero_strike(game, state, encounter, strike, ctx, (hero, me), target, armed,
                                budget, PLAIN)  # ITM-OFF-6: never the off hand
        if not answer.ok:
            continue
        fight = after.encounter
        if fight is not None:  # CMB-REACT-1/5: no turn action spent, the round's reaction
            combatants = list(fight.combatants)
            mine = combatants[me]
            combatants[me] = mine.model_copy(update={
                "spent": (*mine.spent[:-1], REACTION), "reacted": fight.round, "guard": 0})
            after = after.model_copy(update={"encounter": fight.model_copy(
                update={"combatants": tuple(combatants)})})
        row: dict[str, Any] = {"who": name, "use": label, "ref": ref, "on": LEAVE}
        if taken:
            row["paid"] = ", ".join(taken)
        row.update({k: v for k, v in answer.record.items()
                    if k not in ("slot", "attacker", "budget")})
        return after, row, f"{name} reacts: {label}. {answer.text}"
    return state, None, ""
