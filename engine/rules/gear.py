"""Worn gear: stacks split off to be equipped or bound and merged back when loose, and the
slots and bindings in use (ITM-STACK-2, ITM-SLOT-*, ITM-BIND-*)."""

from __future__ import annotations

from collections.abc import Callable

from .bags import (
    Thing,
    add_to_bag,
    bag_index,
    item_of,
    matching_positions,
    stack_limit,
)
from .game import DEFAULT_STACK, Game
from .sheet import SheetView
from .state import Character, Stack, State


def split_one(bag: tuple[Stack, ...], index: int, **update: bool) -> tuple[Stack, ...]:
    """ITM-STACK-2: one item of the stack at ``index`` into a stack of its own, with
    ``update`` applied to it; the rest stays where it was."""
    stacks = list(bag)
    stack = stacks[index]
    one = stack.model_copy(update={"count": 1, **update})
    if stack.count == 1:
        stacks[index] = one
    else:
        stacks[index] = stack.model_copy(update={"count": stack.count - 1})
        stacks.insert(index + 1, one)
    return tuple(stacks)


def settle(game: Game, state: State, bag: tuple[Stack, ...], index: int) -> tuple[Stack, ...]:
    """A stack that is loose again merges back into a loose stack of the same thing, stack
    limits kept (ITM-STACK-1)."""
    stack = bag[index]
    if not stack.loose:
        return bag
    item = item_of(game, state, stack.item)
    limit = stack_limit(item) if item is not None else DEFAULT_STACK
    rest = bag[:index] + bag[index + 1:]
    if not any(s.loose and s.same_kind(stack) and s.count < limit for s in rest):
        return bag
    merged = add_to_bag(rest, Thing(stack.name, stack.item, stack.coin, limit), stack.count)
    return merged if merged is not None else bag


def slots_in_use(game: Game, state: State, character: Character) -> dict[str, int]:
    """ITM-SLOT-3: how many of each slot the character's equipped items take (each item's
    stacks found through the bag's index)."""
    bag = character.bag
    used: dict[str, int] = {}
    for (kind, ref), positions in bag_index(bag).items():
        item = item_of(game, state, ref) if kind == "item" else None
        if item is None or not item.slots:
            continue
        equipped = sum(bag[i].count for i in positions if bag[i].equipped)
        if equipped:
            for slot, count in item.slots.items():
                used[slot] = used.get(slot, 0) + count * equipped
    return used


def bound_count(character: Character) -> int:
    """ITM-BIND-1: how many items the character has bound."""
    return sum(s.count for s in character.bag if s.bound)


def binding_max(game: Game, character: Character | None) -> int:
    """ITM-BIND-1/2, ITM-BLOCK-14/15: ``binding.max`` off the bearer's own sheet (an empty one
    for a character without a sheet), read without what items change (it is not live)."""
    block = game.ruleset.items
    if block is None or block.binding is None:
        return 0
    return int(SheetView(game, character, items_apply=False).value(block.binding.max))


def pick(game: Game, state: State, character: Character, thing: Thing | None, name: str,
          wanted: Callable[[Stack], bool]) -> int | None:
    """The stack of the named thing the action works on: the last one ``wanted`` accepts."""
    candidates = [i for i in matching_positions(character.bag, thing, name)
                  if wanted(character.bag[i])]
    return candidates[-1] if candidates else None
