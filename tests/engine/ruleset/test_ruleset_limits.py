"""Every schema limit of spec/items.md and spec/checks.md (issue 44): a ruleset one step over
the limit is refused with exactly one problem, its JSON pointer and message; the same ruleset
at the limit loads. One row per limit, on the fixture ruleset the limit belongs to.

(Runtime clamps — ``dc=`` ranges, CHK-TAG-2, CHK-HIGH-18, CHK-RA-8, CMB-TPL-3's tier — are
pinned where the tags are answered; this table is what a ruleset file may hold.)"""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from helpers import at, fixture_json, problems_of

Doc = dict[str, Any]
Change = Callable[[Doc], None]

EMBER = "ember-roads"
GRAVE = "gravewatch"
SKIRMISH = "skirmish"
POOL = "pool-d10"
HIGH = "highest-blades"
AGAINST = "against-d100"
SYMBOLS = "symbols-genesys"
SUM = "sum-2d6"

GEAR = ("items", "startingGear")
MARKET = ("items", "market")
RES = ("resolution",)
NAIL = ("catalogs", 0, "entries", 3, "item")  # Gravewatch's silver coffin nail
TONGUE = ("catalogs", 1, "entries", 5, "item")  # Gravewatch's Flame Tongue
SPADE = ("catalogs", 0, "entries", 5, "item")  # Gravewatch's grave spade
POISON = ("catalogs", 1, "entries", 4, "item")  # Gravewatch's potion of poison


def put(path: tuple[str | int, ...], value: Any) -> Change:
    """Set ``path`` to (a copy of) ``value``."""
    return lambda d: at(d, path[:-1]).__setitem__(path[-1], copy.deepcopy(value))


def sized(path: tuple[str | int, ...], n: int, make: Callable[[int], Any]) -> Change:
    """Make the list at ``path`` hold ``n`` entries: those written, then ``make(i)`` ones."""
    def change(document: Doc) -> None:
        node = at(document, path)
        while len(node) < n:
            node.append(make(len(node)))
        del node[n:]
    return change


def copies(path: tuple[str | int, ...], n: int) -> Change:
    """Make the list at ``path`` hold ``n`` entries, the added ones copies of its first."""
    return lambda d: sized(path, n, lambda _: copy.deepcopy(at(d, path)[0]))(d)


def labelled(prefix: str, **extra: Any) -> Callable[[int], Doc]:
    return lambda i: {"id": f"{prefix}{i}", "label": f"{prefix.upper()}{i}", **extra}


def coins(i: int) -> Doc:
    return {"id": f"f{i}", "label": f"F{i}", "units": [{"id": f"u{i}", "label": f"u{i}s",
                                                          "value": 1}]}


def warded(**defences: Any) -> Change:
    """The skirmish ruleset with a condition ``warded`` granting ``defences`` in a fight."""
    def change(document: Doc) -> None:
        document["conditions"].append({"id": "warded", "label": "Warded"})
        document["combat"]["conditions"].append({"condition": "warded", **defences})
    return change


def sheet_hides(n: int) -> Change:
    """The skirmish ruleset with an ancestry list and ``n`` sheetHides sources."""
    def change(document: Doc) -> None:
        document["catalogs"].append({"id": "ancestry", "label": "Ancestry", "holds": "traits",
                                     "entries": [{"id": "dwarf", "label": "Dwarf",
                                                  "filters": {"resistance": "poison"}}]})
        document["combat"]["sheetHides"] = [
            {"list": "ancestry", "column": "resistance", "kind": "resist"}] * n
    return change


def spends(n: int) -> Change:
    """The pool ruleset with ``n`` spend entries, each on a pool of its own."""
    def change(document: Doc) -> None:
        document["live"]["pools"] += [{"id": f"p{i}", "label": f"P{i}", "max": {"const": 3}}
                                      for i in range(1, n)]
        document["resolution"]["spend"] = [
            {"pool": "resolve", "amount": 1, "successes": 1, "perCheck": 2}] + [
            {"pool": f"p{i}", "amount": 1, "dice": 1, "perCheck": 1} for i in range(1, n)]
    return change


def stances(*skills: list[str]) -> Change:
    return put((*RES, "stances"), [{"id": f"s{i}", "label": f"S{i}", "count": "below",
                                    "skills": named} for i, named in enumerate(skills)])


def tiers(numeric: int) -> Change:
    """``numeric`` succeeding tiers with falling bounds, then the tier that catches the rest."""
    return put((*RES, "outcomes", "tiers"), [
        {"id": f"t{i}", "label": f"T{i}", "atLeast": 10 - i, "success": True}
        for i in range(numeric)] + [{"id": "no", "label": "No"}])


def symbol_die(i: int) -> Doc:
    return {"id": f"die{i}", "label": f"Die{i}", "faces": [[], ["s"]]}


def options(n: int) -> Change:
    """Ember Roads' first starting-gear choice with ``n`` options."""
    return copies((*GEAR, 0, "choices", 0, "options"), n)


def prices(n: int) -> Change:
    return sized((*MARKET, "prices"), n, labelled("p", times=1))


TOO_MANY = "List should have at most {} items after validation, not {}"
TOO_FEW = "List should have at least {} item{} after validation, not {}"


def too_many(most: int) -> str:
    return TOO_MANY.format(most, most + 1)


def too_few(least: int) -> str:
    return TOO_FEW.format(least, "" if least == 1 else "s", least - 1)


# (rule, fixture, the change over the limit, the exact problem, the change at the limit)
LIMITS: list[tuple[str, str, Change, str, Change | None]] = [
    # --- spec/items.md ------------------------------------------------------------------------
    ("ITM-BLOCK-2", EMBER, sized(("items", "categories"), 25, labelled("c")),
     f"/items/categories: {too_many(24)}", sized(("items", "categories"), 24, labelled("c"))),
    ("ITM-BLOCK-2", EMBER, put(("items", "categories"), []),
     f"/items/categories: {too_few(1)}", None),
    ("ITM-BLOCK-4", EMBER, sized(("items", "rarities"), 13, labelled("r")),
     f"/items/rarities: {too_many(12)}", sized(("items", "rarities"), 12, labelled("r"))),
    ("ITM-BLOCK-6", EMBER, sized(("items", "tags"), 49, labelled("t")),
     f"/items/tags: {too_many(48)}", sized(("items", "tags"), 48, labelled("t"))),
    ("ITM-BLOCK-7", EMBER, sized(("items", "stats"), 25, labelled("s", type="text")),
     f"/items/stats: {too_many(24)}", sized(("items", "stats"), 24, labelled("s", type="text"))),
    ("ITM-BLOCK-12", EMBER, sized(("items", "slots"), 13, labelled("p", count=1)),
     f"/items/slots: {too_many(12)}", sized(("items", "slots"), 12, labelled("p", count=1))),
    ("ITM-BLOCK-12", EMBER, put(("items", "slots", 1, "count"), 21),
     "/items/slots/1/count: Input should be less than or equal to 20",
     put(("items", "slots", 1, "count"), 20)),
    ("ITM-BLOCK-12", EMBER, put(("items", "slots", 0, "count"), 0),
     "/items/slots/0/count: Input should be greater than or equal to 1",
     put(("items", "slots", 0, "count"), 1)),
    ("ITM-BLOCK-20", GRAVE, put(("items", "carry", "unit"), "x" * 13),
     "/items/carry/unit: String should have at most 12 characters",
     put(("items", "carry", "unit"), "x" * 12)),
    ("ITM-CUR-1", EMBER, sized(("items", "currencies"), 7, coins),
     f"/items/currencies: {too_many(6)}", sized(("items", "currencies"), 6, coins)),
    ("ITM-CUR-1", EMBER, sized(("items", "currencies", 0, "units"), 11,
                               lambda i: {"id": f"x{i}", "label": f"x{i}s", "value": 1000 * i}),
     f"/items/currencies/0/units: {too_many(10)}",
     sized(("items", "currencies", 0, "units"), 10,
           lambda i: {"id": f"x{i}", "label": f"x{i}s", "value": 1000 * i})),
    ("ITM-CUR-1", EMBER, put(("items", "currencies", 0, "units"), []),
     f"/items/currencies/0/units: {too_few(1)}", None),
    ("ITM-CAPS-1", EMBER, lambda d: d["items"]["rarityCaps"].append(
        {"rarity": "common", "stats": {"guard": 1}}),
     '/items/rarityCaps/2/rarity: a second cap for rarity "common"', None),
    ("ITM-BLOCK-24", GRAVE, sized(("items", "lootTables"), 25,
                                  labelled("l", entries=[{"coins": "penny"}])),
     f"/items/lootTables: {too_many(24)}",
     sized(("items", "lootTables"), 24, labelled("l", entries=[{"coins": "penny"}]))),
    ("ITM-ENTRY-8", EMBER, put(("catalogs", 0, "entries", 1, "item", "stack"), 1_000_000),
     "/catalogs/0/entries/1/item/stack: Input should be less than or equal to 999999",
     put(("catalogs", 0, "entries", 1, "item", "stack"), 999_999)),
    ("ITM-ENTRY-8", EMBER, put(("catalogs", 0, "entries", 1, "item", "stack"), 0),
     "/catalogs/0/entries/1/item/stack: Input should be greater than or equal to 1",
     put(("catalogs", 0, "entries", 1, "item", "stack"), 1)),
    ("ITM-REQ-1", GRAVE, copies((*SPADE, "requires"), 5),
     f"/catalogs/0/entries/5/item/requires: {too_many(4)}", copies((*SPADE, "requires"), 4)),
    ("ITM-DEF-1", SKIRMISH, warded(resist=[f"w{i}" for i in range(31)]),
     f"/combat/conditions/2/resist: {too_many(30)}",
     warded(resist=[f"w{i}" for i in range(30)])),
    ("ITM-DEF-1", SKIRMISH, warded(resist=[]), f"/combat/conditions/2/resist: {too_few(1)}",
     None),
    ("ITM-DEF-1", SKIRMISH, warded(vulnerable=[f"w{i}" for i in range(31)]),
     f"/combat/conditions/2/vulnerable: {too_many(30)}",
     warded(vulnerable=[f"w{i}" for i in range(30)])),
    ("ITM-DEF-1", SKIRMISH, warded(immune=[f"w{i}" for i in range(31)]),
     f"/combat/conditions/2/immune: {too_many(30)}",
     warded(immune=[f"w{i}" for i in range(30)])),
    ("ITM-DEF-1", SKIRMISH, warded(conditionImmunities=["prone"] * 41),
     f"/combat/conditions/2/conditionImmunities: {too_many(40)}",
     warded(conditionImmunities=["prone"] * 40)),
    ("ITM-HIDES-1", SKIRMISH, sheet_hides(9), f"/combat/sheetHides: {too_many(8)}",
     sheet_hides(8)),
    ("ITM-AMMO-5", EMBER, put(("catalogs", 0, "entries", 0, "item", "attack", "ammo",
                               "recover"), 2),
     "/catalogs/0/entries/0/item/attack/ammo/recover: Input should be less than or equal to 1",
     put(("catalogs", 0, "entries", 0, "item", "attack", "ammo", "recover"), 1)),
    ("ITM-AMMO-5", EMBER, put(("catalogs", 0, "entries", 0, "item", "attack", "ammo",
                               "recover"), -0.5),
     "/catalogs/0/entries/0/item/attack/ammo/recover: Input should be greater than or equal "
     "to 0", put(("catalogs", 0, "entries", 0, "item", "attack", "ammo", "recover"), 0)),
    ("ITM-MODE-2", EMBER, sized(("catalogs", 0, "entries", 0, "item", "attack", "modes"), 7,
                                labelled("m")),
     f"/catalogs/0/entries/0/item/attack/modes: {too_many(6)}",
     sized(("catalogs", 0, "entries", 0, "item", "attack", "modes"), 6, labelled("m"))),
    ("ITM-ONHIT-1", GRAVE, copies((*NAIL, "attack", "onHit"), 5),
     f"/catalogs/0/entries/3/item/attack/onHit: {too_many(4)}",
     copies((*NAIL, "attack", "onHit"), 4)),
    ("ITM-PLUS-1", GRAVE, copies((*TONGUE, "attack", "plus"), 4),
     f"/catalogs/1/entries/5/item/attack/plus: {too_many(3)}",
     copies((*TONGUE, "attack", "plus"), 3)),
    ("ITM-CHG-2", GRAVE, put(("catalogs", 0, "entries", 7, "item", "charges", "max"), 101),
     "/catalogs/0/entries/7/item/charges/max: Input should be less than or equal to 100; "
     "Input should be a valid dictionary or instance of StatRead",
     put(("catalogs", 0, "entries", 7, "item", "charges", "max"), 100)),
    ("ITM-CHG-2", GRAVE, put(("catalogs", 0, "entries", 7, "item", "charges", "max"), 0),
     "/catalogs/0/entries/7/item/charges/max: Input should be greater than or equal to 1; "
     "Input should be a valid dictionary or instance of StatRead", None),
    ("ITM-GATE-3", GRAVE, put(("catalogs", 0, "entries", 2, "item", "use", "gate",
                               "difficulty"), 101),
     "/catalogs/0/entries/2/item/use/gate/difficulty: Input should be less than or equal to "
     "100; Input should be a valid dictionary or instance of StatRead",
     put(("catalogs", 0, "entries", 2, "item", "use", "gate", "difficulty"), 100)),
    ("ITM-GATE-3", GRAVE, put(("catalogs", 0, "entries", 2, "item", "use", "gate",
                               "difficulty"), 0),
     "/catalogs/0/entries/2/item/use/gate/difficulty: Input should be greater than or equal "
     "to 1; Input should be a valid dictionary or instance of StatRead",
     put(("catalogs", 0, "entries", 2, "item", "use", "gate", "difficulty"), 1)),
    ("ITM-LOOT-6", GRAVE, put(("items", "lootTables", 0, "rolls"), 21),
     "/items/lootTables/0/rolls: Input should be less than or equal to 20; Input should be a "
     "valid string", put(("items", "lootTables", 0, "rolls"), 20)),
    ("ITM-LOOT-6", GRAVE, put(("items", "lootTables", 0, "rolls"), -1),
     "/items/lootTables/0/rolls: Input should be greater than or equal to 0; Input should be "
     "a valid string", put(("items", "lootTables", 0, "rolls"), 0)),
    ("ITM-GEAR-6", EMBER, put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf"),
                              ["equipment/longsword"] * 49),
     f"/items/startingGear/0/choices/1/options/0/lines/0/oneOf: {too_many(48)}",
     put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf"),
         ["equipment/longsword"] * 48)),
    ("ITM-GEAR-6", EMBER, put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf"),
                              ["equipment/longsword"]),
     f"/items/startingGear/0/choices/1/options/0/lines/0/oneOf: {too_few(2)}",
     put((*GEAR, 0, "choices", 1, "options", 0, "lines", 0, "oneOf"),
         ["equipment/longsword"] * 2)),
    ("ITM-GEAR-8", EMBER, put((*GEAR, 1, "lines", 0, "count"), 1000),
     "/items/startingGear/1/lines/0/count: Input should be less than or equal to 999",
     put((*GEAR, 1, "lines", 0, "count"), 999)),
    ("ITM-GEAR-8", EMBER, put((*GEAR, 1, "lines", 0, "count"), 0),
     "/items/startingGear/1/lines/0/count: Input should be greater than or equal to 1",
     put((*GEAR, 1, "lines", 0, "count"), 1)),
    ("ITM-GEAR-10", EMBER, copies((*GEAR, 0, "choices"), 9),
     f"/items/startingGear/0/choices: {too_many(8)}", copies((*GEAR, 0, "choices"), 8)),
    ("ITM-GEAR-10", EMBER, options(7), f"/items/startingGear/0/choices/0/options: "
     f"{too_many(6)}", options(6)),
    ("ITM-GEAR-10", EMBER, options(1), f"/items/startingGear/0/choices/0/options: "
     f"{too_few(2)}", options(2)),
    ("ITM-MKT-2", GRAVE, prices(9), f"/items/market/prices: {too_many(8)}", prices(8)),
    ("ITM-MKT-2", GRAVE, put((*MARKET, "prices"), []), f"/items/market/prices: {too_few(1)}",
     None),
    ("ITM-MKT-2", GRAVE, put((*MARKET, "prices", 0, "times"), 0),
     "/items/market/prices/0/times: Input should be greater than 0", None),
    ("ITM-MKT-3", GRAVE, sized((*MARKET, "places"), 13, labelled("z")),
     f"/items/market/places: {too_many(12)}", sized((*MARKET, "places"), 12, labelled("z"))),
    ("ITM-MKT-3", GRAVE, put((*MARKET, "places"), []), f"/items/market/places: {too_few(1)}",
     None),
    ("ITM-DAY-13", GRAVE, put((*MARKET, "buyBack"), 1.5),
     "/items/market/buyBack: Input should be less than or equal to 1",
     put((*MARKET, "buyBack"), 1)),
    ("ITM-DAY-13", GRAVE, put((*MARKET, "buyBack"), 0),
     "/items/market/buyBack: Input should be greater than 0", None),
    ("ITM-TELL-2", GRAVE, copies((*POISON, "tells"), 7),
     f"/catalogs/1/entries/4/item/tells: {too_many(6)}", copies((*POISON, "tells"), 6)),
    # --- spec/checks.md -----------------------------------------------------------------------
    ("CHK-POOL-4", POOL, put((*RES, "die", "sides"), 101),
     "/resolution/die/sides: Input should be less than or equal to 100",
     put((*RES, "die", "sides"), 100)),
    ("CHK-POOL-4", POOL, put((*RES, "die", "sides"), 1),
     "/resolution/die/sides: Input should be greater than or equal to 2", None),
    ("CHK-POOL-7", POOL, put((*RES, "pool", "max"), 101),
     "/resolution/pool/max: Input should be less than or equal to 100",
     put((*RES, "pool", "max"), 100)),
    ("CHK-POOL-26", POOL, sized((*RES, "reroll"), 7, lambda i: {"id": f"r{i}", "upTo": 1}),
     f"/resolution/reroll: {too_many(6)}",
     sized((*RES, "reroll"), 6, lambda i: {"id": f"r{i}", "upTo": 1})),
    ("CHK-POOL-28", POOL, put((*RES, "reroll", 0, "upTo"), 10),
     "/resolution/reroll/0/upTo: upTo is at most 9 (the die's faces minus one)",
     put((*RES, "reroll", 0, "upTo"), 9)),
    ("CHK-POOL-28", POOL, put((*RES, "reroll", 0, "upTo"), 0),
     "/resolution/reroll/0/upTo: Input should be greater than or equal to 1", None),
    ("CHK-POOL-41", POOL, stances(*[[]] * 7), f"/resolution/stances: {too_many(6)}",
     stances(*[[]] * 6)),
    ("CHK-POOL-43", POOL, stances(["ward"], ["ward"]),
     '/resolution/stances/1/skills: skill "ward" is already in another stance',
     stances(["ward"], ["nerve"])),
    ("CHK-HIGH-2", HIGH, put((*RES, "pool", "max"), 21),
     "/resolution/pool/max: Input should be less than or equal to 20",
     put((*RES, "pool", "max"), 20)),
    ("CHK-HIGH-4", HIGH, put((*RES, "keep"), 4),
     "/resolution/keep: Input should be less than or equal to 3", put((*RES, "keep"), 3)),
    ("CHK-HIGH-4", HIGH, put((*RES, "keep"), 0),
     "/resolution/keep: Input should be greater than or equal to 1", None),
    ("CHK-HIGH-7", HIGH, put((*RES, "dark", "max"), 11),
     "/resolution/dark/max: Input should be less than or equal to 10",
     put((*RES, "dark", "max"), 10)),
    ("CHK-HIGH-7", HIGH, put((*RES, "dark", "max"), 0),
     "/resolution/dark/max: Input should be greater than or equal to 1", None),
    ("CHK-RA-11", AGAINST, put((*RES, "criticalSuccess"), [{"from": 1}] * 7),
     f"/resolution/criticalSuccess: {too_many(6)}",
     put((*RES, "criticalSuccess"), [{"from": 1}] * 6)),
    ("CHK-RA-11", AGAINST, put((*RES, "criticalFailure"), [{"from": 100}] * 7),
     f"/resolution/criticalFailure: {too_many(6)}",
     put((*RES, "criticalFailure"), [{"from": 100}] * 6)),
    ("CHK-SYM-2", SYMBOLS, sized((*RES, "symbols"), 11, labelled("x")),
     f"/resolution/symbols: {too_many(10)}", sized((*RES, "symbols"), 10, labelled("x"))),
    ("CHK-SYM-7", SYMBOLS, sized((*RES, "dice"), 9, symbol_die),
     f"/resolution/dice: {too_many(8)}", sized((*RES, "dice"), 8, symbol_die)),
    ("CHK-SYM-7", SYMBOLS, put((*RES, "dice", 0, "faces"), [["s"]] * 21),
     f"/resolution/dice/0/faces: {too_many(20)}",
     put((*RES, "dice", 0, "faces"), [["s"]] * 20)),
    ("CHK-SYM-7", SYMBOLS, put((*RES, "dice", 0, "faces"), [["s"]]),
     f"/resolution/dice/0/faces: {too_few(2)}", put((*RES, "dice", 0, "faces"), [["s"]] * 2)),
    ("CHK-SYM-8", SYMBOLS, put((*RES, "dice", 0, "faces", 1), ["s", "s", "a", "a"]),
     f"/resolution/dice/0/faces/1: {too_many(3)}",
     put((*RES, "dice", 0, "faces", 1), ["s", "s", "a"])),
    ("CHK-SYM-17", SYMBOLS, put((*RES, "difficulty", "max"), 13),
     "/resolution/difficulty/max: Input should be less than or equal to 12",
     put((*RES, "difficulty", "max"), 12)),
    ("CHK-SYM-20", SYMBOLS, put((*RES, "boost", "max"), 7),
     "/resolution/boost/max: Input should be less than or equal to 6",
     put((*RES, "boost", "max"), 6)),
    ("CHK-SYM-20", SYMBOLS, put((*RES, "setback", "max"), 7),
     "/resolution/setback/max: Input should be less than or equal to 6",
     put((*RES, "setback", "max"), 6)),
    ("CHK-OUT-5", SUM, tiers(8), f"/resolution/outcomes/tiers: {too_many(8)}", tiers(7)),
    ("CHK-OUT-10", SUM, put((*RES, "outcomes", "tiers", 0, "text"), "x" * 201),
     "/resolution/outcomes/tiers/0/text: String should have at most 200 characters",
     put((*RES, "outcomes", "tiers", 0, "text"), "x" * 200)),
    ("CHK-OUT-12", HIGH, lambda d: d["resolution"]["outcomes"]["tiers"].insert(1, {
        "id": "crit2", "label": "Crit 2", "on": "critical-success", "success": True}),
     '/resolution/outcomes/tiers/1/on: a second "critical-success" tier', None),
    ("CHK-OVR-11", SUM, put((*RES, "overrides", 1), {
        "id": "other", "label": "Other", "skills": ["open_doors"],
        "set": {"dice": {"count": 3, "sides": 6}}}),
     '/resolution/overrides/1/skills/0: "open_doors" is in a second override without "when"',
     None),
    ("CHK-SPEND-10", POOL, put((*RES, "spend", 0, "perCheck"), 11),
     "/resolution/spend/0/perCheck: Input should be less than or equal to 10; Input should "
     "be 'pool'; Input should be a valid dictionary or instance of ValueRef",
     put((*RES, "spend", 0, "perCheck"), 10)),
    ("CHK-SPEND-10", POOL, put((*RES, "spend", 0, "perCheck"), 0),
     "/resolution/spend/0/perCheck: Input should be greater than or equal to 1; Input should "
     "be 'pool'; Input should be a valid dictionary or instance of ValueRef",
     put((*RES, "spend", 0, "perCheck"), 1)),
    ("CHK-SPEND-13", POOL, spends(5), f"/resolution/spend: {too_many(4)}", spends(4)),
    ("CHK-SPEND-13", POOL, lambda d: d["resolution"]["spend"].append(
        {"pool": "resolve", "amount": 2, "dice": 1, "perCheck": 1}),
     '/resolution/spend/1/pool: a second spend on "resolve"', None),
]


def _id(row: tuple[str, str, Change, str, Change | None]) -> str:
    return f"{row[0]}:{row[3].split(':', 1)[0]}"


@pytest.mark.parametrize(("rule", "fixture", "over", "problem", "limit"), LIMITS,
                         ids=[_id(row) for row in LIMITS])
def test_a_ruleset_over_a_schema_limit_is_refused_with_its_pointer_and_message(
        rule: str, fixture: str, over: Change, problem: str, limit: Change | None) -> None:
    """One step over the limit: exactly this one problem (``/pointer: message``)."""
    assert problems_of(fixture_json(f"rulesets/{fixture}.json"), over) == [problem]


@pytest.mark.parametrize(("rule", "fixture", "over", "problem", "limit"),
                         [row for row in LIMITS if row[4] is not None],
                         ids=[_id(row) for row in LIMITS if row[4] is not None])
def test_a_ruleset_at_a_schema_limit_loads(rule: str, fixture: str, over: Change,
                                           problem: str, limit: Change | None) -> None:
    """At the limit itself the same ruleset loads: the limit is the spec's, not one less."""
    assert limit is not None
    assert problems_of(fixture_json(f"rulesets/{fixture}.json"), limit) == []
