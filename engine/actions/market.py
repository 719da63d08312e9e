"""Markets: where the party is, what is sold there and at what price, buying, selling, and the
market day (docs/rules/items.md#18-markets: ITM-PLACE, ITM-MKT, ITM-PRICE, ITM-BUY, ITM-DAY,
ITM-SELL, ITM-MKTV).

Nothing here is stored beyond the fold: the place, the day that began there, and the day's
ledger (what was taken of limited wares and stock, what the purse paid out) live on
:class:`~engine.rules.state.Place`, which the fold rebuilds from the visible replies. Every
roll of a day comes from a stream keyed by the place and the position of the ``[place:]``
answer that began the day, so a day always rolls the same shelf (ITM-DAY-4/5, OQ-50).
"""

from __future__ import annotations

from collections.abc import Callable

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import Thing, cursed_bound, find_thing, item_of, take_from_bag
from ..rules.carry import distribute
from ..rules.context import TurnContext
from ..rules.fakes import add_disguised, reveal_stacks
from ..rules.game import CatalogItem, CoinInfo, Game
from ..rules.market import (
    LIMITED_SHOWN,
    WARES_SHOWN,
    Offer,
    Price,
    buy_back_price,
    buyers_of,
    coins_largest_first,
    day_limit,
    day_stock,
    default_level,
    fake_on_offer,
    find_level,
    find_seller,
    find_size,
    in_range,
    market_of,
    meets_only,
    named_coin,
    offers,
    price_of,
    purse_limit,
    sellers_here,
    size_label,
    sold_at,
    sold_from,
    sold_limit,
    taken_today,
    took,
)
from ..rules.money import (
    coin_thing,
    exchange_coins,
    exchanged,
    family_coins,
    held_coins,
    make_change,
)
from ..rules.state import Character, Held, JournalEntry, Place, Stack, State
from ..ruleset.market import Market, PriceLevel, Seller
from .answers import Answer, accepted, refused
from .attrs import COUNT, HELD, RAW, TEXT, WHO
from .declare import Needs, Request, action, attr, request
from .examples import PLACE, Party, count_of, example, plain_item
from .fakes import notice
from .money import coin_listing, exchange_text

# ---------------------------------------------------------------------------------------------
# Prices (ITM-PRICE-1..6)


# ---------------------------------------------------------------------------------------------
# Where things are sold (ITM-MKT-3..21)


# ---------------------------------------------------------------------------------------------
# The market day (ITM-DAY-2..12)


# ---------------------------------------------------------------------------------------------
# [place:] (ITM-PLACE-1..6, ITM-DAY-2/3)


@request
class PlaceRequest(Request):
    """Where the scene is; a new place or ``day="new"`` begins a market day (ITM-PLACE-1..4,
    ITM-DAY-2/3)."""

    name: str = attr(TEXT, "the place's name",
                     missing='Name the place: [place: name="<name>" size="<size>"].')
    size: str = attr(TEXT, "the place's size, one of the market's sizes; leave it out for a "
                     "place without a market", shown="no market")
    day: str = attr(TEXT, 'day="new" begins a new market day at the same place')


def _size(game: Game) -> str | None:
    """The size an example place has: a middling one (a village among hamlet … city)."""
    market = market_of(game)
    places = market.places if market is not None else []
    return places[(len(places) - 1) // 2].label if places else None


def _teach_place(game: Game, party: Party) -> list[str]:
    market = market_of(game)
    if market is None:
        return []
    sizes = ", ".join(p.label for p in market.places)
    return ["- The scene moves: " + example("place", name=PLACE, size=_size(game))
            + "; leave size out for a place without a market (a road, the wilds).",
            f"  Sizes, smallest first: {sizes}."]


@action("place", None, PlaceRequest, teach=_teach_place, reasons=(reasons.UNKNOWN_SIZE,),
        record={"name": "the place", "size": "its size's id, or null", "day": "the market day"})
def place(game: Game, state: State, request: PlaceRequest,
          ctx: TurnContext) -> tuple[State, Answer]:
    """``[place: name="<name>" size="<size>" day="new"]``: where the scene is (ITM-PLACE-1..4);
    a new place or ``day="new"`` begins a market day (ITM-DAY-2/3, OQ-51/52)."""
    tag = request.tag
    name = " ".join(request.name.split())[:120]
    market = market_of(game)
    size_text = request.size
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
    day_text = request.day
    notes: tuple[str, ...] = ()
    if day_text and day_text.casefold() != "new":
        notes = (f'ignored day="{day_text[:40]}": only day="new" begins a new day',)
    current = state.place
    same = (current is not None and current.size == size
            and current.name.casefold() == name.casefold())
    # ITM-DAY-5: the day is keyed by where this answer stands in the transcript, never the swipe.
    began = (*ctx.turn_key[:2], ctx.ordinal)
    label = size_label(market, size)
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


HAS_MARKET = Needs(lambda game: market_of(game) is not None, reasons.NO_MARKET,
                   "This ruleset has no market: use pay and add, or earn and remove, instead.")


def _no_place(state: State, tag: Tag, verb: str) -> Answer:
    """ITM-BUY-8, ITM-SELL-4, OQ-46."""
    where = (f"{state.place.name} has no market" if state.place is not None
             else "no place is named")
    return refused(tag, reasons.NO_PLACE,
                   f'Nothing can be {verb} here: {where} (name one first with [place: '
                   'name="<name>" size="<size>"]).')


BUY_RECORD = {"price": "what it cost in all", "item": "the item's reference",
              "name": "the item's name", "count": "how many", "who": "who bought",
              "seller": "the seller's id, or null", "level": "the price level's id",
              "paid": "the coins given, by id", "change": "the coins that came back, by id",
              "stock": "true when it came out of the day's stock",
              "noticed": "held: the companion who noticed a fake (ITM-NOTICE-3)",
              "check": "held: the check that noticed it", "about": "held: what was noticed",
              "says": "held: what the companion says"}
SELL_RECORD = {"price": "what it fetched in all", "item": "the item's reference",
               "name": "the item's name", "count": "how many", "who": "who sold",
               "seller": "the buyer's id, or null", "coins": "the coins received, by id"}


@request
class Buy(Request):
    """Pay and take an item, all or nothing (ITM-BUY-1..15)."""

    item: str = attr(TEXT, "the ruleset item to buy",
                     missing='Say what to buy: [inventory: action="buy" item="<name>"].')
    count: int = attr(COUNT, "how many", default=1)
    who: int = attr(WHO, "who buys", shown="the player")
    level: str | None = attr(RAW, "the price level (haggling or a seller's mood changes the "
                             "level, never the price)", shown="the market's default level")
    seller: str = attr(TEXT, "the seller to buy from", shown="the first who offers it")


@request
class Sell(Request):
    """Give an item and take its buy-back price in coins, largest first (ITM-SELL-1..7)."""

    item: str = attr(HELD, "the item to sell",
                     missing='Say what to sell: [inventory: action="sell" item="<name>"].')
    count: int = attr(COUNT, "how many", default=1)
    who: int = attr(WHO, "who sells", shown="the player")
    seller: str = attr(TEXT, "the buyer to sell to", shown="the first who buys it")


def _market_place(state: State, tag: Tag, verb: str) -> Place | Answer:
    """What buy and sell both check after their attributes: a market place (ITM-BUY-8)."""
    where = state.place
    if where is None or where.size is None:
        return _no_place(state, tag, "bought" if verb == "buy" else "sold")
    return where


def _pay(game: Game, character: Character, coin: CoinInfo,
         amount: int) -> tuple[tuple[Stack, ...], dict[str, int], dict[str, int]] | str:
    """ITM-BUY-5: pay ``amount`` out of one bag like a payment, with change (ITM-PAY-3..4);
    the new bag and what was paid and given back, or a refusal reason."""
    family = coin.family
    plan = make_change(family_coins(family), held_coins(character, family), amount)
    if plan is None:
        return reasons.CANNOT_AFFORD
    paid, change = plan
    bag = exchange_coins(game, character, paid, change)
    if bag is None:
        return reasons.CANNOT_CARRY
    return bag, paid, change


def _pick_offer(game: Game, state: State, request: Buy, market: Market, where: Place,
                entry: CatalogItem, character: Character, count: int) -> Offer | Answer:
    """ITM-BUY-3, ITM-BUY-11..13, ITM-BUY-15: the first seller here (or the named one) who
    offers the item to this buyer with enough left today."""
    assert where.size is not None
    tag = request.tag
    sellers = sellers_here(market, where.size)
    wanted = request.seller
    if wanted:
        named = find_seller(market, wanted)
        if named is None:  # OQ-47: a seller the ruleset does not have
            known = ", ".join(s.label for s in market.sellers) or "none by name"
            return refused(tag, reasons.NO_SELLER,
                           f'There is no seller "{wanted[:60]}" in this market (sellers: {known}).')
        if named not in sellers:
            return refused(tag, reasons.NO_SELLER,
                           f"There is no {named.label} at {where.name} "
                           f"({size_label(market, where.size)}).")
        sellers = [named]
    found = offers(game, state, market, where, entry, sellers, named=bool(wanted))
    if not found:
        if not sold_at(market, entry.item, where.size):  # ITM-BUY-11
            smallest = size_label(market, sold_from(market, entry.item))
            return refused(tag, reasons.NOT_HERE,
                           f"{entry.label} is not sold at a {size_label(market, where.size)}; "
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
    thing = Thing(shown.label, fake.ref, None, fake.stack_limit)
    _, _, left = distribute(game, state, thing, count, who)
    character = state.characters[who]
    bag = add_disguised(character.bag, fake, shown, count) if not left else None
    if bag is None:
        return None
    return state.with_bag(who, bag)


def _noticed_before_paying(game: Game, state: State, tag: Tag, ctx: TurnContext, where: Place,
          entry: CatalogItem, who: int, offer: Offer) -> tuple[State, Answer] | None:
    """ITM-NOTICE-1..7: before a buy that would yield a fake, the other party members may
    notice; then nothing is paid and the buy is held — once a day: asked again, it goes
    through. The held buy is written on the day's ledger (that is all that changes)."""
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


def _teach_buy(game: Game, party: Party) -> list[str]:
    market = market_of(game)
    assert market is not None
    levels = ", ".join(_times(p) for p in market.prices)
    thing = plain_item(game)
    if thing is None:
        return []
    return ["- Buying at the market: " + example(
                "inventory", action="buy", item=thing.label, count=count_of(thing, 2),
                who=party.hero) + "; level= (a price level) and seller= are optional.",
            f"  Price levels: {levels}. Haggling or a seller's mood changes the level, never "
            "the price."]


@action("inventory", "buy", Buy, needs=HAS_MARKET, teach=_teach_buy,
        reasons=(reasons.NO_PLACE, reasons.UNKNOWN_LEVEL, reasons.UNKNOWN_ITEM,
                 reasons.NOT_FOR_SALE, reasons.NOT_HERE, reasons.NO_SELLER, reasons.NOT_TO_YOU,
                 reasons.SOLD_OUT, reasons.CANNOT_AFFORD, reasons.CANNOT_CARRY, reasons.HELD),
        record=BUY_RECORD)
def buy(game: Game, state: State, request: Buy, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="buy" item=... count=... level=... seller=... who=...]``: pay and
    take the item, all or nothing (ITM-BUY-1..15)."""
    tag, name, count, who = request.tag, request.item, request.count, request.who
    market = market_of(game)
    assert market is not None  # HAS_MARKET
    where = _market_place(state, tag, "buy")
    if isinstance(where, Answer):
        return state, where
    level = find_level(market, request.level)
    if level is None:  # ITM-BUY-9
        known = ", ".join(f'"{p.label}"' for p in market.prices)
        return state, refused(tag, reasons.UNKNOWN_LEVEL,
                              f'"{(request.level or "")[:60]}" is not a price level '
                              f"(levels: {known}).")
    entry = game.find_item(name)
    if entry is None:  # ITM-BUY-9
        return state, refused(tag, reasons.UNKNOWN_ITEM,
                              f'"{name[:80]}" is not an item of this ruleset.')
    unit = price_of(game, state, entry.ref, entry.item, level)
    if unit is None:  # ITM-BUY-10, ITM-MKT-19..21
        return state, refused(tag, reasons.NOT_FOR_SALE, f"{entry.label} is not for sale.")
    character = state.characters[who]
    offer = _pick_offer(game, state, request, market, where, entry, character, count)
    if isinstance(offer, Answer):
        return state, offer
    if offer.fake is not None:
        held = _noticed_before_paying(game, state, tag, ctx, where, entry, who, offer)
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
        ledger = took(where, taken_ref, offer.seller.id, count)
    elif offer.left is not None:
        ledger = took(where, entry.ref, None, count)
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


def _teach_sell(game: Game, party: Party) -> list[str]:
    market = market_of(game)
    assert market is not None
    lines = []
    thing = plain_item(game)
    if market.buy_back is not None and thing is not None:
        lines.append("- Selling: " + example("inventory", action="sell", item=thing.label,
                                                   who=party.hero) + "; seller= is optional.")
    day_matters = (market.buy_back is not None or any(p.purse for p in market.places)
                   or any(s.stock for s in market.sellers)
                   or any(r.limited is not None for r in market.sold))
    if day_matters:
        lines.append("- A new day at the same place: "
                     + example("place", name=PLACE, size=_size(game), day="new")
                     + "; naming another place ends the market day.")
    return lines


@action("inventory", "sell", Sell, needs=HAS_MARKET, teach=_teach_sell,
        reasons=(reasons.NO_PLACE, reasons.NOT_HELD, reasons.NOT_FOR_SALE, reasons.NOT_BOUGHT,
                 reasons.NOT_ENOUGH, reasons.PURSE_SPENT, reasons.CANNOT_CARRY,
                 reasons.CURSED),
        record=SELL_RECORD)
def sell(game: Game, state: State, request: Sell, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="sell" item=... count=... seller=... who=...]``: take the item and
    pay its buy-back price in coins, largest first (ITM-SELL-1..7)."""
    tag, name, count, who = request.tag, request.item, request.count, request.who
    market = market_of(game)
    assert market is not None  # HAS_MARKET
    where = _market_place(state, tag, "sell")
    if isinstance(where, Answer):
        return state, where
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
        return _sell_fake(game, state, tag, ctx, market, where, who, thing.item, count,
                          request.seller)
    if held == 0:  # ITM-SELL-5
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {label}.")
    item = item_of(game, state, thing.item) if thing is not None else None
    price = (buy_back_price(game, state, market, thing.item, item)
             if thing is not None and thing.item is not None and item is not None else None)
    if item is None or thing is None or thing.item is None or (
            price is None and market.buy_back is not None):  # ITM-SELL-4, ITM-MKT-19..21
        return state, refused(tag, reasons.NOT_FOR_SALE, f"{label} has no price: nobody buys it.")
    wanted = request.seller
    named = find_seller(market, wanted) if wanted else None
    buyers = buyers_of(market, where, item, named) if not wanted or named is not None else []
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
               where: Place, who: int, shown_ref: str, count: int,
               wanted: str) -> tuple[State, Answer]:
    """ITM-FAKE-14/15: a fake sold as what it seems. An honest buyer says what it really is
    (the fake is found out) and pays what that is worth — the buy-back of its own ``cost``
    (OQ-57) — or refuses it (``not-for-sale``, the fake still found out); a dishonest buyer
    takes it as what it seems and pays for that."""
    character = state.characters[who]
    shown = game.items[shown_ref]
    fake_ref = next(s.item for s in reversed(character.bag) if s.shows_as == shown_ref)
    fake = game.items[fake_ref] if fake_ref is not None else None
    named = find_seller(market, wanted) if wanted else None
    buyers = buyers_of(market, where, shown.item, named) if not wanted or named is not None else []
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
             f"Place: {where.name} ({size_label(market, size)}), market day {where.day}.",
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
    if market_of(game) is None:
        return ""
    party = Party()
    return "\n".join([*_teach_place(game, party), *_teach_buy(game, party),
                      *_teach_sell(game, party)])
