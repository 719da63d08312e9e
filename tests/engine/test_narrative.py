"""Narrative d100 fights (spec/combat.md Part B; DESIGN.md "Narrative combat", issue 26) on
Harrow Vale (fixtures/rulesets/harrow.json: no combat block, heroes' Grit 10), which fights
with the defaults: base 80/65, damage 10, ranks C."""

from __future__ import annotations

import copy

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.narrative import MOMENTUM, MULTIPLIERS, defended, grade_of, half_up
from engine.rules.state import State
from engine.text.fight.block import combat_block

GAME = harrow()
START = harrow_party(GAME)
OGRE = '[combat: op="start" foe="Ogre" tier="6"]'  # 70 hit points: no blow is capped


def fighting(text: str = OGRE, game=GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def harrow_with(**narrative: object):
    """Harrow with a ``combat.narrative`` block and a sheet field ``rank`` (text)."""
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": narrative}
    document["sheet"]["fields"].append({"id": "rank", "label": "Rank", "type": "text"})
    return load_ruleset(document)


def fighter(state: State, name: str):
    assert state.encounter is not None
    return state.encounter.combatants[state.encounter.find(name)]


# --- start, join, ranks ----------------------------------------------------------------------

def test_a_narrative_fight_starts_with_ranks_momentum_and_default_hit_points() -> None:
    state, answers = answer(GAME, START, '[combat: op="start" foe="Ghoul" tier="2" count="2"]')
    encounter = state.encounter
    assert encounter.kind == "narrative" and encounter.momentum == {"party": 0, "foes": 0}
    assert [c.name for c in encounter.combatants] == ["Ada", "Bram the Quiet", "Ghoul 1",
                                                      "Ghoul 2"]
    assert {c.rank for c in encounter.combatants} == {"C"}  # D100-RANK-1, DESIGN.md: C
    assert (fighter(state, "Ghoul 1").hp, fighter(state, "Ghoul 1").hp_max) == (30, 30)
    assert fighter(state, "Ada").hp is None  # a hero's hit points stay in its Grit pool
    assert answers[0].record["events"] == ["start"]
    assert state.to_json()["encounter"]["momentum"] == {"party": 0, "foes": 0}


@pytest.mark.parametrize(("written", "rank", "note"), [
    ("B", "B", None), ("ss", "SS", None), ("XX", "XX", None),  # D100-RANK-2: a being may be XX
    ("Z", "C", 'rank="Z" is no rank (D, C, B, A, S, SS, SSS, X, XX): the player\'s, C, was '
     "used")])
def test_d100_rank_a_foes_rank_from_rank_else_the_players(written, rank, note) -> None:
    state, answers = answer(GAME, START, f'[combat: op="start" foe="Wisp" rank="{written}"]')
    assert fighter(state, "Wisp").rank == rank
    assert (note in answers[0].notes) if note else not answers[0].notes


def test_d100_rank_2_3_a_heros_rank_field_a_worlds_names_and_no_x_for_heroes() -> None:
    game = harrow_with(ranks={"C": "Copper", "B": "Bronze"})
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["fields"]["rank"] = "Bronze"
    party["characters"][1]["fields"] = {"rank": "X"}
    state, answers = answer(game, start_state(game, party),
                            '[combat: op="start" foe="Wisp" rank="copper"]')
    assert [c.rank for c in state.encounter.combatants] == ["B", "SSS", "C"]
    assert any("belongs to beings of the world itself" in n for n in answers[0].notes)
    assert "Ada Bronze" in answers[0].text and "Wisp Copper" in answers[0].text


def test_d100_party_9_count_fitting_scales_with_the_standing_heroes() -> None:
    state = fighting('[combat: op="start" foe="Rat" count="fitting"]')
    assert [c.name for c in state.encounter.combatants if c.side == "foes"] == ["Rat 1", "Rat 2"]


def test_a_late_foe_and_a_late_hero_join() -> None:
    state = fighting()
    state, answers = answer(GAME, state, '[combat: op="join" foe="Imp" rank="D" tier="1"]',
                            (0, 1))
    assert answers[0].ok and fighter(state, "Imp").rank == "D" and fighter(state, "Imp").hp == 20
    _, again = answer(GAME, state, '[combat: op="join" foe="Ada"]', (0, 2))
    assert again[0].reason == reasons.UNKNOWN_COMBATANT


# --- a hero's graded strike -----------------------------------------------------------------

def test_d100_atk_a3_a8_the_chance_its_parts_the_roll_the_grade_and_the_damage() -> None:
    state = fighting()
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre" tactics="good" '
                            'risk="aggressive" aim="hard"]', (0, 1))
    record = answers[0].record
    parts = {p["term"]: p["value"] for p in record["parts"]}
    assert parts == {"base": 80, "tactics": 5, "risk": -8, "aim": -8, "gap": 0, "momentum": 0,
                     "fatigue": 0}
    assert record["chance"] == 69 == sum(parts.values())
    assert 1 <= record["roll"] <= 100 and record["margin"] == 69 - record["roll"]
    assert record["grade"] == grade_of(record["margin"])
    assert record["damage"] == half_up(10 * MULTIPLIERS[record["grade"]])  # D100-ATK-A6
    assert record["hp"] == 70 - record["damage"] == fighter(after, "Ogre").hp
    assert record["gap"] == "Even" and record["momentum"] == MOMENTUM[record["grade"]]
    assert answers[0].text.startswith("Ada → Ogre: 69% (80, tactics +5, risk -8, aim -8), d100 ")


def _turn_with(grade: str, text: str, state: State) -> tuple[int, ...]:
    """A reply position whose dice give ``grade`` (the dice are fixed by the position)."""
    for n in range(1, 600):
        _, answers = answer(GAME, state, text, (0, n))
        if answers[0].record["grade"] == grade:
            return (0, n)
    raise AssertionError(f"no {grade} in 600 replies")


@pytest.mark.parametrize("grade", ["critical", "clean", "solid", "glancing", "blocked", "miss",
                                   "backfire"])
def test_d100_mom_2_momentum_after_each_grade(grade) -> None:
    """Reckless and extreme (45 %) so every grade can come up."""
    state = fighting()
    text = '[attack: who="Ada" target="Ogre" risk="reckless" aim="extreme"]'
    after, answers = answer(GAME, state, text, _turn_with(grade, text, state))
    record = answers[0].record
    assert record["momentumChange"] == MOMENTUM[grade]
    assert after.encounter.momentum == {"party": MOMENTUM[grade], "foes": 0}
    assert record["damage"] == half_up(10 * MULTIPLIERS[grade])  # D100-GRADE-2/3
    assert answers[0].text.split(" · ")[1].split(",")[0] == (
        "WHIFF" if grade == "miss" else grade.upper())  # D100-GRADE-6


def test_d100_mom_6_momentum_fades_each_round_after_the_first_and_counts_at_once() -> None:
    state = fighting()
    encounter = state.encounter.model_copy(update={"momentum": {"party": 3, "foes": -2},
                                                   "round": 1, "turn": (0, 1)})
    state = state.model_copy(update={"encounter": encounter})
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre"] '
                            '[attack: who="Bram the Quiet" target="Ogre"]', (0, 2))
    first, second = answers[0].record, answers[1].record
    assert {p["term"]: p["value"] for p in first["parts"]}["momentum"] == 2  # faded from 3
    # DESIGN.md: a grade's change counts from the very next attack on, in the same round too
    assert {p["term"]: p["value"] for p in second["parts"]}["momentum"] == first["momentum"]
    assert after.encounter.momentum["foes"] == -1


def test_d100_mom_3_4_a_kill_lifts_the_side_and_the_fight_is_won() -> None:
    state = fighting('[combat: op="start" foe="Rat" tier="1"]')
    rat = fighter(state, "Rat").model_copy(update={"hp": 1})
    encounter = state.encounter.model_copy(update={"combatants": (
        *state.encounter.combatants[:2], rat)})
    state = state.model_copy(update={"encounter": encounter})
    text = '[attack: who="Ada" target="Rat" tactics="perfect"]'
    after, answers = answer(GAME, state, text, _turn_with("solid", text, state))
    record = answers[0].record
    assert record["momentumChange"] == 0 + 2 and record["events"] == [
        "damage:Rat:1", "felled:Rat", "end:victory"]
    assert after.encounter is None and "The fight is won." in answers[0].text


@pytest.mark.parametrize(("purpose", "expected"), [
    ("subdue", 69), ("incapacitate", 0), ("restrained", 5), ("kill", 10)])
def test_d100_dmg_4_purpose(purpose, expected) -> None:
    """A solid hit of 10 on the Ogre at 70: subdue on 70 hp is the whole blow, so the Ogre is
    set at 10 first to see it stop at 1."""
    state = fighting()
    text = f'[attack: who="Ada" target="Ogre" purpose="{purpose}"]'
    turn = _turn_with("solid", text, state)
    if purpose == "subdue":
        ogre = fighter(state, "Ogre").model_copy(update={"hp": 10})
        encounter = state.encounter.model_copy(update={"combatants": (
            *state.encounter.combatants[:2], ogre)})
        state = state.model_copy(update={"encounter": encounter})
        expected = 9  # leaves the target standing at 1
    _, answers = answer(GAME, state, text, turn)
    assert answers[0].record["damage"] == expected and answers[0].record["purpose"] == purpose


def test_d100_rank_7_a_fighter_100_times_weaker_deals_nothing() -> None:
    state = fighting('[combat: op="start" foe="Dragon" rank="SS" tier="6"]')
    text = '[attack: who="Ada" target="Dragon" tactics="perfect" aim="easy"]'
    _, answers = answer(GAME, state, text, _turn_with("critical", text, state))
    record = answers[0].record
    assert record["gap"] == "Cannot deal meaningful damage" and record["damage"] == 0
    assert {p["term"]: p["value"] for p in record["parts"]}["gap"] == -10  # held


def test_d100_dmg_3_a_target_that_fought_recklessly_takes_a_third_more() -> None:
    state = fighting()
    state, _ = answer(GAME, state, '[attack: who="Ogre" target="Ada" risk="reckless"]', (0, 1))
    text = '[attack: who="Ada" target="Ogre"]'
    _, answers = answer(GAME, state, text, _turn_with("solid", text, state))
    assert answers[0].record["damage"] == 13  # 10 × 4/3, half up


def test_unknown_grade_words_are_standard_with_a_note_and_korean_words_are_read() -> None:
    state = fighting()
    _, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre" tactics="brilliant" '
                        'risk="무모함"]', (0, 1))
    parts = {p["term"]: (p.get("grade"), p["value"]) for p in answers[0].record["parts"]}
    assert parts["tactics"] == ("standard", 0) and parts["risk"] == ("reckless", -20)
    assert 'tactics="brilliant" is no tactics grade: standard was used' in answers[0].notes


def test_a_swipe_rolls_the_same_and_the_order_of_the_reply_does_not_matter() -> None:
    """DESIGN.md "Dice": each strike is keyed by the reply and the attacker."""
    state = fighting()
    ada, bram = '[attack: who="Ada" target="Ogre"]', '[attack: who="Bram the Quiet" target="Ogre"]'
    one, first = answer(GAME, state, f"{ada} {bram}", (0, 1))
    two, swapped = answer(GAME, state, f"{bram} {ada}", (0, 1))
    assert first[0].record["roll"] == swapped[1].record["roll"]
    assert first[1].record["roll"] == swapped[0].record["roll"]
    assert one.canonical() == two.canonical()


# --- refusals leave the state unchanged ------------------------------------------------------

@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Ada" target="Nobody"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Ada" target="Bram the Quiet"]', reasons.UNSUPPORTED),
    ('[combat: op="defend" who="Ada" how="step-in" for="Ogre"]', reasons.UNKNOWN_COMBATANT),
    ('[combat: op="defend" who="Nobody"]', reasons.UNKNOWN_COMBATANT),
    ('[combat: op="end" outcome="surrender"]', reasons.UNKNOWN_OUTCOME),
])
def test_refusals_in_a_fight_change_nothing(text, reason) -> None:
    state = fighting()
    after, answers = answer(GAME, state, text, (0, 1))
    assert answers[0].reason == reason and after is state


@pytest.mark.parametrize("text", ['[attack: who="Ada" target="Ogre"]',
                                  '[combat: op="defend" who="Ada"]',
                                  '[combat: op="end" outcome="fled"]'])
def test_no_encounter_out_of_a_fight(text) -> None:
    after, answers = answer(GAME, START, text)
    assert answers[0].reason == reasons.NO_ENCOUNTER and after is START


def test_one_strike_a_round_and_one_defence_a_round() -> None:
    state = fighting()
    once, _ = answer(GAME, state, '[attack: who="Ada" target="Ogre"]', (0, 1))
    twice, answers = answer(GAME, once, '[attack: who="Ada" target="Ogre"]', (0, 1))
    assert answers[0].reason == reasons.NO_TIME and twice is once
    guarded, _ = answer(GAME, state, '[combat: op="defend" who="Ada"]', (0, 1))
    again, answers = answer(GAME, guarded, '[combat: op="defend" who="Ada" how="block"]', (0, 1))
    assert answers[0].reason == reasons.ALREADY and again is guarded


def test_a_downed_hero_does_not_act_and_a_felled_foe_is_no_target() -> None:
    state = fighting('[combat: op="start" foe="Rat" count="2"]')
    hurt = state.with_character(0, state.characters[0].model_copy(
        update={"pools": {**state.characters[0].pools, "health": 0}}))
    after, answers = answer(GAME, hurt, '[attack: who="Ada" target="Rat 1"]', (0, 1))
    assert answers[0].reason == reasons.DOWNED and after is hurt
    rats = tuple(c.model_copy(update={"hp": 0}) if c.name == "Rat 1" else c
                 for c in state.encounter.combatants)
    felled = state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": rats})})
    after, answers = answer(GAME, felled, '[attack: who="Bram the Quiet" target="Rat 1"]',
                            (0, 1))
    assert answers[0].reason == reasons.TARGET_DOWN and after is felled


def test_defend_is_refused_in_a_formula_fight() -> None:
    game = load_ruleset(fixture_json("rulesets/skirmish.json"))
    state = start_state(game, fixture_json("parties/skirmish.json"))
    after, answers = answer(game, state, '[combat: op="defend" how="parry"]')
    assert answers[0].reason == reasons.UNSUPPORTED and after is state


# --- foes announce, heroes defend ------------------------------------------------------------

def test_d100_def_1_party_3_a_foes_strike_lands_next_round_after_the_heroes() -> None:
    state = fighting()
    state, answers = answer(GAME, state, '[attack: who="Ogre" target="Ada" tactics="good"]',
                            (0, 1))
    assert answers[0].record["announced"] is True and answers[0].record["lands"] == 2
    assert state.characters[0].pools["health"] == 10  # nothing landed yet
    assert "Ogre → Ada" in combat_block(GAME, state)
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre"]', (0, 2))
    landed = answers[0].record["landed"]
    assert [(r["attacker"], r["target"], r["landed"]) for r in landed] == [("Ogre", "Ada", True)]
    parts = {p["term"]: p["value"] for p in landed[0]["parts"]}
    assert parts["base"] == 65 and parts["tactics"] == 5  # D100-HIT-1: a foe's base
    assert parts["momentum"] == after.encounter.momentum["foes"] - landed[0]["momentumChange"]
    assert after.characters[0].pools["health"] == 10 - landed[0]["damage"]
    assert after.encounter.announced == ()


def test_d100_party_4_a_foe_down_before_its_strike_lands_never_lands() -> None:
    state = fighting('[combat: op="start" foe="Rat" count="2"]')
    state, _ = answer(GAME, state, '[attack: who="Rat 1" target="Ada"]', (0, 1))
    rats = tuple(c.model_copy(update={"hp": 0}) if c.name == "Rat 1" else c
                 for c in state.encounter.combatants)
    state = state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": rats})})
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Rat 2"]', (0, 2))
    assert answers[0].record["landed"] == [{"attacker": "Rat 1", "target": "Ada",
                                            "landed": False}]
    assert after.characters[0].pools["health"] == 10


def test_d100_def_3_6_the_defence_roll_against_each_strike() -> None:
    """One d100 a round for the defender, against 80 + momentum + fatigue − 10 per strike
    beyond the first; its grade changes the strike as DESIGN.md says."""
    state = fighting('[combat: op="start" foe="Rat" count="2"]')
    # incapacitate: no damage, so Ada stands to meet the second strike too
    state, _ = answer(GAME, state, '[attack: who="Rat 1" target="Ada" purpose="incapacitate"] '
                      '[attack: who="Rat 2" target="Ada" purpose="incapacitate"]', (0, 1))
    after, answers = answer(GAME, state, '[combat: op="defend" who="Ada" how="parry"]', (0, 2))
    roll = answers[0].record["roll"]
    landed = answers[0].record["landed"]
    assert len(landed) == 2
    for met, row in enumerate(landed):
        defence = row["defence"]
        assert defence["roll"] == roll and defence["how"] == "parry"
        # the party's momentum moves only with its own strikes: 0 all round
        assert defence["chance"] == 80 + 0 - 10 * met
        assert defence["grade"] == grade_of(defence["chance"] - roll)
        assert row["grade"] == defended(row["rolled"], defence["grade"])
    assert after.encounter.defences[0].met == 2


def test_d100_def_7_an_undodgeable_strike_is_not_met() -> None:
    state = fighting()
    state, _ = answer(GAME, state, '[attack: who="Ogre" target="Ada" undodgeable="yes"]', (0, 1))
    _, answers = answer(GAME, state, '[combat: op="defend" who="Ada"]', (0, 2))
    row = answers[0].record["landed"][0]
    assert row["defence"] == {"who": "Ada", "how": "dodge", "undodgeable": True}
    assert row["grade"] == grade_of(row["margin"])


def test_d100_party_6_stepping_in_front_of_an_ally() -> None:
    state = fighting()
    state, _ = answer(GAME, state, '[attack: who="Ogre" target="Ada"]', (0, 1))
    _, answers = answer(GAME, state, '[combat: op="defend" who="Bram the Quiet" how="step-in" '
                        'for="Ada"]', (0, 2))
    assert answers[0].record["for"] == "Ada"
    row = answers[0].record["landed"][0]
    assert row["target"] == "Bram the Quiet" and row["defence"]["who"] == "Bram the Quiet"


# --- fatigue and effort ----------------------------------------------------------------------

STAMINA = harrow_with(stamina="resolve")  # Resolve: most 4; Ada has 3, Bram 4


def _tired(current: int) -> State:
    state = fighting(game=STAMINA, state=start_state(STAMINA, fixture_json("parties/harrow.json")))
    ada = state.characters[0]
    return state.with_character(0, ada.model_copy(update={"pools": {**ada.pools,
                                                                    "resolve": current}}))


@pytest.mark.parametrize(("current", "band"), [(4, 0), (3, 0), (2, -5), (1, -10), (0, -15)])
def test_d100_hit_4_fatigue_of_the_pool_the_attack_draws_on(current, band) -> None:
    _, answers = answer(STAMINA, _tired(current), '[attack: who="Ada" target="Ogre"]', (0, 1))
    assert {p["term"]: p["value"] for p in answers[0].record["parts"]}["fatigue"] == band


def test_d100_eff_5_an_effort_below_ones_rank_is_nearly_free() -> None:
    after, answers = answer(STAMINA, _tired(3), '[attack: who="Ada" target="Ogre" '
                            'effort="strain"]', (0, 1))
    record = answers[0].record
    assert (record["effortRank"], record["cost"], record["left"]) == ("D", 0, 3)
    assert after.characters[0].pools["resolve"] == 3


def test_d100_eff_7_too_much_is_scaled_down_unless_pushed() -> None:
    state = _tired(3)
    text = '[attack: who="Ada" target="Ogre" effort="cripple"]'  # rank C: the whole 4
    after, answers = answer(STAMINA, state, text, (0, 1))
    record = answers[0].record
    assert record["scaledTo"] == "D" and record["cost"] == 0 and "scaled down" in answers[0].text
    assert after.characters[0].pools["resolve"] == 3
    pushed, answers = answer(STAMINA, state, text[:-1] + ' push="yes"]', (0, 1))
    record = answers[0].record
    assert record["overexertion"] == "rupture" and record["cost"] == 3  # D100-OVER-1/2
    assert pushed.characters[0].pools["resolve"] == 0


def test_d100_over_1_far_over_the_hero_collapses() -> None:
    after, answers = answer(STAMINA, _tired(3), '[attack: who="Ada" target="Ogre" '
                            'effort="siege" push="yes"]', (0, 1))
    assert answers[0].record["overexertion"] == "far"
    assert after.characters[0].pools["health"] == 0  # collapsed, bleeding out


def test_an_effort_word_off_the_ladder_counts_nothing_with_a_note() -> None:
    _, answers = answer(STAMINA, _tired(3), '[attack: who="Ada" target="Ogre" effort="huge"]',
                        (0, 1))
    assert any(n.startswith('effort="huge" is not on the effort ladder')
               for n in answers[0].notes)


# --- the GM's side and other rulesets --------------------------------------------------------

def test_the_combat_block_shows_momentum_ranks_gaps_and_announced_strikes() -> None:
    state = fighting('[combat: op="start" foe="Ogre" rank="B" tier="6"]')
    state, _ = answer(GAME, state, '[attack: who="Ogre" target="Ada"]', (0, 1))
    block = combat_block(GAME, state)
    assert block.startswith("COMBAT (narrative; round 1 fought")
    assert "Momentum: party +0, foes +0" in block
    assert "Ogre (foe, rank B): hp 70/70; gap Ada: Suicide." in block
    assert "Ada (hero, rank C): hp 10/10" in block
    assert "Announced, landing next round: Ogre → Ada" in block
    assert 'tactics="good" risk="moderate"]. tactics=: poor, standard, good, excellent, ' \
        "perfect." in block  # issue 39: one grade in the tag, the others listed beside it


def test_a_dice_highest_ruleset_without_a_combat_block_fights_with_the_defaults() -> None:
    game = load_ruleset(fixture_json("rulesets/highest-blades.json"))
    assert game.ruleset.combat is None
    state = start_state(game, fixture_json("parties/highest-blades.json"))
    state, answers = answer(game, state, '[combat: op="start" foe="Bandit"]')
    assert answers[0].ok and state.encounter.kind == "narrative"
    hero = state.encounter.combatants[0].name
    _, answers = answer(game, state, f'[attack: who="{hero}" target="Bandit"]', (0, 1))
    assert answers[0].ok and answers[0].record["parts"][0] == {"term": "base", "value": 80}


def test_harrow_fights_a_whole_narrative_fight_to_its_end() -> None:
    state = fighting('[combat: op="start" foe="Rat"]')
    for n in range(1, 40):
        state, answers = answer(GAME, state, '[attack: who="Ada" target="Rat" tactics="good"] '
                                '[attack: who="Bram the Quiet" target="Rat"] '
                                '[attack: who="Rat" target="Ada"]', (0, n))
        if state.encounter is None:
            break
    assert state.encounter is None
    assert any("end:victory" in a.record.get("events", []) or "end:defeat" in a.record.get(
        "events", []) for a in answers)
