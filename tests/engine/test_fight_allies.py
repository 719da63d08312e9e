"""A hero's ability aimed at heroes of the fight (issue 25: §11's ally-targeted abilities;
ITM-OUT-3/6's heal and buff; CMB-SUS-2/3/7 for a sustained buff; CMB-HP0-3: the dead are not
raised) on fixtures/rulesets/skirmish-foes.json with its party: Ada's Cure Wounds (ally, 1d8 + 3,
a slot) and Bless (ally, up to 3, sustained, blessed for 10 rounds), Brannoc's Second Wind
(self, 1d10 + 1, a bonus action)."""

from __future__ import annotations

import copy
from collections import Counter

from helpers import answer, fixture_json, hero, one
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.state import FightCondition, plain_canonical

DOCUMENT = fixture_json("rulesets/skirmish-foes.json")
PARTY = fixture_json("parties/skirmish-foes.json")
GAME = load_ruleset(DOCUMENT)


def _fighting(brannoc_hp: int = 12, conditions: tuple[str, ...] = ()):
    party = copy.deepcopy(PARTY)
    party["characters"][1]["pools"]["hp"] = brannoc_hp
    party["characters"][1]["conditions"] = list(conditions)
    state, answers = answer(GAME, start_state(GAME, party),
                            '[combat: op="start" foe="Goblin" count="2"]')
    assert all(a.ok for a in answers)
    return state


CURE = '[attack: who="Ada" use="Cure Wounds" target="Brannoc"]'


def test_a_heal_on_an_ally_rolls_once_and_never_passes_the_most() -> None:
    state = _fighting(brannoc_hp=2)
    after, answers = answer(GAME, state, CURE, (1, 1))
    record = answers[0].record
    row = record["targets"][0]
    assert 4 <= row["healed"] <= 11 and row["hp"] == 2 + row["healed"] and row["hpMax"] == 12
    assert record["healed"] == row["healed"] and record["paid"] == "slot_1:1"
    assert hero(after, "Brannoc").pools["hp"] == row["hp"]
    assert "damage" not in record and "events" not in record
    full = _fighting()
    _, answers = answer(GAME, full, CURE, (1, 1))
    assert answers[0].record["targets"][0]["healed"] == 0  # already at his most


def test_a_heal_stands_a_downed_hero_up_but_never_raises_the_dead() -> None:
    down = _fighting(brannoc_hp=0)
    after, answers = answer(GAME, down, CURE, (1, 1))
    assert answers[0].ok and hero(after, "Brannoc").pools["hp"] > 0
    _, struck = answer(GAME, after, '[attack: who="Brannoc" target="Goblin 1"]', (1, 2))
    assert struck[0].ok  # CMB-TURN-8: healed above 0, he acts again
    dead = _fighting(brannoc_hp=0, conditions=("dead",))
    after, answers = answer(GAME, dead, CURE, (1, 1))
    assert answers[0].record["targets"][0]["healed"] == 0
    assert hero(after, "Brannoc").pools["hp"] == 0
    _, struck = answer(GAME, after, '[attack: who="Brannoc" target="Goblin 1"]', (1, 2))
    assert struck[0].reason == reasons.DOWNED  # CMB-HP0-3: he died on the spot


def test_a_sustained_buff_lands_on_each_ally_and_leaves_when_it_ends() -> None:
    state = _fighting()
    after, answers = answer(GAME, state, '[attack: who="Ada" use="Bless" target="Ada, Brannoc"]',
                            (1, 1))
    rows = answers[0].record["targets"]
    assert [r["applied"] for r in rows] == [
        [{"condition": "blessed", "rounds": 10, "by": "Ada"}]] * 2
    for name in ("Ada", "Brannoc"):
        assert "blessed" in hero(after, name).conditions
    # the end of the round took one of its ten rounds (CMB-COND-6)
    assert one(after, "Brannoc").conditions == (
        FightCondition(name="blessed", rounds=9, by="Ada"),)
    assert one(after, "Ada").sustains == "spells/bless"
    # CMB-SUS-3/7: Hold Person ends Bless, and blessed leaves everyone
    held, answers = answer(GAME, after, '[attack: who="Ada" use="Hold Person" '
                           'target="Goblin 1"]', (1, 2))
    assert answers[0].record["ended"]["removed"] == ["Ada: blessed", "Brannoc: blessed"]
    for name in ("Ada", "Brannoc"):
        assert "blessed" not in hero(held, name).conditions
        assert not one(held, name).conditions


def test_a_self_ability_is_its_users_alone_and_spends_its_budget() -> None:
    state = _fighting(brannoc_hp=3)
    after, answers = answer(GAME, state, '[attack: who="Brannoc" use="Second Wind"]', (1, 1))
    assert answers[0].record["budget"] == "bonus"
    assert answers[0].record["targets"][0]["target"] == "Brannoc"
    assert hero(after, "Brannoc").pools["hp"] == 3 + answers[0].record["healed"]
    # the bonus action is spent, the action is not: he still strikes
    _, more = answer(GAME, state, '[attack: who="Brannoc" use="Second Wind"] '
                     '[attack: who="Brannoc" target="Goblin 1"]', (1, 1))
    assert more[1].ok


def _refused(state, text: str, reason: str) -> None:
    after, answers = answer(GAME, state, text, (4, 1))
    assert answers[-1].reason == reason, answers[-1]
    assert plain_canonical(after) == plain_canonical(state)


def test_refusals_of_an_ally_ability_leave_the_state_unchanged() -> None:
    state = _fighting()
    _refused(state, '[attack: who="Ada" use="Cure Wounds" target="Goblin 1"]',
             reasons.UNSUPPORTED)
    _refused(state, '[attack: who="Ada" use="Cure Wounds" target="Ada, Brannoc"]',
             reasons.TOO_MANY_TARGETS)
    _refused(state, '[attack: who="Ada" use="Cure Wounds" target="Nobody"]',
             reasons.UNKNOWN_COMBATANT)
    _refused(state, '[attack: who="Brannoc" use="Second Wind" target="Ada"]',
             reasons.UNSUPPORTED)
    spent = state.with_character(0, state.characters[0].model_copy(
        update={"pools": {**state.characters[0].pools, "slot_1": 0}}))
    _refused(spent, CURE, reasons.CANNOT_PAY)


def test_a_heal_rolls_the_same_on_a_swipe_and_has_the_exact_spread_of_1d8_plus_3() -> None:
    state = _fighting(brannoc_hp=0)
    _, one_try = answer(GAME, state, CURE, (1, 3))
    _, swiped = answer(GAME, state, "Light gathers. " + CURE, (1, 3))
    assert one_try[0].record == swiped[0].record
    counts = Counter(answer(GAME, state, CURE, (2, n))[1][0].record["healed"]
                     for n in range(1, 801))
    assert set(counts) == set(range(4, 12))
    assert chisquare([counts[k] for k in range(4, 12)], [100] * 8).pvalue > 1e-4
