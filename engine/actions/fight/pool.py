"""Pool fights: an ``[attack:]`` in a ``dice-pool`` ruleset rolls the attack check's pool and counts
successes against the defence (ITM-WPN-11/13 of docs/rules/items.md#9-weapons-in-combat,
ITM-MODE-4/5, ITM-FLOOR-2/3 of
docs/rules/items.md#11-modes-a-second-weapon-a-floor-and-conditions-on-a-hit, ITM-ARM-3,
ITM-HARD-1..4 of docs/rules/items.md#12-armour-and-worn-effects-in-combat; the arithmetic and the
readings are in :mod:`engine.rules.fight.pool`). :func:`engine.actions.fight.formula.hero_strike`
and ``_foe_attack`` hand a pool fight's strike here once the attacker, target, weapon, budget, range
and conditions are settled, so everything before the dice is the same as in a sum fight."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ...dice import Stream
from ...rules.armour import Guard, defences_of, foe_defences, foe_qualities, typed_damage
from ...rules.checks.modifiers import sources
from ...rules.checks.read import CheckRead, Rolled
from ...rules.context import TurnContext
from ...rules.fight.conditions import Edge
from ...rules.fight.formula import Health, hurt, in_order
from ...rules.fight.pool import (
    PoolDamage,
    below_hardness,
    damage_dice,
    foe_called,
    hardness_line,
    numbered,
    per_die_target,
    pool_damage,
    pool_result,
    pool_size,
    spent,
    taken,
    thrown,
    thrown_line,
)
from ...rules.formula import evaluate, foe_reader
from ...rules.game import Game
from ...rules.items import read_stat
from ...rules.sheet import SheetView
from ...rules.state import Combatant, Encounter, State
from ...rules.weapons import WeaponNumbers, skill_rank, whole
from ...ruleset import Formula, Template, parse_formula
from ...ruleset.resolution import PoolResolution
from ...ruleset.ruleset import POOL
from ..answers import Answer, accepted
from ..checks.pipeline import effective_resolution, resolve_request
from .arms import OFF_HAND, Armed, Arming, fire, floor_of, on_hit, spent_with
from .felled import Won, fell, struck_events
from .hp0 import downed, lost_if_none_stand
from .react import react_to_hit, sustain_after_damage

UNARMED = "unarmed"
FOE_STRIKE = "strike"


def _res(game: Game) -> PoolResolution:
    res = game.ruleset.resolution
    assert isinstance(res, PoolResolution)
    return res


def _style(game: Game) -> str | None:
    combat = game.ruleset.combat
    return combat.pool.style if combat is not None and combat.pool is not None else None


def _gain(game: Game) -> int | None:
    """The spending style's ``combat.pool.gain`` (None: the number is not modelled)."""
    combat = game.ruleset.combat
    pool = combat.pool if combat is not None else None
    return pool.gain if pool is not None and pool.style == "spending" else None


# --- joining: hardness and damage reduction fixed as the fight starts ------------------------


def pool_hero(game: Game, state: State, index: int, hero: Combatant) -> Combatant:
    """ITM-HARD-1/4: a hero (a creature written as a sheet) joins with the hardness its sheet
    gives (``combat.pool.hardness``, its armour's through ``itemStat``), read once now."""
    combat = game.ruleset.combat
    pool = combat.pool if combat is not None else None
    if game.fight.hit != POOL or pool is None:
        return hero
    hero = numbered(hero, _gain(game))  # the spending style's number
    if pool.hardness is None:
        return hero
    view = SheetView(game, state.characters[index], state)
    return hero.model_copy(update={"hardness": max(int(view.value(pool.hardness)), 0)})


def pool_foe(game: Game, template: Template, foe: Combatant, stream: Stream) -> Combatant:
    """ITM-HARD-1: a creature gives its own ``hardness``; ITM-FLOOR-2: its ``reduction``; both
    from its template at its tier, fixed as it joins (CMB-TPL-8)."""
    numbers = template.combat
    if game.fight.hit == POOL:
        foe = numbered(foe, _gain(game))  # the spending style's number
    if game.fight.hit != POOL or (numbers.hardness is None and numbers.reduction is None):
        return foe
    reader = foe_reader(game.ruleset, foe.tier or 1, foe.modifier or 0)
    update: dict[str, int] = {}
    for key, formula in (("hardness", numbers.hardness), ("reduction", numbers.reduction)):
        if formula is not None:
            update[key] = max(int(evaluate(formula, reader, stream).value), 0)
    return foe.model_copy(update=update)


# --- the dice -----------------------------------------------------------------------------


def attack_dice(game: Game, state: State, who: int, view: SheetView,
                weapon: WeaponNumbers | None, modifier: int) -> tuple[int, list[str]]:
    """ITM-MODE-4, ITM-ARM-3: the dice of a hero's strike before the pool's limits — the
    weapon's ``toHit`` (its abilities, skill and bonus, read as dice) and its mode's, or
    unarmed the attack check's own pool (its skill's ability and tier); then every
    ``{"to": "attacks"}`` change of the hero's conditions and worn or carried items, a fixed
    number of dice each. Also the names of what changed it."""
    dice = modifier
    if weapon is None:
        dice += _check_pool(game, view)
    changed: list[str] = []
    for name, part in sources(game, state, state.characters[who], view):
        flat = sum(m.flat or 0 for m in part.modifiers if m.to == "attacks")
        if flat:
            dice += flat
            changed.append(f"{name}: {flat:+d} {'die' if abs(flat) == 1 else 'dice'}")
    return dice, changed


def _check_pool(game: Game, view: SheetView) -> int:
    """CHK-POOL-A1/A2: the attack check's pool for an unarmed hero, its skill's ability
    rating and tier."""
    rule = game.ruleset.combat.attack if game.ruleset.combat is not None else None
    if rule is None:
        return 0
    row = next((s for s in game.ruleset.sheet.skills if s.id == rule.check), None)
    ability = int(view.ability_score(row.ability)) if row is not None and row.ability else 0
    return ability + skill_rank(view, rule.check)


def weapon_target(game: Game, armed: Armed | None, arming: Arming) -> int:
    """ITM-WPN-11, ITM-MODE-5: the per-die target of a hero's strike."""
    res = _res(game)
    own = None
    if armed is not None and armed[2].to_hit is not None:
        written = read_stat(game, armed[1], armed[2].to_hit.target)
        own = whole(written) or None
    shift = arming.mode.target or 0 if arming.mode is not None else 0
    return per_die_target(res, own, shift)


def roll_pool(game: Game, view: SheetView, name: str, dice: int, target: int, defence: int,
              strikes: int, ctx: TurnContext, lean: int = 0) -> tuple[Rolled, str, str]:
    """CMB-ATK-A3/A4 for pools: ``dice`` dice of the attack check (its pool's rules count the
    successes) at ``target``, against ``defence`` successes. The strike's dice key is the
    one a sum fight uses (docs/design.md#combat-dice), so a swipe rolls the same."""
    rule = game.ruleset.combat.attack if game.ruleset.combat is not None else None
    assert rule is not None
    effective, _ = effective_resolution(_res(game), "skill", rule.check, view)
    read = CheckRead(who=name, kind="skill", ident=rule.check, label="Attack",
                     attrs={"dc": str(max(defence, 1)), "threshold": str(target)}, view=view,
                     ability=None, ability_part=dice, rank=0, own_bonus=0, lean=lean)
    key = f"attack/{name.casefold()}/{strikes}"
    rolled = resolve_request(game, effective, read, ctx.for_tag(0), key)
    assert rolled is not None  # a difficulty is always given
    return rolled, pool_result(int(rolled.value), rolled.critical, defence), key


def extra_faces(game: Game, formula: Formula | None, critical: bool, stream: Stream) -> list[int]:
    """OQ-26: as many more dice of the pool's die as the damage expression has dice (twice as
    many on a critical, OQ-CMB-3), at most ``pool.max``."""
    res = _res(game)
    count = min(damage_dice(formula) * (2 if critical else 1), res.pool.max)
    return [stream.die(res.die.sides) for _ in range(count)]


def _double(game: Game) -> int | None:
    rule = _res(game).double
    return rule.from_ if rule is not None else None


def _shaped(record: dict[str, Any], dealt: int, reduction: int, floor: int | None,
            kind: str | None, guards: Sequence[Guard], affected: Sequence[str]) -> str:
    """What shaped a pool strike's damage, in its record: the reduction, the floor it was
    raised to, its type, and the typed defences that changed it (after ``affected``, what
    changed the roll). Returns the words after its figure: the type, and the defences with
    what got through."""
    if reduction:
        record["reduction"] = reduction
    if floor is not None:
        record["floor"] = floor
    if kind is not None:
        record["damageType"] = kind
    if guards:
        record["affectedBy"] = [*affected, *(g.text for g in guards)]
    words = f" {kind}" if kind else ""
    if guards:
        words += f" ({'; '.join(g.text for g in guards)}: {dealt})"
    return words


def _dealt_text(damage: PoolDamage, threshold: int, sides: int) -> str:
    text = f", {damage.successes} success{'es' if damage.successes != 1 else ''}"
    if damage.extra_faces:
        text += (f" + {len(damage.extra_faces)}d{sides} ≥{threshold} "
                 f"({','.join(map(str, damage.extra_faces))}): {damage.extra} more")
    if damage.reduction:
        text += f" − {damage.reduction} reduction"
    text += f" = {max(damage.successes + damage.extra - damage.reduction, 0)}"
    if damage.raised:
        text += f", raised to {damage.floor} (at least {damage.floor} on a hit)"
    return text


# --- a hero's strike ----------------------------------------------------------------------


@dataclass(frozen=True)
class Aim:
    """A hero's strike as :func:`engine.actions.fight._strike` settled it before the dice."""

    who: int
    me: int
    target: int
    armed: Armed | None
    budget: str
    arming: Arming
    distance: str
    edge: Edge
    weapon: WeaponNumbers | None
    modifier: int
    notes: list[str] = field(default_factory=list)


def pool_strike(game: Game, state: State, encounter: Encounter, tag: Any, ctx: TurnContext,
                aim: Aim, won: Won) -> tuple[State, Answer]:
    """A hero's strike on a foe in a pool fight (CMB-ATK-A1..A7 read for pools)."""
    res = _res(game)
    rule = game.ruleset.combat.attack if game.ruleset.combat is not None else None
    assert rule is not None
    hero = state.characters[aim.who]
    foe = encounter.combatants[aim.target]
    striker = encounter.combatants[aim.me]
    defence = foe.defence or 0
    view = SheetView(game, hero, state)
    dice, changed = attack_dice(game, state, aim.who, view, aim.weapon, aim.modifier)
    size = pool_size(res, dice)
    rolled, result, key = roll_pool(game, view, hero.name, dice, weapon_target(
        game, aim.armed, aim.arming), defence, len(striker.spent), ctx, aim.edge.lean)
    if result == "hit" and aim.edge.critical:  # CMB-COND-2
        result = "critical"
    threshold = int(str(rolled.record.get("threshold", res.target.default)))
    weapon_name = aim.armed[0].name if aim.armed is not None else UNARMED
    successes = int(rolled.value)
    affected = [*aim.edge.affected_by, *changed]
    record: dict[str, Any] = {
        "attacker": hero.name, "target": foe.name,
        "weapon": weapon_name + (OFF_HAND if aim.arming.off_hand else ""), "budget": aim.budget,
        "range": aim.distance, "rolls": rolled.rolls, "modifier": aim.modifier, "dice": size,
        "threshold": threshold, "total": successes, "successes": successes,
        "defence": defence, "result": result, "damage": 0, "hp": foe.hp, "hpMax": foe.hp_max,
        "round": encounter.round}
    if affected:
        record["affectedBy"] = affected
    if aim.arming.mode is not None:
        record["mode"] = aim.arming.mode.id
    text = f"{hero.name} → {foe.name} ({record['weapon']}): {rolled.shown} · {result}"
    combatants = list(encounter.combatants)
    style = _style(game)
    took = False
    if result != "miss" and striker.base is not None:  # the spending style's number is thrown
        record["number"] = striker.initiative
        striker = spent(striker)
        record["initiative"] = {hero.name: striker.initiative}
    if result != "miss" and style == "spending" and below_hardness(size, foe.hardness):
        record["hardness"] = foe.hardness  # ITM-HARD-2: it hits and does nothing
        text += ". " + hardness_line(f"{hero.name}'s {weapon_name}", foe_called(foe.name), size,
                                  foe.hardness)
    elif result != "miss" and "number" in record:  # ITM-FLOOR-3: never raised
        kind = (aim.weapon.damage_type if aim.weapon is not None else None) or rule.damage_type
        tags = aim.weapon.tags if aim.weapon is not None else frozenset()
        dealt, guards = typed_damage(thrown(record["number"], foe.reduction), kind,
                                     foe_defences(game, foe), tags)
        hp = max((foe.hp or 0) - dealt, 0)
        record.update({"damage": dealt, "hp": hp})
        text += thrown_line(record["number"], foe.reduction) + _shaped(
            record, dealt, foe.reduction, None, kind, guards, affected)
        foe = foe.model_copy(update={"hp": hp})
    elif result != "miss" and style == "taking":  # a taking strike takes initiative instead
        took = True
        mine, theirs = taken(striker.initiative, foe.initiative, successes)
        record["initiative"] = {hero.name: mine, foe.name: theirs}
        striker = striker.model_copy(update={"initiative": mine})
        foe = foe.model_copy(update={"initiative": theirs})
        text += f", takes {mine - encounter.combatants[aim.me].initiative} initiative " \
                f"({hero.name} {mine}, {foe.name} {theirs})"
    elif result != "miss":
        # OQ-26: the weapon's damage dice (a weapon without dice adds none); unarmed, the
        # system's damage formula's
        formula = aim.weapon.damage if aim.weapon is not None else rule.damage
        kind = (aim.weapon.damage_type if aim.weapon is not None else None) or rule.damage_type
        faces = extra_faces(game, formula, result == "critical",
                            ctx.for_tag(0).stream(key, "damage"))
        least = 0 if style == "spending" else floor_of(game, aim.armed)  # ITM-FLOOR-2/3
        damage = pool_damage(successes, faces, threshold, foe.reduction, least, _double(game))
        tags = aim.weapon.tags if aim.weapon is not None else frozenset()
        dealt, guards = typed_damage(damage.total, kind, foe_defences(game, foe), tags)
        hp = max((foe.hp or 0) - dealt, 0)
        record.update({"damage": dealt, "hp": hp, "damageRolls": [list(faces)]})
        text += _dealt_text(damage, threshold, res.die.sides) + _shaped(
            record, dealt, damage.reduction, damage.floor if damage.raised else None, kind,
            guards, affected)
        foe = foe.model_copy(update={"hp": hp})
    text += f" · {foe.name} {foe.hp}/{foe.hp_max}"
    text += (f"; {hero.name}'s number falls back to {striker.initiative}." if "number" in record
             else ".")
    if affected:
        text += f" Affected by: {' · '.join(affected)}."
    combatants[aim.target] = foe
    combatants[aim.me] = spent_with(striker, aim.budget, aim.armed)
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    if record["damage"]:  # ITM-ONHIT-1..4: only what arrived; never from a taking strike
        foe, applied, told = on_hit(game, state, encounter, aim.target, aim.armed,
                                     record["damage"], ctx, key)
        if applied:
            combatants[aim.target] = foe
            encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
            record["onHit"] = applied
            text += f" {'; '.join(told)}."
    next_state = state.model_copy(update={"encounter": encounter})
    next_state, shot, said = fire(game, next_state, aim.who, aim.armed, aim.arming, ctx)
    record.update(shot)
    text += said
    encounter = next_state.encounter or encounter
    events = struck_events(foe, record)
    if took:  # the order of the rounds to come follows the numbers now
        events.append(f"initiative:{hero.name}")
        next_state = _reordered(next_state)
    next_state, words = fell(game, next_state, encounter, foe, ctx, record, events, won)
    return _answered(tag, next_state, record, text + words, events, aim.notes, ctx)


def _reordered(state: State) -> State:
    """CMB-TURN-3/4: after a taking strike the encounter stands in the new initiative order."""
    encounter = state.encounter
    if encounter is None:
        return state
    ordered = encounter.model_copy(update={"combatants": in_order(encounter.combatants)})
    return state.model_copy(update={"encounter": ordered})


def _answered(tag: Any, state: State, record: dict[str, Any], text: str, events: list[str],
              notes: list[str], ctx: TurnContext) -> tuple[State, Answer]:
    """As :func:`engine.actions.fight._answered`: the strike's slot and its events."""
    record["slot"] = ctx.ordinal + 1
    if events:
        record["events"] = events
    return state, accepted(tag, text, record, tuple(notes))


# --- a foe's strike -----------------------------------------------------------------------


@dataclass(frozen=True)
class FoeAim:
    """A foe's strike as :func:`engine.actions.fight._foe_attack` settled it before the dice."""

    me: int
    target: int
    hero: int
    health: Health
    defence: int
    distance: str
    edge: Edge
    notes: list[str] = field(default_factory=list)


def _foe_formula(foe: Combatant) -> Formula | None:
    parsed = parse_formula(foe.damage or "0")
    return parsed if isinstance(parsed, Formula) else None


def hero_reduction(game: Game, state: State, hero: int) -> int:
    """ITM-FLOOR-2, ITM-ARM-9: a hero's damage reduction, ``combat.pool.reduction`` read on
    its sheet as it is hit (0 without it)."""
    combat = game.ruleset.combat
    pool = combat.pool if combat is not None else None
    if pool is None or pool.reduction is None:
        return 0
    view = SheetView(game, state.characters[hero], state)
    return max(int(view.value(pool.reduction)), 0)


def pool_foe_attack(game: Game, state: State, encounter: Encounter, tag: Any, ctx: TurnContext,
                    aim: FoeAim) -> tuple[State, Answer]:
    """CMB-ATK-7 for pools: a foe's template ``attack`` is its pool, the hero's defence the
    successes needed; a hit deals its successes and its damage dice's count more dice, less
    the hero's damage reduction."""
    res = _res(game)
    foe = encounter.combatants[aim.me]
    name = state.characters[aim.hero].name
    defence = aim.defence
    size = pool_size(res, foe.attack or 0)
    rolled, result, key = roll_pool(game, SheetView(game, None, state), foe.name,
                                    foe.attack or 0, res.target.default, defence,
                                    len(foe.spent), ctx, aim.edge.lean)
    if result == "hit" and aim.edge.critical:
        result = "critical"
    successes = int(rolled.value)
    reacted = react_to_hit(game, state, encounter, aim.target, rolled, defence, result,
                           ctx)  # CMB-REACT-1..7: successes against the raised defence
    if reacted is not None:
        state, encounter, defence, result = (reacted.state, reacted.encounter,
                                             reacted.defence, reacted.result)
    threshold = int(str(rolled.record.get("threshold", res.target.default)))
    record: dict[str, Any] = {
        "round": encounter.round, "attacker": foe.name, "target": name, "range": aim.distance,
        "rolls": rolled.rolls, "modifier": foe.attack or 0, "dice": size,
        "threshold": threshold, "total": successes, "successes": successes,
        "defence": defence, "result": result, "damage": 0, "hp": aim.health.hp,
        "hpMax": aim.health.hp_max}
    if aim.edge.affected_by:
        record["affectedBy"] = list(aim.edge.affected_by)
    text = f"{foe.name} → {name}: {rolled.shown}"
    if reacted is not None:
        record["reaction"] = reacted.record
        text += reacted.text
    text += f" · {result}"
    after = aim.health
    hero_at = encounter.combatants[aim.target]
    style = _style(game)
    combatants = list(encounter.combatants)
    took = False
    if result != "miss" and foe.base is not None:  # the spending style's number is thrown
        record["number"] = foe.initiative
        foe = spent(foe)
        record["initiative"] = {foe.name: foe.initiative}
    if result != "miss" and style == "spending" and below_hardness(size, hero_at.hardness):
        record["hardness"] = hero_at.hardness  # ITM-HARD-2
        text += ". " + hardness_line(f"{foe.name}'s strike", name,
                                  size, hero_at.hardness)
    elif result != "miss" and "number" in record:  # ITM-FLOOR-3
        reduction = hero_reduction(game, state, aim.hero)
        kind = foe.damage_type
        dealt, guards = typed_damage(thrown(record["number"], reduction), kind,
                                     defences_of(game, state, aim.hero),
                                     foe_qualities(game, foe))  # ITM-WPN-29
        state, after = hurt(game, state, aim.hero, dealt)
        record.update({"damage": dealt, "hp": after.hp})
        text += thrown_line(record["number"], reduction) + _shaped(
            record, dealt, reduction, None, kind, guards, aim.edge.affected_by)
    elif result != "miss" and style == "taking":
        took = True
        mine, theirs = taken(foe.initiative, hero_at.initiative, successes)
        record["initiative"] = {foe.name: mine, name: theirs}
        text += f", takes {mine - foe.initiative} initiative ({foe.name} {mine}, {name} {theirs})"
        foe = foe.model_copy(update={"initiative": mine})
        combatants[aim.target] = hero_at.model_copy(update={"initiative": theirs})
    elif result != "miss":
        faces = extra_faces(game, _foe_formula(foe), result == "critical",
                            ctx.for_tag(0).stream(key, "damage"))
        damage = pool_damage(successes, faces, threshold, hero_reduction(game, state, aim.hero),
                             0, _double(game))
        kind = foe.damage_type
        dealt, guards = typed_damage(damage.total, kind, defences_of(game, state, aim.hero),
                                     foe_qualities(game, foe))  # ITM-WPN-29
        state, after = hurt(game, state, aim.hero, dealt)
        record.update({"damage": dealt, "hp": after.hp, "damageRolls": [list(faces)]})
        text += _dealt_text(damage, threshold, res.die.sides) + _shaped(
            record, dealt, damage.reduction, None, kind, guards, aim.edge.affected_by)
    if aim.health.temporary:
        record["temporary"] = after.temporary
    text += f" · {name} {after.hp}/{after.hp_max}"
    text += f" (+{after.temporary} temporary)" if after.temporary else ""
    text += (f"; {foe.name}'s number falls back to {foe.initiative}." if "number" in record
             else ".")
    if aim.edge.affected_by:
        text += f" Affected by: {' · '.join(aim.edge.affected_by)}."
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    sustained = sustain_after_damage(game, state.model_copy(update={"encounter": encounter}),
                                     aim.target, record["damage"], not after.hp, ctx, key)
    if sustained.record:  # CMB-SUS-4..7
        state, encounter = sustained.state, sustained.state.encounter or encounter
        record["sustain"] = sustained.record
        text += sustained.text
    combatants = list(encounter.combatants)
    combatants[aim.me] = foe.model_copy(update={"spent": (*foe.spent, FOE_STRIKE)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    next_state = state.model_copy(update={"encounter": encounter})
    events: list[str] = [f"damage:{name}:{record['damage']}"] if record["damage"] else []
    if took:
        events.append(f"initiative:{foe.name}")
        next_state = _reordered(next_state)
    if not after.hp:  # CMB-HP0-1..4, CMB-CARD-1: down, and what 0 means for the hero
        next_state, said = downed(game, next_state, aim.hero, events, record)
        next_state, lost = lost_if_none_stand(game, next_state, encounter, events)
        text += said + lost
    return _answered(tag, next_state, record, text, events, aim.notes, ctx)
