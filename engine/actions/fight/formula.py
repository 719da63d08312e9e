"""``[combat:]`` and ``[attack:]``: formula combat's round (docs/design.md#formula-combat;
docs/rules/combat.md#part-a--fights-under-a-ruleset, A.2, A.3, A.5, A.10, A.12..A.14). A fight
begins, foes join from the ruleset's templates with their numbers fixed, initiative is rolled once
per combatant; a hero attacks a foe with the ruleset's attack check, the weapon's numbers and the
foe's defence, and a foe attacks a hero with the same check, its template's attack and damage,
against the hero's defence. A hero at 0 hit points is down; the last foe felled wins the fight (and
the felled foes' loot drops), the last hero down loses it. The reply's attacks are applied in
initiative order (engine/actions/reply.py).

The rest of Part A is answered here too, or handed on: both sides' conditions give each attack its
edge before the dice (CMB-COND-1..6); a struck hero's standing reaction fires before the hit is
confirmed, and a sustaining hero saves against the damage it takes (:mod:`.react`); a reaction
earlier in the round still adds its defence (CMB-REACT-7); a ``dice-pool`` ruleset's strikes count
successes (:mod:`.pool`), a ``roll-against`` or ``symbol-pool`` ruleset rolls its own attack and
initiative (:mod:`.check_kinds`). ``op="condition"`` and the end of a round are in
:mod:`.conditions`, abilities, items used and outcome fights in their own modules."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ...dice import Stream
from ...rules import reasons
from ...rules.abilities import guard_of
from ...rules.armour import defences_of, foe_defences, foe_qualities, typed_damage
from ...rules.checks.read import CheckRead, Rolled
from ...rules.context import TurnContext
from ...rules.fight.conditions import attack_edge, fight_over, names_of
from ...rules.fight.formula import (
    MAX_FOES,
    TIERS,
    attack_reads,
    attacks_left,
    foe_names,
    hero_defence,
    hero_health,
    hit_result,
    hurt,
    in_order,
    make_foe,
    next_joined,
    standing,
    strike,
    template_for,
    whole_number,
)
from ...rules.foe_abilities import with_abilities
from ...rules.formula import foe_modifier, foe_reader, sheet_reader
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...rules.state import Combatant, Encounter, Stack, State
from ...rules.weapons import WeaponNumbers, numbers
from ...ruleset import Formula, Item, Template, parse_formula
from ...ruleset.combat import Attack
from ...ruleset.fight import ROLL_HIGH
from ...ruleset.formula import Number
from ...ruleset.ruleset import FORMULA, POOL
from ..answers import Answer, accepted, refused
from ..checks.pipeline import effective_resolution, resolve_request, roll_check
from ..declare import Refusal
from ..examples import END_LINE, FOE, FOE_COUNT, FOE_NAMES, Party, example, join_line
from . import check_kinds as other_kinds  # roll-against and symbol-pool fights
from .arms import (
    OFF_HAND,
    PLAIN,
    Arming,
    extra_damage,
    fire,
    floor_of,
    is_off_hand,
    mode_of,
    mode_to_hit,
    off_hand_flat,
    off_hand_no_time,
    on_hit,
    ready,
    spent_with,
)
from .encounter import (
    BY_TURNS,
    FOE_STRIKE,
    RANGES,
    UNARMED,
    answered,
    budget_of,
    cannot_act,
    combat_of,
    encounter_on,
    fighting,
    foe_no_time,
    refuse,
    round_of,
    target_of,
    weapon_of,
)
from .felled import fell, struck_events
from .hp0 import downed, lost_if_none_stand
from .pool import Aim, FoeAim, pool_foe, pool_foe_attack, pool_hero, pool_strike
from .react import react_to_hit, sustain_after_damage  # reactions, sustain
from .requests import OUTCOMES, End, FormulaStrike, Join, Start, Strike
from .strikes import Damage, FoeStrike, HeroStrike, foe_record, foe_text, hero_record, hero_text
from .use_teach import teach_use_in_fight
from .victory import won
from .volley import VOLLEY, named_targets, too_many, volley

# --- joining -----------------------------------------------------------------------------


def _initiative(game: Game, state: State, ctx: TurnContext, name: str,
                hero: int | None, modifier: int) -> tuple[int, list[int]]:
    """CMB-TURN-2/5, CMB-TURN-15: the initiative check, rolled once as the combatant joins;
    a hero's through the check pipeline, a foe's with its template's ability modifier.
    Without ``turn.initiative`` everyone has 0 (the order is then heroes, then join order)."""
    combat = combat_of(game)
    initiative = combat.turn.initiative if combat.turn is not None else None
    res = game.ruleset.resolution
    if initiative is None or res is None:
        return 0, []
    purpose = f"initiative/{name.casefold()}"
    if hero is not None:
        _, checked = roll_check(game, state, hero, {"skill": initiative.check, "dc": "0"},
                                ctx, purpose)
        return (other_kinds.initiative(game, checked.record.get("total"), checked.record.get("dc")),
                list(checked.record.get("rolls", [])))  # roll-against reads the margin
    view = SheetView(game, None, state)
    effective, _ = effective_resolution(res, "skill", initiative.check, view)
    read = CheckRead(who=name, kind="skill", ident=initiative.check, label="Initiative",
                     attrs={"dc": "0"}, view=view, ability=None, ability_part=modifier,
                     rank=0, own_bonus=0)
    rolled = resolve_request(game, effective, read, ctx, purpose)
    return ((other_kinds.initiative(game, rolled.value, rolled.dc), list(rolled.rolls))
            if rolled is not None else (0, []))


Rolls = dict[str, list[int]]  # each joining combatant's initiative dice, for the record


def _numbers(foe: Combatant) -> dict[str, Any]:
    return {"name": foe.name, "hp": foe.hp, "hpMax": foe.hp_max, "defence": foe.defence,
            "attack": foe.attack, "damage": foe.damage, "role": foe.role, "tier": foe.tier}


def _as_made(game: Game, template: Template, tier: int, foe: Combatant,
             numbers: Stream) -> Combatant:
    return foe


@dataclass(frozen=True, slots=True)
class Turns:
    """What differs between the kinds of combat fought by turns with foes from templates
    (formula and outcome): the encounter's ``kind``, a foe as it joins (``made``: outcome
    foes are measured in harm levels, CMB-OUTC-4) and a new foe in the join record
    (``shown``)."""

    encounter: str
    made: Callable[[Game, Template, int, Combatant, Stream], Combatant] = _as_made
    shown: Callable[[Combatant], dict[str, Any]] = _numbers


BY_FORMULA = Turns(FORMULA)


def _heroes(game: Game, state: State, ctx: TurnContext, joined: int,
            indexes: list[int], rolls: Rolls) -> list[Combatant]:
    """Heroes joining with their initiative; their hit points stay on their sheets."""
    found = []
    for offset, index in enumerate(indexes):
        name = state.characters[index].name
        rolled, rolls[name] = _initiative(game, state, ctx, name, index, 0)
        found.append(pool_hero(game, state, index, Combatant(  # ITM-HARD-1/4
            name=name, side="party", initiative=rolled, joined=joined + offset)))
    return found


def _foes(game: Game, state: State, ctx: TurnContext, encounter: Encounter | None,
          template: Template, foe: str, tier: int, count: int, rolls: Rolls,
          turns: Turns) -> list[Combatant]:
    """``count`` foes of ``template`` at ``tier``, named and numbered
    (docs/design.md#combat-tags), each with its numbers and initiative fixed now (CMB-TPL-8)."""
    joined = next_joined(encounter)
    found = []
    for offset, name in enumerate(foe_names(encounter, foe, count)):
        numbers: Stream = ctx.stream("combat", f"foe/{name.casefold()}")
        modifier = foe_modifier(game.ruleset, template, tier, numbers)
        rolled, rolls[name] = _initiative(game, state, ctx, name, None, modifier)
        made = with_abilities(game, template, tier, pool_foe(  # CMB-ABIL-4/7, ITM-HARD-1
            game, template, make_foe(game, template, tier, name, joined + offset, rolled,
                                     numbers), numbers), numbers)
        found.append(turns.made(game, template, tier, made, numbers))
    return found


def _joined(state: State, encounter: Encounter, new: list[Combatant], rolls: Rolls,
            notes: list[str], tag: Any, verb: str, turns: Turns) -> tuple[State, Answer]:
    """The encounter with ``new`` in their places in the order, and the answer saying so."""
    combatants = in_order((*encounter.combatants, *new))
    encounter = encounter.model_copy(update={"combatants": combatants})
    order = [{"name": c.name, "side": c.side, "initiative": c.initiative,
              "rolls": rolls.get(c.name, [])} for c in combatants]
    foes = [turns.shown(c) for c in new if c.side == "foes"]
    shown = ", ".join(f"{c.name} {c.initiative}" for c in combatants)
    names = ", ".join(c.name for c in new)
    text = f"{verb}: {names}. Initiative: {shown}."
    record: dict[str, Any] = {"round": encounter.round, "order": order, "foes": foes}
    if not encounter.round and all(c in new for c in combatants):
        record["events"] = ["start"]  # CMB-CARD-1: combat start, the first engagement
    return (state.model_copy(update={"encounter": encounter}),
            accepted(tag, text, record, tuple(notes)))


def _template(game: Game, role: str, notes: list[str]) -> Template:
    template, fell_back = template_for(game, role or combat_of(game).templates[0].role)
    if fell_back:
        notes.append(f'role="{role[:40]}" is no template\'s role: "{template.role}" was used')
    return template


def _no_templates(game: Game) -> Refusal | None:
    if combat_of(game).templates:
        return None
    return Refusal(reasons.NO_COMBAT, "This ruleset gives no enemy templates "
                   "(combat.templates), so no foe can join; nothing was done.")


def teach_start(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: out of a fight the GM learns only how to start one; the lines
    of a fight come with the COMBAT block while one is on (:func:`teach_fight`)."""
    if fighting(game, BY_TURNS) is not None or not combat_of(game).templates:
        return []
    roles = [t.role for t in combat_of(game).templates]
    tag = example("combat", op="start", foe=FOE, role=roles[0], tier=str(TIERS[0]),
                  count=str(FOE_COUNT))
    return [f"- A fight begins: {tag}: an ordinary animal or common thug is tier {TIERS[0]}, "
            f"tougher foes up to {TIERS[1]}; roles: {', '.join(roles)}."]


def teach_fight(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: the GM's combat lines, shown under the COMBAT block while a
    fight is on — attacks both ways, who joins, the end; the engine rolls everything. (Conditions
    are taught with the instructions, which a fight keeps.)"""
    if fighting(game) is not None:
        return []
    combat = combat_of(game)
    budgets = ", ".join(f"{a.id} ({a.name})" for a in combat.turn_actions)
    lines = ["How to fight: a reply with an attack tag is one round, and its attacks land in "
             "the order above. Write no numbers: the engine rolls every attack and its damage.",
             "- A hero attacks: " + example("attack", who=party.hero, target=FOE_NAMES[0])
             + "; target= may be left out when one foe stands; with= names a worn weapon "
             "(default: the first worn, else unarmed), action= the turn action it spends "
             f'({budgets}), range="far" a strike beyond the weapon\'s reach.',
             "- A foe attacks: " + example("attack", who=FOE_NAMES[-1], target=party.hero)
             + " (once a round, unless its template gives it more)."]
    if combat.templates:
        lines.append(join_line([t.role for t in combat.templates])
                     + "; a hero not yet in the fight joins with foe= the hero's name.")
    lines += teach_use_in_fight(game, party)  # items used in a fight (ITM-USE)
    lines.append(END_LINE)
    return lines


def start(game: Game, state: State, request: Start, ctx: TurnContext, kinds: list[str],
          notes: list[str], turns: Turns = BY_FORMULA) -> tuple[State, Answer]:
    """``[combat: op="start" foe= role= tier= count=]`` (CMB-TPL-1..8, CMB-TURN-2..4): the
    foes ``kinds`` (one name, or the legacy form's several) join."""
    refusal = fighting(game, BY_TURNS) or _no_templates(game)
    if refusal is not None:
        return refuse(state, request.tag, refusal)
    template = _template(game, request.role, notes)
    tier = whole_number(request.tier, "tier", *TIERS, notes)
    count = whole_number(request.count, "count", 1, MAX_FOES, notes) if len(kinds) == 1 else 1
    if len(kinds) > 1 and request.count is not None:
        notes.append("ignored count=: enemies= brings one foe of each name")
    encounter = state.encounter
    heroes: list[Combatant] = []
    rolls: Rolls = {}
    if encounter is None:  # CMB-TURN-2: the first engagement: every hero rolls too
        encounter = Encounter(kind=turns.encounter)
        heroes = _heroes(game, state, ctx, 0, list(range(len(state.characters))), rolls)
    foes: list[Combatant] = []
    for kind in kinds:
        standing = encounter.model_copy(update={"combatants": (
            *encounter.combatants, *heroes, *foes)})
        foes += _foes(game, state, ctx, standing, template, kind, tier, count, rolls, turns)
    verb = "A fight begins" if not encounter.combatants else "More foes join"
    return _joined(state, encounter, [*heroes, *foes], rolls, notes, request.tag, verb, turns)


def join(game: Game, state: State, request: Join, ctx: TurnContext,
         turns: Turns = BY_FORMULA) -> tuple[State, Answer]:
    """``[combat: op="join" foe= role= tier= count=]`` (CMB-TURN-5, CMB-TURN-A1)."""
    encounter = encounter_on(game, state, BY_TURNS)
    if isinstance(encounter, Refusal):
        return refuse(state, request.tag, encounter)
    notes: list[str] = []
    rolls: Rolls = {}
    hero = state.character_index(request.foe)
    if hero is not None:
        if encounter.find(request.foe) is not None:
            return state, refused(request.tag, reasons.UNKNOWN_COMBATANT,
                                  f"{state.characters[hero].name} is already in the fight; "
                                  "nothing was done.")
        new = _heroes(game, state, ctx, next_joined(encounter), [hero], rolls)
        return _joined(state, encounter, new, rolls, notes, request.tag, "Joins the fight",
                       turns)
    refusal = _no_templates(game)
    if refusal is not None:
        return refuse(state, request.tag, refusal)
    template = _template(game, request.role, notes)
    tier = whole_number(request.tier, "tier", *TIERS, notes)
    count = whole_number(request.count, "count", 1, MAX_FOES, notes)
    new = _foes(game, state, ctx, encounter, template, request.foe, tier, count, rolls, turns)
    return _joined(state, encounter, new, rolls, notes, request.tag, "Joins the fight", turns)


def _by_turns(game: Game, state: State) -> Encounter | Refusal:
    return encounter_on(game, state, BY_TURNS)


Spoils = Callable[[Game, State, Encounter, TurnContext], tuple[State, dict[str, Any], str]]


def _loot_only(game: Game, state: State, encounter: Encounter,
               ctx: TurnContext) -> tuple[State, dict[str, Any], str]:
    return state, {}, ""


def end(game: Game, state: State, request: End, ctx: TurnContext,
        on: Callable[[Game, State], Encounter | Refusal] = _by_turns,
        spoils: Spoils = _loot_only) -> tuple[State, Answer]:
    """``[combat: op="end" outcome=]``: the encounter is over (state.encounter is None); a
    victory drops the felled foes' loot (ITM-LOOT-12), nothing else does. ``on`` is the
    fight on now (or why there is none), ``spoils`` what a victory gives besides its loot
    (a narrative victory's experience, D100-PARTY-10)."""
    encounter = on(game, state)
    if isinstance(encounter, Refusal):
        return refuse(state, request.tag, encounter)
    outcome = request.outcome.casefold()
    if outcome not in OUTCOMES:
        return state, refused(request.tag, reasons.UNKNOWN_OUTCOME,
                              f'outcome="{request.outcome[:40]}" is not one of '
                              f"{', '.join(OUTCOMES)}; nothing was done.")
    text = f"The fight ends: {outcome}, after {encounter.round} round(s)."
    record: dict[str, Any] = {"outcome": outcome, "rounds": encounter.round}
    if outcome == "victory":
        state, words = won(game, state, encounter, ctx, record)
        text += words
        state, extra, words = spoils(game, state, encounter, ctx)
        record.update(extra)
        text += words
    record["events"] = [f"end:{outcome}"]  # CMB-CARD-1: combat end
    return fight_over(state), accepted(request.tag, text, record)


# --- attacking ---------------------------------------------------------------------------


def _no_time(game: Game, view: SheetView, me: Combatant, budget: str,
             ctx: TurnContext, weapon: Attack | None = None) -> Refusal | None:
    """CMB-TURN-9..12/16, OQ-CMB-7 c/d: a turn action allows ``per`` × ``attacks`` attacks a
    round (none without ``attacks``; a hero of several classes has the largest number any
    one class grants, CMB-TURN-11), or ``per`` × the ``weapon``'s ``strikes`` where it gives
    them (ITM-WPN-20); one past that is NO TIME and does not happen."""
    found = next((a for a in combat_of(game).turn_actions if a.id == budget), None)
    if found is None:
        return None  # a weapon's budget that is no turn action: not counted (Combat II)
    strikes = weapon.strikes if weapon is not None else None
    if attacks_left(found, view, ctx.for_tag(0).stream("attack", "budget"), me.spent,
                    me.granted, strikes):  # CMB-TURN-17: and the uses granted this round
        return None
    return Refusal(reasons.NO_TIME, f"NO TIME: {me.name} has no {found.name} attack left this "
                   "round; nothing was done.")


@dataclass(frozen=True, slots=True)
class Fighters:
    """Who strikes at whom in a fight fought by turns: the attacker's place ``me``, the
    ``target``'s, and the further targets a mode aims at (``others``, ITM-MODE-6)."""

    encounter: Encounter
    me: int
    target: int
    others: list[int]


def fighters(game: Game, state: State, request: Strike) -> Fighters | Refusal:
    """The attacker and its targets, or why the strike does not happen: no fight on, an
    attacker not in it, downed (CMB-TURN-8) or unable to act (CMB-TYPE-2), a target that is
    no one standing on the other side."""
    encounter = encounter_on(game, state, BY_TURNS)
    if isinstance(encounter, Refusal):
        return encounter
    me = encounter.find(request.who)
    if me is None:
        return Refusal(reasons.UNKNOWN_COMBATANT, f'{request.who[:60]} is not in the fight: '
                       f'[combat: op="join" foe="{request.who[:60]}"] first; nothing was done.')
    attacker = encounter.combatants[me]
    if not standing(game, state, attacker):  # CMB-TURN-8: downed first, it does not act
        return Refusal(reasons.DOWNED,
                       f"{attacker.name} is down and does not act; nothing was done.")
    first, *more = named_targets(request.target)  # ITM-MODE-6: a mode's several targets
    target = target_of(game, state, encounter, attacker, first)
    if isinstance(target, Refusal):
        return target
    others = [target_of(game, state, encounter, attacker, name) for name in more]
    refusal = next((o for o in others if isinstance(o, Refusal)), None)
    if refusal is not None:
        return refusal
    stopped = cannot_act(game, state, encounter, me)
    if stopped is not None:
        return stopped
    return Fighters(encounter, me, target, [o for o in others if isinstance(o, int)])


def attack(game: Game, state: State, request: FormulaStrike,
           ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who= target= with= action= range=]``: one formula-combat attack, of a hero
    on a foe or of a foe on a hero (CMB-ATK-A1..A7, CMB-ATK-7)."""
    found = fighters(game, state, request)
    if isinstance(found, Refusal):
        return refuse(state, request.tag, found)
    encounter, me, target, others = found.encounter, found.me, found.target, found.others
    attacker = encounter.combatants[me]
    if attacker.side == "foes":
        if others:
            return refuse(state, request.tag, too_many(f"{attacker.name}'s strike", 1,
                                                        1 + len(others)))
        return _foe_attack(game, state, encounter, request, ctx, me, target)
    who = state.character_index(attacker.name)
    assert who is not None
    armed = weapon_of(game, state, who, request.weapon)
    if isinstance(armed, Refusal):
        return refuse(state, request.tag, armed)
    mode = mode_of(armed, request.mode)  # ITM-MODE-2
    if isinstance(mode, Refusal):
        return refuse(state, request.tag, mode)
    budget = budget_of(game, request.budget, armed[2] if armed is not None else None)
    if isinstance(budget, Refusal):
        return refuse(state, request.tag, budget)
    encounter = round_of(encounter, ctx)
    view = SheetView(game, state.characters[who], state)
    # ITM-OFF-3: a second weapon marked offHand on the combat block's offHand budget
    arming = Arming(mode, is_off_hand(game, state, who, encounter.combatants[me], armed, budget))
    if arming.off_hand:  # ITM-OFF-3: one strike, whatever the main attack buys
        late = off_hand_no_time(game, view, encounter.combatants[me], budget, ctx)
    else:
        late = _no_time(game, view, encounter.combatants[me], budget, ctx,
                        armed[2] if armed is not None else None)
    if late is None:  # ITM-AMMO-4, ITM-CLIP-4: only while there is enough to shoot
        late = ready(game, state, who, armed, mode)
    if late is not None:
        return refuse(state, request.tag, late)
    if others:  # ITM-MODE-6: one attack, a roll against each target
        most = mode.targets or 1 if mode is not None else 1
        if 1 + len(others) > most:
            what = armed[0].name if armed is not None else "An unarmed strike"
            return refuse(state, request.tag, too_many(what, most, 1 + len(others)))
        return volley(state, encounter, request, others,
                      lambda now, fight, at, free: _volley_strike(
                          game, now, fight, request, ctx, (who, me), at, armed, budget,
                          arming, free), target)
    return hero_strike(game, state, encounter, request, ctx, (who, me), target, armed, budget,
                   arming)


def _volley_strike(game: Game, state: State, encounter: Encounter, request: FormulaStrike,
                   ctx: TurnContext, hero_at: tuple[int, int], target: int,
                   armed: tuple[Stack, Item, Attack] | None, budget: str, arming: Arming,
                   free: bool) -> tuple[State, Answer]:
    """ITM-MODE-6: one roll of a several-target attack; a further one (``free``) shoots
    nothing more and counts as ``volley``, not as the budget (engine/actions/fight_volley)."""
    if not free:
        return hero_strike(game, state, encounter, request, ctx, hero_at, target, armed, budget,
                       arming)
    assert arming.mode is not None
    shooting_none = Arming(arming.mode.model_copy(update={"ammo": 0}), arming.off_hand)
    after, answer = hero_strike(game, state, encounter, request, ctx, hero_at, target, armed,
                            budget, shooting_none)
    fight = after.encounter
    if fight is None:
        return after, answer
    combatants = list(fight.combatants)
    mine = combatants[hero_at[1]]
    combatants[hero_at[1]] = mine.model_copy(update={"spent": (*mine.spent[:-1], VOLLEY)})
    return after.model_copy(update={"encounter": fight.model_copy(
        update={"combatants": tuple(combatants)})}), answer


def roll_attack(game: Game, view: SheetView, name: str, modifier: int, defence: int,
                strikes: int, ctx: TurnContext, lean: int = 0) -> tuple[Rolled, str, str]:
    """CMB-ATK-A3/A4: the attack check of ``name``'s strike number ``strikes`` this round,
    ``modifier`` added to the dice of ``combat.attack.check`` (its naturals too), against
    ``defence``. Returns the roll, the result (hit, miss, critical) and the strike's dice key.

    docs/design.md#combat-dice: each strike is keyed by the round's reply, the attacker and its
    strike number this round, never by the tag's place in the reply, so a swipe that rewords or
    reorders the reply cannot fish for rolls."""
    other = other_kinds.attack_roll(game, view, name, modifier, defence, strikes, ctx, lean)
    if other is not None:  # roll-against and symbol-pool attacks
        return other
    rule = combat_of(game).attack
    res = game.ruleset.resolution
    assert rule is not None and res is not None
    effective, _ = effective_resolution(res, "skill", rule.check, view)
    read = CheckRead(who=name, kind="skill", ident=rule.check, label="Attack",
                     attrs={"dc": str(defence)}, view=view, ability=None,
                     ability_part=modifier, rank=0, own_bonus=0, lean=lean)
    key = f"attack/{name.casefold()}/{strikes}"
    rolled = resolve_request(game, effective, read, ctx.for_tag(0), key)
    assert rolled is not None  # a difficulty is always given
    return rolled, hit_result(int(rolled.value), rolled.critical, defence), key


def _hero_damage(game: Game, state: State, view: SheetView, foe: Combatant,
                 armed: tuple[Stack, Item, Attack] | None, arming: Arming,
                 weapon: WeaponNumbers | None, rolled: Rolled, result: str, strike_key: str,
                 ctx: TurnContext) -> Damage:
    """CMB-ATK-A5/A6: the damage of a hero's strike that landed — the weapon's dice (the
    system's damage unarmed), raised to its floor, met by the foe's typed defences, and its
    further amounts."""
    rule = combat_of(game).attack
    assert rule is not None
    formula = weapon.damage if weapon is not None else None
    flat = weapon.flat if weapon is not None else 0
    if arming.off_hand and armed is not None:  # ITM-OFF-4/7
        flat = off_hand_flat(game, view, armed, flat)
    kind = weapon.damage_type if weapon is not None else None
    if formula is None:  # unarmed, or a weapon without damage dice: the system's damage
        formula, flat = rule.damage, 0
        kind = kind or rule.damage_type  # CMB-TYPE-1: the system's default type
    given = attack_reads(rule, view, ctx.for_tag(0).stream(strike_key, "reads"),
                         armed[2].reads if armed is not None else None) \
        if rule.reads else {}  # most rulesets have no reads: no stream for them
    given[ROLL_HIGH] = max(rolled.rolls) if rolled.rolls else 0  # OQ-CMB-5 b
    reader = sheet_reader(view, given)
    flat += other_kinds.hit_damage(game, rolled, result)  # a symbol hit's successes
    struck = strike(formula, reader, result == "critical",
                    foe.hp or 0, ctx.for_tag(0).stream(strike_key, "damage"), flat,
                    weapon.reroll_up_to if weapon is not None else 0)
    # ITM-FLOOR-1/2: raised to the weapon's floor before a resistance halves it
    least = floor_of(game, armed)
    raised = max(struck.damage, least)
    # ITM-DEF-4..8, ITM-WPN-27: the foe's typed defences against the weapon's type and tags
    tags = weapon.tags if weapon is not None else frozenset()
    dealt, guards = typed_damage(raised, kind, foe_defences(game, foe), tags)
    extra = extra_damage(game, state, armed, foe, result == "critical", reader, ctx,
                         strike_key)  # ITM-PLUS-1..8
    return Damage(struck, formula.text, dealt + extra.dealt, kind, flat,
                  least if raised > struck.damage else None, guards, extra)


def hero_strike(game: Game, state: State, encounter: Encounter, request: FormulaStrike,
                ctx: TurnContext, hero_at: tuple[int, int], target: int,
                armed: tuple[Stack, Item, Attack] | None, budget: str,
                arming: Arming = PLAIN) -> tuple[State, Answer]:
    """A hero's strike on a foe, made as ``arming`` says (its mode, the off hand)."""
    who, me = hero_at
    hero = state.characters[who]
    foe = encounter.combatants[target]
    defence = foe.defence or 0
    view = SheetView(game, hero, state)
    notes: list[str] = []
    # CMB-ATK-A3: the attack check's skill gives the dice and the naturals; the weapon's toHit is
    # the number added, never also the skill's own ability (docs/design.md#formula-combat). The
    # weapon's numbers are read once, before the dice: nothing in them is rolled.
    weapon = numbers(game, view, armed[1], armed[2]) if armed is not None else None
    modifier = weapon.to_hit if weapon is not None else 0
    modifier += mode_to_hit(arming)  # ITM-MODE-4
    striker = encounter.combatants[me]
    distance = request.range.casefold()
    if distance not in RANGES:
        if distance:
            notes.append(f'range="{request.range[:20]}" is not near or far: the default was used')
        ranged = armed is not None and armed[2].reach is None and armed[2].range is not None
        distance = "far" if ranged else "near"
    if distance == "far" and (armed is None or armed[2].range is None):
        # ITM-WPN-16..18, CMB-GRID-3: only a weapon with a range reaches beyond its reach; a
        # ranged weapon at near shoots as it is (the spec sets it no penalty)
        what = armed[0].name if armed is not None else "An unarmed strike"
        return refuse(state, request.tag, Refusal(
            reasons.OUT_OF_REACH, f"{what} has no range and reaches only what is near: "
            'write range="near", or attack with a ranged or thrown weapon; nothing was done.'))
    # CMB-ATK-A1, CMB-MOD-1: the conditions of both sides, read before the dice
    edge = attack_edge(game, names_of(state, encounter, me), names_of(state, encounter, target),
                       distance)
    if game.fight.hit == POOL:  # a dice-pool fight counts successes (pool.py)
        return pool_strike(game, state, encounter, request.tag, ctx, Aim(
            who, me, target, armed, budget, arming, distance, edge, weapon, modifier, notes), won)
    rolled, result, strike_key = roll_attack(game, view, hero.name, modifier, defence,
                                             len(striker.spent), ctx, edge.lean)
    if result == "hit" and edge.critical:  # CMB-COND-2: a paralysed target's near hit
        result = "critical"
    damage = None if result == "miss" else _hero_damage(
        game, state, view, foe, armed, arming, weapon, rolled, result, strike_key, ctx)
    weapon_name = armed[0].name if armed is not None else UNARMED
    struck = HeroStrike(
        encounter.round, hero.name, foe.name, weapon_name + (OFF_HAND if arming.off_hand else ""),
        budget, distance, rolled, modifier, defence, result, foe.hp, foe.hp_max,
        edge.affected_by, arming.mode.id if arming.mode is not None else None,
        other_kinds.recorded(game, rolled), damage)  # a roll-against or symbol-pool hit's own
    record, text = hero_record(struck), hero_text(struck)
    if damage is not None:
        foe = foe.model_copy(update={"hp": struck.hp_after()})
    combatants = list(encounter.combatants)
    combatants[target] = foe
    combatants[me] = spent_with(striker, budget, armed)  # ITM-OFF-3: and what it struck with
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    if result != "miss":  # ITM-ONHIT-1..6: what arrived puts the weapon's conditions on it
        foe, applied, told = on_hit(game, state, encounter, target, armed, record["damage"],
                                     ctx, strike_key)
        if applied:
            combatants[target] = foe
            encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
            record["onHit"] = applied
            text += f" {'; '.join(told)}."
    next_state = state.model_copy(update={"encounter": encounter})
    next_state, shot, said = fire(game, next_state, who, armed, arming, ctx)  # ITM-AMMO-3
    record.update(shot)
    text += said
    encounter = next_state.encounter or encounter
    events = struck_events(foe, record)  # CMB-CARD-1, then who fell
    next_state, words = fell(game, next_state, encounter, foe, ctx, record, events, won)
    return answered(request, next_state, record, text + words, events, notes, ctx)


def _foe_attack(game: Game, state: State, encounter: Encounter, request: FormulaStrike,
                ctx: TurnContext, me: int, target: int) -> tuple[State, Answer]:
    """CMB-ATK-7, CMB-ATK-A1..A7: a foe's strike on a hero — the same attack check, its
    template's ``attack`` added, against the hero's defence; its template's ``damage``
    (dice doubled on a critical) taken temporary points first."""
    hero = state.character_index(encounter.combatants[target].name)
    assert hero is not None
    health = hero_health(game, state, hero)
    if health is None:
        return state, refused(request.tag, reasons.UNSUPPORTED,
                              "This ruleset keeps no hit points for heroes (no health pool or "
                              "health track), so a foe's strike cannot land; nothing was done.")
    encounter = round_of(encounter, ctx)
    foe = encounter.combatants[me]
    late = foe_no_time(foe)
    if late is not None:
        return refuse(state, request.tag, late)
    name = state.characters[hero].name
    # CMB-REACT-7: a reaction earlier this round still adds its defence
    defence = hero_defence(game, state, hero) + guard_of(encounter.combatants[target],
                                                         encounter.round)
    modifier = foe.attack or 0
    notes: list[str] = []
    distance = request.range.casefold()
    if distance not in RANGES:  # a foe's strike is near unless the story says far
        if distance:
            notes.append(f'range="{request.range[:20]}" is not near or far: near was used')
        distance = "near"
    # CMB-MOD-1: the conditions of both sides, read before the dice, as for a hero's strike
    edge = attack_edge(game, names_of(state, encounter, me), names_of(state, encounter, target),
                       distance)
    if game.fight.hit == POOL:  # a dice-pool fight counts successes (pool.py)
        return pool_foe_attack(game, state, encounter, request.tag, ctx, FoeAim(
            me, target, hero, health, defence, distance, edge, notes))
    rolled, result, strike_key = roll_attack(game, SheetView(game, None, state), foe.name,
                                             modifier, defence, len(foe.spent), ctx, edge.lean)
    if result == "hit" and edge.critical:  # CMB-COND-2
        result = "critical"
    # CMB-REACT-1..7: the hero's standing reaction, before the hit is confirmed
    reacted = react_to_hit(game, state, encounter, target, rolled, defence, result, ctx)
    if reacted is not None:
        state, encounter, defence, result, rolled = (reacted.state, reacted.encounter,
                                                     reacted.defence, reacted.result,
                                                     reacted.rolled)
    damage: Damage | None = None
    after = health
    if result != "miss":
        reader = foe_reader(game.ruleset, foe.tier or 1, foe.modifier or 0)
        struck = strike(_foe_damage(foe), reader, result == "critical", health.hp,
                        ctx.for_tag(0).stream(strike_key, "damage"),
                        other_kinds.hit_damage(game, rolled, result))
        # CMB-TYPE-1, ITM-DEF-4..8: the foe's damage type against what the hero resists
        dealt, guards = typed_damage(struck.damage, foe.damage_type,
                                     defences_of(game, state, hero),
                                     foe_qualities(game, foe))  # ITM-WPN-29
        state, after = hurt(game, state, hero, dealt)
        damage = Damage(struck, foe.damage or "0", dealt, foe.damage_type, guards=guards)
    blow = FoeStrike(
        encounter.round, foe.name, name, distance, rolled, modifier, defence, result, health,
        after, edge.affected_by, other_kinds.recorded(game, rolled),
        (reacted.record, reacted.text) if reacted is not None else None, damage)
    record, text = foe_record(blow), foe_text(blow)
    # CMB-SUS-4..7: the damage makes a sustaining hero save, or downs it
    sustained = sustain_after_damage(game, state.model_copy(update={"encounter": encounter}),
                                     target, record["damage"], not after.hp, ctx, strike_key)
    if sustained.record:
        state, encounter = sustained.state, sustained.state.encounter or encounter
        record["sustain"] = sustained.record
        text += sustained.text
    combatants = list(encounter.combatants)
    combatants[me] = foe.model_copy(update={"spent": (*foe.spent, FOE_STRIKE)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    next_state = state.model_copy(update={"encounter": encounter})
    events: list[str] = [f"damage:{name}:{record['damage']}"] if record["damage"] else []
    if not after.hp:
        next_state, said = downed(game, next_state, hero, events, record)  # CMB-HP0-1..4
        next_state, lost = lost_if_none_stand(game, next_state, encounter, events)
        text += said + lost
    return answered(request, next_state, record, text, events, notes, ctx)


NO_DAMAGE = Formula("0", Number(0))


def _foe_damage(foe: Combatant) -> Formula:
    """CMB-TPL-8: the damage formula the foe got when it joined (checked at load)."""
    parsed = parse_formula(foe.damage or "0")
    return parsed if isinstance(parsed, Formula) else NO_DAMAGE


# --- the order of a reply's attacks --------------------------------------------------------


