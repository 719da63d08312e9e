"""Items on the sheet: itemStat (ITM-ISTAT-*) and abilities set/add (ITM-ABIL-*)."""

from __future__ import annotations

import pytest
from helpers import answer, fixture_json

from engine import load_ruleset, start_state
from engine.rules.sheet import SheetView, effective_abilities
from engine.ruleset import ValueRef


def sheet_document():
    document = fixture_json("rulesets/harrow.json")
    document["capabilityApi"] = "1.813"
    document["items"]["binding"] = {"label": "Attunement", "max": {"const": 3}}
    document["sheet"]["derived"].append(
        {"id": "armour", "label": "Armour", "op": "sum",
         "of": [{"const": 6}, {"itemStat": {"stat": "guard", "from": "worn", "pick": "sum"}}]})
    document["live"]["pools"].append({"id": "vigour", "label": "Vigour",
                                      "max": {"abilityScore": "brawn"}})
    document["catalogs"][0]["entries"] += [
        {"id": "gloves", "label": "Oxhide gloves",
         "item": {"category": "armor", "slots": {"hands": 1},
                  "worn": {"abilities": {"brawn": {"set": 4}}}}},
        {"id": "belt", "label": "Belt", "item": {"category": "gear",
                                                 "carried": {"abilities": {"brawn": {"add": 1}}}}},
        {"id": "weight", "label": "Lead weight", "item": {"category": "gear",
                                                         "carried": {"abilities": {"brawn": {"add": -3}}}}},
        {"id": "shield", "label": "Shield", "item": {"category": "armor", "slots": {"hands": 1},
                                                     "stats": {"guard": 2}}},
        {"id": "ward", "label": "Ward stone", "item": {"category": "gear", "binds": {},
                                                       "stats": {"guard": 3}}},
    ]
    return document


GAME = load_ruleset(sheet_document())


@pytest.fixture()
def state():
    return start_state(GAME, fixture_json("parties/harrow.json"))


def item_stat(state, who=0, **spec):
    return SheetView(GAME, state.characters[who], state).value(ValueRef(item_stat=spec))


def test_itm_istat_2_3_worn_means_equipped_and_bound_where_it_has_them(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Shield"] '
                                 '[inventory: action="add" item="Ward stone"]')
    assert item_stat(new, stat="guard", **{"from": "worn"}) == 0
    assert item_stat(new, stat="guard", **{"from": "carried"}) == 2 + 3
    worn, _ = answer(GAME, new, '[inventory: action="equip" item="Shield"] '
                                '[inventory: action="bind" item="Ward stone"]')
    assert item_stat(worn, stat="guard", **{"from": "worn"}) == 5
    assert SheetView(GAME, worn.characters[0], worn).derived("armour") == 11


@pytest.mark.parametrize(("spec", "expected"), [
    ({"stat": "bulk", "pick": "sum"}, 1 + 1 + 2 * 3),  # ITM-ISTAT-4: axe 1, rope 1, 3 coats × 2
    ({"stat": "bulk", "pick": "max"}, 2),  # ITM-ISTAT-5
    ({"stat": "bulk", "pick": "min"}, 1),
    ({"pick": "count"}, 1 + 1 + 3),  # ITM-ISTAT-6: by counts
    ({"pick": "count", "stat": "damage"}, 1),  # ITM-ISTAT-8: only items that give it
    ({"pick": "count", "category": "armor"}, 3),  # ITM-ISTAT-9
    ({"pick": "count", "tag": "thrown"}, 1),
    ({"pick": "count", "slot": "hands"}, 1),
    ({"pick": "count", "slot": "hands", "category": "armor"}, 0),
    ({"stat": "bulk", "pick": "max", "category": "remedy", "default": 7}, 7),  # ITM-ISTAT-10
    ({"stat": "guard", "pick": "sum", "from": "worn"}, 0),
])
def test_itm_istat_4_to_10_picks_and_filters(state, spec, expected):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Leather coat" count="3"]')
    assert item_stat(new, **spec) == expected


def test_itm_istat_14_15_each_character_reads_its_own_bag(state):
    assert item_stat(state, 0, pick="count") == 2
    assert item_stat(state, 1, pick="count") == 3


def test_itm_istat_16_plain_items_and_coins_do_not_count(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Old boot" count="4"]')
    assert item_stat(new, pick="count") == 2


def test_itm_istat_18_outside_a_game_itemstat_reads_its_default():
    assert SheetView(GAME, None).value(ValueRef(item_stat={"stat": "guard", "default": 2})) == 2


def test_itm_abil_1_2_set_is_at_least(state):
    gloves, _ = answer(GAME, state, '[inventory: action="add" item="Oxhide gloves" who="Bram the Quiet"] '
                                    '[inventory: action="equip" item="Oxhide gloves" who="Bram the Quiet"]')
    assert effective_abilities(GAME, gloves.characters[1], gloves)["brawn"] == 4
    strong = gloves.with_character(1, gloves.characters[1].model_copy(
        update={"abilities": {"brawn": 5}}))
    assert effective_abilities(GAME, strong.characters[1], strong)["brawn"] == 5


def test_itm_worn_1_worn_only_while_equipped(state):
    carried, _ = answer(GAME, state, '[inventory: action="add" item="Oxhide gloves"]')
    assert effective_abilities(GAME, carried.characters[0], carried)["brawn"] == 2


def test_itm_abil_3_5_adds_sum_then_highest_set_then_clamp(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Belt"] '
                                 '[inventory: action="add" item="Lead weight"]')
    assert effective_abilities(GAME, new.characters[0], new)["brawn"] == 0  # 2 + 1 - 3
    both, _ = answer(GAME, new, '[inventory: action="add" item="Oxhide gloves"] '
                                '[inventory: action="equip" item="Oxhide gloves"]')
    assert effective_abilities(GAME, both.characters[0], both)["brawn"] == 4  # max(0, 4)
    belts, _ = answer(GAME, state, '[inventory: action="add" item="Belt"] '
                                   '[inventory: action="add" item="Oxhide gloves"] '
                                   '[inventory: action="equip" item="Oxhide gloves"]')
    strong = belts.with_character(0, belts.characters[0].model_copy(update={"abilities": {"brawn": 5}}))
    assert effective_abilities(GAME, strong.characters[0], strong)["brawn"] == 5  # clamped to max 5


def test_itm_worn_8_an_item_applies_once_however_many_stacks(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Belt" count="3"]')
    assert effective_abilities(GAME, new.characters[0], new)["brawn"] == 3


def test_itm_abil_4_derived_values_read_the_changed_score(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Belt"]')
    view = SheetView(GAME, new.characters[0], new)
    assert view.value(ValueRef(ability_score="brawn")) == 3
    assert view.value(ValueRef(ability_mod="brawn")) == 3


def test_itm_abil_6_a_pool_max_reads_the_unchanged_sheet(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Belt"]')
    assert SheetView(GAME, new.characters[0], new).pool("vigour") == 2


def test_huge_sheet_numbers_stay_finite(state):
    """A value reference never reads infinity or NaN, so nothing downstream (``int()``,
    ``math.floor``) can overflow: products of big constants, a floor division by a tiny one,
    and an invented item's huge stat times its count are held at ±MAX_SHEET_NUMBER."""
    from engine.rules.sheet import MAX_SHEET_NUMBER

    document = sheet_document()
    big, tiny = {"const": 1e300}, {"const": 1e-300}
    document["sheet"]["derived"] += [
        {"id": "huge", "label": "Huge", "op": "product", "of": [big, big, big]},
        {"id": "sunk", "label": "Sunk", "op": "product", "of": [big, {"const": -1e300}]},
        {"id": "split", "label": "Split", "op": "floorDiv", "of": [{"const": 7}, tiny]},
        {"id": "both", "label": "Both", "op": "sum",
         "of": [{"derived": "huge"}, {"derived": "sunk"}]},
    ]
    game = load_ruleset(document)
    view = SheetView(game, state.characters[0], state)
    assert view.value(ValueRef(derived="huge")) == MAX_SHEET_NUMBER
    assert view.value(ValueRef(derived="sunk")) == -MAX_SHEET_NUMBER
    assert view.derived("split") == MAX_SHEET_NUMBER
    assert view.value(ValueRef(derived="both")) == 0
    new, answers = answer(game, state, '[inventory: action="add" item="Ingot of lead" '
                                       'count="5" category="gear" stats="guard: 1e300"]')
    assert answers[0].ok, answers[0].text
    read = SheetView(game, new.characters[0], new).value(
        ValueRef(item_stat={"stat": "guard", "pick": "sum"}))
    assert read == 4 * 5  # ITM-ISTAT-4: the stat's range holds it at 4, times the count
    assert "Guard 1e+300 lowered to 4 (its range)" in answers[0].text
