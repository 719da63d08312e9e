"""Using an item inside a formula fight (docs/rules/items.md#13-using-items-in-combat:
ITM-USE-1..26, ITM-CHG-1..7, ITM-BRK-1..4, ITM-GATE-1..9): ``[inventory: action="use" item= who=
target=]`` and the host's Use event while a formula fight is on (engine/actions/use.py hands the use
over here).

A use that spends a ``budget`` is one of the round's actions: it takes one whole use of that
turn action (as a reload does, ITM-USE-5) — past it, ``no-time`` and nothing changes — and the
reply applies it among the round's attacks in its user's initiative order (engine/actions/
reply.py). A ``free`` use spends nothing and lets no round begin. Aimed at the other side, an
``attackRoll`` rolls the fight's attack check with the use's ``toHit`` against each target's
defence (ITM-USE-7/8); a ``save`` makes each target save against ``saveDifficulty`` (ITM-USE-9/
10), the damage rolled once; damage meets the foe's typed defences, and what it ``applies``
lasts its ``duration.rounds`` in the fight. A helping use heals, gives temporary points and
``restore`` to the heroes it names (a creature gets nothing from ``restore``, ITM-USE-16).
The gate, the item or charges spent and the break are those of a use outside a fight
(engine/actions/use.py, passed in as :class:`Outside`, so the two modules import one way)."""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from ...rules import reasons
from ...rules.armour import foe_defences, typed_damage
from ...rules.context import TurnContext
from ...rules.fakes import reveal_on_use
from ...rules.fight.conditions import attack_edge, fight_over, immunities, label_of, names_of
from ...rules.fight.formula import standing, strike
from ...rules.formula import sheet_reader
from ...rules.game import Game
from ...rules.items import charges_left, charges_max, read_stat, roll_amount, stat_number
from ...rules.sheet import SheetView
from ...rules.state import Character, Encounter, FightCondition, JournalEntry, Stack, State
from ...rules.weapons import hit_bonus, whole
from ...ruleset import Formula, Item, parse_formula
from ...ruleset.combat import Amount, Attack, Use
from ..answers import Answer, accepted, refused
from ..declare import Refusal, Request
from .arms import extra_damage, foe_save
from .check_kinds import hit_damage
from .encounter import cannot_act, combat_of, round_of, target_names, target_of, turn_action
from .judge import kind_attack
from .victory import won
from .weapons import one_use

Gated = tuple[bool, str, dict[str, Any]] | Answer


@dataclass(frozen=True, slots=True)
class Outside:
    """What a use does the same in a fight and out of it (engine/actions/use.py): the gate
    (ITM-GATE-1..8), a helping use's heal, temporary points and restore on one hero
    (ITM-OUT-3/4: the new character, the record and the words), and the item or its charges spent
    (ITM-USE-11/12, ITM-CHG-1, ITM-BRK-1: the bag changed in place, and the record)."""

    gate: Callable[[Game, State, int, Item, Stack, TurnContext, str], Gated]
    helps: Callable[[Game, State, int, Use, TurnContext, str],
                    tuple[Character, dict[str, Any], list[str]]]
    spend: Callable[[Game, State, Item, list[Stack], int, TurnContext, str], dict[str, Any]]


def aimed(use: Use) -> bool:
    """ITM-OUT-7: a use that harms or aims at the other side."""
    return use.kind in ("attack", "debuff") or use.targets == "enemy"


def _amount_formula(amount: Amount | None) -> Formula | None:
    """An ``amount`` (dice and a flat part) as a formula the fight's damage rolls."""
    if amount is None:
        return None
    parts = [p for p in (amount.dice, None if amount.flat is None else str(amount.flat)) if p]
    parsed = parse_formula(" + ".join(parts) or "0")
    return parsed if isinstance(parsed, Formula) else None


def _pool_max(game: Game, character: Character, state: State, pool: str) -> int:
    row = next(p for p in game.ruleset.live.pools if p.id == pool)
    return math.floor(SheetView(game, character, state, items_apply=False).value(row.max))


# --- who the use is aimed at -----------------------------------------------------------------


def _targets(game: Game, state: State, encounter: Encounter, me: int, use: Use, label: str,
             written: str, notes: list[str]) -> list[int] | Refusal:
    """``target=``: comma-separated combatants, at most the use's ``targetCount`` (1 without
    one). Aimed at the other side: standing foes (the only one standing without any). A
    helping use: the user (``targets: self``, or without ``target=``), a hero of the fight
    (``ally``), or anyone in it (``any``)."""
    user = encounter.combatants[me]
    names = target_names(written)
    most = use.target_count or 1
    if use.targets == "self" and not aimed(use):
        if any(n.casefold() != user.name.casefold() for n in names):
            notes.append(f"ignored target=: {label} is used on its user")
        return [me]
    found: list[int] = []
    for name in names or ([""] if aimed(use) else [user.name]):
        index = target_of(game, state, encounter, user, name) if aimed(use) \
            else encounter.find(name)
        if isinstance(index, Refusal):
            return index
        if index is None:
            shown = ", ".join(c.name for c in encounter.combatants)
            return Refusal(reasons.UNKNOWN_COMBATANT, f'Nobody called "{name[:60]}" is in the '
                           f"fight ({shown}); nothing was used.")
        if not aimed(use) and use.targets != "any" \
                and encounter.combatants[index].side != user.side:
            return Refusal(reasons.UNSUPPORTED, f"{encounter.combatants[index].name} is not on "
                           f"{user.name}'s side: {label} helps an ally; nothing was used.")
        if index not in found:
            found.append(index)
    if len(found) > most:
        return Refusal(reasons.TOO_MANY_TARGETS, f"{label} is aimed at {most} at most, not "
                       f"{len(found)}; nothing was used.")
    return found


# --- what it does to each target ----------------------------------------------------------


@dataclass
class _Done:
    """What the use did so far: the state (its encounter the fight's), one record row and one
    text part per target, the events (CMB-CARD-1)."""

    state: State
    rows: list[dict[str, Any]] = field(default_factory=list)
    words: list[str] = field(default_factory=list)
    events: list[str] = field(default_factory=list)
    lines: list[str] = field(default_factory=list)  # sentences of the log after the use's own
    first: list[str] = field(default_factory=list)  # sentences before it: the gate (ITM-GATE-9)

    @property
    def encounter(self) -> Encounter:
        assert self.state.encounter is not None
        return self.state.encounter


def _with_foe(done: _Done, index: int, **update: Any) -> None:
    combatants = list(done.encounter.combatants)
    combatants[index] = combatants[index].model_copy(update=update)
    done.state = done.state.model_copy(update={"encounter": done.encounter.model_copy(
        update={"combatants": tuple(combatants)})})


def _dealt(game: Game, done: _Done, index: int, damage: int, use: Use,
           row: dict[str, Any]) -> int:
    """ITM-DEF-4..8: what the foe's typed defences leave of ``damage``; the foe hurt by it."""
    foe = done.encounter.combatants[index]
    dealt, guards = typed_damage(damage, use.damage_type, foe_defences(game, foe))
    if guards:
        row["affectedBy"] = [g.text for g in guards]
    hp = max((foe.hp or 0) - dealt, 0)
    row.update({"damage": row.get("damage", 0) + dealt, "hp": hp, "hpMax": foe.hp_max})
    if dealt:
        done.events.append(f"damage:{foe.name}:{dealt}")
        if use.damage_type:  # CMB-ABIL-7: regeneration reads what type of damage it took
            row["damageType"] = use.damage_type
    if foe.hp and not hp:
        done.events.append(f"felled:{foe.name}")
    _with_foe(done, index, hp=hp)
    return dealt


def _applied(game: Game, done: _Done, index: int, use: Use, row: dict[str, Any]) -> str:
    """ITM-USE-2, ITM-OUT-6: each condition the use applies, on combatant ``index`` for its
    ``duration.rounds`` in the fight (until removed without one); none it is immune to. The
    words (``; Rattled for 2 rounds``)."""
    if not use.applies:
        return ""
    combatant = done.encounter.combatants[index]
    names = list(names_of(done.state, done.encounter, index))
    immune = immunities(game, names)
    conditions = list(combatant.conditions)
    rows: list[dict[str, Any]] = []
    said: list[str] = []
    for applies in use.applies:
        label = label_of(game, applies.condition)
        if applies.condition in immune:
            rows.append({"condition": applies.condition, "immune": immune[applies.condition]})
            said.append(f"immune to {label}")
            continue
        rounds = applies.duration.rounds if applies.duration is not None else None
        lasting = FightCondition(name=applies.condition, rounds=rounds)
        conditions = [c for c in conditions if c.name != applies.condition] + [lasting]
        names = [n for n in names if n != applies.condition] + [applies.condition]
        rows.append({"condition": applies.condition, **({"rounds": rounds} if rounds else {})})
        said.append(label + (f" for {rounds} round{'s' if rounds != 1 else ''}"
                             if rounds is not None else " until removed"))
    row["applied"] = rows
    _with_foe(done, index, conditions=tuple(conditions))
    hero = done.state.character_index(combatant.name) if combatant.side == "party" else None
    if hero is not None:  # a hero's conditions are on its sheet too
        character = done.state.characters[hero]
        done.state = done.state.with_character(hero, character.model_copy(
            update={"conditions": tuple(names)}))
    return "; " + ", ".join(said)


def _standing_words(done: _Done, index: int) -> str:
    after = done.encounter.combatants[index]
    return f" · {after.name} {after.hp}/{after.hp_max}"


def _attack_roll(game: Game, done: _Done, me: int, who: int, item: Item, stack: Stack,
                 use: Use, targets: list[int], ctx: TurnContext, budget: str | None) -> None:
    """ITM-USE-7/8: the fight's attack check with what the use's ``toHit`` adds, against each
    target's defence (the conditions' edges read first, CMB-MOD-1); on a hit the ``amount``
    (dice doubled on a critical, CMB-ATK-5) and each ``plus`` that applies (ITM-PLUS-1..8),
    met by the foe's typed defences; then what it applies."""
    rule = combat_of(game).attack
    assert rule is not None
    view = SheetView(game, done.state.characters[who], done.state)
    reader = sheet_reader(view)
    modifier = hit_bonus(game, view, item, use.to_hit)
    formula = _amount_formula(use.amount)
    armed = (stack, item, Attack(budget=budget or "free", plus=use.plus)) if use.plus else None
    user = done.encounter.combatants[me].name
    target = whole(read_stat(game, item, use.to_hit.target)) or None \
        if use.to_hit is not None and use.to_hit.target is not None else None
    for number, index in enumerate(targets):
        foe = done.encounter.combatants[index]
        defence = foe.defence or 0
        edge = attack_edge(game, names_of(done.state, done.encounter, me),
                           names_of(done.state, done.encounter, index), "near")
        # ITM-USE-7: the fight's own attack (a pool: the use's per-die target)
        rolled, result = kind_attack(game, view, user, modifier, defence, ctx,
                                     f"use/{number}/attack", edge.lean, target)
        if result == "hit" and edge.critical:  # CMB-COND-2
            result = "critical"
        row: dict[str, Any] = {"target": foe.name, "rolls": rolled.rolls, "modifier": modifier,
                               "total": int(rolled.value), "defence": defence, "result": result,
                               "damage": 0, "hp": foe.hp, "hpMax": foe.hp_max}
        if edge.affected_by:
            row["affectedBy"] = list(edge.affected_by)
        said = f"{foe.name}: {rolled.shown} · {result}"
        if result != "miss":
            critical = result == "critical"
            if formula is not None:
                struck = strike(formula, reader, critical, foe.hp or 0,
                                ctx.for_tag(0).stream("use", f"{number}/damage"),
                                hit_damage(game, rolled, result))  # symbol-pool successes
                row["damageRolls"] = [list(r.faces) for r in struck.rolls.rolls]
                dealt = _dealt(game, done, index, struck.damage, use, row)
                said += f", {_dice_text(struck, formula)}" + (
                    f" {use.damage_type}" if use.damage_type else "")
                if dealt != struck.damage:
                    said += f" ({'; '.join(row.get('affectedBy', []))}: {dealt})"
            extra = extra_damage(game, done.state, armed, done.encounter.combatants[index],
                                 critical, reader, ctx, f"use/{number}")
            if extra.rows:
                row["plus"] = list(extra.rows)
                said += " " + " ".join(extra.texts)
                foe_now = done.encounter.combatants[index]
                hp = max((foe_now.hp or 0) - extra.dealt, 0)
                row.update({"damage": row["damage"] + extra.dealt, "hp": hp})
                if extra.dealt:
                    done.events.append(f"damage:{foe_now.name}:{extra.dealt}")
                if foe_now.hp and not hp:
                    done.events.append(f"felled:{foe_now.name}")
                _with_foe(done, index, hp=hp)
            said += _applied(game, done, index, use, row)
        said += _standing_words(done, index)
        done.rows.append(row)
        done.words.append(said)


def _dice_text(struck: Any, formula: Formula) -> str:
    dice = " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in struck.rolls.rolls)
    flat = struck.damage - sum(sum(r.faces) for r in struck.rolls.rolls)
    added = f" {'+' if flat >= 0 else '-'} {abs(flat)}" if flat and dice else ""
    return f"{dice or formula.text}{added} = {struck.damage}"


def _save_dc(item: Item, use: Use) -> int | None:
    """ITM-USE-9/10: the number the use's save is rolled against — the save's own
    ``difficulty``, else ``saveDifficulty`` written out or read from the item's number stat."""
    assert use.save is not None
    if use.save.difficulty is not None:
        return use.save.difficulty
    if use.save_difficulty is None:
        return None
    found = stat_number(item, use.save_difficulty)
    return None if found is None else min(max(math.floor(found), 1), 100)




def _save_use(game: Game, done: _Done, who: int, item: Item, use: Use, targets: list[int],
              ctx: TurnContext) -> dict[str, Any]:
    """ITM-USE-9/10, OQ-CMB-14: the use's damage rolled once; each target saves against the
    use's difficulty (a foe with the ability modifier it joined with, CMB-TPL-8); a success
    takes half (rounded down) or nothing (``onSuccess: negates``, or a use without damage) and
    escapes what the use applies. The record's shared part (``dc``, ``save``, the dice)."""
    assert use.save is not None
    dc = _save_dc(item, use)
    assert dc is not None  # a use whose stat gives no difficulty is refused before
    formula = _amount_formula(use.amount)
    reader = sheet_reader(SheetView(game, done.state.characters[who], done.state))
    struck = strike(formula, reader, False, 0, ctx.for_tag(0).stream("use", "damage")) \
        if formula is not None else None
    on_success = use.save.on_success or ("half" if struck is not None else "negates")
    label = next((r.label for r in (*game.ruleset.sheet.saves, *game.ruleset.sheet.abilities)
                  if r.id == use.save.save), use.save.save)
    shared: dict[str, Any] = {"dc": dc, "save": use.save.save, "onSuccess": on_success}
    head = f"{label} {dc} save"
    if struck is not None and formula is not None:
        shared.update({"damageRolls": [list(r.faces) for r in struck.rolls.rolls],
                       "rolled": struck.damage})
        head = f"{_dice_text(struck, formula)}" + (
            f" {use.damage_type}" if use.damage_type else "") + f", {head}"
    done.words.append(head)
    for index in targets:
        foe = done.encounter.combatants[index]
        saved, rolled = foe_save(game, done.state, foe, use.save.save, dc, ctx.for_tag(0),
                                 f"use/save/{foe.name.casefold()}")
        row: dict[str, Any] = {"target": foe.name, "rolls": rolled["rolls"],
                               "total": rolled["total"], "saved": saved, "damage": 0,
                               "hp": foe.hp, "hpMax": foe.hp_max}
        said = f"{foe.name}: {label} {rolled['total']} vs {dc} · {'saves' if saved else 'fails'}"
        if struck is not None:
            damage = struck.damage if not saved else (
                struck.damage // 2 if on_success == "half" else 0)
            said += f", {_dealt(game, done, index, damage, use, row)}"
        if not saved:
            said += _applied(game, done, index, use, row)
        said += _standing_words(done, index)
        done.rows.append(row)
        done.words.append(said)
    return shared


def _sure(game: Game, done: _Done, who: int, use: Use, targets: list[int],
          ctx: TurnContext) -> None:
    """A use aimed at the other side with neither an attack roll nor a save: its damage and
    what it applies reach each target (the damage rolled once)."""
    formula = _amount_formula(use.amount)
    reader = sheet_reader(SheetView(game, done.state.characters[who], done.state))
    struck = strike(formula, reader, False, 0, ctx.for_tag(0).stream("use", "damage")) \
        if formula is not None else None
    for index in targets:
        foe = done.encounter.combatants[index]
        row: dict[str, Any] = {"target": foe.name, "damage": 0, "hp": foe.hp,
                               "hpMax": foe.hp_max}
        said = foe.name
        if struck is not None and formula is not None:
            row["damageRolls"] = [list(r.faces) for r in struck.rolls.rolls]
            said += f": {_dice_text(struck, formula)}" + (
                f" {use.damage_type}" if use.damage_type else "")
            dealt = _dealt(game, done, index, struck.damage, use, row)
            if dealt != struck.damage:
                said += f" ({'; '.join(row.get('affectedBy', []))}: {dealt})"
        said += _applied(game, done, index, use, row)
        done.rows.append(row)
        done.words.append(said + _standing_words(done, index))


def _help(game: Game, done: _Done, use: Use, targets: list[int], outside: Outside,
          ctx: TurnContext, kind: str) -> None:
    """ITM-OUT-3..6 in a fight, ITM-USE-13..17: a heal, temporary points and a ``restore``
    for each hero named (as out of a fight, engine/actions/use.py), then what it applies; a
    foe (``targets: any``) is healed on its hit points and gets nothing from ``restore``, as
    a creature has no pools (ITM-USE-16)."""
    for number, index in enumerate(targets):
        combatant = done.encounter.combatants[index]
        row: dict[str, Any] = {"target": combatant.name}
        said: list[str] = []
        own = TurnContext(f"{ctx.seed}\x1ftarget/{number}", ctx.turn_key)
        hero = done.state.character_index(combatant.name) if combatant.side == "party" \
            else None
        if hero is not None:
            if use.kind == "heal" or use.temporary is not None:
                plain = use.model_copy(update={"restore": None, "applies": []})
                character, got, words = outside.helps(game, done.state, hero, plain, own, kind)
                done.state = done.state.with_character(hero, character)
                row.update(got)
                said += words
            if use.restore is not None:
                done.lines.append(_restore(game, done, hero, use, own, row))
        else:
            if use.kind == "heal" and use.amount is not None:
                rolled = max(roll_amount(use.amount, own.stream(kind, "use/heal")), 0)
                hp = min((combatant.hp or 0) + rolled, combatant.hp_max or 0)
                row.update({"healed": hp - (combatant.hp or 0), "hp": hp})
                _with_foe(done, index, hp=hp)
                said.append(f"heals {hp - (combatant.hp or 0)}")
            if use.restore is not None:  # ITM-USE-16
                row["restored"] = 0
                said.append("gets nothing back, as a creature has no pools")
        applied = _applied(game, done, index, use, row).removeprefix("; ")
        said += [applied] if applied else []
        done.rows.append(row)
        if said:
            done.words.append(f"{combatant.name}: {', '.join(said)}" if len(targets) > 1
                              else ", ".join(said))


def _restore(game: Game, done: _Done, hero: int, use: Use, ctx: TurnContext,
             row: dict[str, Any]) -> str:
    """ITM-USE-13/17, ITM-OUT-5: the pool given back, never above its max (nor lowered from
    above it); the log's ``Ada gets back 1 Resolve, and is on 3 of 4.``"""
    assert use.restore is not None
    pool = use.restore.pool
    character = done.state.characters[hero]
    found = next(p for p in game.ruleset.live.pools if p.id == pool)
    most = _pool_max(game, character, done.state, pool)
    now = character.pools.get(pool, most)
    rolled = max(roll_amount(use.restore.amount, ctx.stream("use", "restore")), 0)
    after = min(now + rolled, max(most, now))
    done.state = done.state.with_character(hero, character.model_copy(
        update={"pools": {**character.pools, pool: after}}))
    row.update({"restored": after - now, "pool": pool})
    return f"{character.name} gets back {after - now} {found.label}, and is on {after} of {most}."


# --- the use ---------------------------------------------------------------------------------


def gate_line(game: Game, user: str, label: str, record: dict[str, Any]) -> str:
    """ITM-GATE-9: the gate check in the combat log — ``Ada rolls Ward to use Page of the
    vigil litany: 2 successes from 2 dice at 7 or more (8, 9), needing 2 successes, a
    success.`` in a pool fight; the dice and total against the difficulty elsewhere."""
    rolls = [str(r) for r in record.get("gateRolls", [])]
    total, dc = record.get("gateTotal", 0), record.get("gateDc", 0)
    use = record.get("gateLabel", "")
    res = game.ruleset.resolution
    passed = "a success" if record.get("gate") == "passed" else "a failure"
    if res is not None and res.kind == "dice-pool" and res.target is not None:
        many = "success" if total == 1 else "successes"
        need = "success" if dc == 1 else "successes"
        dice = "die" if len(rolls) == 1 else "dice"
        shown = (f"{total} {many} from {len(rolls)} {dice} at {res.target.default} or more "
                 f"({', '.join(rolls)}), needing {dc} {need}")
    else:
        shown = f"{total} ({', '.join(rolls)}), needing {dc}"
    return f"{user} rolls {use} to use {label}: {shown}, {passed}."


FIGHT_RECORD = {
    "round": "in a fight: the encounter's round", "budget": "in a fight: the turn action the "
    "use spent (one whole use of it, ITM-USE-5); none for a free use",
    "targets": "in a fight: each target — target, rolls, modifier, total, defence, result (an "
    "attack roll, ITM-USE-7/8); rolls, total, saved (a save, ITM-USE-9); damage, damageRolls, "
    "damageType, hp, hpMax, affectedBy, plus, applied (conditions put on it); healed, "
    "temporary, restored, pool (a helping use, ITM-USE-13..17)",
    "dc": "in a fight: the difficulty of the use's save (ITM-USE-9/10)",
    "save": "in a fight: the save each target makes", "onSuccess": "half or negates",
    "damageRolls": "in a fight: a save's damage dice, rolled once",
    "rolled": "in a fight: a save's damage before any save or defence",
    "events": "in a fight: damage:<foe>:<points>, felled:<foe>, end:victory (CMB-CARD-1)",
    "loot": "in a fight: a won fight's drops", "recovered": "in a fight: ammunition picked up",
    "roundEnd": "in a fight: on the round's last answer, when a use that spent a budget is it: "
                "the conditions' end of round (CMB-COND-3..6)",
}
FIGHT_REASONS = (reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.CANNOT_ACT,
                 reasons.TARGET_DOWN, reasons.TOO_MANY_TARGETS, reasons.NO_TIME,
                 reasons.UNSUPPORTED, reasons.MISSING_ATTRIBUTE)


def _left_words(item: Item, label: str, before: int, record: dict[str, Any]) -> str:
    """ITM-USE-22: ``Poultice: 1 of 2 left.`` (what the stack held before the use) and
    ``Dawn bell: 2 of 3 left.`` (its charges of the most it holds)."""
    use = item.use
    assert use is not None
    left = record.get("left", 0)
    most = charges_max(item) if use.charges is not None else None
    return f"{label}: {left} of {most if most is not None else before} left."


def use_in_fight(game: Game, state: State, request: Request, found: tuple[int, int, Item, str],
                 target: str, ctx: TurnContext, kind: str,
                 outside: Outside) -> tuple[State, Answer]:
    """§13: hero ``found[0]`` uses the stack at ``found[1]`` (the item ``found[2]``, called
    ``found[3]``) in the formula fight on now, aimed at ``target``; a refusal changes nothing."""
    tag = request.tag
    who, index, item, label = found
    use = item.use
    assert use is not None and state.encounter is not None
    encounter = state.encounter
    character = state.characters[who]
    me = encounter.find(character.name)
    if me is None:
        return state, refused(tag, reasons.UNKNOWN_COMBATANT, f"{character.name} is not in the "
                              f'fight: [combat: op="join" foe="{character.name}"] first; '
                              "nothing was used.")
    if not standing(game, state, encounter.combatants[me]):  # CMB-TURN-8
        return state, refused(tag, reasons.DOWNED, f"{character.name} is down and does not "
                              "act; nothing was used.")
    stopped = cannot_act(game, state, encounter, me)
    if stopped is not None:
        return state, refused(tag, stopped.reason, stopped.text.replace("was done", "was used"))
    notes: list[str] = []
    targets = _targets(game, state, encounter, me, use, label, target, notes)
    if isinstance(targets, Refusal):
        return state, refused(tag, targets.reason, targets.text.replace("was done", "was used"))
    if aimed(use) and use.save is not None and not use.attack_roll \
            and _save_dc(item, use) is None:  # ITM-USE-9: a stat the item does not give
        return state, refused(tag, reasons.NO_DIFFICULTY, f"{label}'s save reads its "
                              "difficulty from a stat the item does not give; nothing was used.")
    budget = None if use.free else turn_action(game, "", use.budget)
    spends: tuple[str, ...] = ()
    if isinstance(budget, str):  # ITM-USE-5: one whole use of that turn action
        encounter = round_of(encounter, ctx)
        view = SheetView(game, character, state)
        spent = one_use(game, view, encounter.combatants[me], budget, ctx)
        if isinstance(spent, Refusal):
            return state, refused(tag, spent.reason, f"NO TIME: {character.name} has no "
                                  f"{budget} left this round to use {label}; nothing was used.")
        spends = spent
    else:
        budget = None
    stack = character.bag[index]
    before = (charges_left(item, stack) or 0) if use.charges is not None else stack.count
    user = encounter.combatants[me]
    # docs/design.md#combat-dice: keyed by the user, its actions this round and the item's count,
    # never by the tag's place in the reply, so a swipe rolls the same
    key = (f"item-use/{user.name.casefold()}/{encounter.round}/{len(user.spent)}/"
           f"{stack.item or stack.name.casefold()}/{before}")
    use_ctx = TurnContext(f"{ctx.seed}\x1f{key}", ctx.turn_key)
    combatants = list(encounter.combatants)
    combatants[me] = user.model_copy(update={"spent": (*user.spent, *spends)})
    after = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})
    after = reveal_on_use(game, after, who, index, ctx.turn_label)  # ITM-FAKE-13
    stack = after.characters[who].bag[index]
    record: dict[str, Any] = {"round": encounter.round, "who": character.name,
                              "item": stack.item, "name": label, "budget": budget}
    gated = outside.gate(game, after, who, item, stack, use_ctx, kind) \
        if use.gate is not None else (True, "", {})
    if isinstance(gated, Answer):
        return state, refused(tag, gated.reason or reasons.NO_RESOLUTION,
                              f"{gated.text.rstrip('.')}; {label} was not used.")
    passed, _, gate_record = gated
    record.update(gate_record)
    done = _Done(after)
    if gate_record.get("gate") in ("passed", "failed"):  # ITM-GATE-7/9: rolled as it is spent
        gate_label = _gate_label(game, use)
        done.first.append(gate_line(game, character.name, label,
                                    {**gate_record, "gateLabel": gate_label}))
    shared: dict[str, Any] = {}
    if not passed:  # ITM-GATE-6: the item or its charges used up for nothing
        done.words.append("it is used up for nothing")
    elif aimed(use) and use.attack_roll:
        _attack_roll(game, done, me, who, item, stack, use, targets, use_ctx, budget)
    elif aimed(use) and use.save is not None:
        shared = _save_use(game, done, who, item, use, targets, use_ctx)
    elif aimed(use):
        _sure(game, done, who, use, targets, use_ctx)
    else:
        _help(game, done, use, targets, outside, use_ctx, kind)
    return _spent(game, done, request, (who, index, item, label), before, use_ctx, ctx,
                  record | shared, notes, kind, outside)


def _gate_label(game: Game, use: Use) -> str:
    """The name of what a gate rolls (``Ward``), as the log shows it."""
    assert use.gate is not None
    check = use.gate.check
    sheet = game.ruleset.sheet
    rows = [*sheet.skills, *sheet.abilities, *sheet.derived]
    ident = check.skill or check.ability or (check.value.derived if check.value else None)
    return next((r.label for r in rows if r.id == ident), ident or "Sheet")


def _spent(game: Game, done: _Done, request: Request, found: tuple[int, int, Item, str],
           before: int, use_ctx: TurnContext, ctx: TurnContext, record: dict[str, Any],
           notes: list[str], kind: str, outside: Outside) -> tuple[State, Answer]:
    """ITM-USE-11/12/20/22, ITM-CHG-1/4, ITM-BRK-1/2/4: the item or its charges spent on the
    stack (the bag written with the sheet), the log's lines, the journal, and the fight won
    when the last foe fell."""
    who, index, item, label = found
    state = done.state
    character = state.characters[who]
    bag = list(character.bag)
    spent = outside.spend(game, state, item, bag, index, use_ctx, kind)
    record.update(spent)
    state = state.with_character(who, character.model_copy(update={"bag": tuple(bag)}))
    lines = [_left_words(item, label, before, spent)]
    journal: list[str] = []
    if spent.get("broke"):  # ITM-BRK-2/4
        lines.append(f"{label} breaks (a {spent['breaksRoll']} on its die).")
        journal.append(f"{character.name} lost {label}: it broke.")
    elif item.use is not None and item.use.consumes and not spent.get("left"):  # ITM-USE-20
        journal.append(f"{character.name} used up {label}.")
    if journal:
        state = state.model_copy(update={"journal": (*state.journal, *(
            JournalEntry(turn=ctx.turn_label, text=line) for line in journal))})
    names = [r["target"] for r in done.rows]
    if len(names) == 1:  # "Ada uses Fire flask on Goblin 1: 2d6+4 → …", named once
        done.words = [w.removeprefix(f"{names[0]}: ") for w in done.words]
    aim = f" on {', '.join(names)}" if names and names != [character.name] else ""
    text = f"{character.name} uses {label}{aim}"
    text += f": {'; '.join(done.words)}." if done.words else "."
    text = " ".join([*done.first, text, *done.lines, *lines])
    if done.rows:
        record["targets"] = done.rows
    events = list(done.events)
    for event in done.events:
        if event.startswith("felled:"):
            text += f" {event.removeprefix('felled:')} is felled."
    encounter = state.encounter
    assert encounter is not None
    if any(e.startswith("felled:") for e in events) and not any(
            c.side == "foes" and c.hp for c in encounter.combatants):
        events.append("end:victory")  # docs/design.md#rounds-and-order: the last foe falls
        text += " The fight is won."
        state, words = won(game, state, encounter, ctx, record)
        text += words
        state = fight_over(state)
    if events:
        record["events"] = events
    record["used"] = True
    return state, accepted(request.tag, text, record, tuple(notes))
