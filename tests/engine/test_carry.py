"""Carrying: weight, load and where arriving things go (spec/items.md §5.9, ITM-MONEY-2/3)."""

from __future__ import annotations

import json
from fractions import Fraction

import pytest
from helpers import answer, bag, fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_ruleset, start_state
from engine.actions.placing import weight_text
from engine.rules.bags import Thing, find_thing
from engine.rules.carry import distribute, encumbered, load, thresholds, unit_weight


def carry_document(limit=True, unit=None, per_weight=10):
    """Harrow with carry: encumbered above 2×Brawn, limit 3×Brawn, coins 10 to the unit."""
    document = fixture_json("rulesets/harrow.json")
    document["capabilityApi"] = "1.813"
    sheet = document["sheet"]
    sheet["derived"] += [
        {"id": "load", "label": "Load", "op": "product", "of": [{"abilityScore": "brawn"}, {"const": 2}]},
        {"id": "haul", "label": "Haul", "op": "product", "of": [{"abilityScore": "brawn"}, {"const": 3}]},
    ]
    block = document["items"]
    block["stats"][0]["integer"] = False
    block["carry"] = {"stat": "bulk", "encumberedAbove": {"derived": "load"}}
    if limit:
        block["carry"]["limit"] = {"derived": "haul"}
    if unit:
        block["carry"]["unit"] = unit
    if per_weight:
        block["currencies"][0]["perWeight"] = per_weight
    document["catalogs"][0]["entries"].append(
        {"id": "nail", "label": "Nail", "item": {"category": "gear", "stats": {"bulk": 0.25}}})
    return document


def carry_game(**kwargs):
    return load_ruleset(carry_document(**kwargs))


GAME = carry_game()


@pytest.fixture()
def state():
    # Ada (Brawn 2): hand axe 1 + rope 1 + 8 coins 0.8 = 2.8; encumbered above 4, limit 6.
    # Bram (Brawn 3): torches 0 + 4 shillings 0.4 = 0.4; encumbered above 6, limit 9.
    return start_state(GAME, fixture_json("parties/harrow.json"))


def test_itm_carry_1_2_item_weight_and_load_from_each_own_bag(state):
    assert load(GAME, state, state.characters[0]) == Fraction(28, 10)
    assert load(GAME, state, state.characters[1]) == Fraction(4, 10)
    assert thresholds(GAME, state.characters[0]) == (4, 6)
    assert thresholds(GAME, state.characters[1]) == (6, 9)


def test_itm_carry_1_an_item_without_the_stat_weighs_its_default_and_plain_items_nothing(state):
    assert unit_weight(GAME, state, "kit/torch", None) == 0  # bulk default 0 (OQ-3)
    assert unit_weight(GAME, state, None, None) == 0


def test_itm_block_9_non_integer_weights_are_exact(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Nail" count="4" who="Bram the Quiet"]')
    assert reply.ok
    assert load(GAME, new, new.characters[1]) == Fraction(14, 10)


def test_itm_money_2_coins_weigh_one_per_weight(state):
    assert unit_weight(GAME, state, None, "penny") == Fraction(1, 10)


def test_itm_money_3_a_family_without_per_weight_weighs_nothing():
    game = carry_game(per_weight=None)
    state = start_state(game, fixture_json("parties/harrow.json"))
    assert unit_weight(game, state, None, "crown") == 0
    assert load(game, state, state.characters[0]) == 2


def test_itm_carry_3_encumbered_above_not_at(state):
    assert not encumbered(GAME, state, state.characters[0])
    new, _ = answer(GAME, state, '[inventory: action="add" item="Nail" count="5" who="Ada"]')
    assert load(GAME, new, new.characters[0]) == Fraction(405, 100)
    assert encumbered(GAME, new, new.characters[0])


def test_itm_carry_5_player_first_when_it_fits(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Rope"]')
    assert reply.text == "Added Rope ×1 to Ada's bag."
    assert ("Rope", 2) in bag(new, "Ada")


def test_itm_carry_5_goes_to_the_first_who_can_take_it_all_unencumbered(state):
    _new, [reply] = answer(GAME, state, '[inventory: action="add" item="Longbow"]')
    assert reply.ok
    assert reply.text == "Added Longbow ×1 to Bram the Quiet's bag."
    assert reply.record["who"] == "Bram the Quiet"


def test_itm_carry_6_7_oq_12_split_by_room_then_limit_and_the_rest_stays_behind(state):
    """Coats weigh 2. Walk 1 (encumberedAbove): Ada 0, Bram 2; walk 2 (limit): Ada 1, Bram 2."""
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Leather coat" count="10"]')
    assert reply.ok
    assert reply.text == ("Added Leather coat ×1 to Ada's bag, Leather coat ×4 to Bram the "
                          "Quiet's bag. Leather coat ×5 stays behind: nobody can carry more.")
    assert (reply.record["count"], reply.record["left"]) == (5, 5)
    assert ("Leather coat", 1) in bag(new, "Ada")
    assert ("Leather coat", 4) in bag(new, "Bram the Quiet")


def test_itm_carry_4_nothing_goes_past_anyones_limit(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Leather coat" count="50"]')
    for character in new.characters:
        assert load(GAME, new, character) <= thresholds(GAME, character)[1]


def test_oq_12_without_limit_the_player_takes_what_is_left():
    game = carry_game(limit=False)
    state = start_state(game, fixture_json("parties/harrow.json"))
    _new, [reply] = answer(game, state, '[inventory: action="add" item="Leather coat" count="10"]')
    assert reply.text == ("Added Leather coat ×8 to Ada's bag, Leather coat ×2 to Bram the "
                          "Quiet's bag.")
    assert "left" not in reply.record


def test_itm_carry_8_oq_13_who_gets_what_fits_under_its_limit(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Leather coat" count="5" who="Ada"]')
    assert reply.ok
    assert reply.text == ("Added Leather coat ×1 to Ada's bag. "
                          "Leather coat ×4 stays behind: nobody can carry more.")
    assert bag(new, "Bram the Quiet") == bag(state, "Bram the Quiet")


def test_itm_carry_7_nothing_fits_is_refused_and_changes_nothing(state):
    full, _ = answer(GAME, state, '[inventory: action="add" item="Leather coat" who="Ada"]')
    new, [reply] = answer(GAME, full, '[inventory: action="add" item="Leather coat" who="Ada"]')
    assert (reply.ok, reply.reason) == (False, "nothing-carried")
    assert new is full
    assert reply.text == ("Ada cannot carry Leather coat ×1 without passing the carry limit; "
                          "nothing was added.")


def test_itm_carry_7_nobody_can_carry_any_is_refused_and_changes_nothing(state):
    new, replies = answer(GAME, state, '[inventory: action="add" item="Leather coat" who="Ada"] '
                                       '[inventory: action="add" item="Leather coat" count="4" who="Bram the Quiet"]')
    assert all(r.ok and "left" not in r.record for r in replies)
    after, [refusal] = answer(GAME, new, '[inventory: action="add" item="Longbow"]')
    assert (refusal.ok, refusal.reason) == (False, "nothing-carried")
    assert after is new


def test_itm_earn_2_itm_money_2_earning_without_who_follows_the_carry_rule(state):
    """100 pennies weigh 10: walk 1 gives Ada 12 and Bram 56, walk 2 Ada 20 and Bram 12."""
    new, [reply] = answer(GAME, state, '[inventory: action="earn" amount="100 pennies"]')
    assert reply.ok
    assert reply.text == "Ada receives 32 pennies; Bram the Quiet receives 68 pennies."
    assert [(j.text) for j in new.journal] == ["Ada earned 32 pennies.",
                                               "Bram the Quiet earned 68 pennies."]


def test_itm_earn_2_earning_with_who_stops_at_the_limit(state):
    _new, [reply] = answer(GAME, state, '[inventory: action="earn" amount="40 pennies" who="Ada"]')
    assert reply.text == "Ada receives 32 pennies. 8 pennies stay behind: nobody can carry more."
    assert reply.record["left"] == 8


def test_earning_nothing_carriable_is_refused_and_changes_nothing(state):
    full, _ = answer(GAME, state, '[inventory: action="earn" amount="32 pennies" who="Ada"]')
    new, [reply] = answer(GAME, full, '[inventory: action="earn" amount="1 penny" who="Ada"]')
    assert (reply.ok, reply.reason) == (False, "nothing-carried")
    assert new is full


def test_without_carry_everything_goes_to_the_player(state):
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    plain = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, plain, '[inventory: action="add" item="Leather coat" count="40"]')
    assert reply.text == "Added Leather coat ×40 to Ada's bag."
    assert load(game, new, new.characters[0]) == 0  # ITM-BLOCK-19


@pytest.mark.parametrize(("weight", "unit", "text"), [
    (Fraction(3), None, "3"), (Fraction(9, 4), None, "2.25"), (Fraction(1, 3), None, "0.33"),
    (Fraction(12), "lb", "12 lb"), (Fraction(1, 2), "lb", "0.5 lb"),
])
def test_itm_block_20_unit_after_the_number(weight, unit, text):
    assert weight_text(carry_game(unit=unit), weight) == text


def test_distribute_signature_and_same_state_when_nothing_placed(state):
    coat = find_thing(GAME, "Leather coat", state)
    new, placements, left = distribute(GAME, state, coat, 3, None)
    assert (placements, left) == ([(0, 1), (1, 2)], 0)
    assert bag(new, "Ada")[-1] == ("Leather coat", 1)
    heavy = Thing("Anvil", None, None, 10)
    same, none, rest = distribute(GAME, state, heavy, 2, 0)
    assert (none, rest) == ([(0, 2)], 0)  # a plain item weighs nothing
    assert same is not state


def test_distribute_is_deterministic(state):
    coat = find_thing(GAME, "Leather coat", state)
    one = distribute(GAME, state, coat, 7, None)
    two = distribute(GAME, state, coat, 7, None)
    assert one[0].canonical() == two[0].canonical()
    assert (one[1], one[2]) == (two[1], two[2])
    assert json.dumps(one[0].to_json(), sort_keys=True) == json.dumps(two[0].to_json(), sort_keys=True)


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(["Leather coat", "Longbow", "Nail", "Rope", "Torch"]),
       st.integers(min_value=1, max_value=40), st.sampled_from([None, 0, 1]))
def test_distribute_conserves_counts_and_respects_limits(name, count, who):
    state = start_state(GAME, fixture_json("parties/harrow.json"))
    thing = find_thing(GAME, name, state)
    new, placements, left = distribute(GAME, state, thing, count, who)
    assert sum(n for _, n in placements) + left == count
    for index, character in enumerate(new.characters):
        held_before = sum(s.count for s in state.characters[index].bag if s.item == thing.item)
        held_after = sum(s.count for s in character.bag if s.item == thing.item)
        assert held_after - held_before == dict(placements).get(index, 0)
        if dict(placements).get(index) and unit_weight(GAME, new, thing.item, None):
            assert load(GAME, new, character) <= thresholds(GAME, character)[1]
        if who is not None and index != who:
            assert character == state.characters[index]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(1, 5), min_size=0, max_size=40), st.integers(0, 3),
       st.integers(1, 12))
def test_itm_stack_1_stack_room_stops_early_only_once_it_knows_want_fits(counts, free, want):
    """OQ-4: the room a bag has for a thing (free stacks and room in its loose stacks). With
    ``want`` the walk may stop early: the answer is then at least ``want``, and below ``want``
    it is exact, so every caller's ``min(want, room)`` is the full walk's."""
    from engine.rules.carry import stack_room
    from engine.rules.game import MAX_STACKS_PER_BAG
    from engine.rules.state import Stack

    torch = Thing("Torch", "gear/torch", None, 5)
    rope = Stack(name="Rope", item="gear/rope", count=1)
    filler = [rope] * (MAX_STACKS_PER_BAG - len(counts) - free)
    bag = (*filler, *(torch.stack(n) for n in counts))
    exact = stack_room(bag, torch)
    assert exact == free * 5 + sum(5 - n for n in counts)
    early = stack_room(bag, torch, want)
    assert min(want, early) == min(want, exact)
    assert early == exact or early >= want
