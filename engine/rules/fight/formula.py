"""Formula combat's pure rules (docs/rules/combat.md#part-a--fights-under-a-ruleset;
docs/design.md#formula-combat): foes made from the ruleset's templates, the initiative order, one
attack's hit and damage, a hero's defence and hit points, and the attacks a multiclass hero's action
allows. No tags and no sentences: the ``[combat:]`` and ``[attack:]`` actions
(engine/actions/fight/formula.py) use these."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction

from ...dice import Stream
from ...ruleset import Formula, Template, ValueRef
from ...ruleset.fight import AttackRule, TurnAction
from ...ruleset.formula import Binary, Call, Dice, Negate, Node, Reference, double_dice, nodes
from ...ruleset.ruleset import FORMULA, SYMBOLS
from ..armour import defence_of
from ..formula import (
    Evaluation,
    Resolve,
    evaluate,
    foe_modifier,
    foe_reader,
    references_of,
    rolls_dice,
    sheet_reader,
)
from ..game import Game
from ..memo import remembered
from ..sheet import SheetView
from ..state import Character, Combatant, Encounter, InventedItem, State
from ..tracks import health_pool, track_max, track_value
from .zero_hp import is_dead

MAX_FOES = 12  # docs/design.md#combat-tags: count= is held to 1..12
TIERS = (1, 6)  # CMB-TPL-3: a tier is 1 to 6


def held(value: int, low: int, high: int) -> int:
    """``value`` held to ``low..high``."""
    return min(max(value, low), high)


def whole_number(raw: str | None, what: str, low: int, high: int, notes: list[str]) -> int:
    """``tier=``/``count=`` as a whole number held to ``low..high`` (1 when absent), each repair
    noted (docs/design.md#combat-tags)."""
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


def template_for(game: Game, role: str) -> tuple[Template, bool]:
    """CMB-TPL-2, OQ-CMB-13: the template of ``role`` (any case), else the first template;
    the flag says whether it fell back."""
    combat = game.ruleset.combat
    assert combat is not None and combat.templates
    wanted = role.strip().casefold()
    for template in combat.templates:
        if template.role.casefold() == wanted:
            return template, False
    return combat.templates[0], True


def combat_only(game: Game) -> frozenset[str]:
    """CMB-ATK-2, docs/design.md#formula-combat: the skills only a fight rolls — the attack check
    and the initiative check — by id and by label, in lower case."""
    combat = game.ruleset.combat
    if combat is None or game.fight.kind not in (FORMULA, SYMBOLS):
        return frozenset()
    ids = {combat.attack.check} if combat.attack is not None else set()
    if combat.turn is not None and combat.turn.initiative is not None:
        ids.add(combat.turn.initiative.check)
    labels = {s.label for s in game.ruleset.sheet.skills if s.id in ids}
    return frozenset(n.casefold() for n in ids | labels)


def foe_names(encounter: Encounter | None, foe: str, count: int) -> list[str]:
    """docs/design.md#combat-tags: ``foe`` when one comes and none of that name stands yet, else
    ``"<foe> 1"``, ``"<foe> 2"``, … numbering on from the highest number the encounter already
    gave."""
    names = [c.name for c in encounter.combatants] if encounter is not None else []
    numbered = re.compile(re.escape(foe.casefold()) + r" (\d+)")
    highest = 0
    plain = False
    for name in names:
        found = numbered.fullmatch(name.casefold())
        if found is not None:
            highest = max(highest, int(found.group(1)))
        plain = plain or name.casefold() == foe.casefold()
    if count == 1 and not plain and not highest:
        return [foe]
    start = max(highest, 1 if plain else 0) + 1
    return [f"{foe} {n}" for n in range(start, start + count)]


def make_foe(game: Game, template: Template, tier: int, name: str, joined: int,
             initiative: int, stream: Stream) -> Combatant:
    """CMB-TPL-1..8: a foe's numbers, worked out once from its template at ``tier``."""
    modifier = foe_modifier(game.ruleset, template, tier, stream)
    reader = foe_reader(game.ruleset, tier, modifier)
    numbers = template.combat
    hp = max(evaluate(template.tracks.hp, reader, stream).value, 0)
    defence = evaluate(numbers.defence, reader, stream).value
    attack = evaluate(numbers.attack, reader, stream).value
    # docs/design.md#formula-combat: one attack a round unless the template gives combat.attacks,
    # read now.
    attacks = (max(evaluate(numbers.attacks, reader, stream).value, 0)
               if numbers.attacks is not None else None)
    return Combatant(name=name, side="foes", initiative=initiative, joined=joined, hp=hp,
                     hp_max=hp, defence=defence, attack=attack,
                     damage=worked(numbers.damage.tree, reader, stream),
                     role=template.role, tier=tier, modifier=modifier, attacks=attacks,
                     loot=template.loot, damage_type=foe_damage_type(game, template),
                     types=tuple(template.types), tags=tuple(template.tags))


_BINDS = {"+": 1, "-": 1, "*": 2, "/": 2}


def worked(node: Node, resolve: Resolve, stream: Stream) -> str:
    """CMB-TPL-8, docs/design.md#combat-state: a formula as it stands once its references are read —
    every part without dice worked out to its number (``(@tier)d6 + @tier`` at tier 1 reads
    ``1d6 + 1``), the dice left to roll. The text parses back to the same damage."""
    if not any(isinstance(n, Dice) for n in nodes(node)):
        value = evaluate(node, resolve, stream).value
        return str(value) if value >= 0 else f"({value})"
    if isinstance(node, Dice):
        count, sides = worked(node.count, resolve, stream), worked(node.sides, resolve, stream)
        return (count if count.isdigit() else f"({count})") + "d" + (
            sides if sides.isdigit() else f"({sides})")
    if isinstance(node, Negate):
        return f"-({worked(node.operand, resolve, stream)})"
    if isinstance(node, Call):
        return f"{node.function}({', '.join(worked(a, resolve, stream) for a in node.arguments)})"
    assert isinstance(node, Binary)
    left, right = worked(node.left, resolve, stream), worked(node.right, resolve, stream)
    if isinstance(node.left, Binary) and _BINDS[node.left.op] < _BINDS[node.op] \
            and not left.isdigit():
        left = f"({left})"
    if isinstance(node.right, Binary) and _BINDS[node.right.op] <= _BINDS[node.op] \
            and not (node.op in "+*" and node.right.op == node.op) and not right.isdigit():
        right = f"({right})"
    return f"{left} {node.op} {right}"


def foe_damage_type(game: Game, template: Template) -> str | None:
    """CMB-TYPE-1, OQ-CMB-9: a foe's strikes carry its template's ``damageType``; else the
    system default, ``combat.attack.damageType``; None where the ruleset gives neither (then
    no typed defence can meet the strike)."""
    if template.combat.damage_type is not None:
        return template.combat.damage_type
    combat = game.ruleset.combat
    return combat.attack.damage_type if combat is not None and combat.attack else None


def in_order(combatants: Iterable[Combatant]) -> tuple[Combatant, ...]:
    """CMB-TURN-3/4, OQ-CMB-7 a: highest initiative first, a hero before a foe on a tie, then
    the order they joined."""
    return tuple(sorted(combatants, key=lambda c: (-c.initiative, c.side != "party", c.joined)))


def next_joined(encounter: Encounter | None) -> int:
    """The join number the next combatant gets."""
    if encounter is None or not encounter.combatants:
        return 0
    return max(c.joined for c in encounter.combatants) + 1


def hit_result(total: int, critical: str | None, defence: int) -> str:
    """CMB-ATK-A4, OQ-CMB-2: ``critical`` on a natural critical success, ``miss`` on a natural
    failure, else ``hit`` iff the total reaches the defence."""
    if critical == "success":
        return "critical"
    if critical == "failure":
        return "miss"
    return "hit" if total >= defence else "miss"


def attacks_left(action: TurnAction, view: SheetView, stream: Stream,
                 spent: Sequence[str], granted: Sequence[str] = (),
                 strikes: ValueRef | None = None) -> int:
    """CMB-TURN-9..12/16/17, OQ-CMB-7 c/d: the attacks ``action`` still allows ``view``'s hero
    this round — ``per`` uses, and one more for each of ``granted`` naming it (Action Surge),
    × ``attacks`` each (none without ``attacks``; a multiclass hero's largest per class,
    CMB-TURN-11), less those ``spent`` already took (one entry per attack, by budget id);
    never below 0. ``strikes`` is the weapon's (ITM-WPN-20, read on the wearer's sheet): where
    a weapon gives it, it is the attacks one spend buys, in place of the action's ``attacks``
    (a weapon without it leaves the action's number, so Extra Attack still works with any
    weapon: docs/items-rules.md, "Decisions")."""
    per, each = attack_counts(action, view, stream)
    if strikes is not None:
        each = max(int(view.value(strikes)), 0)
    return max((per + granted.count(action.id)) * each - spent.count(action.id), 0)


def attacks_allowed(action: TurnAction, view: SheetView, stream: Stream) -> int:
    """CMB-TURN-9..11: the attacks ``action`` allows ``view``'s hero a round, ``per`` ×
    ``attacks``, before anything granted this round."""
    per, each = attack_counts(action, view, stream)
    return per * each


def attack_counts(action: TurnAction, view: SheetView, stream: Stream) -> tuple[int, int]:
    """CMB-TURN-9..11: ``per`` (the uses of ``action`` a round) and ``attacks`` (each use's
    attacks, 0 without ``attacks``) for ``view``'s hero, never below 0. Formulas without dice
    read the same on the same sheet, so they are remembered for it: this is asked on every
    attack."""
    if rolls_dice(action.per) or (action.attacks is not None and rolls_dice(action.attacks)):
        return _counts(action, view, stream)  # dice: a new number each round
    return _counts_without_dice(action, view.game, view.character, view.invented,
                                view.items_apply)


def _counts(action: TurnAction, view: SheetView, stream: Stream) -> tuple[int, int]:
    per = max(evaluate(action.per, sheet_reader(view), stream).value, 0)
    each = largest_per_class(view, action.attacks, stream) if action.attacks is not None else 0
    return per, max(each, 0)


# What the formulas without dice are evaluated with: they draw nothing from it.
_NO_DICE = Stream("", (), "combat/attack-counts")


@remembered(256)
def _counts_without_dice(action: TurnAction, game: Game, character: Character | None,
                         invented: tuple[InventedItem, ...] | None,
                         items_apply: bool) -> tuple[int, int]:
    """:func:`attack_counts` of an action whose formulas roll no dice, on the sheet these
    make. The sheet reads no more of the state than its invented items, so the answer is
    remembered across the states of a fight, not for each."""
    return _counts(action, SheetView(game, character, None, items_apply, invented), _NO_DICE)


@dataclass(frozen=True, slots=True)
class Struck:
    """One attack's damage: how much, the dice rolled, and the target's hit points after."""

    damage: int
    rolls: Evaluation
    hp: int


def strike(formula: Formula, resolve: Resolve, critical: bool, hp: int, stream: Stream,
           flat: int = 0, reroll_up_to: int = 0) -> Struck:
    """CMB-ATK-A5/A6: the damage of a hit, ``formula`` plus ``flat`` (a critical doubles the
    dice of each dice term, CMB-ATK-5, OQ-CMB-3), never below 0; hit points never go below
    0. ``reroll_up_to``: a two-handed weapon's dice showing that or less, the critical's extra
    dice too, are rerolled once (ITM-WPN-15, :attr:`WeaponNumbers.reroll_up_to`)."""
    tree = double_dice(formula.tree) if critical else formula.tree
    rolled = evaluate(tree, resolve, stream, reroll_up_to)
    damage = max(rolled.value + flat, 0)
    return Struck(damage, rolled, max(hp - damage, 0))


# --- heroes ------------------------------------------------------------------------------


def hero_defence(game: Game, state: State, who: int) -> int:
    """CMB-ATK-6, CMB-ATK-A4: the number a foe's attack must reach to hit hero ``who`` —
    ``combat.attack.defence`` read on the hero's sheet (0 without one). The one place a
    hero's defence is worked out, so worn defences plug in here."""
    return defence_of(game, state, who)  # with what it wears and carries (ITM-ARM-3..9)


@dataclass(frozen=True, slots=True)
class Health:
    """A hero's hit points: on its health pool (with the temporary points beside it,
    ITM-OUT-4) or on its health track."""

    hp: int
    hp_max: int
    temporary: int = 0


def hero_health(game: Game, state: State, who: int) -> Health | None:
    """docs/design.md#combat-state: a hero's hit points live in the ruleset's health pool, else its
    health track; None where the ruleset keeps neither."""
    character = state.characters[who]
    pool = health_pool(game)
    if pool is not None:
        most = character.most(pool.id, SheetView(game, character, state,
                                                 items_apply=False).value(pool.max))
        return Health(character.pools.get(pool.id, most), most,
                      character.pools.get(f"{pool.id}:temporary", 0))
    track = next((t for t in game.ruleset.live.tracks if t.kind == "health"), None)
    if track is None:
        return None
    return Health(track_value(game, character, state, track),
                  track_max(game, character, state, track))


def hurt(game: Game, state: State, who: int, damage: int) -> tuple[State, Health]:
    """CMB-ATK-A6: ``damage`` taken by hero ``who``: its temporary points go first
    (ITM-OUT-4), then the health pool or track, never below 0. Returns the new state and the
    hero's hit points after."""
    health = hero_health(game, state, who)
    assert health is not None
    character = state.characters[who]
    soaked = min(health.temporary, max(damage, 0))
    left = max(health.hp - (max(damage, 0) - soaked), 0)
    pool = health_pool(game)
    if pool is not None:
        pools = dict(character.pools)
        temporary = health.temporary - soaked
        key = f"{pool.id}:temporary"
        if temporary:
            pools[key] = temporary
        else:
            pools.pop(key, None)  # spent temporary points are gone, not kept at 0
        pools[pool.id] = left
        character = character.model_copy(update={"pools": pools})
    else:
        track = next(t for t in game.ruleset.live.tracks if t.kind == "health")
        character = character.model_copy(update={"tracks": {**character.tracks,
                                                            track.id: left}})
    return (state.with_character(who, character),
            Health(left, health.hp_max, health.temporary - soaked))


def standing(game: Game, state: State, combatant: Combatant) -> bool:
    """Whether a combatant is still up: a foe above 0 hit points; a hero above 0 on its health
    pool or track (a hero healed above 0 stands again, unless it died, CMB-HP0-3), or one the
    ruleset keeps no hit points for."""
    if combatant.side == "foes":
        return bool(combatant.hp)
    who = state.character_index(combatant.name)
    if who is None:
        return False
    health = hero_health(game, state, who)
    if is_dead(game, state.characters[who].conditions):  # CMB-HP0-3: died on the spot
        return False
    return health is None or health.hp > 0


# --- the action budget -------------------------------------------------------------------

CLASS = "class"  # CMB-TURN-11: ``@class.<x>`` reads the value ``<x>`` of each of a hero's classes
CLASS_LEVEL = "level_"  # a class is a sheet field level_<class> (the fixtures' level_fighter)


def classes(view: SheetView) -> list[str]:
    """The classes a hero has: every sheet field ``level_<class>`` at 1 or more, in sheet
    order."""
    return [f.id[len(CLASS_LEVEL):] for f in view.game.ruleset.sheet.fields
            if f.id.startswith(CLASS_LEVEL) and len(f.id) > len(CLASS_LEVEL)
            and f.type == "number" and view.field(f.id) >= 1]


def _as_class(view: SheetView, resolve: Resolve, name: str) -> Resolve:
    """``resolve``, with ``@class.<x>`` reading class ``name``'s own ``<name>_<x>`` (a sheet
    field or derived value) where the sheet has one, else ``class_<x>`` as written."""
    sheet = view.game.ruleset.sheet
    fields = {f.id for f in sheet.fields}
    derived = {d.id for d in sheet.derived}

    def read(reference: Reference) -> int | float | Fraction:
        if reference.name == CLASS and reference.part is not None:
            ident = f"{name}_{reference.part}"
            if ident in fields:
                return view.field(ident)
            if ident in derived:
                return view.derived(ident)
        return resolve(reference)

    return read


def largest_per_class(view: SheetView, formula: Formula, stream: Stream) -> int:
    """CMB-TURN-10/11: what ``formula`` (a turn action's ``attacks``, ``@class.attacks``) gives
    a hero: for a hero of several classes, the LARGEST any one class gives — the formula read
    once per class, never the classes' values summed. Without ``@class.`` references or
    classes it is read once, as written."""
    resolve = sheet_reader(view)
    mentions = any(r.name == CLASS and r.part is not None for r in references_of(formula))
    names = classes(view) if mentions else []
    if not names:
        return evaluate(formula, resolve, stream).value
    return max(evaluate(formula, _as_class(view, resolve, n), stream).value for n in names)


def attack_reads(rule: AttackRule, view: SheetView, stream: Stream,
                 weapon: Mapping[str, Formula] | None = None) -> dict[str, int | Fraction]:
    """CMB-READS-1..5, 7, OQ-CMB-5 d: the values of ``combat.attack.reads``, each computed for
    the attacker (its own sheet, an unarmed hero's too), that the damage formula reads as
    ``@name``. CMB-READS-6: a name the ``weapon`` gives a value of its own reads that value
    instead (still for the attacker); the rest read the system's."""
    reader = sheet_reader(view)
    own = weapon or {}
    return {name: evaluate(own.get(name, formula), reader, stream).value
            for name, formula in rule.reads.items()}
