"""Carrying: what things weigh, each character's load, and where an arriving thing goes
(docs/rules/items.md#59-carry-weight-load-and-distribution, ITM-CARRY-*, ITM-MONEY-2/3, OQ-12/13).

Weights are exact fractions (a quarter pound, one coin of a family that weighs 100 to the
unit), so a load never drifts by float rounding and the same bag always weighs the same.
"""

from __future__ import annotations

from fractions import Fraction

from ..ruleset import ValueRef
from ..ruleset.items import Carry
from .bags import Thing, add_to_bag, bag_index, item_of, kind_key
from .game import MAX_STACKS_PER_BAG, Game
from .sheet import SheetView
from .state import Character, Stack, State

ZERO = Fraction(0)


def exact(number: float | int) -> Fraction:
    """A sheet or stat number as an exact fraction (``0.25`` is exactly a quarter)."""
    if isinstance(number, int):
        return Fraction(number)
    return Fraction(repr(float(number)))


def carry_rule(game: Game) -> Carry | None:
    """The ruleset's ``carry``, or None: without it weight means nothing (ITM-BLOCK-19)."""
    block = game.ruleset.items
    return block.carry if block is not None else None


def _weight_stat(game: Game, item_stats: dict[str, object], carry: Carry) -> Fraction:
    value = item_stats.get(carry.stat)
    if value is None:  # OQ-3: the stat's default counts where the item leaves it unset
        block = game.ruleset.items
        declared = next((s for s in block.stats if s.id == carry.stat), None) if block else None
        value = declared.default if declared is not None else None
    if isinstance(value, bool) or not isinstance(value, int | float):
        return ZERO
    return max(ZERO, exact(value))


def unit_weight(game: Game, state: State | None, item: str | None, coin: str | None) -> Fraction:
    """ITM-CARRY-1, ITM-MONEY-2/3: what one of a thing weighs (0 without ``carry``)."""
    carry = carry_rule(game)
    if carry is None:
        return ZERO
    if coin is not None:
        info = game.coins.get(coin)
        per_weight = info.family.per_weight if info is not None else None
        return Fraction(1, per_weight) if per_weight else ZERO
    found = item_of(game, state, item)
    if found is None:  # a plain item has no stats, so no weight
        return ZERO
    return _weight_stat(game, dict(found.stats), carry)


def stack_weight(game: Game, state: State | None, stack: Stack) -> Fraction:
    """ITM-CARRY-1: a stack weighs its item's weight times its count."""
    return unit_weight(game, state, stack.item, stack.coin) * stack.count


def load(game: Game, state: State | None, character: Character) -> Fraction:
    """ITM-CARRY-2: the weight of the character's own bag: each coin's and item's unit weight
    times how many of it the bag holds (the sum of :func:`stack_weight` over the stacks, found
    through the bag's index so each kind's weight is looked up once; weights are exact, so the
    order of the sum does not matter)."""
    bag = character.bag
    total = ZERO
    for (kind, key), positions in bag_index(bag).items():
        if kind == "coin":
            total += unit_weight(game, state, None, key) * sum(bag[i].count for i in positions)
        elif kind == "item":  # a stack weighs as its coin when it names one (unit_weight)
            count = sum(bag[i].count for i in positions if bag[i].coin is None)
            if count:
                total += unit_weight(game, state, key, None) * count
    return total


def _sheet_number(game: Game, character: Character, ref: ValueRef) -> Fraction:
    # ITM-BLOCK-18: read from the character's own sheet, which reads no live state; the
    # abilities items change are live too, so carry reads the unchanged sheet (like ITM-ABIL-6).
    return exact(SheetView(game, character, items_apply=False).value(ref))


def thresholds(game: Game, character: Character) -> tuple[Fraction | None, Fraction | None]:
    """(encumberedAbove, limit) read from the character's own sheet; None where not given."""
    carry = carry_rule(game)
    if carry is None:
        return None, None
    limit = _sheet_number(game, character, carry.limit) if carry.limit is not None else None
    return _sheet_number(game, character, carry.encumbered_above), limit


def encumbered(game: Game, state: State | None, character: Character) -> bool:
    """ITM-CARRY-3: a load above ``encumberedAbove``."""
    above, _ = thresholds(game, character)
    return above is not None and load(game, state, character) > above


def stack_room(bag: tuple[Stack, ...], thing: Thing, want: int | None = None) -> int:
    """How many of ``thing`` the bag still takes before it needs more stacks than allowed.

    With ``want``, stops early once it knows the bag takes that many (some number at least
    ``want`` is returned then): first the free stacks alone (the common case), then the room
    in stacks of the thing, last stack first (where taking one left room, ITM-STACK-1), so an
    add to a long bag, even a full one, does not walk every stack.
    """
    room = max(0, MAX_STACKS_PER_BAG - len(bag)) * thing.stack_limit
    if want is not None and room >= want:
        return room
    proto = thing.stack(1)
    for position in reversed(bag_index(bag).get(kind_key(thing), ())):
        stack = bag[position]
        if stack.count < thing.stack_limit and stack.loose and stack.same_kind(proto):
            room += thing.stack_limit - stack.count
            if want is not None and room >= want:
                break
    return room


def _fits_under(ceiling: Fraction | None, current: Fraction, weight: Fraction) -> int | None:
    """How many of a thing of ``weight`` fit before the load passes ``ceiling`` (None: any)."""
    if ceiling is None or weight == 0:
        return None
    return max(0, (ceiling - current) // weight)


def _room(game: Game, state: State, index: int, thing: Thing, weight: Fraction,
          ceiling: str, want: int | None = None) -> int:
    """How many of ``thing`` character ``index`` takes without passing ``ceiling``
    (``"encumbered"``, ``"limit"`` or ``"none"``), stack count included."""
    character = state.characters[index]
    above, limit = thresholds(game, character)
    by_weight = None
    chosen = None if ceiling == "none" else (above if ceiling == "encumbered" else limit)
    if chosen is not None and weight != 0:  # only then does the load matter
        by_weight = _fits_under(chosen, load(game, state, character), weight)
    by_stacks = stack_room(character.bag, thing, want)
    return by_stacks if by_weight is None else min(by_stacks, int(by_weight))


def _place(state: State, index: int, thing: Thing, count: int) -> State:
    character = state.characters[index]
    bag = add_to_bag(character.bag, thing, count)
    assert bag is not None  # count never exceeds stack_room
    return state.with_bag(index, bag)


def walk_order(state: State) -> list[int]:
    """ITM-CARRY-5: the player first, then the party in order."""
    player = state.character_index(None)
    first = [player] if player is not None else []
    return first + [i for i in range(len(state.characters)) if i != player]


def distribute(game: Game, state: State, thing: Thing, count: int,
               who: int | None) -> tuple[State, list[tuple[int, int]], int]:
    """Put ``count`` of ``thing`` into bags; returns (new state, [(character, placed)], left).

    With ``who``: that character's bag, as many as fit under its ``limit`` (ITM-CARRY-8,
    OQ-13). Without: the shared view (ITM-CARRY-5..7, OQ-12) — the first character, player
    first, who takes it all without becoming encumbered; else a walk giving each as many as
    fit without becoming encumbered, then a walk up to each ``limit`` (without ``limit``,
    the player takes the rest). Nothing ever goes past a limit or past the stacks a bag takes
    (OQ-4); what is left stays behind. Returns the same state object when nothing was placed.
    """
    weight = unit_weight(game, state, thing.item, thing.coin)
    placements: dict[int, int] = {}
    left = count
    order = walk_order(state)  # placing things changes no name, so no one's place in it

    def give(index: int, ceiling: str) -> None:
        nonlocal state, left
        taken = min(left, _room(game, state, index, thing, weight, ceiling, left))
        if taken > 0:
            state = _place(state, index, thing, taken)
            placements[index] = placements.get(index, 0) + taken
            left -= taken

    if who is not None:
        give(who, "limit")
    else:
        whole = next((i for i in order
                      if _room(game, state, i, thing, weight, "encumbered", count) >= count),
                     None)
        if whole is not None:  # takes it all: its room was just counted
            if count > 0:
                state = _place(state, whole, thing, count)
                placements[whole], left = count, 0
        else:
            for index in order:
                give(index, "encumbered")
            rule = carry_rule(game)
            if rule is not None and rule.limit is not None:
                for index in order:
                    give(index, "limit")
            elif order:
                give(order[0], "none")
    rank = {index: n for n, index in enumerate(order)}
    return state, sorted(placements.items(), key=lambda p: rank[p[0]]), left
