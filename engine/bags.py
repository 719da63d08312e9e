"""Bags and stacks: what the GM's ``[inventory: action="add"/"remove"]`` does to them
(spec/items.md §5.2–5.5)."""

from __future__ import annotations

from dataclasses import dataclass

from tagparse import Tag

from . import reasons
from .answers import Answer, accepted, refused
from .context import TurnContext
from .game import DEFAULT_STACK, MAX_STACKS_PER_BAG, Game
from .state import Character, Stack, State

MAX_COUNT = 1_000_000  # the most one tag may add or remove at once


@dataclass(frozen=True, slots=True)
class Thing:
    """What a name in a tag found: a catalog item, a coin, or a plain item, and its limit."""

    name: str
    item: str | None
    coin: str | None
    stack_limit: int
    service: bool = False

    def stack(self, count: int) -> Stack:
        return Stack(name=self.name, item=self.item, coin=self.coin, count=count)


def parse_count(text: str | None) -> int | str:
    """``count=``: a whole number from 1 to :data:`MAX_COUNT` (default 1), or why not."""
    if text is None or not text.strip():
        return 1
    raw = text.strip()
    if not raw.isascii() or not raw.isdigit() or len(raw) > 7:
        return f'count="{raw[:40]}" is not a whole number from 1 to {MAX_COUNT}'
    count = int(raw)
    if not 1 <= count <= MAX_COUNT:
        return f'count="{raw}" is not a whole number from 1 to {MAX_COUNT}'
    return count


def find_thing(game: Game, name: str) -> Thing | None:
    """ITM-NAME-1/2: a catalog item by label; a coin by id, label or ``one``; else None."""
    found = game.find_item(name)
    if found is not None:
        return Thing(found.label, found.ref, None, found.stack_limit, found.item.service)
    wanted = name.strip().casefold()
    for coin_id, info in game.coins.items():
        names = {coin_id.casefold(), info.coin.label.casefold()}
        if info.coin.one is not None:
            names.add(info.coin.one.casefold())
        if wanted in names:
            return Thing(info.coin.label, None, coin_id, DEFAULT_STACK)
    return None


def add_to_bag(bag: tuple[Stack, ...], thing: Thing, count: int) -> tuple[Stack, ...] | None:
    """ITM-STACK-1: fill loose stacks of the same thing to their limit, then start new ones.

    Returns None when that would need more stacks than one bag takes (OQ-4).
    """
    stacks = list(bag)
    left = count
    proto = thing.stack(1)
    for index, stack in enumerate(stacks):
        if left == 0:
            break
        if stack.loose and stack.same_kind(proto) and stack.count < thing.stack_limit:
            moved = min(left, thing.stack_limit - stack.count)
            stacks[index] = stack.model_copy(update={"count": stack.count + moved})
            left -= moved
    new_stacks = -(-left // thing.stack_limit)
    if len(stacks) + new_stacks > MAX_STACKS_PER_BAG:
        return None
    while left > 0:
        moved = min(left, thing.stack_limit)
        stacks.append(thing.stack(moved))
        left -= moved
    return tuple(stacks)


def resolve_who(state: State, tag: Tag) -> int | Answer:
    who = tag.get("who")
    index = state.character_index(who)
    if index is None:
        names = ", ".join(c.name for c in state.characters)
        return refused(tag, reasons.UNKNOWN_CHARACTER,
                       f'Nobody called "{(who or state.player)[:80]}" is in the party ({names}).')
    return index


def add(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="add" item=... count=... who=...]`` (ITM-NAME-*, ITM-FREE-*)."""
    name = (tag.get("item") or "").strip()
    if not name:
        return state, refused(tag, reasons.MISSING_ATTRIBUTE,
                              'Say what to add: [inventory: action="add" item="<name>"].')
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return state, refused(tag, reasons.BAD_COUNT, count + ".")
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return state, who
    character = state.characters[who]
    thing = find_thing(game, name)
    if thing is not None and thing.service:  # ITM-SVC-3
        return state, refused(tag, reasons.SERVICE,
                              f"{thing.name} is a service: it is bought, never carried.")
    if thing is None:
        thing = Thing(name[:200], None, None, DEFAULT_STACK)
        block = game.ruleset.items
        held = any(s.plain and s.name.casefold() == name.casefold() for s in character.bag)
        if block is not None and not block.native and not held:  # ITM-FREE-4, ITM-FREE-5
            return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                  f'"{name[:80]}" is not an item of this ruleset.')
    bag = add_to_bag(character.bag, thing, count)
    if bag is None:
        return state, refused(tag, reasons.TOO_MANY_STACKS,
                              f"{character.name}'s bag cannot take that many stacks "
                              f"(at most {MAX_STACKS_PER_BAG}).")
    new_state = state.with_character(who, character.model_copy(update={"bag": bag}))
    record = {"item": thing.item, "coin": thing.coin, "name": thing.name, "count": count,
              "who": character.name}
    return new_state, accepted(tag, f"Added {thing.name} ×{count} to {character.name}'s bag.",
                               record)


def _matches(stack: Stack, thing: Thing | None, name: str) -> bool:
    if thing is not None and (thing.item is not None or thing.coin is not None):
        return stack.item == thing.item and stack.coin == thing.coin
    return stack.name.casefold() == name.casefold()


def take_from_bag(character: Character, thing: Thing | None, name: str,
                  count: int) -> tuple[tuple[Stack, ...], int]:
    """Take ``count`` of a thing out of a bag: loose stacks first, last stack first.

    Returns the new bag and how many the bag held in all (the bag is unchanged when it held
    fewer than ``count``).
    """
    held = sum(s.count for s in character.bag if _matches(s, thing, name))
    if held < count:
        return character.bag, held
    stacks = list(character.bag)
    left = count
    order = sorted((i for i, s in enumerate(stacks) if _matches(s, thing, name)),
                   key=lambda i: (not stacks[i].loose, -i))
    for index in order:
        if left == 0:
            break
        moved = min(left, stacks[index].count)
        stacks[index] = stacks[index].model_copy(update={"count": stacks[index].count - moved})
        left -= moved
    return tuple(s for s in stacks if s.count > 0), held


def remove(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="remove" item=... count=... who=...]``: all of it, or nothing."""
    name = (tag.get("item") or "").strip()
    if not name:
        return state, refused(tag, reasons.MISSING_ATTRIBUTE,
                              'Say what to remove: [inventory: action="remove" item="<name>"].')
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return state, refused(tag, reasons.BAD_COUNT, count + ".")
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return state, who
    character = state.characters[who]
    thing = find_thing(game, name)
    bag, held = take_from_bag(character, thing, name, count)
    label = thing.name if thing is not None else name[:200]
    if held == 0:
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    if held < count:
        return state, refused(tag, reasons.NOT_ENOUGH,
                              f"{character.name} has only {label} ×{held}, not {count}.")
    new_state = state.with_character(who, character.model_copy(update={"bag": bag}))
    record = {"item": thing.item if thing else None, "coin": thing.coin if thing else None,
              "name": label, "count": count, "who": character.name}
    return new_state, accepted(tag, f"Removed {label} ×{count} from {character.name}'s bag.",
                               record)
