"""The whole item format (spec/items.md §3–§20, Appendix E): each load-time rule refuses an
impossible ruleset with its exact JSON pointer and message; the fixture rulesets are valid."""

from __future__ import annotations

import copy
import functools
import json

import jsonschema
import pytest
from helpers import FIXTURES, at, drop, fixture_json, problems_of, push, put

from engine import load_ruleset, start_state
from engine.ruleset import validate
from engine.ruleset.versions import used_features
from replay.cli import ruleset_schema
from replay.files import ruleset_document

EMBER = fixture_json("rulesets/ember-roads.json")
GRAVE = fixture_json("rulesets/gravewatch.json")
FIXTURE_RULESETS = sorted(p.name for p in (FIXTURES / "rulesets").glob("*.json"))


BOW = ("catalogs", 0, "entries", 0, "item")
AXE = ("catalogs", 0, "entries", 1, "item")
POULTICE = ("catalogs", 0, "entries", 7, "item")
NAIL = ("catalogs", 0, "entries", 3, "item")
PISTOL = ("catalogs", 0, "entries", 4, "item")
SPADE = ("catalogs", 0, "entries", 5, "item")
BELL = ("catalogs", 0, "entries", 7, "item")
POISON = ("catalogs", 1, "entries", 4, "item")
MARKET = ("items", "market")
GEAR = ("items", "startingGear")

# (rule, document, mutation, the exact problem)
CASES = [
    ("ITM-GEN-3 version below a feature", EMBER, put(("capabilityApi",), "1.60"),
     "/items/lootTables: lootTables needs capabilityApi 1.63 or later (the ruleset declares 1.60)"),
    ("ITM-GEN-3 coin one is 1.89", EMBER, put(("capabilityApi",), "1.88"),
     "/items/currencies/2/units/0/one: a coin's one needs capabilityApi 1.89 or later "
     "(the ruleset declares 1.88)"),
    ("ITM-GEN-3 carry.unit is 1.791", GRAVE, put(("capabilityApi",), "1.79"),
     "/items/carry/unit: carry.unit needs capabilityApi 1.791 or later (the ruleset declares 1.79)"),
    ("ITM-CAPS-2 cap beyond the stat range", EMBER, put(("items", "rarityCaps", 0, "stats"), {"guard": 5}),
     '/items/rarityCaps/0/stats/guard: 5.0 is above the maximum 4 of "guard"'),
    ("ITM-CAPS-2 cap on a non-number stat", EMBER, put(("items", "rarityCaps", 0, "stats"), {"damage": 1}),
     '/items/rarityCaps/0/stats/damage: "damage" is not a number stat of the block'),
    ("ITM-LOOT-6 rolls at most 20", GRAVE, put(("items", "lootTables", 0, "rolls"), 21),
     "/items/lootTables/0/rolls: Input should be less than or equal to 20; "
     "Input should be a valid string"),
    ("ITM-LOOT-8 unknown item", GRAVE, put(("items", "lootTables", 0, "entries", 0, "item"), "kit/nothing"),
     '/items/lootTables/0/entries/0/item: unknown item "kit/nothing"'),
    ("ITM-LOOT-8 unknown coin", GRAVE, put(("items", "lootTables", 0, "entries", 4, "coins"), "ducat"),
     '/items/lootTables/0/entries/4/coins: unknown coin "ducat"'),
    ("ITM-LOOT-8 unknown filter category", GRAVE,
     put(("items", "lootTables", 0, "entries", 3, "filter"), {"category": "sword"}),
     '/items/lootTables/0/entries/3/filter/category: unknown category "sword"'),
    ("ITM-LOOT-8 one kind per row", GRAVE,
     put(("items", "lootTables", 0, "entries", 1, "coins"), "penny"),
     '/items/lootTables/0/entries/1: Value error, a loot row names exactly one of "item", '
     '"filter" or "coins"'),
    ("ITM-LOOT-9 count dice", GRAVE, put(("items", "lootTables", 0, "entries", 0, "count"), "lots"),
     '/items/lootTables/0/entries/0/count: Input should be a valid integer, unable to parse '
     'string as an integer; Value error, "lots" is not dice notation (write e.g. 2d6, 1d8+1 or 3)'),
    ("loot table ids unique", GRAVE, push(("items", "lootTables"),
                                          {"id": "grave_goods", "label": "x", "entries": [{"coins": "penny"}]}),
     '/items/lootTables/3/id: duplicate id "grave_goods"'),
    ("ITM-GEAR-6 unknown item", EMBER, put((*GEAR, 0, "lines", 0, "item"), "equipment/tower"),
     '/items/startingGear/0/lines/0/item: unknown item "equipment/tower"'),
    ("ITM-GEAR-6 oneOf unknown item", EMBER,
     put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf", 1), "equipment/flail"),
     '/items/startingGear/0/choices/1/options/0/lines/0/oneOf/1: unknown item "equipment/flail"'),
    ("ITM-GEAR-6 oneOf 2 to 48", EMBER,
     put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf"), ["equipment/longsword"]),
     "/items/startingGear/0/choices/1/options/0/lines/0/oneOf: List should have at least 2 items "
     "after validation, not 1"),
    ("ITM-GEAR-6 plain name needs freeform plain", EMBER, put(("items", "freeform"), "refuse"),
     '/items/startingGear/1/lines/1/name: a plain item needs "freeform": "plain"'),
    ("ITM-GEAR-7 name has no brackets", EMBER, put((*GEAR, 1, "lines", 1, "name"), "Vest[ments]"),
     "/items/startingGear/1/lines/1/name: String should match pattern '^[^\\[\\]\\r\\n]+$'"),
    ("ITM-GEAR-7 name has no {{", EMBER, put((*GEAR, 1, "lines", 1, "name"), "{{user}}'s robe"),
     '/items/startingGear/1/lines/1/name: Value error, a name has no "{{"'),
    ("ITM-GEAR-8 count 1..999", EMBER, put((*GEAR, 1, "lines", 0, "count"), 1000),
     "/items/startingGear/1/lines/0/count: Input should be less than or equal to 999"),
    ("ITM-GEAR-10 at most 8 choices", EMBER,
     lambda d: at(d, (*GEAR, 0, "choices")).extend([at(d, (*GEAR, 0, "choices", 0))] * 7),
     "/items/startingGear/0/choices: List should have at most 8 items after validation, not 9"),
    ("ITM-GEAR-10 2 to 6 options", EMBER,
     put((*GEAR, 0, "choices", 0, "options"), [{"label": "Only", "lines": [{"coins": "gp"}]}]),
     "/items/startingGear/0/choices/0/options: List should have at least 2 items after "
     "validation, not 1"),
    ("ITM-GEAR-14 fits reads no live state", EMBER, put((*GEAR, 0, "fits", "value"), {"pool": "resolve"}),
     "/items/startingGear/0/fits/value: reads live state (a pool, an item or a derived value "
     "that does)"),
    ("ITM-GEAR-21 unknown coin", EMBER, put((*GEAR, 1, "lines", 0, "coins"), "pp"),
     '/items/startingGear/1/lines/0/coins: unknown coin "pp"'),
    ("ITM-GEAR-20/22 no service", EMBER, put((*GEAR, 2, "lines", 0, "item"), "outfitter/inn-room"),
     '/items/startingGear/2/lines/0/item: "outfitter/inn-room" is a service'),
    ("ITM-GEAR-22 more stacks than a bag takes", EMBER,
     lambda d: (put((*GEAR, 2, "lines", 2, "count"), 999)(d),
                put(("catalogs", 0, "entries", 7, "item", "stack"), 1)(d)),
     '/items/startingGear/2/lines/2/count: 999 of "outfitter/poultice" need more than 500 stacks'),
    ("ITM-MKT-2 exactly one default level", GRAVE, put((*MARKET, "prices", 0, "default"), True),
     "/items/market/prices: exactly one price level is the default, not 2"),
    ("ITM-MKT-2 times above 0", GRAVE, put((*MARKET, "prices", 0, "times"), 0),
     "/items/market/prices/0/times: Input should be greater than 0"),
    ("ITM-MKT-3 1 to 12 places", GRAVE, put((*MARKET, "places"), []),
     "/items/market/places: List should have at least 1 item after validation, not 0"),
    ("ITM-MKT-5 unknown place", GRAVE, put((*MARKET, "sold", 1, "place"), "metropolis"),
     '/items/market/sold/1/place: unknown place "metropolis"'),
    ("ITM-MKT-5 place or limited", GRAVE, drop((*MARKET, "sold", 2, "limited")),
     '/items/market/sold/2: a sold rule names a "place", a "limited" or both'),
    ("ITM-MKT-6 filter names a known tag", GRAVE, put((*MARKET, "sellers", 4, "sells", 0, "tag"), "cursed"),
     '/items/market/sellers/4/sells/0/tag: unknown tag "cursed"'),
    ("ITM-MKT-10 seller place", GRAVE, put((*MARKET, "sellers", 1, "place"), "port"),
     '/items/market/sellers/1/place: unknown place "port"'),
    ("ITM-MKT-12 only reads a known value", GRAVE,
     put((*MARKET, "sellers", 2, "only", "value"), {"abilityScore": "faith"}),
     '/items/market/sellers/2/only/value: unknown ability score "faith"'),
    ("ITM-DAY-10 stock names a loot table", GRAVE, put((*MARKET, "sellers", 1, "stock", "table"), "none"),
     '/items/market/sellers/1/stock/table: unknown loot table "none"'),
    ("ITM-DAY-13 buyBack at most 1", GRAVE, put((*MARKET, "buyBack"), 1.5),
     "/items/market/buyBack: Input should be less than or equal to 1"),
    ("ITM-DAY-16 purse coin", GRAVE, put((*MARKET, "places", 0, "purse", "unit"), "ducat"),
     '/items/market/places/0/purse/unit: unknown coin "ducat"'),
    ("ITM-TELL-7 manner only on a dishonest seller", GRAVE, put((*MARKET, "sellers", 4, "honest"), True),
     '/items/market/sellers/4/manner: only a seller with "honest": false has a manner'),
    ("ITM-ENTRY-13 sold place", GRAVE, put((*SPADE[:-1], "item", "sold"), {"place": "port"}),
     '/catalogs/0/entries/5/item/sold/place: unknown place "port"'),
    ("ITM-ENTRY-14 limited dice", GRAVE, put(("catalogs", 0, "entries", 6, "item", "sold", "limited"), "xd"),
     None),
    ("ITM-ENTRY-18 binds needs binding", GRAVE, drop(("items", "binding")),
     '/catalogs/0/entries/7/item/binds: items bind only in a ruleset with "binding"'),
    ("OQ-6 binds is an object", GRAVE, put((*BELL, "binds"), {"cursed": "maybe"}),
     "/catalogs/0/entries/7/item/binds/cursed: Input should be a valid boolean, unable to "
     "interpret input"),
    ("ITM-SVC-5 service without a cost", GRAVE, drop(("catalogs", 0, "entries", 9, "item", "cost")),
     "/catalogs/0/entries/9/item/service: a service has a cost"),
    ("ITM-SVC-5 service with use", GRAVE,
     put(("catalogs", 0, "entries", 9, "item", "use"), {"kind": "buff", "free": True}),
     '/catalogs/0/entries/9/item/use: a service has no "use"'),
    ("ITM-REQ-1 at most 4 requirements", GRAVE,
     lambda d: at(d, (*SPADE, "requires")).extend([at(d, (*SPADE, "requires", 0))] * 4),
     "/catalogs/0/entries/5/item/requires: List should have at most 4 items after validation, "
     "not 5"),
    ("ITM-TOG-1 toggle budget", GRAVE, put(("catalogs", 0, "entries", 8, "item", "toggle", "budget"), "free"),
     '/catalogs/0/entries/8/item/toggle/budget: unknown budget "free"'),
    ("ITM-WPN-5 attack budget", EMBER, put((*AXE, "attack", "budget"), "bonus"),
     '/catalogs/0/entries/1/item/attack/budget: unknown budget "bonus"'),
    ("ITM-WPN-5 budgets need a combat block", EMBER, drop(("combat",)),
     '/catalogs/0/entries/0/item/attack/budget: budget "act" needs "combat.economy.budgets"'),
    ("ITM-WPN-6 unknown ability", GRAVE, put((*NAIL, "attack", "toHit", "abilities"), ["grace"]),
     '/catalogs/0/entries/3/item/attack/toHit/abilities/0: unknown ability "grace"'),
    ("ITM-WPN-11 own target only in a pool fight", EMBER,
     put((*AXE, "attack", "toHit", "target"), 6),
     '/catalogs/0/entries/1/item/attack/toHit/target: a per-die target needs a "dice-pool" '
     'resolution'),
    ("ITM-WPN-11 own target only where the pool's target varies", GRAVE,
     lambda d: d["resolution"]["target"].update({"min": 7, "max": 7}),
     "/catalogs/0/entries/5/item/attack/toHit/target: a per-die target needs a pool whose "
     "target varies (resolution.target.min below resolution.target.max)"),
    ("ITM-WPN-13 a sum fight needs damage dice", EMBER, drop((*AXE, "attack", "damage", "dice")),
     "/catalogs/0/entries/1/item/attack/damage/dice: a weapon in a sum fight deals damage dice"),
    ("ITM-WPN-16 reach needs combat.distance", EMBER, drop(("combat", "distance")),
     '/catalogs/0/entries/0/item/attack/range: reach and range need "combat.distance"'),
    ("ITM-WPN-21 stat read names a stat", EMBER, put((*AXE, "attack", "damage", "dice"), {"stat": "dmg"}),
     '/catalogs/0/entries/1/item/attack/damage/dice/stat: unknown stat "dmg"'),
    ("ITM-WPN-22 abilities read an enum stat", EMBER,
     put((*AXE, "attack", "toHit", "abilities"), {"stat": "bulk"}),
     '/catalogs/0/entries/1/item/attack/toHit/abilities/stat: "bulk" is not a enum stat'),
    ("ITM-AMMO-2 ammo tag", EMBER, put((*BOW, "attack", "ammo", "tag"), "bolt"),
     '/catalogs/0/entries/0/item/attack/ammo/tag: unknown tag "bolt"'),
    ("ITM-AMMO-5 recover 0..1", EMBER, put((*BOW, "attack", "ammo", "recover"), 2),
     "/catalogs/0/entries/0/item/attack/ammo/recover: Input should be less than or equal to 1"),
    ("ITM-CLIP-3 reload budget", GRAVE, put((*PISTOL, "attack", "clip", "reload"), "round"),
     '/catalogs/0/entries/4/item/attack/clip/reload: unknown budget "round"'),
    ("ITM-MODE-2 at most 6 modes", EMBER,
     lambda d: at(d, (*BOW, "attack", "modes")).extend(
         [{"id": f"m{i}", "label": "M"} for i in range(6)]),
     "/catalogs/0/entries/0/item/attack/modes: List should have at most 6 items after "
     "validation, not 7"),
    ("ITM-MODE-3 a shooting mode needs ammo or clip", EMBER, drop((*BOW, "attack", "ammo")),
     '/catalogs/0/entries/0/item/attack/modes/0/ammo: a mode that shoots needs "ammo" or "clip"'),
    ("ITM-OFF-2 off hand needs combat.offHand", GRAVE, drop(("combat", "offHand")),
     '/catalogs/0/entries/3/item/attack/offHand: an off-hand weapon needs "combat.offHand"'),
    ("ITM-ONHIT-1 condition", GRAVE, put((*NAIL, "attack", "onHit", 0, "condition"), "bleeding"),
     '/catalogs/0/entries/3/item/attack/onHit/0/condition: unknown condition "bleeding"'),
    ("ITM-ONHIT-6 saveEnds has no rounds", GRAVE,
     put((*NAIL, "attack", "onHit", 0, "saveEnds"), {"save": "steel", "difficulty": 7, "at": "turn-end"}),
     '/catalogs/0/entries/3/item/attack/onHit/0/rounds: an entry with "saveEnds" has no "rounds"'),
    ("ITM-USE-5 budget or free", EMBER, drop((*POULTICE, "use", "budget")),
     '/catalogs/0/entries/7/item/use: a use spends a "budget" or is "free"'),
    ("ITM-USE-6 entry-only keys", EMBER, put((*POULTICE, "use", "rider"), {}),
     '/catalogs/0/entries/7/item/use/rider: unknown key "rider"'),
    ("ITM-USE-14 restore names a pool", GRAVE,
     put(("catalogs", 0, "entries", 1, "item", "use", "restore", "pool"), "health"),
     "/catalogs/0/entries/1/item/use/restore/pool: restore never names the health pool"),
    ("ITM-USE-15 restore on heal or buff", GRAVE,
     put(("catalogs", 0, "entries", 1, "item", "use", "kind"), "debuff"),
     '/catalogs/0/entries/1/item/use/restore: restore sits on a "heal" or a "buff"'),
    ("ITM-CHG-2 charges 1..100", GRAVE, put((*BELL, "charges", "max"), 101),
     "/catalogs/0/entries/7/item/charges/max: Input should be less than or equal to 100; "
     "Input should be a valid dictionary or instance of StatRead"),
    ("ITM-CHG-6 consumes or charges", GRAVE, put((*BELL, "use", "consumes"), True),
     "/catalogs/0/entries/7/item/use/charges: a use spends the item or charges, never both"),
    ("ITM-CHG-7 charges are spent by the use", GRAVE, drop((*BELL, "use", "charges")),
     '/catalogs/0/entries/7/item/charges: an item\'s charges are spent by its use ("use.charges")'),
    ("ITM-RCHG-1 recharge rest", GRAVE, put((*BELL, "charges", "recharge", "rests"), ["nap"]),
     '/catalogs/0/entries/7/item/charges/recharge/rests/0: unknown rest "nap"'),
    ("ITM-GATE-2 gate check", GRAVE,
     put(("catalogs", 0, "entries", 2, "item", "use", "gate", "check"), {"skill": "pray"}),
     '/catalogs/0/entries/2/item/use/gate/check/skill: unknown skill "pray"'),
    ("ITM-GATE-3 difficulty 1..100", GRAVE,
     put(("catalogs", 0, "entries", 2, "item", "use", "gate", "difficulty"), 0), None),
    ("ITM-FAKE-3 same category", GRAVE, put(("catalogs", 1, "entries", 1, "item", "category"), "wand"),
     '/catalogs/1/entries/1/item/passesFor: "magic_items/bag-of-holding" is of another category'),
    ("ITM-FAKE-3 saleable target", GRAVE, drop(("catalogs", 1, "entries", 3, "item", "cost")),
     '/catalogs/1/entries/4/item/passesFor: "magic_items/potion-of-healing" is not a saleable item'),
    ("ITM-FAKE-3 target exists", GRAVE, put((*POISON, "passesFor"), "magic_items/elixir"),
     '/catalogs/1/entries/4/item/passesFor: unknown item "magic_items/elixir"'),
    ("ITM-FAKEV-2 tells only on a fake", GRAVE, drop((*POISON, "passesFor")),
     '/catalogs/1/entries/4/item/tells: only a fake ("passesFor") has "tells"'),
    ("ITM-TELL-2 at most 6 tells", GRAVE,
     lambda d: at(d, (*POISON, "tells")).extend([at(d, (*POISON, "tells", 1))] * 5),
     "/catalogs/1/entries/4/item/tells: List should have at most 6 items after validation, not 7"),
    ("ITM-FAKEV-3 carries a known item", GRAVE,
     put((*POISON, "tells", 0, "carries", "anyOf", 0), "gear/alembic"),
     '/catalogs/1/entries/4/item/tells/0/carries/anyOf/0: unknown item "gear/alembic"'),
    ("ITM-FAKEV-3 revealsFakes items are fakes", GRAVE,
     put(("items", "revealsFakes", 1, "items", 0), "magic_items/potion-of-healing"),
     '/items/revealsFakes/1/items/0: "magic_items/potion-of-healing" is not a fake'),
    ("ITM-FAKEV-4 foolsReveal a listed way", GRAVE, put((*POISON, "foolsReveal"), ["scry"]),
     '/catalogs/1/entries/4/item/foolsReveal/0: unknown way to reveal fakes "scry"'),
    ("ITM-ISTAT-7 sum needs a number stat", GRAVE,
     put(("sheet", "derived", 3, "of", 0, "itemStat", "stat"), "hurt"),
     '/sheet/derived/3/of/0/itemStat/stat: pick "max" needs a number stat, not "hurt"'),
    ("ITM-ISTAT-8 count may omit the stat", GRAVE,
     drop(("sheet", "derived", 3, "of", 0, "itemStat", "stat")),
     '/sheet/derived/3/of/0/itemStat: Value error, pick "max" reads a stat: name one with "stat"'),
    ("ITM-ISTAT-9 unknown slot", GRAVE, put(("sheet", "derived", 3, "of", 0, "itemStat", "slot"), "feet"),
     '/sheet/derived/3/of/0/itemStat/slot: unknown slot "feet"'),
    ("ITM-ISTAT-12 no itemStat in a pool max", GRAVE, put(("live", "pools", 1, "max"), {"derived": "armour"}),
     "/live/pools/1/max: reads items (itemStat, or a derived value that does)"),
    ("ITM-BLOCK-15 ITM-ISTAT-11 binding max reads no items", GRAVE, put(("items", "binding", "max"), {"derived": "armour"}),
     "/items/binding/max: reads live state (a pool, an item or a derived value that does)"),
    ("ITM-BLOCK-20 unit at most 12 characters", GRAVE, put(("items", "carry", "unit"), "hundredweights"),
     "/items/carry/unit: String should have at most 12 characters"),
    ("ITM-MKT-18 layer unsold filter", GRAVE, put(("layers", 0, "items", "unsold", 0, "tag"), "arcane"),
     '/layers/0/items/unsold/0/tag: unknown tag "arcane"'),
]
CASES = [c for c in CASES if c[3] is not None]


@pytest.mark.parametrize(("rule", "document", "mutate", "expected"), CASES,
                         ids=[c[0] for c in CASES])
def test_each_rule_refuses_with_its_pointer_and_message(rule, document, mutate, expected):
    assert expected in problems_of(document, mutate)


@pytest.mark.parametrize("name", FIXTURE_RULESETS)
def test_every_fixture_ruleset_is_valid(name):
    document = ruleset_document(FIXTURES / "rulesets" / name)  # with its catalogFiles
    assert [str(p) for p in validate(document)[1]] == []


@functools.cache
def _schema_validator():
    """One validator of the published schema, the schema itself checked once (checking it
    took jsonschema.validate 0.45 s a call)."""
    schema = ruleset_schema()
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)
    return kind(schema)


@pytest.mark.parametrize("name", FIXTURE_RULESETS)
def test_the_schema_validates_every_fixture_ruleset(name):
    _schema_validator().validate(fixture_json(f"rulesets/{name}"))


def test_the_schema_describes_its_keys():
    schema = ruleset_schema()
    item = schema["$defs"]["Item"]
    assert item["description"].startswith("The ``item`` object")
    assert "stats" in item["properties"]
    assert "description" in item["properties"]["passesFor"]


def test_itm_gen_3_every_feature_is_found_in_the_fixtures():
    found = {feature for document in (EMBER, GRAVE)
             for _, feature, _ in used_features(load_ruleset(document).ruleset)}
    assert {"lootTables", "market", "startingGear", "passesFor", "tells", "toggle", "carry.unit",
            "unsold", "a coin's one", "gate", "restore", "charges.breaksOn", "plus"} <= found


def test_validation_is_deterministic():
    first = problems_of(GRAVE, put(("capabilityApi",), "1.49"))
    assert first == problems_of(GRAVE, put(("capabilityApi",), "1.49"))
    assert json.dumps(load_ruleset(GRAVE).ruleset.model_dump(mode="json")) == json.dumps(
        load_ruleset(copy.deepcopy(GRAVE)).ruleset.model_dump(mode="json"))


def test_every_problem_is_listed():
    found = problems_of(GRAVE, put((*POISON, "foolsReveal"), ["scry"]),
                        put((*MARKET, "sellers", 1, "place"), "port"))
    assert len(found) == 2


@pytest.mark.parametrize("name", ["ember-roads", "gravewatch"])
def test_the_fixture_parties_start_in_their_rulesets(name):
    game = load_ruleset(fixture_json(f"rulesets/{name}.json"))
    state = start_state(game, fixture_json(f"parties/{name}.json"))
    assert next(c.name for c in state.characters) == "Ada"
    assert all(s.item is None or s.item in game.items for c in state.characters for s in c.bag)
