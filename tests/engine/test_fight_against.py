"""Roll-against fights (issue 25; engine/rules/fight/against.py, engine/actions/fight/check_kinds.py)
on fixtures/rulesets/against-d100-fight.json: a d100 ``at-most`` resolution (critical success
on 1; critical failure on 100, and on 96+ while the target number is below 50; ``tens`` up to
2) with ``combat.attack``. The attacker rolls against its own number — a hero's Fighting plus
the weapon's toHit, a foe's template ``attack`` — less the target's defence (CHK-RA-A4), and
the check's success, critical success and critical failure are the hit, the critical hit and
the sure miss (CHK-RA-15, CHK-RA-A8; CMB-ATK-5, CMB-ATK-A4)."""

from __future__ import annotations

import copy
from collections import Counter
from itertools import product

import pytest
from helpers import answer, fixture_json, one, problems_of, put
from scipy.stats import chisquare

from engine import TurnContext, load_ruleset, start_state
from engine.actions.checks import against
from engine.actions.fight.check_kinds import attack_read, attack_roll, read_result, recorded
from engine.dice import Stream
from engine.rules import reasons
from engine.rules.fight.against import against_result, defence_shift, edge_bonus, target_number
from engine.rules.sheet import SheetView
from engine.rules.state import State
from engine.ruleset import combat_kind
from engine.ruleset.resolution import AgainstResolution

DOCUMENT = fixture_json("rulesets/against-d100-fight.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, fixture_json("parties/against-d100-fight.json"))
FIGHT = '[combat: op="start" foe="Cultist" role="thug"]'  # tier 1: defence 5, attack 40
DRAWS = 20_000


def fighting(state: State = START) -> State:
    after, answers = answer(GAME, state, FIGHT)
    assert answers[0].ok, answers
    return after


def with_fighting(state: State, value: int) -> State:
    """Harvey with a Fighting of ``value``."""
    harvey = state.characters[0]
    skills = {**harvey.skills, "fighting": {"tier": "base", "bonus": value}}
    return state.with_character(0, harvey.model_copy(update={"skills": skills}))


def exact(threshold: int, bonus: int = 0) -> Counter[str]:
    """CHK-RA-A5..A8, A11, OQ-CHK-36, enumerated: the weight of miss, hit and critical of one
    attack read against ``threshold`` with the ruleset's criticals — one d100 (100 faces), or
    a shared units die and 1 + |bonus| tens dice keeping the lowest (+) or highest (-)."""
    cases: list[int] = []
    if not bonus:
        cases = list(range(1, 101))
    else:
        for units in range(10):
            for tens in product(range(10), repeat=1 + abs(bonus)):
                candidates = [10 * t + units or 100 for t in tens]
                cases.append(min(candidates) if bonus > 0 else max(candidates))
    weights: Counter[str] = Counter()
    for roll in cases:
        critical = roll == 1
        fumble = roll == 100 or (roll >= 96 and threshold < 50)
        weights["critical" if critical else "miss" if fumble or roll > threshold
                else "hit"] += 1
    return weights


# --- exact distributions (chi-square against enumeration) ------------------------------------

@pytest.mark.parametrize(("skill", "defence", "lean", "threshold"), [
    (55, 5, 0, 55),     # Harvey: Fighting 55 + Knife 5 - defence 5
    (55, 30, 0, 30),    # below 50: 96..99 are fumbles too
    (100, 0, 0, 105),   # above 100: only the fumble on 100 misses
    (55, 30, 1, 30),    # an edge: one bonus tens die, the lower result kept (CHK-RA-17)
    (55, 30, -1, 30),   # a penalty tens die, the higher kept
])
def test_chk_ra_a8_an_attack_hits_crits_and_misses_as_the_check_does(skill, defence, lean,
                                                                     threshold) -> None:
    """CHK-RA-A1..A8, CHK-RA-15, CHK-RA-17, CMB-ATK-A4: 20,000 attacks of the engine's own
    check against the enumerated distribution."""
    state = fighting(with_fighting(START, skill))
    view = SheetView(GAME, state.characters[0], state)
    built = attack_read(GAME, view, "Harvey", 5, defence, lean)
    assert built is not None
    res, read = built
    assert isinstance(res, AgainstResolution)
    stream = Stream(state.seed, (0,), "chi-square")
    seen: Counter[str] = Counter()
    for _ in range(DRAWS):
        rolled = against.resolve(res, read, stream)
        seen[read_result(res, rolled)] += 1
    assert rolled.dc == threshold
    weights = exact(threshold, lean)
    kinds = [k for k in ("miss", "hit", "critical") if weights[k]]
    total = sum(weights.values())
    assert sum(seen[k] for k in kinds) == DRAWS
    assert chisquare([seen[k] for k in kinds],
                     [DRAWS * weights[k] / total for k in kinds]).pvalue > 1e-4


def test_chk_ra_a11_the_enumeration_matches_the_rule_by_hand() -> None:
    # one d100 at T=55: 1 critical, 54 hits (2..55), 45 misses (56..100)
    assert exact(55) == Counter({"critical": 1, "hit": 54, "miss": 45})
    # T=30 < 50: 96..100 fumble but miss anyway; at T=105 only 100 misses
    assert exact(30) == Counter({"critical": 1, "hit": 29, "miss": 70})
    assert exact(105) == Counter({"critical": 1, "hit": 98, "miss": 1})


# --- the pure rules ---------------------------------------------------------------------------

@pytest.mark.parametrize(("success", "critical", "result"), [
    (True, None, "hit"), (False, None, "miss"), (True, "success", "critical"),
    (False, "failure", "miss"), (True, "failure", "miss")])
def test_chk_ra_15_criticals_decide_before_the_target_number(success, critical, result) -> None:
    assert against_result(success, critical) == result


def test_the_defence_is_taken_off_the_target_number_held_like_a_dc_shift() -> None:
    """CHK-RA-8, CHK-RA-A4: the shift is held to -100..100."""
    assert target_number(60, 5) == 55 and defence_shift(5) == -5
    assert defence_shift(500) == -100 and defence_shift(-500) == 100
    assert target_number(60, -10) == 70  # a negative defence makes the target easier


def test_an_edge_is_a_tens_die_only_where_the_ruleset_has_tens() -> None:
    res = GAME.ruleset.resolution
    assert isinstance(res, AgainstResolution) and res.tens is not None
    assert (edge_bonus(res, 1), edge_bonus(res, -1), edge_bonus(res, 0)) == (1, -1, 0)
    plain = res.model_copy(update={"tens": None})
    assert edge_bonus(plain, 1) == 0


def test_chk_ra_17_an_edge_is_recorded_as_its_tens_die() -> None:
    """CMB-MOD-1 read as CHK-RA-17: advantage rolls a bonus tens die (two tens dice and a
    shared units die), the record says so."""
    state = fighting()
    view = SheetView(GAME, state.characters[0], state)
    for lean, tens in ((1, 1), (-1, -1)):
        rolled = attack_roll(GAME, view, "Harvey", 5, 5, 0, TurnContext(state.seed, (0, 1)),
                             lean)
        assert rolled is not None
        assert recorded(GAME, rolled[0]) == {"threshold": 55, "against": "at-most",
                                             "tens": tens}
        assert len(rolled[0].rolls) == 3  # the units die, then two tens dice
    plain = attack_roll(GAME, view, "Harvey", 5, 5, 0, TurnContext(state.seed, (0, 1)))
    assert plain is not None and "tens" not in recorded(GAME, plain[0])


# --- a fight: the records ----------------------------------------------------------------------

def test_cmb_gen_1_the_ruleset_fights_by_formula_with_the_roll_against_attack() -> None:
    assert combat_kind(GAME.ruleset) == "formula"
    state = fighting()
    assert one(state, "Cultist").defence == 5 and one(state, "Cultist").attack == 40


def test_cmb_turn_15_initiative_is_the_margin_of_the_check_best_roll_first() -> None:
    """CMB-TURN-2/3/15, OQ-CHK-37: the Dodge check (a hero's sheet number; a foe's template
    ability modifier, 40 for a thug) read as a margin, so a lower roll goes first."""
    _, answers = answer(GAME, START, FIGHT.replace('"]', '" count="2"]'))
    order = answers[0].record["order"]
    numbers = {"Harvey": 35, "Lydia": 50, "Cultist 1": 40, "Cultist 2": 40}
    for row in order:
        assert row["initiative"] == numbers[row["name"]] - row["rolls"][0]
    keys = [(-r["initiative"], r["side"] != "party") for r in order]
    assert keys == sorted(keys)


def test_a_heros_attack_reads_its_skill_plus_to_hit_less_the_foes_defence() -> None:
    """CHK-RA-2/3 (the skill's sheet number), CHK-RA-9/10 (the record's number and against),
    CMB-ATK-A3 (the weapon's toHit added)."""
    state = fighting()
    _, answers = answer(GAME, state, '[attack: who="Harvey" target="Cultist"]', (0, 1))
    record = answers[0].record
    assert answers[0].ok
    assert (record["threshold"], record["against"], record["modifier"]) == (55, "at-most", 5)
    assert record["total"] == record["rolls"][0] and record["defence"] == 5
    assert f"1d100 → {record['total']} ≤ 55" in answers[0].text
    assert record["result"] == _read(record["total"], 55)


def test_a_foes_attack_reads_its_template_attack_less_the_heros_defence() -> None:
    """CMB-ATK-6/7, CMB-TPL-5: a thug of tier 1 attacks at 40; Harvey's defence is
    floor(STR 60 / 20) = 3, so it rolls against 37."""
    state = fighting()
    after, answers = answer(GAME, state, '[attack: who="Cultist" target="Harvey"]', (0, 1))
    record = answers[0].record
    assert (record["threshold"], record["defence"], record["modifier"]) == (37, 3, 40)
    health = after.characters[0].pools.get("health", 10)
    assert health == 10 - record["damage"]
    assert record["result"] == _read(record["total"], 37)


def _read(roll: int, threshold: int) -> str:
    """The spec's reading of one d100 under the fixture's criticals (CHK-RA-A8)."""
    if roll == 1:
        return "critical"
    fumble = roll == 100 or (roll >= 96 and threshold < 50)
    return "miss" if fumble or roll > threshold else "hit"


def _turn_with(state: State, wanted: str, name: str = "Harvey", defence: int = 5) -> int:
    """The first reply (0, n) whose attack by ``name`` rolls ``wanted`` (searched through the
    engine's own attack with the key a fight uses)."""
    hero = state.character_index(name)
    view = SheetView(GAME, state.characters[hero] if hero is not None else None, state)
    modifier = 5 if name == "Harvey" else 40
    for n in range(1, 5000):
        rolled = attack_roll(GAME, view, name, modifier, defence, 0,
                             TurnContext(state.seed, (0, n)))
        assert rolled is not None
        if rolled[1] == wanted:
            return n
    raise AssertionError(f"no {wanted} found")


def test_cmb_atk_5_a_critical_success_doubles_the_damage_dice() -> None:
    state = fighting()
    turn = _turn_with(state, "critical")
    _, answers = answer(GAME, state, '[attack: who="Harvey" target="Cultist"]', (0, turn))
    record = answers[0].record
    assert record["result"] == "critical" and record["total"] == 1
    assert len(record["damageRolls"]) == 1 and len(record["damageRolls"][0]) == 2  # 1d4 → 2d4
    assert record["damage"] == sum(record["damageRolls"][0])


def test_chk_ra_15_a_critical_failure_misses_even_under_the_number() -> None:
    state = fighting(with_fighting(START, 100))  # 100 + 5 - 5 = 100: only a 100 fails
    hero = state.characters[0]
    view = SheetView(GAME, hero, state)
    for n in range(1, 5000):
        rolled = attack_roll(GAME, view, "Harvey", 5, 5, 0, TurnContext(state.seed, (0, n)))
        assert rolled is not None
        if rolled[0].value == 100:
            break
    _, answers = answer(GAME, state, '[attack: who="Harvey" target="Cultist"]', (0, n))
    record = answers[0].record
    assert (record["total"], record["threshold"], record["result"]) == (100, 100, "miss")
    assert record["damage"] == 0


def test_a_hit_deals_the_weapons_damage_and_can_fell_the_foe() -> None:
    state = fighting()
    turn = _turn_with(state, "hit")
    after, answers = answer(GAME, state, '[attack: who="Harvey" target="Cultist"]', (0, turn))
    record = answers[0].record
    assert record["result"] == "hit"
    assert record["damage"] == sum(record["damageRolls"][0]) and 1 <= record["damage"] <= 4
    assert one(after, "Cultist").hp == 8 - record["damage"]


# --- determinism ------------------------------------------------------------------------------

def test_a_swipe_or_a_reordered_reply_rolls_the_same() -> None:
    """DESIGN.md "Dice": an attack is keyed by the reply, the attacker and its strike number."""
    state = fighting()
    reply = '[attack: who="Harvey" target="Cultist"] [attack: who="Cultist" target="Harvey"]'
    swapped = ('The cultist lunges. [attack: who="Cultist" target="Harvey"] Harvey answers. '
               '[attack: who="Harvey" target="Cultist"]')
    first, one_way = answer(GAME, state, reply, (0, 3))
    again, same = answer(GAME, state, reply, (0, 3))
    _, other_way = answer(GAME, state, swapped, (0, 3))
    assert [a.record for a in one_way] == [a.record for a in same]
    assert first == again
    by_attacker = {a.record["attacker"]: a.record["rolls"] for a in other_way}
    assert by_attacker == {a.record["attacker"]: a.record["rolls"] for a in one_way}


# --- refusals (the state unchanged) -------------------------------------------------------------

@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Harvey" target="Cultist" with="Shotgun"]', reasons.UNKNOWN_WEAPON),
    ('[attack: who="Harvey" target="Nobody"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Harvey" target="Cultist" range="far"]', reasons.OUT_OF_REACH),
])
def test_a_refused_attack_changes_nothing(text, reason) -> None:
    state = fighting()
    after, answers = answer(GAME, state, text, (0, 1))
    assert answers[0].reason == reason and after == state


def test_a_second_attack_past_the_budget_is_no_time_and_changes_nothing() -> None:
    state = fighting()
    once, _ = answer(GAME, state, '[attack: who="Harvey" target="Cultist"]', (0, 1))
    both, answers = answer(GAME, state, '[attack: who="Harvey" target="Cultist"] '
                           '[attack: who="Harvey" target="Cultist"]', (0, 1))
    assert answers[1].reason == reasons.NO_TIME
    if one(once, "Cultist").hp:  # unless the first felled it (then target-down)
        assert both == once


def test_the_attack_skill_is_combat_only() -> None:
    """CMB-ATK-2."""
    after, answers = answer(GAME, START, '[skill_check: skill="fighting" dc="0"]')
    assert answers[0].reason == reasons.COMBAT_ONLY and after == START


def test_attack_difficulty_is_refused_at_import_outside_symbol_pool_combat() -> None:
    """CHK-SYM-35: ``combat.attack.difficulty`` is symbol-pool combat's key."""
    found = problems_of(copy.deepcopy(DOCUMENT), put(("combat", "attack", "difficulty"), 2))
    assert found == ['/combat/attack/difficulty: "difficulty" is for symbol-pool combat (the '
                     "opposing dice of an attack)"]
