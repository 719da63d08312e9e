"""``[combat:]`` and ``[attack:]``: formula combat's core loop (DESIGN.md "Combat"; spec/combat.md
A.2, A.3, A.5, A.10, A.13). A fight begins, foes join from the ruleset's templates with their
numbers fixed, initiative is rolled once per combatant, and a hero attacks a foe with the
ruleset's attack check, the weapon's numbers and the foe's defence. Foes' own attacks, the
action budget past one attack, conditions and victory loot are not answered yet."""

from __future__ import annotations

from typing import Any

from ..dice import Stream
from ..rules import reasons
from ..rules.armour import foe_defences, typed_damage
from ..rules.bags import item_of
from ..rules.checks.read import CheckRead
from ..rules.context import TurnContext
from ..rules.fight import (
    MAX_FOES,
    TIERS,
    foe_names,
    held,
    in_order,
    make_foe,
    next_joined,
    strike,
    template_for,
)
from ..rules.formula import evaluate, foe_modifier, sheet_reader
from ..rules.game import Game
from ..rules.sheet import SheetView
from ..rules.state import Combatant, Encounter, Stack, State
from ..rules.weapons import damage_of, to_hit
from ..ruleset import Item, Template, combat_kind
from ..ruleset.combat import Attack
from ..ruleset.fight import ROLL_HIGH, Combat
from .answers import Answer, accepted, refused
from .attrs import RAW, TEXT, WHO
from .checks.pipeline import effective_resolution, resolve_request, roll_check
from .declare import Refusal, Request, action, attr, request

OUTCOMES = ("victory", "defeat", "fled", "truce")
RANGES = ("near", "far")
UNARMED = "unarmed"


def _fighting(game: Game) -> Refusal | None:
    """Why this ruleset answers no formula-combat tag, or None when it does."""
    kind = combat_kind(game.ruleset)
    if kind == "none":
        return Refusal(reasons.NO_COMBAT, 'This ruleset turns fights off ("kind": "none"); '
                       "nothing was done.")
    if kind != "formula":
        return Refusal(reasons.UNSUPPORTED, f"This ruleset fights with {kind} combat, which "
                       "this version of gmtags does not answer yet (Combat II/III will); "
                       "nothing was done.")
    return None


def _in_fight(game: Game, state: State) -> Encounter | Refusal:
    """The fight on now, or why there is none to act in."""
    refusal = _fighting(game)
    if refusal is not None:
        return refusal
    if state.encounter is None:
        return Refusal(reasons.NO_ENCOUNTER, 'No fight is on: begin one with [combat: '
                       'op="start" foe="<name>"]; nothing was done.')
    return state.encounter


def _combat(game: Game) -> Combat:
    combat = game.ruleset.combat
    assert combat is not None
    return combat


def _refuse(state: State, tag: Any, refusal: Refusal) -> tuple[State, Answer]:
    return state, refused(tag, refusal.reason, refusal.text)


# --- joining -----------------------------------------------------------------------------


@request
class Start(Request):
    """A fight begins, or, when one is on, more foes join (CMB-TPL-1..8, CMB-TURN-2..5)."""

    foe: str = attr(TEXT, "what the foes are called", missing='Name the foe: foe="<name>".')
    role: str = attr(TEXT, "the template's role (minion, standard, elite, boss...)",
                     shown="the first template")
    tier: str | None = attr(RAW, "the danger, 1 to 6 (held to it)", shown="1")
    count: str | None = attr(RAW, "how many, 1 to 12 (held to it)", shown="1")


@request
class Join(Request):
    """A late arrival rolls initiative when it appears (CMB-TURN-5): a foe from a template,
    or a hero of the party not yet in the fight."""

    foe: str = attr(TEXT, "who joins: a foe's name, or a hero of the party",
                    missing='Name who joins: foe="<name>".')
    role: str = attr(TEXT, "the template's role", shown="the first template")
    tier: str | None = attr(RAW, "the danger, 1 to 6 (held to it)", shown="1")
    count: str | None = attr(RAW, "how many, 1 to 12 (held to it)", shown="1")


def _number(raw: str | None, what: str, low: int, high: int, notes: list[str]) -> int:
    """``tier=``/``count=`` as a whole number held to ``low..high`` (1 when absent), each
    repair noted (DESIGN.md "Tags" under Combat)."""
    text = (raw or "").strip()
    if not text:
        return low
    if not text.isascii() or not text.isdigit() or len(text) > 6:
        notes.append(f'{what}="{text[:20]}" is not a whole number: {low} was used')
        return low
    value = held(int(text), low, high)
    if value != int(text):
        notes.append(f'{what}="{text}" was held to {value} ({low} to {high})')
    return value


def _initiative(game: Game, state: State, ctx: TurnContext, name: str,
                hero: int | None, modifier: int) -> tuple[int, list[int]]:
    """CMB-TURN-2/5, CMB-TURN-15: the initiative check, rolled once as the combatant joins;
    a hero's through the check pipeline, a foe's with its template's ability modifier.
    Without ``turn.initiative`` everyone has 0 (the order is then heroes, then join order)."""
    combat = _combat(game)
    initiative = combat.turn.initiative if combat.turn is not None else None
    res = game.ruleset.resolution
    if initiative is None or res is None:
        return 0, []
    purpose = f"initiative/{name.casefold()}"
    if hero is not None:
        _, checked = roll_check(game, state, hero, {"skill": initiative.check, "dc": "0"},
                                ctx, purpose)
        return int(checked.record.get("total", 0)), list(checked.record.get("rolls", []))
    view = SheetView(game, None, state)
    effective, _ = effective_resolution(res, "skill", initiative.check, view)
    read = CheckRead(who=name, kind="skill", ident=initiative.check, label="Initiative",
                     attrs={"dc": "0"}, view=view, ability=None, ability_part=modifier,
                     rank=0, own_bonus=0)
    rolled = resolve_request(game, effective, read, ctx, purpose)
    return (int(rolled.value), list(rolled.rolls)) if rolled is not None else (0, [])


Rolls = dict[str, list[int]]  # each joining combatant's initiative dice, for the record


def _heroes(game: Game, state: State, ctx: TurnContext, joined: int,
            indexes: list[int], rolls: Rolls) -> list[Combatant]:
    """Heroes joining with their initiative; their hit points stay on their sheets."""
    found = []
    for offset, index in enumerate(indexes):
        name = state.characters[index].name
        rolled, rolls[name] = _initiative(game, state, ctx, name, index, 0)
        found.append(Combatant(name=name, side="party", initiative=rolled,
                               joined=joined + offset))
    return found


def _foes(game: Game, state: State, ctx: TurnContext, encounter: Encounter | None,
          template: Template, foe: str, tier: int, count: int, rolls: Rolls) -> list[Combatant]:
    """``count`` foes of ``template`` at ``tier``, named and numbered (DESIGN.md), each with
    its numbers and initiative fixed now (CMB-TPL-8)."""
    joined = next_joined(encounter)
    found = []
    for offset, name in enumerate(foe_names(encounter, foe, count)):
        numbers: Stream = ctx.stream("combat", f"foe/{name.casefold()}")
        modifier = foe_modifier(game.ruleset, template, tier, numbers)
        rolled, rolls[name] = _initiative(game, state, ctx, name, None, modifier)
        found.append(make_foe(game, template, tier, name, joined + offset,
                              rolled, numbers))
    return found


def _joined(state: State, encounter: Encounter, new: list[Combatant], rolls: Rolls,
            notes: list[str], tag: Any, verb: str) -> tuple[State, Answer]:
    """The encounter with ``new`` in their places in the order, and the answer saying so."""
    combatants = in_order((*encounter.combatants, *new))
    encounter = encounter.model_copy(update={"combatants": combatants})
    order = [{"name": c.name, "side": c.side, "initiative": c.initiative,
              "rolls": rolls.get(c.name, [])} for c in combatants]
    foes = [{"name": c.name, "hp": c.hp, "hpMax": c.hp_max, "defence": c.defence,
             "attack": c.attack, "damage": c.damage, "role": c.role, "tier": c.tier}
            for c in new if c.side == "foes"]
    shown = ", ".join(f"{c.name} {c.initiative}" for c in combatants)
    names = ", ".join(c.name for c in new)
    text = f"{verb}: {names}. Initiative: {shown}."
    record: dict[str, Any] = {"round": encounter.round, "order": order, "foes": foes}
    return (state.model_copy(update={"encounter": encounter}),
            accepted(tag, text, record, tuple(notes)))


def _template(game: Game, role: str, notes: list[str]) -> Template:
    template, fell_back = template_for(game, role or _combat(game).templates[0].role)
    if fell_back:
        notes.append(f'role="{role[:40]}" is no template\'s role: "{template.role}" was used')
    return template


def _no_templates(game: Game) -> Refusal | None:
    if _combat(game).templates:
        return None
    return Refusal(reasons.NO_COMBAT, "This ruleset gives no enemy templates "
                   "(combat.templates), so no foe can join; nothing was done.")


JOIN_RECORD = {"round": "the encounter's round (0 before the first attack)",
               "order": "every combatant in initiative order: name, side, initiative, and "
                        "rolls (the initiative dice of those who joined now)",
               "foes": "each new foe's numbers: name, hp, hpMax, defence, attack, damage, "
                       "role, tier"}


def _teach_combat(game: Game) -> list[str]:
    if _fighting(game) is not None:
        return []
    roles = ", ".join(t.role for t in _combat(game).templates)
    return ['- A fight begins: [combat: op="start" foe="<name>" role="<role>" tier="<1-6>" '
            'count="<1-12>"]; a late arrival: [combat: op="join" foe="<name>" ...]; it ends: '
            '[combat: op="end" outcome="victory|defeat|fled|truce"].', f"  Roles: {roles}."]


@action("combat", "start", Start, reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED),
        teach=_teach_combat, record=JOIN_RECORD)
def start(game: Game, state: State, request: Start, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="start" foe= role= tier= count=]`` (CMB-TPL-1..8, CMB-TURN-2..4)."""
    refusal = _fighting(game) or _no_templates(game)
    if refusal is not None:
        return _refuse(state, request.tag, refusal)
    notes: list[str] = []
    template = _template(game, request.role, notes)
    tier = _number(request.tier, "tier", *TIERS, notes)
    count = _number(request.count, "count", 1, MAX_FOES, notes)
    encounter = state.encounter
    heroes: list[Combatant] = []
    rolls: Rolls = {}
    if encounter is None:  # CMB-TURN-2: the first engagement: every hero rolls too
        encounter = Encounter()
        heroes = _heroes(game, state, ctx, 0, list(range(len(state.characters))), rolls)
    standing = encounter.model_copy(update={"combatants": (*encounter.combatants, *heroes)})
    foes = _foes(game, state, ctx, standing, template, request.foe, tier, count, rolls)
    verb = "A fight begins" if not encounter.combatants else "More foes join"
    return _joined(state, encounter, [*heroes, *foes], rolls, notes, request.tag, verb)


@action("combat", "join", Join, reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED,
                                         reasons.NO_ENCOUNTER), record=JOIN_RECORD)
def join(game: Game, state: State, request: Join, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="join" foe= role= tier= count=]`` (CMB-TURN-5, CMB-TURN-A1)."""
    encounter = _in_fight(game, state)
    if isinstance(encounter, Refusal):
        return _refuse(state, request.tag, encounter)
    notes: list[str] = []
    rolls: Rolls = {}
    hero = state.character_index(request.foe)
    if hero is not None:
        if encounter.find(request.foe) is not None:
            return state, refused(request.tag, reasons.UNKNOWN_COMBATANT,
                                  f"{state.characters[hero].name} is already in the fight; "
                                  "nothing was done.")
        new = _heroes(game, state, ctx, next_joined(encounter), [hero], rolls)
        return _joined(state, encounter, new, rolls, notes, request.tag, "Joins the fight")
    refusal = _no_templates(game)
    if refusal is not None:
        return _refuse(state, request.tag, refusal)
    template = _template(game, request.role, notes)
    tier = _number(request.tier, "tier", *TIERS, notes)
    count = _number(request.count, "count", 1, MAX_FOES, notes)
    new = _foes(game, state, ctx, encounter, template, request.foe, tier, count, rolls)
    return _joined(state, encounter, new, rolls, notes, request.tag, "Joins the fight")


@request
class End(Request):
    """The fight ends, as the story says (DESIGN.md: victory, defeat, fled or truce)."""

    outcome: str = attr(TEXT, "victory, defeat, fled or truce",
                        missing='Say how it ended: outcome="victory|defeat|fled|truce".')


@action("combat", "end", End, reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED,
                                       reasons.NO_ENCOUNTER, reasons.UNKNOWN_OUTCOME),
        record={"outcome": "victory, defeat, fled or truce", "rounds": "the rounds fought"})
def end(game: Game, state: State, request: End, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="end" outcome=]``: the encounter is over (state.encounter is None)."""
    encounter = _in_fight(game, state)
    if isinstance(encounter, Refusal):
        return _refuse(state, request.tag, encounter)
    outcome = request.outcome.casefold()
    if outcome not in OUTCOMES:
        return state, refused(request.tag, reasons.UNKNOWN_OUTCOME,
                              f'outcome="{request.outcome[:40]}" is not one of '
                              f"{', '.join(OUTCOMES)}; nothing was done.")
    text = f"The fight ends: {outcome}, after {encounter.round} round(s)."
    return (state.model_copy(update={"encounter": None}),
            accepted(request.tag, text, {"outcome": outcome, "rounds": encounter.round}))


# --- attacking ---------------------------------------------------------------------------


@request
class Strike(Request):
    """A hero attacks a foe (CMB-ATK-1..7, CMB-ATK-A1..A7; ITM-WPN-6..15)."""

    who: int = attr(WHO, "who attacks", shown="the player")
    target: str = attr(TEXT, "the foe attacked", shown="the only foe standing")
    weapon: str | None = attr(RAW, "the weapon, worn; unarmed without one", name="with",
                              shown="the first worn weapon, else unarmed")
    budget: str = attr(TEXT, "the turn action the attack spends", name="action",
                       shown="the weapon's budget, else the first action with attacks")
    range: str = attr(TEXT, "near or far (CMB-GRID-3)", shown="near, far for a ranged weapon")


def _target(state: State, encounter: Encounter, named: str) -> int | Refusal:
    standing = [i for i, c in enumerate(encounter.combatants) if c.side == "foes" and c.hp]
    if not named:
        if len(standing) == 1:
            return standing[0]
        names = ", ".join(encounter.combatants[i].name for i in standing)
        return Refusal(reasons.MISSING_ATTRIBUTE, f'Name the target: target="<foe>" ({names}).')
    index = encounter.find(named)
    if index is None:
        names = ", ".join(c.name for c in encounter.combatants)
        return Refusal(reasons.UNKNOWN_COMBATANT,
                       f'Nobody called "{named[:60]}" is in the fight ({names}).')
    found = encounter.combatants[index]
    if found.side != "foes":
        return Refusal(reasons.UNSUPPORTED, f"{found.name} is a hero: attacks on heroes are "
                       "not answered by this version of gmtags; nothing was done.")
    if not found.hp:
        return Refusal(reasons.TARGET_DOWN, f"{found.name} is already down; nothing was done.")
    return index


def _weapon(game: Game, state: State, who: int,
            named: str | None) -> tuple[Stack, Item, Attack] | Refusal | None:
    """DESIGN.md: ``with=`` a worn weapon the attacker has (``unarmed`` or none: unarmed);
    without it the first worn weapon, else unarmed (None)."""
    bag = state.characters[who].bag

    def attack_of(stack: Stack) -> tuple[Stack, Item, Attack] | None:
        item = item_of(game, state, stack.item)
        if item is None or item.attack is None:
            return None
        return stack, item, item.attack

    wanted = (named or "").strip().casefold()
    if not wanted:
        worn = (attack_of(s) for s in bag if s.equipped)
        return next((w for w in worn if w is not None), None)
    if wanted == UNARMED:
        return None
    stack = next((s for s in bag if s.name.casefold() == wanted), None)
    armed = attack_of(stack) if stack is not None else None
    if armed is None:
        name = state.characters[who].name
        return Refusal(reasons.UNKNOWN_WEAPON,
                       f'{name} has no weapon called "{(named or "").strip()[:60]}"; '
                       "nothing was done.")
    if not armed[0].equipped:
        return Refusal(reasons.NOT_WORN, f"{armed[0].name} is carried, not worn: equip it "
                       "first; nothing was done.")
    return armed


def _budget(game: Game, named: str, attack: Attack | None) -> str | Refusal:
    """DESIGN.md: ``action=`` a turn action, else the weapon's budget, else the first action
    that allows attacks."""
    actions = _combat(game).turn_actions
    wanted = named.casefold()
    if wanted:
        found = next((a for a in actions if wanted in (a.id.casefold(), a.name.casefold())),
                     None)
        if found is None:
            known = ", ".join(a.id for a in actions)
            return Refusal(reasons.UNKNOWN_BUDGET, f'action="{named[:40]}" is no turn action '
                           f"({known}); nothing was done.")
        return found.id
    if attack is not None:
        return attack.budget
    return next((a.id for a in actions if a.attacks is not None),
                actions[0].id if actions else "action")


def _round(encounter: Encounter, ctx: TurnContext) -> Encounter:
    """DESIGN.md "Rounds": a reply with an answered attack is one round of the encounter; a
    new round gives every combatant its whole budget again."""
    if encounter.turn == ctx.turn_key:
        return encounter
    fresh = tuple(c.model_copy(update={"spent": ()}) if c.spent else c
                  for c in encounter.combatants)
    return encounter.model_copy(update={"round": encounter.round + 1, "turn": ctx.turn_key,
                                        "combatants": fresh})


def _no_time(game: Game, view: SheetView, me: Combatant, budget: str,
             ctx: TurnContext) -> Refusal | None:
    """CMB-TURN-9/12/16, OQ-CMB-7 c/d: a turn action allows ``per`` × ``attacks`` attacks a
    round (none without ``attacks``); one past that is NO TIME and does not happen."""
    found = next((a for a in _combat(game).turn_actions if a.id == budget), None)
    if found is None:
        return None  # a weapon's budget that is no turn action: not counted (Combat II)
    reader = sheet_reader(view)
    stream = ctx.for_tag(0).stream("attack", "budget")
    per = evaluate(found.per, reader, stream).value
    each = evaluate(found.attacks, reader, stream).value if found.attacks is not None else 0
    if me.spent.count(budget) < max(per, 0) * max(each, 0):
        return None
    return Refusal(reasons.NO_TIME, f"NO TIME: {me.name} has no {found.name} attack left this "
                   "round; nothing was done.")


def _cannot_act(game: Game, state: State, who: int) -> Refusal | None:
    """CMB-TYPE-2: a hero under a condition with ``noActions`` makes no attack."""
    held_back = {c.name for c in _combat(game).conditions if c.no_actions}
    character = state.characters[who]
    stopping = [c for c in character.conditions if c in held_back]
    if not stopping:
        return None
    return Refusal(reasons.CANNOT_ACT, f"{character.name} cannot act ({', '.join(stopping)}); "
                   "nothing was done.")


ATTACK_RECORD = {
    "round": "the encounter's round", "attacker": "who attacked", "target": "the foe attacked",
    "weapon": "the weapon, or unarmed", "budget": "the turn action spent",
    "range": "near or far", "rolls": "the attack dice", "modifier": "what was added to them",
    "total": "dice and modifier", "defence": "the target's defence",
    "result": "hit, miss or critical", "damage": "the damage dealt (0 on a miss)",
    "damageRolls": "the damage dice, per dice term", "damageType": "the weapon's damage type",
    "hp": "the target's hit points after", "hpMax": "the target's most hit points",
    "affectedBy": "the target's typed defences that changed the damage (ITM-DEF-4..8)",
    "events": "felled:<name>, end:victory",
}


def _teach_attack(game: Game) -> list[str]:
    if _fighting(game) is not None:
        return []
    return ['- A hero attacks a foe: [attack: who="<hero>" target="<foe>" with="<worn weapon>"] '
            "(the engine rolls the attack and the damage; write no numbers)."]


@action("attack", None, Strike, teach=_teach_attack, record=ATTACK_RECORD,
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.TARGET_DOWN, reasons.UNKNOWN_WEAPON,
                 reasons.NOT_WORN, reasons.UNKNOWN_BUDGET, reasons.CANNOT_ACT,
                 reasons.NO_TIME, reasons.MISSING_ATTRIBUTE))
def attack(game: Game, state: State, request: Strike, ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who= target= with= action= range=]``: one formula-combat attack of a hero
    on a foe (CMB-ATK-A1..A7)."""
    encounter = _in_fight(game, state)
    if isinstance(encounter, Refusal):
        return _refuse(state, request.tag, encounter)
    hero = state.characters[request.who]
    if encounter.find(hero.name) is None:
        return state, refused(request.tag, reasons.UNKNOWN_COMBATANT,
                              f'{hero.name} is not in the fight: [combat: op="join" '
                              f'foe="{hero.name}"] first; nothing was done.')
    target = _target(state, encounter, request.target)
    armed = _weapon(game, state, request.who, request.weapon)
    for found in (target, armed, _cannot_act(game, state, request.who)):
        if isinstance(found, Refusal):
            return _refuse(state, request.tag, found)
    assert isinstance(target, int) and not isinstance(armed, Refusal)
    budget = _budget(game, request.budget, armed[2] if armed is not None else None)
    if isinstance(budget, Refusal):
        return _refuse(state, request.tag, budget)
    encounter = _round(encounter, ctx)
    me = encounter.find(hero.name)
    assert me is not None
    late = _no_time(game, SheetView(game, hero, state), encounter.combatants[me], budget, ctx)
    if late is not None:
        return _refuse(state, request.tag, late)
    return _strike(game, state, encounter, request, ctx, target, armed, budget)


def _strike(game: Game, state: State, encounter: Encounter, request: Strike, ctx: TurnContext,
            target: int, armed: tuple[Stack, Item, Attack] | None,
            budget: str) -> tuple[State, Answer]:
    rule = _combat(game).attack
    res = game.ruleset.resolution
    assert rule is not None and res is not None
    hero = state.characters[request.who]
    foe = encounter.combatants[target]
    defence = foe.defence or 0
    view = SheetView(game, hero, state)
    notes: list[str] = []
    # CMB-ATK-A3: the attack check's skill gives the dice and the naturals; the weapon's toHit
    # is the number added, never also the skill's own ability (DESIGN.md).
    modifier = to_hit(game, view, armed[1], armed[2]) if armed is not None else 0
    effective, _ = effective_resolution(res, "skill", rule.check, view)
    read = CheckRead(who=hero.name, kind="skill", ident=rule.check, label="Attack",
                     attrs={"dc": str(defence)}, view=view, ability=None,
                     ability_part=modifier, rank=0, own_bonus=0)
    # DESIGN.md "Dice": each strike by (round's reply, attacker, its strike number this
    # round), never by the tag's place in the reply, so rewording cannot fish for rolls.
    me = encounter.find(hero.name)
    assert me is not None
    striker = encounter.combatants[me]
    keyed = ctx.for_tag(0)
    strike_key = f"attack/{hero.name.casefold()}/{len(striker.spent)}"
    rolled = resolve_request(game, effective, read, keyed, strike_key)
    assert rolled is not None  # a difficulty is always given
    total = int(rolled.value)
    # CMB-ATK-A4, OQ-CMB-2: hit iff total ≥ defence; a natural critical success hits as a
    # critical, a natural failure misses.
    result = ("critical" if rolled.critical == "success" else "miss"
              if rolled.critical == "failure" else "hit" if total >= defence else "miss")
    distance = request.range.casefold()
    if distance not in RANGES:
        if distance:
            notes.append(f'range="{request.range[:20]}" is not near or far: the default was used')
        ranged = armed is not None and armed[2].reach is None and armed[2].range is not None
        distance = "far" if ranged else "near"
    record: dict[str, Any] = {
        "attacker": hero.name, "target": foe.name,
        "weapon": armed[0].name if armed is not None else UNARMED, "budget": budget,
        "range": distance, "rolls": rolled.rolls, "modifier": modifier, "total": total,
        "defence": defence, "result": result, "damage": 0, "hp": foe.hp, "hpMax": foe.hp_max}
    record["round"] = encounter.round
    text = f"{hero.name} → {foe.name} ({record['weapon']}): {rolled.shown} · {result}"
    if result != "miss":
        formula, flat, kind = (damage_of(game, view, armed[1], armed[2]) if armed is not None
                               else (None, 0, None))
        if formula is None:  # unarmed, or a weapon without damage dice: the system's damage
            formula, flat = rule.damage, 0
        given = {ROLL_HIGH: max(rolled.rolls) if rolled.rolls else 0}
        struck = strike(formula, sheet_reader(view, given), result == "critical",
                        foe.hp or 0, keyed.stream(strike_key, "damage"),
                        flat)
        # ITM-DEF-4..8, ITM-WPN-27: the foe's typed defences against the weapon's type and tags
        tags = frozenset(armed[1].tags) if armed is not None else frozenset()
        dealt, guards = typed_damage(struck.damage, kind, foe_defences(game, foe), tags)
        hp = max((foe.hp or 0) - dealt, 0)
        record.update({"damage": dealt, "hp": hp,
                       "damageRolls": [list(r.faces) for r in struck.rolls.rolls]})
        if guards:
            record["affectedBy"] = [g.text for g in guards]
        if kind is not None:
            record["damageType"] = kind
        dice = " + ".join(f"{r} ({'+'.join(map(str, r.faces))})" for r in struck.rolls.rolls)
        added = f" {'+' if flat >= 0 else '-'} {abs(flat)}" if flat else ""
        text += f", {dice or formula.text}{added} = {struck.damage}" + (f" {kind}" if kind else "")
        if guards:
            text += f" ({'; '.join(g.text for g in guards)}: {dealt})"
        foe = foe.model_copy(update={"hp": hp})
    text += f" · {foe.name} {foe.hp}/{foe.hp_max}."
    combatants = list(encounter.combatants)
    combatants[target] = foe
    combatants[me] = striker.model_copy(update={"spent": (*striker.spent, budget)})
    encounter = encounter.model_copy(update={"combatants": tuple(combatants)})
    events: list[str] = []
    if not foe.hp:
        events.append(f"felled:{foe.name}")
        text += f" {foe.name} is felled."
    next_state = state.model_copy(update={"encounter": encounter})
    if not any(c.side == "foes" and c.hp for c in encounter.combatants):
        events.append("end:victory")  # DESIGN.md: the last foe falls, the fight ends there
        text += " The fight is won."
        next_state = state.model_copy(update={"encounter": None})
    if events:
        record["events"] = events
    return next_state, accepted(request.tag, text, record, tuple(notes))
