"""A foe's own abilities in a formula fight, and its regeneration (CMB-ABIL-4/5/7/8 of
docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary; the keys are
:mod:`engine.ruleset.foe_abilities`).

``[attack: who="Goblin 1" use="<ability>" target="Ada, Bo"]``: one of the foe's template
abilities, used in place of one of its attacks this round (it spends one, CMB-TURN-12). An
attack rolls the attack check with the ability's ``toHit`` against each hero's defence (the
hero's reaction to being hit fires before the hit is confirmed, CMB-REACT-1..7) and its own
damage on a hit; a save ability (a breath weapon, CMB-ABIL-5) rolls its damage once and each
hero makes the save the player would roll, against the foe's DC, taking half on a success
(``onSuccess``: ``none`` or ``negates`` take nothing). The damage type meets the hero's typed
defences (CMB-ABIL-6, CMB-TYPE-1); a hero it damages makes its sustain save (CMB-SUS-4..7);
one it drops to 0 is down, with what 0 means for it (CMB-HP0-1..4).

At the end of every round a foe above 0 with ``regenerate`` regains it unless it took damage
of a ``stoppedBy`` type that round, told on the round's last attack (record ``regenerated``)
like the conditions' ``roundEnd`` (CMB-ABIL-7)."""

from __future__ import annotations

from typing import Any

from tagparse import Tag

from ...rules import reasons
from ...rules.abilities import guard_of
from ...rules.armour import defences_of, foe_qualities, typed_damage
from ...rules.context import TurnContext
from ...rules.fight.conditions import attack_edge, names_of
from ...rules.fight.formula import hero_defence, hero_health, hurt, standing, strike
from ...rules.foe_abilities import damage_taken, foe_use, regenerates
from ...rules.formula import foe_reader
from ...rules.game import Game
from ...rules.sheet import SheetView, save_label
from ...rules.state import Combatant, Encounter, FoeUse, State
from ...ruleset import Formula, parse_formula
from ..answers import Answer, accepted
from ..checks.pipeline import roll_check
from ..declare import Refusal
from ..examples import Party, example
from .conditions import InRound
from .encounter import (
    FOE_STRIKE,
    RANGES,
    cannot_act,
    foe_no_time,
    refuse,
    round_of,
    target_names,
    target_of,
)
from .hp0 import downed, lost_if_none_stand
from .judge import kind_attack
from .react import HIT, react_to_hit, sustain_after_damage

SPELL = "spell"  # OQ-CMB-11: the trigger of a foe's spell


def _targets(game: Game, state: State, encounter: Encounter, foe: Combatant, named: str,
             most: int, label: str) -> list[int] | Refusal:
    """``target=``: each comma-separated name a standing hero (the only one standing without
    any), each once, at most the ability's ``targets``."""
    found: list[int] = []
    for name in target_names(named) or [""]:
        index = target_of(game, state, encounter, foe, name)
        if isinstance(index, Refusal):
            return index
        if index not in found:
            found.append(index)
    if len(found) > most:
        return Refusal(reasons.TOO_MANY_TARGETS, f"{label} reaches {most} hero"
                       f"{'es' if most != 1 else ''} at most, not {len(found)}; nothing was "
                       "done.")
    return found


def _damage(use: FoeUse) -> Formula | None:
    if use.damage is None:
        return None
    parsed = parse_formula(use.damage)
    return parsed if isinstance(parsed, Formula) else None


def _dice(struck: Any) -> str:
    dice = " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in struck.rolls.rolls)
    return f"{dice or struck.damage} = {struck.damage}"


def _attack_row(game: Game, state: State, encounter: Encounter, me: int, target: int,
                use: FoeUse, distance: str, ctx: TurnContext,
                key: str) -> tuple[State, Encounter, dict[str, Any], str, int]:
    """CMB-ABIL-4: the ability's attack on hero ``target``: the attack check with its
    ``toHit`` against the hero's defence, the hero's reaction to being hit before the hit is
    confirmed (CMB-REACT-1..7), then its own damage. Returns the state, encounter, the row,
    its words and the damage dealt."""
    foe = encounter.combatants[me]
    hero = state.character_index(encounter.combatants[target].name)
    assert hero is not None
    name = state.characters[hero].name
    defence = hero_defence(game, state, hero) + guard_of(encounter.combatants[target],
                                                         encounter.round)
    modifier = use.to_hit or 0
    edge = attack_edge(game, names_of(state, encounter, me), names_of(state, encounter, target),
                       distance)
    # the fight's own hit rule (sum, pool, roll-against, symbol-pool), its toHit as the
    # foe's number, as a foe's strike reads its template attack (CMB-ATK-7)
    rolled, result = kind_attack(game, SheetView(game, None, state), foe.name, modifier, defence,
                                 ctx, f"{key}/{name.casefold()}", edge.lean)
    if result == "hit" and edge.critical:  # CMB-COND-2
        result = "critical"
    row: dict[str, Any] = {"target": name, "rolls": rolled.rolls, "modifier": modifier,
                           "total": int(rolled.value), "defence": defence, "result": result,
                           "damage": 0}
    if edge.affected_by:
        row["affectedBy"] = list(edge.affected_by)
    said = f"{name}: {rolled.shown}"
    reacted = None
    for on in (SPELL, HIT) if use.spell else (HIT,):  # CMB-REACT-4, OQ-CMB-11
        reacted = react_to_hit(game, state, encounter, target, rolled, defence, result, ctx,
                               on)
        if reacted is not None:
            break
    if reacted is not None:
        state, encounter, defence, result = (reacted.state, reacted.encounter,
                                             reacted.defence, reacted.result)
        row.update({"reaction": reacted.record, "defence": defence, "result": result})
        said += reacted.text
    said += f" · {result}"
    dealt = 0
    formula = _damage(use)
    if result != "miss" and formula is not None:
        health = hero_health(game, state, hero)
        assert health is not None
        struck = strike(formula, foe_reader(game.ruleset, foe.tier or 1, foe.modifier or 0),
                        result == "critical", health.hp,
                        ctx.for_tag(0).stream(f"{key}/{name.casefold()}", "damage"))
        dealt, guards = typed_damage(struck.damage, use.damage_type,
                                     defences_of(game, state, hero),
                                     foe_qualities(game, foe, use.id))  # ITM-WPN-29
        row["damageRolls"] = [list(r.faces) for r in struck.rolls.rolls]
        said += f", {_dice(struck)}" + (f" {use.damage_type}" if use.damage_type else "")
        if guards:
            row["affectedBy"] = [*row.get("affectedBy", []), *(g.text for g in guards)]
            said += f" ({'; '.join(g.text for g in guards)}: {dealt})"
    return state, encounter, row, said, dealt


def _save_row(game: Game, state: State, encounter: Encounter, target: int, use: FoeUse,
              rolled: int | None, ctx: TurnContext, key: str,
              qualities: frozenset[str] = frozenset()) -> tuple[State, dict[str, Any], str, int]:
    """CMB-ABIL-5, OQ-CMB-14: hero ``target`` makes the ability's save against its DC through
    the check pipeline (the save the player rolls); ``rolled`` (rolled once for every target)
    is taken whole on a failure, half (rounded down) on a success, nothing where
    ``onSuccess`` is ``none`` or ``negates``; ``qualities`` go with the damage (ITM-WPN-29)."""
    assert use.save is not None and use.dc is not None
    hero = state.character_index(encounter.combatants[target].name)
    assert hero is not None
    name = state.characters[hero].name
    kind = "save" if any(s.id == use.save for s in game.ruleset.sheet.saves) else "ability"
    state, checked = roll_check(game, state, hero, {kind: use.save, "dc": str(use.dc)},
                                ctx.for_tag(0), f"{key}/save/{name.casefold()}")
    saved = checked.ok and checked.success
    row: dict[str, Any] = {"target": name, "rolls": checked.record.get("rolls", []),
                           "total": checked.record.get("total", 0), "saved": saved,
                           "damage": 0}
    said = f"{name}: {row['total']} · {'saves' if saved else 'fails'}"
    dealt = 0
    if rolled is not None:
        damage = rolled if not saved else (rolled // 2 if use.on_success == "half" else 0)
        dealt, guards = typed_damage(damage, use.damage_type, defences_of(game, state, hero),
                                     qualities)
        if guards:
            row["affectedBy"] = [g.text for g in guards]
            said += f" ({'; '.join(g.text for g in guards)})"
    return state, row, said, dealt


def _hurt_hero(game: Game, state: State, encounter: Encounter, target: int, dealt: int,
               row: dict[str, Any], events: list[str], ctx: TurnContext,
               key: str) -> tuple[State, Encounter, str]:
    """The damage taken (temporary points first), the sustain save or its end
    (CMB-SUS-4..7), and a hero dropped to 0 (CMB-HP0-1..4, CMB-CARD-1)."""
    hero = state.character_index(encounter.combatants[target].name)
    assert hero is not None
    name = state.characters[hero].name
    state, after = hurt(game, state, hero, dealt)
    row.update({"damage": dealt, "hp": after.hp, "hpMax": after.hp_max})
    if after.temporary:
        row["temporary"] = after.temporary
    said = f" · {name} {after.hp}/{after.hp_max}"
    if dealt:
        events.append(f"damage:{name}:{dealt}")
    state = state.model_copy(update={"encounter": encounter})
    sustained = sustain_after_damage(game, state, target, dealt, not after.hp, ctx,
                                     f"{key}/{name.casefold()}")
    if sustained.record:
        state = sustained.state
        row["sustain"] = sustained.record
        said += sustained.text.rstrip(".")
    if not after.hp and dealt:
        state, words = downed(game, state, hero, events, row)
        said += words.rstrip(".")
    return state, state.encounter or encounter, said


def foe_teach(game: Game, party: Party) -> list[str]:
    """The GM's line for the foes' own abilities, where some template has them: the first
    such template's foe using its first ability."""
    combat = game.ruleset.combat
    having = [t for t in (combat.templates if combat is not None else []) if t.combat.abilities]
    if not having:
        return []
    template, ability = having[0], having[0].combat.abilities[0]
    targets = ", ".join(n for n in (party.hero, party.other) if n is not None) or None
    return ["- A foe uses one of its own abilities (its template lists them) in place of one "
            "of its attacks: " + example("attack", who=template.label or template.role.title(),
                                         use=ability.label or ability.id, target=targets)
            + " (the engine rolls its attack, or each hero's save, and its damage)."]


def foe_cast(game: Game, state: State, encounter: Encounter, me: int, tag: Tag, named: str,
             target: str, range_: str, ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who="<foe>" use="<ability>" target="<hero>, …"]``: one of the foe's own
    abilities, in place of one of its attacks this round (CMB-ABIL-4/5/6, CMB-TPL-8)."""
    foe = encounter.combatants[me]
    if not standing(game, state, foe):  # CMB-TURN-8
        return refuse(state, tag, Refusal(
            reasons.DOWNED, f"{foe.name} is down and does not act; nothing was done."))
    stopped = cannot_act(game, state, encounter, me)  # CMB-TYPE-2: no abilities either
    if stopped is not None:
        return refuse(state, tag, stopped)
    at = foe_use(foe, named)
    if at is None:
        known = ", ".join(u.label for u in foe.abilities) or "none"
        return refuse(state, tag, Refusal(
            reasons.UNKNOWN_ENTRY, f'{foe.name} has no ability called "{named.strip()[:60]}" '
            f"(its template's: {known}); nothing was done."))
    use = foe.abilities[at]
    if use.left == 0:
        return refuse(state, tag, Refusal(
            reasons.USED_UP, f"{foe.name} has used {use.label} as often as it can this fight; "
            "nothing was done."))
    targets = _targets(game, state, encounter, foe, target, use.targets, use.label)
    if isinstance(targets, Refusal):
        return refuse(state, tag, targets)
    for index in targets:
        hero = state.character_index(encounter.combatants[index].name)
        if hero is None or hero_health(game, state, hero) is None:
            return refuse(state, tag, Refusal(
                reasons.UNSUPPORTED, "This ruleset keeps no hit points for heroes (no health "
                "pool or health track), so a foe's ability cannot land; nothing was done."))
    encounter = round_of(encounter, ctx)
    foe = encounter.combatants[me]
    late = foe_no_time(foe)
    if late is not None:
        return refuse(state, tag, late)
    notes: list[str] = []
    distance = range_.casefold()
    if distance not in RANGES:
        if distance:
            notes.append(f'range="{range_[:20]}" is not near or far: near was used')
        distance = "near"
    # docs/design.md#combat-dice: keyed by the round's reply, the foe and its strike number this
    # round
    key = f"attack/{foe.name.casefold()}/{len(foe.spent)}/{use.id}"
    record: dict[str, Any] = {"round": encounter.round, "attacker": foe.name, "use": use.label,
                              "ability": use.id}
    text = f"{foe.name} uses {use.label} on " + ", ".join(
        encounter.combatants[i].name for i in targets) + ": "
    rolled: int | None = None
    if use.save is not None:
        record.update({"save": use.save, "dc": use.dc})
        formula = _damage(use)
        if formula is not None:  # CMB-ABIL-3/5: rolled once for every target
            struck = strike(formula, foe_reader(game.ruleset, foe.tier or 1, foe.modifier or 0),
                            False, 0, ctx.for_tag(0).stream(key, "damage"))
            rolled = struck.damage
            record.update({"damageRolls": [list(r.faces) for r in struck.rolls.rolls],
                           "rolled": rolled})
            text += _dice(struck) + (f" {use.damage_type}" if use.damage_type else "") + ", "
        text += f"{save_label(game, use.save)} DC {use.dc}; "
    rows: list[dict[str, Any]] = []
    words: list[str] = []
    events: list[str] = []
    for index in targets:
        if use.save is not None:
            state, row, said, dealt = _save_row(game, state, encounter, index, use, rolled,
                                                ctx, key, foe_qualities(game, foe, use.id))
        else:
            state, encounter, row, said, dealt = _attack_row(game, state, encounter, me, index,
                                                             use, distance, ctx, key)
        state, encounter, more = _hurt_hero(game, state, encounter, index, dealt, row, events,
                                            ctx, key)
        rows.append(row)
        words.append(said + more)
    record["targets"] = rows
    record["damage"] = sum(r["damage"] for r in rows)
    if use.damage_type is not None:
        record["damageType"] = use.damage_type
    text += "; ".join(words) + "."
    combatants = list(encounter.combatants)
    mine = combatants[me]
    was = mine.abilities[at].left
    left = None if was is None else was - 1
    uses = list(mine.abilities)
    uses[at] = uses[at].model_copy(update={"left": left})
    combatants[me] = mine.model_copy(update={"spent": (*mine.spent, FOE_STRIKE),
                                             "abilities": tuple(uses)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    state = state.model_copy(update={"encounter": encounter})
    if left is not None:
        record["left"] = left
    if any(e.startswith("down:") for e in events):
        state, lost = lost_if_none_stand(game, state, encounter, events)
        text += lost
    record["slot"] = ctx.ordinal + 1
    if events:
        record["events"] = events
    return state, accepted(tag, text, record, tuple(notes))


def regenerate_round(game: Game, before: State, state: State, answers: list[Answer],
                     ctx: TurnContext, in_round: InRound) -> tuple[State, list[Answer]]:
    """CMB-ABIL-7: after a reply that was a round, each foe above 0 with ``regenerate``
    regains it (up to its most) unless it took damage of a ``stoppedBy`` type in this
    round's answered tags; told at the end of the round's last answered ``[attack:]`` (record
    ``regenerated``, text ``Regeneration: …``). No round, or a fight that ended, changes
    nothing."""
    encounter = state.encounter
    if encounter is None or encounter.turn != ctx.turn_key:
        return state, answers
    if before.encounter is not None and before.encounter.turn == ctx.turn_key:
        return state, answers  # this reply's round is already over
    if not any(c.regenerate for c in encounter.combatants):
        return state, answers
    last = next((i for i in range(len(answers) - 1, -1, -1) if in_round(answers[i])), None)
    if last is None:
        return state, answers
    took = damage_taken(a.record for a in answers if a.ok)
    rows: list[dict[str, Any]] = []
    lines: list[str] = []
    combatants = list(encounter.combatants)
    for at, foe in enumerate(combatants):
        if not foe.regenerate or not foe.hp or foe.hp_max is None or foe.hp >= foe.hp_max:
            continue
        hurt_by = took.get(foe.name.casefold(), set())
        gained = regenerates(foe, hurt_by)
        if gained:
            combatants[at] = foe.model_copy(update={"hp": foe.hp + gained})
            rows.append({"who": foe.name, "amount": gained, "hp": foe.hp + gained})
            lines.append(f"{foe.name} regenerates {gained} ({foe.hp + gained}/{foe.hp_max})")
        else:
            stopping = sorted(hurt_by & set(foe.stopped_by))
            rows.append({"who": foe.name, "amount": 0, "hp": foe.hp, "stoppedBy": stopping})
            lines.append(f"{foe.name} does not regenerate ({', '.join(stopping)})")
    if not rows:
        return state, answers
    told = answers[last]
    answers = list(answers)
    answers[last] = told.model_copy(update={
        "text": f"{told.text} Regeneration: {'; '.join(lines)}.",
        "record": {**told.record, "regenerated": rows}})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    return state.model_copy(update={"encounter": encounter}), answers
