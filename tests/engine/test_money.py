"""Money: pay with change, earn, purse lines and costs (spec/items.md §16)."""

from __future__ import annotations

import copy

import pytest
from helpers import answer, bag, fixture_json, harrow
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_ruleset, start_state
from engine.actions.money import purse_line
from engine.rules.money import family_coins, make_change
from engine.ruleset import Cost

GAME = harrow()
FAMILY = GAME.ruleset.items.currencies[0]
COINS = family_coins(FAMILY)  # crown 60, shilling 12, penny 1


def party_with(purse, who="Ada", layers=()):
    party = fixture_json("parties/harrow.json")
    party["layers"] = list(layers)
    for character in party["characters"]:
        if character["name"] == who:
            character["bag"] = [s for s in character["bag"] if "coin" not in s]
            character["bag"] += [{"coin": c, "count": n} for c, n in purse.items()]
    return start_state(GAME, party)


def purse_of(state, who="Ada"):
    character = next(c for c in state.characters if c.name == who)
    held = {}
    for stack in character.bag:
        if stack.coin:
            held[stack.coin] = held.get(stack.coin, 0) + stack.count
    return held


def test_itm_pay_1_5_6_the_spec_example_exactly():
    """ITM-PAY-1: the GM pays with ``[inventory: action="pay" amount= who=]``; ITM-PAY-5/6:
    paying 3 shillings from a purse holding a single crown names ``crowns ×1`` (the plural
    label, even for one)."""
    state = party_with({"crown": 1})
    new, [reply] = answer(GAME, state, '[inventory: action="pay" amount="3 shillings" who="Ada"]')
    assert reply.ok
    assert reply.text == "Paid with crowns ×1; shillings ×2 back."
    assert purse_of(new) == {"shilling": 2}


PAY_TABLE = [
    # purse, amount, text, purse after
    ({"shilling": 5}, "3 shillings", "Paid with shillings ×3.", {"shilling": 2}),
    ({"penny": 40}, "3 shillings", "Paid with pennies ×36.", {"penny": 4}),
    ({"crown": 2, "penny": 3}, "1 crown", "Paid with crowns ×1.", {"crown": 1, "penny": 3}),
    ({"shilling": 1, "penny": 2}, "13 pennies", "Paid with shillings ×1, pennies ×1.",
     {"penny": 1}),
    # ITM-PAY-4 pays the shilling (step 2) and gives four back (step 4): one changed hands
    # less than the steps moved, and the answer names only what did (issue 29).
    ({"crown": 1, "shilling": 1}, "20 pennies",
     "Paid with crowns ×1; shillings ×3, pennies ×4 back.",
     {"shilling": 4, "penny": 4}),
    # The purse: 7 pennies paid at step 2 and the same 7 back at step 4.
    ({"crown": 1, "penny": 7}, "3 shillings", "Paid with crowns ×1; shillings ×2 back.",
     {"shilling": 2, "penny": 7}),
    ({"crown": 1}, "1 penny", "Paid with crowns ×1; shillings ×4, pennies ×11 back.",
     {"shilling": 4, "penny": 11}),
]


@pytest.mark.parametrize(("purse", "amount", "text", "after"), PAY_TABLE)
def test_itm_pay_4_change_making_table(purse, amount, text, after):
    state = party_with(purse)
    new, [reply] = answer(GAME, state, f'[inventory: action="pay" amount="{amount}"]')
    assert reply.ok, reply.text
    assert reply.text == text
    assert purse_of(new) == after
    paid = sum(v * n for c, v in COINS for cc, n in purse.items() if c == cc)
    left = sum(v * n for c, v in COINS for cc, n in purse_of(new).items() if c == cc)
    assert paid - left == {"3 shillings": 36, "1 crown": 60, "13 pennies": 13,
                           "20 pennies": 20, "1 penny": 1}[amount]


def test_itm_pay_5_the_record_names_what_changed_hands():
    state = party_with({"crown": 1, "penny": 7})
    _, [reply] = answer(GAME, state, '[inventory: action="pay" amount="3 shillings"]')
    assert (reply.record["paid"], reply.record["change"]) == ({"crown": 1}, {"shilling": 2})


@pytest.mark.parametrize(("purse", "text"), [
    ({"penny": 43}, "Ada cannot afford 9 crowns: the coins in the purse come to only 43 "
                    "pennies."),
    ({"penny": 1}, "Ada cannot afford 9 crowns: the coins in the purse come to only 1 penny."),
    ({}, "Ada cannot afford 9 crowns: the purse holds none of these coins."),
])
def test_itm_pay_7_the_refusal_is_a_sentence(purse, text):
    state = party_with(purse)
    new, [reply] = answer(GAME, state, '[inventory: action="pay" amount="9 crowns"]')
    assert (reply.ok, reply.reason, reply.text) == (False, "cannot-afford", text)
    assert new is state  # ITM-PAY-10


@pytest.mark.parametrize("amount", ["3 shillings", "3 SHILLINGS", "3 shilling", "3 Shilling",
                                    "3 shilling ", " 3  shillings", "3 shilling"])
def test_itm_pay_2_coin_by_label_or_one_any_case(amount):
    state = party_with({"shilling": 5})
    _, [reply] = answer(GAME, state, f'[inventory: action="pay" amount="{amount}"]')
    assert reply.ok and reply.text == "Paid with shillings ×3."


def test_itm_pay_2_coin_by_id():
    state = party_with({"penny": 5})
    _, [reply] = answer(GAME, state, '[inventory: action="pay" amount="2 penny"]')
    assert reply.ok


def test_itm_pay_3_one_bag_only_never_the_companions():
    state = party_with({})  # Ada has no coins; Bram has 4 shillings
    new, [reply] = answer(GAME, state, '[inventory: action="pay" amount="1 shilling"]')
    assert (reply.ok, reply.reason) == (False, "cannot-afford")
    assert new is state
    new, [reply] = answer(GAME, state,
                          '[inventory: action="pay" amount="1 shilling" who="Bram the Quiet"]')
    assert reply.ok
    assert purse_of(new, "Bram the Quiet") == {"shilling": 3}


def test_itm_cur_4_families_never_convert():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["currencies"].append(
        {"id": "salt", "label": "Salt", "units": [{"id": "pinch", "label": "pinches", "value": 1}]})
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["bag"] = [{"coin": "pinch", "count": 500}]
    state = start_state(game, party)
    new, [reply] = answer(game, state, '[inventory: action="pay" amount="1 penny"]')
    assert (reply.ok, reply.reason) == (False, "cannot-afford")
    assert new is state


@pytest.mark.parametrize(("tag", "reason"), [
    ('[inventory: action="pay" amount="2 crowns"]', "cannot-afford"),
    ('[inventory: action="pay" amount="3 ducats"]', "unknown-coin"),
    ('[inventory: action="earn" amount="3 ducats"]', "unknown-coin"),
    ('[inventory: action="pay" amount="shillings"]', "bad-amount"),
    ('[inventory: action="pay" amount="0 shillings"]', "bad-amount"),
    ('[inventory: action="pay" amount="-3 shillings"]', "bad-amount"),
    ('[inventory: action="pay" amount="1e400 crowns"]', "bad-amount"),
    ('[inventory: action="earn" amount="999999d999999 crowns"]', "bad-amount"),
    ('[inventory: action="pay" amount="2d6 pennies"]', "bad-amount"),
    ('[inventory: action="earn" amount="99999999999999999999 crowns"]', "bad-amount"),
    ('[inventory: action="pay"]', "bad-amount"),
    ('[inventory: action="pay" amount="1 penny" who="Nobody"]', "unknown-character"),
    ('[inventory: action="earn" amount="1 penny" who="Nobody"]', "unknown-character"),
])
def test_itm_pay_10_every_refusal_changes_nothing(tag, reason):
    state = party_with({"crown": 1, "penny": 3})
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert new is state


@pytest.mark.parametrize("action", ["pay", "earn"])
def test_itm_pay_9_itm_earn_3_no_currencies(action):
    """ITM-PAY-9, ITM-EARN-3: a pay or an earn in a ruleset without currencies is refused
    ``no-currencies`` and changes nothing (``unknown-coin``: the refusals above)."""
    document = fixture_json("rulesets/harrow.json")
    document["items"]["currencies"] = []
    document["items"]["lootTables"] = []
    for entry in document["catalogs"][0]["entries"]:
        entry["item"].pop("cost", None)
    entry = document["catalogs"][0]["entries"][8]["item"]
    entry["service"] = False
    document["layers"] = []
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    for character in party["characters"]:
        character["bag"] = [s for s in character["bag"] if "coin" not in s]
    state = start_state(game, party)
    new, [reply] = answer(game, state, f'[inventory: action="{action}" amount="1 penny"]')
    assert (reply.ok, reply.reason) == (False, "no-currencies")
    assert new is state


def test_a_layer_that_removes_a_coin_makes_it_unknown():
    state = party_with({"shilling": 5}, layers=["low-magic"])
    new, [reply] = answer(GAME, state, '[inventory: action="earn" amount="1 crown"]')
    assert (reply.ok, reply.reason) == (False, "unknown-coin")
    assert "crowns" not in reply.text.split("(")[1]
    assert new is state


def test_itm_earn_1_2_earning_adds_that_coin_unconverted():
    """ITM-EARN-1: ``action="earn"`` with the pay's ``amount`` and ``who=``; ITM-EARN-2: an
    add of that coin, not converted."""
    state = party_with({"penny": 3})
    new, [reply] = answer(GAME, state, '[inventory: action="earn" amount="24 pennies" who="Ada"]')
    assert reply.ok and reply.text == "Ada receives 24 pennies."
    assert purse_of(new) == {"penny": 27}


def test_itm_money_8_itm_cur_7_one_coin_is_named_with_one():
    """ITM-MONEY-8, ITM-CUR-7: one coin is named with ``one``; without ``one`` its ``label``
    names one coin too."""
    state = party_with({})
    _, [reply] = answer(GAME, state, '[inventory: action="earn" amount="1 penny"]')
    assert reply.text == "Ada receives 1 penny."
    document = fixture_json("rulesets/harrow.json")
    for family in document["items"]["currencies"]:
        for unit in family["units"]:
            unit.pop("one", None)
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    _, [reply] = answer(game, state, '[inventory: action="earn" amount="1 penny" who="Ada"]')
    assert reply.text == "Ada receives 1 pennies."


def test_itm_money_9_journal_lists_spending_and_income():
    state = party_with({"crown": 1})
    new, _ = answer(GAME, state, '[inventory: action="pay" amount="3 shillings"] '
                                 '[inventory: action="earn" amount="2 pennies"]', turn=(0, 4))
    assert [(j.turn, j.text) for j in new.journal] == [
        ("0.4", "Ada paid 3 shillings."), ("0.4", "Ada earned 2 pennies.")]


def test_itm_money_6_purse_line():
    state = party_with({"crown": 7, "shilling": 2, "penny": 0 + 3})
    ada = state.characters[0]
    assert purse_line(GAME, ada) == "Coin worth 447 pennies"
    assert purse_line(GAME, party_with({}).characters[0]) == "no coins"


def test_itm_money_7_cost_text():
    from engine.actions.money import cost_text
    assert cost_text(GAME, Cost(amount=3, unit="shilling")) == "costs 3 shillings"
    assert cost_text(GAME, Cost(amount=1, unit="shilling")) == "costs 1 shilling"


def test_itm_money_1_itm_cur_6_9_coins_are_stacks_named_by_their_label():
    """ITM-MONEY-1, ITM-CUR-9: a coin is a stack in a bag like any other, one stack per coin;
    ITM-CUR-6: named by its ``label`` for any number of it."""
    new, _ = answer(GAME, party_with({}), '[inventory: action="earn" amount="2 shillings"]')
    assert ("shillings", 2) in bag(new, "Ada")
    new, _ = answer(GAME, new, '[inventory: action="earn" amount="1 shilling"] '
                               '[inventory: action="earn" amount="1 crown"]')
    ada = new.characters[0]
    coins = [(s.name, s.coin, s.count) for s in ada.bag if s.coin is not None]
    assert coins == [("shillings", "shilling", 3), ("crowns", "crown", 1)]
    assert [s.coin for s in ada.bag].count("shilling") == 1


def test_itm_money_10_the_instructions_name_the_coins_and_pay_and_earn():
    """ITM-MONEY-10: the instructions list the coins and teach pay and earn; a ruleset
    without coins is taught neither."""
    from engine.text.prompt import instructions
    taught = instructions(GAME)
    assert '[inventory: action="pay" amount="2 pennies"]' in taught
    assert '[inventory: action="earn" amount="5 pennies"]' in taught
    assert "  Coins: pennies, shillings, crowns." in taught
    document = fixture_json("rulesets/harrow.json")
    document["items"]["currencies"] = []
    document["items"]["lootTables"] = []
    for entry in document["catalogs"][0]["entries"]:
        entry["item"].pop("cost", None)
    document["catalogs"][0]["entries"][8]["item"]["service"] = False
    document["layers"] = []
    untaught = instructions(load_ruleset(document))
    assert 'action="pay"' not in untaught and 'action="earn"' not in untaught
    assert "Coins:" not in untaught


def held_rope(state) -> int:
    return sum(n for name, n in bag(state, "Ada") if name == "Rope")


def test_itm_money_11_without_a_market_buying_is_a_pay_and_an_add():
    """ITM-MONEY-11: with no market, buying is a pay followed by an add; ``buy`` is refused
    (``no-market``) and changes nothing."""
    state = party_with({"shilling": 2})
    new, replies = answer(GAME, state, '[inventory: action="pay" amount="1 shilling"] '
                                       '[inventory: action="add" item="Rope" who="Ada"]')
    assert [r.ok for r in replies] == [True, True]
    assert purse_of(new) == {"shilling": 1}
    assert held_rope(new) == held_rope(state) + 1
    same, [reply] = answer(GAME, state, '[inventory: action="buy" item="Rope"]')
    assert (reply.ok, reply.reason, same is state) == (False, "no-market", True)
    assert reply.text == "This ruleset has no market: use pay and add, or earn and remove, instead."


purses = st.fixed_dictionaries({c: st.integers(0, 30) for c, _ in COINS})


@settings(max_examples=300, deadline=None)
@given(purse=purses, data=st.data())
def test_property_paid_minus_change_is_the_amount(purse, data):
    """ITM-PAY-4: for any purse and any affordable amount, value paid − change = amount."""
    worth = sum(purse[c] * v for c, v in COINS)
    if worth == 0:
        assert make_change(COINS, purse, 1) is None
        return
    amount = data.draw(st.integers(1, worth))
    plan = make_change(COINS, purse, amount)
    assert plan is not None
    paid, change = plan
    value = dict(COINS)
    assert sum(value[c] * n for c, n in paid.items()) - sum(value[c] * n for c, n in change.items()) == amount
    assert all(paid.get(c, 0) <= purse[c] for c in purse)
    assert all(n > 0 for n in (*paid.values(), *change.values()))


@settings(max_examples=100, deadline=None)
@given(purse=purses, extra=st.integers(1, 500))
def test_property_unaffordable_payment_changes_nothing(purse, extra):
    worth = sum(purse[c] * v for c, v in COINS)
    state = party_with({c: n for c, n in purse.items() if n})
    new, [reply] = answer(GAME, state,
                          f'[inventory: action="pay" amount="{worth + extra} pennies"]')
    assert (reply.ok, reply.reason) == (False, "cannot-afford")
    assert new is state


@settings(max_examples=100, deadline=None)
@given(purse=purses, data=st.data())
def test_property_pay_through_the_engine_conserves_value(purse, data):
    worth = sum(purse[c] * v for c, v in COINS)
    if worth == 0:
        return
    amount = data.draw(st.integers(1, worth))
    state = party_with({c: n for c, n in purse.items() if n})
    new, [reply] = answer(GAME, state, f'[inventory: action="pay" amount="{amount} pennies"]')
    assert reply.ok
    after = purse_of(new)
    assert sum(after.get(c, 0) * v for c, v in COINS) == worth - amount
    assert all(s.count > 0 for s in new.characters[0].bag)
    assert copy.deepcopy(state.canonical()) == state.canonical()
