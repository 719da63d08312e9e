"""Markets: where the party is, what is sold there and at what price, buying, selling, and the
market day (spec/items.md §18: ITM-PLACE, ITM-MKT, ITM-PRICE, ITM-BUY, ITM-DAY, ITM-SELL,
ITM-MKTV).

Nothing here is stored beyond the fold: the place, the day that began there, and the day's
ledger (what was taken of limited wares and stock, what the purse paid out) live on
:class:`~engine.state.Place`, which the fold rebuilds from the visible replies. Every roll of a
day comes from a stream keyed by the place and the position of the ``[place:]`` answer that
began the day, so a day always rolls the same shelf (ITM-DAY-4/5, OQ-50).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from fractions import Fraction

from tagparse import Tag

from . import reasons
from .answers import Answer, accepted, refused
from .bags import (
    Thing,
    add_to_bag,
    cursed_bound,
    find_thing,
    item_of,
    parse_count,
    resolve_who,
    take_from_bag,
)
from .carry import distribute, exact
from .context import TurnContext
from .dice import Stream, parse_dice, roll
from .game import CatalogItem, CoinInfo, Game
from .layers import hidden_items, removed_coins
from .loot import roll_table
from .money import (
    coin_listing,
    coin_thing,
    count_text,
    exchange_text,
    exchanged,
    family_coins,
    held_coins,
    make_change,
)
from .ruleset import Item
from .ruleset.loot import ItemFilter
from .ruleset.market import Market, PriceLevel, Seller
from .ruleset.market import Place as PlaceSize
from .sheet import SheetView
from .state import Character, Held, JournalEntry, Place, Stack, State, Taken

WARES_SHOWN = 12  # ITM-MKTV-1: a dozen wares per seller in the MARKET block
LIMITED_SHOWN = 24  # the most limited wares the MARKET block lists
HALF = Fraction(1, 2)


# ---------------------------------------------------------------------------------------------
# Prices (ITM-PRICE-1..6)


@dataclass(frozen=True, slots=True)
class Price:
    """A price in the family's smallest coin, and the coin it is named in (ITM-PRICE-3/4)."""

    value: int
    coin: CoinInfo

    @property
    def text(self) -> str:
        """``12 shillings``, ``1 penny`` (ITM-PRICE-5, ITM-MONEY-8)."""
        return count_text(self.coin, self.value // self.coin.coin.value)


def half_up(number: Fraction) -> int:
    """OQ-44, OQ-54: round to a whole coin, half up."""
    return math.floor(number + HALF)


def scaled(value: int, times: float) -> int:
    """ITM-PRICE-1/2: ``value × times`` rounded to whole coins, never below one coin for
    something that costs anything."""
    if value <= 0:
        return 0
    return max(1, half_up(value * exact(times)))


def named_coin(game: Game, state: State | None, coin: CoinInfo, value: int) -> CoinInfo:
    """ITM-PRICE-3/4: the coin a value is named in — ``coin`` itself if it pays it exactly,
    else the largest coin the layers leave that pays it exactly (the smallest coin always
    does)."""
    removed = removed_coins(game, state)
    if coin.coin.id not in removed and value % coin.coin.value == 0:
        return coin
    family = family_coins(coin.family)
    for coin_id, coin_value in family:
        if coin_id not in removed and value % coin_value == 0:
            return game.coins[coin_id]
    return game.coins[family[-1][0]]


def saleable(game: Game, state: State | None, ref: str, item: Item) -> bool:
    """ITM-MKT-19..21: an item with a ``cost`` that no layer hides and whose coin no layer
    has taken out."""
    cost = item.cost
    return (cost is not None and cost.unit in game.coins and ref not in hidden_items(game, state)
            and cost.unit not in removed_coins(game, state))


def price_of(game: Game, state: State | None, ref: str, item: Item,
             level: PriceLevel) -> Price | None:
    """ITM-PRICE-1..4: the item's price at ``level``, or None when it is not for sale."""
    if not saleable(game, state, ref, item) or item.cost is None:
        return None
    coin = game.coins[item.cost.unit]
    value = scaled(item.cost.amount * coin.coin.value, level.times)
    return Price(value, named_coin(game, state, coin, value))


def default_level(market: Market) -> PriceLevel:
    """ITM-MKT-2: the level marked ``default`` (exactly one, checked at load)."""
    return next((level for level in market.prices if level.default), market.prices[0])


def find_level(market: Market, text: str | None) -> PriceLevel | None:
    """ITM-BUY-2: a level by id or label, ignoring case; without one, the default."""
    wanted = (text or "").strip().casefold()
    if not wanted:
        return default_level(market)
    return next((level for level in market.prices
                 if wanted in (level.id.casefold(), level.label.casefold())), None)


# ---------------------------------------------------------------------------------------------
# Where things are sold (ITM-MKT-3..21)


def market_of(game: Game) -> Market | None:
    block = game.ruleset.items
    return block.market if block is not None else None


def find_size(market: Market | None, text: str) -> PlaceSize | None:
    """ITM-PLACE-1: a place size by id or label, ignoring case."""
    if market is None:
        return None
    wanted = text.strip().casefold()
    return next((size for size in market.places
                 if wanted in (size.id.casefold(), size.label.casefold())), None)


def size_rank(market: Market, size: str | None) -> int:
    """ITM-MKT-3: a size's position, smallest first (an unknown size ranks above them all, so
    nothing is sold from it)."""
    ids = [p.id for p in market.places]
    return ids.index(size) if size in ids else len(ids)


def selects(wanted: ItemFilter, item: Item) -> bool:
    """ITM-MKT-6: an item that has every named rarity, category and tag."""
    return ((wanted.rarity is None or item.rarity == wanted.rarity)
            and (wanted.category is None or item.category == wanted.category)
            and (wanted.tag is None or wanted.tag in item.tags))


def sold_from(market: Market, item: Item) -> str | None:
    """ITM-MKT-5..9, ITM-DAY-8: the smallest size that sells the item — its own ``sold`` first,
    then the first matching rule that names a place; None: sold everywhere."""
    if item.sold is not None and item.sold.place is not None:
        return item.sold.place
    return next((rule.place for rule in market.sold
                 if rule.place is not None and selects(rule.filter, item)), None)


def sold_limit(market: Market, item: Item) -> int | str | None:
    """ITM-DAY-6..8: how many a place has on one day — the item's own ``limited`` first, then
    the first matching rule that names a limit; None: no limit."""
    if item.sold is not None and item.sold.limited is not None:
        return item.sold.limited
    return next((rule.limited for rule in market.sold
                 if rule.limited is not None and selects(rule.filter, item)), None)


def sold_at(market: Market, item: Item, size: str) -> bool:
    """ITM-MKT-4: sold from size P means sold at P and at every larger size."""
    smallest = sold_from(market, item)
    return smallest is None or size_rank(market, smallest) <= size_rank(market, size)


def unsold_filters(game: Game, state: State | None, market: Market) -> list[ItemFilter]:
    """ITM-MKT-15/18: the market's ``unsold`` and those the game's layers add."""
    filters = list(market.unsold)
    active = state.layers if state is not None else ()
    for layer in game.ruleset.layers:
        if layer.id in active and layer.items is not None:
            filters.extend(layer.items.unsold)
    return filters


def never_a_ware(item: Item) -> bool:
    """ITM-FAKE-5: a cursed item or a fake is never among a seller's wares."""
    return item.passes_for is not None or (item.binds is not None and item.binds.cursed)


def sellers_here(market: Market, size: str) -> list[Seller | None]:
    """ITM-MKT-4/10/13: the sellers found at this size (``place`` and every larger size), in
    ruleset order; without ``sellers``, one anonymous "everyone" (None)."""
    if not market.sellers:
        return [None]
    rank = size_rank(market, size)
    return [s for s in market.sellers if s.place is None or size_rank(market, s.place) <= rank]


def find_seller(market: Market, text: str) -> Seller | None:
    """A seller by id or label, ignoring case."""
    wanted = text.strip().casefold()
    return next((s for s in market.sellers if wanted in (s.id.casefold(), s.label.casefold())),
                None)


def seller_takes(seller: Seller | None, item: Item) -> bool:
    """ITM-MKT-11, ITM-DAY-14: one of the seller's ``sells`` filters selects the item (the
    anonymous everyone of a market without sellers takes anything)."""
    return seller is None or any(selects(f, item) for f in seller.sells)


def in_range(game: Game, state: State | None, market: Market, seller: Seller | None,
             entry: CatalogItem, size: str) -> bool:
    """ITM-MKT-14: saleable, selected by one of the seller's ``sells``, sold at this size, not
    ``unsold``, not cursed and not a fake."""
    item = entry.item
    return (saleable(game, state, entry.ref, item) and seller_takes(seller, item)
            and sold_at(market, item, size) and not never_a_ware(item)
            and not any(selects(f, item) for f in unsold_filters(game, state, market)))


def meets_only(game: Game, state: State, seller: Seller | None, character: Character) -> bool:
    """ITM-MKT-12: the buyer's sheet — live state and carried items included — reaches the
    seller's ``only``."""
    if seller is None or seller.only is None:
        return True
    return SheetView(game, character, state).value(seller.only.value) >= seller.only.at_least


# ---------------------------------------------------------------------------------------------
# The market day (ITM-DAY-2..12)


def day_stream(state: State, place: Place, purpose: str) -> Stream:
    """ITM-DAY-5, OQ-50: the dice of one purpose of the day — keyed by the game seed, the
    position of the ``[place:]`` answer that began the day, and the place."""
    return Stream(state.seed, place.began,
                  f"market/{place.name.casefold()}/{place.size}/{purpose}")


def day_limit(state: State, place: Place, ref: str, limited: int | str) -> int:
    """ITM-DAY-6: a limit written out, or dice rolled once for the day."""
    if isinstance(limited, int):
        return limited
    expr = parse_dice(limited)
    if isinstance(expr, str):  # validated at load
        return 0
    return max(0, roll(expr, day_stream(state, place, f"limited/{ref}")).total)


def taken_today(place: Place, ref: str, seller: str | None) -> int:
    return sum(t.count for t in place.taken if t.item == ref and t.seller == seller)


def fake_on_offer(game: Game, state: State | None, entry: CatalogItem) -> CatalogItem | None:
    """ITM-FAKE-4/7: the item a fake is offered as — checked again whenever a market offers
    it, so a fake whose target is missing, hidden or unsaleable is never sold."""
    from .fakes import passes_for  # fakes reads markets: imported when used

    target = passes_for(game, entry)
    if target is None or not saleable(game, state, target.ref, target.item):
        return None
    return target


def day_stock(game: Game, state: State, market: Market,
              place: Place) -> list[tuple[Seller, list[tuple[CatalogItem, int]]]]:
    """ITM-DAY-10..12, ITM-FAKE-5/7: what each seller here rolled on its ``stock`` table for
    the day — items only, never coins; never a cursed item or a fake at an honest seller (that
    roll yields nothing); a dishonest seller's fakes as themselves, offered as the item they
    pass for; only what has a price — as (seller, [(item, count rolled)])."""
    if place.size is None:
        return []
    tables = {t.id: t for t in (game.ruleset.items.loot_tables if game.ruleset.items else [])}
    stocks = []
    for seller in sellers_here(market, place.size):
        if seller is None or seller.stock is None or seller.stock.table not in tables:
            continue
        drops, _ = roll_table(game, state, tables[seller.stock.table],
                              day_stream(state, place, f"stock/{seller.id}"))
        wares = []
        for drop in drops:
            entry = game.items.get(drop.thing.item) if drop.thing.item is not None else None
            if entry is None or (seller.honest and never_a_ware(entry.item)):
                continue
            if entry.item.passes_for is not None:  # ITM-FAKE-7
                if fake_on_offer(game, state, entry) is None:
                    continue
            elif not saleable(game, state, entry.ref, entry.item):
                continue
            wares.append((entry, drop.count))
        stocks.append((seller, wares))
    return stocks


@dataclass(frozen=True, slots=True)
class Offer:
    """One way to buy an item here today: a seller's range or its stock, and how many are
    left (None: no limit)."""

    seller: Seller | None
    stock: bool
    left: int | None
    fake: CatalogItem | None = None  # ITM-FAKE-7: a dishonest seller's fake, offered as this


def _fake_offers(game: Game, state: State, place: Place, entry: CatalogItem, seller: Seller,
                 wares: list[tuple[CatalogItem, int]]) -> list[Offer]:
    """ITM-FAKE-7/8: the day's fakes of a dishonest seller that pass for ``entry``."""
    rolled: dict[str, int] = {}
    fakes: dict[str, CatalogItem] = {}
    for ware, n in wares:
        if ware.item.passes_for == entry.ref:
            rolled[ware.ref] = rolled.get(ware.ref, 0) + n
            fakes[ware.ref] = ware
    return [Offer(seller, True, max(0, n - taken_today(place, ref, seller.id)), fakes[ref])
            for ref, n in rolled.items()]


def offers(game: Game, state: State, market: Market, place: Place, entry: CatalogItem,
           sellers: Sequence[Seller | None], named: bool = False) -> list[Offer]:
    """Every offer of ``entry`` among ``sellers`` today: ranges first, then stocks. Only a buy
    that names the seller (``named``) gets a dishonest seller's fake, and then the fake first
    while the day's fakes last (ITM-FAKE-8, OQ-56)."""
    assert place.size is not None
    found: list[Offer] = []
    fakes: list[Offer] = []
    limited = sold_limit(market, entry.item)
    for seller in sellers:
        if in_range(game, state, market, seller, entry, place.size):
            left = None
            if limited is not None:
                left = max(0, day_limit(state, place, entry.ref, limited)
                           - taken_today(place, entry.ref, None))
            found.append(Offer(seller, False, left))
    for seller, wares in day_stock(game, state, market, place):
        if seller not in sellers:
            continue
        if named and not seller.honest:
            fakes += [o for o in _fake_offers(game, state, place, entry, seller, wares) if o.left]
        rolled = sum(n for ware, n in wares
                     if ware.ref == entry.ref and ware.item.passes_for is None)
        if rolled:
            found.append(Offer(seller, True, max(0, rolled - taken_today(place, entry.ref,
                                                                         seller.id))))
    return fakes + found


def _took(place: Place, ref: str, seller: str | None, count: int) -> Place:
    """The day's ledger with ``count`` more taken."""
    taken = list(place.taken)
    for index, entry in enumerate(taken):
        if entry.item == ref and entry.seller == seller:
            taken[index] = entry.model_copy(update={"count": entry.count + count})
            break
    else:
        taken.append(Taken(item=ref, seller=seller, count=count))
    return place.model_copy(update={"taken": tuple(taken)})


# ---------------------------------------------------------------------------------------------
# [place:] (ITM-PLACE-1..6, ITM-DAY-2/3)


def _size_label(market: Market | None, size: str | None) -> str:
    if size is None:
        return "no market"
    found = find_size(market, size)
    return found.label if found is not None else size


def place(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[place: name="<name>" size="<size>" day="new"]``: where the scene is (ITM-PLACE-1..4);
    a new place or ``day="new"`` begins a market day (ITM-DAY-2/3, OQ-51/52)."""
    name = " ".join((tag.get("name") or "").split())[:120]
    if not name:
        return state, refused(tag, reasons.MISSING_ATTRIBUTE,
                              'Name the place: [place: name="<name>" size="<size>"].')
    market = market_of(game)
    size_text = (tag.get("size") or "").strip()
    size: str | None = None
    if size_text:  # ITM-PLACE-3, OQ-45: a size the ruleset lacks is refused; no place is taken
        found = find_size(market, size_text)
        if found is None:
            known = (", ".join(f'"{p.label}"' for p in market.places) if market is not None
                     else "none: this ruleset has no market")
            return state, refused(tag, reasons.UNKNOWN_SIZE,
                                  f'"{size_text[:60]}" is not a place size (sizes: {known}); '
                                  "leave size out for a place without a market.")
        size = found.id
    day_text = (tag.get("day") or "").strip()
    notes: tuple[str, ...] = ()
    if day_text and day_text.casefold() != "new":
        notes = (f'ignored day="{day_text[:40]}": only day="new" begins a new day',)
    current = state.place
    same = (current is not None and current.size == size
            and current.name.casefold() == name.casefold())
    # ITM-DAY-5: the day is keyed by where this answer stands in the transcript, never the swipe.
    began = (*ctx.turn_key[:2], ctx.ordinal)
    label = _size_label(market, size)
    if same and current is not None and day_text.casefold() != "new":  # OQ-52: the day goes on
        new_place = current
        text = f"The party is still at {current.name} ({label})"
        text += f", market day {current.day}." if size is not None else "."
    elif same and current is not None:  # ITM-DAY-3
        new_place = Place(name=current.name, size=size, day=current.day + 1, began=began)
        text = f"A new day at {current.name} ({label}): market day {new_place.day}."
    else:  # ITM-DAY-2, OQ-51: another place ends the day; a place named again begins one
        new_place = Place(name=name, size=size, day=1, began=began)
        text = f"The party is at {name} ({label})"
        text += ": market day 1." if size is not None else "."
    record: dict[str, object] = {"name": new_place.name, "size": size, "day": new_place.day}
    new_state = state if new_place is current else state.model_copy(update={"place": new_place})
    return new_state, accepted(tag, text, record, notes)


# ---------------------------------------------------------------------------------------------
# Buying (ITM-BUY-1..15)


def _no_market(tag: Tag) -> Answer:
    return refused(tag, reasons.NO_MARKET, "This ruleset has no market: use pay and add, or "
                   "earn and remove, instead.")


def _no_place(state: State, tag: Tag, verb: str) -> Answer:
    """ITM-BUY-8, ITM-SELL-4, OQ-46."""
    where = (f"{state.place.name} has no market" if state.place is not None
             else "no place is named")
    return refused(tag, reasons.NO_PLACE,
                   f'Nothing can be {verb} here: {where} (name one first with [place: '
                   'name="<name>" size="<size>"]).')


def _common(game: Game, state: State, tag: Tag,
            verb: str) -> tuple[Market, Place, str, int, int] | Answer:
    """What buy and sell both check first: a market, item=, count=, who=, a market place."""
    market = market_of(game)
    if market is None:
        return _no_market(tag)
    name = (tag.get("item") or "").strip()
    if not name:
        return refused(tag, reasons.MISSING_ATTRIBUTE,
                       f'Say what to {verb}: [inventory: action="{verb}" item="<name>"].')
    count = parse_count(tag.get("count"))
    if isinstance(count, str):
        return refused(tag, reasons.BAD_COUNT, count + ".")
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return who
    where = state.place
    if where is None or where.size is None:
        return _no_place(state, tag, "bought" if verb == "buy" else "sold")
    return market, where, name, count, who


def _pay(game: Game, character: Character, coin: CoinInfo,
         amount: int) -> tuple[tuple[Stack, ...], dict[str, int], dict[str, int]] | str:
    """ITM-BUY-5: pay ``amount`` out of one bag like a payment, with change (ITM-PAY-3..4);
    the new bag and what was paid and given back, or a refusal reason."""
    family = coin.family
    plan = make_change(family_coins(family), held_coins(character, family), amount)
    if plan is None:
        return reasons.CANNOT_AFFORD
    paid, change = plan
    bag = character.bag
    for coin_id, count in paid.items():
        bag, _ = take_from_bag(character.model_copy(update={"bag": bag}),
                               coin_thing(game.coins[coin_id]), "", count)
    for coin_id, count in change.items():
        grown = add_to_bag(bag, coin_thing(game.coins[coin_id]), count)
        if grown is None:
            return reasons.CANNOT_CARRY
        bag = grown
    return bag, paid, change


def _pick_offer(game: Game, state: State, tag: Tag, market: Market, where: Place,
                entry: CatalogItem, character: Character, count: int) -> Offer | Answer:
    """ITM-BUY-3, ITM-BUY-11..13, ITM-BUY-15: the first seller here (or the named one) who
    offers the item to this buyer with enough left today."""
    assert where.size is not None
    sellers = sellers_here(market, where.size)
    wanted = (tag.get("seller") or "").strip()
    if wanted:
        named = find_seller(market, wanted)
        if named is None:  # OQ-47: a seller the ruleset does not have
            known = ", ".join(s.label for s in market.sellers) or "none by name"
            return refused(tag, reasons.NO_SELLER,
                           f'There is no seller "{wanted[:60]}" in this market (sellers: {known}).')
        if named not in sellers:
            return refused(tag, reasons.NO_SELLER,
                           f"There is no {named.label} at {where.name} "
                           f"({_size_label(market, where.size)}).")
        sellers = [named]
    found = offers(game, state, market, where, entry, sellers, named=bool(wanted))
    if not found:
        if not sold_at(market, entry.item, where.size):  # ITM-BUY-11
            smallest = _size_label(market, sold_from(market, entry.item))
            return refused(tag, reasons.NOT_HERE,
                           f"{entry.label} is not sold at a {_size_label(market, where.size)}; "
                           f"it is sold from a {smallest} up.")
        who = f"The {sellers[0].label}" if wanted and sellers[0] is not None else "Nobody here"
        return refused(tag, reasons.NO_SELLER,  # ITM-BUY-12
                       f"{who} sells {entry.label} at {where.name}.")
    open_to = [o for o in found if meets_only(game, state, o.seller, character)]
    if not open_to:  # ITM-BUY-13
        seller = found[0].seller
        assert seller is not None and seller.only is not None
        only = seller.only.label or "some buyers"
        return refused(tag, reasons.NOT_TO_YOU,
                       f"The {seller.label} sells {entry.label} only to {only}, and "
                       f"{character.name} is not one.")
    enough = [o for o in open_to if o.left is None or o.left >= count]
    if not enough:  # ITM-BUY-15, ITM-DAY-9
        left = max(o.left or 0 for o in open_to)
        return refused(tag, reasons.SOLD_OUT,
                       f"{entry.label} is sold out here today ({left} left, {count} asked); "
                       'a new day (day="new") or another place may have more.')
    return enough[0]


def _place_fake(game: Game, state: State, who: int, fake: CatalogItem, shown: CatalogItem,
                count: int) -> State | None:
    """ITM-FAKE-7/9: bought fakes into the buyer's bag as the item they pass for — as much room
    (load, stacks) as the fake itself takes; None when it does not fit."""
    from .fakes import add_disguised

    thing = Thing(shown.label, fake.ref, None, fake.stack_limit)
    _, _, left = distribute(game, state, thing, count, who)
    character = state.characters[who]
    bag = add_disguised(character.bag, fake, shown, count) if not left else None
    if bag is None:
        return None
    return state.with_bag(who, bag)


def _held(game: Game, state: State, tag: Tag, ctx: TurnContext, where: Place,
          entry: CatalogItem, who: int, offer: Offer) -> tuple[State, Answer] | None:
    """ITM-NOTICE-1..7: before a buy that would yield a fake, the other party members may
    notice; then nothing is paid and the buy is held — once a day: asked again, it goes
    through. The held buy is written on the day's ledger (that is all that changes)."""
    from .fakes import notice

    seller, fake = offer.seller, offer.fake
    assert seller is not None and fake is not None
    buyer = state.characters[who].name
    mark = Held(seller=seller.id, item=entry.ref, who=buyer)
    if mark in where.held:  # ITM-NOTICE-6
        return None
    noticed = notice(game, state, who, seller, fake, ctx)
    if noticed is None:
        return None
    what = f" ({noticed.says})" if noticed.says else ""
    about = (f"something about the {entry.label}" if noticed.about == "item"
             else f"something about the {seller.label}")
    text = (f"Held: before {buyer} paid, {noticed.who} noticed {about}{what}. Play out how "
            f"{noticed.who} warns {buyer} in character — without accusing the {seller.label} "
            f"to their face unless that is like {noticed.who} — and let {buyer} decide; the "
            "same buy asked again today goes through.")  # ITM-NOTICE-3/4
    record: dict[str, object] = {"who": buyer, "seller": seller.id, "item": entry.ref,
                                 "name": entry.label, "noticed": noticed.who,
                                 "check": noticed.check, "about": noticed.about}
    if noticed.says:
        record["says"] = noticed.says
    ledger = where.model_copy(update={"held": (*where.held, mark)})
    return state.model_copy(update={"place": ledger}), refused(tag, reasons.HELD, text, record)


def buy(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="buy" item=... count=... level=... seller=... who=...]``: pay and
    take the item, all or nothing (ITM-BUY-1..15)."""
    common = _common(game, state, tag, "buy")
    if isinstance(common, Answer):
        return state, common
    market, where, name, count, who = common
    level = find_level(market, tag.get("level"))
    if level is None:  # ITM-BUY-9
        known = ", ".join(f'"{p.label}"' for p in market.prices)
        return state, refused(tag, reasons.UNKNOWN_LEVEL,
                              f'"{(tag.get("level") or "")[:60]}" is not a price level '
                              f"(levels: {known}).")
    entry = game.find_item(name)
    if entry is None:  # ITM-BUY-9
        return state, refused(tag, reasons.UNKNOWN_ITEM,
                              f'"{name[:80]}" is not an item of this ruleset.')
    unit = price_of(game, state, entry.ref, entry.item, level)
    if unit is None:  # ITM-BUY-10, ITM-MKT-19..21
        return state, refused(tag, reasons.NOT_FOR_SALE, f"{entry.label} is not for sale.")
    character = state.characters[who]
    offer = _pick_offer(game, state, tag, market, where, entry, character, count)
    if isinstance(offer, Answer):
        return state, offer
    if offer.fake is not None:
        held = _held(game, state, tag, ctx, where, entry, who, offer)
        if held is not None:
            return held
    total_value = unit.value * count  # OQ-49: the unit price times count, one payment
    total = Price(total_value, named_coin(game, state, unit.coin, total_value))
    paying = _pay(game, character, unit.coin, total_value)
    if paying == reasons.CANNOT_AFFORD:  # ITM-BUY-14
        return state, refused(tag, reasons.CANNOT_AFFORD,
                              f"{character.name} cannot afford {entry.label} ×{count} for "
                              f"{total.text}.", {"price": total.text})
    if isinstance(paying, str):
        return state, refused(tag, reasons.CANNOT_CARRY,
                              f"{character.name}'s bag cannot take the change; nothing was "
                              "bought.")
    bag, paid, change = paying
    new_state = state.with_bag(who, bag)
    if offer.fake is not None:  # ITM-FAKE-7/9: the fake, shown as what it passes for
        placed = _place_fake(game, new_state, who, offer.fake, entry, count)
        if placed is None:
            return state, refused(tag, reasons.CANNOT_CARRY,
                                  f"{character.name} cannot carry {entry.label} ×{count}; "
                                  "nothing was bought.")
        new_state = placed
    elif not entry.item.service:  # ITM-BUY-5: a service is only paid for
        thing = Thing(entry.label, entry.ref, None, entry.stack_limit)
        new_state, _, left = distribute(game, new_state, thing, count, who)
        if left:  # ITM-BUY-6, ITM-BUY-14, OQ-48: all or nothing
            return state, refused(tag, reasons.CANNOT_CARRY,
                                  f"{character.name} cannot carry {entry.label} ×{count}; "
                                  "nothing was bought.")
    ledger = where
    if offer.stock:
        assert offer.seller is not None
        taken_ref = offer.fake.ref if offer.fake is not None else entry.ref
        ledger = _took(where, taken_ref, offer.seller.id, count)
    elif offer.left is not None:
        ledger = _took(where, entry.ref, None, count)
    seller = offer.seller.label if offer.seller is not None else None
    from_whom = f" from the {seller}" if seller else ""
    journal = JournalEntry(turn=ctx.turn_label, text=f"{character.name} bought {entry.label} "
                           f"×{count}{from_whom} for {total.text}.")
    new_state = new_state.model_copy(update={"place": ledger,
                                             "journal": (*state.journal, journal)})
    family = unit.coin.family
    text = f"{character.name} bought {entry.label} ×{count}{from_whom} for {total.text}."
    paid, change = exchanged(paid, change)
    if paid:  # ITM-BUY-7 with ITM-PAY-5
        text += " " + exchange_text(game, paid, change, family)
    record: dict[str, object] = {
        "price": total.text, "item": entry.ref, "name": entry.label, "count": count,
        "who": character.name, "seller": offer.seller.id if offer.seller else None,
        "level": level.id, "paid": paid, "change": change,
    }
    if offer.stock:
        record["stock"] = True
    return new_state, accepted(tag, text, record)


# ---------------------------------------------------------------------------------------------
# Selling (ITM-SELL-1..7, ITM-DAY-13..17)


def buy_back_price(game: Game, state: State, market: Market, ref: str,
                   item: Item) -> Price | None:
    """ITM-SELL-2, ITM-DAY-13, OQ-54: ``buyBack`` × the default-level price, rounded like a
    price; None when nobody buys anything back or the item has no price."""
    unit = price_of(game, state, ref, item, default_level(market))
    if unit is None or market.buy_back is None:
        return None
    value = scaled(unit.value, market.buy_back)
    return Price(value, named_coin(game, state, unit.coin, value))


def purse_limit(game: Game, market: Market, where: Place) -> tuple[CoinInfo, int] | None:
    """ITM-DAY-16: the size's purse as (its coin, its value in the family's smallest coin)."""
    size = find_size(market, where.size or "")
    if size is None or size.purse is None or size.purse.unit not in game.coins:
        return None
    coin = game.coins[size.purse.unit]
    return coin, size.purse.amount * coin.coin.value


def coins_largest_first(game: Game, state: State, coin: CoinInfo, value: int) -> dict[str, int]:
    """ITM-SELL-2: ``value`` in coins, greedy from the largest coin the layers leave."""
    removed = removed_coins(game, state)
    coins: dict[str, int] = {}
    rest = value
    family = family_coins(coin.family)
    for coin_id, coin_value in family:
        if coin_id in removed and coin_id != family[-1][0]:
            continue
        if rest >= coin_value:
            coins[coin_id], rest = divmod(rest, coin_value)
    return coins


def _buyers(market: Market, where: Place, item: Item,
            named: Seller | None) -> list[Seller | None]:
    """ITM-DAY-14: the sellers here (or the named one) whose ``sells`` select the item."""
    assert where.size is not None
    here = sellers_here(market, where.size)
    if named is not None:
        here = [s for s in here if s == named]
    return [s for s in here if seller_takes(s, item)]


def sell(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="sell" item=... count=... seller=... who=...]``: take the item and
    pay its buy-back price in coins, largest first (ITM-SELL-1..7)."""
    common = _common(game, state, tag, "sell")
    if isinstance(common, Answer):
        return state, common
    market, where, name, count, who = common
    character = state.characters[who]
    thing = find_thing(game, name, state)
    label = thing.name if thing is not None else name[:200]
    if thing is not None and (thing.item is not None or thing.coin is not None):
        held = sum(s.count for s in character.bag if s.item == thing.item and s.coin == thing.coin)
    else:
        held = sum(s.count for s in character.bag
                   if s.plain and s.name.casefold() == name.casefold())
    if held == 0 and thing is not None and thing.item is not None and any(
            s.shows_as == thing.item for s in character.bag):  # ITM-FAKE-14/15
        return _sell_fake(game, state, tag, ctx, market, where, who, thing.item, count)
    if held == 0:  # ITM-SELL-5
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    item = item_of(game, state, thing.item) if thing is not None else None
    price = (buy_back_price(game, state, market, thing.item, item)
             if thing is not None and thing.item is not None and item is not None else None)
    if item is None or thing is None or thing.item is None or (
            price is None and market.buy_back is not None):  # ITM-SELL-4, ITM-MKT-19..21
        return state, refused(tag, reasons.NOT_FOR_SALE, f"{label} has no price: nobody buys it.")
    wanted = (tag.get("seller") or "").strip()
    named = find_seller(market, wanted) if wanted else None
    buyers = _buyers(market, where, item, named) if not wanted or named is not None else []
    if price is None or not buyers:  # ITM-SELL-4, ITM-DAY-14/15
        why = ("nobody here buys anything back" if market.buy_back is None
               else f"nobody at {where.name} buys {label}" if not wanted
               else f'no seller "{wanted[:60]}" here buys {label}')
        return state, refused(tag, reasons.NOT_BOUGHT, f"{label} cannot be sold: {why}.")
    if held < count:
        return state, refused(tag, reasons.NOT_ENOUGH,
                              f"{character.name} has only {label} ×{held}, not {count}.")
    return _complete_sale(game, state, state, tag, ctx, market, where, who, thing, label, count,
                          price, buyers[0], lambda s: s.shows_as is not None)


def _sell_fake(game: Game, state: State, tag: Tag, ctx: TurnContext, market: Market,
               where: Place, who: int, shown_ref: str, count: int) -> tuple[State, Answer]:
    """ITM-FAKE-14/15: a fake sold as what it seems. An honest buyer says what it really is
    (the fake is found out) and pays what that is worth — the buy-back of its own ``cost``
    (OQ-57) — or refuses it (``not-for-sale``, the fake still found out); a dishonest buyer
    takes it as what it seems and pays for that."""
    from .fakes import reveal_stacks

    character = state.characters[who]
    shown = game.items[shown_ref]
    fake_ref = next(s.item for s in reversed(character.bag) if s.shows_as == shown_ref)
    fake = game.items[fake_ref] if fake_ref is not None else None
    wanted = (tag.get("seller") or "").strip()
    named = find_seller(market, wanted) if wanted else None
    buyers = _buyers(market, where, shown.item, named) if not wanted or named is not None else []
    price = buy_back_price(game, state, market, shown.ref, shown.item)
    if fake is None or price is None or not buyers:  # ITM-SELL-4, ITM-DAY-14/15
        return state, refused(tag, reasons.NOT_BOUGHT,
                              f"{shown.label} cannot be sold: nobody here buys it.")
    buyer = buyers[0]
    disguised = [i for i, s in enumerate(character.bag)
                 if s.shows_as == shown_ref and s.item == fake.ref]
    held = sum(character.bag[i].count for i in disguised)
    if held < count:
        return state, refused(tag, reasons.NOT_ENOUGH,
                              f"{character.name} has only {shown.label} ×{held}, not {count}.")
    thing = Thing(fake.label, fake.ref, None, fake.stack_limit)
    if buyer is not None and not buyer.honest:  # ITM-FAKE-15
        new_state, answer = _complete_sale(game, state, state, tag, ctx, market, where, who,
                                           thing, shown.label, count, price, buyer,
                                           lambda s: s.shows_as != shown_ref)
        if answer.ok:  # the answer names what it seemed to be, nothing more (ITM-FAKE-9)
            answer = answer.model_copy(update={"record": {**answer.record, "item": shown.ref}})
        return new_state, answer
    known = reveal_stacks(game, state, who, disguised,
                          f"the {buyer.label if buyer else 'buyer'} knew it", ctx.turn_label)
    own = buy_back_price(game, known, market, fake.ref, fake.item)
    says = (f"The {buyer.label if buyer else 'buyer'} says the {shown.label} is really "
            f"{fake.label}")
    if own is None:  # ITM-FAKE-14: refuses a fake without a price; it is found out all the same
        return known, refused(tag, reasons.NOT_FOR_SALE,
                              f"{says}, and will not buy it.",
                              {"item": fake.ref, "name": fake.label, "was": shown.label})
    return _complete_sale(game, known, known, tag, ctx, market, where, who, thing, fake.label,
                          count, own, buyer, lambda s: s.shows_as is not None,
                          f"{says}. ")


def _complete_sale(game: Game, state: State, before: State, tag: Tag, ctx: TurnContext,
                   market: Market, where: Place, who: int, thing: Thing, label: str, count: int,
                   price: Price, buyer: Seller | None, skip: Callable[[Stack], bool],
                   said: str = "") -> tuple[State, Answer]:
    """ITM-SELL-1..7: take ``count`` of ``thing`` (never a stack ``skip`` holds back) and pay
    for it; refusals return ``before``."""
    character = state.characters[who]
    name = thing.name
    bag, free = take_from_bag(character, thing, name, count,
                              keep=lambda s: skip(s) or cursed_bound(game, state, s))
    if free < count:  # ITM-SELL-3
        return before, refused(tag, reasons.CURSED,
                               f"{label} is cursed and bound to {character.name}: it is never "
                               "sold.")
    total_value = price.value * count
    total = Price(total_value, named_coin(game, state, price.coin, total_value))
    purse = purse_limit(game, market, where)
    counts = purse is not None and purse[0].family.id == price.coin.family.id
    if purse is not None and counts and where.paid_out + total_value > purse[1]:  # OQ-55
        left = Price(max(0, purse[1] - where.paid_out), purse[0])
        left = Price(left.value, named_coin(game, state, purse[0], left.value))
        return before, refused(tag, reasons.PURSE_SPENT,
                               f"The sellers at {where.name} cannot pay {total.text} today: "
                               f"{left.text} of today's purse is left.", {"price": total.text})
    new_state = state.with_bag(who, bag)
    coins = coins_largest_first(game, state, price.coin, total_value)
    for coin_id, n in coins.items():
        new_state, _, left_behind = distribute(game, new_state, coin_thing(game.coins[coin_id]),
                                               n, who)
        if left_behind:  # ITM-SELL-6, OQ-48
            return before, refused(tag, reasons.CANNOT_CARRY,
                                   f"{character.name} cannot carry the coins for {label} "
                                   f"×{count}; nothing was sold.")
    ledger = where.model_copy(update={"paid_out": where.paid_out + total_value}) if counts \
        else where
    to_whom = f" to the {buyer.label}" if buyer is not None else ""
    journal = JournalEntry(turn=ctx.turn_label, text=f"{character.name} sold {label} ×{count}"
                           f"{to_whom} for {total.text}.")  # ITM-SELL-7
    new_state = new_state.model_copy(update={"place": ledger,
                                             "journal": (*state.journal, journal)})
    text = (f"{said}{character.name} sold {label} ×{count}{to_whom} for {total.text}"
            f" ({coin_listing(game, coins, price.coin.family)}).")
    record: dict[str, object] = {
        "price": total.text, "item": thing.item, "name": label, "count": count,
        "who": character.name, "seller": buyer.id if buyer is not None else None,
        "coins": coins,
    }
    return new_state, accepted(tag, text, record)


# ---------------------------------------------------------------------------------------------
# What the GM sees (ITM-MKTV-1..3, ITM-SELL-8, ITM-RISK-2/3)


def _times(level: PriceLevel) -> str:
    return f"{level.label} ×{level.times:g}" + (" (default)" if level.default else "")


def _kinds(game: Game, seller: Seller) -> str:
    """A seller's ``sells`` filters in the ruleset's words: ``Weapon; Storied Gear``."""
    block = game.ruleset.items
    labels: dict[str, str] = {}
    if block is not None:
        for group in (block.rarities, block.categories, block.tags):
            labels.update((row.id, row.label) for row in group)
    return "; ".join(" ".join(labels.get(part, part) for part in (f.rarity, f.category, f.tag)
                              if part is not None) for f in seller.sells)


def market_block(game: Game, state: State) -> str:
    """The MARKET block while the scene is at a place with a market, else ``""``: the place
    and size, price levels, each seller with a dozen wares at the default level cheapest first,
    today's stock, limited wares left, what the sellers pay, and the purse left."""
    market = market_of(game)
    where = state.place
    if market is None or where is None or where.size is None:
        return ""
    size = where.size
    level = default_level(market)
    lines = ["MARKET",
             f"Place: {where.name} ({_size_label(market, size)}), market day {where.day}.",
             "Price levels: " + ", ".join(_times(p) for p in market.prices) + "."]
    priced: list[tuple[int, int, CatalogItem, Price]] = []
    for order, entry in enumerate(game.items.values()):
        price = price_of(game, state, entry.ref, entry.item, level)
        if price is not None:
            priced.append((price.value, order, entry, price))
    priced.sort(key=lambda row: (row[0], row[1]))
    stocks = {s.id: wares for s, wares in day_stock(game, state, market, where)}
    limited_rows: dict[str, str] = {}
    lines.append("Sellers here (wares at the default level, cheapest first; anything they sell "
                 "can be bought by name):")
    for seller in sellers_here(market, size):
        wares = [(entry, price) for _, _, entry, price in priced
                 if in_range(game, state, market, seller, entry, size)]
        if seller is None:
            header = "- everyone here"
        else:
            header = f'- {seller.label} (seller="{seller.id}")'
            if seller.only is not None:
                header += f", sells only to {seller.only.label or 'some buyers'}"
        lines.append(header + ":")
        shown = []
        for entry, price in wares[:WARES_SHOWN]:
            part = f"{entry.label} {price.text}"
            if entry.item.risky and (seller is None or seller.honest):  # ITM-RISK-2/3
                part += f" (warn the buyer first: {entry.item.risky})"
            shown.append(part)
        more = f" … and {len(wares) - WARES_SHOWN} more" if len(wares) > WARES_SHOWN else ""
        lines.append("  " + ("; ".join(shown) + more if shown else "nothing in its range"))
        for entry, _ in wares:
            limit = sold_limit(market, entry.item)
            if limit is not None and entry.ref not in limited_rows:
                left = max(0, day_limit(state, where, entry.ref, limit)
                           - taken_today(where, entry.ref, None))
                limited_rows[entry.ref] = f"{entry.label} {left} left"
        if seller is not None and seller.id in stocks:  # ITM-SELL-8: today's stock
            rows = []
            for entry, rolled in stocks[seller.id]:
                left = max(0, rolled - taken_today(where, entry.ref, seller.id))
                offered = fake_on_offer(game, state, entry) if entry.item.passes_for else entry
                price = (price_of(game, state, offered.ref, offered.item, level)
                         if offered is not None else None)
                if price is not None and offered is not None:
                    truth = f" (FAKE: really {entry.label})" if offered is not entry else ""
                    rows.append(f"{offered.label} ×{left} at {price.text}{truth}")  # ITM-FAKE-7
            lines.append("  Today's stock: " + ("; ".join(rows) if rows else "nothing"))
    if limited_rows:
        rows = list(limited_rows.values())
        more = f" … and {len(rows) - LIMITED_SHOWN} more" if len(rows) > LIMITED_SHOWN else ""
        lines.append("Limited today: " + "; ".join(rows[:LIMITED_SHOWN]) + more + ".")
    if market.buy_back is None:  # ITM-DAY-15
        lines.append("Nobody here buys anything back.")
    else:
        buyers = sellers_here(market, size)
        who = ("anyone here buys anything" if buyers == [None] else
               "; ".join(f"{s.label}: {_kinds(game, s)}" for s in buyers if s is not None))
        lines.append(f"Sellers pay {market.buy_back * 100:g}% of the {level.label} price for "
                     f"what they sell ({who}).")
        purse = purse_limit(game, market, where)
        if purse is not None:
            coin, limit = purse
            left = max(0, limit - where.paid_out)
            shown_left = Price(left, named_coin(game, state, coin, left))
            shown_all = Price(limit, named_coin(game, state, coin, limit))
            lines.append(f"Purse left today: {shown_left.text} of {shown_all.text}.")
    return "\n".join(lines)


def market_instructions(game: Game) -> str:
    """The GM instructions for ``[place:]``, buy, sell and ``day="new"``; ``""`` for a ruleset
    without a market (ITM-MKTV-3, ITM-SELL-8)."""
    market = market_of(game)
    if market is None:
        return ""
    sizes = ", ".join(p.label for p in market.places)
    levels = ", ".join(_times(p) for p in market.prices)
    lines = [
        '- Place: [place: name="<place>" size="<size>"] whenever the scene moves; leave size '
        "out for a place without a market (a road, the wilds).",
        f"  Sizes, smallest first: {sizes}.",
        '- Buy: [inventory: action="buy" item="<name>" count="<n>" level="<level>" '
        'seller="<seller>" who="<character>"] (level and seller are optional).',
        f"  Price levels: {levels}. Haggling or a seller's mood changes the level, never the "
        "price.",
    ]
    if market.buy_back is not None:
        lines.append('- Sell: [inventory: action="sell" item="<name>" count="<n>" '
                     'seller="<seller>" who="<character>"].')
    day_matters = (market.buy_back is not None or any(p.purse for p in market.places)
                   or any(s.stock for s in market.sellers)
                   or any(r.limited is not None for r in market.sold))
    if day_matters:
        lines.append('- A new day at the same place: [place: name="<place>" size="<size>" '
                     'day="new"]; naming another place ends the market day.')
    return "\n".join(lines)
