"""Import rules of spec/checks.md: an impossible resolution is refused at load with a JSON
pointer (CHK-POOL-49), never discovered in play."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from check_support import KINDS, document

from engine import load_ruleset
from engine.rules.sheet import ability_modifier
from engine.ruleset import RulesetError

Doc = dict[str, Any]


def _set(path: str, value: Any) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        node: Any = doc
        parts = path.split("/")
        for part in parts[:-1]:
            node = node[int(part)] if isinstance(node, list) else node[part]
        if value is None:
            node.pop(parts[-1], None)
        elif isinstance(node, list):
            node[int(parts[-1])] = value
        else:
            node[parts[-1]] = value
    return change


def _both(*changes: Callable[[Doc], None]) -> Callable[[Doc], None]:
    def change(doc: Doc) -> None:
        for one in changes:
            one(doc)
    return change


CASES = [
    ("OQ-CHK-3", "sum-2d6", _set("resolution/proficiency", None),
     "/resolution/proficiencyTiers/2/multiplier", "multiplier needs"),
    ("CHK-SUM-7", "sum-2d6", _set("resolution/naturals", "both"),
     "/resolution/naturals", "exactly one die"),
    ("CHK-SUM-8", "sum-2d6", _set("resolution/dice/faces", [1, 2]),
     "/resolution/dice/faces", "one value per face"),
    ("CHK-SUM-10", "sum-2d6", _set("resolution/openEnded", {"high": 5, "low": 2}),
     "/resolution/openEnded", "single die"),
    ("CHK-OUT-14", "sum-2d6", _set("resolution/outcomes/naturals", "shift"),
     "/resolution/outcomes/naturals", "one die"),
    ("CHK-POOL-47", "pool-d10", _set("resolution/cancel/upTo", 5),
     "/resolution/cancel/upTo", "not below the lowest threshold"),
    ("CHK-POOL-47", "pool-d10", _set("resolution/botch", {"upTo": 6}),
     "/resolution/botch/upTo", "not below the lowest threshold"),
    ("CHK-POOL-17", "pool-d10", _set("resolution/explode", {"from": 8, "min": 9}),
     "/resolution/explode/from", "lower than min"),
    ("CHK-POOL-28", "pool-d10", _set("resolution/reroll/0/upTo", 10),
     "/resolution/reroll/0/upTo", "at most 9"),
    ("CHK-POOL-33", "pool-d10", _set("resolution/difficultyLadder/1/target", 10),
     "/resolution/difficultyLadder/1/target", "adjustable threshold"),
    ("CHK-POOL-43", "pool-d10", _set("resolution/stances", [
        {"id": "a", "label": "A", "count": "below", "skills": ["ward"]},
        {"id": "b", "label": "B", "count": "above", "skills": ["ward"]}]),
     "/resolution/stances/1/skills", "another stance"),
    ("OQ-CHK-14", "pool-d10", _set("resolution/target", {"default": 7, "min": 5, "max": 11}),
     "/resolution/target/max", "not on a d10"),
    ("CHK-POOL-7", "pool-d10", _set("resolution/pool/max", 101), "/resolution/pool/max", ""),
    ("CHK-POOL-26", "pool-d10", _set("resolution/reroll", [
        {"id": f"r{i}", "upTo": 1} for i in range(7)]), "/resolution/reroll", ""),
    ("CHK-HIGH-2", "highest-blades", _set("resolution/pool/max", 21), "/resolution/pool/max", ""),
    ("CHK-HIGH-24", "highest-blades", _set("combat", {"kind": "narrative"}), "/combat",
     "no combat of its own"),
    ("CHK-RA-16", "against-d100", _set("resolution/dice", {"count": 3, "sides": 6}),
     "/resolution/tens", "single d100"),
    ("OQ-CHK-34", "against-d100", _set("resolution/criticalFailure/0/pastTarget", 10),
     "/resolution/criticalFailure/0", "not both"),
    ("CHK-RA-11", "against-d100", _set("resolution/criticalSuccess", [{"from": 1}] * 7),
     "/resolution/criticalSuccess", ""),
    ("CHK-RA-18", "against-d100", _set("resolution/against", "at-least"),
     "/resolution/outcomes/by", "at-most"),
    ("CHK-SYM-4", "symbols-genesys", _set("resolution/symbols/5/counts", "t"),
     "/resolution/symbols/5/counts", "without counts"),
    ("CHK-SYM-5", "symbols-genesys", _set("resolution/symbols/2/cancels", "f"),
     "/resolution/symbols/2/cancels", "already cancels"),
    ("CHK-SYM-9", "symbols-genesys", _set("resolution/pool/die", "wild"),
     "/resolution/pool/die", 'unknown die "wild"'),
    ("CHK-SYM-9", "symbols-genesys", _set("resolution/dice/0/faces/1", ["z"]),
     "/resolution/dice/0/faces/1/0", 'unknown symbol "z"'),
    ("CHK-SYM-12", "symbols-genesys", _set("resolution/pool/max", 13), "/resolution/pool/max", ""),
    ("CHK-SYM-24", "symbols-genesys", _set("resolution/pool/upgrade", None),
     "/resolution/allowOwnUpgrade", "pool.upgrade"),
    ("CHK-OUT-6", "sum-2d6", _set("resolution/outcomes/tiers/1/atLeast", 7),
     "/resolution/outcomes/tiers/1/atLeast", "decreases"),
    ("CHK-OUT-7", "sum-2d6", _set("resolution/outcomes/tiers/3/atLeast", -8),
     "/resolution/outcomes/tiers/3/atLeast", "catches the rest"),
    ("CHK-OUT-9", "highest-blades", _set("resolution/outcomes/tiers/3/success", True),
     "/resolution/outcomes/tiers", "one tier succeeds and one fails"),
    ("CHK-OUT-12", "highest-blades", _set("resolution/outcomes/tiers/0/success", False),
     "/resolution/outcomes/tiers/0/success", "success true"),
    ("CHK-OVR-5", "sum-2d6", _set("resolution/overrides/0/set/abilityModifier", {"op": "identity"}),
     "/resolution/overrides/0/set/abilityModifier", "may not change"),
    ("CHK-OVR-6", "symbols-genesys", _set("resolution/overrides", [
        {"id": "o", "label": "O", "skills": ["charm"], "set": {"symbols": []}}]),
     "/resolution/overrides/0/set/symbols", "may not change"),
    ("CHK-OVR-7", "sum-2d6", _set("resolution/overrides/0/set/unmodified", [9]),
     "/resolution/overrides/0/set/unmodified/0", "not on a d6"),
    ("CHK-OVR-11", "sum-2d6", _set("resolution/overrides/1/when", None),
     "", ""),
    ("CHK-SPEND-12", "sum-2d6", _both(
        _set("live/pools", [{"id": "luck", "label": "Luck", "max": {"const": 3}}]),
        _set("resolution/spend", [{"pool": "luck", "amount": 1, "successes": 1, "perCheck": 1}])),
     "/resolution/spend/0", "declares no spend"),
    ("CHK-SPEND-12", "highest-blades", _both(
        _set("live/pools", [{"id": "stress", "label": "Stress", "max": {"const": 9}}]),
        _set("resolution/spend", [{"pool": "stress", "amount": 2, "successes": 1, "perCheck": 1}])),
     "/resolution/spend/0", "buys only dice"),
    ("CHK-SPEND-13", "pool-d10", _set("resolution/spend/1",
                                      {"pool": "resolve", "amount": 2, "dice": 1, "perCheck": 1}),
     "/resolution/spend/1/pool", "second spend"),
    ("CHK-SPEND-4", "pool-d10", _set("resolution/spend/0/successes", None),
     "/resolution/spend/0", "buys successes, dice or a reroll"),
]


@pytest.mark.parametrize(("rule", "name", "change", "where", "says"), CASES,
                         ids=[f"{c[0]}-{i}" for i, c in enumerate(CASES)])
def test_import_rules_refuse_the_ruleset(rule: str, name: str, change: Callable[[Doc], None],
                                         where: str, says: str) -> None:
    doc = document(name)
    if rule == "CHK-OVR-11":  # two overrides without "when" naming one skill
        doc["resolution"]["overrides"][1]["skills"] = ["open_doors"]
    if rule == "CHK-SPEND-13":
        doc["resolution"]["spend"].append({})
    change(doc)
    with pytest.raises(RulesetError) as caught:
        load_ruleset(doc)
    problems = caught.value.problems
    if rule == "CHK-OVR-11":
        assert any("second override" in p.message for p in problems), problems
        return
    assert any(p.pointer.startswith(where) and says in p.message for p in problems), problems


@pytest.mark.parametrize("name", sorted(KINDS))
def test_chk_gen_1_each_fixture_is_a_valid_ruleset_of_its_kind(name: str) -> None:
    game = load_ruleset(document(name))
    assert game.ruleset.resolution is not None
    assert game.ruleset.resolution.kind == KINDS[name]


def test_chk_gen_2_harrow_demo_stays_valid() -> None:
    from tests.helpers import harrow
    assert harrow().ruleset.resolution is not None


def test_chk_ovr_5_overrides_may_change_other_keys() -> None:
    doc = document("pool-d10")
    doc["resolution"]["overrides"] = [
        {"id": "favored", "label": "Favored", "skills": ["ward"], "set": {"cancel": None}}]
    load_ruleset(doc)


@pytest.mark.parametrize(("score", "number"), [(1, -5), (8, -1), (9, -1), (10, 0), (11, 0),
                                               (15, 2), (20, 5)])
def test_chk_gen_6_floor_half_minus_ten(score: int, number: int) -> None:
    doc = document("sum-2d6")
    doc["resolution"]["abilityModifier"] = {"op": "floorHalfMinusTen"}
    assert ability_modifier(load_ruleset(doc), score) == number


@pytest.mark.parametrize(("score", "number"), [(0, -2), (2, -2), (3, 0), (4, 0), (5, 1), (9, 1)])
def test_chk_gen_7_step_table_oq_chk_2(score: int, number: int) -> None:
    doc = document("sum-2d6")
    doc["resolution"]["abilityModifier"] = {"op": "stepTable", "rows": [[5, 1], [2, -2], [3, 0]]}
    assert ability_modifier(load_ruleset(doc), score) == number


def test_chk_gen_7_step_table_needs_rows() -> None:
    doc = document("sum-2d6")
    doc["resolution"]["abilityModifier"] = {"op": "stepTable"}
    with pytest.raises(RulesetError) as caught:
        load_ruleset(doc)
    assert any(p.pointer == "/resolution/abilityModifier/rows" for p in caught.value.problems)
