"""A hero's sheet abilities and spells against foes (spec/combat.md A.11: CMB-ABIL-1..3, 6;
CMB-TURN-17, CMB-TURN-A4; DESIGN.md "Combat" → "Forms for the rest of Part A"):
``[attack: who= use="<entry>" target="A, B"]`` on fixtures/rulesets/skirmish-spells.json."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from fight_spells import DOCUMENT, GAME, PARTY, START, fighting, first
from helpers import answer, hero, one, problems_of
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.actions.fight.abilities import _roll
from engine.rules import reasons
from engine.rules.context import TurnContext
from engine.rules.sheet import SheetView
from engine.rules.state import FightCondition, plain_canonical

FIRE_BOLT = '[attack: who="Ada" use="Fire Bolt" target="Goblin 1"]'
BURNING = '[attack: who="Ada" use="Burning Hands" target="Goblin 1, Goblin 2"]'


def _hit(answers) -> bool:
    return answers[0].ok and answers[0].record["targets"][0]["result"] != "miss"


# --- CMB-ABIL-2: an attack spell ----------------------------------------------------------------

def test_cmb_abil_2_an_attack_spell_rolls_its_own_attack_and_its_own_dice() -> None:
    state = fighting()
    after, answers = first(state, FIRE_BOLT, _hit)
    row = answers[0].record["targets"][0]
    # toHit "@int.mod + 2" read on Ada's sheet (Int 16: +3), added to the attack check's d20
    assert row["modifier"] == 5 and row["total"] == row["rolls"][-1] + 5
    assert (row["defence"] == 13 and row["total"] >= 13) or row["result"] == "critical"
    dice = row["damageRolls"]
    assert len(dice[0]) == (2 if row["result"] == "critical" else 1)  # CMB-ATK-5
    assert all(1 <= face <= 10 for face in dice[0])  # amount 1d10
    assert row["damage"] == sum(dice[0]) and answers[0].record["damageType"] == "fire"
    assert one(after, "Goblin 1").hp == 14 - row["damage"]
    assert answers[0].record["events"][0] == f"damage:Goblin 1:{row['damage']}"  # CMB-CARD-1


def test_cmb_abil_2_a_miss_deals_nothing_and_a_cantrip_costs_nothing() -> None:
    state = fighting()
    after, answers = first(state, FIRE_BOLT, lambda a: not _hit(a))
    assert answers[0].record["targets"][0]["damage"] == 0
    assert one(after, "Goblin 1").hp == 14
    assert "paid" not in answers[0].record and hero(after, "Ada").pools == hero(state, "Ada").pools


# --- CMB-ABIL-3: a save spell -------------------------------------------------------------------

def test_cmb_abil_3_a_save_spell_rolls_damage_once_and_each_target_saves_half() -> None:
    state = fighting()
    seen = set()
    for turn in range(1, 60):
        after, answers = answer(GAME, state, BURNING, (1, turn))
        found = answers[0].record
        assert found["dc"] == 13 and found["save"] == "reflex"  # 10 + @int.mod on Ada's sheet
        assert len(found["damageRolls"]) == 1 and len(found["damageRolls"][0]) == 3  # once
        rolled = found["rolled"]
        for row in found["targets"]:
            # OQ-CMB-14: half (rounded down) on a success, the whole on a failure
            assert row["damage"] == (rolled // 2 if row["saved"] else rolled)
            assert row["saved"] == (row["total"] >= 13 if row["rolls"][-1] not in (1, 20)
                                    else row["rolls"][-1] == 20)
            assert row["total"] == row["rolls"][-1] + 1  # a tier-1 goblin's modifier
            seen.add(row["saved"])
        assert found["paid"] == "slot_1:1" and hero(after, "Ada").pools["slot_1"] == 1
    assert seen == {True, False}


def test_cmb_abil_3_negates_a_saved_spell_applies_nothing_and_a_failed_one_its_condition() \
        -> None:
    state = fighting()
    hold = '[attack: who="Ada" use="Hold Person" target="Goblin 2"]'
    _, saved = first(state, hold, lambda a: a[0].record["targets"][0]["saved"])
    assert "applied" not in saved[0].record["targets"][0]
    after, failed = first(state, hold, lambda a: not a[0].record["targets"][0]["saved"]
                          and not any(r.get("saved") for r in a[0].record.get("roundEnd", [])))
    assert failed[0].record["targets"][0]["applied"] == [
        {"condition": "paralyzed", "rounds": 10, "save": "will", "dc": 13, "by": "Ada"}]
    held = one(after, "Goblin 2").conditions
    # CMB-COND-3/4: saved against each round at the caster's DC, fixed when applied; the
    # end of this round took one of its ten rounds
    assert held == (FightCondition(name="paralyzed", rounds=9, save="will", dc=13, by="Ada"),)


def test_cmb_abil_3_foe_saves_have_the_exact_rate_of_d20_plus_1_against_13() -> None:
    """A tier-1 goblin (modifier +1) saving against DC 13 succeeds on 12..20 (9 in 20; the
    naturals agree), drawn through the same roll the spell makes."""
    view = SheetView(GAME, None, START)
    ctx = TurnContext(START.seed, (1, 1))
    counts = Counter(_roll(GAME, view, "Goblin", "save", "reflex", "Reflex", 1, 13, ctx,
                           f"probe/{n}").success for n in range(20_000))
    expected = [20_000 * 9 / 20, 20_000 * 11 / 20]
    assert chisquare([counts[True], counts[False]], expected).pvalue > 1e-4


# --- CMB-ABIL-6: damage types meet typed defences -------------------------------------------------

def test_cmb_abil_6_fire_meets_a_fire_resisting_foe_halved() -> None:
    state = fighting()
    state, _ = answer(GAME, state, '[combat: op="condition" who="Goblin 1" add="fireproof"]',
                      (0, 1))
    for turn in range(1, 30):
        _, answers = answer(GAME, state, BURNING, (1, turn))
        rows = {r["target"]: r for r in answers[0].record["targets"]}
        rolled = answers[0].record["rolled"]
        full = rolled // 2 if rows["Goblin 1"]["saved"] else rolled
        assert rows["Goblin 1"]["damage"] == full // 2  # ITM-DEF-4: halved, rounded down
        assert rows["Goblin 1"]["affectedBy"] == ["resists fire (Fireproof)"]
        assert "affectedBy" not in rows["Goblin 2"]


# --- CMB-ABIL-1, CMB-TURN-A4: it replaces the first attack; its cost --------------------------------

def test_cmb_abil_1_an_ability_takes_the_place_of_the_actions_first_attack() -> None:
    state = fighting()
    _, answers = answer(GAME, state, FIRE_BOLT + '[attack: who="Ada" target="Goblin 1"]', (1, 1))
    assert answers[0].ok and answers[1].reason == reasons.NO_TIME
    _, answers = answer(GAME, state, '[attack: who="Brannoc" target="Goblin 1"]'
                        '[attack: who="Brannoc" use="Action Surge"]'
                        '[attack: who="Ada" target="Goblin 1"]' + FIRE_BOLT, (1, 1))
    assert answers[2].ok and answers[3].reason == reasons.NO_TIME  # the action is used up
    assert "an ability takes the place of its first attack" in answers[3].text


def test_the_cost_is_paid_from_the_pools_and_refused_when_they_cannot_pay() -> None:
    state = fighting()
    for turn in (1, 2):
        state, answers = answer(GAME, state, BURNING, (1, turn))
        assert answers[0].ok
    assert hero(state, "Ada").pools["slot_1"] == 0
    after, answers = answer(GAME, state, BURNING, (1, 3))
    assert answers[0].reason == reasons.CANNOT_PAY and after is state
    assert "no slot_1 left" in answers[0].text


@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Ada" use="Lightning Bolt" target="Goblin 1"]', reasons.UNKNOWN_ENTRY),
    ('[attack: who="Ada" use="Shield"]', reasons.REACTION_ONLY),
    ('[attack: who="Ada" use="Fire Bolt" target="Goblin 1, Goblin 2"]',
     reasons.TOO_MANY_TARGETS),
    ('[attack: who="Ada" use="Fire Bolt"]', reasons.MISSING_ATTRIBUTE),  # two foes stand
    ('[attack: who="Ada" use="Fire Bolt" target="Ogre"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Ada" use="Fire Bolt" target="Brannoc"]', reasons.UNSUPPORTED),
    # CMB-ABIL-4: a foe uses only its own abilities, and a goblin has none
    ('[attack: who="Goblin 1" use="Fire Bolt" target="Ada"]', reasons.UNKNOWN_ENTRY),
    ('[attack: who="Ada" use="Fire Bolt" target="Goblin 1" action="dash"]',
     reasons.UNKNOWN_BUDGET),
    ('[attack: who="Brannoc" use="Fire Bolt" target="Goblin 1"]', reasons.UNKNOWN_ENTRY),
])
def test_every_refusal_leaves_the_state_unchanged(text, reason) -> None:
    state = fighting()
    after, answers = answer(GAME, state, text, (1, 1))
    assert answers[0].reason == reason, answers[0].text
    assert after is state


def test_down_paralysed_and_out_of_a_fight_are_refused_unchanged() -> None:
    state = fighting()
    paralysed, _ = answer(GAME, state, '[combat: op="condition" who="Ada" add="paralyzed"]',
                          (0, 1))
    after, answers = answer(GAME, paralysed, FIRE_BOLT, (1, 1))
    assert answers[0].reason == reasons.CANNOT_ACT and after is paralysed  # CMB-TYPE-2
    down = state.with_character(0, hero(state, "Ada").model_copy(update={"pools": {"hp": 0}}))
    after, answers = answer(GAME, down, FIRE_BOLT, (1, 1))
    assert answers[0].reason == reasons.DOWNED and after is down
    after, answers = answer(GAME, START, FIRE_BOLT, (1, 1))
    assert answers[0].reason == reasons.NO_ENCOUNTER and after is START
    felled = state.model_copy(update={"encounter": state.encounter.model_copy(update={
        "combatants": tuple(c.model_copy(update={"hp": 0}) if c.name == "Goblin 1" else c
                            for c in state.encounter.combatants)})})
    after, answers = answer(GAME, felled, FIRE_BOLT, (1, 1))
    assert answers[0].reason == reasons.TARGET_DOWN and after is felled


def test_felling_the_last_foe_with_a_spell_wins_the_fight() -> None:
    state = fighting(text='[combat: op="start" foe="Rat" role="minion"]')  # 1 hit point
    after, answers = first(state, '[attack: who="Ada" use="Fire Bolt"]', _hit)
    assert answers[0].record["events"][-2:] == ["felled:Rat", "end:victory"]
    assert after.encounter is None and "The fight is won." in answers[0].text


def test_a_spell_rolls_the_same_on_a_swipe_and_in_any_order_of_the_reply() -> None:
    state = fighting()
    one_way = answer(GAME, state, BURNING + '[attack: who="Goblin 1" target="Brannoc"]', (1, 5))
    other = answer(GAME, state, '[attack: who="Goblin 1" target="Brannoc"] ' + BURNING, (1, 5))
    assert one_way[1][0].record == other[1][1].record
    assert plain_canonical(one_way[0]) == plain_canonical(other[0])


# --- CMB-TURN-17: Action Surge -------------------------------------------------------------------

def test_cmb_turn_17_action_surge_grants_one_more_action_whose_attacks_are_rolled() -> None:
    state = fighting()
    two = '[attack: who="Brannoc" target="Goblin 1"] [attack: who="Brannoc" target="Goblin 1"]'
    _, answers = answer(GAME, state, two, (1, 1))
    assert answers[0].ok and answers[1].reason == reasons.NO_TIME
    after, answers = answer(GAME, state, '[attack: who="Brannoc" use="Action Surge"] ' + two,
                            (1, 1))
    assert [a.ok for a in answers] == [True, True, True]
    assert answers[0].record["granted"] == "action" and answers[0].record["paid"] == "surge:1"
    assert answers[1].record["rolls"] != [] and answers[2].record["rolls"] != []
    assert hero(after, "Brannoc").pools["surge"] == 0
    assert one(after, "Brannoc").granted == ("action",)
    # with the surge spent: refused, and the round has the plain budget
    spent = state.with_character(1, hero(state, "Brannoc").model_copy(
        update={"pools": {"hp": 12, "surge": 0}}))
    _, answers = answer(GAME, spent, '[attack: who="Brannoc" use="Action Surge"] ' + two, (1, 1))
    assert answers[0].reason == reasons.CANNOT_PAY and answers[2].reason == reasons.NO_TIME
    # a new round takes back what was granted in the last one
    later, answers = answer(GAME, after, '[attack: who="Goblin 2" target="Brannoc"]', (1, 2))
    assert answers[0].ok and one(later, "Brannoc").granted == () == one(later, "Brannoc").spent


# --- the ruleset's fight keys are checked at load ---------------------------------------------------

def _entry(index: int, key: str, value) -> object:
    return lambda d: d["catalogs"][1]["entries"][index]["mechanics"].__setitem__(key, value)


@pytest.mark.parametrize(("mutation", "message"), [
    (_entry(2, "cost", [{"pool": "mana", "amount": 1}]),
     '/catalogs/1/entries/2/mechanics/cost/0: unknown pool "mana"'),
    (_entry(3, "applies", [{"condition": "stunned"}]),
     '/catalogs/1/entries/3/mechanics/applies/0/condition: unknown condition "stunned"'),
    (_entry(0, "react", None), "/catalogs/1/entries/0/mechanics/react: a reaction says what "
                               "sets it off: react.on"),
    (_entry(1, "toHit", "@wis.mod"),
     '/catalogs/1/entries/1/mechanics/toHit: unknown reference "@wis.mod"'),
    (_entry(2, "saveDifficulty", None), "/catalogs/1/entries/2/mechanics/saveDifficulty: a save "
                                        "gives its difficulty (the caster's DC)"),
    (_entry(5, "uses", "dash"),
     '/catalogs/1/entries/5/mechanics/uses: "dash" is no turn action, "reaction" or "free"'),
])
def test_fight_keys_that_do_not_fit_the_ruleset_are_load_errors(mutation, message) -> None:
    found = problems_of(DOCUMENT, mutation)
    assert any(message in p for p in found), found


def test_an_entry_chosen_without_fight_keys_is_no_ability() -> None:
    document = copy.deepcopy(DOCUMENT)
    document["catalogs"][1]["entries"][1]["mechanics"] = {"kind": "Spell", "level": 0}
    game = load_ruleset(document)
    state = fighting(start_state(game, PARTY), game=game)
    after, answers = answer(game, state, FIRE_BOLT, (1, 1))
    assert answers[0].reason == reasons.UNKNOWN_ENTRY and after is state


def test_a_sustained_condition_serialises_with_its_sustainer() -> None:
    assert FightCondition(name="paralyzed", by="Ada").model_dump() == {"name": "paralyzed",
                                                                       "by": "Ada"}
