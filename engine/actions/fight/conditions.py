"""``[combat: op="condition"]`` and the end of a round: conditions in a formula fight
(docs/design.md#formula-combat; CMB-COND-1..6, CMB-TYPE-2 of
docs/rules/combat.md#a6-modifiers-attack-types-and-combatants-who-cannot-act; ITM-DEF-3).

The story applies a condition to any combatant, hero or foe, for some rounds or until it is
saved against or removed; what conditions do to an attack is read in the attack itself
(:func:`engine.rules.fight_conditions.attack_edge`). After the attacks of a reply that was a
round, :func:`end_of_round` counts every combatant's conditions down and rolls their saves;
its outcome is told in the round's last answered ``[attack:]`` (record ``roundEnd``)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...rules import reasons
from ...rules.checks.read import CheckKind, CheckRead, whole
from ...rules.context import TurnContext
from ...rules.fight.conditions import (
    MAX_ROUNDS,
    count_down,
    fight_keys,
    find_condition,
    immunities,
    label_of,
    names_of,
)
from ...rules.fight.formula import held
from ...rules.game import Game
from ...rules.saves_against import save_bonus
from ...rules.sheet import SheetView, save_label
from ...rules.state import Combatant, Encounter, FightCondition, State
from ..answers import Answer, accepted, refused
from ..attrs import FIGHTER, NUMERAL, RAW, TEXT
from ..checks.pipeline import effective_resolution, resolve_request, roll_check
from ..declare import FIRST, Refusal, Request, action, attr, request
from ..examples import FOE_NAMES, Party, example
from .encounter import BY_TURNS, encounter_on, fighting

MAX_DC = 999  # dc= is held to 0..999


@request
class Afflict(Request):
    """The story applies or ends a condition in a fight (CMB-COND-1..6, CMB-TYPE-2)."""

    who: str = attr(FIGHTER, "who bears it: a hero or a foe in the fight", shown="the player")
    add: str = attr(TEXT, "the condition applied, by id or label")
    remove: str = attr(TEXT, "the condition ended, by id or label")
    rounds: str | None = attr(NUMERAL, f"how many rounds it lasts, 1 to {MAX_ROUNDS} (held to it)",
                              shown="until removed or saved")
    save: str | None = attr(RAW, "the save (or ability) that ends it, rolled at the end of "
                            "each round (CMB-COND-3)")
    dc: str | None = attr(NUMERAL, "the save's difficulty, fixed when applied (CMB-COND-4)")


def _save(game: Game, raw: str) -> str | Refusal:
    """``save=``: a save of the sheet, else an ability, by id or label."""
    sheet = game.ruleset.sheet
    wanted = raw.strip().casefold()
    for row in (*sheet.saves, *sheet.abilities):
        if wanted in (row.id.casefold(), row.label.casefold()):
            return row.id
    known = ", ".join(row.label for row in (*sheet.saves, *sheet.abilities)) or "none"
    return Refusal(reasons.UNKNOWN_SAVE, f'save="{raw.strip()[:40]}" is no save or ability of '
                   f"the sheet ({known}); nothing was done.")


def _rounds(raw: str | None, notes: list[str]) -> int | None:
    """``rounds=`` held to 1..MAX_ROUNDS, each repair noted; None (until removed or saved)
    when absent or not a whole number."""
    text = (raw or "").strip()
    if not text:
        return None
    number = whole(text)
    if number is None:
        notes.append(f'rounds="{text[:20]}" is not a whole number: it lasts until removed')
        return None
    kept = held(number, 1, MAX_ROUNDS)
    if kept != number:
        notes.append(f'rounds="{text}" was held to {kept} (1 to {MAX_ROUNDS})')
    return kept


def _lasting(game: Game, request: Afflict, notes: list[str]) -> FightCondition | Refusal:
    """The condition ``add=`` names, with its rounds and its save (CMB-COND-3/4)."""
    found = find_condition(game, request.add)
    if found is None:
        return _unknown(game, request.add)
    save = dc = None
    if request.save is not None and request.save.strip():
        save = _save(game, request.save)
        if isinstance(save, Refusal):
            return save
        dc = whole(request.dc)
        if dc is None:
            shown = f' (dc="{request.dc.strip()[:20]}" is not a whole number)' \
                if request.dc is not None and request.dc.strip() else ""
            return Refusal(reasons.MISSING_DIFFICULTY, f"Give the save a difficulty: "
                           f'dc="<number>"{shown}; nothing was done.')
        if held(dc, 0, MAX_DC) != dc:
            notes.append(f'dc="{request.dc}" was held to {held(dc, 0, MAX_DC)} (0 to {MAX_DC})')
            dc = held(dc, 0, MAX_DC)
    elif request.dc is not None and request.dc.strip():
        notes.append(f'ignored dc="{request.dc.strip()[:20]}": there is no save= to roll '
                     "against it")
    return FightCondition(name=found.id, rounds=_rounds(request.rounds, notes), save=save, dc=dc)


def _unknown(game: Game, named: str) -> Refusal:
    known = ", ".join(c.label for c in game.ruleset.conditions) or "none"
    return Refusal(reasons.UNKNOWN_CONDITION, f'"{named[:40]}" is no condition of this ruleset '
                   f"({known}); nothing was done.")


def _bearing(state: State, encounter: Encounter, index: int,
             conditions: tuple[FightCondition, ...], names: tuple[str, ...]) -> State:
    """The state with combatant ``index`` bearing ``conditions`` in the fight and, a hero,
    ``names`` on its sheet (where checks and item uses read them)."""
    combatants = list(encounter.combatants)
    combatant = combatants[index]
    combatants[index] = combatant.model_copy(update={"conditions": conditions})
    state = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})
    hero = state.character_index(combatant.name) if combatant.side == "party" else None
    if hero is not None and state.characters[hero].conditions != names:
        state = state.with_character(hero, state.characters[hero].model_copy(
            update={"conditions": names}))
    return state


def _how_long(game: Game, lasting: FightCondition) -> str:
    parts = []
    if lasting.rounds is not None:
        parts.append(f"for {lasting.rounds} round{'s' if lasting.rounds != 1 else ''}")
    if lasting.save is not None:
        parts.append(f"until it saves ({save_label(game, lasting.save)} DC {lasting.dc}) "
                     "at the end of a round")
    return ", or ".join(parts) or "until removed"


def _teach(game: Game, party: Party) -> list[str]:
    if fighting(game, BY_TURNS) is not None or not game.ruleset.conditions:
        return []
    known = [c.label for c in game.ruleset.conditions]
    return ["- A condition in a fight: " + example("combat", op="condition", who=FOE_NAMES[0],
                                                  add=known[0], rounds="1")
            + "; save= and dc= instead of rounds= make it a save at the end of each round; "
            f'remove="{known[0]}" ends it early.',
            f"  Conditions: {', '.join(known)}."]


RECORD = {"who": "who bears it", "added": "the condition applied (its id)",
          "removed": "the condition ended (its id)", "rounds": "the rounds it lasts",
          "save": "the save that ends it", "dc": "that save's difficulty",
          "ended": "conditions the new one ended, its bearer now immune (ITM-DEF-3)"}


InRound = Callable[[Answer], bool]
"""Whether an answer acted in a fight's round (engine/actions/fight/tags.py)."""


@action("combat", "condition", Afflict, phase=FIRST, teach=_teach, record=RECORD,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.MISSING_ATTRIBUTE,
                 reasons.UNKNOWN_CONDITION, reasons.NO_CONDITION, reasons.CONDITION_IMMUNE,
                 reasons.UNKNOWN_SAVE, reasons.MISSING_DIFFICULTY))
def condition(game: Game, state: State, request: Afflict,
              ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="condition" who= add= remove= rounds= save= dc=]``: a combatant gains or
    loses a condition (CMB-COND-1..6; ITM-DEF-3)."""
    encounter = encounter_on(game, state, BY_TURNS)  # outcome fights too
    if isinstance(encounter, Refusal):
        return state, refused(request.tag, encounter.reason, encounter.text)
    index = encounter.find(request.who or state.player)
    if index is None:
        shown = ", ".join(c.name for c in encounter.combatants)
        return state, refused(request.tag, reasons.UNKNOWN_COMBATANT,
                              f'Nobody called "{(request.who or state.player)[:60]}" is in the '
                              f"fight ({shown}); nothing was done.")
    if not request.add and not request.remove:
        return state, refused(request.tag, reasons.MISSING_ATTRIBUTE,
                              'Name the condition: add="<condition>" or remove="<condition>".')
    combatant = encounter.combatants[index]
    names = names_of(state, encounter, index)
    notes: list[str] = []
    record: dict[str, Any] = {"who": combatant.name}
    conditions = combatant.conditions
    lines = []
    if request.remove:
        gone = find_condition(game, request.remove)
        if gone is None:
            refusal = _unknown(game, request.remove)
            return state, refused(request.tag, refusal.reason, refusal.text)
        if gone.id not in names:
            return state, refused(request.tag, reasons.NO_CONDITION,
                                  f"{combatant.name} is not {gone.label}; nothing was done.")
        names = tuple(n for n in names if n != gone.id)
        conditions = tuple(c for c in conditions if c.name != gone.id)
        record["removed"] = gone.id
        lines.append(f"{combatant.name} is no longer {gone.label}.")
    if request.add:
        lasting = _lasting(game, request, notes)
        if isinstance(lasting, Refusal):
            return state, refused(request.tag, lasting.reason, lasting.text)
        immune = immunities(game, names).get(lasting.name)
        if immune is not None:  # ITM-DEF-3, ITM-ARM-5: never applied
            return state, refused(request.tag, reasons.CONDITION_IMMUNE,
                                  f"{combatant.name} is immune to {label_of(game, lasting.name)}"
                                  f" ({immune}); nothing was done.")
        if lasting.name in names:
            notes.append(f"{combatant.name} was already {label_of(game, lasting.name)}: "
                         "it lasts as this tag says from now on")
        # ITM-DEF-3: an immunity gained now ends the conditions it covers
        keys = fight_keys(game, lasting.name)
        ended = [n for n in names if keys is not None and n in (keys.condition_immunities or ())]
        names = (*(n for n in names if n not in ended and n != lasting.name), lasting.name)
        conditions = (*(c for c in conditions if c.name not in ended and c.name != lasting.name),
                      lasting)
        record.update({"added": lasting.name, **{k: v for k, v in (
            ("rounds", lasting.rounds), ("save", lasting.save), ("dc", lasting.dc))
            if v is not None}})
        lines.append(f"{combatant.name} is {label_of(game, lasting.name)} "
                     f"{_how_long(game, lasting)}.")
        if ended:
            record["ended"] = ended
            lines.append(f"It ends {', '.join(label_of(game, n) for n in ended)}.")
    state = _bearing(state, encounter, index, conditions, names)
    return state, accepted(request.tag, " ".join(lines), record, tuple(notes))


# --- the end of a round ----------------------------------------------------------------------


def _save_roll(game: Game, state: State, encounter: Encounter, combatant: Combatant,
               lasting: FightCondition, ctx: TurnContext) -> tuple[State, bool, dict[str, Any]]:
    """CMB-COND-3/4: the bearer's save against the DC fixed when the condition was applied; a
    hero's through the check pipeline, a foe's with the ability modifier it joined with (as
    its initiative). Dice by (round, combatant, condition, "save"), so a swipe rolls the same."""
    assert lasting.save is not None and lasting.dc is not None
    purpose = f"save/{encounter.round}/{combatant.name.casefold()}/{lasting.name}"
    kind: CheckKind = "save" if any(s.id == lasting.save for s in game.ruleset.sheet.saves) \
        else "ability"
    attrs = {kind: lasting.save, "dc": str(lasting.dc)}
    hero = state.character_index(combatant.name) if combatant.side == "party" else None
    if hero is not None:
        state, checked = roll_check(game, state, hero, attrs, ctx, purpose)
        return state, checked.ok and checked.success, {
            "rolls": checked.record.get("rolls", []), "total": checked.record.get("total", 0)}
    res = game.ruleset.resolution
    combat = game.ruleset.combat
    if res is None or combat is None:
        return state, False, {"rolls": [], "total": 0}
    modifier = combatant.modifier or 0  # CMB-TPL-8: fixed when the foe joined
    view = SheetView(game, None, state)
    effective, _ = effective_resolution(res, kind, lasting.save, view)
    read = CheckRead(who=combatant.name, kind=kind, ident=lasting.save,
                     label=save_label(game, lasting.save), attrs={"dc": str(lasting.dc)},
                     view=view, ability=None, ability_part=modifier, rank=0,
                     own_bonus=save_bonus(game, combatant, lasting.name, False))  # ITM-ONHIT-7
    rolled = resolve_request(game, effective, read, ctx, purpose)
    if rolled is None:
        return state, False, {"rolls": [], "total": 0}
    return state, rolled.success, {"rolls": list(rolled.rolls), "total": int(rolled.value)}


def _settle(game: Game, state: State, encounter: Encounter,
            ctx: TurnContext) -> tuple[State, list[str], list[dict[str, Any]]]:
    """CMB-COND-3..6: every standing combatant's conditions at the end of the round, in the
    order of the fight: a save ends one when it succeeds; rounds count down and end at 0."""
    lines: list[str] = []
    rows: list[dict[str, Any]] = []
    for at, combatant in enumerate(encounter.combatants):
        if not combatant.conditions or (combatant.side == "foes" and not combatant.hp):
            continue  # a felled foe's conditions no longer matter
        names = names_of(state, encounter, at)
        kept: list[FightCondition] = []
        for lasting in combatant.conditions:
            if lasting.name not in names:
                continue  # something else took it off the hero's sheet
            label = label_of(game, lasting.name)
            row: dict[str, Any] = {"who": combatant.name, "condition": lasting.name}
            after: FightCondition | None = lasting
            if lasting.save is not None and lasting.dc is not None:
                state, saved, rolled = _save_roll(game, state, encounter, combatant,
                                                  lasting, ctx)
                row.update({"save": lasting.save, "dc": lasting.dc, **rolled,
                            "saved": saved})
                shown = f"{save_label(game, lasting.save)} {rolled['total']} vs {lasting.dc}"
                if saved:  # CMB-COND-5
                    after = None
                    lines.append(f"{combatant.name} saves against {label} ({shown})")
                else:
                    lines.append(f"{combatant.name} fails the save against {label} ({shown})")
            if after is not None and lasting.rounds is not None:  # CMB-COND-6
                after = count_down(lasting)
                row["rounds"] = after.rounds if after is not None else 0
                if after is not None:
                    lines.append(f"{combatant.name} is {label} {after.rounds} more "
                                 f"round{'s' if after.rounds != 1 else ''}")
            if after is None:
                row["ended"] = True
                lines.append(f"{combatant.name} is no longer {label}")
            else:
                kept.append(after)
            if len(row) > 2:
                rows.append(row)
        gone = {c.name for c in combatant.conditions} - {c.name for c in kept}
        encounter = state.encounter or encounter
        state = _bearing(state, encounter, at, tuple(kept),
                         tuple(n for n in names_of(state, encounter, at) if n not in gone))
        encounter = state.encounter or encounter
    return state, lines, rows


def end_of_round(game: Game, before: State, state: State, answers: list[Answer],
                 ctx: TurnContext, in_round: InRound) -> tuple[State, list[Answer]]:
    """After the tags of a reply that was a round (docs/design.md#rounds-and-order), every
    combatant's conditions count down and are saved against (CMB-COND-3..6); what happened is told
    at the end of the round's last answered ``[attack:]`` in text order (record ``roundEnd``, text
    ``End of round: …``). A reply that was no round, or a fight that ended in it, changes nothing
    here."""
    encounter = state.encounter
    if encounter is None or encounter.turn != ctx.turn_key:
        return state, answers
    if before.encounter is not None and before.encounter.turn == ctx.turn_key:
        return state, answers  # this reply's round is already over (it was answered before)
    last = next((i for i in range(len(answers) - 1, -1, -1) if in_round(answers[i])), None)
    if last is None:
        return state, answers
    settled, lines, rows = _settle(game, state, encounter, ctx.for_tag(0))
    if not rows:
        return state, answers
    told = answers[last]
    answers = list(answers)
    answers[last] = told.model_copy(update={
        "text": f"{told.text} End of round: {'; '.join(lines)}.",
        "record": {**told.record, "roundEnd": rows}})
    return settled, answers
