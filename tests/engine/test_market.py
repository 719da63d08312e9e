"""Markets: [place:], prices, where things are sold, sellers and buying (spec/items.md §18.1–18.9;
ITM-MKT-*, ITM-PRICE-*, ITM-PLACE-*, ITM-BUY-*).

The market is Harrow Vale's ruleset (fixtures/rulesets/harrow.json) with a market block and a
few more catalog entries added here; harrow.json itself has no market.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import answer, bag, fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, State, load_ruleset, start_state
from engine.rules.market import named_coin, price_of, scaled
from engine.rules.money import held_coins
from engine.rules.party import PartyError

MARKET: dict[str, Any] = {
    "prices": [
        {"id": "cheap", "label": "cheap", "times": 0.75},
        {"id": "fair", "label": "fair", "times": 1, "default": True},
        {"id": "dear", "label": "dear", "times": 1.5},
        {"id": "steep", "label": "steep", "times": 1.2},
    ],
    "places": [
        {"id": "hamlet", "label": "hamlet", "purse": {"amount": 10, "unit": "shilling"}},
        {"id": "village", "label": "village"},
        {"id": "town", "label": "market town", "purse": {"amount": 100, "unit": "shilling"}},
        {"id": "city", "label": "city"},
    ],
    "sold": [
        {"filter": {"rarity": "storied"}, "place": "town", "limited": "1d2"},
        {"filter": {"category": "weapon"}, "place": "village"},
        {"filter": {"category": "remedy"}, "limited": 3},
    ],
    "sellers": [
        {"id": "chandler", "label": "chandler",
         "sells": [{"category": "gear"}, {"category": "remedy"}, {"category": "armor"}]},
        {"id": "smith", "label": "smith", "sells": [{"category": "weapon"}], "place": "village",
         "stock": {"table": "smiths_odd_lot"}},
        {"id": "inn", "label": "innkeeper", "sells": [{"category": "lodging"}]},
        {"id": "peddler", "label": "peddler", "sells": [{"tag": "blessed"}],
         "stock": {"table": "peddlers_pack"}},
        {"id": "chapel", "label": "chapel of the Vigil", "sells": [{"category": "relic"}],
         "place": "town",
         "only": {"value": {"pool": "resolve"}, "atLeast": 3,
                  "label": "wardens of Resolve 3 or more"}},
    ],
    "unsold": [{"tag": "thrown"}],
    "buyBack": 0.5,
}

EXTRA_ENTRIES = [
    {"id": "storied-blade", "label": "Storied blade",
     "item": {"category": "weapon", "rarity": "storied", "cost": {"amount": 1, "unit": "crown"}}},
    {"id": "fine-rope", "label": "Fine rope",
     "item": {"category": "gear", "rarity": "common", "cost": {"amount": 6, "unit": "penny"},
              "sold": {"place": "city", "limited": 1}}},
    {"id": "storied-charm", "label": "Storied charm",
     "item": {"category": "gear", "rarity": "storied", "cost": {"amount": 5, "unit": "penny"},
              "sold": {"place": "hamlet"}}},
    {"id": "old-map", "label": "Old map", "item": {"category": "gear", "rarity": "common"}},
    {"id": "grave-ring", "label": "Grave ring",
     "item": {"category": "gear", "rarity": "common", "binds": {"cursed": True},
              "cost": {"amount": 5, "unit": "shilling"}}},
    {"id": "gilt-lantern", "label": "Gilt lantern",
     "item": {"category": "gear", "rarity": "storied", "tags": ["light"],
              "passesFor": "kit/silver-lantern", "cost": {"amount": 2, "unit": "shilling"}}},
    {"id": "holy-water", "label": "Holy water",
     "item": {"category": "relic", "rarity": "common", "cost": {"amount": 2, "unit": "shilling"},
              "risky": "it burns the unworthy"}},
    {"id": "healing-potion", "label": "Potion of healing",
     "item": {"category": "remedy", "rarity": "common", "cost": {"amount": 50, "unit": "gp"}}},
]

DND_COINS = {"id": "dnd", "label": "Old coin", "units": [
    {"id": "cp", "label": "copper pieces", "one": "copper piece", "value": 1},
    {"id": "sp", "label": "silver pieces", "one": "silver piece", "value": 10},
    {"id": "gp", "label": "gold pieces", "one": "gold piece", "value": 100},
    {"id": "pp", "label": "platinum", "one": "platinum", "value": 1000},
]}

TABLES = [
    {"id": "smiths_odd_lot", "label": "Smith's odd lot", "rolls": 1,
     "entries": [{"item": "kit/hand-axe", "count": 2}]},
    {"id": "peddlers_pack", "label": "Peddler's pack", "rolls": 1,
     "entries": [{"item": "kit/silver-lantern", "count": "1d3"}]},
]

PARTY: dict[str, Any] = {
    "seed": "market-1", "player": "Ada",
    "characters": [
        {"name": "Ada", "abilities": {"brawn": 2, "wits": 3, "heart": 1},
         "pools": {"resolve": 2},
         "bag": [{"coin": "crown", "count": 10}, {"coin": "shilling", "count": 5},
                 {"coin": "penny", "count": 7}, {"item": "kit/hand-axe", "count": 1},
                 {"item": "kit/leather-coat", "count": 3}, {"coin": "gp", "count": 60}]},
        {"name": "Bram", "abilities": {"heart": 3}, "pools": {"resolve": 4},
         "bag": [{"coin": "shilling", "count": 4}]},
    ],
}


def market_document(**market_changes: Any) -> dict[str, Any]:
    """harrow.json with the test market, extra entries, a second coin family and stock tables."""
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    items = document["items"]
    items["market"] = {**copy.deepcopy(MARKET), **market_changes}
    items["currencies"] = [*items["currencies"], copy.deepcopy(DND_COINS)]
    items["categories"] = [*items["categories"], {"id": "relic", "label": "Relic"}]
    items["tags"] = [*items["tags"], {"id": "blessed", "label": "Blessed"}]
    items["binding"] = {"label": "Attunement", "max": {"const": 3}}
    items["lootTables"] = [*items.get("lootTables", []), *copy.deepcopy(TABLES)]
    document["capabilityApi"] = "1.813"
    kit = next(c for c in document["catalogs"] if c["id"] == "kit")
    kit["entries"] = [*kit["entries"], *copy.deepcopy(EXTRA_ENTRIES)]
    return document


def market_game(**market_changes: Any) -> Game:
    return load_ruleset(market_document(**market_changes))


def market_party(game: Game, **changes: Any) -> State:
    return start_state(game, {**copy.deepcopy(PARTY), **changes})


GAME = market_game()


def at(state: State, where: str = 'name="Millbrook" size="market town"',
       game: Game = GAME) -> State:
    """The state after the GM names a place."""
    new, answers = answer(game, state, f"[place: {where}]", (0, 0))
    assert answers[0].ok, answers[0].text
    return new


def start(where: str = 'name="Millbrook" size="market town"', game: Game = GAME) -> State:
    return at(market_party(game), where, game)


def one(game: Game, state: State, text: str,
        turn: tuple[int, ...] = (0, 1)) -> tuple[State, Any]:
    new, answers = answer(game, state, text, turn)
    assert len(answers) == 1
    return new, answers[0]


def purse(state: State, who: str = "Ada", family: str = "coin") -> int:
    character = next(c for c in state.characters if c.name == who)
    currency = next(f for f in GAME.ruleset.items.currencies if f.id == family)  # type: ignore[union-attr]
    return sum(n * next(u.value for u in currency.units if u.id == c)
               for c, n in held_coins(character, currency).items())


def held(state: State, who: str, name: str) -> int:
    return sum(n for stack_name, n in bag(state, who) if stack_name == name)


def test_market_ruleset_loads_and_harrow_has_no_market():
    assert GAME.ruleset.items is not None and GAME.ruleset.items.market is not None
    assert fixture_json("rulesets/harrow.json")["items"].get("market") is None


# --- Prices (ITM-PRICE-1..6, OQ-44) ------------------------------------------------------------

@pytest.mark.parametrize(("item", "level", "price"), [
    ("Leather coat", "dear", "12 shillings"),  # ITM-PRICE-5, exact string of the spec
    ("Potion of healing", "fair", "50 gold pieces"),  # ITM-PRICE-5: never "5 platinum"
    ("Leather coat", "fair", "8 shillings"),
    ("Leather coat", "cheap", "6 shillings"),  # 72 pennies: the cost's own coin pays exactly
    ("Hand axe", "dear", "54 pennies"),  # ITM-PRICE-4: 54 is no whole number of shillings
    ("Longbow", "cheap", "45 pennies"),
    ("Longbow", "steep", "6 shillings"),  # ITM-PRICE-4: crowns do not pay 72, shillings do
    ("Silver lantern", "fair", "2 crowns"),
    ("Poultice", "cheap", "5 pennies"),  # OQ-44: 4.5 rounds half up
    ("Torch", "cheap", "1 penny"),  # ITM-PRICE-2, ITM-MONEY-8: 0.75 → one coin, "penny"
    ("Rope", "dear", "6 pennies"),
])
def test_itm_price_1_to_5_prices(item: str, level: str, price: str):
    market = GAME.ruleset.items.market  # type: ignore[union-attr]
    entry = GAME.find_item(item)
    assert entry is not None
    chosen = next(p for p in market.prices if p.id == level)
    found = price_of(GAME, None, entry.ref, entry.item, chosen)
    assert found is not None and found.text == price


@pytest.mark.parametrize(("value", "times", "expected"), [
    (1, 0.1, 1),  # ITM-PRICE-2: never below one coin for something that costs anything
    (0, 1.5, 0),  # costs nothing
    (3, 0.5, 2),  # OQ-44: 1.5 → 2 (half up)
    (5, 0.5, 3),  # 2.5 → 3
    (7, 0.3, 2),  # 2.1 → 2
    (96, 0.75, 72),
    (10, 0.35, 4),  # 3.5 exactly in decimal (no float drift to 3.4999…)
])
def test_itm_price_1_2_rounding(value: int, times: float, expected: int):
    assert scaled(value, times) == expected


def test_itm_price_4_largest_coin_the_layers_leave():
    """A layer that takes shillings out: 72 pennies are named in pennies, not shillings."""
    document = market_document()
    document["layers"].append({"id": "no-shillings", "coins": ["shilling"]})
    game = load_ruleset(document)
    state = market_party(game).model_copy(update={"layers": ("no-shillings",)})
    entry = game.find_item("Longbow")
    market = game.ruleset.items.market  # type: ignore[union-attr]
    steep = next(p for p in market.prices if p.id == "steep")
    assert entry is not None
    found = price_of(game, state, entry.ref, entry.item, steep)
    assert found is not None and found.text == "72 pennies"
    assert named_coin(game, None, game.coins["penny"], 120).coin.id == "penny"
    assert named_coin(game, None, game.coins["shilling"], 120).coin.id == "shilling"
    assert named_coin(game, None, game.coins["penny"], 7).coin.id == "penny"


def test_itm_price_6_level_shifts_the_price_not_the_number():
    state = start()
    _, fair = one(GAME, state, '[inventory: action="buy" item="Leather coat"]')
    _, dear = one(GAME, state, '[inventory: action="buy" item="Leather coat" level="Dear"]')
    assert (fair.record["price"], dear.record["price"]) == ("8 shillings", "12 shillings")


# --- [place:] (ITM-PLACE-1..6) ------------------------------------------------------------------

@pytest.mark.parametrize("size", ["town", "market town", "Market Town", "TOWN"])
def test_itm_place_1_size_by_id_or_label(size: str):
    state, reply = one(GAME, market_party(GAME), f'[place: name="Millbrook" size="{size}"]')
    assert reply.ok and state.place is not None
    assert (state.place.name, state.place.size, state.place.day) == ("Millbrook", "town", 1)
    assert reply.text == "The party is at Millbrook (market town): market day 1."
    assert reply.record == {"name": "Millbrook", "size": "town", "day": 1}


def test_itm_place_2_no_size_for_a_place_without_a_market():
    state, reply = one(GAME, market_party(GAME), '[place: name="The Old Road"]')
    assert reply.ok and state.place is not None and state.place.size is None
    assert reply.text == "The party is at The Old Road (no market)."


@pytest.mark.parametrize("game", [GAME, load_ruleset(fixture_json("rulesets/harrow.json"))])
def test_itm_place_3_unknown_size_is_refused_and_changes_nothing(game: Game):
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, reply = one(game, state, '[place: name="Millbrook" size="metropolis"]')
    assert not reply.ok and reply.reason == "unknown-size" and new is state
    assert '"metropolis" is not a place size' in reply.text


def test_place_needs_a_name():
    state = market_party(GAME)
    new, reply = one(GAME, state, '[place: size="town"]')
    assert not reply.ok and reply.reason == "missing-attribute" and new is state


def test_place_ignores_a_day_other_than_new():
    state = start()
    new, reply = one(GAME, state, '[place: name="Millbrook" size="town" day="2"]')
    assert reply.ok and new is state
    assert reply.notes == ('ignored day="2": only day="new" begins a new day',)


def test_itm_place_4_the_last_place_of_a_reply_holds():
    state, answers = answer(GAME, market_party(GAME),
                            '[place: name="Ashford" size="hamlet"] then '
                            '[place: name="Millbrook" size="city"]')
    assert [a.ok for a in answers] == [True, True]
    assert state.place is not None and (state.place.name, state.place.size) == ("Millbrook", "city")


def test_itm_buy_4_a_later_place_in_the_same_reply_counts():
    """The buy is written before the place, and prices at the place that holds at reply end."""
    state, answers = answer(GAME, market_party(GAME),
                            '[inventory: action="buy" item="Hand axe"] and '
                            '[place: name="Millbrook" size="village"]')
    assert state.place is not None and state.place.size == "village"
    buy = answers[0]
    assert buy.tag.kind == "inventory"
    assert buy.ok and buy.record["seller"] == "smith"  # the village smith's stock
    _, answers = answer(GAME, market_party(GAME),
                        '[inventory: action="buy" item="Leather coat"] '
                        '[place: name="Ashford" size="hamlet"]')
    assert answers[0].ok and answers[0].record["seller"] == "chandler"


# --- Where things are sold (ITM-MKT-4..21) -----------------------------------------------------

@pytest.mark.parametrize(("size", "ok", "reason"), [
    ("hamlet", False, "not-here"), ("village", True, None), ("market town", True, None),
    ("city", True, None),
])
def test_itm_mkt_4_sold_from_a_size_and_every_larger_one(size: str, ok: bool, reason: str | None):
    state = start(f'name="Somewhere" size="{size}"')
    new, reply = one(GAME, state, '[inventory: action="buy" item="Longbow"]')
    assert reply.ok is ok and reply.reason == reason
    if not ok:
        assert new is state
        assert reply.text == "Longbow is not sold at a hamlet; it is sold from a village up."


def test_itm_mkt_7_the_first_matching_rule_decides():
    """Storied blade is storied (town) before it is a weapon (village)."""
    village = start('name="Ashford" size="village"')
    new, reply = one(GAME, village, '[inventory: action="buy" item="Storied blade"]')
    assert reply.reason == "not-here" and new is village
    _, reply = one(GAME, start(), '[inventory: action="buy" item="Storied blade"]')
    assert reply.ok and reply.record["seller"] == "smith"


def test_itm_mkt_8_an_items_own_sold_wins():
    """Storied charm is storied (town by the rules) but its own sold says hamlet; Fine rope is
    sold from a city though no rule names it."""
    _, reply = one(GAME, start('name="Ashford" size="hamlet"'),
                   '[inventory: action="buy" item="Storied charm"]')
    assert reply.ok
    town = start()
    new, reply = one(GAME, town, '[inventory: action="buy" item="Fine rope"]')
    assert reply.reason == "not-here" and new is town
    _, reply = one(GAME, start('name="Caer" size="city"'),
                   '[inventory: action="buy" item="Fine rope"]')
    assert reply.ok


def test_itm_mkt_9_an_item_nothing_names_is_sold_everywhere():
    _, reply = one(GAME, start('name="Ashford" size="hamlet"'),
                   '[inventory: action="buy" item="Rope"]')
    assert reply.ok and reply.record["price"] == "4 pennies"


def test_itm_mkt_10_11_14_sellers_and_their_sells_filters():
    state = start()
    _, reply = one(GAME, state, '[inventory: action="buy" item="Leather coat" seller="chandler"]')
    assert reply.ok and reply.record["seller"] == "chandler"
    new, reply = one(GAME, state, '[inventory: action="buy" item="Leather coat" seller="smith"]')
    assert reply.reason == "no-seller" and new is state
    assert reply.text == "The smith sells Leather coat at Millbrook."
    hamlet = start('name="Ashford" size="hamlet"')  # ITM-MKT-10: the smith is found from a village
    new, reply = one(GAME, hamlet, '[inventory: action="buy" item="Rope" seller="Smith"]')
    assert reply.reason == "no-seller" and new is hamlet
    assert reply.text == "There is no smith at Ashford (hamlet)."


def test_itm_mkt_12_only_reads_live_state():
    """The chapel sells only to wardens of Resolve 3 or more: Ada (2) is refused, Bram (4) and
    Ada at 3 are served."""
    state = start()
    new, reply = one(GAME, state, '[inventory: action="buy" item="Holy water" who="Ada"]')
    assert reply.reason == "not-to-you" and new is state
    assert reply.text == ("The chapel of the Vigil sells Holy water only to wardens of Resolve 3 "
                          "or more, and Ada is not one.")
    _, reply = one(GAME, state, '[inventory: action="buy" item="Holy water" who="Bram"]')
    assert reply.ok and reply.record["who"] == "Bram"
    ada = state.characters[0]
    braver = state.with_character(0, ada.model_copy(update={"pools": {"resolve": 3}}))
    _, reply = one(GAME, braver, '[inventory: action="buy" item="Holy water"]')
    assert reply.ok


def test_itm_mkt_12_only_reads_carried_items():
    sellers = copy.deepcopy(MARKET["sellers"])
    sellers[4]["only"] = {"value": {"itemStat": {"pick": "count", "tag": "light"}}, "atLeast": 1,
                          "label": "those who carry a light"}
    game = market_game(sellers=sellers)
    state = start(game=game)
    new, reply = one(game, state, '[inventory: action="buy" item="Holy water"]')
    assert reply.reason == "not-to-you" and new is state
    state, _ = one(game, state, '[inventory: action="buy" item="Torch"]')
    _, reply = one(game, state, '[inventory: action="buy" item="Holy water"]', (0, 2))
    assert reply.ok


def test_itm_mkt_13_without_sellers_everyone_sells_what_the_place_sells():
    game = market_game(sellers=[])
    state = start(game=game)
    _, reply = one(game, state, '[inventory: action="buy" item="Holy water"]')
    assert reply.ok and reply.record["seller"] is None
    assert reply.text.startswith("Ada bought Holy water ×1 for 2 shillings.")
    new, reply = one(game, state, '[inventory: action="buy" item="Holy water" seller="chapel"]')
    assert reply.reason == "no-seller" and new is state  # OQ-47: a seller the ruleset lacks


def test_itm_mkt_15_unsold_is_in_no_range():
    state = start('name="Caer" size="city"')
    new, reply = one(GAME, state, '[inventory: action="buy" item="Hand axe" seller="chandler"]')
    assert reply.reason == "no-seller" and new is state


def test_itm_mkt_16_a_stock_table_still_yields_an_unsold_item():
    state = start('name="Ashford" size="village"')
    new, reply = one(GAME, state, '[inventory: action="buy" item="Hand axe"]')
    assert reply.ok and reply.record["seller"] == "smith" and reply.record["stock"] is True
    assert held(new, "Ada", "Hand axe") == 2


def test_itm_mkt_18_a_layer_adds_unsold_filters():
    document = market_document()
    document["layers"].append({"id": "dark-age", "items": {"unsold": [{"tag": "light"}]}})
    game = load_ruleset(document)
    state = start(game=game).model_copy(update={"layers": ("dark-age",)})
    new, reply = one(game, state, '[inventory: action="buy" item="Torch"]')
    assert reply.reason == "no-seller" and new is state
    _, reply = one(game, state.model_copy(update={"layers": ()}),
                   '[inventory: action="buy" item="Torch"]')
    assert reply.ok


@pytest.mark.parametrize(("item", "layers"), [
    ("Old map", ()),  # ITM-MKT-19: no cost
    ("Silver lantern", ("low-magic",)),  # ITM-MKT-20: hidden by a layer
    ("Longbow", ("low-magic",)),  # ITM-MKT-21: its coin (crowns) taken out
])
def test_itm_mkt_19_to_21_unsaleable_items(item: str, layers: tuple[str, ...]):
    state = start('name="Caer" size="city"').model_copy(update={"layers": layers})
    new, reply = one(GAME, state, f'[inventory: action="buy" item="{item}"]')
    assert reply.reason == "not-for-sale" and new is state
    assert reply.text == f"{item} is not for sale."


@pytest.mark.parametrize("item", ["Grave ring", "Gilt lantern"])
def test_itm_fake_5_cursed_items_and_fakes_are_never_wares(item: str):
    state = start('name="Caer" size="city"')
    new, reply = one(GAME, state, f'[inventory: action="buy" item="{item}"]')
    assert reply.reason == "no-seller" and new is state


# --- Buying (ITM-BUY-1..15) --------------------------------------------------------------------

def test_itm_buy_1_5_7_buy_pays_with_change_and_adds():
    state = start()
    new, reply = one(GAME, state, '[inventory: action="buy" item="Leather coat" count="1" '
                                  'level="dear" seller="chandler" who="Ada"]')
    assert reply.ok
    assert reply.text == ("Ada bought Leather coat ×1 from the chandler for 12 shillings. "
                          "Paid with crowns ×2, shillings ×2.")
    assert reply.record == {
        "price": "12 shillings", "item": "kit/leather-coat", "name": "Leather coat", "count": 1,
        "who": "Ada", "seller": "chandler", "level": "dear",
        "paid": {"crown": 2, "shilling": 2}, "change": {},
    }
    assert purse(new) == purse(state) - 144
    assert held(new, "Ada", "Leather coat") == held(state, "Ada", "Leather coat") + 1
    assert new.journal[-1].text == "Ada bought Leather coat ×1 from the chandler for 12 shillings."


def test_itm_buy_5_change_comes_back():
    """Bram pays 4 pennies for rope with a shilling: 8 pennies back."""
    state = start()
    new, reply = one(GAME, state, '[inventory: action="buy" item="Rope" who="bram"]')
    assert reply.ok and reply.text.endswith("Paid with shillings ×1; pennies ×8 back.")
    assert bag(new, "Bram") == [("shillings", 3), ("pennies", 8), ("Rope", 1)]
    assert bag(new, "Ada") == bag(state, "Ada")


def test_itm_buy_5_itm_svc_2_a_service_is_only_paid_for():
    """ITM-BUY-5, ITM-SVC-2: buying a service pays its price and puts nothing into any bag
    (every stack but the coins paid stays as it was)."""
    state = start()
    new, reply = one(GAME, state, '[inventory: action="buy" item="Room at the inn" count="2"]')
    assert reply.ok and reply.record["price"] == "4 shillings"
    assert reply.record["seller"] == "inn"
    assert purse(new) == purse(state) - 48
    assert held(new, "Ada", "Room at the inn") == 0
    for before, after in zip(state.characters, new.characters, strict=True):
        assert [s for s in after.bag if s.coin is None] == [s for s in before.bag
                                                            if s.coin is None]


def test_itm_svc_2_nothing_else_puts_a_service_into_a_bag():
    """ITM-SVC-2: no other way brings a service into a bag — a loot row naming one drops
    nothing (OQ-37), a party file holding one is refused, an add is refused (ITM-SVC-3)."""
    document = market_document()
    service = next(e for c in document["catalogs"] for e in c["entries"]
                   if e.get("item", {}).get("service"))
    ref = next(f"{c['id']}/{service['id']}" for c in document["catalogs"]
               if service in c["entries"])
    document["items"]["lootTables"].append({"id": "lodging", "label": "Lodging", "rolls": 1,
                                            "entries": [{"item": ref, "count": 1}]})
    game = load_ruleset(document)
    state = start(game=game)
    new, reply = one(game, state, '[loot: table="lodging"]')
    assert all(s.item != ref for c in new.characters for s in c.bag)
    assert new.characters == state.characters, reply.text
    new, reply = one(game, state, f'[inventory: action="add" item="{service["label"]}"]')
    assert (reply.ok, reply.reason, new is state) == (False, "service", True)
    with pytest.raises(PartyError, match="is a service and never in a bag"):
        market_party(game, characters=[{"name": "Ada", "bag": [{"item": ref, "count": 1}]}])


@pytest.mark.parametrize(("item", "count", "price"), [
    ("Poultice", 3, "18 pennies"),  # OQ-49: unit price × count, named as a price
    ("Leather coat", 2, "16 shillings"),
    ("Torch", 12, "12 pennies"),
    ("Rope", 3, "12 pennies"),  # ITM-PRICE-3: the cost's own coin pays it, never "1 shilling"
])
def test_oq_49_count_multiplies_the_unit_price(item: str, count: int, price: str):
    state = start()
    _, reply = one(GAME, state, f'[inventory: action="buy" item="{item}" count="{count}"]')
    assert reply.ok and reply.record["price"] == price


def test_itm_buy_6_14_a_bag_that_cannot_carry_it_changes_nothing():
    document = market_document()
    document["items"]["carry"] = {"stat": "bulk", "encumberedAbove": {"const": 4},
                                  "limit": {"const": 6}}
    game = load_ruleset(document)
    state = start(game=game)  # Ada carries an axe (1) and three coats (6): at her limit
    new, reply = one(game, state, '[inventory: action="buy" item="Rope"]')
    assert not reply.ok and reply.reason == "cannot-carry" and new is state
    assert reply.text == "Ada cannot carry Rope ×1; nothing was bought."
    _, reply = one(game, state, '[inventory: action="buy" item="Torch"]')  # weighs nothing
    assert reply.ok


REFUSALS = [
    # (rule, place, tag attributes, reason, text)
    ("ITM-BUY-8", None, 'item="Rope"', "no-place",
     'Nothing can be bought here: no place is named (name one first with [place: '
     'name="<name>" size="<size>"]).'),
    ("ITM-BUY-8/OQ-46", 'name="The Old Road"', 'item="Rope"', "no-place",
     'Nothing can be bought here: The Old Road has no market (name one first with [place: '
     'name="<name>" size="<size>"]).'),
    ("ITM-BUY-9", 'name="M" size="town"', 'item="Rope" level="robbery"', "unknown-level",
     '"robbery" is not a price level (levels: "cheap", "fair", "dear", "steep").'),
    ("ITM-BUY-9", 'name="M" size="town"', 'item="Moon cheese"', "unknown-item",
     '"Moon cheese" is not an item of this ruleset.'),
    ("ITM-BUY-10", 'name="M" size="town"', 'item="Old map"', "not-for-sale",
     "Old map is not for sale."),
    ("ITM-BUY-11", 'name="M" size="hamlet"', 'item="Hand axe" seller="chandler"', "not-here",
     "Hand axe is not sold at a hamlet; it is sold from a village up."),
    ("ITM-BUY-12", 'name="M" size="town"', 'item="Grave ring"', "no-seller",
     "Nobody here sells Grave ring at M."),
    ("OQ-47", 'name="M" size="town"', 'item="Rope" seller="baker"', "no-seller",
     'There is no seller "baker" in this market (sellers: chandler, smith, innkeeper, '
     "peddler, chapel of the Vigil)."),
    ("ITM-BUY-13", 'name="M" size="town"', 'item="Holy water"', "not-to-you",
     "The chapel of the Vigil sells Holy water only to wardens of Resolve 3 or more, and Ada "
     "is not one."),
    ("ITM-BUY-14", 'name="M" size="town"', 'item="Leather coat" who="Bram"', "cannot-afford",
     "Bram cannot afford Leather coat ×1 for 8 shillings."),
    ("ITM-BUY-15", 'name="M" size="town"', 'item="Poultice" count="4"', "sold-out",
     'Poultice is sold out here today (3 left, 4 asked); a new day (day="new") or another '
     "place may have more."),
    ("engine", 'name="M" size="town"', 'count="2"', "missing-attribute",
     'Say what to buy: [inventory: action="buy" item="<name>"].'),
    ("engine", 'name="M" size="town"', 'item="Rope" count="two"', "bad-count",
     'count="two" is not a whole number from 1 to 1000000.'),
    ("engine", 'name="M" size="town"', 'item="Rope" who="Cobb"', "unknown-character",
     'Nobody called "Cobb" is in the party (Ada, Bram).'),
]


@pytest.mark.parametrize(("rule", "where", "attrs", "reason", "text"), REFUSALS,
                         ids=[f"{r[0]}-{r[3]}" for r in REFUSALS])
def test_itm_buy_8_to_15_refusals_change_nothing(rule: str, where: str | None, attrs: str,
                                                 reason: str, text: str):
    state = market_party(GAME) if where is None else start(where)
    new, reply = one(GAME, state, f'[inventory: action="buy" {attrs}]')
    assert (reply.ok, reply.reason, reply.text) == (False, reason, text)
    assert new is state


def test_buy_and_sell_in_a_ruleset_without_a_market():
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    state = start_state(game, fixture_json("parties/harrow.json"))
    for action in ("buy", "sell"):
        new, reply = one(game, state, f'[inventory: action="{action}" item="Rope"]')
        assert reply.reason == "no-market" and new is state


def test_buy_notes_engine_only_attributes():
    _, reply = one(GAME, start(), '[inventory: action="buy" item="Rope" price="1 penny"]')
    assert reply.ok and reply.record["price"] == "4 pennies"
    assert 'ignored "price": the engine works that out itself' in reply.notes


def test_buy_is_deterministic_json():
    state = start()
    text = ('[inventory: action="buy" item="Silver lantern"] '
            '[inventory: action="buy" item="Leather coat" level="cheap" who="Bram"]')
    first = answer(GAME, state, text, (0, 3))
    second = answer(market_game(), start(game=market_game()), text, (0, 3))
    dump = [json.dumps(a.to_json(), sort_keys=True) for a in first[1]]
    assert dump == [json.dumps(a.to_json(), sort_keys=True) for a in second[1]]
    assert first[0].canonical() == second[0].canonical()


@settings(max_examples=60, deadline=None)
@given(item=st.sampled_from(["Rope", "Torch", "Leather coat", "Poultice", "Longbow",
                             "Silver lantern", "Potion of healing", "Room at the inn"]),
       count=st.integers(1, 12), level=st.sampled_from(["cheap", "fair", "dear", "steep"]),
       who=st.sampled_from(["Ada", "Bram"]))
def test_buy_conserves_value(item: str, count: int, level: str, who: str):
    """A buy either changes nothing or takes exactly the price from the buyer's purse and adds
    exactly ``count`` (nothing for a service)."""
    state = start()
    new, reply = one(GAME, state, f'[inventory: action="buy" item="{item}" count="{count}" '
                                  f'level="{level}" who="{who}"]')
    if not reply.ok:
        assert new is state
        return
    entry = GAME.find_item(item)
    assert entry is not None
    market = GAME.ruleset.items.market  # type: ignore[union-attr]
    unit = price_of(GAME, state, entry.ref, entry.item,
                    next(p for p in market.prices if p.id == level))
    assert unit is not None
    family = unit.coin.family.id
    assert purse(state, who, family) - purse(new, who, family) == unit.value * count
    added = 0 if entry.item.service else count
    assert held(new, who, entry.label) - held(state, who, entry.label) == added


def test_itm_buy_2_without_a_level_the_default_level_applies():
    """ITM-BUY-2: ``level`` is optional; without it the default level (``fair``) prices the
    buy, exactly as naming it does."""
    state = start()
    plain_state, plain = one(GAME, state, '[inventory: action="buy" item="Leather coat" '
                                          'seller="chandler"]')
    fair_state, fair = one(GAME, state, '[inventory: action="buy" item="Leather coat" '
                                        'seller="chandler" level="fair"]')
    _, dear = one(GAME, state, '[inventory: action="buy" item="Leather coat" '
                               'seller="chandler" level="dear"]')
    assert plain.ok and plain.record["level"] == "fair" == fair.record["level"]
    assert plain.record["price"] == fair.record["price"] != dear.record["price"]
    assert purse(plain_state) == purse(fair_state)
