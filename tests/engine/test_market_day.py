"""The market day, selling and what the GM sees (spec/items.md §18.10–18.12; ITM-DAY-*,
ITM-SELL-*, ITM-MKTV-*)."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from helpers import answer, fixture_json
from scipy.stats import chisquare
from test_market import (
    GAME,
    MARKET,
    held,
    market_document,
    market_game,
    market_party,
    one,
    purse,
    start,
)

from engine import load_ruleset
from engine.actions.market import market_block, market_instructions
from engine.rules.market import day_limit, day_stock
from engine.rules.state import Place

BUY_LANTERN = '[inventory: action="buy" item="Silver lantern" seller="chandler"]'


def lanterns_left(state) -> int:
    assert state.place is not None
    return day_limit(state, state.place, "kit/silver-lantern", "1d2") - sum(
        t.count for t in state.place.taken if t.item == "kit/silver-lantern" and t.seller is None)


# --- The day (ITM-DAY-2..5, OQ-50..52) ---------------------------------------------------------

def test_itm_day_3_day_new_begins_a_new_day_at_the_same_place():
    state = start()
    new, reply = one(GAME, state, '[place: name="Millbrook" size="town" day="new"]', (0, 4))
    assert reply.ok and reply.text == "A new day at Millbrook (market town): market day 2."
    assert new.place is not None and new.place.day == 2 and new.place.began == (0, 4, 0)


def test_oq_52_naming_the_same_place_again_continues_the_day():
    state, _ = one(GAME, start(), '[inventory: action="buy" item="Poultice" count="2"]')
    new, reply = one(GAME, state, '[place: name="millbrook" size="market town"]', (0, 2))
    assert reply.ok and new is state
    assert reply.text == "The party is still at Millbrook (market town), market day 1."


def test_itm_day_2_oq_51_another_place_ends_the_day():
    state, _ = one(GAME, start(), '[inventory: action="buy" item="Poultice" count="3"]')
    state, _ = one(GAME, state, '[place: name="Ashford" size="hamlet"]', (0, 2))
    state, reply = one(GAME, state, '[place: name="Millbrook" size="town"]', (0, 3))
    assert reply.text == "The party is at Millbrook (market town): market day 1."
    assert state.place is not None and state.place.taken == () and state.place.began == (0, 3, 0)
    _, reply = one(GAME, state, '[inventory: action="buy" item="Poultice" count="3"]', (0, 4))
    assert reply.ok


def test_itm_day_4_5_a_day_always_rolls_the_same_shelf():
    """The shelf depends on the day's key only: any later turn of the day, any process."""
    state = start()
    later, _ = one(GAME, state, '[inventory: action="buy" item="Rope"]', (0, 7))
    assert market_block(GAME, state).split("Purse")[0] == market_block(GAME, later).split(
        "Purse")[0]
    again = start(game=market_game())
    assert market_block(market_game(), again) == market_block(GAME, state)


def test_oq_50_the_day_key_is_the_place_answer_position_not_the_swipe():
    state = market_party(GAME).model_copy(update={"dice": "per-swipe"})
    first, _ = answer(GAME, state, '[place: name="M" size="town"]', (1, 2, 0))
    second, _ = answer(GAME, state, '[place: name="M" size="town"]', (1, 2, 5))
    assert first.place == second.place and first.place is not None
    assert first.place.began == (1, 2, 0)


def test_itm_day_6_dice_limit_is_rolled_per_day_chi_square():
    """"limited": "1d2" over 4,000 days: 1 and 2 equally often."""
    state = market_party(GAME)
    counts = Counter(day_limit(state, Place(name="M", size="town", began=(0, day, 0)),
                               "kit/silver-lantern", "1d2") for day in range(4000))
    assert set(counts) == {1, 2}
    assert chisquare([counts[1], counts[2]]).pvalue > 1e-4


def test_itm_day_6_9_numbered_limit_then_sold_out_until_a_new_day():
    state, reply = one(GAME, start(), '[inventory: action="buy" item="Poultice" count="2"]')
    assert reply.ok
    state, reply = one(GAME, state, '[inventory: action="buy" item="Poultice"]', (0, 2))
    assert reply.ok
    new, reply = one(GAME, state, '[inventory: action="buy" item="Poultice"]', (0, 3))
    assert reply.reason == "sold-out" and new is state
    state, _ = one(GAME, state, '[place: name="Millbrook" size="town" day="new"]', (0, 4))
    _, reply = one(GAME, state, '[inventory: action="buy" item="Poultice"]', (0, 5))
    assert reply.ok


def test_itm_day_6_9_dice_limit_sells_out():
    state = start()
    for turn in range(lanterns_left(state)):
        state, reply = one(GAME, state, BUY_LANTERN, (0, 1 + turn))
        assert reply.ok
    new, reply = one(GAME, state, BUY_LANTERN, (0, 9))
    assert reply.reason == "sold-out" and new is state


def test_itm_day_7_a_limit_without_a_place_is_sold_everywhere():
    _, reply = one(GAME, start('name="Ashford" size="hamlet"'),
                   '[inventory: action="buy" item="Poultice" count="3"]')
    assert reply.ok
    new_state = start('name="Ashford" size="hamlet"')
    new, reply = one(GAME, new_state, '[inventory: action="buy" item="Poultice" count="4"]')
    assert reply.reason == "sold-out" and new is new_state


def test_itm_day_8_own_limit_first_then_the_first_rule_naming_a_limit():
    """Fine rope: its own limit 1 at a city. Storied charm: its own place (hamlet), its limit
    from the storied rule (1d2)."""
    state, reply = one(GAME, start('name="Caer" size="city"'),
                       '[inventory: action="buy" item="Fine rope"]')
    assert reply.ok
    new, reply = one(GAME, state, '[inventory: action="buy" item="Fine rope"]', (0, 2))
    assert reply.reason == "sold-out" and new is state
    hamlet = start('name="Ashford" size="hamlet"')
    assert hamlet.place is not None
    rolled = day_limit(hamlet, hamlet.place, "kit/storied-charm", "1d2")
    _, reply = one(GAME, hamlet, f'[inventory: action="buy" item="Storied charm" count="{rolled}"]')
    assert reply.ok
    new, reply = one(GAME, hamlet,
                     f'[inventory: action="buy" item="Storied charm" count="{rolled + 1}"]')
    assert reply.reason == "sold-out" and new is hamlet


def test_itm_day_10_11_stock_is_sold_by_that_seller_alone_as_many_as_rolled():
    """The peddler's pack yields silver lanterns (storied: from a town) even at a hamlet; the
    chandler has none there."""
    state = start('name="Ashford" size="hamlet"')
    assert state.place is not None
    stock = {s.id: w for s, w in day_stock(GAME, state, GAME.ruleset.items.market, state.place)}  # type: ignore[union-attr,arg-type]
    rolled = dict((e.ref, n) for e, n in stock["peddler"])["kit/silver-lantern"]
    new, reply = one(GAME, state, BUY_LANTERN)
    assert reply.reason == "not-here" and new is state
    for turn in range(rolled):
        state, reply = one(GAME, state, '[inventory: action="buy" item="Silver lantern"]',
                           (0, 1 + turn))
        assert reply.ok and reply.record["seller"] == "peddler" and reply.record["stock"]
    new, reply = one(GAME, state, '[inventory: action="buy" item="Silver lantern"]', (0, 9))
    assert reply.reason == "sold-out" and new is state


def test_itm_day_10_stock_count_is_rolled_once_a_day_chi_square():
    """"count": "1d3" on the peddler's pack over 3,000 days: uniform on 1..3."""
    market = GAME.ruleset.items.market  # type: ignore[union-attr]
    state = market_party(GAME)
    counts: Counter[int] = Counter()
    for day in range(3000):
        place = Place(name="Ashford", size="hamlet", began=(0, day, 0))
        stock = {s.id: w for s, w in day_stock(GAME, state, market, place)}  # type: ignore[arg-type]
        counts[stock["peddler"][0][1]] += 1
    assert set(counts) == {1, 2, 3}
    assert chisquare([counts[1], counts[2], counts[3]]).pvalue > 1e-4


def test_itm_day_11_fake_5_stock_never_yields_coins_cursed_items_or_fakes():
    document = market_document()
    tables = document["items"]["lootTables"]
    tables[-1]["rolls"] = 6
    tables[-1]["entries"] = [{"coins": "shilling"}, {"item": "kit/grave-ring"},
                             {"item": "kit/gilt-lantern"}, {"item": "kit/old-map"}]
    game = load_ruleset(document)
    state = start('name="Ashford" size="hamlet"', game)
    assert state.place is not None
    stock = {s.id: w for s, w in day_stock(game, state, game.ruleset.items.market, state.place)}  # type: ignore[union-attr,arg-type]
    assert stock["peddler"] == []
    assert "Today's stock: nothing" in market_block(game, state)


def test_itm_day_12_only_applies_to_stock():
    sellers = copy.deepcopy(MARKET["sellers"])
    sellers[3]["only"] = {"value": {"abilityScore": "heart"}, "atLeast": 3, "label": "the kind"}
    game = market_game(sellers=sellers)
    state = start('name="Ashford" size="hamlet"', game)
    bram = state.characters[1]
    state = state.with_character(1, bram.model_copy(update={"bag": state.characters[0].bag}))
    new, reply = one(game, state, '[inventory: action="buy" item="Silver lantern"]')
    assert reply.reason == "not-to-you" and new is state
    _, reply = one(game, state, '[inventory: action="buy" item="Silver lantern" who="Bram"]')
    assert reply.ok


# --- Selling (ITM-SELL-1..7, ITM-DAY-13..17) ---------------------------------------------------

def test_itm_sell_1_2_7_sell_pays_the_buy_back_price_largest_coins_first():
    state = start()
    new, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" count="1" '
                                  'seller="chandler" who="Ada"]')
    assert reply.ok and reply.record["price"] == "4 shillings"  # ITM-SELL-7, exact string
    assert reply.text == "Ada sold Leather coat ×1 to the chandler for 4 shillings (shillings ×4)."
    assert held(new, "Ada", "Leather coat") == 2 and purse(new) == purse(state) + 48
    assert new.journal[-1].text == "Ada sold Leather coat ×1 to the chandler for 4 shillings."
    assert new.place is not None and new.place.paid_out == 48
    new, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" count="2"]')
    assert reply.record["coins"] == {"crown": 1, "shilling": 3}  # 96 pennies, largest first


def test_itm_sell_2_coins_the_layers_leave():
    state = start().model_copy(update={"layers": ("low-magic",)})
    _, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" count="2"]')
    assert reply.record["coins"] == {"shilling": 8}


@pytest.mark.parametrize(("item", "price", "coins"), [
    ("Hand axe", "18 pennies", {"shilling": 1, "penny": 6}),  # 36 × 0.5; ITM-MKT-17: unsold
    ("Torch", "1 penny", {"penny": 1}),  # OQ-54: 0.5 rounds half up
])
def test_itm_day_13_oq_54_buy_back_prices(item: str, price: str, coins: dict[str, int]):
    state = start()
    character = state.characters[0]
    torch = character.bag[3].model_copy(
        update={"name": "Torch", "item": "kit/torch", "count": 1, "equipped": False})
    extra = (*character.bag, torch)
    state = state.with_character(0, character.model_copy(update={"bag": extra}))
    _, reply = one(GAME, state, f'[inventory: action="sell" item="{item}"]')
    assert reply.ok and (reply.record["price"], reply.record["coins"]) == (price, coins)


def test_itm_day_14_only_a_seller_of_that_kind_buys_it():
    state = start()
    new, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" seller="smith"]')
    assert reply.reason == "not-bought" and new is state
    assert reply.text == 'Leather coat cannot be sold: no seller "smith" here buys Leather coat.'
    hamlet = start('name="Ashford" size="hamlet"')  # no smith at a hamlet
    new, reply = one(GAME, hamlet, '[inventory: action="sell" item="Hand axe"]')
    assert reply.reason == "not-bought" and new is hamlet
    game = market_game(sellers=[])  # without sellers anyone buys
    _, reply = one(game, start(game=game), '[inventory: action="sell" item="Hand axe"]')
    assert reply.ok and reply.record["seller"] is None


def test_itm_day_15_without_buy_back_nobody_buys():
    document = market_document()
    del document["items"]["market"]["buyBack"]
    game = load_ruleset(document)
    state = start(game=game)
    new, reply = one(game, state, '[inventory: action="sell" item="Leather coat"]')
    assert reply.reason == "not-bought" and new is state
    assert reply.text == "Leather coat cannot be sold: nobody here buys anything back."


def test_itm_day_16_17_oq_55_the_purse_limits_a_days_sales():
    """A hamlet pays out 10 shillings a day: two coats (8 shillings), not a third."""
    state = start('name="Ashford" size="hamlet"')
    state, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" count="2"]')
    assert reply.ok
    new, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat"]', (0, 2))
    assert reply.reason == "purse-spent" and new is state
    assert reply.text == ("The sellers at Ashford cannot pay 4 shillings today: 2 shillings of "
                          "today's purse is left.")
    assert "Purse left today: 2 shillings of 10 shillings." in market_block(GAME, state)
    _, reply = one(GAME, state, '[inventory: action="sell" item="Potion of healing"]', (0, 3))
    assert reply.reason == "not-held"
    state, _ = one(GAME, state, '[inventory: action="buy" item="Potion of healing"]', (0, 4))
    state, reply = one(GAME, state, '[inventory: action="sell" item="Potion of healing"]', (0, 5))
    assert reply.ok and reply.record["price"] == "25 gold pieces"  # another family: not counted
    state, _ = one(GAME, state, '[place: name="Ashford" size="hamlet" day="new"]', (0, 6))
    _, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat"]', (0, 7))
    assert reply.ok


def test_itm_day_17_without_a_purse_sellers_buy_without_limit():
    state = start('name="Ashford" size="village"')
    state, reply = one(GAME, state, '[inventory: action="sell" item="Leather coat" count="3"]')
    assert reply.ok and state.place is not None and state.place.paid_out == 0


def test_itm_sell_3_a_bound_cursed_item_is_never_sold():
    state = start()
    ring = state.characters[0].bag[3].model_copy(
        update={"name": "Grave ring", "item": "kit/grave-ring", "bound": True, "equipped": False})
    state = state.with_character(0, state.characters[0].model_copy(
        update={"bag": (*state.characters[0].bag, ring)}))
    new, reply = one(GAME, state, '[inventory: action="sell" item="Grave ring"]')
    assert reply.reason == "cursed" and new is state


SELL_REFUSALS = [
    ("ITM-SELL-4", None, 'item="Leather coat"', "no-place"),
    ("ITM-SELL-4", 'name="The Old Road"', 'item="Leather coat"', "no-place"),
    ("ITM-SELL-4", 'name="M" size="town"', 'item="Leather coat" seller="innkeeper"', "not-bought"),
    ("ITM-SELL-4", 'name="M" size="town"', 'item="Leather coat" seller="baker"', "not-bought"),
    ("ITM-SELL-5", 'name="M" size="town"', 'item="Rope"', "not-held"),
    ("ITM-SELL-5", 'name="M" size="town"', 'item="Leather coat" count="4"', "not-enough"),
    ("engine", 'name="M" size="town"', 'item="shilling"', "not-for-sale"),
    ("engine", 'name="M" size="town"', 'count="1"', "missing-attribute"),
    ("engine", 'name="M" size="town"', 'item="Leather coat" count="-1"', "bad-count"),
]


@pytest.mark.parametrize(("rule", "where", "attrs", "reason"), SELL_REFUSALS,
                         ids=[f"{r[0]}-{r[3]}-{i}" for i, r in enumerate(SELL_REFUSALS)])
def test_itm_sell_4_5_refusals_change_nothing(rule: str, where: str | None, attrs: str,
                                              reason: str):
    state = market_party(GAME) if where is None else start(where)
    new, reply = one(GAME, state, f'[inventory: action="sell" {attrs}]')
    assert (reply.ok, reply.reason) == (False, reason) and new is state


def test_itm_sell_4_an_item_without_a_price_is_not_for_sale():
    state = start()
    character = state.characters[0]
    map_stack = character.bag[3].model_copy(update={"name": "Old map", "item": "kit/old-map"})
    state = state.with_character(0, character.model_copy(update={"bag": (*character.bag,
                                                                         map_stack)}))
    new, reply = one(GAME, state, '[inventory: action="sell" item="Old map"]')
    assert reply.reason == "not-for-sale" and new is state


def test_itm_sell_6_coins_the_bag_cannot_carry_change_nothing():
    document = market_document()
    document["items"]["carry"] = {"stat": "bulk", "encumberedAbove": {"const": 27},
                                  "limit": {"const": 29}}
    document["items"]["currencies"][0]["perWeight"] = 1  # every coin weighs one
    game = load_ruleset(document)
    state = start(game=game)  # 22 coins + axe 1 + coats 6 = 29: at the limit
    new, reply = one(game, state, '[inventory: action="sell" item="Hand axe"]')
    assert reply.reason == "cannot-carry" and new is state  # 18 pennies = 7 coins for 1 weight
    _, reply = one(game, state, '[inventory: action="sell" item="Leather coat" count="2"]')
    assert reply.ok  # the coats weighed 4; a crown and three shillings weigh 4


# --- What the GM sees (ITM-MKTV-1..3, ITM-SELL-8, ITM-RISK-2/3) --------------------------------

def test_itm_mktv_1_sell_8_the_market_block():
    state, _ = one(GAME, start('name="Ashford" size="hamlet"'),
                   '[inventory: action="sell" item="Leather coat"]')
    block = market_block(GAME, state)
    assert block.splitlines()[:3] == [
        "MARKET", "Place: Ashford (hamlet), market day 1.",
        "Price levels: cheap ×0.75, fair ×1 (default), dear ×1.5, steep ×1.2."]
    assert ("  Torch 1 penny; Rope 4 pennies; Storied charm 5 pennies; Poultice 6 pennies; "
            "Leather coat 8 shillings; Potion of healing 50 gold pieces") in block
    assert "- smith" not in block and "chapel" not in block  # not found at a hamlet
    assert "Limited today: Storied charm" in block and "Poultice 3 left" in block
    assert "Sellers pay 50% of the fair price for what they sell" in block
    assert "Purse left today: 6 shillings of 10 shillings." in block
    assert "Today's stock: Silver lantern ×" in block


def test_itm_mktv_1_a_dozen_wares_cheapest_first():
    document = market_document()
    kit = next(c for c in document["catalogs"] if c["id"] == "kit")
    kit["entries"] += [{"id": f"trinket-{n}", "label": f"Trinket {n}",
                        "item": {"category": "armor", "cost": {"amount": 20 - n, "unit": "penny"}}}
                       for n in range(14)]
    game = load_ruleset(document)
    block = market_block(game, start(game=game))
    chandler = next(line for line in block.splitlines()
                    if line.startswith("  Torch 1 penny"))
    assert chandler.count(";") == 11 and chandler.endswith("… and 9 more")


def test_itm_risk_2_3_honest_sellers_warn():
    block = market_block(GAME, start())
    assert "Holy water 2 shillings (warn the buyer first: it burns the unworthy)" in block
    assert "sells only to wardens of Resolve 3 or more" in block
    sellers = copy.deepcopy(MARKET["sellers"])
    sellers[4]["honest"] = False
    game = market_game(sellers=sellers)
    assert "warn the buyer" not in market_block(game, start(game=game))


def test_itm_mktv_1_no_block_without_a_market_place():
    assert market_block(GAME, market_party(GAME)) == ""
    assert market_block(GAME, start('name="The Old Road"')) == ""
    plain = load_ruleset(fixture_json("rulesets/harrow.json"))
    assert market_block(plain, start(game=GAME)) == ""


def test_itm_mktv_3_instructions_only_with_a_market():
    text = market_instructions(GAME)
    assert '[place: name="Millbrook" size="village"]' in text  # issue 39: a filled example
    assert 'action="buy"' in text and 'action="sell"' in text and 'day="new"' in text
    assert "Sizes, smallest first: hamlet, village, market town, city." in text
    assert market_instructions(load_ruleset(fixture_json("rulesets/harrow.json"))) == ""
    document = market_document(sold=[], sellers=[])
    del document["items"]["market"]["buyBack"]
    for size in document["items"]["market"]["places"]:
        size.pop("purse", None)
    bare = load_ruleset(document)
    assert 'action="sell"' not in market_instructions(bare)
    assert 'day="new"' not in market_instructions(bare)
