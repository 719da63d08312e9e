"""Pool fights (issue 25): formula combat in a ``dice-pool`` ruleset counts successes against
the defence (spec/items.md glossary "Sum fight / pool fight", §9 ITM-WPN-11/13, §11
ITM-MODE-4/5, ITM-FLOOR-2/3, §12 ITM-ARM-3, §12.3 ITM-HARD-1..4; spec/combat.md A.2 read for
pools, OQ-CMB-2, OQ-26), on fixtures/rulesets/gravewatch-fights.json (d10, target 7 in 5..9,
the spending style with hardness)."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from fractions import Fraction
from typing import Any

import pytest
from helpers import answer, fixture_json, one, problems_of, put
from scipy.stats import chisquare

from engine import TurnContext, load_ruleset, start_state
from engine.actions.fight.pool import roll_pool
from engine.rules import reasons
from engine.rules.fight.pool import (
    below_hardness,
    damage_dice,
    foe_called,
    hardness_line,
    per_die_target,
    pool_damage,
    pool_result,
    pool_size,
    successes_distribution,
    taken,
)
from engine.rules.sheet import SheetView
from engine.rules.state import State, plain_canonical
from engine.ruleset import parse_formula
from engine.ruleset.resolution import PoolResolution
from engine.text.fight.block import combat_block

DOCUMENT = fixture_json("rulesets/gravewatch-fights.json")
PARTY = fixture_json("parties/gravewatch-fights.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
WARDEN = '[combat: op="start" foe="Warden" role="warden" tier="1"]'
DEAD = '[combat: op="start" foe="Dead" role="standard" tier="1"]'
SPADE = 5  # index of the Grave spade in the kit catalog


def res_of(game: Any = GAME) -> PoolResolution:
    res = game.ruleset.resolution
    assert isinstance(res, PoolResolution)
    return res


def changed(*mutations: Any) -> Any:
    document = copy.deepcopy(DOCUMENT)
    for mutate in mutations:
        mutate(document)
    return load_ruleset(document)


def spade(document: Any) -> dict[str, Any]:
    return document["catalogs"][0]["entries"][SPADE]["item"]["attack"]


def fighting(text: str, game: Any = GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def strike_until(game: Any, state: State, text: str, wanted: Any, most: int = 60
                 ) -> tuple[State, dict[str, Any], str]:
    """The first reply turn whose one strike's record ``wanted`` accepts (the dice differ per
    turn); the state after it, its record and its text."""
    for turn in range(1, most):
        after, answers = answer(game, state, text, (turn, 0))
        assert answers[0].ok, answers[0]
        if wanted(answers[0].record):
            return after, answers[0].record, answers[0].text
    raise AssertionError(f"no strike in {most} turns matched")


# --- the arithmetic ---------------------------------------------------------------------------

def test_itm_wpn_11_the_weapons_own_target_replaces_the_pools() -> None:
    res = res_of()
    assert per_die_target(res) == 7
    assert per_die_target(res, 6) == 6  # the Gravewatch spade counts each die from 6


def test_itm_mode_5_a_modes_target_shifts_and_is_held_to_the_range() -> None:
    res = res_of()
    assert per_die_target(res, 6, 1) == 7  # +1 is harder, from the weapon's own target
    assert per_die_target(res, None, -1) == 6  # else from the pool's
    assert per_die_target(res, 9, 3) == 9 and per_die_target(res, 5, -4) == 5


def test_itm_mode_5_a_fixed_target_ignores_the_weapon_and_the_mode() -> None:
    fixed = res_of().model_copy(update={"target": res_of().target.model_copy(
        update={"min": 7, "max": 7})})
    assert per_die_target(fixed, 6, 2) == 7


def test_itm_mode_4_the_dice_are_held_to_the_pools_limits() -> None:
    res = res_of()
    assert pool_size(res, 5) == 5
    assert pool_size(res, 40) == res.pool.max == 10
    assert pool_size(res, -3) == res.pool.min


@pytest.mark.parametrize(("formula", "dice"), [
    ("2d6", 2), ("1d6 + 3", 1), ("2d6 + 1d4", 3), ("4", 0), ("d8", 1)])
def test_oq_26_damage_dice_count_the_dice_not_their_faces(formula: str, dice: int) -> None:
    parsed = parse_formula(formula)
    assert not isinstance(parsed, str) and hasattr(parsed, "tree")
    assert damage_dice(parsed) == dice  # type: ignore[arg-type]
    assert damage_dice(None) == 0


def test_oq_cmb_2_a_strike_hits_when_its_successes_reach_the_defence() -> None:
    assert pool_result(2, None, 2) == "hit"  # ≥, as a pool check reaches its dc
    assert pool_result(1, None, 2) == "miss"
    assert pool_result(0, None, 0) == "miss"  # a pool check needs at least one success
    assert pool_result(5, "success", 2) == "critical"  # CHK-POOL-24: exceptional
    assert pool_result(0, "failure", 0) == "miss"  # CHK-POOL-20: a botch misses


def test_itm_wpn_13_a_hit_deals_its_successes_and_its_extra_dice_successes() -> None:
    dealt = pool_damage(3, [7, 2], target=6, reduction=0)
    assert (dealt.successes, dealt.extra, dealt.total) == (3, 1, 4)
    assert pool_damage(3, [10], target=6, reduction=0, double_from=10).total == 5  # CHK-POOL-12


def test_itm_floor_2_reduction_comes_off_then_the_floor_raises_it() -> None:
    assert pool_damage(2, [1], 6, reduction=1).total == 1
    assert pool_damage(1, [], 6, reduction=4).total == 0  # never below 0
    raised = pool_damage(1, [], 6, reduction=4, floor=2)
    assert raised.total == 2 and raised.raised
    assert not pool_damage(3, [], 6, reduction=0, floor=2).raised


def test_itm_hard_2_the_exact_log_string() -> None:
    assert below_hardness(5, 6) and not below_hardness(6, 6)
    assert hardness_line("Ada's Grave spade", foe_called("Warden"), 5, 6) == (
        "Ada's Grave spade lands on the warden with 5 dice, below a hardness of 6, and does "
        "nothing.")


def test_taking_moves_what_the_target_has_and_no_more() -> None:
    assert taken(2, 5, 3) == (5, 2)
    assert taken(2, 1, 3) == (3, 0)


def test_the_successes_distribution_is_the_enumeration_of_every_face() -> None:
    for dice, target, double in ((3, 7, None), (4, 6, 10), (2, 9, None), (0, 7, None)):
        brute: Counter[int] = Counter()
        for faces in itertools.product(range(1, 11), repeat=dice):
            brute[sum(0 if f < target else 2 if double and f >= double else 1
                      for f in faces)] += 1
        total = 10 ** dice
        assert successes_distribution(dice, target, 10, double) == {
            k: Fraction(v, total) for k, v in brute.items()}


def test_a_pool_attack_rolls_the_exact_successes_distribution() -> None:
    """≥ 20,000 strikes of 4 dice at target 6 through the attack check (the engine's dice and
    the pool's own counting), chi-square against the enumeration."""
    view = SheetView(GAME, None, START)
    draws = 20_000
    seen = Counter(int(roll_pool(GAME, view, "Warden", 4, 6, 1, 0,
                                 TurnContext(START.seed, (3, n)))[0].value)
                   for n in range(draws))
    exact = successes_distribution(4, 6, 10)
    kinds = sorted(exact)
    assert set(seen) <= set(kinds)
    assert chisquare([seen[k] for k in kinds],
                     [float(exact[k] * draws) for k in kinds]).pvalue > 1e-4


# --- hardness and joining -----------------------------------------------------------------------

def test_itm_hard_1_a_creature_gives_its_own_hardness_and_reduction_at_its_tier() -> None:
    state = fighting(WARDEN)
    assert (one(state, "Warden").hardness, one(state, "Warden").reduction) == (6, 1)
    state = fighting('[combat: op="start" foe="Warden" role="warden" tier="3"]')
    assert one(state, "Warden").hardness == 8


def test_itm_hard_1_4_a_hero_reads_its_hardness_from_its_sheet_as_it_joins() -> None:
    state = fighting(WARDEN)
    assert one(state, "Ada").hardness == 1  # the worn Oilskin coat's cover, through itemStat
    assert one(state, "Mira").hardness == 0


def test_itm_hard_2_a_strike_below_hardness_hits_and_does_nothing() -> None:
    state = fighting(WARDEN)
    after, record, text = strike_until(GAME, state, '[attack: who="Ada" target="Warden"]',
                                       lambda r: r["result"] != "miss")
    assert record["dice"] == 5 and record["hardness"] == 6 and record["damage"] == 0
    assert ("Ada's Grave spade lands on the warden with 5 dice, below a hardness of 6, and "
            "does nothing.") in text
    assert one(after, "Warden").hp == one(state, "Warden").hp
    assert "events" not in record


def test_itm_hard_2_a_foes_strike_below_a_heros_hardness_does_nothing() -> None:
    game = changed(put(("combat", "pool", "hardness"), {"const": 9}))
    state = fighting(DEAD, game)
    assert one(state, "Ada").hardness == 9
    after, record, text = strike_until(game, state, '[attack: who="Dead" target="Ada"]',
                                       lambda r: r["result"] != "miss")
    assert record["damage"] == 0 and record["hardness"] == 9
    assert "Dead's strike lands on Ada with 3 dice, below a hardness of 9, and does nothing." \
        in text
    assert after.characters[0].pools == state.characters[0].pools


def test_itm_hard_3_only_a_spending_style_may_have_hardness() -> None:
    taking = problems_of(DOCUMENT, put(("combat", "pool", "style"), "taking"))
    assert '/combat/pool/hardness: hardness needs combat.pool.style "spending" (ITM-HARD-3)' \
        in taking
    assert '/combat/templates/0/combat/hardness: hardness needs combat.pool.style "spending"' \
        ' (ITM-HARD-3)' in taking
    assert problems_of(DOCUMENT) == []


def test_combat_pool_needs_a_dice_pool_resolution() -> None:
    skirmish = fixture_json("rulesets/skirmish.json")
    found = problems_of(skirmish, put(("combat", "pool"), {"style": "taking"}))
    assert '/combat/pool: combat.pool is for a "dice-pool" resolution, not "dice-sum"' in found


def test_itm_wpn_11_a_per_die_target_needs_a_variable_pool_target() -> None:
    found = problems_of(DOCUMENT, put(("resolution", "target"),
                                      {"default": 7, "min": 7, "max": 7}))
    assert any("toHit/target" in p for p in found)


# --- a hero's strike ------------------------------------------------------------------------------

def test_pool_fight_a_heros_hit_deals_successes_plus_extra_dice_less_reduction() -> None:
    """Unarmed, Ada rolls the attack check's own pool (Brawl: Sinew 5 + Sworn 1 = 6 dice) at
    the pool's 7; 6 dice are not below the warden's hardness 6, so the hit deals its
    successes and 1 more die (the system damage 1d6, OQ-26) less the warden's reduction 1."""
    state = fighting(WARDEN)
    after, record, _ = strike_until(GAME, state,
                                    '[attack: who="Ada" target="Warden" with="unarmed"]',
                                    lambda r: r["result"] == "hit")
    assert record["dice"] == 6 and record["threshold"] == 7 and len(record["rolls"]) == 6
    successes = sum(f >= 7 for f in record["rolls"])
    assert record["successes"] == successes >= record["defence"] == 1
    extra = record["damageRolls"][0]
    assert len(extra) == 1
    assert record["damage"] == max(successes + sum(f >= 7 for f in extra) - 1, 0)
    assert one(after, "Warden").hp == 8 - record["damage"]


def test_itm_wpn_11_the_spade_counts_from_its_own_target() -> None:
    state = fighting(DEAD)
    _, record, _ = strike_until(GAME, state, '[attack: who="Ada" target="Dead"]',
                                lambda r: True)
    assert record["threshold"] == 6 and record["dice"] == 5  # toHit: Sinew 5 dice
    assert record["successes"] == sum(f >= 6 for f in record["rolls"])


def test_itm_mode_4_5_a_modes_dice_and_target() -> None:
    def heavy(document: Any) -> None:
        spade(document)["modes"] = [{"id": "heavy", "label": "Heavy swing", "toHit": 2,
                                     "target": 1}]
    game = changed(heavy)
    state = fighting(DEAD, game)
    _, record, _ = strike_until(game, state,
                                '[attack: who="Ada" target="Dead" mode="heavy"]', lambda r: True)
    assert (record["dice"], record["threshold"], record["mode"]) == (7, 7, "heavy")


def test_itm_arm_3_a_worn_change_to_attacks_is_dice() -> None:
    def ring(document: Any) -> None:
        document["catalogs"][0]["entries"][6]["item"]["worn"] = {
            "modifiers": [{"to": "attacks", "flat": -1}]}
    game = changed(ring)
    state = fighting(DEAD, game)
    _, record, text = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                   lambda r: True)
    assert record["dice"] == 4 and len(record["rolls"]) == 4
    assert "Oilskin coat: -1 die" in record["affectedBy"] and "Oilskin coat: -1 die" in text



@pytest.mark.parametrize(("at_least", "dice"), [(6, 4), (5, 5)])
def test_itm_req_6_itm_arm_7_an_unmet_requirement_counts_in_a_fight(at_least: int,
                                                                   dice: int) -> None:
    """ITM-REQ-6 (the fight half, ITM-ARM-7): Ada's Sinew 5 falls short of a spade that asks
    for 6, so its ``otherwise`` takes a die off her strike, named after the spade; met
    (5), it changes nothing. (The check half: tests/engine/checks/test_checks_items.py.)"""
    def demanding(document: Any) -> None:
        document["catalogs"][0]["entries"][SPADE]["item"]["requires"] = [{
            "value": {"abilityScore": "sinew"}, "atLeast": at_least,
            "otherwise": {"modifiers": [{"to": "attacks", "flat": -1}]}}]
    game = changed(demanding)
    state = fighting(DEAD, game)
    _, record, _ = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                lambda r: True)
    assert record["dice"] == dice and len(record["rolls"]) == dice
    assert ("Grave spade: -1 die" in record.get("affectedBy", [])) is (dice == 4)

def test_itm_floor_2_outside_the_spending_style_the_floor_raises_damage() -> None:
    """The spade's floor 1 against a foe whose reduction eats every success."""
    game = changed(put(("combat", "pool"), {"reduction": {"derived": "armour"}}),
                   drop_hardness, put(("combat", "templates", 0, "combat", "reduction"), "20"))
    state = fighting(DEAD, game)
    _, record, text = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                   lambda r: r["result"] != "miss")
    assert record["damage"] == 1 and record["floor"] == 1
    assert "raised to 1 (at least 1 on a hit)" in text


def test_itm_floor_3_a_spending_strike_is_never_raised() -> None:
    game = changed(put(("combat", "templates", 0, "combat", "reduction"), "20"))
    state = fighting(DEAD, game)
    _, record, _ = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                lambda r: r["result"] != "miss")
    assert record["damage"] == 0 and "floor" not in record


def drop_hardness(document: Any) -> None:
    for template in document["combat"]["templates"]:
        template["combat"].pop("hardness", None)


def with_initiative(state: State, **numbers: int) -> State:
    assert state.encounter is not None
    combatants = tuple(c.model_copy(update={"initiative": numbers[c.name]})
                       for c in state.encounter.combatants)
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": combatants})})


def test_taking_style_a_hit_takes_initiative_instead_of_damage_and_no_on_hit() -> None:
    """Glossary "Spending / taking style", ITM-ONHIT-4."""
    def marks(document: Any) -> None:
        spade(document)["onHit"] = [{"condition": document["conditions"][0]["id"]}]
    game = changed(put(("combat", "pool"), {"style": "taking"}), drop_hardness, marks)
    state = with_initiative(fighting(DEAD, game), Ada=0, Dead=4, Mira=2)
    before = one(state, "Ada").initiative, one(state, "Dead").initiative
    after, record, _ = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                    lambda r: r["result"] != "miss")
    moved = min(record["successes"], before[1])
    assert moved > 0
    assert record["damage"] == 0 and "onHit" not in record
    assert record["initiative"] == {"Ada": before[0] + moved, "Dead": before[1] - moved}
    assert one(after, "Dead").hp == one(state, "Dead").hp
    assert one(after, "Dead").conditions == ()
    assert "initiative:Ada" in record["events"]
    assert after.encounter is not None  # CMB-TURN-3: highest first now
    numbers = [c.initiative for c in after.encounter.combatants]
    assert numbers == sorted(numbers, reverse=True)
    assert one(after, "Ada").initiative == before[0] + moved


def test_itm_wpn_13_a_weapon_without_damage_dice_adds_no_extra_dice() -> None:
    game = changed(lambda d: spade(d)["damage"].pop("dice"))
    state = fighting(DEAD, game)
    _, record, _ = strike_until(game, state, '[attack: who="Ada" target="Dead"]',
                                lambda r: r["result"] == "hit")
    assert record["damageRolls"] == [[]]
    assert record["damage"] == record["successes"]


# --- a foe's strike --------------------------------------------------------------------------------

def test_cmb_atk_7_a_foes_attack_is_its_pool_and_the_heros_armour_reduces_it() -> None:
    state = fighting(WARDEN)
    after, record, _ = strike_until(GAME, state, '[attack: who="Warden" target="Ada"]',
                                    lambda r: r["result"] == "hit")
    assert record["dice"] == 4 == one(state, "Warden").attack  # the template's attack
    assert record["threshold"] == 7 and record["defence"] == 1  # 1 + floor(Wits 2 / 4)
    extra = record["damageRolls"][0]
    assert len(extra) == 2  # the template's 2d6: 2 more dice (OQ-26)
    assert record["reduction"] == 1  # the worn Oilskin coat's cover
    assert record["damage"] == max(record["successes"] + sum(f >= 7 for f in extra) - 1, 0)
    assert after.characters[0].pools["health"] == 8 - record["damage"]


# --- refusals, determinism -------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Ada" target="Wight"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Ada" target="Dead" mode="sweep"]', reasons.UNKNOWN_MODE),
    ('[attack: who="Ada" target="Dead" with="Flame tongue"]', reasons.UNKNOWN_WEAPON),
])
def test_a_refused_pool_strike_changes_nothing(text: str, reason: str) -> None:
    state = fighting(DEAD)
    after, answers = answer(GAME, state, text, (1, 0))
    assert not answers[0].ok and answers[0].reason == reason
    assert plain_canonical(after) == plain_canonical(state)


def test_a_swipe_that_rewords_the_reply_rolls_the_same() -> None:
    state = fighting(DEAD)
    tags = '[attack: who="Ada" target="Dead"] [attack: who="Dead" target="Mira"]'
    first, one_way = answer(GAME, state, "The dead lurch. " + tags, (1, 0))
    second, other = answer(GAME, state, tags + " Fog rolls in over the ditch.", (1, 0))
    assert [a.record for a in one_way] == [a.record for a in other]
    assert plain_canonical(first) == plain_canonical(second)


def test_itm_hard_1_the_combat_block_shows_hardness_and_reduction() -> None:
    state = fighting(WARDEN)
    block = combat_block(GAME, state)
    assert "hp 8/8; defence 1; hardness 6; reduction 1" in block  # the warden
    assert "defence 1; hardness 1" in block  # Ada in her Oilskin coat


def test_cmb_atk_5_a_critical_doubles_the_extra_damage_dice() -> None:
    """The pool's exceptional success (CHK-POOL-24) is the critical; OQ-CMB-3 read for pools:
    the damage expression's dice count twice."""
    game = changed(put(("resolution", "exceptional"), {"successes": 3}))
    state = fighting(WARDEN, game)
    _, record, _ = strike_until(game, state,
                                '[attack: who="Ada" target="Warden" with="unarmed"]',
                                lambda r: r["result"] == "critical")
    assert record["successes"] >= 3 and len(record["damageRolls"][0]) == 2
    _, plain, _ = strike_until(game, state,
                               '[attack: who="Ada" target="Warden" with="unarmed"]',
                               lambda r: r["result"] == "hit")
    assert plain["successes"] < 3 and len(plain["damageRolls"][0]) == 1


def test_taking_style_a_foes_hit_takes_the_heros_initiative_and_no_blood() -> None:
    game = changed(put(("combat", "pool"), {"style": "taking"}), drop_hardness)
    state = with_initiative(fighting(DEAD, game), Ada=0, Dead=0, Mira=3)
    after, record, _ = strike_until(game, state, '[attack: who="Dead" target="Mira"]',
                                    lambda r: r["result"] != "miss")
    moved = min(record["successes"], 3)
    assert record["damage"] == 0 and record["initiative"] == {"Dead": moved, "Mira": 3 - moved}
    assert after.characters[1].pools == state.characters[1].pools
    assert "initiative:Dead" in record["events"]


def test_itm_istat_13_item_stats_count_in_a_derived_value_a_defence_and_a_reduction() -> None:
    """ITM-ISTAT-13: ``itemStat`` is read wherever a number is read — Gravewatch's derived
    Armour (the worn cover) in a hero's defence formula and as its damage reduction (and
    hardness), which the loader accepts (only ITM-ISTAT-12's places refuse it). Ada's oilskin
    coat gives cover 1: worn, Armour 1, defence 1 + floor(2 / 4) + 1 = 2, reduction 1;
    stowed, 0, 1 and 0. (This format has no ``adjust`` or skill ``cap`` keys, and initiative
    is a check of a skill, which reads no value reference: docs/items-rules.md.)"""
    from engine.actions.fight.pool import hero_reduction
    from engine.rules.fight.formula import hero_defence
    game = changed(put(("combat", "attack", "defence"), "1 + floor(@wits / 4) + @armour"))
    worn = START
    coat = next(i for i, s in enumerate(worn.characters[0].bag) if s.item == "kit/oilskin-coat")
    bag = list(worn.characters[0].bag)
    bag[coat] = bag[coat].model_copy(update={"equipped": False})
    stowed = worn.with_character(0, worn.characters[0].model_copy(update={"bag": tuple(bag)}))
    for state, armour in ((worn, 1), (stowed, 0)):
        assert SheetView(game, state.characters[0], state).derived("armour") == armour
        assert hero_defence(game, state, 0) == 1 + armour
        assert hero_reduction(game, state, 0) == armour
