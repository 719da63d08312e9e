"""Each resolution kind's outcomes against an exact law (enumeration), chi-square over 20,000
engine draws from fixed seeds (conventions.md "Randomness")."""

from __future__ import annotations

import itertools
from collections import Counter
from fractions import Fraction
from typing import Any

from check_support import assert_law, convolve, draws, game, request, uniform

from engine.actions.checks import against, highest, outcomes, pool, symbols
from engine.actions.checks import sum as dice_sum
from engine.rules.checks.read import Rolled
from engine.ruleset.resolution import (
    AgainstResolution,
    HighestResolution,
    PoolResolution,
    SumResolution,
    SymbolResolution,
)

D6 = uniform(range(1, 7))


def _sure(rolled: Rolled | None) -> Rolled:
    assert rolled is not None
    return rolled


def _sum_game(**keys: Any) -> SumResolution:
    base = {"unmodified": None, "outcomes": None, "overrides": None}
    res = game("sum-2d6", **(base | keys)).ruleset.resolution
    assert isinstance(res, SumResolution)
    return res


def test_chk_sum_a10_two_d6_plus_the_sheet_number() -> None:
    res = _sum_game()
    g = game("sum-2d6")
    req = request(g, sheet=3, attrs={"dc": "9"})
    extra = draws(lambda s: _sure(dice_sum.resolve(res, req, s)), lambda r: r.value)
    assert_law(extra, {k + 3: p for k, p in convolve(D6, D6).items()})


def test_chk_sum_9_fudge_faces_have_the_law_of_fate() -> None:
    res = _sum_game(dice={"count": 4, "sides": 3, "faces": [-1, 0, 1]})
    req = request(game("sum-2d6"), attrs={"dc": "0"})
    fudge = uniform([-1, 0, 1])
    law = convolve(convolve(fudge, fudge), convolve(fudge, fudge))
    assert_law(draws(lambda s: _sure(dice_sum.resolve(res, req, s)), lambda r: r.value), law)


def test_chk_sum_a12_advantage_keeps_the_higher_total() -> None:
    res = _sum_game()
    req = request(game("sum-2d6"), attrs={"dc": "7"}, lean=1)
    two = convolve(D6, D6)
    law = convolve(two, two, max)
    assert_law(draws(lambda s: _sure(dice_sum.resolve(res, req, s)), lambda r: r.value), law)


def test_itm_chk_5_disadvantage_keeps_the_lower_total() -> None:
    res = _sum_game()
    req = request(game("sum-2d6"), attrs={"dc": "7"}, lean=-1)
    two = convolve(D6, D6)
    assert_law(draws(lambda s: _sure(dice_sum.resolve(res, req, s)), lambda r: r.value),
               convolve(two, two, min))


def _open_law(sides: int, high: int, low: int) -> dict[int, Fraction]:
    """CHK-SUM-A11 by recursion over the chain (the 20-dice cap included)."""
    memo: dict[int, dict[int, Fraction]] = {}

    def chain(used: int) -> dict[int, Fraction]:
        """The law of the dice a chain adds once ``used`` dice are rolled."""
        if used not in memo:
            law: dict[int, Fraction] = {}
            for k in range(1, sides + 1):
                tail = chain(used + 1) if k >= high and used + 1 < 20 else {0: Fraction(1)}
                for rest, p in tail.items():
                    law[k + rest] = law.get(k + rest, Fraction(0)) + p / sides
            memo[used] = law
        return memo[used]

    law: dict[int, Fraction] = {}
    for first in range(1, sides + 1):
        if first >= high:
            tail = {first + v: p for v, p in chain(1).items()}
        elif first <= low:
            tail = {first - v: p for v, p in chain(1).items()}
        else:
            tail = {first: Fraction(1)}
        for value, p in tail.items():
            law[value] = law.get(value, Fraction(0)) + p / sides
    return law


def test_chk_sum_a11_open_ended_chain_matches_its_exact_law() -> None:
    res = _sum_game(dice={"count": 1, "sides": 10}, openEnded={"high": 9, "low": 2})
    req = request(game("sum-2d6"), attrs={"dc": "0"})
    law = _open_law(10, 9, 2)
    assert_law(draws(lambda s: _sure(dice_sum.resolve(res, req, s)), lambda r: r.value), law)


def test_chk_sum_a5_naturals_make_criticals_with_their_exact_odds() -> None:
    res = _sum_game(dice={"count": 1, "sides": 20}, naturals="both")
    req = request(game("sum-2d6"), attrs={"dc": "15"})
    law = {(True, "success"): Fraction(1, 20), (False, "failure"): Fraction(1, 20),
           (True, None): Fraction(5, 20), (False, None): Fraction(13, 20)}
    assert_law(draws(lambda s: _sure(dice_sum.resolve(res, req, s)),
                     lambda r: (r.success, r.critical)), law)


# --- dice-pool -----------------------------------------------------------------------------------

def _pool(**keys: Any) -> PoolResolution:
    res = game("pool-d10", **keys).ruleset.resolution
    assert isinstance(res, PoolResolution)
    return res


def _pool_law(size: int, sides: int, target: int, explode: int, budget: int,
              cancel: int, botch: int) -> dict[tuple[int, bool, bool], Fraction]:
    """CHK-POOL-A23/A24: enumerate the originals, then the extra dice one pending at a time."""
    law: dict[tuple[int, bool, bool], Fraction] = {}

    def finish(faces: tuple[int, ...], p: Fraction) -> None:
        raw = sum(1 for f in faces if f >= target)
        net = max(0, raw - sum(1 for f in faces if f <= cancel))
        is_botch = raw == 0 and any(f <= botch for f in faces)
        success = not is_botch and net >= 1
        key = (net, is_botch, success)
        law[key] = law.get(key, Fraction(0)) + p

    def extend(faces: tuple[int, ...], pending: int, left: int, p: Fraction) -> None:
        if pending == 0 or left == 0:
            finish(faces, p)
            return
        for f in range(1, sides + 1):
            extend((*faces, f), pending - 1 + (f >= explode), left - 1, p / sides)

    for originals in itertools.product(range(1, sides + 1), repeat=size):
        extend(originals, sum(1 for f in originals if f >= explode), budget,
               Fraction(1, sides**size))
    return law


def test_chk_pool_a12_a19_successes_explosions_cancels_and_botches() -> None:
    res = _pool(pool={"min": 1, "max": 3}, exceptional=None)
    g = game("pool-d10")
    req = request(g, sheet=3, attrs={"dc": "1"})
    law = _pool_law(3, 10, 6, 10, 3, 1, 1)  # CHK-POOL-34: dc 1 picks "Plain work" at 6
    assert_law(draws(lambda s: pool.resolve(res, req, s),
                     lambda r: (int(r.value), r.critical == "failure", r.success)), law)


def test_chk_pool_a22_reroll_once_law_of_one_die() -> None:
    res = _pool(pool={"min": 1, "max": 1}, explode=None)
    req = request(game("pool-d10"), sheet=1, attrs={"dc": "1", "reroll": "careful"})
    s, u = 10, 6
    law = {f: Fraction(u, s * s) if f <= u else Fraction(1, s) * (1 + Fraction(u, s))
           for f in range(1, s + 1)}
    assert_law(draws(lambda st: pool.resolve(res, req, st), lambda r: r.rolls[0]), law)


def test_chk_pool_a22_reroll_until_law_of_one_die() -> None:
    res = _pool(pool={"min": 1, "max": 1}, explode=None,
                reroll=[{"id": "careful", "upTo": 6, "mode": "until"}])
    req = request(game("pool-d10"), sheet=1, attrs={"dc": "1", "reroll": "careful"})
    assert_law(draws(lambda st: pool.resolve(res, req, st), lambda r: r.rolls[0]),
               uniform(range(7, 11)))


# --- dice-highest --------------------------------------------------------------------------------

def _highest(**keys: Any) -> HighestResolution:
    res = game("highest-blades", **keys).ruleset.resolution
    assert isinstance(res, HighestResolution)
    return res


def _top_law(n: int, keep: int) -> dict[int, Fraction]:
    law: dict[int, Fraction] = {}
    for faces in itertools.product(range(1, 7), repeat=n):
        total = sum(sorted(faces, reverse=True)[:keep])
        law[total] = law.get(total, Fraction(0)) + Fraction(1, 6**n)
    return law


def test_chk_high_a13_highest_of_three() -> None:
    res = _highest()
    req = request(game("highest-blades"), sheet=3, attrs={"dc": "4"})
    assert_law(draws(lambda s: _sure(highest.resolve(res, req, s)), lambda r: r.value),
               _top_law(3, 1))


def test_chk_high_4_keep_two_of_four() -> None:
    res = _highest(keep=2)
    req = request(game("highest-blades"), sheet=4, attrs={"dc": "8"})
    assert_law(draws(lambda s: _sure(highest.resolve(res, req, s)), lambda r: r.value),
               _top_law(4, 2))


def test_chk_high_a13_lowest_of_two_for_zero_dice() -> None:
    res = _highest()
    req = request(game("highest-blades"), sheet=0, attrs={"dc": "4"})
    law = {x: Fraction((7 - x) ** 2 - (6 - x) ** 2, 36) for x in range(1, 7)}
    assert_law(draws(lambda s: _sure(highest.resolve(res, req, s)), lambda r: r.value), law)


# --- roll-against --------------------------------------------------------------------------------

def _against() -> AgainstResolution:
    res = game("against-d100").ruleset.resolution
    assert isinstance(res, AgainstResolution)
    return res


def test_chk_ra_a9_hard_check_tiers_by_fraction() -> None:
    """The worked example's reading: T = 60/2 = 30; 1 critical, 96+ fumble (T < 50)."""
    res = _against()
    assert res.outcomes is not None
    req = request(game("against-d100"), sheet=60, attrs={"difficulty": "Hard"})
    law = {"critical": Fraction(1, 100), "extreme": Fraction(5, 100), "hard": Fraction(9, 100),
           "regular": Fraction(15, 100), "fail": Fraction(65, 100), "fumble": Fraction(5, 100)}
    outcomes_of = res.outcomes
    assert_law(draws(lambda s: against.resolve(res, req, s),
                     lambda r: outcomes.pick(outcomes_of, r, shift=True).tier.id), law)


def test_chk_ra_a11_one_bonus_die_keeps_the_best_of_two_tens() -> None:
    res = _against()
    req = request(game("against-d100"), sheet=50, attrs={"bonus": "+1"})
    law: dict[int, Fraction] = {}
    for units, t1, t2 in itertools.product(range(10), repeat=3):
        values = [10 * t + units or 100 for t in (t1, t2)]
        law[min(values)] = law.get(min(values), Fraction(0)) + Fraction(1, 1000)
    deciles: dict[int, Fraction] = {}
    for value, p in law.items():
        deciles[(value - 1) // 10] = deciles.get((value - 1) // 10, Fraction(0)) + p
    assert_law(draws(lambda s: against.resolve(res, req, s), lambda r: (int(r.value) - 1) // 10),
               deciles)


def test_chk_ra_4_three_d6_at_most_like_gurps() -> None:
    doc_res = game("against-d100", dice={"count": 3, "sides": 6}, tens=None, outcomes=None,
                   criticalFailure=None).ruleset.resolution
    assert isinstance(doc_res, AgainstResolution)
    req = request(game("against-d100"), sheet=11)
    law = convolve(convolve(D6, D6), D6)
    assert_law(draws(lambda s: against.resolve(doc_res, req, s), lambda r: r.value), law)


# --- symbol-pool ---------------------------------------------------------------------------------

def test_chk_sym_a15_symbol_counts_against_enumeration() -> None:
    g = game("symbols-genesys")
    res = g.ruleset.resolution
    assert isinstance(res, SymbolResolution)
    req = request(g, sheet=2, rank=1, attrs={"dc": "2"})
    dice = {d.id: d for d in res.dice}
    thrown = ["ability", "proficiency", "difficulty", "difficulty"]
    law: dict[tuple[int, bool], Fraction] = {}
    space = [range(1, len(dice[d].faces) + 1) for d in thrown]
    weight = Fraction(1, 8 * 12 * 8 * 8)
    for faces in itertools.product(*space):
        shown = Counter(m for d, f in zip(thrown, faces, strict=True) for m in dice[d].faces[f - 1])
        # CHK-SYM-3/5 read directly: a triumph is also a success, a despair also a failure,
        # and successes and failures cancel one for one.
        net = max(0, shown["s"] + shown["t"] - shown["f"] - shown["d"])
        key = (net, shown["t"] > 0)
        law[key] = law.get(key, Fraction(0)) + weight
    assert_law(draws(lambda s: symbols.resolve(res, req, s),
                     lambda r: (int(r.value), r.record["symbolDetails"]["criticalSuccess"])), law)
