"""``[attack: use="<entry>" target="A, B"]``: a hero's sheet ability or spell in a formula fight
(docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary: CMB-ABIL-1..3, 6;
docs/rules/combat.md#a9-sustained-abilities-concentration: CMB-SUS-1..3, 7; CMB-TURN-17;
docs/design.md#combat-forms).

The ability is a catalog entry the hero chose whose ``mechanics`` has fight keys
(:mod:`engine.ruleset.abilities`). Aimed at foes it replaces the first attack of the turn
action it spends (CMB-ABIL-1), its ``cost`` paid from the hero's pools: an attack spell rolls
its own attack against each target and its own dice (CMB-ABIL-2); a save spell rolls its damage
once and each target saves against the caster's DC, taking half on a success unless the entry
says ``none`` or ``negates`` (CMB-ABIL-3, OQ-CMB-14); damage types meet the target's typed
defences (CMB-ABIL-6). A sustained ability (``concentration``) ends the one sustained before
and takes its place; what it applies is marked as its own (CMB-SUS-2/3/7). An ability that
``grants`` a turn action (Action Surge) is used on nobody: that action can be used once more
this round, its attacks really rolled (CMB-TURN-17)."""

from __future__ import annotations

from typing import Any

from ...rules import reasons
from ...rules.abilities import Chosen, chosen_ability, paid, sustain_ended
from ...rules.armour import foe_defences, typed_damage
from ...rules.checks.read import CheckKind, CheckRead, Rolled
from ...rules.context import TurnContext
from ...rules.fight.conditions import attack_edge, fight_over, immunities, label_of, names_of
from ...rules.fight.formula import largest_per_class, standing, strike
from ...rules.formula import evaluate, sheet_reader
from ...rules.game import Game
from ...rules.sheet import SheetView, save_label
from ...rules.state import Combatant, Encounter, FightCondition, State
from ...ruleset import Formula, parse_formula
from ...ruleset.abilities import FREE, Ability, ability_of
from ..answers import Answer, accepted
from ..attrs import FIGHTERS, TEXT
from ..checks.pipeline import effective_resolution, resolve_request
from ..declare import ROUND, Refusal, Request, action, attr, request
from ..examples import FOE_NAMES, Party, example
from .allies import ally_targets, on_allies
from .arms import picked_up
from .check_kinds import hit_damage
from .encounter import (
    BY_TURNS,
    RANGES,
    cannot_act,
    combat_of,
    encounter_on,
    fighting,
    refuse,
    round_of,
    target_names,
    target_of,
    turn_action,
)
from .foes import foe_cast, foe_teach
from .judge import kind_attack
from .kinds import kind_of
from .outcome.use import OUTCOME_USE_RECORD
from .requests import ATTACKER
from .victory import felled_loot


@request
class Cast(Request):
    """A hero uses a sheet ability or spell: at foes, or, one that grants an action, on
    nobody (CMB-ABIL-1..3, 6; CMB-SUS-1..3; CMB-TURN-17)."""

    who: str = attr(ATTACKER, "who uses it: a hero in the fight, or a foe (one of its "
                    "template's abilities, CMB-ABIL-4)", shown="the player")
    use: str = attr(TEXT, "the ability or spell: a catalog entry the hero chose, by label or "
                    "id; written, it makes the tag an ability's use",
                    shown="required (without it the tag is a weapon's attack)")
    target: str = attr(FIGHTERS, "the foes it is aimed at, comma-separated (as many as its "
                       "targetCount); heroes for a foe's ability or one aimed at allies",
                       shown="the only one standing on the other side (the user, for one "
                       "aimed at allies)")
    budget: str = attr(TEXT, "the turn action it spends", name="action",
                       shown="its uses, else the first action with attacks")
    range: str = attr(TEXT, "near or far (CMB-GRID-3), for the conditions' edges",
                      shown="near")
    position: str = attr(TEXT, "outcome fights: controlled, risky or desperate (how hard a "
                         "failure comes back); the ability's mechanics.effect is the effect",
                         shown="risky")


def _targets(game: Game, state: State, encounter: Encounter, caster: Combatant,
             request: Cast, most: int) -> list[int] | Refusal:
    """``target=``: each comma-separated name a standing foe (the only one standing without
    any), each once, at most the ability's ``targetCount``."""
    names = target_names(request.target)
    found: list[int] = []
    for name in names or [""]:
        index = target_of(game, state, encounter, caster, name)
        if isinstance(index, Refusal):
            return index
        if index not in found:
            found.append(index)
    if len(found) > most:
        return Refusal(reasons.TOO_MANY_TARGETS, f"{request.use.strip()[:60]} is aimed at "
                       f"{most} foe{'s' if most != 1 else ''} at most, not {len(found)}; "
                       "nothing was done.")
    return found


def _budget(game: Game, named: str, ability: Ability) -> str | Refusal | None:
    """The turn action the ability spends: ``action=``, else its ``uses``, else the first
    action with attacks; None for a ``free`` one."""
    if not named.strip() and ability.uses == FREE:
        return None
    return turn_action(game, named, ability.uses)


def _no_time(game: Game, view: SheetView, me: Combatant, budget: str,
             ctx: TurnContext) -> Refusal | None:
    """CMB-ABIL-1, CMB-TURN-9/12/17: an ability takes the place of the first attack of a use
    of its turn action, so it needs a use not yet begun — ``per`` uses (and those granted this
    round) of ``attacks`` each, none of which it may break into; past that, NO TIME."""
    found = next((a for a in combat_of(game).turn_actions if a.id == budget), None)
    if found is None:
        return None
    stream = ctx.for_tag(0).stream("attack", "budget")
    each = max(largest_per_class(view, found.attacks, stream), 1) \
        if found.attacks is not None else 1
    spent = me.spent.count(budget)
    uses = max(evaluate(found.per, sheet_reader(view), stream).value, 0) \
        + me.granted.count(budget)
    if spent % each == 0 and spent // each < uses:
        return None
    why = "a use of it begun by an attack" if spent % each else "no use of it left"
    return Refusal(reasons.NO_TIME, f"NO TIME: {me.name} has {why} this round for "
                   f"{found.name}; an ability takes the place of its first attack; nothing "
                   "was done.")


def _damage_formula(ability: Ability) -> Formula | None:
    """The ability's ``amount`` as a damage formula (its dice and its flat part)."""
    amount = ability.amount
    if amount is None:
        return None
    parts = [p for p in (amount.dice, None if amount.flat is None else str(amount.flat)) if p]
    parsed = parse_formula(" + ".join(parts) or "0")
    return parsed if isinstance(parsed, Formula) else None


def _roll(game: Game, view: SheetView, name: str, kind: CheckKind, ident: str, label: str,
          modifier: int, dc: int, ctx: TurnContext, purpose: str, lean: int = 0) -> Rolled:
    """One check of ``ident`` (the attack check, or a foe's save) with ``modifier`` added,
    against ``dc``, by the resolution's own dice and naturals."""
    res = game.ruleset.resolution
    assert res is not None
    effective, _ = effective_resolution(res, kind, ident, view)
    read = CheckRead(who=name, kind=kind, ident=ident, label=label,
                     attrs={"dc": str(dc)}, view=view, ability=None, ability_part=modifier,
                     rank=0, own_bonus=0, lean=lean)
    rolled = resolve_request(game, effective, read, ctx.for_tag(0), purpose)
    assert rolled is not None  # a difficulty is always given
    return rolled


def _applied(game: Game, state: State, encounter: Encounter, index: int, chosen: Chosen,
             caster: str, dc: int | None) -> tuple[Encounter, list[dict[str, Any]]]:
    """ITM-OUT-6, CMB-SUS-2/7: the ability's conditions on foe ``index`` (none it is immune
    to), each lasting its rounds, saved against each round where ``saveEnds`` (CMB-COND-3/4:
    the ability's save at its DC), and marked as the caster's while it is sustained."""
    ability = chosen.ability
    foe = encounter.combatants[index]
    immune = immunities(game, names_of(state, encounter, index))
    conditions = list(foe.conditions)
    rows: list[dict[str, Any]] = []
    for applied in ability.applies:
        if applied.condition in immune:
            rows.append({"condition": applied.condition, "immune": immune[applied.condition]})
            continue
        save = ability.save.save if applied.save_ends and ability.save is not None else None
        lasting = FightCondition(
            name=applied.condition,
            rounds=applied.duration.rounds if applied.duration is not None else None,
            save=save, dc=dc if save is not None else None,
            by=caster if ability.concentration else None)
        conditions = [c for c in conditions if c.name != applied.condition] + [lasting]
        rows.append({"condition": applied.condition, **lasting.model_dump(exclude={"name"})})
    combatants = list(encounter.combatants)
    combatants[index] = foe.model_copy(update={"conditions": tuple(conditions)})
    return encounter.model_copy(update={"combatants": tuple(combatants)}), rows


def _dealt(game: Game, foe: Combatant, damage: int, ability: Ability,
           row: dict[str, Any]) -> int:
    """CMB-ABIL-6, ITM-DEF-4..8: what the foe's typed defences leave of ``damage``."""
    dealt, guards = typed_damage(damage, ability.damage_type, foe_defences(game, foe),
                                 frozenset(ability.qualities))  # ITM-WPN-29
    if guards:
        row["affectedBy"] = [g.text for g in guards]
    return dealt


def _strike_foe(encounter: Encounter, index: int, dealt: int, row: dict[str, Any],
                events: list[str]) -> Encounter:
    foe = encounter.combatants[index]
    hp = max((foe.hp or 0) - dealt, 0)
    row.update({"damage": dealt, "hp": hp, "hpMax": foe.hp_max})
    if dealt:
        events.append(f"damage:{foe.name}:{dealt}")  # CMB-CARD-1
    if foe.hp and not hp:
        events.append(f"felled:{foe.name}")
    combatants = list(encounter.combatants)
    combatants[index] = foe.model_copy(update={"hp": hp})
    return encounter.model_copy(update={"combatants": tuple(combatants)})


def _dice_text(struck_rolls: Any, damage: int, formula: Formula) -> str:
    dice = " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in struck_rolls.rolls)
    return f"{dice or formula.text} = {damage}"


def _attack_spell(game: Game, state: State, encounter: Encounter, chosen: Chosen,
                  me: int, targets: list[int], distance: str, ctx: TurnContext,
                  key: str) -> tuple[Encounter, list[dict[str, Any]], list[str], list[str]]:
    """CMB-ABIL-2: its own attack roll against each target's defence, its own dice on a hit
    (a critical doubles them, CMB-ATK-5); the conditions it applies land on a hit."""
    ability = chosen.ability
    caster = encounter.combatants[me]
    hero = state.character_index(caster.name)
    assert hero is not None
    view = SheetView(game, state.characters[hero], state)
    reader = sheet_reader(view)
    stream = ctx.for_tag(0).stream(key, "to-hit")
    modifier = evaluate(ability.to_hit, reader, stream).value if ability.to_hit else 0
    formula = _damage_formula(ability)
    rule = combat_of(game).attack
    assert rule is not None
    rows: list[dict[str, Any]] = []
    words: list[str] = []
    events: list[str] = []
    for number, index in enumerate(targets):
        foe = encounter.combatants[index]
        defence = foe.defence or 0
        edge = attack_edge(game, names_of(state, encounter, me),
                           names_of(state, encounter, index), distance)
        # the fight's own attack (a total, successes, roll-against, symbols)
        rolled, result = kind_attack(game, view, caster.name, modifier, defence, ctx,
                                     f"{key}/{number}/attack", edge.lean)
        if result == "hit" and edge.critical:  # CMB-COND-2
            result = "critical"
        row: dict[str, Any] = {"target": foe.name, "rolls": rolled.rolls,
                               "modifier": modifier, "total": int(rolled.value),
                               "defence": defence, "result": result, "damage": 0,
                               "hp": foe.hp, "hpMax": foe.hp_max}
        if edge.affected_by:
            row["affectedBy"] = list(edge.affected_by)
        said = f"{foe.name}: {rolled.shown} · {result}"
        if result != "miss":
            if formula is not None:
                struck = strike(formula, reader, result == "critical", foe.hp or 0,
                                ctx.for_tag(0).stream(f"{key}/{number}", "damage"),
                                hit_damage(game, rolled, result))  # symbol-pool successes
                dealt = _dealt(game, foe, struck.damage, ability, row)
                row["damageRolls"] = [list(r.faces) for r in struck.rolls.rolls]
                encounter = _strike_foe(encounter, index, dealt, row, events)
                said += f", {_dice_text(struck.rolls, struck.damage, formula)}"
                said += f" {ability.damage_type}" if ability.damage_type else ""
                if dealt != struck.damage:
                    said += f" ({'; '.join(row.get('affectedBy', []))}: {dealt})"
            encounter, said = _applied_to(game, state, encounter, index, chosen, caster.name,
                                          None, row, said)
        said += _standing(encounter, index)
        rows.append(row)
        words.append(said)
    return encounter, rows, words, events


def _applied_to(game: Game, state: State, encounter: Encounter, index: int, chosen: Chosen,
                caster: str, dc: int | None, row: dict[str, Any],
                said: str) -> tuple[Encounter, str]:
    """The conditions the ability puts on target ``index`` (in ``row["applied"]``), and its
    words with their labels."""
    encounter, applied = _applied(game, state, encounter, index, chosen, caster, dc)
    if applied:
        row["applied"] = applied
        said += "; " + ", ".join(label_of(game, a["condition"]) for a in applied)
    return encounter, said


def _standing(encounter: Encounter, index: int) -> str:
    """`` · Goblin 1 3/14``: the target's hit points after the ability."""
    after = encounter.combatants[index]
    return f" · {after.name} {after.hp}/{after.hp_max}"


def _save_spell(game: Game, state: State, encounter: Encounter, chosen: Chosen, me: int,
                targets: list[int], ctx: TurnContext,
                key: str) -> tuple[Encounter, list[dict[str, Any]], list[str], list[str],
                                   dict[str, Any]]:
    """CMB-ABIL-3, OQ-CMB-14: the damage rolled once; each target saves against the caster's
    DC (a foe with the ability modifier it joined with); a success takes half (rounded down),
    or nothing where the entry says ``none`` or ``negates``, and escapes what it applies."""
    ability = chosen.ability
    assert ability.save is not None
    caster = encounter.combatants[me]
    hero = state.character_index(caster.name)
    assert hero is not None
    view = SheetView(game, state.characters[hero], state)
    reader = sheet_reader(view)
    stream = ctx.for_tag(0).stream(key, "dc")
    if ability.save.difficulty is not None:
        dc = ability.save.difficulty
    else:
        assert ability.save_difficulty is not None  # checked at load
        dc = evaluate(ability.save_difficulty, reader, stream).value
    formula = _damage_formula(ability)
    struck = strike(formula, reader, False, 0, ctx.for_tag(0).stream(key, "damage")) \
        if formula is not None else None
    shared: dict[str, Any] = {"dc": dc, "save": ability.save.save}
    on_success = ability.save.on_success or "half"
    if struck is not None and formula is not None:
        shared.update({"damageRolls": [list(r.faces) for r in struck.rolls.rolls],
                       "rolled": struck.damage})
    label = save_label(game, ability.save.save)
    kind: CheckKind = "save" if any(
        s.id == ability.save.save for s in game.ruleset.sheet.saves) else "ability"
    foe_view = SheetView(game, None, state)
    rows: list[dict[str, Any]] = []
    words: list[str] = []
    events: list[str] = []
    for index in targets:
        foe = encounter.combatants[index]
        rolled = _roll(game, foe_view, foe.name, kind, ability.save.save, label,
                       foe.modifier or 0, dc, ctx, f"{key}/save/{foe.name.casefold()}")
        saved = rolled.success
        row: dict[str, Any] = {"target": foe.name, "rolls": rolled.rolls,
                               "total": int(rolled.value), "saved": saved, "damage": 0,
                               "hp": foe.hp, "hpMax": foe.hp_max}
        said = f"{foe.name}: {rolled.shown} · {'saves' if saved else 'fails'}"
        if struck is not None:
            damage = struck.damage if not saved else (
                struck.damage // 2 if on_success == "half" else 0)
            dealt = _dealt(game, foe, damage, ability, row)
            encounter = _strike_foe(encounter, index, dealt, row, events)
            said += f", {dealt}"
        if not saved:
            encounter, said = _applied_to(game, state, encounter, index, chosen, caster.name,
                                          dc, row, said)
        said += _standing(encounter, index)
        rows.append(row)
        words.append(said)
    head = f"{label} DC {dc}"
    if struck is not None and formula is not None:
        head = f"{_dice_text(struck.rolls, struck.damage, formula)}" + (
            f" {ability.damage_type}" if ability.damage_type else "") + f", {head}"
    return encounter, rows, [head, *words], events, shared


def _teach(game: Game, party: Party) -> list[str]:
    """The GM's line for abilities, where the ruleset's catalogs hold fight abilities: the
    first one a hero uses on foes (no reaction)."""
    if fighting(game) is not None:
        return []
    lines = foe_teach(game, party)  # CMB-ABIL-4: the foes' own abilities
    used = next((e for c in game.ruleset.catalogs for e in c.entries
                 if (ability := ability_of(e.mechanics)) is not None
                 and not ability.is_reaction), None)
    if used is None:
        return lines
    return [*lines, "- A hero uses a sheet ability or spell on foes: " + example(
                "attack", who=party.hero, use=used.label, target=FOE_NAMES[0])
            + " (several targets: a comma list; it takes the place of the first attack; the "
            "engine pays its cost, rolls its attack or each foe's save and its damage); one "
            "that grants an action (Action Surge) needs no target. Reactions fire by "
            "themselves from the heroes' standing orders."]


CAST_RECORD = {
    **OUTCOME_USE_RECORD,  # an ability's use in an outcome fight (CMB-OUTC-1..3)
    "round": "the encounter's round", "slot": "the use's place (1-based) in the round's "
    "order among the reply's attacks", "attacker": "who used it", "use": "the entry's label",
    "ref": "the entry's reference", "budget": "the turn action it spent (none: free)",
    "paid": "what its cost took from the hero's pools (slot_1:1)",
    "targets": "each target: target, rolls, modifier, total, defence, result (an attack "
               "spell); rolls, total, saved (a save spell); damage (dealt), damageRolls, hp, "
               "hpMax, affectedBy (typed defences), applied (conditions put on it); a foe's "
               "use on heroes also temporary, reaction, sustain, zeroHp (CMB-HP0-1..4)",
    "dc": "a save spell's DC, the caster's", "save": "the save each target makes",
    "damageRolls": "a save spell's damage dice, rolled once",
    "rolled": "a save spell's damage before any save or defence",
    "damage": "the damage dealt to all targets",
    "healed": "an ability aimed at heroes (targets ally or self): what it healed in all "
              "(each target's row: healed, hp, hpMax, applied)",
    "damageType": "the ability's damage type",
    "sustains": "the ability now sustained (CMB-SUS-2)",
    "ended": "what the ability sustained before it ended, and whom it left (CMB-SUS-3/7)",
    "granted": "the turn action granted once more this round (CMB-TURN-17)",
    "events": "damage:<target>:<points>, felled:<foe>, end:victory; a foe's use: "
              "down:<hero>, dead:<hero>, stable:<hero>, end:defeat (CMB-CARD-1, CMB-HP0-3/4)",
    "loot": "a won fight's drops", "recovered": "a won fight's ammunition picked up",
    "ability": "a foe's use: the id of its template's ability (CMB-ABIL-4)",
    "left": "a foe's use: the ability's uses left this fight",
    "regenerated": "the round's last attack: each foe that regenerated, or was stopped "
                   "(CMB-ABIL-7): who, amount, hp, stoppedBy",
    "roundEnd": "the round's last attack: the conditions' end of round (CMB-COND-3..6)",
}


@action("attack", "use", Cast, phase=ROUND, record=CAST_RECORD, teach=_teach,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.TARGET_DOWN,
                 reasons.CANNOT_ACT, reasons.UNKNOWN_ENTRY, reasons.REACTION_ONLY,
                 reasons.TOO_MANY_TARGETS, reasons.UNKNOWN_BUDGET, reasons.NO_TIME,
                 reasons.CANNOT_PAY, reasons.MISSING_ATTRIBUTE, reasons.USED_UP,
                 reasons.PLAYERS_ROLL))
def cast(game: Game, state: State, request: Cast, ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who= use= target= action=]``: a hero's ability or spell (CMB-ABIL-1..3, 6;
    CMB-SUS-1..3, 7; CMB-TURN-17)."""
    encounter = encounter_on(game, state, BY_TURNS)
    if isinstance(encounter, Refusal):
        return refuse(state, request.tag, encounter)
    own = kind_of(game).cast
    if own is not None:  # CMB-OUTC-1..3: an outcome fight's ability use
        return own(game, state, request.tag, request.who, request.use, request.target,
                   request.position, encounter, ctx)
    me = encounter.find(request.who)
    if me is None:
        return refuse(state, request.tag, Refusal(
            reasons.UNKNOWN_COMBATANT, f'{request.who[:60]} is not in the fight: [combat: '
            f'op="join" foe="{request.who[:60]}"] first; nothing was done.'))
    caster = encounter.combatants[me]
    if caster.side == "foes":  # CMB-ABIL-4: a foe's own abilities, from its template
        return foe_cast(game, state, encounter, me, request.tag, request.use, request.target,
                        request.range, ctx)
    if not standing(game, state, caster):  # CMB-TURN-8
        return refuse(state, request.tag, Refusal(
            reasons.DOWNED, f"{caster.name} is down and does not act; nothing was done."))
    stopped = cannot_act(game, state, encounter, me)  # CMB-TYPE-2: no abilities either
    if stopped is not None:
        return refuse(state, request.tag, stopped)
    hero = state.character_index(caster.name)
    assert hero is not None
    character = state.characters[hero]
    chosen = chosen_ability(game, character, request.use)
    if chosen is None:
        return refuse(state, request.tag, Refusal(
            reasons.UNKNOWN_ENTRY, f'{caster.name} has no ability called '
            f'"{request.use.strip()[:60]}" that a fight can use; nothing was done.'))
    ability = chosen.ability
    label = chosen.entry.label
    if ability.is_reaction:  # CMB-REACT-5
        return refuse(state, request.tag, Refusal(
            reasons.REACTION_ONLY, f"{label} is a reaction: it is used by itself when its "
            "moment comes (a standing order in the party file), never as one of the turn's "
            "actions; nothing was done."))
    if ability.for_allies:  # a heal or a buff, aimed at heroes of the fight
        targets = ally_targets(state, encounter, me, request.target, ability.target_count,
                               chosen.entry.label, ability.targets == "self")
    else:
        targets = _targets(game, state, encounter, caster, request, ability.target_count) \
            if ability.aimed else []
    if isinstance(targets, Refusal):
        return refuse(state, request.tag, targets)
    budget = _budget(game, request.budget, ability)
    if isinstance(budget, Refusal):
        return refuse(state, request.tag, budget)
    encounter = round_of(encounter, ctx)
    view = SheetView(game, character, state)
    if budget is not None:
        late = _no_time(game, view, encounter.combatants[me], budget, ctx)
        if late is not None:
            return refuse(state, request.tag, late)
    bought = paid(game, state, character, ability)
    if isinstance(bought, str):
        return refuse(state, request.tag, Refusal(
            reasons.CANNOT_PAY, f"{caster.name} has no {bought} left to pay for {label}; "
            "nothing was done."))
    payer, taken = bought
    state = state.with_character(hero, payer).model_copy(update={"encounter": encounter})
    notes: list[str] = []
    record: dict[str, Any] = {"round": encounter.round, "attacker": caster.name, "use": label,
                              "ref": chosen.ref, "budget": budget}
    if taken:
        record["paid"] = ", ".join(taken)
    text = f"{caster.name} uses {label}" + (f" ({', '.join(taken)})" if taken else "")
    if ability.concentration:  # CMB-SUS-3: the one sustained before ends
        before = encounter.combatants[me].sustains
        state, gone = sustain_ended(state, encounter, me)
        encounter = state.encounter or encounter
        if before is not None:
            record["ended"] = {"ref": before, "removed": gone}
            text += f", ending what {caster.name} sustained before" + (
                f" ({', '.join(gone)} ends)" if gone else "")
    strikes = len(encounter.combatants[me].spent)
    key = f"ability/{caster.name.casefold()}/{strikes}/{chosen.ref}"
    events: list[str] = []
    if targets:
        distance = request.range.casefold()
        if distance not in RANGES:
            if distance:
                notes.append(f'range="{request.range[:20]}" is not near or far: near was used')
            distance = "near"
        shown = ", ".join(encounter.combatants[i].name for i in targets)
        if ability.for_allies:
            state, rows, words = on_allies(game, state, encounter, chosen, me, targets, ctx,
                                           key)
            encounter = state.encounter or encounter
        elif ability.attack_roll or ability.save is None:
            encounter, rows, words, events = _attack_spell(
                game, state, encounter, chosen, me, targets, distance, ctx, key)
        else:
            encounter, rows, words, events, shared = _save_spell(
                game, state, encounter, chosen, me, targets, ctx, key)
            record.update(shared)
        record["targets"] = rows
        if ability.for_allies:
            record["healed"] = sum(r.get("healed", 0) for r in rows)
        else:
            record["damage"] = sum(r["damage"] for r in rows)
        if ability.damage_type is not None:
            record["damageType"] = ability.damage_type
        text += f" on {shown}: " + "; ".join(words) + "."
    else:
        text += "."
    combatants = list(encounter.combatants)
    mine = combatants[me]
    update: dict[str, Any] = {}
    if budget is not None:
        update["spent"] = (*mine.spent, budget)
    if ability.concentration:
        update["sustains"] = chosen.ref  # CMB-SUS-2
        record["sustains"] = label
        text += f" {caster.name} sustains {label}."
    if ability.grants is not None:  # CMB-TURN-17
        grants = ability.grants
        update["granted"] = (*mine.granted, *(grants.action,) * grants.count)
        record["granted"] = grants.action
        name = next((a.name for a in combat_of(game).turn_actions if a.id == grants.action),
                    grants.action)
        text += f" {caster.name} has {grants.count} more {name} this round."
    combatants[me] = mine.model_copy(update=update)
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    state = state.model_copy(update={"encounter": encounter})
    felled = [e.split(":", 1)[1] for e in events if e.startswith("felled:")]
    if felled:
        text += f" {', '.join(felled)} {'is' if len(felled) == 1 else 'are'} felled."
        if not any(c.side == "foes" and c.hp for c in encounter.combatants):
            events.append("end:victory")  # docs/design.md#rounds-and-order: the last foe falls
            text += " The fight is won."
            state, spoils, said = felled_loot(game, state, encounter, ctx)
            if spoils:
                record["loot"] = spoils
                text += said
            state, recovered, said = picked_up(game, state, encounter)
            if recovered:
                record["recovered"] = recovered
                text += said
            state = fight_over(state)
    record["slot"] = ctx.ordinal + 1
    if events:
        record["events"] = events
    return state, accepted(request.tag, text, record, tuple(notes))
