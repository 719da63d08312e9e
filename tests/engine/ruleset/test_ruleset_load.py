"""Loading a ruleset: every problem listed with its JSON pointer (ITM-INV-1, DESIGN.md)."""

from __future__ import annotations

import copy

import pytest
from helpers import fixture_json

from engine import RulesetError, load_ruleset
from engine.ruleset import validate, version_tuple

HARROW = fixture_json("rulesets/harrow.json")


def problems_of(mutate):
    document = copy.deepcopy(HARROW)
    mutate(document)
    _, problems = validate(document)
    return [str(p) for p in problems]


def test_the_demo_ruleset_is_valid():
    game = load_ruleset(HARROW)
    assert "kit/hand-axe" in game.items
    assert game.find_item("  hand AXE ").ref == "kit/hand-axe"
    assert len(game.digest) == 64


def test_digest_is_stable_across_key_order():
    reordered = dict(reversed(list(copy.deepcopy(HARROW).items())))
    assert load_ruleset(reordered).digest == load_ruleset(HARROW).digest


def _set(path, value):
    def mutate(document):
        node = document
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = value
    return mutate


def _append(path, value):
    def mutate(document):
        node = document
        for step in path:
            node = node[step]
        node.append(value)
    return mutate


ENTRY = ("catalogs", 0, "entries", 0, "item")

CASES = [
    ("unknown top-level key", _set(("colour",), "red"), '/colour: unknown key "colour"'),
    ("ITM-BLOCK-2 no categories", _set(("items", "categories"), []),
     "/items/categories: List should have at least 1 item after validation, not 0"),
    ("ITM-BLOCK-2 duplicate category", _append(("items", "categories"), {"id": "weapon", "label": "W"}),
     '/items/categories/5/id: duplicate id "weapon"'),
    ("ITM-CUR-3 same value twice", _append(("items", "currencies", 0, "units"),
                                           {"id": "groat", "label": "groats", "value": 12}),
     "/items/currencies/0/units/3/value: two coins of one family have the value 12"),
    ("ITM-CUR-5 coin id across families", _append(("items", "currencies"),
        {"id": "salt", "label": "Salt", "units": [{"id": "penny", "label": "pinches", "value": 1}]}),
     '/items/currencies/1/units/0/id: coin id "penny" is used by another coin'),
    ("ITM-CUR-2 smallest coin is 1", _set(("items", "currencies", 0, "units", 0, "value"), 2),
     "/items/currencies/0/units: the smallest coin of a family is worth 1"),
    ("ITM-CUR-8 perWeight without carry", _set(("items", "currencies", 0, "perWeight"), 100),
     '/items/currencies/0/perWeight: perWeight needs "carry" in the item block'),
    ("ITM-ENTRY-3 unknown category", _set((*ENTRY, "category"), "wand"),
     '/catalogs/0/entries/0/item/category: unknown category "wand"'),
    ("ITM-ENTRY-4 unknown rarity", _set((*ENTRY, "rarity"), "legendary"),
     '/catalogs/0/entries/0/item/rarity: unknown rarity "legendary"'),
    ("ITM-ENTRY-5 unknown tag", _set((*ENTRY, "tags"), ["thrown", "cursed"]),
     '/catalogs/0/entries/0/item/tags/1: unknown tag "cursed"'),
    ("ITM-ENTRY-6 stat above max", _set((*ENTRY, "stats"), {"bulk": 11}),
     '/catalogs/0/entries/0/item/stats/bulk: 11 is above the maximum 10 of "bulk"'),
    ("ITM-ENTRY-6 enum value", _set((*ENTRY, "stats"), {"reach": "very far"}),
     '/catalogs/0/entries/0/item/stats/reach: "very far" is not one of the values of "reach"'),
    ("ITM-ENTRY-6 dice", _set((*ENTRY, "stats"), {"damage": "lots"}),
     '/catalogs/0/entries/0/item/stats/damage: "lots" is not dice notation'),
    ("ITM-BLOCK-9 whole numbers", _set((*ENTRY, "stats"), {"bulk": 0.5}),
     '/catalogs/0/entries/0/item/stats/bulk: "bulk" takes whole numbers'),
    ("ITM-ENTRY-7 too many slots", _set((*ENTRY, "slots"), {"hands": 3}),
     "/catalogs/0/entries/0/item/slots/hands: takes 3 of a slot a character has 2 of"),
    ("ITM-ENTRY-8 stack range", _set((*ENTRY, "stack"), 0),
     "/catalogs/0/entries/0/item/stack: Input should be greater than or equal to 1"),
    ("ITM-ENTRY-11 unknown coin", _set((*ENTRY, "cost"), {"amount": 3, "unit": "ducat"}),
     '/catalogs/0/entries/0/item/cost/unit: unknown coin "ducat"'),
    ("ITM-ENTRY-18 binds without binding", _set((*ENTRY, "binds"), {}),
     '/catalogs/0/entries/0/item/binds: items bind only in a ruleset with "binding"'),
    ("ITM-SVC-5 service with slots", _set(("catalogs", 0, "entries", 8, "item", "slots"), {"body": 1}),
     '/catalogs/0/entries/8/item/slots: a service has no "slots"'),
    ("ITM-CAT-2 item entry without item", _append(("catalogs", 0, "entries"), {"id": "x", "label": "X"}),
     '/catalogs/0/entries/9: an entry of an item catalog carries an "item"'),
    ("duplicate entry id", _append(("catalogs", 0, "entries"),
                                   {"id": "rope", "label": "Rope 2", "item": {"category": "gear"}}),
     '/catalogs/0/entries/9/id: duplicate id "rope"'),
    ("layer hides unknown entry", _set(("layers", 0, "hides"), ["kit/nothing"]),
     '/layers/0/hides/0: unknown catalog entry "kit/nothing"'),
    ("skill names unknown ability", _set(("sheet", "skills", 0, "ability"), "luck"),
     '/sheet/skills/0/ability: unknown ability "luck"'),
    ("derived cycle", _set(("sheet", "derived"), [
        {"id": "a", "label": "A", "of": [{"derived": "b"}]},
        {"id": "b", "label": "B", "of": [{"derived": "a"}]}]),
     '/sheet/derived/0: derived values read each other in a cycle through "a"'),
    ("value reference with two kinds", _set(("live", "pools", 0, "max"), {"const": 1, "field": "level"}),
     "/live/pools/0/max: Value error, a value reference names exactly one of const, abilityScore, "
     "abilityMod, field, derived, pool, itemStat (found 2)"),
]


@pytest.mark.parametrize(("name", "mutate", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_problem_has_its_exact_pointer_and_message(name, mutate, expected):
    assert expected in problems_of(mutate)


def test_every_problem_is_listed_not_just_the_first():
    def two(document):
        document["catalogs"][0]["entries"][0]["item"]["category"] = "wand"
        document["catalogs"][0]["entries"][1]["item"]["rarity"] = "mythic"
    found = problems_of(two)
    assert len(found) == 2


def test_load_ruleset_raises_with_all_problems():
    document = copy.deepcopy(HARROW)
    document["items"]["categories"].append({"id": "gear", "label": "Again"})
    with pytest.raises(RulesetError) as error:
        load_ruleset(document)
    assert [str(p) for p in error.value.problems] == ['/items/categories/5/id: duplicate id "gear"']


@pytest.mark.parametrize("document", [[], "ruleset", 3, None])
def test_a_ruleset_is_an_object(document):
    _, problems = validate(document)
    assert [str(p) for p in problems] == ["/: a ruleset is a JSON object"]


def test_itm_gen_4_versions_compare_as_integers():
    ordered = ["1.49", "1.98", "1.101", "1.169", "1.174", "1.791", "1.802", "1.813"]
    assert sorted(ordered, key=version_tuple) == ordered
