"""What the GM does to stacks beyond add and remove: set, give, equip, unequip, bind, unbind
(spec/items.md §5.4, §5.7, §5.8, §5.11: ITM-STACK-*, ITM-SLOT-*, ITM-BIND-*, ITM-CMD-*)."""

from __future__ import annotations

from collections.abc import Callable

from tagparse import Tag

from . import reasons
from .answers import Answer, accepted, refused
from .bags import (
    MAX_COUNT,
    Thing,
    add_thing,
    add_to_bag,
    bag_index,
    cursed_bound,
    find_thing,
    held_up_to,
    item_of,
    matching_positions,
    parse_count,
    resolve_who,
    stack_limit,
    stack_matches,
    take_from_bag,
)
from .carry import distribute
from .context import TurnContext
from .game import DEFAULT_STACK, Game
from .ruleset import Item
from .sheet import SheetView, effect_part
from .state import Character, Stack, State

Handler = Callable[[Game, State, Tag, TurnContext], tuple[State, Answer]]


def _named(game: Game, state: State, tag: Tag, verb: str) -> tuple[str, Thing | None] | Answer:
    name = (tag.get("item") or "").strip()
    if not name:
        return refused(tag, reasons.MISSING_ATTRIBUTE,
                       f'Say which item to {verb}: [inventory: action="{verb}" item="<name>"].')
    return name, find_thing(game, name, state)



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


def _pick(game: Game, state: State, character: Character, thing: Thing | None, name: str,
          wanted: Callable[[Stack], bool]) -> int | None:
    """The stack of the named thing the action works on: the last one ``wanted`` accepts."""
    candidates = [i for i in matching_positions(character.bag, thing, name)
                  if wanted(character.bag[i])]
    return candidates[-1] if candidates else None


def _gear_action(verb: str, by_player: bool = False) -> Handler:
    steps = _PLAYER_GEAR if by_player else _GEAR

    def handler(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
        block = game.ruleset.items
        if verb in ("equip", "unequip") and (block is None or not block.slots):  # ITM-CMD-1
            return state, refused(tag, reasons.NO_SLOTS,
                                  f"This ruleset has no slots: nothing can be {verb}ped.")
        if verb in ("bind", "unbind") and (block is None or block.binding is None):  # ITM-CMD-2
            return state, refused(tag, reasons.NO_BINDING,
                                  f"This ruleset has no binding: nothing can be {verb[:-1]}und"
                                  f"{'' if verb == 'bind' else ' or bound'}.")
        named = _named(game, state, tag, verb)
        if isinstance(named, Answer):
            return state, named
        name, thing = named
        who = resolve_who(state, tag)
        if isinstance(who, Answer):
            return state, who
        character = state.characters[who]
        label = thing.name if thing is not None else name[:200]
        held = [character.bag[i] for i in matching_positions(character.bag, thing, name)]
        if not held:
            return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
        item = item_of(game, state, held[0].item)
        return steps[verb](game, state, tag, who, character, thing, name, label, item)

    handler.__name__ = verb
    handler.__doc__ = f'``[inventory: action="{verb}" item=... who=...]`` (ITM-CMD-1/2).'
    return handler


GearStep = Callable[[Game, State, Tag, int, Character, Thing | None, str, str, Item | None],
                    tuple[State, Answer]]


def _equip(game: Game, state: State, tag: Tag, who: int, character: Character,
           thing: Thing | None, name: str, label: str, item: Item | None) -> tuple[State, Answer]:
    if item is None or not item.slots:
        return state, refused(tag, reasons.NOT_EQUIPPABLE,
                              f"{label} takes no slots, so it cannot be equipped.")
    index = _pick(game, state, character, thing, name, lambda s: not s.equipped)
    if index is None:
        return state, refused(tag, reasons.ALREADY, f"{character.name} already has every "
                              f"{label} equipped.")
    used = slots_in_use(game, state, character)
    slots = {s.id: s for s in game.ruleset.items.slots} if game.ruleset.items else {}
    short = [slots[s].label for s, n in item.slots.items()
             if s in slots and used.get(s, 0) + n > slots[s].count]
    if short:  # ITM-SLOT-1
        return state, refused(tag, reasons.SLOTS_FULL,
                              f"{character.name} has no free {', '.join(short)} slot for "
                              f"{label}; unequip something first.")
    bag = split_one(character.bag, index, equipped=True)  # ITM-SLOT-2
    return state.with_bag(who, bag), accepted(
        tag, f"{character.name} equips {label}.", {"who": character.name, "item": label})


def _unequip(game: Game, state: State, tag: Tag, who: int, character: Character,
             thing: Thing | None, name: str, label: str,
             item: Item | None) -> tuple[State, Answer]:
    index = _pick(game, state, character, thing, name,
                  lambda s: s.equipped and not cursed_bound(game, state, s))
    if index is None:
        if any(s.equipped for s in character.bag if stack_matches(s, thing, name)):  # ITM-BIND-3
            return state, refused(tag, reasons.CURSED,
                                  f"{label} is cursed and bound to {character.name}: it cannot "
                                  'be unequipped until the curse ends (action="unbind").')
        return state, refused(tag, reasons.ALREADY, f"{character.name} has no {label} equipped.")
    stacks = list(character.bag)
    stacks[index] = stacks[index].model_copy(update={"equipped": False})
    bag = settle(game, state, tuple(stacks), index)
    return state.with_bag(who, bag), accepted(
        tag, f"{character.name} unequips {label}.", {"who": character.name, "item": label})


def _bind(game: Game, state: State, tag: Tag, who: int, character: Character,
          thing: Thing | None, name: str, label: str, item: Item | None) -> tuple[State, Answer]:
    if item is None or item.binds is None:
        return state, refused(tag, reasons.NOT_BINDABLE, f"{label} does not bind.")
    index = _pick(game, state, character, thing, name, lambda s: not s.bound)
    if index is None:
        return state, refused(tag, reasons.ALREADY, f"{character.name} already has every "
                              f"{label} bound.")
    most = binding_max(game, character)
    binding = game.ruleset.items.binding if game.ruleset.items else None
    word = binding.label if binding is not None else "binding"
    if bound_count(character) + 1 > most:  # ITM-BIND-1
        return state, refused(tag, reasons.BINDING_FULL,
                              f"{character.name} already has {bound_count(character)} of "
                              f"{most} items bound ({word}); unbind one first.")
    bag = split_one(character.bag, index, bound=True)
    text = f"{character.name} binds {label} ({word})."
    if effect_part(item, "binds").get("cursed") is True:
        text += " It is cursed: it will not let go."
    return state.with_bag(who, bag), accepted(tag, text, {"who": character.name,
                                                            "item": label})


def _unbind(game: Game, state: State, tag: Tag, who: int, character: Character,
            thing: Thing | None, name: str, label: str,
            item: Item | None, ends_curse: bool = True) -> tuple[State, Answer]:
    index = _pick(game, state, character, thing, name,
                  lambda s: s.bound and (ends_curse or not cursed_bound(game, state, s)))
    if index is None:
        if any(s.bound for s in character.bag if stack_matches(s, thing, name)):  # ITM-BIND-3/4
            return state, refused(tag, reasons.CURSED,
                                  f"{label} is cursed and bound to {character.name}: only the "
                                  "GM can end the curse.")
        return state, refused(tag, reasons.ALREADY, f"{character.name} has no {label} bound.")
    cursed = cursed_bound(game, state, character.bag[index])
    stacks = list(character.bag)
    stacks[index] = stacks[index].model_copy(update={"bound": False})
    bag = settle(game, state, tuple(stacks), index)
    # ITM-BIND-4, OQ-11: the GM's unbind is how a curse ends.
    text = f"{character.name} unbinds {label}."
    if cursed:
        text = f"The curse on {label} ends; {character.name} unbinds it."
    return state.with_bag(who, bag), accepted(tag, text, {"who": character.name,
                                                            "item": label, "curse_ended": cursed})


def _player_unbind(game: Game, state: State, tag: Tag, who: int, character: Character,
                   thing: Thing | None, name: str, label: str,
                   item: Item | None) -> tuple[State, Answer]:
    """ITM-BIND-3/4, OQ-11: the player's unbind never ends a curse."""
    return _unbind(game, state, tag, who, character, thing, name, label, item, ends_curse=False)


_GEAR: dict[str, GearStep] = {"equip": _equip, "unequip": _unequip, "bind": _bind,
                              "unbind": _unbind}
_PLAYER_GEAR: dict[str, GearStep] = {**_GEAR, "unbind": _player_unbind}

equip = _gear_action("equip")
unequip = _gear_action("unequip")
bind = _gear_action("bind")
unbind = _gear_action("unbind")
player_unbind = _gear_action("unbind", by_player=True)


def parse_total(text: str | None) -> int | str:
    """``count=`` of ``set``: a whole number from 0 to :data:`MAX_COUNT`, or why not."""
    if text is not None and text.strip() == "0":
        return 0
    if text is None or not text.strip():
        return f'set needs count="<n>" (0 to {MAX_COUNT})'
    return parse_count(text)


def give(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="give" item=... count=... who=<giver> to=<taker>]``: out of one bag
    into another, up to what the taker can carry (ITM-CARRY-4, OQ-13); the rest stays with
    the giver. A bound cursed item is never given (ITM-BIND-3)."""
    named = _named(game, state, tag, "give")
    if isinstance(named, Answer):
        return state, named
    name, thing = named
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return state, refused(tag, reasons.BAD_COUNT, count + ".")
    giver = resolve_who(state, tag)
    if isinstance(giver, Answer):
        return state, giver
    to_name = (tag.get("to") or "").strip()
    taker = state.character_index(to_name) if to_name else None
    if taker is None:
        names = ", ".join(c.name for c in state.characters)
        return state, refused(tag, reasons.UNKNOWN_CHARACTER,
                              f'Say who takes it with to="<name>" ({names}).'
                              if not to_name else
                              f'Nobody called "{to_name[:80]}" is in the party ({names}).')
    character = state.characters[giver]
    label = thing.name if thing is not None else name[:200]
    if taker == giver:
        return state, refused(tag, reasons.ALREADY, f"{label} is already {character.name}'s.")
    total = held_up_to(character.bag, thing, name, count)
    if total == 0:
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    if total < count:
        return state, refused(tag, reasons.NOT_ENOUGH,
                              f"{character.name} has only {label} ×{total}, not {count}.")

    def keep(stack: Stack) -> bool:
        return cursed_bound(game, state, stack)

    taken, free = take_from_bag(character, thing, name, count, keep=keep)
    if free < count:
        return state, refused(tag, reasons.CURSED,
                              f"{label} is cursed and bound to {character.name}: it cannot be "
                              'given away until the curse ends (action="unbind").')
    # A plain item moves under the name of its first stack.
    moving = thing if thing is not None else Thing(
        character.bag[matching_positions(character.bag, thing, name)[0]].name, None, None,
        DEFAULT_STACK)
    placed_state, _, left = distribute(game, state, moving, count, taker)
    moved = count - left
    receiver = state.characters[taker].name
    if moved == 0:
        return state, refused(tag, reasons.NOTHING_CARRIED,
                              f"{receiver} cannot carry {label} ×{count}; nothing was given.")
    giver_now = placed_state.characters[giver]
    if moved < count or giver_now is not character:  # else the take above is this take
        taken, _ = take_from_bag(giver_now, thing, name, moved, keep=keep)
    new_state = placed_state.with_bag(giver, taken)
    text = f"{character.name} gives {label} ×{moved} to {receiver}."
    if left:
        text += f" {receiver} cannot carry more; {label} ×{left} stays with {character.name}."
    record: dict[str, object] = {"who": character.name, "to": receiver, "item": label,
                                 "count": moved}
    if left:
        record["left"] = left
    return new_state, accepted(tag, text, record)


def set_count(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="set" item=... count=<n> who=...]``: the bag holds exactly ``n``
    of the thing afterwards — an add (carry rule, stack limits) or a remove of the difference.
    A plain item the bag does not hold yet needs ``native`` (ITM-FREE-4/5)."""
    block = game.ruleset.items
    return set_to(game, state, tag, plain=block is None or block.native)


def set_to(game: Game, state: State, tag: Tag, plain: bool) -> tuple[State, Answer]:
    """Set a bag's count of a thing (ITM-STACK-1); ``plain``: whether a name that is no ruleset
    item and not held yet may become a plain item (the GM: ``native``, ITM-FREE-4/5; the
    player: ``freeform``, ITM-FREE-1..3/7)."""
    named = _named(game, state, tag, "set")
    if isinstance(named, Answer):
        return state, named
    name, thing = named
    total_wanted = parse_total(tag.get("count"))
    if isinstance(total_wanted, str):
        return state, refused(tag, reasons.BAD_COUNT, total_wanted + ".")
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return state, who
    character = state.characters[who]
    found = matching_positions(character.bag, thing, name)
    held = sum(character.bag[i].count for i in found)
    label = thing.name if thing is not None else name[:200]
    if thing is not None and thing.service:  # ITM-SVC-3
        return state, refused(tag, reasons.SERVICE,
                              f"{thing.name} is a service: it is bought, never carried.")
    if total_wanted == held:
        return state, accepted(tag, f"{character.name} already has {label} ×{held}.",
                               {"who": character.name, "item": label, "count": held})
    if total_wanted > held:
        if thing is None:
            if not plain and held == 0:  # ITM-FREE-2/4/5
                return state, refused(tag, reasons.NOT_RULESET_ITEM,
                                      f'"{name[:80]}" is not an item of this ruleset.')
            sample = character.bag[found[0]] if found else None
            thing = Thing(sample.name if sample else name[:200], None, None, DEFAULT_STACK)
        return add_thing(game, state, tag, thing, total_wanted - held, who,
                         {"set": total_wanted})
    bag, free = take_from_bag(character, thing, name, held - total_wanted,
                              keep=lambda s: cursed_bound(game, state, s))
    if free < held - total_wanted:  # ITM-BIND-3
        return state, refused(tag, reasons.CURSED,
                              f"{label} is cursed and bound to {character.name}: it cannot be "
                              'removed until the curse ends (action="unbind").')
    return state.with_bag(who, bag), accepted(
        tag, f"{character.name} now has {label} ×{total_wanted}.",
        {"who": character.name, "item": label, "count": total_wanted})
