"""Conditions in a formula fight (spec/combat.md A.6: CMB-MOD-1/2, CMB-COND-1..6, CMB-TYPE-2,
OQ-CMB-8; spec/items.md ITM-DEF-3, ITM-CHK-5/6; DESIGN.md "Combat"):
``[combat: op="condition"]``, what conditions do to an attack, who cannot act, and the end of
a round, on fixtures/rulesets/skirmish.json (d20 rolled twice for advantage, naturals on both
ends; prone per CMB-COND-1, paralyzed per CMB-COND-2)."""

from __future__ import annotations

import copy
import json
from collections import Counter
from fractions import Fraction

import pytest
from helpers import answer, fixture_json, hero, one
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.actions.checks.sum import resolve
from engine.actions.fight.encounter import cannot_act
from engine.dice import Stream
from engine.rules import reasons
from engine.rules.checks.read import CheckRead
from engine.rules.fight.conditions import attack_edge
from engine.rules.sheet import SheetView
from engine.rules.state import FightCondition, State, plain_canonical
from engine.ruleset.resolution import SumResolution

DOCUMENT = fixture_json("rulesets/skirmish.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, fixture_json("parties/skirmish.json"))
TWO_GOBLINS = '[combat: op="start" foe="Goblin" role="standard" tier="1" count="2"]'
BRANNOC_NEAR = '[attack: target="Goblin 1"]'


def _thrown() -> dict:
    """skirmish with Brannoc's longsword thrown as well (a reach and a range, ITM-WPN-17), so
    he can strike far: a weapon without a range reaches only near (ITM-WPN-18)."""
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["distance"] = {"unit": "paces"}
    document["catalogs"][0]["entries"][0]["item"]["attack"].update(
        {"reach": 1, "range": {"normal": 6, "long": 20}})
    return document


FAR = load_ruleset(_thrown())


def fighting(*tags: str, game=GAME) -> State:
    """Two goblins and the party in a fight, after ``tags`` (no round has passed)."""
    state, answers = answer(game, START, TWO_GOBLINS)
    for turn, tag in enumerate(tags, 1):
        state, answers = answer(game, state, tag, (0, turn))
        assert answers[0].ok, answers[0].text
    return state


def records(state: State, text: str, turns: range, game=GAME):
    for turn in turns:
        yield answer(game, state, text, (1, turn))[1][0].record


def kept(record: dict) -> int:
    """The natural the attack kept (the last die when only one was rolled)."""
    return record["total"] - record["modifier"]


# --- CMB-COND-1: prone -----------------------------------------------------------------------

def test_cmb_cond_1_prone_gives_its_bearer_disadvantage_on_its_own_attacks() -> None:
    state = fighting('[combat: op="condition" who="Brannoc" add="prone"]')
    assert hero(state, "Brannoc").conditions == ("prone",)  # checks read the sheet
    for record in records(state, BRANNOC_NEAR, range(60)):
        assert record["affectedBy"] == ["Prone: disadvantage"]  # CMB-MOD-2
        assert len(record["rolls"]) == 2 and kept(record) == min(record["rolls"])


@pytest.mark.parametrize(("reach", "pick", "chip"), [
    ("near", max, "Prone (near): advantage"), ("far", min, "Prone (far): disadvantage")])
def test_cmb_cond_1_attacks_against_a_prone_target_by_reach(reach, pick, chip) -> None:
    state = fighting('[combat: op="condition" who="Goblin 1" add="Prone"]', game=FAR)
    text = f'[attack: target="Goblin 1" range="{reach}"]'
    for record in records(state, text, range(60), FAR):
        assert record["affectedBy"] == [chip] and record["range"] == reach
        assert len(record["rolls"]) == 2 and kept(record) == pick(record["rolls"])


def test_itm_chk_5_an_advantage_and_a_disadvantage_cancel_into_one_die() -> None:
    state = fighting('[combat: op="condition" who="Brannoc" add="prone"]',
                     '[combat: op="condition" who="Goblin 1" add="prone"]')
    _, answers = answer(GAME, state, BRANNOC_NEAR, (1, 0))
    record = answers[0].record
    assert record["affectedBy"] == ["Prone: disadvantage", "Prone (near): advantage"]
    assert len(record["rolls"]) == 1
    assert answers[0].text.endswith(
        "Affected by: Prone: disadvantage · Prone (near): advantage.")


def test_oq_cmb_8_edges_combine_by_the_advantage_rule_every_check_follows() -> None:
    """ITM-CHK-5: however many of each, any of both cancel; ITM-CHK-6: a ruleset that never
    rolls twice leans nowhere, though the record still says what was read."""
    assert attack_edge(GAME, (), ("prone",), "near").lean == 1
    assert attack_edge(GAME, ("prone",), ("prone", "paralyzed"), "near").lean == 0
    assert attack_edge(GAME, ("prone",), (), "far").lean == -1
    document = copy.deepcopy(DOCUMENT)
    document["resolution"]["advantage"] = False
    once = attack_edge(load_ruleset(document), (), ("prone",), "near")
    assert once.lean == 0 and once.affected_by == ("Prone (near): advantage",)


def test_cmb_mod_1_exact_hit_rate_with_advantage_against_defence_15() -> None:
    """d20 + 5 against 15, rolled twice keeping the higher (a prone target attacked from near):
    20,400 draws through the engine's own resolution against the enumeration of all 400 pairs
    (critical: the kept die is a 20; a miss: a natural 1 or a total under 15)."""
    edge = attack_edge(GAME, (), ("prone",), "near")
    assert edge.lean == 1
    res = GAME.ruleset.resolution
    assert isinstance(res, SumResolution)
    view = SheetView(GAME, START.characters[0], START)
    read = CheckRead(who="Brannoc", kind="skill", ident="attack", label="Attack",
                     attrs={"dc": "15"}, view=view, ability=None, ability_part=5, rank=0,
                     own_bonus=0, lean=edge.lean)
    enumerated: Counter[str] = Counter()
    for first in range(1, 21):
        for second in range(1, 21):
            natural = max(first, second)
            enumerated["critical" if natural == 20 else "miss" if natural == 1
                       else "hit" if natural + 5 >= 15 else "miss"] += Fraction(1, 400)
    # a miss: both under 10 (81 pairs); a critical: a 20 in either (400 - 19²)
    assert enumerated == {"critical": Fraction(39, 400), "hit": Fraction(280, 400),
                          "miss": Fraction(81, 400)}
    dice = Stream("chi", (0,), "attack")
    draws = 20_400
    seen: Counter[str] = Counter()
    for _ in range(draws):
        rolled = resolve(res, read, dice)
        assert rolled is not None
        seen["critical" if rolled.critical == "success" else "miss"
             if rolled.critical == "failure" else "hit" if rolled.success else "miss"] += 1
    kinds = ["critical", "hit", "miss"]
    expected = [float(enumerated[k] * draws) for k in kinds]
    assert chisquare([seen[k] for k in kinds], expected).pvalue > 1e-4


# --- CMB-COND-2, CMB-TYPE-2: paralyzed ---------------------------------------------------------

def test_cmb_type_2_a_paralysed_hero_cannot_act_and_nothing_changes() -> None:
    state = fighting('[combat: op="condition" who="Brannoc" add="paralyzed"]')
    after, answers = answer(GAME, state, BRANNOC_NEAR, (1, 0))
    assert answers[0].reason == reasons.CANNOT_ACT and after is state
    assert answers[0].text == "Brannoc cannot act (Paralyzed); nothing was done."


def test_cmb_type_2_a_paralysed_foe_cannot_act_either() -> None:
    state = fighting('[combat: op="condition" who="Goblin 2" add="paralyzed"]')
    assert state.encounter is not None
    refusal = cannot_act(GAME, state, state.encounter, state.encounter.find("Goblin 2"))
    assert refusal is not None and refusal.reason == reasons.CANNOT_ACT
    assert cannot_act(GAME, state, state.encounter, state.encounter.find("Goblin 1")) is None


def test_cmb_cond_2_near_hits_on_a_paralysed_target_are_critical() -> None:
    state = fighting('[combat: op="condition" who="Goblin 1" add="paralyzed"]', game=FAR)
    results = Counter()
    for record in records(state, '[attack: target="Goblin 1" range="near"]', range(80), FAR):
        assert record["affectedBy"] == ["Paralyzed: advantage", "Paralyzed (near): critical"]
        natural = kept(record)
        hit = natural == 20 or (natural != 1 and record["total"] >= 13)
        assert record["result"] == ("critical" if hit else "miss")
        if hit:  # CMB-ATK-5: a critical doubles the dice
            assert len(record["damageRolls"][0]) == 2
        results[record["result"]] += 1
    assert results["critical"] and results["miss"]
    far = Counter(r["result"] for r in records(
        state, '[attack: target="Goblin 1" range="far"]', range(80), FAR))
    assert far["hit"]  # from far only the advantage holds


# --- CMB-COND-3..6: durations and saves ------------------------------------------------------

def test_cmb_cond_6_rounds_count_down_for_foes_and_heroes_alike_and_end_at_0() -> None:
    """CMB-TURN-A6: durations count down after every exchange (the round's attacks)."""
    state = fighting('[combat: op="condition" who="Goblin 1" add="prone" rounds="2"]',
                     '[combat: op="condition" who="Ada" add="prone" rounds="1"]')
    assert one(state, "Goblin 1").conditions == (FightCondition(name="prone", rounds=2),)
    quiet, _ = answer(GAME, state, '[combat: op="join" foe="Rat" role="minion"]', (1, 0))
    assert one(quiet, "Goblin 1").conditions[0].rounds == 2  # no attack: no time passes
    state, answers = answer(GAME, state, BRANNOC_NEAR, (2, 0))
    assert answers[0].record["roundEnd"] == [
        {"who": "Goblin 1", "condition": "prone", "rounds": 1},
        {"who": "Ada", "condition": "prone", "rounds": 0, "ended": True}]
    assert "End of round: Goblin 1 is Prone 1 more round; Ada is no longer Prone." \
        in answers[0].text
    assert hero(state, "Ada").conditions == () and one(state, "Ada").conditions == ()
    state, answers = answer(GAME, state, '[attack: target="Goblin 2"]', (3, 0))
    assert answers[0].record["roundEnd"] == [
        {"who": "Goblin 1", "condition": "prone", "rounds": 0, "ended": True}]
    assert one(state, "Goblin 1").conditions == ()
    _, answers = answer(GAME, state, '[attack: target="Goblin 2"]', (4, 0))
    assert "roundEnd" not in answers[0].record  # nothing left to count


def test_the_round_ends_once_after_all_its_attacks_in_the_last_one() -> None:
    state = fighting('[combat: op="condition" who="Goblin 1" add="prone" rounds="3"]')
    after, answers = answer(GAME, state, '[attack: target="Goblin 1"] '
                            '[attack: who="Ada" target="Goblin 1"]', (1, 0))
    assert "roundEnd" not in answers[0].record
    assert answers[1].record["roundEnd"] == [
        {"who": "Goblin 1", "condition": "prone", "rounds": 2}]
    assert answers[0].record["affectedBy"] == answers[1].record["affectedBy"]  # both in the round
    again, answers = answer(GAME, after, '[attack: target="Goblin 2"]', (1, 0))  # same reply
    assert answers[0].reason == reasons.NO_TIME and again is after


def test_cmb_cond_3_4_5_a_heros_save_at_the_dc_fixed_when_applied_ends_it() -> None:
    """Ada's Reflex: d20 + 2 (Dexterity 14) against the DC 13 written when applied."""
    state = fighting('[combat: op="condition" who="Ada" add="paralyzed" save="Reflex" '
                     'dc="13"]')
    assert one(state, "Ada").conditions == (
        FightCondition(name="paralyzed", save="reflex", dc=13),)
    outcomes = Counter()
    for turn in range(60):
        after, answers = answer(GAME, state, BRANNOC_NEAR, (1, turn))
        row = answers[0].record["roundEnd"][0]
        natural = row["rolls"][0]
        assert (row["who"], row["condition"], row["save"], row["dc"]) == (
            "Ada", "paralyzed", "reflex", 13)
        assert row["total"] == natural + 2
        saved = natural == 20 or (natural != 1 and row["total"] >= 13)
        assert row["saved"] is saved and row.get("ended", False) is saved
        assert ("paralyzed" in hero(after, "Ada").conditions) is not saved
        outcomes[saved] += 1
    assert outcomes[True] and outcomes[False]


def test_cmb_cond_3_a_foe_saves_with_its_templates_modifier_and_keeps_counting_down() -> None:
    """Goblin 1 (tier 1: modifier 1) saves on Dexterity at DC 12; failed, its rounds go on."""
    state = fighting('[combat: op="condition" who="Goblin 1" add="prone" rounds="3" '
                     'save="dex" dc="12"]')
    outcomes = Counter()
    for record in records(state, '[attack: target="Goblin 2"]', range(60)):
        row = record["roundEnd"][0]
        natural = row["rolls"][0]
        saved = natural == 20 or (natural != 1 and natural + 1 >= 12)
        assert row["total"] == natural + 1 and row["saved"] is saved
        assert row.get("rounds") == (None if saved else 2)
        outcomes[saved] += 1
    assert outcomes[True] and outcomes[False]


def test_saves_roll_the_same_on_a_swipe_and_in_any_order_of_the_reply() -> None:
    state = fighting('[combat: op="condition" who="Ada" add="paralyzed" save="reflex" '
                     'dc="15"]',
                     '[combat: op="condition" who="Goblin 1" add="prone" save="dex" dc="12"]')
    brannoc, ada = '[attack: target="Goblin 1"]', '[attack: target="Goblin 2" who="Ada"]'
    first, one_way = answer(GAME, state, f"{brannoc} {ada}", (5, 0))
    second, again = answer(GAME, state, f"{brannoc} {ada}", (5, 0))
    assert first.canonical() == second.canonical() and one_way == again
    assert one_way[1].reason == reasons.CANNOT_ACT  # told in the last attack answered
    ends = one_way[0].record["roundEnd"]
    assert [row["who"] for row in ends] == [c.name for c in state.encounter.combatants
                                            if c.name in ("Ada", "Goblin 1")]
    reworded, other = answer(GAME, state, f"Ada tries. {ada} Brannoc swings. {brannoc}", (5, 0))
    assert other[1].record == one_way[0].record and reworded.canonical() == first.canonical()


# --- op="condition": remove=, repairs, refusals ------------------------------------------------

def test_remove_ends_a_condition_on_the_sheet_and_in_the_fight() -> None:
    state = fighting('[combat: op="condition" who="Ada" add="prone" rounds="4"]')
    state, answers = answer(GAME, state, '[combat: op="condition" who="ada" remove="PRONE"]',
                            (0, 9))
    assert answers[0].ok and answers[0].text == "Ada is no longer Prone."
    assert answers[0].record == {"who": "Ada", "removed": "prone"}
    assert hero(state, "Ada").conditions == () and one(state, "Ada").conditions == ()


def test_who_defaults_to_the_player_and_the_record_says_what_was_applied() -> None:
    state, answers = answer(GAME, fighting(), '[combat: op="condition" add="prone" '
                            'rounds="2" save="dex" dc="11"]', (0, 5))
    assert answers[0].record == {"who": "Brannoc", "added": "prone", "rounds": 2,
                                 "save": "dex", "dc": 11}
    assert answers[0].text == ("Brannoc is Prone for 2 rounds, or until it saves (Dexterity "
                               "DC 11) at the end of a round.")
    assert hero(state, "Brannoc").conditions == ("prone",)
    assert one(state, "Brannoc").conditions == (
        FightCondition(name="prone", rounds=2, save="dex", dc=11),)


@pytest.mark.parametrize(("attrs", "rounds", "note"), [
    ('rounds="-3"', 1, 'rounds="-3" was held to 1 (1 to 100)'),
    ('rounds="1000"', 100, 'rounds="1000" was held to 100 (1 to 100)'),
    ('rounds="two"', None, 'rounds="two" is not a whole number: it lasts until removed'),
    ('dc="12"', None, 'ignored dc="12": there is no save= to roll against it'),
])
def test_bad_rounds_and_a_dc_without_a_save_are_repaired_with_a_note(attrs, rounds,
                                                                     note) -> None:
    state, answers = answer(GAME, fighting(), f'[combat: op="condition" who="Goblin 1" '
                            f'add="prone" {attrs}]', (0, 5))
    assert answers[0].ok and note in answers[0].notes
    assert one(state, "Goblin 1").conditions == (FightCondition(name="prone", rounds=rounds),)


def test_applying_a_condition_again_sets_its_duration_anew() -> None:
    state = fighting('[combat: op="condition" who="Goblin 1" add="prone" rounds="1"]')
    state, answers = answer(GAME, state, '[combat: op="condition" who="Goblin 1" add="prone" '
                            'rounds="5"]', (0, 7))
    assert one(state, "Goblin 1").conditions == (FightCondition(name="prone", rounds=5),)
    assert answers[0].notes == ("Goblin 1 was already Prone: it lasts as this tag says from "
                                "now on",)


def _warded():
    """skirmish with a Warded condition that grants immunity to Prone (ITM-DEF-1)."""
    document = copy.deepcopy(DOCUMENT)
    document["conditions"].append({"id": "warded", "label": "Warded"})
    document["combat"]["conditions"].append({"condition": "warded",
                                             "conditionImmunities": ["prone"]})
    return load_ruleset(document)


WARDED = _warded()


def test_itm_def_3_a_new_immunity_ends_the_condition_and_keeps_it_off() -> None:
    state = fighting('[combat: op="condition" who="Ada" add="prone" rounds="3"]', game=WARDED)
    state, answers = answer(WARDED, state, '[combat: op="condition" who="Ada" add="warded"]',
                            (0, 8))
    assert answers[0].record["ended"] == ["prone"]
    assert answers[0].text == "Ada is Warded until removed. It ends Prone."
    assert hero(state, "Ada").conditions == ("warded",)
    after, refused = answer(WARDED, state, '[combat: op="condition" who="Ada" add="prone"]',
                            (0, 9))
    assert refused[0].reason == reasons.CONDITION_IMMUNE and after is state
    assert refused[0].text == "Ada is immune to Prone (Warded); nothing was done."


IN_A_FIGHT = fighting('[combat: op="condition" who="Goblin 1" add="prone"]')


@pytest.mark.parametrize(("state", "text", "reason"), [
    (START, '[combat: op="condition" add="prone"]', reasons.NO_ENCOUNTER),
    (IN_A_FIGHT, '[combat: op="condition" who="Nobody" add="prone"]', reasons.UNKNOWN_COMBATANT),
    (IN_A_FIGHT, '[combat: op="condition" who="Goblin 1"]', reasons.MISSING_ATTRIBUTE),
    (IN_A_FIGHT, '[combat: op="condition" add="on fire"]', reasons.UNKNOWN_CONDITION),
    (IN_A_FIGHT, '[combat: op="condition" remove="on fire"]', reasons.UNKNOWN_CONDITION),
    (IN_A_FIGHT, '[combat: op="condition" who="Goblin 2" remove="prone"]', reasons.NO_CONDITION),
    (IN_A_FIGHT, '[combat: op="condition" add="prone" save="wis" dc="13"]', reasons.UNKNOWN_SAVE),
    (IN_A_FIGHT, '[combat: op="condition" add="prone" save="dex" dc="abc"]',
     reasons.MISSING_DIFFICULTY),
    (IN_A_FIGHT, '[combat: op="condition" add="prone" save="dex"]', reasons.MISSING_DIFFICULTY),
    # all or nothing: a good remove= does not happen when the add= is refused
    (IN_A_FIGHT, '[combat: op="condition" who="Goblin 1" remove="prone" add="x"]',
     reasons.UNKNOWN_CONDITION),
])
def test_every_refusal_leaves_the_state_unchanged(state, text, reason) -> None:
    after, answers = answer(GAME, state, text, (1, 0))
    assert (answers[0].ok, answers[0].reason) == (False, reason), answers[0].text
    assert after is state


def test_no_combat_where_the_ruleset_turns_fights_off() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["kind"] = "none"
    game = load_ruleset(document)
    after, answers = answer(game, START, '[combat: op="condition" add="prone"]')
    assert answers[0].reason == reasons.NO_COMBAT and after is START


# --- the fight's end and the state -----------------------------------------------------------

def test_a_heros_timed_conditions_end_with_the_fight_and_the_others_stay() -> None:
    state = fighting('[combat: op="condition" who="Ada" add="prone" rounds="3"]',
                     '[combat: op="condition" who="Brannoc" add="paralyzed"]')
    ended, _ = answer(GAME, state, '[combat: op="end" outcome="truce"]', (2, 0))
    assert ended.encounter is None
    assert hero(ended, "Ada").conditions == () and hero(ended, "Brannoc").conditions == (
        "paralyzed",)


def test_the_state_shows_only_what_a_condition_sets_and_reads_back() -> None:
    state = fighting('[combat: op="condition" who="Goblin 1" add="prone" rounds="2"]',
                     '[combat: op="condition" who="Goblin 2" add="paralyzed" save="dex" '
                     'dc="14"]')
    dumped = json.loads(state.canonical())["encounter"]["combatants"]
    by_name = {c["name"]: c.get("conditions") for c in dumped}
    assert by_name["Goblin 1"] == [{"name": "prone", "rounds": 2}]
    assert by_name["Goblin 2"] == [{"name": "paralyzed", "save": "dex", "dc": 14}]
    assert by_name["Ada"] is None  # no conditions: the default, left out
    assert state.canonical() == plain_canonical(state)
    assert State.model_validate(json.loads(state.canonical())) == state
