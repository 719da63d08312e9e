"""What the GM's ``[inventory: action="add"/"remove"]`` does to bags and stacks (ITM-NAME-*,
ITM-FREE-*, ITM-CARRY-5..8, ITM-PROP-*), and the sentences that say where things went."""

from __future__ import annotations

from collections.abc import Callable

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import (
    MAX_LISTED,
    Thing,
    cursed_bound,
    find_thing,
    held_by_name,
    held_up_to,
    named_things,
    take_from_bag,
)
from ..rules.context import TurnContext
from ..rules.game import DEFAULT_STACK, Game
from ..rules.state import State
from .answers import Answer, accepted, refused
from .attrs import COUNT, HELD, RAW, TEXT, WHO, WHO_OR_PARTY
from .declare import Request, action, attr, request
from .examples import Party, count_of, example, plain_item
from .invent import DESCRIPTION, propose
from .invent import instructions as invent_instructions
from .placing import add_thing


def each_thing(state: State, tag: Tag, names: list[str], verb: str,
               one: Callable[[State, str], tuple[State, Answer]]) -> tuple[State, Answer]:
    """One answer for a tag that lists several things (models write lists), each done by ``one`` in
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


@request
class Add(Request):
    """Put things into a bag; an add that describes a new item is a proposal (ITM-PROP-*)."""

    item: str = attr(TEXT, "what to add: a ruleset item, coin or plain item by name; a comma "
                     "list adds each", aliases=("items",),
                     missing='Say what to add: [inventory: action="add" item="<name>"].')
    count: int = attr(COUNT, "how many", default=1)
    who: int | None = attr(WHO_OR_PARTY, "whose bag; without who=, whoever can carry it "
                           "(ITM-CARRY-5)", shown="the party")
    like: str | None = attr(RAW, "a proposal: the item it is like (ITM-PROP-11)")
    category: str | None = attr(RAW, "a proposal: its category")
    rarity: str | None = attr(RAW, "a proposal: its rarity (ITM-PROP-14)")
    tags: str | None = attr(RAW, "a proposal: its tags, comma separated")
    stats: str | None = attr(RAW, 'a proposal: its stats, "name value" pairs')
    slots: str | None = attr(RAW, "a proposal: the slots it takes when equipped")
    binds: str | None = attr(RAW, "a proposal: how it binds")
    worn: str | None = attr(RAW, "a proposal: what it changes while worn")
    carried: str | None = attr(RAW, "a proposal: what it changes while carried")
    summary: str | None = attr(RAW, "a proposal: one line about it")

    def description(self) -> dict[str, str]:
        """OQ-16: the description attributes written (an add with any is a proposal)."""
        return {key: value for key in DESCRIPTION
                if (value := getattr(self, key)) is not None}


def _service(tag: Tag, thing: Thing) -> Answer:
    return refused(tag, reasons.SERVICE, f"{thing.name} is a service: it is bought, never "
                   "carried.")


ADD_RECORD = {"item": "the ruleset item's reference, or null", "coin": "the coin's id, or null",
              "name": "what was added", "count": "how many were put into bags",
              "who": "whose bags took them, comma separated",
              "left": "how many nobody could carry (only when some)",
              "items": "for a list: one record per thing",
              "invented": "a proposal: the new item's name",
              "changes": "a proposal: what the engine changed in the description"}


def _teach_add(game: Game, party: Party) -> list[str]:
    thing = plain_item(game)
    if thing is None:
        lines = []
    else:
        lines = ["- A ruleset item gained, by its name alone: " + example(
            "inventory", action="add", item=thing.label, count=count_of(thing, 2),
            who=party.hero)]
    block = game.ruleset.items
    if block is not None and block.carry is not None:  # ITM-CARRY-5..8
        lines.append("  Without who=, what arrives goes to whoever can carry it; what nobody can "
                     "carry stays behind.")
    if block is not None and not block.native:
        lines.append("- Only items of this ruleset (or more of something already held) can be "
                     "added.")  # ITM-FREE-5
    return lines + invent_instructions(game)  # ITM-PROP-1..3, ITM-WPN-26


def _teach_remove(game: Game, party: Party) -> list[str]:
    thing = plain_item(game)
    if thing is None:
        return []
    return ["- Lost or used up: " + example(
        "inventory", action="remove", item=thing.label, who=party.hero)]


@action("inventory", "add", Add, teach=_teach_add, record=ADD_RECORD,
        reasons=(reasons.SERVICE, reasons.NOT_RULESET_ITEM, reasons.NOTHING_CARRIED,
                 reasons.TOO_MANY_STACKS, reasons.TOO_MANY_THINGS, reasons.NO_PROPOSALS))
def add(game: Game, state: State, request: Add, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="add" item=... count=... who=...]`` (ITM-NAME-*, ITM-FREE-*,
    ITM-CARRY-5..8); an add that describes a new item is a proposal (ITM-PROP-*). A comma list in
    ``item=`` or ``items=`` adds each thing."""
    tag, name, count, who = request.tag, request.item, request.count, request.who
    description = request.description()
    if description:  # a proposal describes one item, whatever its name holds
        thing = find_thing(game, name, state)
        if thing is not None and thing.service:  # ITM-SVC-3
            return state, _service(tag, thing)
        return propose(game, state, tag, name, count, who, thing, description)
    holders = state.characters if who is None else (state.characters[who],)
    names = named_things(game, state, name, holders)
    if len(names) == 1:
        return _add_one(game, state, tag, names[0], count, who)
    return each_thing(state, tag, names, "added",
                      lambda now, one: _add_one(game, now, tag, one, count, who))


def _add_one(game: Game, state: State, tag: Tag, name: str, count: int,
             who: int | None) -> tuple[State, Answer]:
    """Add ``count`` of one named thing (ITM-NAME-1..3, ITM-SVC-3, ITM-FREE-4/5)."""
    thing = find_thing(game, name, state)
    if thing is not None and thing.service:  # ITM-SVC-3
        return state, _service(tag, thing)
    if thing is None:
        thing = Thing(name[:200], None, None, DEFAULT_STACK)
        block = game.ruleset.items
        holders = state.characters if who is None else (state.characters[who],)
        held = held_by_name(holders, name)
        if block is not None and not block.native and not held:  # ITM-FREE-4, ITM-FREE-5
            return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                  f'"{name[:80]}" is not an item of this ruleset.')
    return add_thing(game, state, tag, thing, count, who)


@request
class Remove(Request):
    """Take things out of one bag: all of it, or nothing."""

    item: str = attr(HELD, "what to remove; a comma list removes each, all or nothing",
                     aliases=("items",),
                     missing='Say what to remove: [inventory: action="remove" item="<name>"].')
    count: int = attr(COUNT, "how many", default=1)
    who: int = attr(WHO, "whose bag", shown="the player")


REMOVE_RECORD = {"item": "the ruleset item's reference, or null", "coin": "the coin's id, or null",
                 "name": "what was removed", "count": "how many", "who": "whose bag",
                 "items": "for a list: one record per thing"}


@action("inventory", "remove", Remove, record=REMOVE_RECORD,
        teach=_teach_remove,
        reasons=(reasons.NOT_HELD, reasons.NOT_ENOUGH, reasons.CURSED, reasons.TOO_MANY_THINGS))
def remove(game: Game, state: State, request: Remove, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="remove" item=... count=... who=...]``: all of it, or nothing. A comma
    list in ``item=`` or ``items=`` removes each thing, all or nothing."""
    tag, count, who = request.tag, request.count, request.who
    names = named_things(game, state, request.item, (state.characters[who],))
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
