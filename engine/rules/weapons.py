"""What a weapon brings to an attack (docs/rules/items.md#9-weapons-in-combat): the number it adds
to hit, the dice it deals and what is added to them, its damage type, its reach and range, the tags
that go with its hits, and whether it is wielded in two hands (versatile dice, one-handed sheet
bonuses, rerolled low dice). Plain functions of the wearer's sheet and the item; the ``[attack:]``
action (engine/actions/fight/formula.py) rolls with them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..ruleset import Formula, Item, parse_formula
from ..ruleset.combat import Abilities, Attack, Range, ToHit
from .bags import item_of
from .game import Game
from .gear import slots_in_use
from .items import read_stat
from .sheet import SheetView, ability_modifier
from .state import Character, Stack, State


@dataclass(frozen=True, slots=True)
class WeaponNumbers:
    """One weapon's numbers for one attack of its wearer (ITM-WPN-6..20, 27)."""

    to_hit: int
    """ITM-WPN-6..10: what is added to the attack dice."""
    damage: Formula | None
    """ITM-WPN-12/19: the dice dealt (the versatile dice while wielded two-handed); None
    without dice, when the system's damage is dealt instead."""
    flat: int
    """ITM-WPN-12/14: the best damage ability, the bonus and the sheet bonus."""
    damage_type: str | None
    reroll_up_to: int
    """ITM-WPN-15: the weapon's damage dice showing this or less are rerolled once (0: none)."""
    reach: float | None
    range: Range | None
    tags: frozenset[str]
    """ITM-WPN-27: the item's tags go with every hit (a strike tagged ``silver`` passes a
    ``{"type": ..., "except": ["silver"]}`` resistance, ITM-WPN-28)."""
    two_handed: bool


def armed_with(game: Game, state: State, stack: Stack) -> tuple[Stack, Item, Attack] | None:
    """ITM-WPN-1: (stack, item, attack) of a stack that is a weapon, else None. A fake not yet
    found out fights as the weapon it passes for — that item's attack, stats and tags
    (ITM-FAKE-20); found out, it is its true item (ITM-FAKE-16)."""
    item = item_of(game, state, stack.shows_as or stack.item)
    if item is None or item.attack is None:
        return None
    return stack, item, item.attack


def first_worn_weapon(game: Game, state: State,
                      character: Character) -> tuple[Stack, Item, Attack] | None:
    """docs/design.md#combat-tags: the weapon an attack without ``with=`` is made with — the first
    worn one (ITM-WPN-2); None: unarmed."""
    for stack in character.bag:
        armed = armed_with(game, state, stack) if stack.equipped else None
        if armed is not None:
            return armed
    return None


def whole(value: Any) -> int:
    """A number written out or read from a stat as a whole number; anything else is 0."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    return int(value)


def best(game: Game, view: SheetView, item: Item, abilities: Abilities | None) -> int:
    """ITM-WPN-6/12/22: the best modifier of the abilities named (a finesse weapon names two),
    or of an enum stat's ability id; 0 when none is named."""
    named = read_stat(game, item, abilities)
    listed = [named] if isinstance(named, str) else named if isinstance(named, list) else []
    known = {a.id for a in game.ruleset.sheet.abilities}
    mods = [int(ability_modifier(game, view.ability_score(a))) for a in listed if a in known]
    return max(mods) if mods else 0


def skill_rank(view: SheetView, skill: str) -> int:
    """ITM-WPN-7: what a check of ``skill`` adds besides its ability — its proficiency tier's
    flat and multiplier × the proficiency bonus, and the skill's own bonus (held to its
    ``bonusRange``), as the check pipeline's sheet parts count them (CHK-GEN-9/10)."""
    game = view.game
    res = game.ruleset.resolution
    row = next((s for s in game.ruleset.sheet.skills if s.id == skill), None)
    if res is None or row is None:
        return 0
    entry = view.character.skills.get(skill) if view.character is not None else None
    tier_id = entry if isinstance(entry, str) else entry.get("tier") if isinstance(
        entry, dict) else None
    bonus = whole(entry.get("bonus", 0)) if isinstance(entry, dict) else 0
    if row.bonus_range is not None:
        bonus = min(max(bonus, row.bonus_range[0]), row.bonus_range[1])
    tiers = res.proficiency_tiers
    tier = next((t for t in tiers if t.id == tier_id), tiers[0] if tiers else None)
    rank = float(tier.flat) if tier is not None else 0.0
    if tier is not None and tier.multiplier and res.proficiency is not None:
        rank += tier.multiplier * view.unchanged().value(res.proficiency.bonus)  # ITM-ABIL-6
    return int(rank) + bonus


def to_hit(game: Game, view: SheetView, item: Item, attack: Attack) -> int:
    """ITM-WPN-6..10: what a weapon adds to hit — the best of its abilities, what its skill
    adds (ITM-WPN-7), the proficiency bonus where its proficiency value is above 0, its
    bonus, the wearer's sheet bonus."""
    return hit_bonus(game, view, item, attack.to_hit)


def hit_bonus(game: Game, view: SheetView, item: Item, hit: ToHit | None) -> int:
    """ITM-WPN-6..10, ITM-USE-7/8: what a ``toHit`` (a weapon's, or a use's attack roll) adds
    to hit, read on ``view``'s sheet for ``item``; nothing without one."""
    if hit is None:
        return 0
    total = best(game, view, item, hit.abilities) + whole(read_stat(game, item, hit.bonus))
    skill = read_stat(game, item, hit.skill)
    if isinstance(skill, str) and skill:
        total += skill_rank(view, skill)
    res = game.ruleset.resolution
    if hit.proficiency is not None and view.value(hit.proficiency) > 0 and res is not None \
            and res.proficiency is not None:
        total += int(view.value(res.proficiency.bonus))
    if hit.sheet_bonus is not None:
        total += int(view.value(hit.sheet_bonus))
    return total


def hands_free(view: SheetView, item: Item) -> bool:
    """ITM-WPN-19: in every slot the weapon takes, as much room again is free among what its
    wearer wears (a spear in one hand while the other hand is free)."""
    game, character = view.game, view.character
    block = game.ruleset.items
    if character is None or block is None or view.state is None or not item.slots:
        return False
    counts = {s.id: s.count for s in block.slots}
    used = slots_in_use(game, view.state, character)
    return all(counts.get(slot, 0) - used.get(slot, 0) >= need
               for slot, need in item.slots.items())


def wielded_two_handed(view: SheetView, item: Item, attack: Attack,
                       free: bool | None = None) -> bool:
    """ITM-WPN-14/15: a weapon that takes two slots of one kind, or a ``versatile`` one held
    with the room for its second hand free (``free``: :func:`hands_free`, when known)."""
    if any(need >= 2 for need in item.slots.values()):
        return True
    return attack.versatile is not None and (hands_free(view, item) if free is None else free)


def _dice(value: Any) -> Formula | None:
    found = parse_formula(value) if isinstance(value, str) and value else None
    return found if isinstance(found, Formula) else None


def numbers(game: Game, view: SheetView, item: Item, attack: Attack) -> WeaponNumbers:
    """Every number of ITM-WPN-6..20 for one attack with ``item`` by the sheet's wearer, each
    read from the item's own stats where the attack says so (ITM-WPN-21; a stat the item gives
    no value for counts as not written, OQ-3)."""
    free = attack.versatile is not None and hands_free(view, item)  # read once: it walks the bag
    two_handed = wielded_two_handed(view, item, attack, free)
    damage = attack.damage
    formula: Formula | None = None
    flat = 0
    kind: str | None = None
    reroll = 0
    if damage is not None:
        formula = _dice(read_stat(game, item, damage.dice))
        versatile = _dice(read_stat(game, item, attack.versatile))
        if versatile is not None and free:  # ITM-WPN-19
            formula = versatile
        flat = best(game, view, item, damage.abilities) + whole(read_stat(game, item, damage.bonus))
        if damage.sheet_bonus is not None and not (damage.one_handed and two_handed):
            flat += int(view.value(damage.sheet_bonus))  # ITM-WPN-14
        written = read_stat(game, item, damage.type)
        kind = written if isinstance(written, str) and written else None
        res = game.ruleset.resolution
        sum_fight = res is not None and res.kind != "dice-pool"
        if damage.reroll_up_to is not None and two_handed and sum_fight:  # ITM-WPN-15
            reroll = max(int(view.value(damage.reroll_up_to)), 0)
    return WeaponNumbers(
        to_hit=to_hit(game, view, item, attack), damage=formula, flat=flat, damage_type=kind,
        reroll_up_to=reroll, reach=attack.reach, range=attack.range,
        tags=frozenset(item.tags), two_handed=two_handed)


def damage_of(game: Game, view: SheetView, item: Item,
              attack: Attack) -> tuple[Formula | None, int, str | None]:
    """ITM-WPN-12..14: the weapon's damage dice, the flat part and its damage type (see
    :func:`numbers` for everything at once)."""
    found = numbers(game, view, item, attack)
    return found.damage, found.flat, found.damage_type
