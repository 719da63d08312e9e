"""Talismans (checks.md §11: ``use=`` with a chosen catalog entry's ``mechanics.check``), their
payment (§11.1 CHK-PAY-*), the import rules for ``mechanics.check``, CHK-SPEND-2 and the
Capability API gates of Appendix D."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from check_support import check, document

from engine import Game, State, load_ruleset, start_state
from engine.actions.checks.pipeline import roll_check
from engine.rules.context import TurnContext
from engine.rules.party import PartyError
from engine.ruleset import RulesetError
from tests.helpers import fixture_json

POTENCE: dict[str, Any] = {
    "kind": "utility", "cost": [{"pool": "resolve", "amount": 1}], "perCostStep": {"flat": 1},
    "check": {"reroll": {"upTo": 1, "mode": "once"}, "successes": 1}}


def _game(mechanics: dict[str, Any] | None = None, **resolution: Any) -> Game:
    """pool-d10 with a ``disciplines`` catalog whose ``potence`` entry has ``mechanics``."""
    doc = document("pool-d10")
    doc["catalogs"].append({"id": "disciplines", "label": "Disciplines", "holds": "disciplines",
                            "entries": [{"id": "potence", "label": "Potence",
                                         "mechanics": mechanics or POTENCE},
                                        {"id": "fortitude", "label": "Fortitude"}]})
    for key, value in resolution.items():
        doc["resolution"][key] = value
    return load_ruleset(doc)


def _party(g: Game, entries: list[str], resolve: int = 3) -> State:
    party = copy.deepcopy(fixture_json("parties/pool-d10.json"))
    party["characters"][0]["entries"] = entries
    party["characters"][0]["pools"]["resolve"] = resolve
    return start_state(g, party)


def _check(g: Game, state: State, attrs: str, turn: tuple[int, ...] = (0, 0),
           ) -> tuple[State, dict[str, Any], str]:
    new, answer = check(g, state, f"[skill_check: skill=\"Ward\" dc=\"2\" {attrs}]", turn)
    assert answer.ok
    return new, answer.record, answer.text


def test_chk_tal_1_a_chosen_entry_must_exist() -> None:
    g = _game()
    with pytest.raises(PartyError) as error:
        _party(g, ["disciplines/potence", "disciplines/celerity"])
    assert str(error.value).splitlines() == [
        '/characters/0/entries/1: no catalog entry "disciplines/celerity" in the ruleset']
    state = _party(g, ["disciplines/potence"])
    assert state.characters[0].entries == ("disciplines/potence",)
    exported = state.to_json()
    exported["characters"][0]["entries"] = ["disciplines/nope"]
    with pytest.raises(PartyError, match="/characters/0/entries/0"):
        start_state(g, exported)


@pytest.mark.parametrize("entries", [[], ["disciplines/fortitude"]])
def test_chk_pay_5_an_entry_not_chosen_or_without_check_does_nothing(entries: list[str]) -> None:
    g = _game()
    state = _party(g, entries)
    plain = _check(g, state, "")[1]
    new, record, text = _check(g, state, 'use="Potence"')
    assert new is state  # nothing paid, nothing taken
    assert record == plain
    assert "changed nothing" in text
    spent = _check(g, state, 'use="Potence" spend="resolve:2"')[1]  # OQ-CHK-53: the system's
    assert (spent["spend"], spent["successesBought"]) == ("resolve:2", 2)


def test_chk_tal_11_per_cost_step_buys_as_many_as_were_paid() -> None:
    g = _game()
    state = _party(g, ["disciplines/potence"])
    new, record, _ = _check(g, state, 'use="potence" spend="resolve:3"')
    assert (record["use"], record["useBought"], record["usePaid"]) == ("Potence", 3, "resolve:3")
    assert record["successesBought"] == 3  # CHK-PAY-6, OQ-CHK-51(c)
    assert new.characters[0].pools["resolve"] == 0  # CHK-SPEND-16
    assert state.characters[0].pools["resolve"] == 3  # never mutated
    assert "spend" not in record  # OQ-CHK-53: with use= the points pay for the entry


def test_chk_tal_11_without_per_cost_step_the_entry_is_bought_once() -> None:
    once = {k: v for k, v in POTENCE.items() if k != "perCostStep"}
    g = _game(once)
    state = _party(g, ["disciplines/potence"])
    new, record, _ = _check(g, state, 'use="Potence" spend="resolve:3"')
    assert (record["useBought"], record["usePaid"], record["successesBought"]) == (1, "resolve:1", 1)
    assert new.characters[0].pools["resolve"] == 2


def test_oq_chk_51_use_without_spend_buys_once_at_the_base_price() -> None:
    g = _game()
    state = _party(g, ["disciplines/potence"])
    new, record, _ = _check(g, state, 'use="disciplines/potence"')
    assert (record["useBought"], record["usePaid"]) == (1, "resolve:1")
    assert new.characters[0].pools["resolve"] == 2


def test_chk_pay_1_all_or_nothing_when_the_pool_is_short() -> None:
    g = _game()
    state = _party(g, ["disciplines/potence"], resolve=2)
    plain = _check(g, state, "")[1]
    new, record, text = _check(g, state, 'use="Potence" spend="resolve:3"')
    assert new is state
    assert record["useRefused"] is True
    assert {k: v for k, v in record.items() if k != "useRefused"} == plain
    assert "nothing was taken" in text


def test_chk_pay_2_points_short_of_one_purchase_buy_nothing() -> None:
    mechanics = {**POTENCE, "cost": [{"pool": "resolve", "amount": 2}]}
    g = _game(mechanics)
    state = _party(g, ["disciplines/potence"])
    new, record, _ = _check(g, state, 'use="Potence" spend="resolve:1"')
    assert new is state and "use" not in record


def test_chk_pay_a4_spend_and_entry_on_one_pool_are_paid_together() -> None:
    g = _game({**POTENCE, "cost": [{"pool": "health", "amount": 4}]})
    state = _party(g, ["disciplines/potence"])
    new, record, _ = _check(g, state, 'use="Potence" spend="resolve:2"')
    assert (record["spend"], record["usePaid"], record["successesBought"]) == (
        "resolve:2", "health:4", 2 + 1)
    assert new.characters[0].pools["resolve"] == 1
    assert new.characters[0].pools["health"] == 6


@pytest.mark.parametrize(("entry", "tag", "key", "value"), [
    ({"threshold": 9}, 'threshold="5"', "threshold", 9),  # CHK-TAL-6, CHK-POOL-A7
    ({"threshold": 3}, "", "threshold", 5),  # CHK-TAL-4: within the target range
    ({"explode": 8}, 'explode="9"', "explode", 8),  # CHK-TAL-5/6
    ({"explode": 8}, "", "explode", 8),
])
def test_chk_tal_4_6_the_entry_beats_the_tag(entry: dict[str, Any], tag: str, key: str,
                                            value: int) -> None:
    g = _game({"cost": [{"pool": "resolve", "amount": 1}], "check": entry})
    state = _party(g, ["disciplines/potence"])
    record = _check(g, state, f'use="Potence" {tag}')[1]
    assert record[key] == value


def test_chk_tal_5_explode_and_double_need_the_rules_min() -> None:
    g = _game({"cost": [], "check": {"double": 8, "dice": 1}})  # pool-d10 declares no double
    state = _party(g, ["disciplines/potence"])
    record = _check(g, state, 'use="Potence"')[1]
    assert "double" not in record and record["use"] == "Potence"


def test_chk_pool_31_the_entry_reroll_beats_a_smaller_named_one() -> None:
    g = _game({"cost": [], "check": {"reroll": {"upTo": 8, "mode": "once"}}})
    state = _party(g, ["disciplines/potence"])
    record = _check(g, state, 'use="Potence" reroll="careful"')[1]
    assert "reroll" not in record  # CHK-TAG-18: the named reroll was not the one rolled
    assert record["rerolled"] >= 1


def test_chk_tal_determinism_same_inputs_same_json() -> None:
    g = _game()
    state = _party(g, ["disciplines/potence"])
    one = roll_check(g, state, 0, {"skill": "ward", "dc": "2", "use": "Potence",
                                   "spend": "resolve:2"}, TurnContext("s", (1, 2)))
    two = roll_check(g, state, 0, {"skill": "ward", "dc": "2", "use": "Potence",
                                   "spend": "resolve:2"}, TurnContext("s", (1, 2)))
    assert one[0].canonical() == two[0].canonical() and one[1] == two[1]


# --- import ----------------------------------------------------------------------------------

def _problems(doc: dict[str, Any]) -> list[str]:
    with pytest.raises(RulesetError) as error:
        load_ruleset(doc)
    return str(error.value).splitlines()


def _with_entry(name: str, mechanics: Any) -> dict[str, Any]:
    doc = document(name)
    doc["catalogs"] = [*doc.get("catalogs", []), {
        "id": "gifts", "label": "Gifts", "holds": "gifts",
        "entries": [{"id": "g", "label": "G", "mechanics": mechanics}]}]
    return doc


@pytest.mark.parametrize(("rule", "name", "mechanics", "expected"), [
    ("CHK-TAL-8", "pool-d10", {"check": {}},
     "/catalogs/1/entries/0/mechanics/check: Value error, a check holds reroll"),
    ("CHK-TAL-9", "sum-2d6", {"check": {"successes": 1}},
     "/catalogs/1/entries/0/mechanics/check: only a dice-pool ruleset reads mechanics.check "
     "(this one has dice-sum resolution)"),
    ("OQ-CHK-50", "symbols-genesys", {"check": {"dice": 1}},
     "/catalogs/1/entries/0/mechanics/check: only a dice-pool ruleset reads mechanics.check "
     "(this one has symbol-pool resolution)"),
    ("CHK-TAL-3", "pool-d10", {"check": {"reroll": {"upTo": 10}}},
     "/catalogs/1/entries/0/mechanics/check/reroll/upTo: upTo is at most 9"),
    ("CHK-TAL-10", "pool-d10", {"cost": [{"pool": "blood"}], "check": {"dice": 1}},
     '/catalogs/1/entries/0/mechanics/cost/0/pool: unknown pool "blood"'),
])
def test_talisman_import_rules(rule: str, name: str, mechanics: Any, expected: str) -> None:
    problems = _problems(_with_entry(name, mechanics))
    assert any(p.startswith(expected) for p in problems), (rule, problems)


def test_chk_spend_2_a_spend_pool_may_not_start_empty() -> None:
    doc = document("pool-d10")
    doc["live"]["pools"][1]["max"] = {"const": 0}
    assert _problems(doc) == [
        '/resolution/spend/0/pool: pool "resolve" starts empty, so there is nothing to spend']
    doc["live"]["pools"][1]["max"] = {"abilityScore": "sinew"}  # differs by character: allowed
    load_ruleset(doc)


# --- Appendix D: Capability API gates -------------------------------------------------------

def _doc(name: str, api: str, **keys: Any) -> dict[str, Any]:
    doc = document(name)
    doc["capabilityApi"] = api
    for key, value in keys.items():
        doc["resolution"][key] = value
    return doc


GATES = [
    ("CHK-POOL-50", _doc("pool-d10", "1.23", reroll=[], spend=[], botch={"upTo": 1},
                         explode={"from": 10}, pool={"min": 1, "max": 15}),
     "/resolution/kind: the dice-pool kind needs capabilityApi 1.24 or later "
     "(the ruleset declares 1.23)"),
    ("CHK-POOL-51", _doc("pool-d10", "1.36", reroll=[]),
     "/resolution/explode/min: min on explode needs capabilityApi 1.37 or later "
     "(the ruleset declares 1.36)"),
    ("CHK-POOL-51", _doc("pool-d10", "1.36", reroll=[]),
     "/resolution/pool/abilityPlusAbility: pool.abilityPlusAbility needs capabilityApi 1.37"),
    ("CHK-POOL-51", _doc("pool-d10", "1.36", botch={"upTo": 1, "rule": "noSuccesses"}),
     "/resolution/botch/rule: botch.rule needs capabilityApi 1.37"),
    ("CHK-POOL-52", _doc("pool-d10", "1.37"), "/resolution/reroll: reroll needs capabilityApi 1.38"),
    ("CHK-POOL-53", _doc("pool-d10", "1.136", target={"default": 7, "min": 5, "max": 9,
                                                       "from": {"abilityScore": "wits"}}),
     "/resolution/target/from: target.from needs capabilityApi 1.137"),
    ("CHK-POOL-53", _doc("pool-d10", "1.136", exact={"label": "Exact"}),
     "/resolution/exact: exact needs capabilityApi 1.137"),
    ("CHK-SPEND-14", _doc("pool-d10", "1.37", reroll=[],
                          spend=[{"pool": "resolve", "amount": 1, "perCheck": "pool",
                                  "dice": 1}]),
     "/resolution/spend/0/perCheck: a spend perCheck that is not a number needs capabilityApi 1.38"),
    ("CHK-OUT-22", _doc("highest-blades", "1.134"),
     "/resolution/outcomes: outcomes needs capabilityApi 1.135"),
    ("CHK-SUM-16", _doc("sum-2d6", "1.135", overrides=[]),
     "/resolution/unmodified: unmodified needs capabilityApi 1.136 or later "
     "(the ruleset declares 1.135)"),
    ("CHK-HIGH-1", _doc("highest-blades", "1.137"),
     "/resolution/kind: the dice-highest kind needs capabilityApi 1.138"),
    ("CHK-HIGH-14", _doc("highest-blades", "1.148", dark={"label": "Dark", "max": 3,
                                                           "outcome": "all"}),
     "/resolution/dark/outcome: dark.outcome needs capabilityApi 1.149"),
    ("CHK-RA-1", _doc("against-d100", "1.138"),
     "/resolution/kind: the roll-against kind needs capabilityApi 1.139"),
    ("CHK-OVR-1", _doc("sum-2d6", "1.139"),
     "/resolution/overrides: overrides needs capabilityApi 1.140"),
    ("CHK-SYM-1", _doc("symbols-genesys", "1.140"),
     "/resolution/kind: the symbol-pool kind needs capabilityApi 1.141"),
    ("CHK-SYM-26", _doc("symbols-genesys", "1.149"),
     "/resolution/allowOwnUpgrade: allowOwnUpgrade needs capabilityApi 1.150"),
    ("CHK-TAL-7", {**_with_entry("pool-d10", {"check": {"explode": 8}}), "capabilityApi": "1.36"},
     "/catalogs/1/entries/0/mechanics/check/explode: explode in mechanics.check needs "
     "capabilityApi 1.37"),
]


@pytest.mark.parametrize(("rule", "doc", "expected"), GATES)
def test_appendix_d_capability_api_gates(rule: str, doc: dict[str, Any], expected: str) -> None:
    problems = _problems(doc)
    assert any(p.startswith(expected) for p in problems), (rule, problems)


def test_chk_pool_54_a_community_ruleset_declares_no_version() -> None:
    doc = {k: v for k, v in document("symbols-genesys").items()
           if k not in ("capabilityApi", "items", "catalogs")}
    load_ruleset(doc)  # a symbol-pool (1.141) and allowOwnUpgrade (1.150) without a gate


def test_section_0_3_versions_compare_as_integers_not_decimals() -> None:
    load_ruleset(_doc("pool-d10", "1.140"))  # 1.140 > 1.38 although 1.140 < 1.38 as decimals
    assert any("1.138" in p for p in _problems(_doc("highest-blades", "1.40")))


def test_chk_sym_22_separate_setback_needs_1_150() -> None:
    g_new = load_ruleset(document("symbols-genesys"))
    g_old = load_ruleset({**document("symbols-genesys"), "capabilityApi": "1.149"}
                         | {"resolution": {k: v for k, v in document("symbols-genesys")[
                             "resolution"].items() if k != "allowOwnUpgrade"}})
    party = fixture_json("parties/symbols-genesys.json")
    tag = '[skill_check: skill="stealth" dc="1" setback="2"]'
    new_record = check(g_new, start_state(g_new, party), tag)[1].record
    old_record = check(g_old, start_state(g_old, party), tag)[1].record
    assert new_record["setback"] == 2 and "setback" not in old_record
