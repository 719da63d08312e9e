"""What the host shows the player: the item picker and its coins, the selected-stack panel
and a character's bag at a glance (docs/rules/items.md#06-host-operations, ITM-SHOW-*), read from
the state."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict

from ..actions.describe import (
    attack_line,
    charges_text,
    effect_text,
    stat_text,
    use_text,
)
from ..actions.describe import weapon_text as weapon_parts
from ..actions.money import cost_text, purse_line
from ..actions.placing import weight_text
from ..rules.armour import defence_of, defences_of
from ..rules.bags import item_of, stack_limit
from ..rules.carry import load, thresholds
from ..rules.game import DEFAULT_STACK, Game
from ..rules.gear import binding_max, bound_count, slots_in_use
from ..rules.items import effect_part, stat_value
from ..rules.layers import hidden_items, removed_coins
from ..rules.money import count_text, family_coins, held_coins
from ..rules.state import State
from ..ruleset import Item

Filters = Mapping[str, str | Sequence[str]]


class HostModel(BaseModel):
    model_config = ConfigDict(frozen=True)


class ItemRow(HostModel):
    """One item of the picker (ITM-INV-4..6, ITM-SHOW-2)."""

    ref: str
    name: str
    catalog: str
    category: str
    rarity: str | None
    tags: tuple[str, ...]
    cost: str | None
    summary: str | None
    does: tuple[str, ...]
    stack: int


class CoinRow(HostModel):
    """One coin of the picker's "Coins" list (ITM-MONEY-4)."""

    id: str
    label: str
    one: str | None
    family: str
    value: int


class StackDetails(HostModel):
    """The selected-stack panel (ITM-SHOW-1..7, ITM-PROP-19)."""

    who: str
    index: int
    name: str
    count: int
    item: str | None = None  # the reference the player sees (a fake: what it passes for)
    coin: str | None = None
    category: str | None = None
    rarity: str | None = None
    tags: tuple[str, ...] = ()
    stats: dict[str, str] = {}
    summary: str | None = None
    stack: int = DEFAULT_STACK
    cost: str | None = None
    equipped: bool = False
    bound: bool = False
    toggle: str | None = None
    on: bool = False
    charges: str | None = None
    restriction: str | None = None  # ITM-ENTRY-16: who may bind it, in words (not enforced)
    does: tuple[str, ...] = ()
    attack: str | None = None
    changes: tuple[str, ...] = ()


class SlotUse(HostModel):
    id: str
    label: str
    used: int
    count: int


class BagDetails(HostModel):
    """A character's bag at a glance (ITM-SLOT-3, ITM-BIND-1, ITM-CARRY-2/3, ITM-MONEY-6)."""

    who: str
    stacks: int
    slots: tuple[SlotUse, ...] = ()
    binding: str | None = None
    bound: int = 0
    binding_max: int | None = None
    load: str | None = None
    encumbered_above: str | None = None
    limit: str | None = None
    encumbered: bool = False
    purse: str
    defence: int | None = None  # CMB-ATK-6: in a ruleset that fights by formula
    defences: tuple[str, ...] = ()  # ITM-HIDES-9: typed defences and their exceptions


def _labels(rows: Sequence[Any]) -> dict[str, str]:
    return {row.id: row.label for row in rows}


def _head(game: Game, item: Item) -> tuple[str, str | None, tuple[str, ...]]:
    """Category, rarity and tags by their labels (ITM-SHOW-1)."""
    block = game.ruleset.items
    if block is None:
        return item.category, item.rarity, tuple(item.tags)
    rarities = _labels(block.rarities)
    tags = _labels(block.tags)
    return (_labels(block.categories).get(item.category, item.category),
            rarities.get(item.rarity, item.rarity) if item.rarity is not None else None,
            tuple(tags.get(t, t) for t in item.tags))


def does(game: Game, item: Item) -> tuple[str, ...]:
    """What an item does, as the player reads it: ``While worn: -1 on checks (Sneak)``
    (ITM-SHOW-4), ``Attack (Action): Brawn to hit, 1d6 + Brawn cut damage`` (ITM-SHOW-6),
    ``Use (Action): heals 1d4 + 1, range 0 paces, used up`` (ITM-SHOW-7)."""
    lines = []
    for which in ("worn", "carried"):
        text = effect_text(game, effect_part(item, which))
        if text:
            lines.append(f"While {which}: {text}")
    weapon = weapon_parts(game, item)
    if weapon is not None:
        budget, core, _ = weapon
        has_damage = item.attack is not None and item.attack.damage is not None
        lines.append(f"Attack ({budget}): {core}{' damage' if has_damage else ''}")
    used = use_text(game, item)
    if used is not None:
        lines.append(f"Use {used}")
    return tuple(lines)


def _cost(game: Game, item: Item) -> str | None:
    if item.cost is None or item.cost.unit not in game.coins:
        return None
    return cost_text(game, item.cost)


def _wanted(value: str | Sequence[str]) -> set[str]:
    values = [value] if isinstance(value, str) else list(value)
    return {str(v).strip().casefold() for v in values}


def _matches(game: Game, ref: str, entry_filters: Mapping[str, Any] | None, item: Item,
             filters: Filters) -> bool:
    """ITM-INV-4: every filter holds; a value matches an id or a label, any case."""
    catalog = ref.split("/", 1)[0]
    category, rarity, tags = _head(game, item)
    catalogs = {c.id: c.label for c in game.ruleset.catalogs}
    for key, value in filters.items():
        wanted = _wanted(value)
        if key == "catalog":
            have = {catalog, catalogs.get(catalog, catalog)}
        elif key == "category":
            have = {item.category, category}
        elif key == "rarity":
            have = {item.rarity or "", rarity or ""}
        elif key in ("tag", "tags"):
            have = {*item.tags, *tags}
        else:  # the catalog entries' own ``filters``
            own = (entry_filters or {}).get(key)
            have = {str(v) for v in own} if isinstance(own, list) else {str(own)}
        if not wanted & {h.casefold() for h in have if h}:
            return False
    return True


def ruleset_items(game: Game, state: State | None, query: str = "",
                  filters: Filters | None = None) -> list[ItemRow]:
    """The "From the ruleset" picker: every catalog item in catalog order, found by name (any
    case, part of the label) and the catalogs' filters, each with its cost and what it does
    (ITM-INV-4, ITM-SHOW-2); layers' hidden entries and services are left out (ITM-INV-5/6,
    ITM-SVC-4)."""
    hidden = hidden_items(game, state)
    wanted = query.strip().casefold()
    catalogs = {c.id: c.label for c in game.ruleset.catalogs}
    rows = []
    for ref, entry in game.items.items():
        item = entry.item
        if item.service or ref in hidden or wanted not in entry.label.casefold():
            continue
        if filters and not _matches(game, ref, entry.entry.filters, item, filters):
            continue
        category, rarity, tags = _head(game, item)
        rows.append(ItemRow(ref=ref, name=entry.label, catalog=catalogs.get(ref.split("/")[0],
                                                                            ""),
                            category=category, rarity=rarity, tags=tags,
                            cost=_cost(game, item), summary=entry.entry.summary,
                            does=does(game, item), stack=entry.stack_limit))
    return rows


def ruleset_coins(game: Game, state: State | None) -> list[CoinRow]:
    """The picker's "Coins" list: every coin in play, family by family (ITM-MONEY-4); a coin a
    layer takes out of the game is not offered (ITM-LOOT-10)."""
    removed = removed_coins(game, state)
    return [CoinRow(id=coin_id, label=info.coin.label, one=info.coin.one,
                    family=info.family.label, value=info.coin.value)
            for coin_id, info in game.coins.items() if coin_id not in removed]


class PurseRow(HostModel):
    """One family of a view's purse (ITM-MONEY-5)."""

    family: str
    coins: tuple[tuple[str, int], ...]  # (coin label, count), largest coin first
    worth: int  # in the family's smallest coin
    worth_text: str  # "432 pennies"


def purse_summary(game: Game, state: State, who: str | None = None) -> list[PurseRow]:
    """ITM-MONEY-5: above the stacks of a view — one character's bag, or the shared view (every
    bag) without ``who`` — each family's visible coins and their value in its smallest coin.
    Coins a layer takes out of the game are not shown; an empty family is left out."""
    if who is None:
        characters = list(state.characters)
    else:
        index = state.character_index(who)
        characters = [state.characters[index]] if index is not None else []
    removed = removed_coins(game, state)
    rows = []
    for family in game.ruleset.items.currencies if game.ruleset.items else []:
        held: dict[str, int] = {}
        for character in characters:
            for coin, count in held_coins(character, family).items():
                held[coin] = held.get(coin, 0) + count
        shown = [(coin, value) for coin, value in family_coins(family)
                 if coin not in removed and held.get(coin)]
        if not shown:
            continue
        worth = sum(held[coin] * value for coin, value in shown)
        smallest = game.coins[family_coins(family)[-1][0]]
        rows.append(PurseRow(family=family.label,
                             coins=tuple((game.coins[c].coin.label, held[c]) for c, _ in shown),
                             worth=worth, worth_text=count_text(smallest, worth)))
    return rows


def describe_stack(game: Game, state: State, who: str | None,
                   stack_index: int) -> StackDetails | None:
    """The selected-stack panel (ITM-SHOW-1..7): labels, every stat the item gives (its own
    value, else the stat's default, OQ-3; ``promptVisible: false`` stats too — they are kept
    from the GM, not the player), summary, stack size, cost, what it does, charges left, who
    may bind it (``binds.restriction``, ITM-ENTRY-16), and
    for an invented item every change made to the proposal (ITM-PROP-19). A fake shows as the
    item it passes for (ITM-FAKE-9). None for a character or position that is not there."""
    index = state.character_index(who)
    if index is None:
        return None
    character = state.characters[index]
    if not 0 <= stack_index < len(character.bag):
        return None
    stack = character.bag[stack_index]
    base = StackDetails(who=character.name, index=stack_index, name=stack.name,
                        count=stack.count, coin=stack.coin, equipped=stack.equipped,
                        bound=stack.bound, on=stack.toggled)
    ref = stack.shows_as or stack.item
    item = item_of(game, state, ref)
    if item is None:
        return base
    block = game.ruleset.items
    stats = {}
    for stat in block.stats if block is not None else ():
        value = stat_value(game, item, stat.id)
        if value is not None:
            stats[stat.label] = stat_text(value)
    entry = game.items.get(ref or "")
    invented = next((i for i in state.invented if i.ref == ref), None)
    category, rarity, tags = _head(game, item)
    truth = item_of(game, state, stack.item) or item
    return base.model_copy(update={
        "item": ref, "category": category, "rarity": rarity, "tags": tags, "stats": stats,
        "summary": entry.entry.summary if entry is not None else (
            invented.summary if invented is not None else None),
        "stack": stack_limit(item), "cost": _cost(game, item),
        "toggle": item.toggle.label if item.toggle is not None else None,
        "charges": charges_text(truth, stack), "does": does(game, item),
        "restriction": item.binds.restriction if item.binds is not None else None,
        "attack": attack_line(game, item),
        "changes": invented.changes if invented is not None else ()})


def describe_bag(game: Game, state: State, who: str | None) -> BagDetails | None:
    """A character's slots in use (ITM-SLOT-3), bound items against ``binding.max``
    (ITM-BIND-1), load against ``encumberedAbove`` and ``limit`` (ITM-CARRY-2/3), purse
    (ITM-MONEY-6), defence and typed defences (CMB-ATK-6, ITM-HIDES-9); None for a name
    nobody in the party has."""
    index = state.character_index(who)
    if index is None:
        return None
    character = state.characters[index]
    combat = game.ruleset.combat
    details = BagDetails(
        who=character.name, stacks=len(character.bag), purse=purse_line(game, character, state),
        defence=defence_of(game, state, index) if combat is not None and combat.attack else None,
        defences=defences_of(game, state, index).lines(game))
    block = game.ruleset.items
    if block is None:
        return details
    update: dict[str, Any] = {}
    if block.slots:
        used = slots_in_use(game, state, character)
        update["slots"] = tuple(SlotUse(id=s.id, label=s.label, used=used.get(s.id, 0),
                                        count=s.count) for s in block.slots)
    if block.binding is not None:
        update.update(binding=block.binding.label, bound=bound_count(character),
                      binding_max=binding_max(game, character))
    if block.carry is not None:
        above, limit = thresholds(game, character)
        carried = load(game, state, character)
        update.update(load=weight_text(game, carried),
                      encumbered_above=weight_text(game, above) if above is not None else None,
                      limit=weight_text(game, limit) if limit is not None else None,
                      encumbered=above is not None and carried > above)
    return details.model_copy(update=update)


__all__ = ["BagDetails", "CoinRow", "ItemRow", "StackDetails", "describe_bag", "describe_stack",
           "does", "ruleset_coins", "ruleset_items"]
