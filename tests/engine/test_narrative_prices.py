"""Narrative fights, the rest of issue 26: the permanent prices of pushing past the limit
(spec/combat.md B.7, D100-OVER-1/2), world rank names and a damage formula that reads the
sheet (D100-RANK-3, D100-DMG-1), on Harrow Vale with a ``combat.narrative`` block (Resolve,
most 4, is the stamina pool; Ada has 3, Bram 4; Grit 10 is health)."""

from __future__ import annotations

import copy

import pytest
from helpers import answer, fixture_json, hero

from engine import load_ruleset, start_state
from engine.rules.state import State
from engine.text.fight.block import combat_block
from engine.text.prompt import sheet_block


def harrow_with(**narrative: object):
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": narrative}
    document["sheet"]["fields"].append({"id": "rank", "label": "Rank", "type": "text"})
    return load_ruleset(document)


STAMINA = harrow_with(stamina="resolve")
OGRE = '[combat: op="start" foe="Ogre" tier="6"]'


def fighting(game=STAMINA, resolve: int = 3, **changes: object) -> State:
    state, answers = answer(game, start_state(game, fixture_json("parties/harrow.json")), OGRE)
    assert all(a.ok for a in answers)
    ada = state.characters[0]
    return state.with_character(0, ada.model_copy(update={
        "pools": {**ada.pools, "resolve": resolve}, **changes}))


def push(effort: str, state: State, game=STAMINA) -> tuple[State, dict]:
    after, answers = answer(game, state, f'[attack: who="Ada" target="Ogre" effort="{effort}" '
                            'push="yes"]', (0, 1))
    assert answers[0].ok
    return after, answers[0].record | {"text": answers[0].text}


# --- D100-OVER-1: rupture, grave injury, far over ------------------------------------------

def test_d100_over_1_a_rupture_takes_a_fifth_of_the_pools_maximum_for_good() -> None:
    # Ada (C) can reach D with 3 of 4; cripple (C) is one rank over: a rupture
    after, record = push("cripple", fighting())
    assert (record["overexertion"], record["cost"], record["max"], record["maxLost"]) == (
        "rupture", 3, 3, 1)
    assert "rupture, resolve max 4 → 3 for good" in record["text"]
    ada = hero(after, "Ada")
    assert ada.lost == {"resolve": 1} and ada.pools["resolve"] == 0
    assert after.to_json()["characters"][0]["lost"] == {"resolve": 1}
    ended, _ = answer(STAMINA, after, '[combat: op="end" outcome="truce"]', (0, 2))
    assert ended.encounter is None and hero(ended, "Ada").lost == {"resolve": 1}  # it stays
    assert "Resolve 0/3" in sheet_block(STAMINA, ended)  # shown with the lower maximum


def test_d100_over_1_a_grave_injury_halves_the_maximum_and_leaves_a_scar() -> None:
    after, record = push("massacre", fighting())  # B: two ranks over
    assert (record["overexertion"], record["max"], record["maxLost"], record["scar"]) == (
        "grave", 2, 2, "scarred")
    ada = hero(after, "Ada")
    assert ada.lost == {"resolve": 2} and "scarred" in ada.conditions
    assert "scarred" in sheet_block(STAMINA, after)


def test_d100_over_1_prices_add_up_and_read_the_lowered_maximum() -> None:
    after, _ = push("cripple", fighting())  # 4 → 3
    again = after.with_character(0, hero(after, "Ada").model_copy(update={
        "pools": {**hero(after, "Ada").pools, "resolve": 1}}))
    # at 1 of 3, Ada reaches D (a tenth of 3 rounds to 0); massacre is two over: grave
    later, answers = answer(STAMINA, again, '[attack: who="Ada" target="Ogre" '
                            'effort="massacre" push="yes"]', (0, 2))
    record = answers[0].record
    assert (record["overexertion"], record["max"], record["maxLost"]) == ("grave", 1, 2)
    assert hero(later, "Ada").lost == {"resolve": 3}


def test_d100_over_1_far_over_the_hero_collapses_bleeding_out_and_momentum_sinks() -> None:
    after, record = push("siege", fighting())  # A: three ranks over
    assert record["overexertion"] == "far" and record["collapsed"] is True
    assert "down:Ada" in record["events"] and "Ada collapses, bleeding out." in record["text"]
    assert hero(after, "Ada").pools["health"] == 0 and hero(after, "Ada").lost == {}
    # D100-MOM-4: the ally down, after the blow's own grade
    assert after.encounter.momentum["party"] == record["momentum"] - 3
    assert after.encounter is not None  # Bram still stands


def test_d100_over_1_far_over_the_last_hero_standing_loses_the_fight() -> None:
    state = fighting()
    bram = hero(state, "Bram the Quiet")
    state = state.with_character(1, bram.model_copy(update={"pools": {**bram.pools,
                                                                      "health": 0}}))
    after, record = push("siege", state)
    assert record["events"][-2:] == ["down:Ada", "end:defeat"]
    assert after.encounter is None and "The fight is lost." in record["text"]


def test_d100_over_2_without_push_there_is_no_price() -> None:
    after, answers = answer(STAMINA, fighting(), '[attack: who="Ada" target="Ogre" '
                            'effort="siege"]', (0, 1))
    assert "overexertion" not in answers[0].record and answers[0].record["scaledTo"] == "D"
    assert hero(after, "Ada").lost == {} and hero(after, "Ada").pools["health"] == 10


def test_oq_d100_8_the_thresholds_and_shares_are_the_worlds_keys() -> None:
    game = harrow_with(stamina="resolve", overexertion={
        "rupture": 1, "grave": 3, "far": 4, "ruptureKeeps": 0.5, "scar": "marked"})
    _, record = push("massacre", fighting(game), game)  # two over: still a rupture here
    assert (record["overexertion"], record["max"]) == ("rupture", 2)
    after, record = push("siege", fighting(game), game)  # three over: grave
    assert record["overexertion"] == "grave" and "marked" in hero(after, "Ada").conditions


def test_a_swipe_pays_the_same_price() -> None:
    one, first = push("massacre", fighting())
    two, second = push("massacre", fighting())
    assert first == second and one.to_json() == two.to_json()


# --- D100-RANK-3 world rank names, D100-DMG-1 a damage formula on the sheet -----------------

def test_d100_rank_3_a_worlds_rank_names_in_answers_record_and_block() -> None:
    game = harrow_with(ranks={"C": "Copper", "B": "Bronze", "S": "Star"})
    state, answers = answer(game, start_state(game, fixture_json("parties/harrow.json")),
                            '[combat: op="start" foe="Wyrm" rank="star"]')
    assert state.encounter.combatants[-1].rank == "S"
    assert [o["rank"] for o in answers[0].record["order"]] == ["Copper", "Copper", "Star"]
    assert answers[0].record["foes"][0]["rank"] == "Star"
    block = combat_block(game, state)
    assert "Wyrm (foe, rank Star)" in block and "Ada (hero, rank Copper)" in block
    _, answers = answer(game, state, '[attack: who="Ada" target="Wyrm"]', (0, 1))
    # C against S is a 30-point gap: nothing meaningful (D100-RANK-5/7)
    assert answers[0].record["gap"] == "Cannot deal meaningful damage"
    assert answers[0].record["damage"] == 0


@pytest.mark.parametrize("level", [1, 4])
def test_d100_dmg_1_the_damage_formula_reads_the_attackers_sheet(level: int) -> None:
    game = harrow_with(damage="5 + 2 * @level")
    party = fixture_json("parties/harrow.json")
    party["characters"][0].setdefault("fields", {})["level"] = level
    state, _ = answer(game, start_state(game, party), OGRE)
    _, answers = answer(game, state, '[attack: who="Ada" target="Ogre"]', (0, 1))
    record = answers[0].record
    assert record["blow"] == {"num": 5 + 2 * level, "den": 1}
    from engine.rules.fight.narrative import MULTIPLIERS, half_up
    assert record["damage"] == half_up((5 + 2 * level) * MULTIPLIERS[record["grade"]])
