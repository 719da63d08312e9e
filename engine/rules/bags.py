"""Bags and stacks: what the GM's ``[inventory: action="add"/"remove"]`` does to them
(docs/rules/items.md#5-what-reads-items, ITM-INV, ITM-NAME, ITM-STACK, ITM-FREE)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from ..ruleset import Item
from .game import DEFAULT_STACK, MAX_STACKS_PER_BAG, Game
from .items import effect_part
from .names import meant_name
from .state import Character, InventedItem, Stack, State
from .trusted import trusted

MAX_LISTED = 20  # the most things one tag's item= list may name
NEW_STACK = dict(Stack(name="-", count=1).__dict__)  # a new stack's fields: the defaults


@dataclass(frozen=True, slots=True)
class Thing:
    """What a name in a tag found: a catalog item, a coin, or a plain item, and its limit."""

    name: str
    item: str | None
    coin: str | None
    stack_limit: int
    service: bool = False

    def stack(self, count: int) -> Stack:
        """A new loose stack of ``count`` (1 or more) of this thing."""
        return trusted(Stack, {**NEW_STACK, "name": self.name, "item": self.item,
                               "coin": self.coin, "count": count})


def stack_limit(item: Item) -> int:
    """ITM-ENTRY-8..10: ``stack``, else the default; an item with charges stacks alone."""
    if item.charges is not None:
        return 1
    return item.stack or DEFAULT_STACK


def invented_named(state: State | None, name: str) -> InventedItem | None:
    """ITM-NAME-3: the item the GM invented earlier under this name (any case)."""
    if state is None:
        return None
    wanted = name.strip().casefold()
    return next((i for i in state.invented if i.name.casefold() == wanted), None)


def item_of(game: Game, state: State | None, ref: str | None) -> Item | None:
    """The ruleset item a stack's ``item`` reference names: a catalog entry or an invented one."""
    if ref is None:
        return None
    found = game.items.get(ref)
    if found is not None:
        return found.item
    if state is not None:
        for invented in state.invented:
            if invented.ref == ref:
                return invented.item
    return None


def find_thing(game: Game, name: str, state: State | None = None) -> Thing | None:
    """ITM-NAME-1..3: a catalog item by label, an invented item by name, a coin by id, label
    or ``one``; else None."""
    found = game.find_item(name)
    if found is not None:
        return Thing(found.label, found.ref, None, found.stack_limit, found.item.service)
    invented = invented_named(state, name)
    if invented is not None:
        return Thing(invented.name, invented.ref, None, stack_limit(invented.item))
    wanted = name.strip().casefold()
    for coin_id, info in game.coins.items():
        names = {coin_id.casefold(), info.coin.label.casefold()}
        if info.coin.one is not None:
            names.add(info.coin.one.casefold())
        if wanted in names:
            return Thing(info.coin.label, None, coin_id, DEFAULT_STACK)
    return None


# Where each kind of stack sits in one bag, so finding the stacks a tag means costs the few stacks
# of that kind, not the whole bag (bags grow to hundreds of stacks). Keys: ("name", case-folded
# name) for every stack, ("item", ref), ("coin", id) and ("shows", ref a fake passes for) where the
# stack has them, ("equipped", "") and ("bound", "") where it is (so what is worn can be read off
# the index alone); values are positions in bag order. An index is only a shortlist: callers still
# test each candidate with the plain rule (:func:`stack_matches`, :meth:`Stack.same_kind`), so it
# can never change what matches. Built once, never mutated: a changed bag gets a new index, except
# that a bag whose stacks differ from another's in their counts alone shares that bag's index object
# (add_to_bag filling stacks, take_from_bag emptying none). So a function of the index alone may be
# remembered per index object (:func:`engine.rules.sheet.owned_in`).
BagIndex = dict[tuple[str, str], tuple[int, ...]]

MAX_INDEXED_BAGS = 64
# bag id -> (the bag itself, its index). The entry holds the bag, so its id is never reused
# while cached; least recently used bags are dropped first. The lock keeps the bound under
# threads (the HTTP stage); results never depend on what is cached.
_INDEXES: OrderedDict[int, tuple[tuple[Stack, ...], BagIndex]] = OrderedDict()
_INDEXES_LOCK = threading.Lock()


def stack_keys(stack: Stack) -> list[tuple[str, str]]:
    """The index keys a stack is found under (see :data:`BagIndex`)."""
    keys = [("name", stack.name.casefold())]
    if stack.item is not None:
        keys.append(("item", stack.item))
    if stack.coin is not None:
        keys.append(("coin", stack.coin))
    if stack.shows_as is not None:
        keys.append(("shows", stack.shows_as))
    if stack.equipped:
        keys.append(("equipped", ""))
    if stack.bound:
        keys.append(("bound", ""))
    return keys


def build_bag_index(bag: tuple[Stack, ...]) -> BagIndex:
    """The index of a bag, from scratch."""
    positions: dict[tuple[str, str], list[int]] = {}
    for position, stack in enumerate(bag):
        for key in stack_keys(stack):
            positions.setdefault(key, []).append(position)
    return {key: tuple(found) for key, found in positions.items()}


def bag_index(bag: tuple[Stack, ...]) -> BagIndex:
    """The index of a bag: remembered for the last bags asked about or built here."""
    with _INDEXES_LOCK:
        entry = _INDEXES.get(id(bag))
        if entry is not None and entry[0] is bag:
            _INDEXES.move_to_end(id(bag))
            return entry[1]
    index = build_bag_index(bag)
    _remember(bag, index)
    return index


def _remember(bag: tuple[Stack, ...], index: BagIndex) -> None:
    with _INDEXES_LOCK:
        _INDEXES[id(bag)] = (bag, index)
        _INDEXES.move_to_end(id(bag))
        while len(_INDEXES) > MAX_INDEXED_BAGS:
            _INDEXES.popitem(last=False)


def _merged(index: BagIndex, keys: Iterable[tuple[str, str]]) -> list[int]:
    """The positions under any of ``keys``, in bag order, each once."""
    found = [positions for key in keys if (positions := index.get(key))]
    if len(found) <= 1:
        return list(found[0]) if found else []
    return sorted(set().union(*found))


def kind_key(thing: Thing) -> tuple[str, str]:
    """Where stacks :meth:`Stack.same_kind` as a new stack of ``thing`` are indexed."""
    if thing.item is not None:
        return ("item", thing.item)
    if thing.coin is not None:
        return ("coin", thing.coin)
    return ("name", thing.name.casefold())


def add_to_bag(bag: tuple[Stack, ...], thing: Thing, count: int) -> tuple[Stack, ...] | None:
    """ITM-STACK-1: fill loose stacks of the same thing to their limit, then start new ones.

    Returns None when that would need more stacks than one bag takes (OQ-4).
    """
    index = bag_index(bag)
    stacks = list(bag)
    left = count
    limit = thing.stack_limit
    proto: Stack | None = None  # built when a stack with room is met (most are full)
    # The stacks of the kind with room, in bag order (one comprehension: a long bag's full
    # stacks are passed over quickly).
    for position in [p for p in index.get(kind_key(thing), ()) if bag[p].count < limit]:
        if left == 0:
            break
        stack = stacks[position]
        if not stack.loose:
            continue
        if proto is None:
            proto = thing.stack(1)
        if stack.same_kind(proto):
            moved = min(left, thing.stack_limit - stack.count)
            stacks[position] = stack.model_copy(update={"count": stack.count + moved})
            left -= moved
    new_stacks = -(-left // thing.stack_limit)
    if len(stacks) + new_stacks > MAX_STACKS_PER_BAG:
        return None
    added = range(len(stacks), len(stacks) + new_stacks)
    while left > 0:
        moved = min(left, thing.stack_limit)
        stacks.append(thing.stack(moved))
        left -= moved
    grown = tuple(stacks)
    if added:  # the new stacks are all of one kind, so they share their keys
        index = dict(index)
        for key in stack_keys(stacks[-1]):
            index[key] = index.get(key, ()) + tuple(added)
    _remember(grown, index)  # counts changed, keys did not
    return grown


def cursed_bound(game: Game, state: State, stack: Stack) -> bool:
    """ITM-BIND-3: a bound stack of a ``cursed`` item does not let go."""
    if not stack.bound:
        return False
    item = item_of(game, state, stack.item)
    return item is not None and effect_part(item, "binds").get("cursed") is True


def held_by_name(holders: Iterable[Character], name: str) -> bool:
    """Whether a bag of ``holders`` carries a plain item of this name (any case)."""
    wanted = ("name", name.casefold())
    return any(c.bag[i].plain for c in holders for i in bag_index(c.bag).get(wanted, ()))


def named_things(game: Game, state: State, value: str,
                 holders: Iterable[Character]) -> list[str]:
    """ITM-NAME-1: the names an ``item=`` value lists. A comma list names each thing, except that
    commas inside the label of a ruleset item (or an invented item, or a coin) or the name of a
    plain item in a bag of ``holders`` are part of that name: "Lantern, hooded" stays one item.
    Parts are joined into such names longest first, from the left."""
    if "," not in value:
        return [value]
    parts = [part.strip() for part in value.split(",")]
    parts = [part for part in parts if part]
    if len(parts) > MAX_LISTED:
        return parts  # refused by the caller, before any name is looked up
    carried = list(holders)

    def known(name: str) -> bool:
        return find_thing(game, name, state) is not None or held_by_name(carried, name)

    names: list[str] = []
    at = 0
    while at < len(parts):
        end = next((end for end in range(len(parts), at + 1, -1)
                    if known(", ".join(parts[at:end]))), at + 1)
        names.append(", ".join(parts[at:end]))
        at = end
    return names


def stack_matches(stack: Stack, thing: Thing | None, name: str) -> bool:
    """Whether a stack holds what a tag names: a ruleset item or coin by identity (a fake
    also by what it passes for, ITM-FAKE-9), else a plain item by its name, any case."""
    if thing is not None and (thing.item is not None or thing.coin is not None):
        if thing.item is not None and stack.shows_as == thing.item:
            return True
        return stack.item == thing.item and stack.coin == thing.coin
    return stack.name.casefold() == name.casefold()


def _candidates(bag: tuple[Stack, ...], thing: Thing | None, name: str) -> list[int]:
    """The positions, in bag order, of every stack that may hold what a tag names: those
    indexed under its item (or what a fake passes for), its coin, or its name."""
    if thing is not None and thing.item is not None:
        keys = [("item", thing.item), ("shows", thing.item)]
    elif thing is not None and thing.coin is not None:
        keys = [("coin", thing.coin)]
    else:
        keys = [("name", name.casefold())]
    return _merged(bag_index(bag), keys)


def matching_positions(bag: tuple[Stack, ...], thing: Thing | None, name: str) -> list[int]:
    """The positions of the stacks :func:`stack_matches` finds, in bag order."""
    return [i for i in _candidates(bag, thing, name) if stack_matches(bag[i], thing, name)]


def matching_last_first(bag: tuple[Stack, ...], thing: Thing | None,
                        name: str) -> Iterator[int]:
    """:func:`matching_positions`, last stack first, found one at a time (a caller that needs
    only the last few of a long bag's stacks of a thing does not look at the others)."""
    return (i for i in reversed(_candidates(bag, thing, name))
            if stack_matches(bag[i], thing, name))


def stack_names(bag: tuple[Stack, ...]) -> list[str]:
    """The names of a bag's stacks, in bag order, each once (any case)."""
    seen: set[str] = set()
    names = []
    for stack in bag:
        folded = stack.name.casefold()
        if folded not in seen:
            seen.add(folded)
            names.append(stack.name)
    return names


def meant_stack(game: Game, state: State, bag: tuple[Stack, ...], name: str) -> str | list[str]:
    """The stack of ``bag`` an item name means. A name of the game — a ruleset item, an invented
    item, a coin (ITM-NAME-1..3) — or of a stack in any bag of the party (any case: a fight's use
    may draw on a companion's stack, ITM-CLS-14) means what it says, and so does one that means no
    stack: ``name`` itself. Else the name of the one stack of ``bag`` whose first word or leading
    words it is (:func:`engine.rules.names.meant_name`), or, when it fits several, their names."""
    name = name.strip()
    if not name or find_thing(game, name, state) is not None:
        return name
    key = ("name", name.casefold())
    if key in bag_index(bag) or any(key in bag_index(c.bag) for c in state.characters):
        return name
    names = stack_names(bag)
    meant = meant_name(name, names)
    if meant.found is not None:
        return names[meant.found]
    return [names[i] for i in meant.candidates] if meant.candidates else name


def held_up_to(bag: tuple[Stack, ...], thing: Thing | None, name: str, count: int) -> int:
    """How many of a thing the bag holds: exact when fewer than ``count``, else some number
    of at least ``count`` (counting stops there, last stack first)."""
    held = 0
    for position in matching_last_first(bag, thing, name):
        held += bag[position].count
        if held >= count:
            break
    return held


def take_from_bag(character: Character, thing: Thing | None, name: str, count: int,
                  keep: Callable[[Stack], bool] | None = None) -> tuple[tuple[Stack, ...], int]:
    """Take ``count`` of a thing out of a bag: loose stacks first, last stack first.

    Stacks ``keep`` holds on to are never taken (a bound cursed item, ITM-BIND-3). Returns the
    new bag and how many the bag can give: the exact number when that is fewer than ``count``
    (the bag is then unchanged), else at least ``count`` — the stacks are looked at last first
    only until the loose ones give ``count``, so taking a few from a long bag does not walk
    every stack of the thing.
    """
    bag = character.bag
    loose: list[int] = []  # takeable stacks, last first: taken first
    fixed: list[int] = []  # takeable but not loose (worn, charged...): taken after them
    held = from_loose = 0
    for position in matching_last_first(bag, thing, name):
        stack = bag[position]
        if keep is not None and keep(stack):
            continue
        held += stack.count
        if stack.loose:
            loose.append(position)
            from_loose += stack.count
            if from_loose >= count:  # every stack taken from is among these
                break
        else:
            fixed.append(position)
    if held < count:
        return bag, held
    stacks = list(bag)
    emptied: list[int] = []
    left = count
    for index in loose + fixed:
        if left == 0:
            break
        moved = min(left, stacks[index].count)
        if moved == stacks[index].count:
            emptied.append(index)
        else:
            stacks[index] = stacks[index].model_copy(update={"count": stacks[index].count - moved})
        left -= moved
    if not emptied:
        taken = tuple(stacks)
        _remember(taken, bag_index(bag))  # counts changed, keys and positions did not
        return taken, held
    for index in sorted(emptied, reverse=True):  # an emptied stack leaves the bag
        del stacks[index]
    return tuple(stacks), held
