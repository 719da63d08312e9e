"""Bags and stacks: what the GM's ``[inventory: action="add"/"remove"]`` does to them
(spec/items.md §5.2–5.5)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from tagparse import Tag

from . import reasons
from .answers import Answer, accepted, refused
from .context import TurnContext
from .game import DEFAULT_STACK, MAX_STACKS_PER_BAG, Game
from .ruleset import Item
from .sheet import effect_part
from .state import Character, InventedItem, Stack, State
from .trusted import trusted

MAX_COUNT = 1_000_000  # the most one tag may add or remove at once
MAX_LISTED = 20  # issue 28: the most things one tag's item= list may name
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


# Where each kind of stack sits in one bag, so finding the stacks a tag means costs the few
# stacks of that kind, not the whole bag (issue 13: bags grow to hundreds of stacks). Keys:
# ("name", case-folded name) for every stack, ("item", ref), ("coin", id) and ("shows", ref
# a fake passes for) where the stack has them; values are positions in bag order. An index
# is only a shortlist: callers still test each candidate with the plain rule
# (:func:`stack_matches`, :meth:`Stack.same_kind`), so it can never change what matches.
# Built once, never mutated: a changed bag gets a new index, except that a bag whose stacks
# differ from another's in their counts alone shares that bag's index object (add_to_bag
# filling stacks, take_from_bag emptying none). So what depends on a bag's stacks but not
# their counts may be remembered per index object (:func:`engine.sheet.owned_items`).
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


def resolve_who(state: State, tag: Tag) -> int | Answer:
    who = tag.get("who")
    index = state.character_index(who)
    if index is None:
        names = ", ".join(c.name for c in state.characters)
        return refused(tag, reasons.UNKNOWN_CHARACTER,
                       f'Nobody called "{(who or state.player)[:80]}" is in the party ({names}).')
    return index


def resolve_who_or_shared(state: State, tag: Tag) -> int | Answer | None:
    """``who=``'s character, None without ``who=`` (the shared view, ITM-CARRY-5), or a
    refusal for a name nobody in the party has."""
    if not (tag.get("who") or "").strip():
        return None
    return resolve_who(state, tag)


def cursed_bound(game: Game, state: State, stack: Stack) -> bool:
    """ITM-BIND-3: a bound stack of a ``cursed`` item does not let go."""
    if not stack.bound:
        return False
    item = item_of(game, state, stack.item)
    return item is not None and effect_part(item, "binds").get("cursed") is True


def add_thing(game: Game, state: State, tag: Tag, thing: Thing, count: int,
              who: int | None, extra: dict[str, object] | None = None) -> tuple[State, Answer]:
    """Put ``count`` of ``thing`` into ``who``'s bag or the shared view by the carry rule,
    and say where it went and what stayed behind (ITM-CARRY-5..8, OQ-13)."""
    from .carry import distribute, placement_text  # carry reads bags: imported when used

    new_state, placements, left = distribute(game, state, thing, count, who)
    if not placements:
        target = state.characters[who].name if who is not None else "the party"
        reason = reasons.NOTHING_CARRIED
        room = ", ".join(c.name for c in state.characters)
        text = f"Nobody in the party ({room}) can carry {thing.name} ×{count}; it stays behind."
        if game.ruleset.items is None or game.ruleset.items.carry is None:
            reason = reasons.TOO_MANY_STACKS
            text = (f"{target}'s bag cannot take that many stacks (at most "
                    f"{MAX_STACKS_PER_BAG}); nothing was added.")
        elif who is not None:
            text = (f"{target} cannot carry {thing.name} ×{count} without passing the carry "
                    "limit; nothing was added.")
        return state, refused(tag, reason, text)
    record: dict[str, object] = {
        "item": thing.item, "coin": thing.coin, "name": thing.name, "count": count - left,
        "who": ", ".join(new_state.characters[i].name for i, _ in placements),
    }
    if left:
        record["left"] = left
    record.update(extra or {})
    return new_state, accepted(tag, placement_text(new_state, thing.name, placements, left),
                               record)


def item_value(tag: Tag) -> str:
    """What ``item=`` (else ``items=``, issue 28) names, trimmed."""
    return (tag.get("item") or tag.get("items") or "").strip()


def _held_by_name(holders: Iterable[Character], name: str) -> bool:
    """Whether a bag of ``holders`` carries a plain item of this name (any case)."""
    wanted = ("name", name.casefold())
    return any(c.bag[i].plain for c in holders for i in bag_index(c.bag).get(wanted, ()))


def named_things(game: Game, state: State, value: str,
                 holders: Iterable[Character]) -> list[str]:
    """ITM-NAME-1, issue 28: the names an ``item=`` value lists. A comma list names each thing,
    except that commas inside the label of a ruleset item (or an invented item, or a coin) or
    the name of a plain item in a bag of ``holders`` are part of that name: "Lantern, hooded"
    stays one item. Parts are joined into such names longest first, from the left."""
    if "," not in value:
        return [value]
    parts = [part.strip() for part in value.split(",")]
    parts = [part for part in parts if part]
    if len(parts) > MAX_LISTED:
        return parts  # refused by the caller, before any name is looked up
    carried = list(holders)

    def known(name: str) -> bool:
        return find_thing(game, name, state) is not None or _held_by_name(carried, name)

    names: list[str] = []
    at = 0
    while at < len(parts):
        end = next((end for end in range(len(parts), at + 1, -1)
                    if known(", ".join(parts[at:end]))), at + 1)
        names.append(", ".join(parts[at:end]))
        at = end
    return names


def each_thing(state: State, tag: Tag, names: list[str], verb: str,
               one: Callable[[State, str], tuple[State, Answer]]) -> tuple[State, Answer]:
    """Issue 28: one answer for a tag that lists several things, each done by ``one`` in
    turn: all of them, or nothing (the first refusal, with the state unchanged)."""
    if len(names) > MAX_LISTED:
        return state, refused(tag, reasons.TOO_MANY_THINGS,
                              f"One tag lists at most {MAX_LISTED} things; nothing was {verb}.")
    now = state
    answers: list[Answer] = []
    for name in names:
        now, answer = one(now, name)
        if not answer.ok:
            assert answer.reason is not None
            return state, refused(tag, answer.reason,
                                  f"{answer.text} Nothing in the list was {verb}.")
        answers.append(answer)
    return now, accepted(tag, " ".join(answer.text for answer in answers),
                         {"items": [answer.record for answer in answers]})


def add(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="add" item=... count=... who=...]`` (ITM-NAME-*, ITM-FREE-*,
    ITM-CARRY-5..8); an add that describes a new item is a proposal (ITM-PROP-*). A comma list
    in ``item=`` or ``items=`` adds each thing (issue 28)."""
    name = item_value(tag)
    if not name:
        return state, refused(tag, reasons.MISSING_ATTRIBUTE,
                              'Say what to add: [inventory: action="add" item="<name>"].')
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return state, refused(tag, reasons.BAD_COUNT, count + ".")
    who = resolve_who_or_shared(state, tag)
    if isinstance(who, Answer):
        return state, who
    from .invent import is_proposal  # invent builds on bags: imported when used

    if is_proposal(tag):  # a proposal describes one item, whatever its name holds
        return _add_one(game, state, tag, name, count, who, proposal=True)
    holders = state.characters if who is None else (state.characters[who],)
    names = named_things(game, state, name, holders)
    if len(names) == 1:
        return _add_one(game, state, tag, names[0], count, who)
    return each_thing(state, tag, names, "added",
                      lambda now, one: _add_one(game, now, tag, one, count, who))


def _add_one(game: Game, state: State, tag: Tag, name: str, count: int, who: int | None,
             proposal: bool = False) -> tuple[State, Answer]:
    """Add ``count`` of one named thing (ITM-NAME-1..3, ITM-SVC-3, ITM-FREE-4/5), or the
    item the tag describes (ITM-PROP-*)."""
    thing = find_thing(game, name, state)
    if thing is not None and thing.service:  # ITM-SVC-3
        return state, refused(tag, reasons.SERVICE,
                              f"{thing.name} is a service: it is bought, never carried.")
    if proposal:
        from .invent import propose  # invent builds on bags: imported when used

        return propose(game, state, tag, name, count, who, thing)
    if thing is None:
        thing = Thing(name[:200], None, None, DEFAULT_STACK)
        block = game.ruleset.items
        holders = state.characters if who is None else (state.characters[who],)
        held = _held_by_name(holders, name)
        if block is not None and not block.native and not held:  # ITM-FREE-4, ITM-FREE-5
            return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                  f'"{name[:80]}" is not an item of this ruleset.')
    return add_thing(game, state, tag, thing, count, who)


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


def remove(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="remove" item=... count=... who=...]``: all of it, or nothing. A
    comma list in ``item=`` or ``items=`` removes each thing, all or nothing (issue 28)."""
    name = item_value(tag)
    if not name:
        return state, refused(tag, reasons.MISSING_ATTRIBUTE,
                              'Say what to remove: [inventory: action="remove" item="<name>"].')
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return state, refused(tag, reasons.BAD_COUNT, count + ".")
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return state, who
    names = named_things(game, state, name, (state.characters[who],))
    if len(names) == 1:
        return _remove_one(game, state, tag, names[0], count, who)
    return each_thing(state, tag, names, "removed",
                      lambda now, one: _remove_one(game, now, tag, one, count, who))


def _remove_one(game: Game, state: State, tag: Tag, name: str, count: int,
                who: int) -> tuple[State, Answer]:
    """Remove ``count`` of one named thing from ``who``'s bag, or nothing (ITM-BIND-3)."""
    character = state.characters[who]
    thing = find_thing(game, name, state)
    label = thing.name if thing is not None else name[:200]
    total = held_up_to(character.bag, thing, name, count)
    bag, free = take_from_bag(character, thing, name, count,
                              keep=lambda s: cursed_bound(game, state, s))
    if total == 0:
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    if total < count:
        return state, refused(tag, reasons.NOT_ENOUGH,
                              f"{character.name} has only {label} ×{total}, not {count}.")
    if free < count:  # ITM-BIND-3: a bound cursed item is never removed
        return state, refused(tag, reasons.CURSED,
                              f"{label} is cursed and bound to {character.name}: it cannot be "
                              'removed until the curse ends (the GM\'s action="unbind").')
    new_state = state.with_bag(who, bag)
    record = {"item": thing.item if thing else None, "coin": thing.coin if thing else None,
              "name": label, "count": count, "who": character.name}
    return new_state, accepted(tag, f"Removed {label} ×{count} from {character.name}'s bag.",
                               record)
