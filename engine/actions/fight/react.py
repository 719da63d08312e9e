"""What happens to a hero struck by a foe besides the damage (docs/rules/combat.md#a8-reactions,
docs/rules/combat.md#a9-sustained-abilities-concentration): its
standing reaction to being hit, fired by the engine before the hit is confirmed
(CMB-REACT-1..7, OQ-CMB-11), and the ``combat.sustain`` save of a hero sustaining an ability
when the strike damaged it (CMB-SUS-4..7, OQ-CMB-12). A foe's strike
(:func:`engine.actions.fight._foe_attack`) calls these; they never stop to ask anyone."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...rules.abilities import chosen_ability, entry_of, paid, reacted_this_round, sustain_ended
from ...rules.checks.read import Rolled
from ...rules.context import TurnContext
from ...rules.fight.conditions import held_back
from ...rules.formula import evaluate, sheet_reader
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...rules.state import Encounter, State
from ...ruleset.fight import DAMAGE
from ..checks.pipeline import roll_check
from .judge import rejudge

HIT = "hit"  # CMB-REACT-4, OQ-CMB-11: the trigger of a foe's strike that hits


@dataclass(frozen=True, slots=True)
class Reacted:
    """A reaction that fired: the state and encounter after it (its cost paid, the round of
    the reaction and the defence it added kept), the defence and result the hit is confirmed
    with, the roll as it now reads (a symbol roll with the setback dice the defence added),
    the record's ``reaction`` and the words."""

    state: State
    encounter: Encounter
    defence: int
    result: str
    rolled: Rolled
    record: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def react_to_hit(game: Game, state: State, encounter: Encounter, target: int, rolled: Rolled,
                 defence: int, result: str, ctx: TurnContext,
                 on: str = HIT) -> Reacted | None:
    """CMB-REACT-1..7: a foe's strike has hit hero ``target`` (its ``result`` not yet
    confirmed): the hero's standing order on ``hit`` is used, if it has one, has not reacted
    this round, can act and can pay the ability's cost; its ``react.defence`` is added to the
    hero's defence before the hit is confirmed — the strike's ``rolled`` read again by the
    fight's own hit rule (:func:`engine.actions.fight_judge.rejudge`: a total, successes, the
    roll-against number, added setback dice) — and stays for the rest of the round. None when
    no reaction fires."""
    if result == "miss":
        return None
    combatant = encounter.combatants[target]
    hero = state.character_index(combatant.name) if combatant.side == "party" else None
    if hero is None or reacted_this_round(combatant, encounter.round):
        return None
    character = state.characters[hero]
    if held_back(game, character.conditions):  # CMB-TYPE-2: no abilities either
        return None
    for order in character.reactions:
        found = entry_of(game, order.use) if order.on == on else None
        chosen = chosen_ability(game, character, order.use) if found is not None else None
        react = chosen.ability.react if chosen is not None else None
        if chosen is None or react is None or react.on != on:
            continue
        bought = paid(game, state, character, chosen.ability)
        if isinstance(bought, str):
            continue  # its pool is spent: the order cannot be carried out this time
        payer, taken = bought
        view = SheetView(game, payer, state)
        added = evaluate(react.defence, sheet_reader(view), ctx.for_tag(0).stream(
            "combat", f"react/{combatant.name.casefold()}")).value if react.defence else 0
        judged = rejudge(game, rolled, result, defence, defence + added, ctx.for_tag(0).stream(
            "combat", f"react/{combatant.name.casefold()}/setback"))
        combatants = list(encounter.combatants)
        combatants[target] = combatant.model_copy(update={"reacted": encounter.round,
                                                          "guard": added})
        encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
        state = state.with_character(hero, payer).model_copy(update={"encounter": encounter})
        record: dict[str, Any] = {"who": combatant.name, "use": chosen.entry.label,
                                  "ref": chosen.ref, "on": on}
        if taken:
            record["paid"] = ", ".join(taken)
        words = f"; {combatant.name} reacts: {chosen.entry.label}"
        if added:
            record.update({"defence": defence + added, "added": added, "before": result,
                           **judged.record})
            words += f", defence {defence} → {defence + added}{judged.text}"
        return Reacted(state, encounter, defence + added, judged.result, judged.rolled, record,
                       words)
    return None


@dataclass(frozen=True, slots=True)
class Sustained:
    """What a damaging strike did to what its target sustains: the state after, the record's
    ``sustain`` and the words (empty when it sustains nothing)."""

    state: State
    record: dict[str, Any] = field(default_factory=dict)
    text: str = ""


def _label(game: Game, ref: str) -> str:
    entry = entry_of(game, ref)
    return entry.label if entry is not None else ref


def _ended(game: Game, state: State, index: int, ref: str,
           why: str) -> tuple[State, dict[str, Any], str]:
    encounter = state.encounter
    assert encounter is not None
    state, gone = sustain_ended(state, encounter, index)
    record: dict[str, Any] = {"ended": True, "why": why}
    words = f" {encounter.combatants[index].name} stops sustaining {_label(game, ref)}"
    if gone:
        record["removed"] = gone
        words += f" ({', '.join(gone)} ends)"
    return state, record, words + "."


def sustain_after_damage(game: Game, state: State, index: int, damage: int, downed: bool,
                         ctx: TurnContext, purpose: str) -> Sustained:
    """CMB-SUS-4..7: combatant ``index`` of ``state``'s fight took ``damage`` (temporary points
    that soaked it count, ITM-OUT-4). Downed, what it sustains ends (CMB-SUS-6); else, hit
    for any damage, it makes the ``combat.sustain`` save against its ``dc`` read with
    ``@damage`` (Classic d20: max(10, ⌊damage/2⌋), OQ-CMB-12) and a failure ends it (CMB-SUS-4/5).
    Either way everything it applied leaves everyone (CMB-SUS-7). Dice by ``purpose`` (the
    strike's key), so a swipe rolls the same."""
    encounter = state.encounter
    combat = game.ruleset.combat
    if encounter is None or combat is None or damage <= 0:
        return Sustained(state)
    combatant = encounter.combatants[index]
    ref = combatant.sustains
    hero = state.character_index(combatant.name) if combatant.side == "party" else None
    if ref is None or hero is None:
        return Sustained(state)
    if downed:
        state, ended, words = _ended(game, state, index, ref, "downed")
        return Sustained(state, {"use": _label(game, ref), **ended}, words)
    rule = combat.sustain
    if rule is None:  # the ruleset gives no save: nothing but being downed ends it
        return Sustained(state)
    view = SheetView(game, state.characters[hero], state)
    stream = ctx.for_tag(0).stream("combat", f"{purpose}/sustain-dc")
    dc = evaluate(rule.dc, sheet_reader(view, {DAMAGE: damage}), stream).value
    kind = "save" if any(s.id == rule.save for s in game.ruleset.sheet.saves) else "ability"
    state, checked = roll_check(game, state, hero, {kind: rule.save, "dc": str(dc)},
                                ctx.for_tag(0), f"{purpose}/sustain")
    saved = checked.ok and checked.success
    record: dict[str, Any] = {"use": _label(game, ref), "save": rule.save, "dc": dc,
                              "rolls": checked.record.get("rolls", []),
                              "total": checked.record.get("total", 0), "saved": saved}
    sheet = game.ruleset.sheet
    save = next((r.label for r in (*sheet.saves, *sheet.abilities) if r.id == rule.save),
                rule.save)
    shown = f"({save} {record['total']} vs {dc})"
    words = (f" {combatant.name} keeps sustaining {_label(game, ref)} {shown}." if saved else
             f" {combatant.name} fails to sustain {_label(game, ref)} {shown}.")
    if not saved:
        state, ended, more = _ended(game, state, index, ref, "failed")
        record.update(ended)
        words += more
    return Sustained(state, record, words)
