"""What the GM does to stacks beyond add and remove: set, give, equip, unequip, bind, unbind
(docs/rules/items.md#5-what-reads-items: ITM-STACK-*, ITM-SLOT-*, ITM-BIND-*, ITM-CMD-*)."""

from __future__ import annotations

from collections.abc import Callable

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import (
    Thing,
    cursed_bound,
    find_thing,
    held_up_to,
    item_of,
    matching_positions,
    stack_matches,
    take_from_bag,
)
from ..rules.carry import distribute
from ..rules.context import TurnContext
from ..rules.game import DEFAULT_STACK, Game
from ..rules.gear import binding_max, bound_count, pick, settle, slots_in_use, split_one
from ..rules.items import effect_part
from ..rules.state import Character, Stack, State
from ..ruleset import Item
from .answers import Answer, accepted, refused
from .attrs import COUNT, HELD, TOTAL, WHO, read_character
from .declare import Needs, Reader, Reading, Refusal, Request, action, attr, request
from .examples import Party, example, item_where, plain_item
from .placing import add_thing


def _item(verb: str) -> str:
    return attr(HELD, f"the item to {verb}, by name",
                missing=f'Say which item to {verb}: [inventory: action="{verb}" item="<name>"].')


def _who() -> int:
    return attr(WHO, "whose item", shown="the player")


@request
class Equip(Request):
    """Equip an item: it takes its slots (ITM-SLOT-1/2)."""

    item: str = _item("equip")
    who: int = _who()


@request
class Unequip(Request):
    """Unequip an item; a bound cursed item stays on (ITM-BIND-3)."""

    item: str = _item("unequip")
    who: int = _who()


@request
class Bind(Request):
    """Bind an item to its bearer (ITM-BIND-1/2)."""

    item: str = _item("bind")
    who: int = _who()


@request
class Unbind(Request):
    """Unbind an item; the GM's unbind also ends a curse (ITM-BIND-4, OQ-11)."""

    item: str = _item("unbind")
    who: int = _who()


WornRequest = Equip | Unequip | Bind | Unbind
WornHandler = Callable[[Game, State, WornRequest, TurnContext], tuple[State, Answer]]


def _has_slots(game: Game) -> bool:
    return game.ruleset.items is not None and bool(game.ruleset.items.slots)


def _has_binding(game: Game) -> bool:
    return game.ruleset.items is not None and game.ruleset.items.binding is not None


def _slots_needed(verb: str) -> Needs:  # ITM-CMD-1
    return Needs(_has_slots, reasons.NO_SLOTS,
                 f"This ruleset has no slots: nothing can be {verb}ped.")


def _binding_needed(verb: str) -> Needs:  # ITM-CMD-2
    return Needs(_has_binding, reasons.NO_BINDING,
                 f"This ruleset has no binding: nothing can be {verb[:-1]}und"
                 f"{'' if verb == 'bind' else ' or bound'}.")


def worn_handler(verb: str, by_player: bool = False) -> WornHandler:
    """The handler of ``verb`` (equip, unequip, bind, unbind) for the GM's tag, or for the
    player's event of the same name (whose unbind never ends a curse)."""
    steps = _PLAYER_GEAR if by_player else _GEAR

    def handler(game: Game, state: State, request: WornRequest,
                ctx: TurnContext) -> tuple[State, Answer]:
        tag, name, who = request.tag, request.item, request.who
        thing = find_thing(game, name, state)
        character = state.characters[who]
        label = thing.name if thing is not None else name[:200]
        held = [character.bag[i] for i in matching_positions(character.bag, thing, name)]
        if not held:
            return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
        item = item_of(game, state, held[0].item)
        return steps[verb](game, state, tag, who, character, thing, name, label, item)

    handler.__doc__ = f'``[inventory: action="{verb}" item=... who=...]`` (ITM-CMD-1/2).'
    return handler


GearStep = Callable[[Game, State, Tag, int, Character, Thing | None, str, str, Item | None],
                    tuple[State, Answer]]


def _equip(game: Game, state: State, tag: Tag, who: int, character: Character,
           thing: Thing | None, name: str, label: str, item: Item | None) -> tuple[State, Answer]:
    if item is None or not item.slots:
        return state, refused(tag, reasons.NOT_EQUIPPABLE,
                              f"{label} takes no slots, so it cannot be equipped.")
    index = pick(game, state, character, thing, name, lambda s: not s.equipped)
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
    index = pick(game, state, character, thing, name,
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
    index = pick(game, state, character, thing, name, lambda s: not s.bound)
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
    index = pick(game, state, character, thing, name,
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
                                                            "item": label, "curseEnded": cursed})


def _player_unbind(game: Game, state: State, tag: Tag, who: int, character: Character,
                   thing: Thing | None, name: str, label: str,
                   item: Item | None) -> tuple[State, Answer]:
    """ITM-BIND-3/4, OQ-11: the player's unbind never ends a curse."""
    return _unbind(game, state, tag, who, character, thing, name, label, item, ends_curse=False)


_GEAR: dict[str, GearStep] = {"equip": _equip, "unequip": _unequip, "bind": _bind,
                              "unbind": _unbind}
_PLAYER_GEAR: dict[str, GearStep] = {**_GEAR, "unbind": _player_unbind}

WORN_RECORD = {"who": "whose item", "item": "the item's name"}
_WORN_REASONS = (reasons.NOT_HELD, reasons.ALREADY)


def _teach_slots(game: Game, party: Party) -> list[str]:  # ITM-CMD-1, ITM-CMD-3
    worn = item_where(game, lambda c: bool(c.item.slots) and c.item.binds is None)
    if worn is None:  # only invented items take slots
        return ['- Gear put on or taken up: action="equip" with item= and who=; '
                'action="unequip" takes it off.']
    return ["- Gear put on or taken up: " + example(
        "inventory", action="equip", item=worn.label, who=party.hero)
        + '; action="unequip" takes it off.']


def _teach_binding(game: Game, party: Party) -> list[str]:  # ITM-CMD-2, ITM-CMD-3
    binding = game.ruleset.items.binding if game.ruleset.items else None
    label = binding.label if binding is not None else "binding"
    bound = item_where(game, lambda c: c.item.binds is not None)
    if bound is None:  # only invented items bind
        return [f'- {label}: action="bind" with item= and who=; action="unbind" ends it, and '
                "a curse with it."]
    return [f"- {label}: " + example(
        "inventory", action="bind", item=bound.label, who=party.hero)
        + '; action="unbind" ends it, and a curse with it.']


equip = action("inventory", "equip", Equip, needs=_slots_needed("equip"), teach=_teach_slots,
               record=WORN_RECORD,
               reasons=(*_WORN_REASONS, reasons.NOT_EQUIPPABLE, reasons.SLOTS_FULL),
               )(worn_handler("equip"))
unequip = action("inventory", "unequip", Unequip, needs=_slots_needed("unequip"),
                 record=WORN_RECORD, reasons=(*_WORN_REASONS, reasons.CURSED),
                 )(worn_handler("unequip"))
bind = action("inventory", "bind", Bind, needs=_binding_needed("bind"), teach=_teach_binding,
              record=WORN_RECORD,
              reasons=(*_WORN_REASONS, reasons.NOT_BINDABLE, reasons.BINDING_FULL),
              )(worn_handler("bind"))
unbind = action("inventory", "unbind", Unbind, needs=_binding_needed("unbind"),
                record={**WORN_RECORD, "curseEnded": "whether a curse ended (ITM-BIND-4)"},
                reasons=(*_WORN_REASONS, reasons.CURSED))(worn_handler("unbind"))


def _taker(raw: str | None, game: Game, state: State) -> Reading[int]:
    name = (raw or "").strip()
    if name:
        return read_character(state, name)
    names = ", ".join(c.name for c in state.characters)
    return Refusal(reasons.UNKNOWN_CHARACTER, f'Say who takes it with to="<name>" ({names}).')


TAKER = Reader("character", _taker, {"type": "string"}, (reasons.UNKNOWN_CHARACTER,))
"""``to=``: the character who takes it, required."""


@request
class Give(Request):
    """Out of one bag into another, up to what the taker can carry (ITM-CARRY-4, OQ-13)."""

    item: str = _item("give")
    count: int = attr(COUNT, "how many", default=1)
    who: int = attr(WHO, "who gives", shown="the player")
    to: int = attr(TAKER, "who takes it")


@request
class Set(Request):
    """The bag holds exactly ``count`` of the thing afterwards (ITM-STACK-1)."""

    item: str = _item("set")
    count: int = attr(TOTAL, "how many the bag holds afterwards, 0 or more")
    who: int = attr(WHO, "whose bag", shown="the player")




def _teach_give(game: Game, party: Party) -> list[str]:
    thing = plain_item(game)
    if thing is None or party.other is None:  # a party of one has nobody to give to
        return []
    return ["- Handed to a companion: " + example(
        "inventory", action="give", item=thing.label, who=party.hero, to=party.other)]


@action("inventory", "give", Give, teach=_teach_give,
        reasons=(reasons.ALREADY, reasons.NOT_HELD, reasons.NOT_ENOUGH, reasons.CURSED,
                 reasons.NOTHING_CARRIED),
        record={"who": "who gave", "to": "who took it", "item": "the item's name",
                "count": "how many moved", "left": "how many stayed (only when some)"})
def give(game: Game, state: State, request: Give, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="give" item=... count=... who=<giver> to=<taker>]``: out of one bag
    into another, up to what the taker can carry (ITM-CARRY-4, OQ-13); the rest stays with
    the giver. A bound cursed item is never given (ITM-BIND-3)."""
    tag, name, count, giver, taker = (request.tag, request.item, request.count, request.who,
                                      request.to)
    thing = find_thing(game, name, state)
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


def _teach_set(game: Game, party: Party) -> list[str]:
    thing = plain_item(game)
    if thing is None:
        return []
    return ["- An exact count: " + example(
        "inventory", action="set", item=thing.label, count="3", who=party.hero)]


@action("inventory", "set", Set, teach=_teach_set,
        reasons=(reasons.SERVICE, reasons.NOT_RULESET_ITEM, reasons.CURSED,
                 reasons.NOTHING_CARRIED, reasons.TOO_MANY_STACKS),
        record={"who": "whose bag", "item": "the item's name",
                "count": "how many the bag holds (set: how many were added)",
                "set": "the count asked for, when things were added"})
def set_count(game: Game, state: State, request: Set, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="set" item=... count=<n> who=...]``: the bag holds exactly ``n``
    of the thing afterwards — an add (carry rule, stack limits) or a remove of the difference.
    A plain item the bag does not hold yet needs ``native`` (ITM-FREE-4/5)."""
    block = game.ruleset.items
    return set_to(game, state, request, plain=block is None or block.native)


def set_to(game: Game, state: State, request: Set, plain: bool) -> tuple[State, Answer]:
    """Set a bag's count of a thing (ITM-STACK-1); ``plain``: whether a name that is no ruleset
    item and not held yet may become a plain item (the GM: ``native``, ITM-FREE-4/5; the
    player: ``freeform``, ITM-FREE-1..3/7)."""
    tag, name, total_wanted, who = request.tag, request.item, request.count, request.who
    thing = find_thing(game, name, state)
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
