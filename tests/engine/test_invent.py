"""Items the GM invents (spec/items.md §5.10: ITM-PROP-1..22 and its open questions, and the
invented weapons of §9.4: ITM-WPN-23..25)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

import tagparse
from engine import Game, State, load_ruleset, start_state
from engine.actions.bags import Add
from engine.actions.declare import read_request
from engine.actions.invent import instructions, similar_weapon
from engine.rules.session import new_session
from engine.rules.sheet import SheetView, effective_abilities
from engine.rules.state import Character

EMBER = fixture_json("rulesets/ember-roads.json")


def ember(document: dict[str, Any] | None = None) -> tuple[Game, State]:
    game = load_ruleset(document or EMBER)
    return game, start_state(game, fixture_json("parties/ember-roads.json"))


def bags() -> tuple[Game, State]:
    game = load_ruleset(fixture_json("rulesets/bags.json"))
    return game, start_state(game, fixture_json("parties/bags.json"))


def add(game: Game, state: State, attrs: str) -> tuple[State, Any]:
    new, answers = answer(game, state, f'[inventory: action="add" {attrs}]')
    return new, answers[0]


def invented(state: State, name: str) -> Any:
    return next(i for i in state.invented if i.name == name)


def dumped(part: Any) -> dict[str, Any]:
    return part.model_dump(by_alias=True, exclude_none=True, exclude_defaults=True) if part \
        else {}


# -- ITM-PROP-1..3, OQ-16 ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    ('[inventory: action="add" item="Rope"]', False),
    ('[inventory: action="add" item="Rope" count="2" who="Ada"]', False),
    ('[inventory: action="add" item="Rope" like="Hand axe"]', True),
    ('[inventory: action="add" item="Rope" summary="Frayed."]', True),
    ('[inventory: action="add" item="Rope" binds="no"]', True),
    ('[inventory: action="add" item="Rope" worn="none"]', True),
])
def test_oq_16_a_description_attribute_makes_a_proposal(text: str, expected: bool) -> None:
    game = harrow()
    request = read_request(Add, tagparse.scan(text).tags[0], game, harrow_party(game))
    assert isinstance(request, Add) and bool(request.description()) is expected


def test_itm_prop_1_an_add_with_a_description_invents_a_ruleset_item() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Ember brooch" category="gear" rarity="storied" '
                                   'worn="+1 Sway" slots="body=1" who="Juno"')
    assert result.ok
    assert result.text == ("Invented Ember brooch [Gear, Storied] (worn: +1 on checks (Sway)). "
                           "Added Ember brooch ×1 to Juno's bag.")
    brooch = invented(new, "Ember brooch")
    assert brooch.ref == "invented/1"
    assert [(s.name, s.item) for s in new.characters[1].bag if s.item == brooch.ref] == [
        ("Ember brooch", "invented/1")]
    assert result.record["invented"] == "Ember brooch" and result.record["changes"] == []


def test_itm_prop_2_itm_block_21_propose_false_refuses_and_changes_nothing() -> None:
    game = load_ruleset(fixture_json("rulesets/gravewatch.json"))
    state = start_state(game, fixture_json("parties/gravewatch.json"))
    new, result = add(game, state, 'item="Ember brooch" category="relic"')
    assert (result.ok, result.reason) == (False, "no-proposals")
    assert new is state


def test_itm_prop_4_parts_by_id_or_label_in_any_case() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Pike" category="WEAPON" rarity="Storied" '
                                   'tags="Two-handed, thrown" stats="Reach=FAR, damage=1d10" '
                                   'slots="HANDS=2"')
    item = invented(new, "Pike").item
    assert (item.category, item.rarity, item.tags) == ("weapon", "storied",
                                                       ["two_handed", "thrown"])
    assert item.stats["reach"] == "far" and item.stats["damage"] == "1d10"
    assert item.slots == {"hands": 2}
    assert "Changed" not in result.text and "It fights as Hunting bow does." in result.text


# -- ITM-PROP-5/6, OQ-15 ----------------------------------------------------------------------

def test_itm_prop_5_like_is_the_starting_point_and_the_rest_overrides_it() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Oiled coat" like="Leather coat" stats="bulk=1" '
                                   'summary="Smells of fish oil."')
    coat = invented(new, "Oiled coat")
    assert coat.item.category == "armor" and coat.item.rarity == "common"
    assert coat.item.slots == {"body": 1}
    assert coat.item.stats == {"bulk": 1, "guard": 1}  # stats= overrides per stat
    assert dumped(coat.item.worn) == {"modifiers": [{"to": "checks", "skills": ["sneak"],
                                                     "flat": -1}]}
    assert coat.summary == "Smells of fish oil."
    assert coat.item.cost is None  # OQ-15: never a market key, so it is unsaleable
    assert result.ok


def test_itm_prop_6_like_an_item_with_charges_keeps_its_charges_and_stacks_alone() -> None:
    game, state = bags()
    new, result = add(game, state, 'item="Dusk bell" like="Dawn bell" count="2" who="Juno"')
    bell = invented(new, "Dusk bell")
    assert bell.item.charges is not None and bell.item.charges.max == 3
    assert bell.item.use is not None
    assert [s.count for s in new.characters[1].bag if s.item == bell.ref] == [1, 1]  # STACK-3
    assert result.ok


def test_itm_prop_6_itm_wpn_23_like_a_weapon_fights_with_its_own_capped_stats() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Bone axe" like="Hand axe" stats="damage=1d8"')
    axe = invented(new, "Bone axe")
    assert axe.item.attack is not None and axe.item.stats["damage"] == "1d8"
    assert axe.item.attack.damage is not None
    assert "It fights as" not in result.text  # like= is not an inference


# -- ITM-PROP-7/8, OQ-19 ------------------------------------------------------------------------

@pytest.mark.parametrize(("written", "expected"), [
    ("+1 Sneak", {"modifiers": [{"to": "checks", "skills": ["sneak"], "flat": 1}]}),
    ("-1 checks", {"modifiers": [{"to": "checks", "flat": -1}]}),
    ("+1 saves", {"modifiers": [{"to": "saves", "flat": 1}]}),
    ("+1 Steel", {"modifiers": [{"to": "saves", "saves": ["steel"], "flat": 1}]}),
    ("advantage on Sneak", {"modifiers": [{"to": "checks", "skills": ["sneak"],
                                           "mode": "advantage"}]}),
    ("disadvantage on Sway checks", {"modifiers": [{"to": "checks", "skills": ["sway"],
                                                    "mode": "disadvantage"}]}),
    ("disadvantage on saves", {"modifiers": [{"to": "saves", "mode": "disadvantage"}]}),
    ("fails Steel", {"failsSaves": ["steel"]}),
    ("-1 Brawn", {"abilities": {"brawn": {"add": -1}}}),
    ("+1 attacks", {"modifiers": [{"to": "attacks", "flat": 1}]}),
    ("advantage on attacks", {"modifiers": [{"to": "attacks", "mode": "advantage"}]}),
    ("+1 defence", {"modifiers": [{"to": "defence", "flat": 1}]}),
    ("+1 Guard", {"modifiers": [{"to": "defence", "flat": 1}]}),  # the ruleset's own word
    ("none", {}),
    # ITM-PROP-10: what small models write instead
    ("Brawn +1", {"abilities": {"brawn": {"add": 1}}}),
    ("+1 attack roll bonus", {"modifiers": [{"to": "attacks", "flat": 1}]}),
    ("+1 Guard bonus", {"modifiers": [{"to": "defence", "flat": 1}]}),
    ("Sneak +1", {"modifiers": [{"to": "checks", "skills": ["sneak"], "flat": 1}]}),
])
def test_itm_prop_8_the_worn_grammar(written: str, expected: dict[str, Any]) -> None:
    game, state = ember()
    new, result = add(game, state, f'item="Token" category="gear" rarity="storied" '
                                   f'worn="{written}"')
    assert result.ok and "Changed" not in result.text, result.text
    assert dumped(invented(new, "Token").item.worn) == expected


def test_itm_prop_7_changes_separated_by_semicolons_and_carried_too() -> None:
    game, state = ember()
    new, _ = add(game, state, 'item="Token" category="gear" rarity="storied" '
                              'carried="+1 Sneak; disadvantage on Sway checks; +1 Brawn"')
    token = invented(new, "Token").item
    assert token.worn is None
    assert dumped(token.carried) == {
        "modifiers": [{"to": "checks", "skills": ["sneak"], "flat": 1},
                      {"to": "checks", "skills": ["sway"], "mode": "disadvantage"}],
        "abilities": {"brawn": {"add": 1}}}


def test_itm_chk_8_an_invented_item_changes_a_check_under_its_own_name() -> None:
    """ITM-CHK-8 with ITM-PROP-20: the check's record names the invented item as the GM named
    it, not by its internal reference."""
    game, state = ember()
    new, result = add(game, state, 'item="Lucky Token" category="gear" carried="+1 Sneak"')
    assert result.ok, result.text
    _, answers = answer(game, new, '[skill_check: skill="sneak" dc="10"]')
    _, before = answer(game, state, '[skill_check: skill="sneak" dc="10"]')
    assert int(answers[0].record["effects"]) == int(before[0].record.get("effects", "0")) + 1
    assert answers[0].record["from"].split(", ")[-1] == "Lucky Token"
    assert "invented/" not in answers[0].record["from"]


def test_itm_prop_8_attacks_and_defence_only_where_the_ruleset_has_fights() -> None:
    document = copy.deepcopy(EMBER)
    del document["combat"]
    for catalog in document["catalogs"]:
        for entry in catalog["entries"]:
            entry["item"].pop("attack", None)
            entry["item"].pop("use", None)
    game, state = ember(document)
    new, result = add(game, state, 'item="Token" category="gear" worn="+1 attacks; +1 Sneak"')
    assert dumped(invented(new, "Token").item.worn) == {
        "modifiers": [{"to": "checks", "skills": ["sneak"], "flat": 1}]}
    assert 'worn "+1 attacks" dropped (no such skill, save or ability)' in result.text


def test_oq_19_a_name_that_is_a_skill_and_an_ability_is_the_skill() -> None:
    document = copy.deepcopy(EMBER)
    document["sheet"]["skills"].append({"id": "brawn", "label": "Brawn", "ability": "brawn"})
    game, state = ember(document)
    new, _ = add(game, state, 'item="Token" category="gear" rarity="storied" worn="+1 Brawn"')
    assert dumped(invented(new, "Token").item.worn) == {
        "modifiers": [{"to": "checks", "skills": ["brawn"], "flat": 1}]}


# -- ITM-PROP-9, OQ-20 ------------------------------------------------------------------------

def test_itm_prop_9_a_defence_change_next_to_a_counted_stat_is_dropped() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Warden coat" category="armor" slots="body=1" '
                                   'stats="guard=1" worn="+1 Guard; -1 Sneak"')
    coat = invented(new, "Warden coat").item
    assert coat.stats == {"guard": 1}
    assert dumped(coat.worn) == {"modifiers": [{"to": "checks", "skills": ["sneak"],
                                                "flat": -1}]}
    assert "worn defence change dropped: Guard already adds to the defence" in result.text


def test_oq_20_without_the_stat_in_the_proposal_the_defence_change_stands() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Warden coat" like="Leather coat" worn="+1 Guard"')
    assert dumped(invented(new, "Warden coat").item.worn) == {
        "modifiers": [{"to": "defence", "flat": 1}]}
    assert "Changed" not in result.text


# -- ITM-PROP-10 -----------------------------------------------------------------------------

@pytest.mark.parametrize("attrs", ['tags="none"', 'stats="none"', 'slots="none"'])
def test_itm_prop_10_none_is_an_empty_list(attrs: str) -> None:
    game, state = ember()
    new, result = add(game, state, f'item="Bare" like="Hand axe" {attrs}')
    item = invented(new, "Bare").item
    key = attrs.split("=")[0]
    assert getattr(item, key) in ([], {})
    assert result.ok


def test_itm_prop_10_worn_carried_and_summary_inside_stats() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Sack" category="gear" slots="body=1" '
                                   'stats="bulk=1, worn=+1 Sway; -1 Sneak, summary=An old sack."')
    sack = invented(new, "Sack")
    assert sack.item.stats == {"bulk": 1} and sack.summary == "An old sack."
    assert dumped(sack.item.worn) == {"modifiers": [
        {"to": "checks", "skills": ["sway"], "flat": 1},
        {"to": "checks", "skills": ["sneak"], "flat": -1}]}
    assert "worn= read from stats=." in result.text


# -- ITM-PROP-11..16, OQ-21/22 ----------------------------------------------------------------

def test_itm_prop_11_12_unknown_parts_are_dropped_and_the_rest_stands() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Odd blade" like="Hand axe" tags="thrown, glowing" '
                                   'stats="speed=3, bulk=2" slots="tail=1, hands=1" '
                                   'worn="+1 Swim; +1 Sneak"')
    blade = invented(new, "Odd blade").item
    assert blade.tags == ["thrown"] and blade.stats["bulk"] == 2 and blade.slots == {"hands": 1}
    assert dumped(blade.worn) == {"modifiers": [{"to": "checks", "skills": ["sneak"],
                                                 "flat": 1}]}
    for said in ('tag "glowing" dropped (not a tag here)',
                 'stat "speed" dropped (not a stat here)',
                 'slot "tail" dropped (not a slot here)',
                 'worn "+1 Swim" dropped (no such skill, save, ability, attack or defence)'):
        assert said in result.text


@pytest.mark.parametrize(("stats", "dropped"), [
    ("reach=very far", 'Reach "very far" dropped (not a value Reach takes)'),
    ("damage=lots", 'Damage "lots" dropped (not a value Damage takes)'),
    ("bulk=heavy", 'Bulk "heavy" dropped (not a value Bulk takes)'),
])
def test_itm_prop_13_a_value_the_stat_cannot_take_is_dropped(stats: str, dropped: str) -> None:
    game, state = ember()
    new, result = add(game, state, f'item="Thing" category="gear" stats="{stats}"')
    assert invented(new, "Thing").item.stats == {}
    assert dropped in result.text


def test_itm_prop_14_itm_block_5_an_unknown_rarity_becomes_the_lowest() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Relic" category="gear" rarity="legendary"')
    assert invented(new, "Relic").item.rarity == "common"
    assert 'rarity "legendary" replaced by Common (not a rarity here)' in result.text


@pytest.mark.parametrize(("rarity", "guard", "expected", "said"), [
    ("storied", "2", 2, None),
    ("storied", "9", 3, "Guard 9 lowered to 4 (its range); Guard 4 capped to 3 (Storied items)"),
    ("common", "3", 1, "Guard 3 capped to 1 (Common items)"),
    ("storied", "2.7", 2, "Guard 2.7 rounded down to 2"),
    ("storied", "-2", 0, "Guard -2 raised to 0 (its range)"),
])
def test_itm_prop_15_range_then_rarity_cap_then_whole(rarity: str, guard: str, expected: int,
                                                      said: str | None) -> None:
    game, state = ember()
    new, result = add(game, state, f'item="Mail" category="armor" rarity="{rarity}" '
                                   f'stats="guard={guard}"')
    assert invented(new, "Mail").item.stats["guard"] == expected
    if said is None:
        assert "Changed" not in result.text
    else:
        assert said in result.text


def test_itm_prop_15_like_brought_stats_are_capped_too() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Cheap mail" like="Storied mail" rarity="common"')
    assert invented(new, "Cheap mail").item.stats["guard"] == 1
    assert "Guard 3 capped to 1 (Common items)" in result.text


@pytest.mark.parametrize(("rarity", "worn", "expected", "said"), [
    ("common", "+3 Sneak", [{"to": "checks", "skills": ["sneak"], "flat": 1}],
     "worn +3 on checks (Sneak) capped to +1 (Common items)"),
    ("storied", "+3 Sneak", [{"to": "checks", "skills": ["sneak"], "flat": 2}],
     "worn +3 on checks (Sneak) capped to +2 (Storied items)"),
    ("common", "-3 Sneak", [{"to": "checks", "skills": ["sneak"], "flat": -3}], None),
    ("common", "+1d4 Sneak", [], "worn +1d4 on checks (Sneak) dropped (a dice bonus cannot "
                                 "be capped)"),
    ("common", "-1d4 Sneak", [{"to": "checks", "skills": ["sneak"], "dice": "1d4",
                               "minus": True}], None),
])
def test_itm_prop_16_itm_caps_3_4_5_worn_bonus_capped_dice_dropped_penalty_kept(
        rarity: str, worn: str, expected: list[dict[str, Any]], said: str | None) -> None:
    game, state = ember()
    new, result = add(game, state, f'item="Token" category="gear" rarity="{rarity}" '
                                   f'worn="{worn}"')
    assert dumped(invented(new, "Token").item.worn).get("modifiers", []) == expected
    if said is None:
        assert "Changed" not in result.text
    else:
        assert said in result.text


def test_itm_prop_16_the_part_like_brought_along_is_capped_too() -> None:
    document = copy.deepcopy(EMBER)
    charm = next(e for e in document["catalogs"][0]["entries"] if e["id"] == "lucky-charm")
    charm["item"]["carried"]["modifiers"][0]["flat"] = 3
    game, state = ember(document)
    new, result = add(game, state, 'item="Rabbit foot" like="Lucky charm"')
    assert dumped(invented(new, "Rabbit foot").item.carried)["modifiers"][0]["flat"] == 1
    assert "carried +3 on checks (Sway) capped to +1 (Common items)" in result.text


def test_oq_21_no_rarity_is_capped_as_the_lowest_without_getting_it() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Plate" category="armor" stats="guard=4" '
                                   'worn="+2 Steel"')
    plate = invented(new, "Plate").item
    assert plate.rarity is None and plate.stats["guard"] == 1
    assert dumped(plate.worn)["modifiers"][0]["flat"] == 1
    assert result.ok


def test_oq_22_ability_changes_are_not_capped() -> None:
    game, state = ember()
    new, _ = add(game, state, 'item="Girdle" category="gear" rarity="common" worn="+3 Brawn"')
    assert dumped(invented(new, "Girdle").item.worn) == {"abilities": {"brawn": {"add": 3}}}


def test_itm_caps_6_catalog_items_are_never_capped() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Storied mail" rarity="common" stats="guard=3" '
                                   'who="Juno"')
    assert new.invented == () and result.ok  # ITM-PROP-17: the catalog item, uncapped
    assert game.items["outfitter/storied-mail"].item.stats["guard"] == 3


# -- ITM-PROP-17, OQ-18, OQ-23 ------------------------------------------------------------------

def test_itm_prop_17_a_ruleset_item_name_adds_that_item_without_the_description() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="hand AXE" stats="damage=1d12" who="Juno"')
    assert new.invented == ()
    assert [s.item for s in new.characters[1].bag if s.name == "Hand axe"] == [
        "outfitter/hand-axe"]
    assert result.notes == ("Hand axe is already an item of this game, so the description "
                            "(stats) was not applied",)


def test_oq_23_a_reused_invented_name_is_the_stored_item() -> None:
    game, state = ember()
    state, _ = add(game, state, 'item="Ember brooch" category="gear" worn="+1 Sway"')
    new, result = add(game, state, 'item="ember brooch" category="armor" worn="+1 Sneak"')
    assert len(new.invented) == 1 and new.invented[0].item.category == "gear"
    assert [(s.name, s.count) for s in new.characters[0].bag
            if s.item == "invented/1"] == [("Ember brooch", 2)]
    assert "was not applied" in result.notes[0]


def test_oq_18_no_category_is_a_plain_item_under_native_true() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Odd stone" category="pebble"')
    assert new.invented == () and result.ok
    assert ("Odd stone", 1) in [(s.name, s.count) for s in new.characters[0].bag if s.plain]
    assert 'category "pebble" dropped (not a category here)' in result.notes


def test_oq_18_no_category_is_refused_under_native_false() -> None:
    game, state = bags()
    new, result = add(game, state, 'item="Odd stone" summary="Round."')
    assert (result.ok, result.reason) == (False, "not-ruleset-item")
    assert new is state


# -- ITM-PROP-18, ITM-BLOCK-11 ----------------------------------------------------------------

def test_itm_prop_18_never_a_hidden_stat_in_the_answer() -> None:
    game, state = bags()
    new, result = add(game, state, 'item="Gilt idol" category="relic" rarity="common" '
                                   'stats="worth=500, bulk=1"')
    idol = invented(new, "Gilt idol").item
    assert idol.stats == {"worth": 10, "bulk": 1}  # clamped to 100, then to the Common cap
    told = json.dumps([result.text, result.record, result.notes])
    assert "worth" not in told.casefold() and "500" not in told
    assert result.text == ("Invented Gilt idol [Relic, Common; Bulk 1]. "
                           "Added Gilt idol ×1 to Ada's bag.")


# -- ITM-PROP-20..22 ---------------------------------------------------------------------------

def test_itm_prop_20_the_name_stays_that_item_for_the_rest_of_the_game() -> None:
    game, state = ember()
    state, _ = add(game, state, 'item="Ember brooch" category="gear" stats="bulk=1"')
    state, answers = answer(game, state, '[inventory: action="remove" item="Ember brooch"]')
    assert answers[0].ok and state.invented  # nobody holds it, but the game keeps it
    state, result = add(game, state, 'item="Ember brooch" who="Juno"')
    assert result.ok and [s.item for s in state.characters[1].bag
                          if s.name == "Ember brooch"] == ["invented/1"]


def test_itm_prop_21_a_new_session_keeps_only_what_somebody_owns() -> None:
    game, state = ember()
    state, _ = add(game, state, 'item="Ember brooch" category="gear"')
    state, _ = add(game, state, 'item="Ash pipe" category="gear"')
    state, _ = answer(game, state, '[inventory: action="remove" item="Ember brooch"]')
    kept = new_session(state)
    assert [i.name for i in kept.invented] == ["Ash pipe"]
    assert new_session(kept) is kept
    again, _ = add(game, kept, 'item="Ember brooch" category="armor"')
    assert invented(again, "Ember brooch").item.category == "armor"  # a new item now
    assert invented(again, "Ember brooch").ref == "invented/3"  # never a reused reference


def test_itm_prop_22_invented_items_are_read_by_the_sheet_checks_and_carry() -> None:
    game, state = ember()
    state, _ = add(game, state, 'item="Warden coat" category="armor" rarity="storied" '
                                'slots="body=1" stats="guard=2, bulk=3" '
                                'worn="+1 Brawn" who="Juno"')
    state, answers = answer(game, state, '[inventory: action="equip" item="Warden coat" '
                                         'who="Juno"]')
    assert answers[0].ok
    juno = state.characters[1]
    from engine.rules.carry import load
    from engine.ruleset import ValueRef

    assert SheetView(game, juno, state).value(ValueRef(derived="guard")) == 6 + 2 + 2
    assert effective_abilities(game, juno, state)["brawn"] == 2
    assert load(game, state, juno) == 3 + load(game, state, juno.model_copy(
        update={"bag": tuple(s for s in juno.bag if s.name != "Warden coat")}))


def test_itm_carry_7_an_invented_item_nobody_can_carry_is_not_kept() -> None:
    game, state = bags()
    new, result = add(game, state, 'item="Boulder idol" like="Anvil" stats="bulk=10" who="Juno"')
    assert (result.ok, result.reason) == (False, "nothing-carried")
    assert new is state and new.invented == ()


# -- ITM-WPN-24/25, OQ-27/28 -------------------------------------------------------------------

@pytest.mark.parametrize(("name", "weapon"), [
    ("Bone axe", "Hand axe"), ("Short bow", "Hunting bow"), ("Crossbow", "Hunting bow"),
    ("Hog spear", "Boar spear"), ("Cudgel", "Hunting bow"),
])
def test_oq_27_the_most_similar_weapon_by_shared_words(name: str, weapon: str) -> None:
    game, _ = ember()
    found = similar_weapon(game, name, "weapon")
    assert found is not None and found[0] == weapon


def test_itm_wpn_25_a_weapon_without_like_fights_as_the_most_similar_one() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Bone axe" category="weapon" slots="hands=1" '
                                   'stats="damage=1d4"')
    axe = invented(new, "Bone axe").item
    assert axe.attack is not None
    assert axe.stats == {"damage": "1d4", "swing": "brawn"}  # OQ-28: its own slots only
    assert "It fights as Hand axe does." in result.text


def test_itm_wpn_24_never_worn_means_no_attack() -> None:
    game, state = ember()
    new, result = add(game, state, 'item="Wall axe" like="Hand axe" slots="none"')
    assert invented(new, "Wall axe").item.attack is None
    assert "no attack (no slot and no binding: it is never held)" in result.text


# -- robustness and determinism ---------------------------------------------------------------

@pytest.mark.parametrize("attrs", [
    'item="X" category="gear" stats="' + "bulk=1," * 5000 + '"',
    'item="X" category="gear" worn="' + "+1 Sneak;" * 5000 + '"',
    'item="X" category="gear" worn="+99999999999999999999 Sneak; +1e400 Brawn"',
    'item="X" category="gear" stats="bulk=nan, guard=inf, bulk=1e999"',
    'item="X" category="gear" slots="hands=99999999, body=-1, neck"',
    'item="' + "Y" * 5000 + '" category="gear" summary="' + "z" * 20000 + '"',
    'item="X" category="gear" worn=";;;" carried="advantage" tags=",,," binds="maybe"',
    'item="X" category="gear" stats="=,:,=:, =1" like=""',
    'item="X" category="gear" worn="' + "a " * 9000 + '+1" stats="' + "b " * 9000 + '"',
    'item="X" category="gear" stats="worn=' + "+1 Sneak " * 3000 + '"',
])
def test_bad_input_never_crashes_and_stays_bounded(attrs: str) -> None:
    game, state = ember()
    new, result = add(game, state, attrs)
    assert result.ok
    for stored in new.invented:
        assert len(stored.name) <= 120 and len(stored.summary or "") <= 400
        assert len(json.dumps(stored.item.model_dump(mode="json"))) < 5000
    assert len(result.text) < 5000


def test_the_same_proposal_gives_the_same_state_and_answer() -> None:
    game, state = ember()
    text = ('[inventory: action="add" item="Ember brooch" like="Lucky charm" rarity="mythic" '
            'worn="+3 Sneak; Brawn +1" stats="guard=9, worn=+1 Sway" who="Juno"]')
    first = answer(game, state, text)
    second = answer(game, state, text)
    assert first[0].canonical() == second[0].canonical()
    assert [a.to_json() for a in first[1]] == [a.to_json() for a in second[1]]


def test_a_character_reads_its_own_invented_item_only() -> None:
    game, state = ember()
    state, _ = add(game, state, 'item="Girdle" category="gear" carried="+2 Brawn" who="Ada"')
    assert effective_abilities(game, state.characters[0], state)["brawn"] == 4
    assert effective_abilities(game, state.characters[1], state)["brawn"] == 1
    assert isinstance(state.characters[0], Character)


def test_itm_wpn_26_itm_cmd_3_the_proposal_instructions_only_where_inventing_is_on() -> None:
    game, _ = bags()
    lines = instructions(game)
    # Issue 39: a small invent (a category and a summary), the other attributes optional
    assert lines[0].startswith('- Invent only what this ruleset lacks: [inventory: '
                               'action="add" item="Bone flute" category="Gear" '
                               'summary="A carved flute."]; like=')
    assert lines[0].endswith(", binds= are optional.")
    assert "  Stats: Bulk, Guard, Damage, Rolls with, Reach." in lines  # never True worth
    assert lines[-1].endswith("An item invented like= a weapon fights like it.")
    assert instructions(load_ruleset(fixture_json("rulesets/gravewatch.json"))) == []
    assert 'binds=' not in instructions(ember()[0])[0]  # Ember Roads has no binding
