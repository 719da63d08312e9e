"""The host's operations on items (docs/rules/items.md#06-host-operations, the source's inventory
controls); what the host shows is in :mod:`engine.text.host`.

State-changing operations are transcript events (``{"role": "event", "name": "Ada", "event":
{"action": "add", "item": "Rope"}}``), registered in :mod:`engine.actions.events`: ``add``,
``add-coins``, ``remove``, ``split``, ``merge``, ``set``, ``give``, ``toggle``, ``equip``,
``unequip``, ``bind``, ``unbind``. Each is what the player does: ``freeform`` (not ``native``)
decides what a typed name becomes (ITM-FREE-7), and the player never ends a curse (ITM-BIND-4).
"""

from __future__ import annotations

from typing import Any

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import Thing, find_thing, item_of, stack_limit, stack_matches
from ..rules.context import TurnContext
from ..rules.game import DEFAULT_STACK, MAX_STACKS_PER_BAG, CoinInfo, Game
from ..rules.gear import settle, split_one
from ..rules.layers import hidden_items, removed_coins
from ..rules.money import coin_named, coin_thing
from ..rules.state import Stack, State
from .answers import Answer, accepted, refused
from .attrs import COUNT, JSON, RAW, WHO, read_character, read_count
from .bags import ADD_RECORD, remove
from .declare import Read, Reader, Reading, Refusal, Request, action, as_event, attr, request
from .gear import Set, bind, equip, give, set_count, set_to, unbind, unequip, worn_handler
from .placing import add_thing

# --- events ---------------------------------------------------------------------------------


def _receiver(raw: str | None, game: Game, state: State) -> Reading[int | None]:
    """``to``: the character whose bag it goes into; without it, the shared view
    (ITM-CARRY-5, ITM-CARRY-8)."""
    name = (raw or "").strip()
    return read_character(state, name) if name else None


RECEIVER = Reader("character", _receiver, {"type": "string"}, (reasons.UNKNOWN_CHARACTER,))
"""``to``: whose bag; the shared view when absent."""


def _payload_text(raw: Any, game: Game, state: State) -> str:
    return " ".join(str(raw or "").split())


PAYLOAD_TEXT = Reader("text", _payload_text, {"type": "string"}, json=True)
"""A name in a host event's payload, its spaces collapsed."""


@request
class PlayerAdd(Request):
    """The player types an item name into the bag (ITM-NAME-1..3, ITM-FREE-1..3/7)."""

    item: str = attr(PAYLOAD_TEXT, "a ruleset item by label, an invented item by name, else "
                     "what freeform says",
                     missing='Say what to add: {"action": "add", "item": "<name>"}.')
    count: int = attr(COUNT, "how many", default=1)
    to: int | None = attr(RECEIVER, "whose bag", shown="the shared view")


@action("event", "add", PlayerAdd, record=ADD_RECORD,
        reasons=(reasons.SERVICE, reasons.NOT_RULESET_ITEM, reasons.NOTHING_CARRIED,
                 reasons.TOO_MANY_STACKS))
def player_add(game: Game, state: State, request: PlayerAdd,
               ctx: TurnContext) -> tuple[State, Answer]:
    """The player types an item name (``{"action": "add", "item": "Rope", "count": 2, "to":
    "Bram"}``): a ruleset item by label or an invented item by name (ITM-NAME-1..3), else what
    ``freeform`` says — a plain item (``plain``, ITM-FREE-3) or nothing (``refuse``,
    ``not-ruleset-item``, ITM-FREE-1/2, OQ-9); ``native`` does not apply (ITM-FREE-7). A service
    is refused (ITM-SVC-3). Without ``to`` it goes to the shared view (ITM-CARRY-5..7)."""
    tag, name, count, target = request.tag, request.item, request.count, request.to
    thing = find_thing(game, name, state)
    if thing is not None and thing.item is not None and thing.item in hidden_items(game, state):
        thing = None  # ITM-INV-5: an entry this game's layers hide is no item of this game
    if thing is not None and thing.service:  # ITM-SVC-3
        return state, refused(tag, reasons.SERVICE,
                              f"{thing.name} is a service: it is bought, never carried.")
    if thing is None:
        block = game.ruleset.items
        if block is not None and block.freeform == "refuse":  # ITM-FREE-2, OQ-9
            return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                  f'"{name[:80]}" is not an item of this ruleset; pick one from '
                                  "the ruleset.")
        thing = Thing(name[:200], None, None, DEFAULT_STACK)  # ITM-FREE-3
    return add_thing(game, state, tag, thing, count, target)


def _coin(raw: Any, game: Game, state: State) -> CoinInfo | Refusal:
    name = str(raw or "").strip()
    info = coin_named(game, name, state) if name else None
    if info is not None:
        return info
    if not game.coins:
        return Refusal(reasons.NO_CURRENCIES, "This ruleset has no coins.")
    removed = removed_coins(game, state)
    known = ", ".join(coin_id for coin_id in game.coins if coin_id not in removed)
    return Refusal(reasons.UNKNOWN_COIN,
                   f'There is no coin "{name[:40]}" in this game (coins: {known}).')


COIN = Reader("coin", _coin, {"type": "string"}, (reasons.NO_CURRENCIES, reasons.UNKNOWN_COIN),
              json=True)
"""``coin``: a coin of the game by id, label or ``one``."""


@request
class AddCoins(Request):
    """The picker's "Coins" list: coins into a bag or the shared view (ITM-MONEY-2/4)."""

    count: int = attr(COUNT, "how many", default=1)
    coin: CoinInfo = attr(COIN, "the coin, by id, label or one")
    to: int | None = attr(RECEIVER, "whose bag", shown="the shared view")


@action("event", "add-coins", AddCoins, record=ADD_RECORD,
        reasons=(reasons.NOTHING_CARRIED, reasons.TOO_MANY_STACKS))
def add_coins(game: Game, state: State, request: AddCoins,
              ctx: TurnContext) -> tuple[State, Answer]:
    """The picker's "Coins" list (``{"action": "add-coins", "coin": "mark", "count": 5}``):
    coins of the game by id, label or ``one`` into a bag or the shared view by the carry rule
    (ITM-MONEY-2/4)."""
    return add_thing(game, state, request.tag, coin_thing(request.coin), request.count,
                     request.to)


def _stack_at(state: State, tag: Tag, who: int, raw: Any) -> int | Answer:
    """``stack``: a position in the bag (0 first)."""
    bag = state.characters[who].bag
    if isinstance(raw, bool) or not isinstance(raw, int) or not 0 <= raw < len(bag):
        return refused(tag, reasons.UNKNOWN_STACK,
                       f"{state.characters[who].name}'s bag has no stack {str(raw)[:20]} "
                       f"(stacks 0 to {len(bag) - 1}).")
    return raw


@request
class OneStack(Request):
    """A stack of one bag, by position or by the name of what it holds."""

    who: int = attr(WHO, "whose bag", shown="the player")
    stack: Any = attr(JSON, "the stack's position in the bag, 0 first")
    item: str = attr(PAYLOAD_TEXT, "else: the last stack of this item, by name")


@request
class Split(OneStack):
    """``count`` of a stack into a new stack right after it (ITM-STACK-2)."""

    count: str | None = attr(RAW, "how many go into the new stack")


@request
class Toggle(OneStack):
    """Flip an item's switch outside a fight, at no cost (ITM-TOG-3..5, OQ-7)."""

    on: Any = attr(JSON, "true or false; without it, the switch flips", shown="flip")


@request
class Merge(Request):
    """A stack into another of the same thing, up to the stack limit (ITM-STACK-1)."""

    who: int = attr(WHO, "whose bag", shown="the player")
    stack: Any = attr(JSON, "the position of the stack that moves")
    into: Any = attr(JSON, "the position of the stack it joins")


def _chosen(game: Game, state: State, request: OneStack, who: int,
            wanted: Any = None) -> int | Answer:
    """The stack an event works on: ``stack`` (a position), else the last stack of ``item``
    (by name, ITM-NAME-1..3) that ``wanted`` accepts."""
    tag = request.tag
    if request.stack is not None:
        return _stack_at(state, tag, who, request.stack)
    name = request.item.strip()
    character = state.characters[who]
    if not name:
        return refused(tag, reasons.MISSING_ATTRIBUTE,
                       'Say which stack: "stack": <position> or "item": "<name>".')
    thing = find_thing(game, name, state)
    found = [i for i, s in enumerate(character.bag) if stack_matches(s, thing, name)]
    if not found:
        label = thing.name if thing is not None else name[:200]
        return refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    fitting = [i for i in found if wanted is None or wanted(character.bag[i])]
    return fitting[-1] if fitting else found[-1]


def _limit(game: Game, state: State, stack: Stack) -> int:
    item = item_of(game, state, stack.item)
    return stack_limit(item) if item is not None else DEFAULT_STACK


@action("event", "split", Split,
        reasons=(reasons.UNKNOWN_STACK, reasons.NOT_HELD, reasons.MISSING_ATTRIBUTE,
                 reasons.BAD_COUNT, reasons.TOO_MANY_STACKS),
        record={"who": "whose bag", "item": "the stack's name", "count": "how many moved",
                "stack": "the new stack's position"})
def split(game: Game, state: State, request: Split, ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "split", "stack": 0, "count": 5}`` (or ``"item": "Arrow"``): ``count`` of
    a stack into a new stack of their own, right after it (ITM-STACK-2)."""
    tag, who = request.tag, request.who
    index = _chosen(game, state, request, who, lambda s: s.count > 1)
    if isinstance(index, Answer):
        return state, index
    count = read_count(request.count)
    if isinstance(count, Refusal):
        return state, refused(tag, count.reason, count.text)
    notes = (count.note("count", request.count),) if isinstance(count, Read) else ()
    count = count.value if isinstance(count, Read) else count
    character = state.characters[who]
    stack = character.bag[index]
    if count >= stack.count:
        return state, refused(request.tag, reasons.BAD_COUNT,
                              f"{stack.name} ×{stack.count} splits into two stacks only with a "
                              f"count from 1 to {stack.count - 1}.")
    if len(character.bag) >= MAX_STACKS_PER_BAG:  # OQ-4
        return state, refused(request.tag, reasons.TOO_MANY_STACKS,
                              f"{character.name}'s bag cannot take another stack (at most "
                              f"{MAX_STACKS_PER_BAG}).")
    bag = (*character.bag[:index], stack.model_copy(update={"count": stack.count - count}),
           stack.model_copy(update={"count": count}), *character.bag[index + 1:])
    return state.with_bag(who, bag), accepted(
        request.tag, f"{character.name} splits {stack.name} ×{count} off into a stack of its own.",
        {"who": character.name, "item": stack.name, "count": count, "stack": index + 1}, notes)


@action("event", "merge", Merge,
        reasons=(reasons.UNKNOWN_STACK, reasons.ALREADY, reasons.NOT_SAME_KIND,
                 reasons.NOT_LOOSE, reasons.STACK_FULL),
        record={"who": "whose bag", "item": "the stack's name", "count": "how many moved"})
def merge(game: Game, state: State, request: Merge, ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "merge", "stack": 3, "into": 0}``: a stack into another of the same thing,
    up to the stack limit; the rest stays (ITM-STACK-1). Equipped, bound, switched-on and
    charged stacks never merge (ITM-STACK-2/3)."""
    who = request.who
    source = _stack_at(state, request.tag, who, request.stack)
    if isinstance(source, Answer):
        return state, source
    into = _stack_at(state, request.tag, who, request.into)
    if isinstance(into, Answer):
        return state, into
    character = state.characters[who]
    moving, staying = character.bag[source], character.bag[into]
    if source == into:
        return state, refused(request.tag, reasons.ALREADY, f"{moving.name} is that stack.")
    if not moving.same_kind(staying):
        return state, refused(request.tag, reasons.NOT_SAME_KIND,
                              f"{moving.name} and {staying.name} are not the same thing.")
    if not (moving.loose and staying.loose):
        return state, refused(request.tag, reasons.NOT_LOOSE,
                              f"{moving.name} is equipped, bound, switched on or charged: it "
                              "stays a stack of its own.")
    room = _limit(game, state, staying) - staying.count
    if room <= 0:
        return state, refused(request.tag, reasons.STACK_FULL,
                              f"{staying.name} ×{staying.count} is a full stack.")
    moved = min(room, moving.count)
    stacks = list(character.bag)
    stacks[into] = staying.model_copy(update={"count": staying.count + moved})
    stacks[source] = moving.model_copy(update={"count": max(1, moving.count - moved)})
    if moved == moving.count:
        del stacks[source]
    text = f"{character.name} merges {moving.name} ×{moved} into one stack."
    if moved < moving.count:
        text += f" The stack is full; {moving.name} ×{moving.count - moved} stays apart."
    return state.with_bag(who, tuple(stacks)), accepted(
        request.tag, text, {"who": character.name, "item": staying.name, "count": moved})


@action("event", "toggle", Toggle,
        reasons=(reasons.MALFORMED, reasons.UNKNOWN_STACK, reasons.NOT_HELD,
                 reasons.MISSING_ATTRIBUTE, reasons.NO_TOGGLE, reasons.ALREADY,
                 reasons.TOO_MANY_STACKS),
        record={"who": "whose bag", "item": "the stack's name", "on": "whether it is on now"})
def toggle(game: Game, state: State, request: Toggle, ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "toggle", "item": "Grave lamp", "on": true}`` (or ``"stack"``): flip the
    item's switch outside a fight, at no cost (ITM-TOG-3, OQ-7). The position stays on the
    stack (ITM-TOG-4); an item switched on is one stack of its own (ITM-TOG-5, ITM-STACK-2),
    and one switched off joins its kind again."""
    who, on = request.who, request.on
    if on is not None and not isinstance(on, bool):
        return state, refused(request.tag, reasons.MALFORMED, '"on" is true or false.')
    index = _chosen(game, state, request, who,
                    None if on is None else (lambda s: s.toggled != on))
    if isinstance(index, Answer):
        return state, index
    character = state.characters[who]
    stack = character.bag[index]
    item = item_of(game, state, stack.item)
    if item is None or item.toggle is None:
        return state, refused(request.tag, reasons.NO_TOGGLE, f"{stack.name} has no switch.")
    turn_on = not stack.toggled if on is None else on
    word = f"{item.toggle.label} {'on' if turn_on else 'off'}"
    if stack.toggled == turn_on:
        return state, refused(request.tag, reasons.ALREADY, f"{stack.name} is already {word}.")
    if turn_on:
        if stack.count > 1 and len(character.bag) >= MAX_STACKS_PER_BAG:  # OQ-4
            return state, refused(request.tag, reasons.TOO_MANY_STACKS,
                                  f"{character.name}'s bag cannot take another stack.")
        bag = split_one(character.bag, index, toggled=True)
    else:
        stacks = list(character.bag)
        stacks[index] = stack.model_copy(update={"toggled": False})
        bag = settle(game, state, tuple(stacks), index)
    return state.with_bag(who, bag), accepted(
        request.tag, f"{character.name} turns {stack.name} {'on' if turn_on else 'off'}: "
                   f"{word}.", {"who": character.name, "item": stack.name, "on": turn_on})


def _player_set(game: Game, state: State, request: Set,
                ctx: TurnContext) -> tuple[State, Answer]:
    """``{"action": "set", "item": "Arrow", "count": 12}``: the player sets a count
    (ITM-STACK-1); a name that is no ruleset item follows ``freeform`` (ITM-FREE-7)."""
    block = game.ruleset.items
    return set_to(game, state, request, plain=block is None or block.freeform == "plain")


# The player's own buttons for what the GM's tags also do: the same attributes, and a cursed
# bound item is never removed, given, unequipped or (by the player) unbound (ITM-BIND-3/4,
# OQ-11).
player_set = as_event(set_count, _player_set)
player_remove = as_event(remove)
player_give = as_event(give)
player_equip = as_event(equip)
player_unequip = as_event(unequip)
player_bind = as_event(bind)
player_unbind = as_event(unbind, worn_handler("unbind", by_player=True))
