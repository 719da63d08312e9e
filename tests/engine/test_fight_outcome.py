"""Outcome-based combat (spec/combat.md A.4, CMB-OUTC-1..4, OQ-CMB-6; issue 25): position and
effect graded by the GM, the hero's roll read through the ruleset's outcome tiers both ways,
harm levels taking shares of a hero's maximum health, foes measured in harm levels.

The fixture (fixtures/rulesets/outcome-2d6.json) rolls Fight, 2d6 + Brawn + 1 (trained), read
by total: 13+ Critical hit, 10+ Strong hit, 7+ Weak hit, else Miss. Ada adds 3, Bram 4."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from helpers import answer, fixture_json, problems_of
from scipy.stats import chisquare

from engine import Stream, load_ruleset, start_state
from engine.actions.checks import outcomes as tiers
from engine.actions.checks import sum as dice_sum
from engine.rules import reasons
from engine.rules.checks.read import CheckRead
from engine.rules.fight.outcome import (
    READINGS,
    exchange,
    grade_effect,
    grade_position,
    harm_points,
    harm_share,
    reading,
    tier_kind,
)
from engine.rules.sheet import SheetView
from engine.rules.state import State
from engine.ruleset.fight import EFFECTS, POSITIONS, OutcomeRule, TierReading
from engine.ruleset.resolution import Outcomes, SumResolution
from engine.text.fight.block import combat_block

DOCUMENT = fixture_json("rulesets/outcome-2d6.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, fixture_json("parties/outcome-2d6.json"))
RULE = GAME.ruleset.combat.outcome if GAME.ruleset.combat is not None else None
assert RULE is not None
ADA, BRAM = 3, 4  # what each adds to the 2d6 of Fight
ONE_THUG = '[combat: op="start" foe="Thug" role="standard"]'
A_BOSS = '[combat: op="start" foe="Ogre" role="boss"]'


def fighting(text: str = ONE_THUG, state: State = START) -> State:
    state, answers = answer(GAME, state, text)
    assert all(a.ok for a in answers), [a.text for a in answers]
    return state


def tier_of(total: int) -> str:
    """The fixture's tiers, by total (CHK-OUT-A4)."""
    return "critical" if total >= 13 else "strong" if total >= 10 else "weak" if total >= 7 \
        else "miss"


# What each tier is read as (CMB-OUTC-1), and what risky/standard then deals and brings back.
KINDS = {"critical": "critical", "strong": "full", "weak": "partial", "miss": "failure"}
RISKY_STANDARD = {"critical": (3, 0), "strong": (2, 0), "weak": (1, 2), "miss": (0, 2)}


def hp(state: State, who: str) -> int:
    return next(c.pools.get("health", 10) for c in state.characters if c.name == who)


# --- CMB-OUTC-4: foes measured in harm levels ------------------------------------------------


@pytest.mark.parametrize(("role", "tier", "levels"), [
    ("minion", 1, 1), ("minion", 3, 1), ("minion", 4, 2), ("standard", 1, 2),
    ("standard", 3, 3), ("boss", 1, 6), ("boss", 6, 9)])
def test_cmb_outc_4_a_foe_has_its_templates_harm_levels(role, tier, levels) -> None:
    state, [started] = answer(GAME, START,
                              f'[combat: op="start" foe="Brute" role="{role}" tier="{tier}"]')
    assert started.record["foes"] == [{"name": "Brute", "harm": levels, "role": role,
                                       "tier": tier}]
    assert state.encounter is not None and state.encounter.kind == "outcome"
    brute = state.encounter.combatants[-1]
    assert (brute.hp, brute.hp_max, brute.defence, brute.attack, brute.damage) == (
        levels, levels, None, None, None)


def test_cmb_outc_4_the_combat_block_shows_harm_levels_and_health() -> None:
    state = fighting('[combat: op="start" foe="Thug" role="standard" count="2"]')
    state, _ = answer(GAME, state, '[attack: who="Bram the Quiet" target="Thug 1" '
                      'effect="great"]', turn=(0, 2))
    block = combat_block(GAME, state)
    thug = state.encounter.combatants[2] if state.encounter else None
    assert thug is not None and "Thug 1 (foe: standard, tier 1): " in block
    assert f"harm {thug.hp}/2" in block and "Thug 2 (foe: standard, tier 1): harm 2/2" in block
    assert f"Bram the Quiet (hero): health {hp(state, 'Bram the Quiet')}/10" in block
    assert 'position="risky" effect="standard"]. position= how hard a failure comes back: ' \
        "controlled, risky, desperate; effect=" in block  # issue 39: one shown, all listed


# --- CMB-OUTC-2: the GM's grades --------------------------------------------------------------


@pytest.mark.parametrize(("written", "word", "noted"), [
    ("", "risky", False), ("Desperate", "desperate", False), (" controlled ", "controlled", False),
    ("dire", "risky", True)])
def test_cmb_outc_2_position_words_unknown_is_risky_with_a_note(written, word, noted) -> None:
    notes: list[str] = []
    assert grade_position(written, notes) == word
    assert bool(notes) == noted
    if noted:
        assert notes == ['position="dire" is not one of controlled, risky, desperate: risky '
                         "was used"]


@pytest.mark.parametrize(("written", "word", "noted"), [
    ("", "standard", False), ("GREAT", "great", False), ("limited", "limited", False),
    ("huge", "standard", True)])
def test_cmb_outc_2_effect_words_unknown_is_standard_with_a_note(written, word, noted) -> None:
    notes: list[str] = []
    assert grade_effect(written, notes) == word
    assert bool(notes) == noted


def test_cmb_outc_2_an_unknown_grade_in_a_tag_is_noted_in_the_answer() -> None:
    state = fighting(A_BOSS)
    _, [hit] = answer(GAME, state, '[attack: who="Ada" position="dire" effect="huge" '
                      'action="Swing"]', turn=(0, 1))
    assert hit.ok and (hit.record["position"], hit.record["effect"]) == ("risky", "standard")
    assert any("position=" in n for n in hit.notes) and any("effect=" in n for n in hit.notes)
    # with= names a weapon now (tests/engine/test_fight_outcome_arms.py)
    assert 'ignored unknown attribute "action"' in hit.notes  # formula combat's, not outcome's


# --- CMB-OUTC-1: the roll read both ways --------------------------------------------------------


def _outcomes(*spec: dict[str, Any]) -> Outcomes:
    return Outcomes.model_validate({"by": "total", "tiers": list(spec)})


FITD = _outcomes({"id": "crit", "label": "Critical", "on": "critical-success", "success": True},
                 {"id": "full", "label": "Full", "atLeast": 6, "success": True},
                 {"id": "partial", "label": "Partial", "atLeast": 4, "success": True},
                 {"id": "bad", "label": "Bad"})
PF2 = _outcomes({"id": "cs", "label": "CS", "atLeast": 10, "success": True, "critical": True},
                {"id": "s", "label": "S", "atLeast": 0, "success": True},
                {"id": "f", "label": "F", "atLeast": -9},
                {"id": "cf", "label": "CF", "critical": True})


@pytest.mark.parametrize(("outcomes", "index", "critical", "kind"), [
    (FITD, 0, "success", "critical"), (FITD, 1, None, "full"), (FITD, 2, None, "partial"),
    (FITD, 3, None, "failure"), (PF2, 0, "success", "critical"), (PF2, 1, None, "full"),
    (PF2, 2, None, "failure"), (PF2, 3, "failure", "critical-failure"),
    (PF2, 0, None, "critical"), (PF2, 3, None, "critical-failure")])
def test_cmb_outc_1_each_tier_is_read_by_its_kind(outcomes, index, critical, kind) -> None:
    assert tier_kind(outcomes, outcomes.tiers[index], critical) == kind


# Every kind × position × effect: (harm levels dealt, harm level back), Forged in the Dark.
BOTH_WAYS = {
    "critical": lambda p, e: (e + 1, 0), "full": lambda p, e: (e, 0),
    "partial": lambda p, e: (e - 1, p), "failure": lambda p, e: (0, p),
    "critical-failure": lambda p, e: (0, min(p + 1, 4))}


@pytest.mark.parametrize(("kind", "position", "effect"),
                         list(itertools.product(BOTH_WAYS, POSITIONS, EFFECTS)))
def test_cmb_outc_1_2_the_tier_says_what_is_achieved_and_what_comes_back(
        kind, position, effect) -> None:
    rule = OutcomeRule(check="fight")
    p, e = POSITIONS.index(position) + 1, EFFECTS.index(effect) + 1
    got = exchange(rule, READINGS[kind], position, effect)
    assert (got.dealt, got.level) == BOTH_WAYS[kind](p, e)


def test_cmb_outc_1_a_rulesets_own_levels_and_tier_readings_are_used() -> None:
    rule = OutcomeRule(check="fight", harm=[0.5, 1], effect={"great": 5},
                       position={"controlled": 0}, tiers={"partial": TierReading(effect=0,
                                                                                 harm=-1)})
    assert reading(rule, FITD.tiers[2], "partial") == TierReading(effect=0, harm=-1)
    assert reading(rule, FITD.tiers[1], "full") == READINGS["full"]
    got = exchange(rule, rule.tiers["partial"], "desperate", "great")
    assert (got.dealt, got.level) == (5, 2)  # desperate 3 - 1, within the 2 levels given
    got = exchange(rule, READINGS["critical-failure"], "desperate", "limited")
    assert (got.dealt, got.level) == (0, 2)  # held to the last level the ruleset gives
    got = exchange(rule, READINGS["failure"], "controlled", "standard")
    assert (got.dealt, got.level) == (0, 0)  # controlled brings back nothing here


def _fight_request(state: State, who: int) -> CheckRead:
    view = SheetView(GAME, state.characters[who], state)
    return CheckRead(who="Ada", kind="skill", ident="fight", label="Fight",
                     attrs={"dc": "0"}, view=view, ability=None, ability_part=2, rank=1,
                     own_bonus=0)


def test_cmb_outc_1_the_attacks_tier_law_matches_enumeration() -> None:
    """20,000 draws of the fixture's attack check through the engine's own sum algorithm and
    tier picking, read both ways (risky, standard), against the law enumerated from 2d6 + 3."""
    res = GAME.ruleset.resolution
    assert isinstance(res, SumResolution) and res.outcomes is not None
    request = _fight_request(START, 0)
    exact: Counter[tuple[str, int, int]] = Counter()
    for a, b in itertools.product(range(1, 7), repeat=2):
        tier = tier_of(a + b + ADA)
        exact[(tier, *RISKY_STANDARD[tier])] += 1
    seen: Counter[tuple[str, int, int]] = Counter()
    for index in range(20_000):
        stream = Stream("outcome-law", (index,), "attack")
        rolled = dice_sum.resolve(res, request, stream)
        assert rolled is not None
        landed = tiers.pick(res.outcomes, rolled, shift=True)
        kind = tier_kind(res.outcomes, landed.tier, landed.critical)
        assert kind == KINDS[landed.tier.id] and landed.tier.id == tier_of(int(rolled.value))
        got = exchange(RULE, reading(RULE, landed.tier, kind), "risky", "standard")
        seen[(landed.tier.id, got.dealt, got.level)] += 1
    assert set(seen) <= set(exact)
    keys = sorted(exact)
    expected = [exact[k] * 20_000 / 36 for k in keys]
    assert chisquare([seen[k] for k in keys], expected).pvalue > 1e-4


def test_cmb_outc_1_every_engine_attack_is_read_as_its_rolls_say() -> None:
    """Whole [attack:] answers over many rounds: each record's tier, harm dealt, harm level
    and points taken are exactly what the enumeration table gives for its own dice."""
    state = fighting(A_BOSS)
    kinds = Counter()
    for turn in range(1, 161):
        _, [hit] = answer(GAME, state, '[attack: who="Ada" position="risky"]', turn=(0, turn))
        record = hit.record
        total = sum(record["rolls"]) + ADA
        tier = tier_of(total)
        dealt, level = RISKY_STANDARD[tier]
        assert record["total"] == total and record["tier"] == tier
        assert record["reading"] == KINDS[tier]
        assert (record["harmDealt"], record["harmLevel"]) == (dealt, level)
        assert record["damage"] == (5 if level else 0) and record["hp"] == 10 - record["damage"]
        assert record["harm"] == 6 - dealt and record["harmMax"] == 6
        kinds[tier] += 1
    assert set(kinds) == {"critical", "strong", "weak", "miss"}


# --- CMB-OUTC-3: harm takes shares of maximum health ---------------------------------------------


@pytest.mark.parametrize(("level", "share", "of_10", "of_7", "of_1"), [
    (0, Fraction(0), 0, 0, 0), (1, Fraction(1, 4), 3, 2, 1), (2, Fraction(1, 2), 5, 4, 1),
    (3, Fraction(4, 5), 8, 6, 1), (4, Fraction(1), 10, 7, 1), (5, Fraction(1), 10, 7, 1)])
def test_cmb_outc_3_one_harm_of_level_k_takes_f_k_of_max_health_rounded_up(
        level, share, of_10, of_7, of_1) -> None:
    rule = OutcomeRule(check="fight")
    assert harm_share(rule, level) == share  # OQ-CMB-6: the amount of one harm, not a total
    assert [harm_points(rule, level, most) for most in (10, 7, 1)] == [of_10, of_7, of_1]


@pytest.mark.parametrize(("position", "points"), [("controlled", 3), ("risky", 5),
                                                  ("desperate", 8)])
def test_cmb_outc_3_a_failures_harm_comes_off_max_health_temporary_first(position,
                                                                          points) -> None:
    state = fighting(A_BOSS)
    for turn in range(1, 400):  # the first miss of the fixed turns (2d6 + 3 under 7)
        _, [hit] = answer(GAME, state, f'[attack: who="Ada" position="{position}"]',
                          turn=(0, turn))
        if hit.record["tier"] == "miss":
            break
    assert hit.record["harmLevel"] == POSITIONS.index(position) + 1
    assert hit.record["harmShare"] == [{"num": 1, "den": 4}, {"num": 1, "den": 2},
                                       {"num": 4, "den": 5}][POSITIONS.index(position)]
    assert (hit.record["damage"], hit.record["hp"]) == (points, 10 - points)
    assert f"Ada suffers level-{hit.record['harmLevel']} harm, {points} (" in hit.text
    assert f"damage:Ada:{points}" in hit.record["events"]
    ada = state.characters[0]
    soaked = state.with_character(0, ada.model_copy(update={"pools": {
        **ada.pools, "health:temporary": 2}}))
    after, [again] = answer(GAME, soaked, f'[attack: who="Ada" position="{position}"]',
                            turn=(0, turn))
    assert again.record["rolls"] == hit.record["rolls"]
    assert (again.record["hp"], again.record["temporary"]) == (10 - points + 2, 0)
    assert "health:temporary" not in after.characters[0].pools


# --- determinism -----------------------------------------------------------------------------


def test_a_swipe_rewording_or_reordering_the_reply_rolls_the_same() -> None:
    state = fighting('[combat: op="start" foe="Thug" role="boss" count="2"]')
    one = ('[attack: who="Ada" target="Thug 1" position="risky"] The blades flash. '
           '[attack: who="Bram the Quiet" target="Thug 2" effect="great"]')
    two = ('Bram lunges. [attack: who="Bram the Quiet" target="Thug 2" effect="great"] '
           'Ada too. [attack: who="Ada" target="Thug 1" position="risky"]')
    _, first = answer(GAME, state, one, turn=(0, 3))
    _, second = answer(GAME, state, two, turn=(0, 3))
    assert first[0].record["rolls"] == second[1].record["rolls"]
    assert first[1].record["rolls"] == second[0].record["rolls"]
    _, later = answer(GAME, state, one, turn=(0, 4))  # another reply rolls anew
    assert [a.record["rolls"] for a in later] != [a.record["rolls"] for a in first]


# --- refusals: nothing changes ------------------------------------------------------------------


def _downed() -> State:
    state = fighting('[combat: op="start" foe="Thug" role="boss"]')
    bram = state.characters[1]
    return state.with_character(1, bram.model_copy(update={"pools": {"health": 0}}))


def _felled() -> State:
    state = fighting('[combat: op="start" foe="Thug" role="minion" count="2"]')
    assert state.encounter is not None
    foes = list(state.encounter.combatants)
    foes[2] = foes[2].model_copy(update={"hp": 0})
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": tuple(foes)})})


def _acted() -> State:
    state = fighting(A_BOSS)
    state, [hit] = answer(GAME, state, '[attack: who="Ada"]', turn=(0, 1))
    assert hit.ok
    return state


@pytest.mark.parametrize(("state", "text", "reason"), [
    (START, '[attack: who="Ada" position="risky"]', reasons.NO_ENCOUNTER),
    (fighting(), '[attack: who="Ada" target="Goblin"]', reasons.UNKNOWN_COMBATANT),
    (fighting(), '[attack: who="Nobody"]', reasons.UNKNOWN_COMBATANT),
    (fighting(), '[attack: who="Thug" target="Ada"]', reasons.PLAYERS_ROLL),
    (_downed(), '[attack: who="Bram the Quiet"]', reasons.DOWNED),
    (_felled(), '[attack: who="Ada" target="Thug 1"]', reasons.TARGET_DOWN),
    (fighting('[combat: op="start" foe="Thug" count="2"]'), '[attack: who="Ada"]',
     reasons.MISSING_ATTRIBUTE),
    (_acted(), '[attack: who="Ada"]', reasons.NO_TIME),
])
def test_every_refusal_leaves_the_state_unchanged(state, text, reason) -> None:
    turn = (0, 1)
    after, [refused] = answer(GAME, state, text, turn=turn)
    assert not refused.ok and refused.reason == reason
    assert after == state


def test_a_foes_attack_is_refused_players_roll_saying_what_to_write() -> None:
    _, [refused] = answer(GAME, fighting(), '[attack: who="Thug" target="Ada"]', turn=(0, 1))
    assert refused.reason == "players-roll"
    assert "only heroes roll" in refused.text and 'position="..."' in refused.text


def test_reloads_are_not_answered_and_abilities_need_an_entry_in_an_outcome_fight() -> None:
    """Abilities are outcome actions now (tests/engine/test_fight_outcome_arms.py); one the
    hero did not choose is refused, and reloading stays a formula fight's."""
    after, [cast] = answer(GAME, fighting(), '[attack: who="Ada" use="Fire Bolt"]',
                           turn=(0, 1))
    assert cast.reason == reasons.UNKNOWN_ENTRY and after.encounter == fighting().encounter
    after, [reload] = answer(GAME, fighting(), '[combat: op="reload" who="Ada"]', turn=(0, 1))
    assert reload.reason == reasons.UNSUPPORTED and after.encounter == fighting().encounter


# --- whole fights -------------------------------------------------------------------------------


def _fight(state: State, text: str, turns: range) -> tuple[State, list[Any]]:
    answers = []
    for turn in turns:
        state, got = answer(GAME, state, text, turn=(0, turn))
        answers += got
        if state.encounter is None:
            break
    return state, answers


def test_a_whole_fight_to_victory_fells_every_foe_and_ends_it() -> None:
    state = fighting('[combat: op="start" foe="Thug" role="minion" count="2"]')
    text = ('[attack: who="Ada" target="Thug 1" position="controlled" effect="standard"] '
            '[attack: who="Bram the Quiet" target="Thug 2" position="controlled"]')
    state, answers = _fight(state, text, range(1, 40))
    assert state.encounter is None
    done = [a for a in answers if a.ok]
    assert sum(a.record["harmDealt"] for a in done) == 2  # a minion has one harm level
    assert sum(1 for a in done for e in a.record.get("events", ()) if e.startswith("felled:")) \
        == 2
    assert done[-1].record["events"][-1] == "end:victory" and "The fight is won." in done[-1].text
    for hero in ("Ada", "Bram the Quiet"):
        taken = sum(a.record["damage"] for a in done if a.record["attacker"] == hero)
        assert hp(state, hero) == 10 - taken
    assert all(a.reason == reasons.TARGET_DOWN for a in answers if not a.ok)


def test_a_whole_fight_to_defeat_downs_every_hero_and_ends_it() -> None:
    state = fighting('[combat: op="start" foe="Ogre" role="boss" tier="6"]')
    text = ('[attack: who="Ada" position="desperate" effect="limited"] '
            '[attack: who="Bram the Quiet" position="desperate" effect="limited"]')
    state, answers = _fight(state, text, range(1, 60))
    assert state.encounter is None
    done = [a for a in answers if a.ok]
    assert {hp(state, "Ada"), hp(state, "Bram the Quiet")} == {0}
    downs = [e for a in done for e in a.record.get("events", ()) if e.startswith("down:")]
    assert sorted(downs) == ["down:Ada", "down:Bram the Quiet"]
    assert done[-1].record["events"][-1] == "end:defeat" and "The fight is lost." in done[-1].text
    assert all(a.reason == reasons.DOWNED for a in answers if not a.ok)


def test_op_end_and_conditions_work_as_in_formula_combat() -> None:
    state = fighting()
    state, [cond] = answer(GAME, state, '[combat: op="condition" who="Thug" add="shaken" '
                           'rounds="1"]')
    assert cond.ok and cond.record["added"] == "shaken"
    after, [end] = answer(GAME, state, '[combat: op="end" outcome="fled"]')
    assert end.ok and after.encounter is None and end.record["events"] == ["end:fled"]


# --- ruleset keys -------------------------------------------------------------------------------


def _drop(*path: str | int) -> Any:
    def mutate(document: Any) -> None:
        node = document
        for step in path[:-1]:
            node = node[step]
        del node[path[-1]]
    return mutate


def _set(value: Any, *path: str | int) -> Any:
    def mutate(document: Any) -> None:
        node = document
        for step in path[:-1]:
            node = node[step]
        node[path[-1]] = copy.deepcopy(value)
    return mutate


@pytest.mark.parametrize(("mutation", "problem"), [
    (_drop("combat", "outcome"), '/combat/kind: outcome combat needs "combat.outcome"'),
    (_set("climbing", "combat", "outcome", "check"),
     '/combat/outcome/check: unknown skill "climbing"'),
    (_drop("combat", "templates", 1, "combat", "harm"),
     "/combat/templates/1/combat/harm: an outcome fight's template gives its foes harm levels "
     "(CMB-OUTC-4)"),
    (_set({"partial": {"effect": 0}}, "combat", "outcome", "tiers"),
     '/combat/outcome/tiers/partial: unknown outcome tier "partial"'),
    (_drop("resolution", "outcomes"),
     '/combat/kind: outcome combat needs "resolution.outcomes" '
     "(the tiers its roll is read through)"),
    (_set("@nothing", "combat", "templates", 0, "combat", "harm"),
     '/combat/templates/0/combat/harm: unknown reference "@nothing" (a foe\'s formulas read '
     "@tier and abilities)"),
])
def test_the_outcome_keys_are_checked_at_load(mutation, problem) -> None:
    assert problem in problems_of(DOCUMENT, mutation)


def test_the_fixture_loads_clean_and_its_keys_default_to_forged_in_the_dark() -> None:
    assert problems_of(DOCUMENT) == []
    bare = OutcomeRule(check="fight")
    assert bare.harm == [0.25, 0.5, 0.8, 1.0] and bare.dc == 0 and not bare.tiers
    assert problems_of(DOCUMENT, _set({"check": "fight"}, "combat", "outcome")) == []
