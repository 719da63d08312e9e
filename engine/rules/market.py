"""Markets by the ruleset's own numbers: prices and levels, place sizes and sellers, and what
a market day has on its shelves (ITM-MKT-*, ITM-DAY-*)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction

from ..dice import Stream, parse_dice, roll
from ..ruleset import Item
from ..ruleset.loot import ItemFilter
from ..ruleset.market import Market, PriceLevel, Seller
from ..ruleset.market import Place as PlaceSize
from .carry import exact
from .fakes import passes_for
from .game import CatalogItem, CoinInfo, Game
from .layers import hidden_items, removed_coins
from .loot import roll_table
from .money import count_text, family_coins
from .sheet import SheetView
from .state import Character, Place, State, Taken

WARES_SHOWN = 12  # ITM-MKTV-1: a dozen wares per seller in the MARKET block


LIMITED_SHOWN = 24  # the most limited wares the MARKET block lists


HALF = Fraction(1, 2)


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


def fake_offers(game: Game, state: State, place: Place, entry: CatalogItem, seller: Seller,
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
            fakes += [o for o in fake_offers(game, state, place, entry, seller, wares) if o.left]
        rolled = sum(n for ware, n in wares
                     if ware.ref == entry.ref and ware.item.passes_for is None)
        if rolled:
            found.append(Offer(seller, True, max(0, rolled - taken_today(place, entry.ref,
                                                                         seller.id))))
    return fakes + found


def took(place: Place, ref: str, seller: str | None, count: int) -> Place:
    """The day's ledger with ``count`` more taken."""
    taken = list(place.taken)
    for index, entry in enumerate(taken):
        if entry.item == ref and entry.seller == seller:
            taken[index] = entry.model_copy(update={"count": entry.count + count})
            break
    else:
        taken.append(Taken(item=ref, seller=seller, count=count))
    return place.model_copy(update={"taken": tuple(taken)})


def size_label(market: Market | None, size: str | None) -> str:
    if size is None:
        return "no market"
    found = find_size(market, size)
    return found.label if found is not None else size


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


def buyers_of(market: Market, where: Place, item: Item,
            named: Seller | None) -> list[Seller | None]:
    """ITM-DAY-14: the sellers here (or the named one) whose ``sells`` select the item."""
    assert where.size is not None
    here = sellers_here(market, where.size)
    if named is not None:
        here = [s for s in here if s == named]
    return [s for s in here if seller_takes(s, item)]
