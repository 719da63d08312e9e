"""Rules of checks.md not pinned elsewhere: ``double``, ``halfOrMore`` complications and
``exceptional`` against exact enumerated laws, ``target.from``, tier ``text`` (CHK-OUT-10) and
symbol dice rolled by name outside a check (CHK-SYM-36..39)."""

from __future__ import annotations

import dataclasses
import itertools
from fractions import Fraction
from typing import Any

import pytest
from check_support import assert_law, draws, game, party, request

from engine import Stream
from engine.actions.checks import pool, symbols
from engine.rules.sheet import SheetView
from engine.ruleset import RulesetError
from engine.ruleset.resolution import PoolResolution, SymbolResolution


def _pool(**keys: Any) -> PoolResolution:
    res = game("pool-d10", **keys).ruleset.resolution
    assert isinstance(res, PoolResolution)
    return res


def _law(size: int, read: Any) -> dict[Any, Fraction]:
    law: dict[Any, Fraction] = {}
    for faces in itertools.product(range(1, 11), repeat=size):
        key = read(faces)
        law[key] = law.get(key, Fraction(0)) + Fraction(1, 10**size)
    return law


def test_chk_pool_12_double_counts_a_high_face_twice() -> None:
    """CHK-POOL-12, OQ-CHK-23: a success die ≥ double.from counts 2 (no explode, no cancel)."""
    res = _pool(explode=None, cancel=None, botch=None, exceptional=None,
                double={"from": 9}, pool={"min": 3, "max": 3})
    req = request(game("pool-d10"), sheet=3, attrs={"dc": "2", "threshold": "7"})

    def net(faces: tuple[int, ...]) -> int:
        return sum(2 if f >= 9 else 1 for f in faces if f >= 7)

    assert_law(draws(lambda s: pool.resolve(res, req, s), lambda r: int(r.value)), _law(3, net))


def test_chk_pool_22_half_or_more_botches_and_complications() -> None:
    """CHK-POOL-22, CHK-TAG-19: Lo ≥ half the originals → botch without a success die,
    else complication="true" beside the result."""
    res = _pool(explode=None, cancel=None, exceptional=None, botch={"upTo": 2, "rule": "halfOrMore"},
                pool={"min": 4, "max": 4})
    req = request(game("pool-d10"), sheet=4, attrs={"dc": "1", "threshold": "7"})

    def read(faces: tuple[int, ...]) -> tuple[bool, bool, bool]:
        low = sum(1 for f in faces if f <= 2)
        hit = any(f >= 7 for f in faces)
        botch = 2 * low >= 4 and not hit
        return (not botch and hit, botch, 2 * low >= 4 and hit)

    assert_law(draws(lambda s: pool.resolve(res, req, s),
                     lambda r: (r.success, r.critical == "failure",
                                r.record.get("complication") is True)), _law(4, read))


def test_chk_pool_24_exceptional_is_a_critical_success() -> None:
    """CHK-POOL-24, CHK-POOL-A19: a success with net ≥ exceptional.successes is critical."""
    res = _pool(explode=None, cancel=None, botch=None, exceptional={"successes": 3},
                pool={"min": 4, "max": 4})
    req = request(game("pool-d10"), sheet=4, attrs={"dc": "2", "threshold": "6"})

    def read(faces: tuple[int, ...]) -> tuple[bool, bool]:
        net = sum(1 for f in faces if f >= 6)
        return net >= 2, net >= 3

    assert_law(draws(lambda s: pool.resolve(res, req, s),
                     lambda r: (r.success, r.critical == "success")), _law(4, read))


@pytest.mark.parametrize(("wits", "tag", "threshold"), [
    (7, {}, 7), (2, {}, 5), (12, {}, 9),  # CHK-POOL-37: clamped to target.min..max
    (6, {"threshold": "9"}, 6),  # CHK-POOL-38: threshold= does not move it
    (8, {"difficulty": "Plain work"}, 8),  # OQ-CHK-20: the character's number beats the step's
])
def test_chk_pool_36_target_from_the_sheet(wits: int, tag: dict[str, str],
                                           threshold: int) -> None:
    g = game("pool-d10", target={"default": 7, "min": 5, "max": 9,
                                 "from": {"abilityScore": "wits"}})
    state = party(g, "pool-d10")
    character = state.characters[0].model_copy(
        update={"abilities": {**state.characters[0].abilities, "wits": wits}})
    res = g.ruleset.resolution
    assert isinstance(res, PoolResolution)
    req = dataclasses.replace(request(g, sheet=3, attrs={"dc": "1", **tag}),
                              view=SheetView(g, character, state))
    rolled = pool.resolve(res, req, Stream("t", (0,), "x"))
    assert rolled.record["threshold"] == threshold  # CHK-POOL-40


def test_chk_out_10_tier_text_is_at_most_200_characters() -> None:
    tiers: list[dict[str, Any]] = [
        {"id": "hit", "label": "Hit", "atLeast": 0, "success": True, "text": "x" * 200},
             {"id": "miss", "label": "Miss"}]
    game("sum-2d6", outcomes={"by": "margin", "tiers": tiers})
    tiers[0]["text"] = "x" * 201
    with pytest.raises(RulesetError, match="/resolution/outcomes/tiers/0/text"):
        game("sum-2d6", outcomes={"by": "margin", "tiers": tiers})


def _symbols() -> SymbolResolution:
    res = game("symbols-genesys").ruleset.resolution
    assert isinstance(res, SymbolResolution)
    return res


def test_chk_sym_36_37_roll_dice_by_name_in_any_case() -> None:
    res = _symbols()
    rolled = symbols.roll_by_name(res, "2 ability 1 PROFICIENCY vs 2 Difficulty",
                                  Stream("t", (0,), "x"))
    assert rolled is not None
    faces, raw, net = rolled
    assert [d for d, _ in faces] == ["ability", "ability", "proficiency", "difficulty",
                                     "difficulty"]
    assert (raw, net) == symbols.tally(res, faces)  # CHK-SYM-38: counted and cancelled


@pytest.mark.parametrize("text", ["", "two ability", "2 wand", "41 ability", "-1 ability"])
def test_oq_chk_42_a_roll_text_that_names_no_die_rolls_nothing(text: str) -> None:
    assert symbols.roll_by_name(_symbols(), text, Stream("t", (0,), "x")) is None


def test_chk_sym_38_39_named_rolls_follow_the_law_of_the_dice() -> None:
    """CHK-SYM-38/39: no sheet, no upgrades, no key needed; exact law of net successes."""
    res = _symbols()
    dice = {d.id: d for d in res.dice}
    law: dict[int, Fraction] = {}
    for a, c in itertools.product(range(8), range(12)):
        faces = [("ability", a + 1), ("challenge", c + 1)]
        key = symbols.tally(res, faces)[1]["s"]
        law[key] = law.get(key, Fraction(0)) + Fraction(1, len(dice["ability"].faces)
                                                        * len(dice["challenge"].faces))
    observed = draws(lambda s: symbols.roll_by_name(res, "1 Ability vs 1 challenge", s),  # type: ignore[arg-type,return-value]
                     lambda r: r[2]["s"])  # type: ignore[index]
    assert_law(observed, law)
