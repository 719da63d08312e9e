"""Narrative combat's pure rules (spec/combat.md Part B; DESIGN.md "Narrative combat"):
exact grade distributions, margin bands, multipliers, gap labels, momentum, fatigue bands,
effort prices and the defence roll, each against the spec's and DESIGN's numbers."""

from __future__ import annotations

from collections import Counter
from fractions import Fraction

import pytest

from engine.dice import Stream
from engine.rules.fight.narrative import (
    GRADES,
    MOMENTUM,
    MULTIPLIERS,
    better,
    d100,
    defence_chance,
    defended,
    effort_cost,
    effort_damage,
    faded,
    fatigue,
    gap_label,
    gap_term,
    grade_of,
    grade_word,
    half_up,
    meaningless,
    overexertion,
    power,
    reachable,
)


def exact_grades(chance: int) -> dict[str, Fraction]:
    """OQ-D100-4: P(grade) for a whole chance is the count of rolls 1..100 in its band / 100."""
    counts = Counter(grade_of(chance - roll) for roll in range(1, 101))
    return {g: Fraction(counts[g], 100) for g in GRADES}


@pytest.mark.parametrize(("chance", "expected"), [
    (80, {"critical": 55, "clean": 13, "solid": 12, "glancing": 9, "blocked": 10, "miss": 1,
          "backfire": 0}),
    (65, {"critical": 40, "clean": 13, "solid": 12, "glancing": 9, "blocked": 10, "miss": 10,
          "backfire": 6}),
    (20, {"critical": 0, "clean": 8, "solid": 12, "glancing": 9, "blocked": 10, "miss": 10,
          "backfire": 51}),
    (130, {"critical": 100, "clean": 0, "solid": 0, "glancing": 0, "blocked": 0, "miss": 0,
           "backfire": 0}),  # OQ-D100-2: the chance is not clamped
])
def test_d100_grade_1_the_exact_grade_distribution_for_a_chance(chance, expected) -> None:
    assert exact_grades(chance) == {g: Fraction(n, 100) for g, n in expected.items()}


def test_d100_atk_a4_the_engines_d100_matches_the_exact_distribution() -> None:
    """Chi-square of 20,000 d100s through the engine's own die against P(grade) at 65 %
    (6 degrees of freedom; 22.46 is the 0.1 % bound)."""
    stream = Stream("narrative-chi", (0, 0), "d100")
    draws = 20_000
    rolls = [d100(stream) for _ in range(draws)]
    assert min(rolls) == 1 and max(rolls) == 100
    seen = Counter(grade_of(65 - r) for r in rolls)
    expected = exact_grades(65)
    chi = sum((seen[g] - draws * p) ** 2 / (draws * p) for g, p in expected.items() if p)
    assert chi < 22.46


@pytest.mark.parametrize(("margin", "grade"), [
    (99, "critical"), (25, "critical"), (24, "clean"), (12, "clean"), (11, "solid"),
    (0, "solid"), (-1, "glancing"), (-9, "glancing"), (-10, "blocked"), (-19, "blocked"),
    (-20, "miss"), (-29, "miss"), (-30, "backfire"), (-120, "backfire")])
def test_d100_grade_1_margin_bands_and_m_0_is_solid(margin, grade) -> None:
    assert grade_of(margin) == grade


def test_d100_grade_2_3_multipliers_and_grade_5_order() -> None:
    assert [MULTIPLIERS[g] for g in GRADES] == [Fraction(7, 5), Fraction(23, 20), 1,
                                                 Fraction(1, 2), Fraction(1, 5), 0, 0]
    assert [better(g) for g in GRADES] == ["critical", "critical", "clean", "solid",
                                           "glancing", "blocked", "miss"]


@pytest.mark.parametrize(("value", "whole"), [
    (Fraction(23, 2), 12), (Fraction(5, 2), 3), (Fraction(49, 10), 5), (Fraction(41, 10), 4),
    (Fraction(0), 0)])
def test_damage_is_rounded_half_up(value, whole) -> None:
    assert half_up(value) == whole


@pytest.mark.parametrize(("rank", "points"), [
    ("D", 0), ("C", 10), ("B", 20), ("A", 30), ("S", 40), ("SS", 50), ("SSS", 60), ("X", 70),
    ("XX", 80)])
def test_d100_rank_1_2_ranks_are_power_points(rank, points) -> None:
    assert power(rank) == points


@pytest.mark.parametrize(("gap", "label", "term"), [
    (40, "Far beneath you.", 12), (12, "Far beneath you.", 12), (10, "Far beneath you.", 10),
    (9, "Advantage", 9), (3, "Advantage", 3), (2, "Even", 2), (0, "Even", 0), (-2, "Even", -2),
    (-3, "Disadvantage", -3), (-9, "Disadvantage", -9), (-10, "Suicide.", -10),
    (-19, "Suicide.", -10), (-20, "Cannot deal meaningful damage", -10),
    (-60, "Cannot deal meaningful damage", -10)])
def test_d100_rank_6_gap_labels_and_the_held_term(gap, label, term) -> None:
    """DESIGN.md: the label by the raw gap, the term held to −10..+12 (D100-HIT-2)."""
    assert (gap_label(gap), gap_term(gap)) == (label, term)
    assert meaningless(gap) == (gap <= -20)  # D100-RANK-5/7


@pytest.mark.parametrize(("current", "most", "band"), [
    (10, 10, 0), (7, 10, 0), (6, 10, -5), (5, 10, -5), (4, 10, -10), (3, 10, -10),
    (2, 10, -15), (0, 10, -15), (3, 4, 0), (2, 4, -5), (1, 4, -10), (0, 0, 0)])
def test_d100_hit_4_fatigue_is_the_highest_band_reached(current, most, band) -> None:
    assert fatigue(current, most) == band


def test_d100_mom_2_4_6_momentum_amounts_and_fading() -> None:
    assert MOMENTUM == {"critical": 3, "clean": 1, "solid": 0, "glancing": 0, "blocked": -1,
                        "miss": -1, "backfire": -4}
    assert [faded(m) for m in (3, 1, 0, -1, -4)] == [2, 0, 0, 0, -3]


@pytest.mark.parametrize(("grade", "defence", "after"), [
    ("critical", "critical", "miss"), ("solid", "clean", "miss"), ("backfire", "clean", "backfire"),
    ("critical", "solid", "glancing"), ("clean", "solid", "glancing"),
    ("blocked", "solid", "blocked"), ("solid", "glancing", "solid"),
    ("clean", "blocked", "clean"), ("solid", "miss", "clean"), ("blocked", "backfire", "glancing"),
    ("critical", "backfire", "critical")])
def test_d100_def_4_5_what_a_defence_makes_of_a_strike(grade, defence, after) -> None:
    assert defended(grade, defence) == after


def test_d100_def_6_each_further_strike_is_harder_to_meet() -> None:
    assert [defence_chance(80, 2, -5, met) for met in range(3)] == [77, 67, 57]
    assert defence_chance(65, -1, 0, 0) == 64


@pytest.mark.parametrize(("most", "below", "cost"), [
    (10, 0, 10), (10, 1, 1), (10, 2, 0), (4, 0, 4), (4, 1, 0), (100, 2, 1), (10, -1, 100)])
def test_d100_eff_4_5_the_whole_pool_at_ones_rank_a_tenth_per_rank_below(most, below, cost):
    assert effort_cost(most, below) == cost


def test_d100_eff_6_a_tired_fighter_reaches_less() -> None:
    assert reachable(10, 10, 3) == 3  # rank A, full: its own rank
    assert reachable(9, 10, 3) == 2  # a tenth (1) fits, the whole (10) does not
    assert reachable(0, 10, 3) == 1  # two ranks below costs 0.1, rounded to nothing
    assert reachable(0, 10, 0) is None


def test_d100_dmg_2_effort_hits_harder_with_diminishing_returns() -> None:
    assert [effort_damage(k) for k in (3, 2, 1, 0, -1, -2)] == [
        1, Fraction(11, 10), Fraction(13, 10), 2, Fraction(5, 2), 3]


@pytest.mark.parametrize(("over", "price"), [(0, None), (1, "rupture"), (2, "grave"),
                                             (3, "far"), (7, "far")])
def test_d100_over_1_the_price_of_pushing_by_how_far_over(over, price) -> None:
    assert overexertion(over, {"rupture": 1, "grave": 2, "far": 3}) == price


@pytest.mark.parametrize(("kind", "written", "word", "known"), [
    ("tactics", "Perfect", "perfect", True), ("tactics", "완벽", "perfect", True),
    ("tactics", "brilliant", "standard", False), ("tactics", "", "standard", True),
    ("risk", "무모함", "reckless", True), ("risk", "wild", "moderate", False),
    ("aim", "극한", "extreme", True), ("purpose", "제압", "subdue", True),
    ("purpose", "maim", "kill", False)])
def test_oq_d100_1_grade_words_korean_aliases_and_the_standard_fallback(kind, written, word,
                                                                         known) -> None:
    assert grade_word(kind, written) == (word, known)
