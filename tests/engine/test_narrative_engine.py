"""Narrative fights: the Engine-owned rules of spec/combat.md Part B the other narrative tests
pin without naming (issue 26) — the GM grades and nothing more, the order of a round, one
momentum per side, the pools effort draws on, the step order of one attack (B.11)."""

from __future__ import annotations

import copy

from helpers import answer, fixture_json, harrow, harrow_party

from engine import load_ruleset, start_state
from engine.actions.examples import Party
from engine.actions.fight.narrative.combat import teach_fight
from engine.rules.fight.narrative import GRADES, MOMENTUM, better, power
from engine.rules.state import State

GAME = harrow()
START = harrow_party(GAME)
OGRE = '[combat: op="start" foe="Ogre" tier="6"]'


def fighting(text: str = OGRE, game=GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def parts(record: dict) -> dict[str, int]:
    return {p["term"]: p["value"] for p in record["parts"]}


def test_d100_role_2_3_hit_3_the_gm_grades_and_the_engine_does_the_rest() -> None:
    """What the GM may write beyond the grades — a roll, a grade, damage, a gap, momentum —
    changes nothing: the d100, the gap, momentum and fatigue are the engine's (D100-HIT-3)."""
    state = fighting()
    plain = '[attack: who="Ada" target="Ogre" tactics="good"]'
    _, honest = answer(GAME, state, plain, (0, 1))
    _, eloquent = answer(GAME, state, plain[:-1] + ' roll="1" grade="critical" damage="99" '
                         'gap="12" momentum="9" fatigue="0" chance="100"]', (0, 1))
    keep = ("chance", "parts", "roll", "margin", "grade", "damage", "momentum")
    assert {k: eloquent[0].record[k] for k in keep} == {k: honest[0].record[k] for k in keep}


def test_d100_grade_4_5_backfire_is_the_biggest_blow_and_better_is_one_step_left() -> None:
    assert MOMENTUM["backfire"] == min(MOMENTUM.values()) == -4
    assert GRADES == ("critical", "clean", "solid", "glancing", "blocked", "miss", "backfire")
    assert [better(g) for g in GRADES] == ["critical", "critical", "clean", "solid",
                                           "glancing", "blocked", "miss"]


def test_d100_rank_4_ten_points_is_ten_times_stronger() -> None:
    assert [power(r) for r in ("D", "C", "B", "A")] == [0, 10, 20, 30]
    assert 10 ** ((power("A") - power("C")) / 10) == 100  # 20 points: a hundred times


def _narrative(**narrative: object):
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["live"]["pools"].append({"id": "aether", "label": "Aether", "max": {"const": 10}})
    document["combat"] = {"narrative": narrative}
    return load_ruleset(document)


def test_d100_eff_1_3_stamina_and_mana_are_the_pools_the_engine_prices_effort_on() -> None:
    game = _narrative(stamina="resolve", mana="aether")
    state = fighting(game=game, state=start_state(game, fixture_json("parties/harrow.json")))
    text = '[attack: who="Ada" target="Ogre" effort="strain"]'
    _, body = answer(game, state, text, (0, 1))
    _, magic = answer(game, state, text[:-1] + ' pool="mana"]', (0, 1))
    assert body[0].record["pool"] == "resolve" and magic[0].record["pool"] == "aether"
    # D100-EFF-3/5: strain (D) a rank below Ada's C costs a tenth: 10 → 1, 3 → 0
    assert (magic[0].record["cost"], magic[0].record["left"]) == (1, 9)
    assert (body[0].record["cost"], body[0].record["left"]) == (0, 3)


def test_d100_def_2_how_a_hero_meets_it_and_an_unknown_way_is_a_dodge() -> None:
    state = fighting()
    for how in ("dodge", "block", "parry", "sidestep", "counter"):
        _, answers = answer(GAME, state, f'[combat: op="defend" who="Ada" how="{how}"]', (0, 1))
        assert answers[0].record["how"] == how
    _, answers = answer(GAME, state, '[combat: op="defend" who="Ada" how="pray"]', (0, 1))
    assert answers[0].record["how"] == "dodge" and answers[0].notes


def test_d100_mom_1_the_party_shares_one_momentum() -> None:
    state = fighting()
    for n in range(1, 300):
        _, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre"] '
                            '[attack: who="Bram the Quiet" target="Ogre"]', (0, n))
        if answers[0].record["momentumChange"]:
            break
    assert parts(answers[1].record)["momentum"] == answers[0].record["momentum"] != 0


def test_d100_party_1_3_5_rounds_heroes_first_and_one_narration_for_the_round() -> None:
    state = fighting()
    state, answers = answer(GAME, state, '[attack: who="Ogre" target="Ada"]', (0, 1))
    assert state.encounter.round == 1
    # the foe's tag comes first in the text, yet every hero acts before the strike lands
    after, answers = answer(GAME, state, '[attack: who="Ogre" target="Bram the Quiet"] '
                            '[attack: who="Ada" target="Ogre"] '
                            '[attack: who="Bram the Quiet" target="Ogre"]', (0, 2))
    assert after.encounter.round == 2
    assert [a.record.get("slot") for a in answers] == [3, 1, 2]
    told = [a for a in answers if "landed" in a.record]
    assert told == [answers[2]]  # the round's last hero strike tells what landed
    assert "Announced strikes land: " in answers[2].text
    assert [a.target for a in after.encounter.announced] == ["Bram the Quiet"]


def test_d100_atk_a1_a2_a5_a7_the_steps_of_one_attack_in_the_record() -> None:
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": {"stamina": "resolve"}}
    game = load_ruleset(document)
    state = fighting(game=game, state=start_state(game, fixture_json("parties/harrow.json")))
    state, _ = answer(game, state, '[attack: who="Ogre" target="Ada"]', (0, 1))
    # A1 the grades, A2 the effort priced, A3 the parts, A4 the roll, A5 the defence (met
    # against the strike that lands, not Ada's own), A7 momentum, A8 the record
    _, answers = answer(game, state, '[combat: op="defend" who="Ada" how="block"] '
                        '[attack: who="Ada" target="Ogre" tactics="perfect" risk="careful" '
                        'aim="easy" purpose="subdue" effort="strain"]', (0, 2))
    record = answers[1].record
    assert (record["purpose"], record["effort"], record["cost"]) == ("subdue", "strain", 0)
    assert parts(record) == {"base": 80, "tactics": 12, "risk": 0, "aim": 5, "gap": 0,
                             "momentum": 0, "fatigue": 0}
    assert record["momentumChange"] == MOMENTUM[record["grade"]]
    assert "defence" not in record  # the Ogre declared no defence
    landed = record["landed"][0]
    assert landed["defence"]["how"] == "block" and landed["defence"]["roll"] == answers[
        0].record["roll"]


# --- D100-DEF-8 a foe's own techniques, D100-PARTY-8 focus fire ---------------------------

def _templated(**narrative: object):
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": narrative, "templates": [
        {"role": "brute", "tracks": {"hp": "70"},
         "combat": {"defence": "10", "attack": "0", "damage": "1"},
         "techniques": [{"id": "slam", "label": "Crushing Slam", "undodgeable": True},
                        {"id": "jab"}]}]}
    return load_ruleset(document)


TEMPLATED = _templated()


def test_d100_def_8_a_foe_uses_only_its_own_techniques() -> None:
    state = fighting(game=TEMPLATED, state=start_state(TEMPLATED, fixture_json(
        "parties/harrow.json")))
    after, answers = answer(TEMPLATED, state, '[attack: who="Ogre" target="Ada" '
                            'technique="crushing slam"]', (0, 1))
    record = answers[0].record
    assert (record["technique"], record["undodgeable"]) == ("slam", True)  # D100-DEF-7
    assert answers[0].text.startswith("Ogre readies Crushing Slam at Ada")
    _, answers = answer(TEMPLATED, after, '[combat: op="defend" who="Ada"]', (0, 2))
    row = answers[0].record["landed"][0]
    assert row["technique"] == "slam" and row["defence"]["undodgeable"] is True
    _, jab = answer(TEMPLATED, state, '[attack: who="Ogre" target="Ada" technique="jab"]',
                    (0, 1))
    assert jab[0].record["technique"] == "jab" and "undodgeable" not in jab[0].record
    taught = " ".join(teach_fight(TEMPLATED, Party(("Ada",))))
    assert 'technique="Crushing Slam"]' in taught  # issue 39: one shown, the others listed
    assert "Its techniques, never another: Crushing Slam, jab." in taught


def test_d100_def_8_a_made_up_technique_or_a_heros_is_refused_and_changes_nothing() -> None:
    state = fighting(game=TEMPLATED, state=start_state(TEMPLATED, fixture_json(
        "parties/harrow.json")))
    for text, words in (('[attack: who="Ogre" target="Ada" technique="meteor"]',
                         'Ogre has no technique "meteor" (its own: Crushing Slam, jab'),
                        ('[attack: who="Ada" target="Ogre" technique="slam"]',
                         "technique= is for a foe's strike")):
        after, answers = answer(TEMPLATED, state, text, (0, 1))
        assert answers[0].reason == "unknown-technique" and words in answers[0].text
        assert after is state
    _, answers = answer(GAME, fighting(), '[attack: who="Ogre" target="Ada" technique="x"]',
                        (0, 1))
    assert answers[0].reason == "unknown-technique"  # no templates: no techniques at all


def test_d100_party_8_focus_fire_rewards_striking_the_same_foe() -> None:
    state = fighting('[combat: op="start" foe="Ogre" tier="6" count="2"]')
    _, answers = answer(GAME, state, '[attack: who="Ada" target="Ogre 1"] '
                        '[attack: who="Bram the Quiet" target="Ogre 1"]', (0, 1))
    assert "focus" not in parts(answers[0].record)  # the first strike on it: no term
    assert parts(answers[1].record)["focus"] == 3
    assert answers[1].record["chance"] == sum(parts(answers[1].record).values())
    _, apart = answer(GAME, state, '[attack: who="Ada" target="Ogre 1"] '
                      '[attack: who="Bram the Quiet" target="Ogre 2"]', (0, 1))
    assert "focus" not in parts(apart[1].record)
    game = _narrative(focus=5)
    state = fighting('[combat: op="start" foe="Ogre" tier="6"]', game=game,
                     state=start_state(game, fixture_json("parties/harrow.json")))
    _, answers = answer(game, state, '[attack: who="Ada" target="Ogre"] '
                        '[attack: who="Bram the Quiet" target="Ogre"]', (0, 1))
    assert parts(answers[1].record)["focus"] == 5
