"""``[skill_check:]`` end to end through ``apply_reply``: naming the check, the sheet number,
tag attributes and their clamps, items.md §7 modifiers, tiers, overrides, spends, refusals,
determinism and golden dice."""

from __future__ import annotations

import json
from typing import Any

import pytest
from check_support import check, document, game, party

from engine import Game, State, load_ruleset, start_state
from engine.actions.checks import outcomes
from engine.rules.checks.read import Rolled
from engine.ruleset.resolution import Outcomes
from tests.helpers import fixture_json


def _one(name: str, tag: str, turn: tuple[int, ...] = (0, 0), g: Game | None = None,
         state: State | None = None) -> tuple[State, State, dict[str, Any], Any]:
    g = g or game(name)
    state = state or party(g, name)
    new, answer = check(g, state, f"[skill_check: {tag}]", turn)
    return state, new, answer.record, answer


# --- golden dice: the stream derivation and draw order of each kind are pinned ------------------

GOLDEN = [
    ("sum-2d6", 'skill="climb" dc="9"', [5, 6], True, "Critical success"),
    ("sum-2d6", 'skill="sneak" difficulty="Hard" mode="advantage"', [6, 4, 3, 2], True, "Success"),
    ("sum-2d6", 'save="steel" dc="8"', [1, 2], False, "Failure"),
    ("pool-d10", 'skill="Ward" dc="2" who="Bram the Quiet" threshold="8" bonus="-2" with="Sinew"',
     [10, 2, 2, 6, 1], False, None),
    ("pool-d10", 'skill="Ward" difficulty="Grim" explode="9"', [4, 2, 7, 4, 7, 7], False, None),
    ("pool-d10", 'skill="Nerve" dc="1" with="Warmth"', [3, 3, 6], True, None),
    ("pool-d10", 'skill="Ward" dc="2" reroll="careful"', [5, 8, 10, 7, 1, 6, 1], False, None),
    ("highest-blades", 'skill="skirmish" dc="4"', [1, 3, 3], False, "Bad outcome"),
    ("highest-blades", 'skill="study" who="Whisper"', [4, 4], True, "Partial success"),
    ("highest-blades", 'skill="skirmish" dark="2"', [2, 2, 5, 1, 2], True, "Partial success"),
    ("against-d100", 'skill="spot_hidden" difficulty="Hard"', [59], False, "Failure"),
    ("against-d100", 'skill="climb" bonus="2"', [8, 1, 2, 2], True, "Regular success"),
    ("against-d100", 'save="luck"', [20], True, "Hard success"),
    ("symbols-genesys", 'skill="stealth" difficulty="Average" upgrade="1"', [4, 4, 11, 4, 12],
     True, None),
    ("symbols-genesys",
     'skill="charm" dc="2" bonus="-2" setback="3" who="Osk" upgradeOwn="2"',
     [4, 2, 4, 12, 4, 7, 2, 6, 2], True, None),
]


@pytest.mark.parametrize(("index", "row"), list(enumerate(GOLDEN)))
def test_golden_dice_per_kind(index: int, row: tuple[Any, ...]) -> None:
    name, tag, rolls, success, outcome = row
    _, _, record, answer = _one(name, tag, turn=(0, index))
    assert answer.ok
    assert record["rolls"] == rolls
    assert record["success"] is success
    assert record.get("outcome") == outcome


def test_determinism_same_inputs_give_identical_json() -> None:
    for index, (name, tag, *_rest) in enumerate(GOLDEN):
        first = _one(name, tag, turn=(3, index))[3].to_json()
        second = _one(name, tag, turn=(3, index))[3].to_json()
        assert json.dumps(first, sort_keys=True) == json.dumps(second, sort_keys=True)


def test_chk_gen_ordinal_each_check_of_a_reply_has_its_own_dice() -> None:
    g = game("pool-d10")
    state = party(g, "pool-d10")
    from tests.helpers import answer
    _, answers = answer(g, state, '[skill_check: skill="ward" dc="1"] [skill_check: skill="ward" dc="1"]')
    assert answers[0].record["rolls"] != answers[1].record["rolls"]


# --- refusals: bad requests only, state unchanged ------------------------------------------------

@pytest.mark.parametrize(("tag", "reason"), [
    ('skill="fly" dc="3"', "unknown-skill"),
    ('save="luck" dc="3"', "unknown-save"),
    ('ability="charm" dc="3"', "unknown-ability"),
    ('dc="3"', "missing-attribute"),
    ('skill="climb" dc="3" who="Nobody"', "unknown-character"),
    ('skill="climb"', "missing-difficulty"),
    ('skill="climb" difficulty="Impossible"', "missing-difficulty"),
])
def test_refusals_leave_the_state_unchanged(tag: str, reason: str) -> None:
    state, new, _, answer = _one("sum-2d6", tag)
    assert not answer.ok
    assert answer.reason == reason
    assert new is state


def test_no_resolution_is_refused() -> None:
    doc = document("sum-2d6")
    del doc["resolution"]
    doc["catalogs"] = []
    g = load_ruleset(doc)
    state = start_state(g, {"seed": "x", "player": "Ada", "characters": [{"name": "Ada"}]})
    new, answer = check(g, state, '[skill_check: skill="climb" dc="3"]')
    assert (answer.ok, answer.reason, new is state) == (False, "no-resolution", True)


def test_unknown_skill_lists_what_exists() -> None:
    answer = _one("sum-2d6", 'skill="fly" dc="3"')[3]
    assert "Climb, Sneak, Open Doors, Athletics" in answer.text


def test_a_failed_check_is_still_answered_ok() -> None:
    _, _, record, answer = _one("sum-2d6", 'save="steel" dc="8"', turn=(0, 2))
    assert answer.ok and record["success"] is False


# --- naming and the sheet number -------------------------------------------------------------------

def test_chk_gen_10_multiplier_times_proficiency_bonus() -> None:
    """Ada: brawn 2 + expert (2 × proficiency bonus 2); coat −1 and waystone +1 cancel."""
    record = _one("sum-2d6", 'skill="climb" dc="9"')[2]
    assert record["modifier"] == 6
    assert (record["effects"], record["from"]) == ("+0", "Leather coat, Waystone")


def test_chk_gen_9_unnamed_skill_takes_the_first_tier() -> None:
    record = _one("sum-2d6", 'skill="climb" dc="9" who="Bram the Quiet"')[2]
    assert record["modifier"] == 3 + 1
    record = _one("sum-2d6", 'skill="open_doors" dc="3" who="Bram the Quiet"')[2]
    assert record["modifier"] == 3


def test_oq_chk_6_labels_and_any_case_name_the_check() -> None:
    a = _one("sum-2d6", 'skill="Open Doors" dc="3"')[2]
    b = _one("sum-2d6", 'skill="OPEN_DOORS" dc="3"')[2]
    assert a == b and a["skill"] == "open_doors"


def test_design_sheet_model_skill_bonus_is_the_roll_against_threshold() -> None:
    """OQ-CHK-30: a CoC skill names no ability: threshold = its bonus (60)."""
    record = _one("against-d100", 'skill="spot_hidden"')[2]
    assert record["dc"] == 60 and record["against"] == "at-most"


def test_chk_ra_a3_a4_divide_then_shift_oq_chk_33() -> None:
    assert _one("against-d100", 'skill="spot_hidden" difficulty="Extreme"')[2]["dc"] == 12
    assert _one("against-d100", 'skill="spot_hidden" difficulty="Hard" dc="-5"')[2]["dc"] == 25
    assert _one("against-d100", 'skill="spot_hidden" dc="500"')[2]["dc"] == 160  # CHK-RA-8


def test_chk_tag_5_with_replaces_the_ability_and_chk_tag_13_ignores_unknown() -> None:
    replaced = _one("sum-2d6", 'skill="sneak" dc="3" with="brawn"')[2]
    ignored = _one("sum-2d6", 'skill="sneak" dc="3" with="charisma"')[2]
    plain = _one("sum-2d6", 'skill="sneak" dc="3"')[2]
    assert replaced["with"] == "brawn" and replaced["modifier"] == plain["modifier"] - 1
    assert "with" not in ignored and ignored["modifier"] == plain["modifier"]


def test_chk_tag_6_ability_plus_ability_in_a_pool() -> None:
    record = _one("pool-d10", 'ability="sinew" dc="1" with="warmth" who="Bram the Quiet"')[2]
    assert record["with"] == "warmth" and len(record["rolls"]) >= 5
    doc = document("pool-d10")
    doc["resolution"]["pool"]["abilityPlusAbility"] = False
    g = load_ruleset(doc)
    record = _one("pool-d10", 'ability="sinew" dc="1" with="warmth"', g=g)[2]
    assert "with" not in record  # CHK-POOL-9


# --- pool tag attributes -------------------------------------------------------------------------

@pytest.mark.parametrize(("tag", "key", "value"), [
    ('skill="ward" dc="99"', "dc", 30),  # CHK-TAG-2: 15 × 2 (explode)
    ('skill="ward" dc="0"', "dc", 1),
    ('skill="ward" dc="2" threshold="12"', "threshold", 9),  # CHK-TAG-3
    ('skill="ward" dc="2" threshold="2"', "threshold", 5),
    ('skill="ward" dc="2" bonus="+9"', "bonus", 3),  # CHK-TAG-4, CHK-TAG-15
    ('skill="ward" dc="2" bonus="-9"', "bonus", -3),
    ('skill="ward" dc="1"', "threshold", 6),  # CHK-POOL-34: one step needs 1
    ('skill="ward" difficulty="grim"', "threshold", 8),  # OQ-CHK-18: any case
    ('skill="ward" difficulty="Grim" dc="2"', "dc", 2),  # CHK-TAG-8: dc= wins for the number
    ('skill="ward" difficulty="Grim" threshold="5"', "threshold", 5),  # and threshold= for T
    ('skill="ward" dc="2" explode="3"', "explode", 8),  # CHK-TAG-10, OQ-CHK-17
    ('skill="ward" dc="2" threshold="x"', "threshold", 7),  # OQ-CHK-16: not a number
    ('skill="ward" difficulty="Nowhere"', "dc", 1),  # CHK-TAG-9 ignored, OQ-CHK-21 N = 1
])
def test_pool_tag_attributes_are_clamped_or_ignored(tag: str, key: str, value: int) -> None:
    _, _, record, answer = _one("pool-d10", tag + ' who="Bram the Quiet"')
    assert answer.ok
    assert record[key] == value


def test_chk_tag_17_explode_recorded_only_when_moved() -> None:
    assert "explode" not in _one("pool-d10", 'skill="ward" dc="2"')[2]


def test_chk_pool_35_two_steps_with_one_count_keep_the_default_threshold() -> None:
    doc = document("pool-d10")
    doc["resolution"]["difficultyLadder"].append({"label": "Other", "successes": 1, "target": 8})
    g = load_ruleset(doc)
    assert _one("pool-d10", 'skill="ward" dc="1"', g=g)[2]["threshold"] == 7


def test_chk_pool_6_empty_pool_fails_without_rolling() -> None:
    doc = document("pool-d10")
    doc["resolution"]["pool"]["min"] = 0
    g = load_ruleset(doc)
    _, _, record, answer = _one("pool-d10", 'skill="ward" dc="1" bonus="-3" who="Ada"', g=g)
    assert answer.ok and record["rolls"] == [] and record["success"] is False


def test_chk_tag_20_21_model_results_and_advantage_are_ignored_in_pools() -> None:
    plain = _one("pool-d10", 'skill="ward" dc="2"')[2]
    written = _one("pool-d10", 'skill="ward" dc="2" rolls="10,10,10" mode="advantage"')
    assert written[2] == plain
    assert any("rolls" in note for note in written[3].notes)


def test_chk_tag_18_reroll_recorded_only_when_it_rerolled() -> None:
    for index in range(20):
        record = _one("pool-d10", 'skill="ward" dc="2" reroll="careful"', turn=(1, index))[2]
        assert ("reroll" in record) == (record.get("rerolled", 0) >= 1)
    assert "reroll" not in _one("pool-d10", 'skill="ward" dc="2" reroll="reckless"')[2]


def test_chk_pool_44_stance_counts_below_and_skips_explode() -> None:
    doc = document("pool-d10")
    doc["resolution"]["stances"] = [{"id": "lasers", "label": "Lasers", "count": "below",
                                     "skills": ["ward"]}]
    doc["resolution"]["exact"] = {"label": "LASER FEELINGS", "text": "Ask a question."}
    g = load_ruleset(doc)
    for index in range(10):
        record = _one("pool-d10", 'skill="ward" dc="1"', g=g, turn=(2, index))[2]
        faces, t = record["rolls"], record["threshold"]
        below = sum(1 for f in faces if f < t) + sum(1 for f in faces if f == t)
        assert record["total"] == below  # CHK-POOL-42, CHK-POOL-45
        assert record.get("exact", 0) == sum(1 for f in faces if f == t)  # CHK-POOL-46


# --- spends (CHK-SPEND, CHK-PAY) -----------------------------------------------------------------

def test_chk_spend_5_pay_1_bought_success_is_paid_from_the_pool() -> None:
    state, new, record, answer = _one("pool-d10", 'skill="nerve" dc="2" spend="resolve:1"')
    assert answer.ok and record["spend"] == "resolve:1" and record["bought"] == 1
    assert new.characters[0].pools["resolve"] == 2
    assert state.characters[0].pools["resolve"] == 3


def test_chk_pay_3_offer_over_per_check_is_clamped() -> None:
    _, new, record, _ = _one("pool-d10", 'skill="nerve" dc="2" spend="resolve:5"')
    assert record["spend"] == "resolve:2" and new.characters[0].pools["resolve"] == 1


def test_chk_pay_1_all_or_nothing_when_the_pool_is_short() -> None:
    plain = _one("pool-d10", 'skill="nerve" dc="2" who="Ada"')[2]
    state, new, record, answer = _one("pool-d10", 'skill="nerve" dc="2" spend="resolve:1" who="Ada"')
    assert answer.ok and new is state
    assert record["rolls"] == plain["rolls"] and "spend" not in record


def test_oq_chk_49_unknown_spend_pool_is_ignored() -> None:
    state, new, record, _ = _one("pool-d10", 'skill="nerve" dc="2" spend="blood:2"')
    assert new is state and "spend" not in record


# --- items.md §7 -----------------------------------------------------------------------------------

def _with_bag(name: str, who: int, bag: list[dict[str, Any]], **extra: Any) -> tuple[Game, State]:
    g = game(name)
    doc = fixture_json(f"parties/{name}.json")
    doc["characters"][who]["bag"] = bag
    doc["characters"][who].update(extra)
    return g, start_state(g, doc)


def test_itm_chk_8_condition_modifier_is_named_in_the_record() -> None:
    record = _one("sum-2d6", 'skill="sneak" dc="3"')[2]
    assert (record["effects"], record["from"]) == ("-1", "Rattled")


def test_itm_chk_4_saves_read_only_save_modifiers() -> None:
    g, state = _with_bag("sum-2d6", 0, [], conditions=["shaken"])
    save = _one("sum-2d6", 'save="steel" dc="3"', g=g, state=state)[2]
    skill = _one("sum-2d6", 'skill="climb" dc="3"', g=g, state=state)[2]
    assert save["from"] == "Shaken" and "from" not in skill


def test_itm_worn_1_worn_applies_only_while_equipped() -> None:
    g, state = _with_bag("sum-2d6", 0, [{"item": "kit/leather-coat", "count": 1}], conditions=[])
    assert "from" not in _one("sum-2d6", 'skill="climb" dc="3"', g=g, state=state)[2]


def test_itm_worn_8_an_item_applies_once_however_many_copies() -> None:
    g, state = _with_bag("sum-2d6", 0, [{"item": "kit/waystone", "count": 3}], conditions=[])
    assert _one("sum-2d6", 'skill="climb" dc="3"', g=g, state=state)[2]["effects"] == "+1"


def test_itm_abil_2_gloves_set_an_ability_at_least() -> None:
    g, state = _with_bag("sum-2d6", 1, [{"item": "kit/oxhide-gloves", "count": 1,
                                         "equipped": True}])
    bare = _one("sum-2d6", 'skill="open_doors" dc="3" who="Bram the Quiet"')[2]
    gloved = _one("sum-2d6", 'skill="open_doors" dc="3" who="Bram the Quiet"', g=g,
                  state=state)[2]
    assert bare["modifier"] == gloved["modifier"] == 3  # brawn 3 stays (a higher score stays)
    g, state = _with_bag("sum-2d6", 0, [{"item": "kit/oxhide-gloves", "count": 1,
                                         "equipped": True}], conditions=[])
    assert _one("sum-2d6", 'skill="open_doors" dc="3"', g=g, state=state)[2]["modifier"] == 3


def test_itm_req_5_unmet_requirement_applies_its_otherwise() -> None:
    spade = {"item": "kit/grave-spade", "count": 1, "equipped": True}
    g, state = _with_bag("sum-2d6", 0, [spade], conditions=[])
    record = _one("sum-2d6", 'skill="climb" dc="3"', g=g, state=state)[2]
    assert (record["effects"], record["from"]) == ("-1", "Grave spade")
    gloves = {"item": "kit/oxhide-gloves", "count": 1, "equipped": True}
    g, state = _with_bag("sum-2d6", 0, [spade, gloves], conditions=[])  # ITM-REQ-4
    assert "from" not in _one("sum-2d6", 'skill="climb" dc="3"', g=g, state=state)[2]


def test_itm_chk_7_fails_saves_without_a_roll() -> None:
    state, new, record, answer = _one("sum-2d6", 'save="steel" dc="3" who="Bram the Quiet"')
    assert answer.ok and new is state
    assert record["automatic"] is True and record["rolls"] == [] and record["success"] is False


@pytest.mark.parametrize(("bag", "mode", "dice"), [
    ([], None, 2), ([], "advantage", 4), ([], "disadvantage", 4),
    ([{"item": "kit/lucky-coin", "count": 1}], None, 4),
    ([{"item": "kit/lucky-coin", "count": 1}], "disadvantage", 2),  # ITM-CHK-5: they cancel
])
def test_itm_chk_5_6_advantage_sources_cancel(bag: list[Any], mode: str | None,
                                               dice: int) -> None:
    g, state = _with_bag("sum-2d6", 0, bag, conditions=[])
    tag = 'skill="climb" dc="3"' + (f' mode="{mode}"' if mode else "")
    assert len(_one("sum-2d6", tag, g=g, state=state)[2]["rolls"]) == dice


def test_chk_sum_3_no_advantage_rule_rolls_once() -> None:
    g = game("sum-2d6", advantage=False)
    assert len(_one("sum-2d6", 'skill="climb" dc="3" mode="advantage"', g=g)[2]["rolls"]) == 2


# --- overrides ------------------------------------------------------------------------------------

def test_chk_ovr_3_override_rolls_its_own_dice_and_tells_the_gm() -> None:
    _, _, record, answer = _one("sum-2d6", 'skill="open_doors" dc="4"')
    assert record["override"] == "X-in-6" and len(record["rolls"]) == 1
    assert "Roll under in the fiction." in answer.text


def test_chk_ovr_8_when_zero_skips_the_override() -> None:
    assert len(_one("sum-2d6", 'skill="athletics" dc="4"')[2]["rolls"]) == 3
    g, state = _with_bag("sum-2d6", 0, [], fields={"favored_athletics": 0})
    record = _one("sum-2d6", 'skill="athletics" dc="4"', g=g, state=state)[2]
    assert "override" not in record and len(record["rolls"]) == 2


# --- dice-highest and symbol-pool specifics -------------------------------------------------------

def test_chk_high_5_fail_zero_dice_fails_without_rolling() -> None:
    g = game("highest-blades", zeroDice="fail")
    record = _one("highest-blades", 'skill="study" dc="4" who="Whisper"', g=g)[2]
    assert record["rolls"] == [] and record["zeroDice"] is True and record["success"] is False


def test_chk_high_11_22_dark_dice_last_and_oq_chk_29_clamped() -> None:
    for index in range(10):
        record = _one("highest-blades", 'skill="skirmish" dark="9"', turn=(4, index))[2]
        assert record["dark"] == 3 and len(record["rolls"]) == 3 + 3
        light, dark = record["rolls"][:3], record["rolls"][3:]
        assert record.get("darkHighest", False) == (max(dark) > max(light))  # CHK-HIGH-12


def test_chk_high_9_light_outcome_reads_light_dice_only() -> None:
    g = game("highest-blades", dark={"label": "Dark", "max": 3, "outcome": "light"})
    for index in range(10):
        record = _one("highest-blades", 'skill="skirmish" dark="3"', g=g, turn=(5, index))[2]
        assert record["darkOutcome"] == "light"
        assert record["total"] == max(record["rolls"][:3])


def test_chk_sym_worked_example_triumph_against_failure() -> None:
    from engine.actions.checks.symbols import symbols_text, tally
    res = game("symbols-genesys").ruleset.resolution
    raw, net = tally(res, [("proficiency", 12), ("difficulty", 2)])  # type: ignore[arg-type]
    assert symbols_text(res, net) == "1t"  # type: ignore[arg-type]
    assert net["s"] == 0 and raw["t"] == 1


def test_chk_sym_19_upgrade_never_exceeds_the_opposing_dice() -> None:
    record = _one("symbols-genesys", 'skill="stealth" dc="1" upgrade="4"')[2]
    assert record["thrown"].count("challenge") == 1 and "difficulty" not in record["thrown"]
    assert record["upgrade"] == 1


def test_chk_sym_23_oq_chk_41_setback_limit_fills_bonus_first() -> None:
    record = _one("symbols-genesys", 'skill="stealth" dc="1" bonus="-2" setback="5"')[2]
    assert record["thrown"].count("setback") == 3 and record["setback"] == 1


def test_chk_sym_25_upgrade_own_adds_upgraded_dice_within_the_max() -> None:
    record = _one("symbols-genesys", 'skill="stealth" dc="0" upgradeOwn="9"')[2]
    assert record["thrown"].count("proficiency") == 6 and record["upgradeOwn"] == 4


def test_chk_sym_28_upgrade_own_ignored_without_allow_own_upgrade() -> None:
    g = game("symbols-genesys", allowOwnUpgrade=False)
    record = _one("symbols-genesys", 'skill="stealth" dc="0" upgradeOwn="2"', g=g)[2]
    assert "upgradeOwn" not in record and record["thrown"].count("proficiency") == 2


# --- §8.1 picking a tier ------------------------------------------------------------------------

TIERS = Outcomes.model_validate({"by": "margin", "naturals": "shift", "tiers": [
    {"id": "cs", "label": "Critical success", "atLeast": 10, "success": True, "critical": True},
    {"id": "s", "label": "Success", "atLeast": 0, "success": True},
    {"id": "f", "label": "Failure", "atLeast": -9},
    {"id": "cf", "label": "Critical failure", "critical": True}]})


@pytest.mark.parametrize(("margin", "critical", "shift", "tier", "success", "crit"), [
    (12, None, 0, "cs", True, "success"),  # CHK-OUT-A4, CHK-OUT-8
    (0, None, 0, "s", True, None),
    (-1, None, 0, "f", False, None),
    (-10, None, 0, "cf", False, "failure"),  # CHK-OUT-7: the last tier catches the rest
    (0, None, 1, "cs", True, "success"),  # CHK-OUT-A5: a natural max moves one tier up
    (-1, None, -1, "cf", False, "failure"),
    (12, None, 1, "cs", True, "success"),  # never past the end tiers
    (5, "failure", 0, "cf", False, "failure"),  # CHK-OUT-A3: no on: tier → worst, critical
    (-5, "success", 0, "cs", True, "success"),
])
def test_chk_out_a1_a6_picking_a_tier(margin: int, critical: Any, shift: int, tier: str,
                                      success: bool, crit: Any) -> None:
    rolled = Rolled(rolls=[], success=False, critical=critical, margin=margin, shift=shift)
    landed = outcomes.pick(TIERS, rolled, shift=True)
    assert (landed.tier.id, landed.success, landed.critical) == (tier, success, crit)


def test_chk_out_a1_on_tier_takes_the_critical() -> None:
    blades = game("highest-blades").ruleset.resolution
    assert blades is not None and blades.outcomes is not None
    rolled = Rolled(rolls=[6, 6], success=True, critical="success", value=6)
    assert outcomes.pick(blades.outcomes, rolled, shift=False).tier.id == "critical"


def test_oq_chk_40_symbol_marks_do_not_route_into_on_tiers() -> None:
    rolled = Rolled(rolls=[], success=True, critical="success", margin=1,
                    tiers_read_criticals=False)
    assert outcomes.pick(TIERS, rolled, shift=False).tier.id == "s"


def test_oq_chk_26_empty_pool_never_lands_in_a_success_tier() -> None:
    rolled = Rolled(rolls=[], success=False, margin=0, empty=True)
    assert outcomes.pick(TIERS, rolled, shift=False).tier.id == "f"


# --- bad input: nothing a model writes crashes, hangs or grows without bound ---------------------

from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

ATTRIBUTES = ["dc", "difficulty", "threshold", "bonus", "with", "explode", "double", "reroll",
              "dark", "setback", "upgrade", "upgradeOwn", "spend", "mode", "who"]
PLAIN = st.characters(blacklist_characters='[]"|\n\r')
VALUES = st.one_of(st.integers(-10**7, 10**7).map(str), st.text(PLAIN, max_size=12),
                   st.sampled_from(["+3", "-2", "999999", "resolve:99", "Grim", "Hard", "careful"]))
SKILLS = {"sum-2d6": "climb", "pool-d10": "ward", "highest-blades": "skirmish",
          "against-d100": "climb", "symbols-genesys": "stealth"}
GAMES = {name: game(name) for name in SKILLS}


@settings(max_examples=150, deadline=None)
@given(name=st.sampled_from(sorted(SKILLS)),
       attrs=st.dictionaries(st.sampled_from(ATTRIBUTES), VALUES, max_size=6))
def test_any_attribute_values_are_answered_never_raised(name: str, attrs: dict[str, str]) -> None:
    g = GAMES[name]
    state = party(g, name)
    text = " ".join(f'{k}="{v.replace(chr(34), "")}"' for k, v in attrs.items())
    new, answer = check(g, state, f'[skill_check: skill="{SKILLS[name]}" {text}]')
    assert answer.ok or new is state
    if answer.ok:
        assert len(answer.record["rolls"]) <= 200
        assert isinstance(answer.record["success"], bool)


@pytest.mark.parametrize(("tag", "said"), [
    ('skill="climb"', "Give the Climb check a dc= or a difficulty="),
    ('skill="climb" dc="999999d999999"', 'dc="999999d999999" is not a whole number. Give'),
    ('skill="climb" dc="' + "9" * 60 + 'x"', 'dc="' + "9" * 39 + '…" is not a whole number'),
    ('skill="climb" difficulty="Impossible"',
     'difficulty="Impossible" is not a step of the ladder (Easy, Hard). Give'),
])
def test_oq_chk_16_missing_difficulty_names_the_value_it_ignored(tag: str, said: str) -> None:
    """OQ-CHK-10/16: a dc= that is not a whole number, or a difficulty= that is not a step,
    is ignored as if absent; the refusal says which value was ignored."""
    state, new, _, answer = _one("sum-2d6", tag)
    assert (answer.ok, answer.reason, new is state) == (False, "missing-difficulty", True)
    assert said in answer.text


# --- what models write (issue 28) -----------------------------------------------------------------

def test_chk_tag_20_a_written_result_is_not_used_and_the_gm_is_told_what_to_narrate() -> None:
    """CHK-TAG-20: the engine rolls; the answer names the GM's own result and the real one."""
    _, _, plain, plain_answer = _one("sum-2d6", 'skill="climb" dc="9"')
    _, _, record, answer = _one(
        "sum-2d6", 'skill="climb" dc="9" rolls="11" total="14" result="failure"')
    assert record == plain and answer.ok
    assert answer.text == ('Ada: Climb. You wrote result="failure"; the engine rolled '
                           "2d6+6 → 5+6+6 = 17 vs 9: Critical success. "
                           "Narrate the critical success.")
    assert plain_answer.text == "Ada: Climb 2d6+6 → 5+6+6 = 17 vs 9: Critical success."
    assert 'ignored "result": the engine works that out itself' in answer.notes
    dice_only = _one("sum-2d6", 'skill="climb" dc="9" rolls="6,6"')[3]
    assert dice_only.text.startswith('Ada: Climb. You wrote rolls="6,6"; the engine rolled ')


def test_chk_tag_20_a_written_result_on_a_refused_check_changes_nothing() -> None:
    state, new, _, answer = _one("sum-2d6", 'skill="climb" result="success"')
    assert (answer.ok, answer.reason, new is state) == (False, "missing-difficulty", True)


@pytest.mark.parametrize("dc", ["15 (hard)", " 15 hard", "15, a hard climb", "+15(hard)",
                                "hard 15", "15x", "DC 15", "difficulty: 15"])
def test_oq_chk_16_the_one_whole_number_of_a_dc_is_the_dc_and_noted(dc: str) -> None:
    """Issues 28 and 39: a dc= holding one whole number, wherever its label sits, is that
    number; the note names what was read, and nothing else changes."""
    _, _, plain, _ = _one("sum-2d6", 'skill="climb" dc="15"')
    _, _, record, answer = _one("sum-2d6", f'skill="climb" dc="{dc}"')
    assert record == plain and record["dc"] == 15
    assert answer.notes == (f'read dc="{dc.strip()}" as {"+15" if "+" in dc else "15"}',)


@pytest.mark.parametrize("dc", ["1234567 hard", "fifteen", "15 or 16", "d20", "1.5"])
def test_oq_chk_16_a_dc_with_no_one_whole_number_is_still_ignored(dc: str) -> None:
    state, new, _, answer = _one("sum-2d6", f'skill="climb" dc="{dc}"')
    assert (answer.ok, answer.reason, new is state) == (False, "missing-difficulty", True)


@pytest.mark.parametrize("written", [
    'skill="climb" dc="3" mode="with advantage"',
    'skill="climb" dc="3" advantage',  # a bare flag is mode= (tags.lark POSITIONAL)
    "skill=climb dc=3 with advantage",  # a bare number stops before its trailing prose
    'skill="climb" dc="3" mode="Advantage"',
])
def test_chk_sum_3_advantage_as_models_write_it(written: str) -> None:
    """ITM-CHK-5 / CHK-SUM-3 with issue 28: each spelling rolls as mode="advantage" does."""
    asked = _one("sum-2d6", 'skill="climb" dc="3" mode="advantage"')[2]
    _, _, record, answer = _one("sum-2d6", written)
    assert record == asked and len(record["rolls"]) == 4
    assert answer.notes == ()


def test_chk_sum_3_a_mode_that_is_no_mode_is_noted_and_rolls_once() -> None:
    plain = _one("sum-2d6", 'skill="climb" dc="3"')[2]
    _, _, record, answer = _one("sum-2d6", 'skill="climb" dc="3" mode="hard"')
    assert record == plain
    assert answer.notes == ('ignored mode="hard": a check takes mode="advantage" or '
                            'mode="disadvantage"',)


def test_an_answer_part_carries_success_and_the_tier_and_nothing_else_of_the_record() -> None:
    """Issue 28: compact answer parts; ``every_answer_attr`` still has the whole record."""
    from engine import answer_attrs, every_answer_attr

    _, _, record, answer = _one("sum-2d6", 'skill="climb" dc="9"')
    assert answer_attrs(answer) == [
        ("ok", "true"), ("text", "Ada: Climb 2d6+6 → 5+6+6 = 17 vs 9: Critical success."),
        ("success", "true"), ("outcome", "Critical success")]
    full = dict(every_answer_attr(answer))
    assert full["rolls"] == "5,6" and set(full) == {"ok", "text", *(k.lower() for k in record)}


def test_a_long_dc_with_trailing_words_is_read_in_linear_time() -> None:
    """Nothing a model writes makes the engine work without bound: a leading number
    followed by a long run of white space and words is read at once."""
    _, _, record, answer = _one("sum-2d6", 'skill="climb" dc="9' + " " * 50_000 + 'x y"')
    assert record["dc"] == 9 and answer.notes[0].endswith("…\" as 9")
