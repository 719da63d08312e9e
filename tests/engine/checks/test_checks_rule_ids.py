"""Every rule ID of checks.md pinned by a test that names it (issue 6): tag attributes and their
clamps (Appendix A), record fields (Appendix B), then the kinds' rules, tiers, overrides and
spends. Dice are either scripted (a stub stream that hands out fixed faces) or read over many
fixed turn keys, asserting what must hold for every roll."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, TypeVar, cast

import pytest
from check_support import check, document, game, party, request

from engine import Game, State, Stream, load_ruleset, start_state
from engine.actions.checks import against, highest, outcomes, pool, symbols
from engine.actions.checks import sum as sum_kind
from engine.actions.checks.pipeline import purchases
from engine.rules.sheet import SheetView
from engine.ruleset import RulesetError
from engine.ruleset.resolution import (
    AgainstResolution,
    CriticalRule,
    EntryCheck,
    HighestResolution,
    PoolResolution,
    RerollRule,
    SumResolution,
    SymbolResolution,
)
from tests.helpers import fixture_json

TURNS = 60


class Script:
    """A stream that hands out scripted faces (``die``) and digits (``below``), in order."""

    def __init__(self, faces: Iterable[int], then: int | None = None) -> None:
        self.faces = list(faces)
        self.then = then
        self.drawn = 0

    def _next(self) -> int:
        self.drawn += 1
        if self.faces:
            return self.faces.pop(0)
        assert self.then is not None, "the script ran out of faces"
        return self.then

    def die(self, sides: int) -> int:
        face = self._next()
        assert 1 <= face <= sides
        return face

    def below(self, n: int) -> int:
        digit = self._next()
        assert 0 <= digit < n
        return digit


def _stream(faces: Iterable[int], then: int | None = None) -> Stream:
    return cast(Stream, Script(faces, then))


def _records(name: str, tag: str, g: Game | None = None, state: State | None = None,
             count: int = TURNS, lane: int = 7) -> list[dict[str, Any]]:
    """The records of one tag over ``count`` fixed turn keys (all accepted)."""
    g = g or game(name)
    state = state or party(g, name)
    out = []
    for index in range(count):
        _, answer = check(g, state, f"[skill_check: {tag}]", (lane, index))
        assert answer.ok, answer.text
        out.append(answer.record)
    return out


def _one(name: str, tag: str, g: Game | None = None, state: State | None = None,
         turn: tuple[int, ...] = (0, 0)) -> tuple[dict[str, Any], str]:
    g = g or game(name)
    state = state or party(g, name)
    _, answer = check(g, state, f"[skill_check: {tag}]", turn)
    assert answer.ok, answer.text
    return answer.record, answer.text


def _bare(g: Game, name: str) -> State:
    """The fixture party with no bags and no conditions (no item or condition modifiers)."""
    people = fixture_json(f"parties/{name}.json")
    for character in people["characters"]:
        character.pop("bag", None)
        character.pop("conditions", None)
    return start_state(g, people)


R = TypeVar("R")


def _resolution(fixture: str, kind: type[R], **keys: Any) -> R:
    """The resolution block of a fixture ruleset with ``keys`` changed, as its own kind."""
    res = game(fixture, **keys).ruleset.resolution
    assert isinstance(res, kind)
    return res


def _sum(**keys: Any) -> SumResolution:
    """The sum fixture's resolution without its overrides (they are checked against new dice)."""
    return _resolution("sum-2d6", SumResolution, **{"overrides": None, **keys})


def _pool(**keys: Any) -> PoolResolution:
    return _resolution("pool-d10", PoolResolution, **keys)


def _highest(**keys: Any) -> HighestResolution:
    return _resolution("highest-blades", HighestResolution, **keys)


def _against(**keys: Any) -> AgainstResolution:
    return _resolution("against-d100", AgainstResolution, **keys)


def _symbols(**keys: Any) -> SymbolResolution:
    return _resolution("symbols-genesys", SymbolResolution, **keys)


def _rejected(name: str, **keys: Any) -> str:
    doc = document(name)
    doc["resolution"].update(keys)
    with pytest.raises(RulesetError) as error:
        load_ruleset(doc)
    return str(error.value)


# === Appendix A: tag attributes ================================================================

@pytest.mark.parametrize(("name", "tag", "dc"), [
    pytest.param("highest-blades", 'skill="skirmish" dc="99"', 6, id="CHK-HIGH-18-high"),
    pytest.param("highest-blades", 'skill="skirmish" dc="-4"', 1, id="CHK-HIGH-18-low"),
    pytest.param("symbols-genesys", 'skill="stealth" dc="99"', 5, id="CHK-SYM-17-high"),
    pytest.param("symbols-genesys", 'skill="stealth" dc="-2"', 0, id="CHK-SYM-17-low"),
    pytest.param("against-d100", 'skill="spot_hidden" dc="-500"', 60 - 100, id="CHK-RA-8"),
    pytest.param("pool-d10", 'skill="ward" dc="31"', 30, id="CHK-TAG-2"),
])
def test_chk_tag_12_every_tag_value_is_clamped_to_its_declared_range(name: str, tag: str,
                                                                     dc: int) -> None:
    """CHK-TAG-12: a value outside its range is clamped to the nearest bound, never refused."""
    record, _ = _one(name, tag)
    assert record["dc"] == dc


def test_chk_tag_1_pool_dc_is_successes_needed_not_the_threshold() -> None:
    """CHK-TAG-1, CHK-POOL-A8, CHK-POOL-A19: dc="2" needs two net successes at threshold 7."""
    for record in _records("pool-d10", 'skill="ward" dc="2"'):
        assert (record["dc"], record["threshold"]) == (2, 7)
        botch = record.get("critical") == "failure"
        assert record["success"] is (not botch and record["total"] >= 2)


@pytest.mark.parametrize(("name", "tag", "dc", "threshold"), [
    pytest.param("sum-2d6", 'skill="climb" difficulty="Hard"', 10, None, id="CHK-SUM-19"),
    pytest.param("sum-2d6", 'skill="climb" difficulty="Easy" dc="8"', 8, None, id="CHK-TAG-8"),
    pytest.param("pool-d10", 'skill="ward" difficulty="Grim"', 3, 8, id="CHK-POOL-32-grim"),
    pytest.param("pool-d10", 'skill="ward" difficulty="Plain work"', 1, 6, id="CHK-POOL-32-plain"),
    pytest.param("highest-blades", 'skill="skirmish" difficulty="Full"', 6, None,
                 id="CHK-HIGH-17"),
    pytest.param("against-d100", 'skill="spot_hidden" difficulty="Hard"', 30, None, id="CHK-RA-7"),
    pytest.param("symbols-genesys", 'skill="stealth" difficulty="Hard"', 3, None, id="CHK-SYM-18"),
])
def test_chk_tag_7_14_difficulty_names_a_step_and_the_record_gives_numbers(
        name: str, tag: str, dc: int, threshold: int | None) -> None:
    """CHK-TAG-7: difficulty= names a ladder step in every kind; CHK-TAG-14: the record carries
    dc= (and threshold=) as the numbers used, not the label; CHK-SUM-18, CHK-SUM-A1."""
    record, _ = _one(name, tag)
    assert record["dc"] == dc and isinstance(record["dc"], int)
    if threshold is not None:
        assert record["threshold"] == threshold


def test_chk_tag_9_a_label_matching_two_steps_is_ignored() -> None:
    """CHK-TAG-9: two steps with one label → ignored; a sum then has no difficulty."""
    ladder = [{"label": "Hard", "dc": 10}, {"label": "Hard", "dc": 12}]
    g = game("sum-2d6", difficultyLadder=ladder, outcomes=None)
    state = party(g, "sum-2d6")
    new, answer = check(g, state, '[skill_check: skill="climb" difficulty="Hard"]')
    assert not answer.ok and answer.reason == "missing-difficulty" and new is state


def test_chk_tag_11_chk_pool_30_unknown_or_absent_reroll_rerolls_nothing() -> None:
    """CHK-TAG-11: a reroll= matching no entry is ignored; CHK-POOL-30: no reroll unless named."""
    plain = _records("pool-d10", 'skill="ward" dc="2"', count=20)
    unknown = _records("pool-d10", 'skill="ward" dc="2" reroll="reckless"', count=20)
    assert plain == unknown
    assert all("rerolled" not in r and "reroll" not in r for r in plain)


def test_chk_tag_16_with_naming_the_skills_own_ability_is_not_recorded() -> None:
    """CHK-TAG-16: with= is recorded only if an ability was replaced or added."""
    same, _ = _one("sum-2d6", 'skill="sneak" dc="3" with="wits"')
    plain, _ = _one("sum-2d6", 'skill="sneak" dc="3"')
    assert "with" not in same and same == plain
    replaced, _ = _one("pool-d10", 'skill="ward" dc="1" with="sinew" who="Ada"')
    assert replaced["with"] == "sinew"


def test_chk_tag_22_chk_pay_4_written_dice_never_enter_a_pool_check() -> None:
    """CHK-TAG-22, CHK-PAY-4, CHK-TAG-20: dice the player or model wrote are not applied; the
    Engine rolls and computes everything itself."""
    plain = _records("pool-d10", 'skill="nerve" dc="2" spend="resolve:1"', count=10)
    written = _records("pool-d10",
                       'skill="nerve" dc="2" spend="resolve:1" rolls="10,10,10" total="9" '
                       'roll="10"', count=10)
    assert plain == written


# === Appendix B: record fields =================================================================

def test_chk_sum_1_a4_a9_total_is_dice_plus_sheet_number() -> None:
    """CHK-SUM-1, CHK-SUM-A4, CHK-SUM-A6, CHK-SUM-A9, OQ-CHK-11: resolution="sum", the faces in
    rolls=, modifier= the sheet number, total = dice + modifier, success iff total ≥ dc."""
    g = game("sum-2d6", outcomes=None)
    for record in _records("sum-2d6", 'skill="climb" dc="9" who="Bram the Quiet"', g=g):
        assert record["resolution"] == "sum" and record["modifier"] == 3 + 1
        assert len(record["rolls"]) == 2 and all(1 <= f <= 6 for f in record["rolls"])
        assert record["total"] == sum(record["rolls"]) + 4
        assert record["dc"] == 9 and record["success"] is (record["total"] >= 9)
        assert "critical" not in record


def test_chk_sum_17_a7_unmodified_face_is_recorded_with_a_notice() -> None:
    """CHK-SUM-16/17, CHK-SUM-A7, OQ-CHK-9: the first die showing a listed face is recorded."""
    g = game("sum-2d6", outcomes=None)
    seen = 0
    for index in range(TURNS):
        _, answer = check(g, party(g, "sum-2d6"), '[skill_check: skill="climb" dc="9"]',
                          (8, index))
        first = answer.record["rolls"][0]
        if first == 6:
            seen += 1
            assert answer.record["unmodified"] == "6"
            assert "Apply what your rules say about an unmodified 6." in answer.text
        else:
            assert "unmodified" not in answer.record
    assert seen > 0


def test_chk_ra_9_10_record_reads_the_final_threshold_and_direction() -> None:
    """CHK-RA-9, CHK-RA-10, CHK-RA-A10: dc= is the final threshold, against= the direction."""
    record, _ = _one("against-d100", 'skill="spot_hidden" difficulty="Extreme" dc="3"')
    assert record["dc"] == 60 // 5 + 3 and record["against"] == "at-most"
    g = game("against-d100", against="at-least", outcomes=None)
    record, _ = _one("against-d100", 'skill="spot_hidden"', g=g)
    assert record["against"] == "at-least"


def test_chk_sym_40_41_symbol_record_fields() -> None:
    """CHK-SYM-40: resolution="sum", symbols= the net symbols, thrown= parallel to rolls=
    (1-based faces); CHK-SYM-41: symbolDetails keeps labels, face symbols and both marks;
    CHK-SYM-A8..A10, CHK-SYM-A14."""
    res = _symbols()
    for record in _records("symbols-genesys",
                           'skill="stealth" dc="2" upgrade="1" bonus="1"'):
        assert record["resolution"] == "sum"
        assert len(record["thrown"]) == len(record["rolls"])
        faces = list(zip(record["thrown"], record["rolls"], strict=True))
        raw, net = symbols.tally(res, faces)
        assert record["symbols"] == symbols.symbols_text(res, net)
        details = record["symbolDetails"]
        assert details["labels"]["t"] == "Triumph"
        assert [d["face"] for d in details["dice"]] == record["rolls"]
        assert details["criticalSuccess"] is (raw["t"] >= 1)
        assert details["criticalFailure"] is (raw["d"] >= 1)


def test_chk_sym_42_zero_additions_are_left_out_of_the_record() -> None:
    """CHK-SYM-42: setback= / upgradeOwn= appear only when dice were actually added."""
    plain, _ = _one("symbols-genesys", 'skill="stealth" dc="1" setback="0" upgradeOwn="0"')
    assert "setback" not in plain and "upgradeOwn" not in plain
    full, _ = _one("symbols-genesys", 'skill="stealth" dc="1" bonus="-3" setback="2"')
    assert "setback" not in full and full["thrown"].count("setback") == 3
    some, _ = _one("symbols-genesys", 'skill="stealth" dc="1" setback="2" upgradeOwn="1"')
    assert (some["setback"], some["upgradeOwn"]) == (2, 1)


def test_chk_sym_43_summary_names_the_net_symbols_even_when_empty() -> None:
    """CHK-SYM-43: the answer names net symbols, and says so when nothing is left."""
    res = _symbols()
    req = request(game("symbols-genesys"), sheet=1, rank=0, attrs={"dc": "0"})
    blank = symbols.resolve(res, req, _stream([1]))  # one ability die, blank face
    assert blank.record["symbols"] == "" and blank.shown.endswith("→ nothing")
    two = symbols.resolve(res, req, _stream([4]))  # ["s", "s"]
    assert two.record["symbols"] == "2s" and "2 success" in two.shown


# === dice-sum ==================================================================================

def test_chk_gen_3_4_5_identity_common_keys_make_the_sheet_number() -> None:
    """CHK-GEN-3, CHK-GEN-4, CHK-GEN-5, CHK-GEN-8, CHK-GEN-A4: identity turns brawn 3 into 3, plus the trained tier
    (flat 1)."""
    record, _ = _one("sum-2d6", 'skill="climb" dc="3" who="Bram the Quiet"')
    assert record["modifier"] == 3 + 1


def test_chk_gen_12_proficiency_is_needed_only_by_a_multiplier() -> None:
    """CHK-GEN-12: a ruleset without a multiplier tier loads without ``proficiency``."""
    res = _pool(proficiency=None)
    assert res.proficiency is None


@pytest.mark.parametrize(("naturals", "max_crit", "min_crit"), [
    pytest.param("both", True, True, id="CHK-SUM-5-both"),
    pytest.param("max-only", True, False, id="CHK-SUM-5-max-only"),
    pytest.param("min-only", False, True, id="CHK-SUM-5-min-only"),
    pytest.param("none", False, False, id="CHK-SUM-4-none"),
    pytest.param(None, False, False, id="CHK-SUM-6-absent"),
])
def test_chk_sum_4_5_6_a5_naturals(naturals: str | None, max_crit: bool, min_crit: bool) -> None:
    """CHK-SUM-4/5/6, CHK-SUM-A5/A6: a natural 20 succeeds (dc 99) and a natural 1 fails (dc -99),
    both critical, only as ``naturals`` says; leaving it out means no natural effects."""
    res = _sum(dice={"count": 1, "sides": 20}, naturals=naturals, outcomes=None, unmodified=None)
    g = game("sum-2d6")
    high = sum_kind.resolve(res, request(g, attrs={"dc": "99"}), _stream([20]))
    low = sum_kind.resolve(res, request(g, attrs={"dc": "-99"}), _stream([1]))
    assert high is not None and low is not None
    assert (high.success, high.critical) == ((True, "success") if max_crit else (False, None))
    assert (low.success, low.critical) == ((False, "failure") if min_crit else (True, None))


@pytest.mark.parametrize(("script", "faces", "total"), [
    pytest.param([50], [50], 50, id="CHK-SUM-A2-plain"),
    pytest.param([97, 99, 12], [97, 99, 12], 97 + 99 + 12, id="CHK-SUM-11"),
    pytest.param([3, 96, 40], [3, 96, 40], 3 - 96 - 40, id="CHK-SUM-12"),
    pytest.param([5, 2], [5, 2], 5 - 2, id="CHK-SUM-12-low-draws-once"),
    pytest.param([96, 5], [96, 5], 101, id="CHK-SUM-11-low-face-later-adds"),
])
def test_chk_sum_13_rolemaster_open_ended_percentile(script: list[int], faces: list[int],
                                                     total: int) -> None:
    """CHK-SUM-13 (high 96, low 5 on one d100), CHK-SUM-11/12, CHK-SUM-A2: up adds, down
    subtracts and keeps going on ``high``; only the first die is tested against ``low``."""
    res = _sum(dice={"count": 1, "sides": 100}, openEnded={"high": 96, "low": 5},
               outcomes=None, unmodified=None)
    assert sum_kind.one_roll(res, _stream(script)) == (total, faces)


@pytest.mark.parametrize(("first", "total"), [
    pytest.param(100, 20 * 100, id="CHK-SUM-14-up"),
    pytest.param(2, 2 - 19 * 100, id="CHK-SUM-14-down"),
])
def test_chk_sum_14_a_chain_stops_at_twenty_dice(first: int, total: int) -> None:
    """CHK-SUM-14: at most 20 dice, the first included; the 20th still counts."""
    res = _sum(dice={"count": 1, "sides": 100}, openEnded={"high": 96, "low": 5},
               outcomes=None, unmodified=None)
    script = Script([first], then=100)
    got, faces = sum_kind.one_roll(res, cast(Stream, script))
    assert (got, len(faces), script.drawn) == (total, 20, 20)


def test_chk_sum_15_naturals_and_shift_read_the_first_die_of_a_chain() -> None:
    """CHK-SUM-15: natural faces and the tier shift read the first die of an open-ended roll."""
    res = _sum(dice={"count": 1, "sides": 20}, openEnded={"high": 20, "low": 1},
               naturals="both", outcomes=None, unmodified=None)
    g = game("sum-2d6")
    up = sum_kind.resolve(res, request(g, attrs={"dc": "99"}), _stream([20, 4]))
    down = sum_kind.resolve(res, request(g, attrs={"dc": "-99"}), _stream([1, 7]))
    assert up is not None and down is not None
    assert (up.value, up.critical, up.success, up.shift) == (24, "success", True, 1)
    assert (down.value, down.critical, down.success, down.shift) == (-6, "failure", False, -1)


def test_chk_sum_a3_advantage_keeps_the_higher_roll() -> None:
    """CHK-SUM-A3, OQ-CHK-7: both rolls are recorded, the higher total is kept."""
    res = _sum(outcomes=None, unmodified=None)
    req = request(game("sum-2d6"), attrs={"dc": "7"}, lean=1)
    rolled = sum_kind.resolve(res, req, _stream([1, 2, 5, 4]))
    assert rolled is not None
    assert (rolled.rolls, rolled.value, rolled.record["kept"]) == ([1, 2, 5, 4], 9, [5, 4])


def test_chk_sum_a8_tiers_read_the_margin() -> None:
    """CHK-SUM-A8, CHK-OUT-3: ``by: "margin"`` reads total − dc (fixture tiers 4 / 0 / −3)."""
    labels = {4: "Critical success", 0: "Success", -3: "Failure"}
    for record in _records("sum-2d6", 'skill="climb" dc="9" who="Bram the Quiet"'):
        margin = record["total"] - 9
        want = next((label for bound, label in labels.items() if margin >= bound),
                    "Critical failure")
        assert record["outcome"] == want


# === dice-pool =================================================================================

def _recount(record: dict[str, Any], size: int, explode: int | None = 10, cancel: int = 1,
             botch: int = 1, pool_max: int = 15) -> None:
    """What CHK-POOL-10/13/14/18..21/A14..A19 say about one pool record of the fixture."""
    faces, threshold = record["rolls"], record["threshold"]
    extra = len(faces) - size
    triggers = sum(1 for f in faces if explode is not None and f >= explode)
    assert extra == min(triggers, pool_max)  # CHK-POOL-13/14, CHK-POOL-A14
    raw = sum(1 for f in faces if f >= threshold)  # CHK-POOL-10, CHK-POOL-A15
    net = max(0, raw - sum(1 for f in faces if f <= cancel))  # CHK-POOL-18/19, CHK-POOL-A16
    assert record["total"] == net
    botched = raw == 0 and any(f <= botch for f in faces)  # CHK-POOL-20/23, CHK-POOL-A18
    assert (record.get("critical") == "failure") is botched
    assert record["success"] is (not botched and net >= record["dc"])  # CHK-POOL-21


def test_chk_pool_10_13_18_19_20_21_23_count_explode_cancel_botch() -> None:
    """CHK-POOL-10/13/18/19/20/21/23, CHK-POOL-A12..A19 recomputed from every record: a face
    reaching the threshold succeeds, tens explode, ones cancel (never below zero), a pool whose
    only success was cancelled is a plain failure, a botch needs no success die. Each rule:
    CHK-POOL-10, CHK-POOL-13, CHK-POOL-18, CHK-POOL-19, CHK-POOL-20, CHK-POOL-21,
    CHK-POOL-23."""
    g = game("pool-d10", exceptional=None)
    for record in _records("pool-d10", 'skill="ward" dc="2"', g=g, state=_bare(g, "pool-d10"),
                           count=150):
        _recount(record, size=5)


def test_chk_pool_21_cancelled_only_success_is_not_a_botch() -> None:
    """CHK-POOL-21: one success cancelled by a one → net 0, failure, not critical."""
    res = _pool()
    rolled = pool.resolve(res, request(game("pool-d10"), sheet=2, attrs={"dc": "1"}),
                          _stream([8, 1]))
    assert (rolled.value, rolled.success, rolled.critical) == (0, False, None)
    botched = pool.resolve(res, request(game("pool-d10"), sheet=2, attrs={"dc": "1"}),
                           _stream([4, 1]))
    assert (botched.success, botched.critical) == (False, "failure")


@pytest.mark.parametrize(("tag", "who", "dice"), [
    pytest.param('skill="ward" dc="1"', "Bram the Quiet", 3 + 2, id="CHK-POOL-2"),
    pytest.param('skill="nerve" dc="1"', "Bram the Quiet", 3 + 1, id="CHK-POOL-1"),
    pytest.param('ability="sinew" dc="1" with="warmth"', "Bram the Quiet", 3 + 2,
                 id="CHK-POOL-8"),
    pytest.param('skill="ward" dc="1" bonus="+2"', "Bram the Quiet", 5 + 2, id="CHK-POOL-25"),
    pytest.param('skill="ward" dc="1" bonus="+3"', "Bram the Quiet", 7, id="CHK-POOL-5-max"),
    pytest.param('skill="soothe" dc="1" bonus="-3"', "Ada", 1, id="CHK-POOL-5-min"),
])
def test_chk_pool_1_2_3_a1_a4_the_sheet_number_is_the_pool_size(tag: str, who: str,
                                                                dice: int) -> None:
    """CHK-POOL-1, CHK-POOL-2, CHK-POOL-3: ability rating + tier flat = dice rolled (the same
    sheet vocabulary as any kind); CHK-POOL-5, CHK-POOL-A1, CHK-POOL-A2, CHK-POOL-A3,
    CHK-POOL-A4, OQ-CHK-19: bonus dice, then one clamp to pool.min..max."""
    g = game("pool-d10", explode=None, pool={"min": 1, "max": 7, "abilityPlusAbility": True})
    for record in _records("pool-d10", f'{tag} who="{who}"', g=g, state=_bare(g, "pool-d10"),
                           count=5):
        assert len(record["rolls"]) == dice


def test_chk_pool_25_bonus_is_ignored_without_situational_dice() -> None:
    """CHK-POOL-25, CHK-TAG-4, OQ-CHK-16: no situationalDice → bonus= is not offered."""
    g = game("pool-d10", explode=None, situationalDice=None)
    record, _ = _one("pool-d10", 'skill="ward" dc="1" bonus="+2"', g=g, state=_bare(g, "pool-d10"))
    assert len(record["rolls"]) == 5 and "bonus" not in record


def test_chk_pool_14_explosions_add_at_most_pool_max_dice() -> None:
    """CHK-POOL-14, CHK-POOL-A14: a low ``explode.from`` still rolls at most 2 × pool.max."""
    g = game("pool-d10", explode={"from": 2},
             pool={"min": 1, "max": 4, "abilityPlusAbility": True})
    for record in _records("pool-d10", 'skill="ward" dc="1"', g=g, state=_bare(g, "pool-d10"),
                           count=40):
        assert len(record["rolls"]) <= 8
        _recount(record, size=4, explode=2, pool_max=4)


def test_chk_pool_4_die_sides_from_2_to_100() -> None:
    """CHK-POOL-4: a pool die has 2..100 faces."""
    assert "sides" in _rejected("pool-d10", die={"sides": 101})
    assert "sides" in _rejected("pool-d10", die={"sides": 1})


def test_chk_pool_48_every_face_named_must_be_on_the_die() -> None:
    """CHK-POOL-48, OQ-CHK-14: a face a rule names must exist on the die."""
    assert "explode" in _rejected("pool-d10", explode={"from": 11})


def test_chk_pool_41_at_most_six_stances() -> None:
    """CHK-POOL-41: ``stances`` holds at most six."""
    stances = [{"id": f"s{i}", "label": f"S{i}", "count": "below", "skills": []}
               for i in range(7)]
    assert "stances" in _rejected("pool-d10", stances=stances)


def test_chk_pool_11_a_fixed_threshold_ignores_threshold() -> None:
    """CHK-POOL-11, CHK-TAG-3, CHK-POOL-A7: default = min = max fixes the threshold."""
    g = game("pool-d10", target={"default": 7, "min": 7, "max": 7}, difficultyLadder=[])
    record, _ = _one("pool-d10", 'skill="ward" dc="1" threshold="9"', g=g)
    assert record["threshold"] == 7


@pytest.mark.parametrize(("rule", "tag", "fires"), [
    pytest.param({"min": 10}, "", False, id="CHK-POOL-16-off"),
    pytest.param({"min": 9}, ' explode="9"', True, id="CHK-POOL-15-on"),
])
def test_chk_pool_15_16_a_min_only_rule_fires_when_a_check_asks(rule: dict[str, int], tag: str,
                                                               fires: bool) -> None:
    """CHK-POOL-15/16, CHK-POOL-A10, CHK-TAG-10/17: ``explode: {min}`` without ``from`` explodes
    only in checks that set explode=, and then the moved face is recorded."""
    g = game("pool-d10", explode=rule)
    for record in _records("pool-d10", f'skill="ward" dc="1"{tag}', g=g,
                           state=_bare(g, "pool-d10"), count=40):
        if fires:
            assert record["explode"] == 9
            _recount(record, size=5, explode=9)
        else:
            assert len(record["rolls"]) == 5 and "explode" not in record


def test_chk_pool_15_double_moved_by_the_tag() -> None:
    """CHK-POOL-15, CHK-POOL-12, CHK-TAG-17: double="8" makes faces ≥ 8 count twice."""
    g = game("pool-d10", explode=None, cancel=None, botch=None, exceptional=None,
             double={"min": 8})
    for record in _records("pool-d10", 'skill="ward" dc="1" double="8"', g=g, count=30):
        assert record["double"] == 8
        t = record["threshold"]
        assert record["total"] == sum(2 if f >= 8 else 1 for f in record["rolls"] if f >= t)


@pytest.mark.parametrize(("mode", "script", "faces", "rerolled"), [
    pytest.param("once", [2, 8, 6, 1, 9], [1, 8, 9], 2, id="CHK-POOL-27-once"),
    pytest.param("until", [2, 8, 6, 1, 3, 7, 9], [7, 8, 9], 4, id="CHK-POOL-27-until"),
])
def test_chk_pool_27_a13_reroll_modes(mode: str, script: list[int], faces: list[int],
                                      rerolled: int) -> None:
    """CHK-POOL-27, CHK-POOL-A13, CHK-POOL-A11: ``once`` keeps the new face whatever it is,
    ``until`` rolls again until the face is above ``upTo`` (6)."""
    res = _pool(explode=None, reroll=[{"id": "r", "upTo": 6, "mode": mode}])
    rolled = pool.resolve(res, request(game("pool-d10"), sheet=3,
                                       attrs={"dc": "1", "reroll": "r"}), _stream(script))
    assert (rolled.rolls, rolled.record["rerolled"], rolled.record["reroll"]) == (
        faces, rerolled, "r")


def test_chk_pool_29_until_stops_after_100_rerolls() -> None:
    """CHK-POOL-29: ``until`` stops after 100 rerolls per check, whatever the dice do."""
    res = _pool(explode=None, reroll=[{"id": "r", "upTo": 6, "mode": "until"}])
    script = Script([], then=1)
    rolled = pool.resolve(res, request(game("pool-d10"), sheet=3,
                                       attrs={"dc": "1", "reroll": "r"}), cast(Stream, script))
    assert rolled.record["rerolled"] == 100 and script.drawn == 3 + 100


def test_chk_pool_39_entry_threshold_beats_target_from() -> None:
    """CHK-POOL-39, CHK-TAL-4/6, CHK-POOL-A7: an entry's threshold applies over target.from."""
    res = _pool(target={"default": 7, "min": 5, "max": 9, "from": {"abilityScore": "wits"}})
    req = request(game("pool-d10"), sheet=2, attrs={"dc": "1", "threshold": "5"},
                  entry=EntryCheck(threshold=9))
    assert pool.resolve(res, req, _stream([9, 8])).record["threshold"] == 9


def test_chk_pool_a5_an_empty_pool_draws_nothing() -> None:
    """CHK-POOL-A5: P = 0 fails without a roll: no draw, no botch, no critical."""
    res = _pool(pool={"min": 0, "max": 15})
    script = Script([])
    rolled = pool.resolve(res, request(game("pool-d10"), sheet=0, attrs={"dc": "1"}),
                          cast(Stream, script))
    assert (rolled.rolls, rolled.success, rolled.critical, script.drawn) == ([], False, None, 0)


def test_chk_pool_a20_a21_pool_tiers_and_record() -> None:
    """CHK-POOL-A20, CHK-OUT-17, CHK-OUT-18, CHK-OUT-19: by total; a botch goes to the worst tier and stays
    critical; exceptional is not used beside tiers; CHK-POOL-A21 record fields."""
    tiers = {"by": "total", "tiers": [
        {"id": "crit", "label": "Critical", "atLeast": 3, "success": True},
        {"id": "well", "label": "Well", "atLeast": 2, "success": True},
        {"id": "barely", "label": "Barely", "atLeast": 1, "success": True},
        {"id": "miss", "label": "Miss"}]}
    g = game("pool-d10", outcomes=tiers, exceptional={"successes": 1})
    for record in _records("pool-d10", 'skill="ward" dc="3" bonus="1"', g=g, count=80):
        assert (record["dc"], record["threshold"], record["bonus"]) == (3, 8, 1)
        faces, net = record["rolls"], record["total"]
        botched = not any(f >= 8 for f in faces) and any(f <= 1 for f in faces)
        if botched:
            assert (record["outcome"], record["critical"]) == ("Miss", "failure")
        else:
            want = "Critical" if net >= 3 else "Well" if net == 2 else (
                "Barely" if net == 1 else "Miss")
            assert record["outcome"] == want and "critical" not in record
            assert record["success"] is (net >= 1)


def test_chk_pool_a6_a_bare_dc_selects_its_one_step() -> None:
    """CHK-POOL-A6, CHK-POOL-34: dc="3" equals the successes of exactly one step (Grim), whose
    threshold 8 then applies; dc="2" matches no step and keeps the default 7."""
    assert _one("pool-d10", 'skill="ward" dc="3"')[0]["threshold"] == 8
    assert _one("pool-d10", 'skill="ward" dc="2"')[0]["threshold"] == 7


@pytest.mark.parametrize(("count", "faces", "net"), [
    pytest.param("above", [8, 9, 7, 2, 10], 3, id="CHK-POOL-A9-above"),
    pytest.param("below", [8, 9, 7, 2, 10], 1, id="CHK-POOL-A9-below"),
])
def test_chk_pool_a9_a_stance_sets_the_counting_mode(count: str, faces: list[int],
                                                    net: int) -> None:
    """CHK-POOL-A9, CHK-POOL-42: a skill in a stance counts faces strictly above / below the
    threshold (7); explode, cancel and botch do not apply (CHK-POOL-44)."""
    res = _pool(stances=[{"id": "st", "label": "St", "count": count, "skills": ["ward"]}])
    req = request(game("pool-d10"), sheet=5, ident="ward", attrs={"dc": "2"})
    rolled = pool.resolve(res, req, _stream(faces))
    assert (rolled.rolls, rolled.value, rolled.critical) == (faces, net, None)


def test_chk_pool_a24_the_result_is_a_function_of_the_multiset_of_faces() -> None:
    """CHK-POOL-A24: successes, cancels, botch and complication depend only on the faces, not
    on their order (explode off, halfOrMore botch)."""
    import itertools
    res = _pool(explode=None, botch={"upTo": 1, "rule": "halfOrMore"})
    g = game("pool-d10")
    for faces in ([1, 1, 8, 3], [1, 9, 9, 1], [1, 1, 2, 3], [10, 7, 1, 4]):
        seen = set()
        for order in itertools.permutations(faces):
            rolled = pool.resolve(res, request(g, sheet=4, attrs={"dc": "1"}),
                                  _stream(order))
            seen.add((rolled.value, rolled.success, rolled.critical,
                      rolled.record.get("complication", False)))
        assert len(seen) == 1, (faces, seen)


def test_chk_pay_a3_an_entry_with_per_cost_step_is_bought_per_price_paid() -> None:
    """CHK-PAY-A3, CHK-TAL-11: with perCostStep the entry is bought once per whole price
    covered (3 points → 3 successes); without it, once at its base price."""
    results = []
    for scaling in (True, False):
        mechanics: dict[str, Any] = {"kind": "utility",
                                     "cost": [{"pool": "resolve", "amount": 1}],
                                     "check": {"successes": 1}}
        if scaling:
            mechanics["perCostStep"] = {"flat": 1}
        doc = document("pool-d10")
        doc["catalogs"].append({"id": "disc", "label": "Disc", "holds": "disc", "entries": [
            {"id": "potence", "label": "Potence", "mechanics": mechanics}]})
        g = load_ruleset(doc)
        people = fixture_json("parties/pool-d10.json")
        people["characters"][0]["entries"] = ["disc/potence"]
        state = start_state(g, people)
        new, answer = check(g, state, '[skill_check: skill="Ward" dc="2" use="Potence" '
                                      'spend="resolve:3"]')
        results.append((answer.record["successesBought"], new.characters[0].pools["resolve"]))
    assert results == [(3, 0), (1, 2)]


# === dice-highest ==============================================================================

def test_chk_high_3_a1_modifier_dice_join_the_light_dice() -> None:
    """CHK-HIGH-3, CHK-HIGH-A1: flat modifiers (wounds, items) add or remove dice, clamped."""
    res = _highest()
    g = game("highest-blades")
    up = highest.resolve(res, request(g, sheet=2, flat=1, attrs={"dc": "4"}), _stream([1, 2, 3]))
    down = highest.resolve(res, request(g, sheet=2, flat=-5, attrs={"dc": "4"}), _stream([2, 5]))
    assert up is not None and down is not None
    assert up.rolls == [1, 2, 3] and up.value == 3
    assert down.record["zeroDice"] is True and down.value == 2  # the lower of two


@pytest.mark.parametrize(("critical", "faces", "crit"), [
    pytest.param({"count": 2}, [6, 6, 1], True, id="CHK-HIGH-6-two-sixes"),
    pytest.param({"count": 2}, [6, 5, 5], False, id="CHK-HIGH-6-one-six"),
    pytest.param({"count": 2, "face": 5}, [6, 5, 1], True, id="CHK-HIGH-6-face"),
    pytest.param({"count": 3, "face": 5}, [6, 5, 1], False, id="CHK-HIGH-A8"),
])
def test_chk_high_6_a8_critical_count_at_the_top_face(critical: dict[str, int],
                                                      faces: list[int], crit: bool) -> None:
    """CHK-HIGH-6, CHK-HIGH-A8/A9: ``count`` dice at the top face (or ≥ ``face``) are critical,
    and a critical succeeds whatever the dc."""
    res = _highest(critical=critical, outcomes=None)
    rolled = highest.resolve(res, request(game("highest-blades"), sheet=3, attrs={"dc": "6"}),
                             _stream(faces))
    assert rolled is not None
    assert (rolled.critical == "success") is crit
    assert rolled.success is (crit or max(faces) >= 6)


def test_chk_high_6_lowest_of_two_is_never_critical() -> None:
    """CHK-HIGH-5/6, CHK-HIGH-A4: two sixes on a zero-dice roll are not a critical."""
    rolled = highest.resolve(_highest(outcomes=None),
                             request(game("highest-blades"), sheet=0, attrs={"dc": "6"}),
                             _stream([6, 6]))
    assert rolled is not None and rolled.critical is None and rolled.success


def test_chk_high_7_8_a2_a5_a6_a7_dark_dice_read_with_the_light() -> None:
    """CHK-HIGH-7/8, CHK-HIGH-A2/A5/A6/A7: dark="N" adds N dark dice after the light ones; in
    the default ``all`` mode they are read with them; the dark text is told when one wins."""
    res = _highest(outcomes=None)
    rolled = highest.resolve(res, request(game("highest-blades"), sheet=2,
                                          attrs={"dc": "6", "dark": "2"}), _stream([3, 4, 6, 1]))
    assert rolled is not None
    assert rolled.rolls == [3, 4, 6, 1] and rolled.value == 6 and rolled.success
    assert rolled.record["dark"] == 2 and rolled.record["darkHighest"] is True
    assert rolled.notices == ["A dark die rolled highest: Ruin rises."]
    assert "darkOutcome" not in rolled.record


def test_chk_high_10_23_light_outcome_with_no_light_dice() -> None:
    """CHK-HIGH-10: with ``light`` and no light dice, zeroDice applies to the light side and
    the dark dice are rolled anyway; CHK-HIGH-23: darkOutcome="light" is recorded."""
    res = _highest(dark={"label": "Dark", "max": 3, "outcome": "light"}, outcomes=None)
    rolled = highest.resolve(res, request(game("highest-blades"), sheet=0,
                                          attrs={"dc": "4", "dark": "1"}), _stream([5, 3, 6]))
    assert rolled is not None
    assert rolled.rolls == [5, 3, 6] and rolled.value == 3 and not rolled.success
    assert rolled.record["zeroDice"] is True and rolled.record["darkOutcome"] == "light"
    assert rolled.record["darkHighest"] is True  # CHK-HIGH-A10: 6 beats both light dice


def test_chk_high_a3_a11_a12_record_and_tiers_over_turns() -> None:
    """CHK-HIGH-A3 (dc clamped to keep × sides), CHK-HIGH-A11 tiers by total, CHK-HIGH-A12 the
    record; CHK-OUT-11, CHK-OUT-13: only a critical lands in the ``on: critical-success`` tier."""
    for record in _records("highest-blades", 'skill="skirmish" dc="9"'):
        faces = record["rolls"]
        assert record["dc"] == 6 and record["highest"] == "1" and record["modifier"] == 0
        assert record["total"] == max(faces)
        crit = faces.count(6) >= 2
        want = "Critical" if crit else "Full success" if max(faces) >= 6 else (
            "Partial success" if max(faces) >= 4 else "Bad outcome")
        assert record["outcome"] == want



@pytest.mark.parametrize(("bonus", "dice", "used"), [
    pytest.param("1", 4, 1, id="CHK-HIGH-15-help"),
    pytest.param("+2", 5, 2, id="CHK-HIGH-15-max"),
    pytest.param("5", 5, 2, id="CHK-HIGH-15-clamped-high"),
    pytest.param("-1", 2, -1, id="CHK-HIGH-15-remove"),
    pytest.param("-4", 2, -1, id="CHK-HIGH-15-clamped-low"),
])
def test_chk_high_15_bonus_adds_or_removes_situational_dice(bonus: str, dice: int,
                                                            used: int) -> None:
    """CHK-HIGH-15, CHK-HIGH-A1: ``bonus=`` adds or removes dice within ``situationalDice``
    (-1..+2 in the fixture): Cutter's Skirmish is 3 dice."""
    record, _ = _one("highest-blades", f'skill="skirmish" dc="4" bonus="{bonus}"')
    assert len(record["rolls"]) == dice and record["bonus"] == used


def test_chk_high_15_without_situational_dice_bonus_changes_nothing() -> None:
    """CHK-HIGH-15: a ruleset without ``situationalDice`` gives ``bonus=`` no dice to add."""
    g = game("highest-blades", situationalDice=None)
    record, _ = _one("highest-blades", 'skill="skirmish" dc="4" bonus="2"', g=g)
    assert len(record["rolls"]) == 3 and "bonus" not in record


def test_chk_high_16_a_spend_buys_dice() -> None:
    """CHK-HIGH-16, CHK-SPEND-12: a dice-highest spend buys dice (a spend of successes or a
    reroll is refused at import, tests/engine/checks/test_checks_import.py); each bought die
    is one more light die, and the pool pays for it."""
    doc = document("highest-blades")
    doc["live"]["pools"].append({"id": "stress", "label": "Stress", "max": {"const": 9}})
    doc["resolution"]["spend"] = [{"pool": "stress", "amount": 2, "dice": 1, "perCheck": 2}]
    g = load_ruleset(doc)
    people = fixture_json("parties/highest-blades.json")
    people["characters"][0]["pools"] = {"stress": 5}
    state = start_state(g, people)
    new, answer = check(g, state, '[skill_check: skill="skirmish" dc="4" spend="stress:4"]')
    assert answer.ok and len(answer.record["rolls"]) == 3 + 2
    assert (answer.record["spend"], answer.record["bought"]) == ("stress:4", 2)
    assert new.characters[0].pools["stress"] == 1


@pytest.mark.parametrize(("faces", "kept", "tier", "critical"), [
    pytest.param([6, 2, 6], [6, 6], "Critical", "success", id="CHK-HIGH-19-critical"),
    pytest.param([1, 5, 6], [6, 5], "Full success", None, id="CHK-HIGH-19-full"),
    pytest.param([2, 3, 1], [3, 2], "Partial success", None, id="CHK-HIGH-19-partial"),
    pytest.param([1, 2, 1], [2, 1], "Bad outcome", None, id="CHK-HIGH-19-bad"),
])
def test_chk_high_19_tiers_read_the_total_of_the_kept_dice(faces: list[int], kept: list[int],
                                                           tier: str,
                                                           critical: str | None) -> None:
    """CHK-HIGH-19: tiers read ``by: "total"`` over the kept dice (``keep`` 2: the two highest
    added), and the ``on: "critical-success"`` tier catches the critical (two sixes)."""
    res = _highest(keep=2)
    assert res.outcomes is not None
    rolled = highest.resolve(res, request(game("highest-blades"), sheet=3), _stream(faces))
    assert rolled is not None and rolled.record["kept"] == kept and rolled.value == sum(kept)
    landed = outcomes.pick(res.outcomes, rolled, shift=True)
    assert (landed.tier.label, landed.critical) == (tier, critical)
    assert landed.success is (tier != "Bad outcome")


def test_chk_high_20_21_the_record_keeps_the_sum_form() -> None:
    """CHK-HIGH-20: ``resolution="sum"``, ``modifier`` 0, the kept dice as the sum;
    CHK-HIGH-21: ``highest="1"``, with ``zeroDice`` and ``dark`` only where they apply."""
    plain, _ = _one("highest-blades", 'skill="skirmish" dc="4"')
    assert (plain["resolution"], plain["modifier"], plain["highest"]) == ("sum", 0, "1")
    assert plain["kept"] == [max(plain["rolls"])] and plain["total"] == max(plain["rolls"])
    assert "zeroDice" not in plain and "dark" not in plain
    dark, _ = _one("highest-blades", 'skill="skirmish" dc="4" dark="2"')
    assert dark["dark"] == 2 and len(dark["rolls"]) == 3 + 2 and "zeroDice" not in dark
    zero, _ = _one("highest-blades", 'skill="study" dc="4" who="Whisper"')
    assert zero["zeroDice"] is True and zero["kept"] == [min(zero["rolls"])]
    assert zero["total"] == min(zero["rolls"]) and "dark" not in zero


def test_chk_high_13_the_engine_only_marks_a_dark_die_highest() -> None:
    """CHK-HIGH-13: the engine marks ``darkHighest`` and tells the dark text; what it costs
    (Ruin) is the GM's: the state is left as it was."""
    g = game("highest-blades")
    state = party(g, "highest-blades")
    marked = 0
    for index in range(40):
        new, answer = check(g, state, '[skill_check: skill="skirmish" dc="4" dark="3"]',
                            (11, index))
        assert answer.ok and new is state
        if answer.record.get("darkHighest"):
            marked += 1
            assert "Ruin rises." in answer.text
    assert marked > 0

# === roll-against ==============================================================================

def test_chk_ra_2_3_a1_threshold_is_the_sheet_number() -> None:
    """CHK-RA-2/3, CHK-RA-A1, OQ-CHK-30: a CoC skill's threshold is its percentage; a save with
    an ability reads the ability plus its bonus (POW 45)."""
    assert _one("against-d100", 'skill="spot_hidden" who="Lydia"')[0]["dc"] == 25
    assert _one("against-d100", 'save="luck"')[0]["dc"] == 45


@pytest.mark.parametrize(("against_", "roll", "success"), [
    pytest.param("at-most", 40, True, id="CHK-RA-5-at-most-equal"),
    pytest.param("at-most", 41, False, id="CHK-RA-5-at-most-over"),
    pytest.param("at-least", 40, True, id="CHK-RA-5-at-least-equal"),
    pytest.param("at-least", 39, False, id="CHK-RA-5-at-least-under"),
])
def test_chk_ra_5_a5_a6_direction(against_: str, roll: int, success: bool) -> None:
    """CHK-RA-5, CHK-RA-A5, CHK-RA-A6: at-most succeeds at r ≤ T, at-least at r ≥ T."""
    res = _against(against=against_, outcomes=None, criticalSuccess=[], criticalFailure=[])
    rolled = against.resolve(res, request(game("against-d100"), sheet=40), _stream([roll]))
    assert (rolled.success, rolled.dc) == (success, 40)


@pytest.mark.parametrize(("difficulty", "threshold"), [
    pytest.param("Regular", 61, id="CHK-RA-6-regular"),
    pytest.param("Hard", 30, id="CHK-RA-6-hard"),
    pytest.param("Extreme", 12, id="CHK-RA-A3"),
])
def test_chk_ra_6_a2_a3_a4_divide_then_shift(difficulty: str, threshold: int) -> None:
    """CHK-RA-6, CHK-RA-A2..A4, OQ-CHK-32: a step divides the sheet number (floor), then its
    ``dc`` shifts it (61 → 61, 30, 12)."""
    res = _against(outcomes=None)
    rolled = against.resolve(res, request(game("against-d100"), sheet=61,
                                          attrs={"difficulty": difficulty}), _stream([50]))
    assert rolled.dc == threshold


@pytest.mark.parametrize(("rule", "roll", "threshold", "hit"), [
    pytest.param({"from": 1, "to": 5}, 5, 50, True, id="CHK-RA-12-inside"),
    pytest.param({"from": 1, "to": 5}, 6, 50, False, id="CHK-RA-12-outside"),
    pytest.param({"from": 96}, 100, 50, True, id="CHK-RA-12-open-top"),
    pytest.param({"to": 4}, 1, 50, True, id="CHK-RA-12-open-bottom"),
    pytest.param({"pastTarget": 10}, 60, 50, True, id="CHK-RA-13-at"),
    pytest.param({"pastTarget": 10}, 59, 50, False, id="CHK-RA-13-short"),
    pytest.param({"from": 5, "to": 5, "whenTarget": {"atLeast": 15}}, 5, 15, True,
                 id="CHK-RA-14-gurps-15"),
    pytest.param({"from": 5, "to": 5, "whenTarget": {"atLeast": 15}}, 5, 14, False,
                 id="CHK-RA-14-gurps-14"),
    pytest.param({"from": 96, "whenTarget": {"below": 50}}, 97, 50, False, id="CHK-RA-14-below"),
])
def test_chk_ra_12_13_14_a7_critical_rules(rule: dict[str, Any], roll: int, threshold: int,
                                           hit: bool) -> None:
    """CHK-RA-12/13/14, CHK-RA-A7, OQ-CHK-34: face bounds (either open), pastTarget, whenTarget
    on the final threshold (at-most)."""
    assert against.matches(CriticalRule.model_validate(rule), roll, threshold, True) is hit


def test_chk_ra_15_a8_criticals_override_the_comparison() -> None:
    """CHK-RA-15, CHK-RA-A8: a critical success succeeds even above the threshold; a critical
    failure fails even within it."""
    res = _against(outcomes=None)
    g = game("against-d100")
    crit = against.resolve(res, request(g, sheet=60, attrs={"dc": "-100"}), _stream([1]))
    fumble = against.resolve(res, request(g, sheet=60, attrs={"dc": "100"}), _stream([100]))
    assert (crit.success, crit.critical) == (True, "success")
    assert (fumble.success, fumble.critical) == (False, "failure")


@pytest.mark.parametrize(("bonus", "script", "rolls", "roll"), [
    pytest.param("+1", [3, 7, 2], [3, 7, 2], 23, id="CHK-RA-17-best"),
    pytest.param("-1", [3, 7, 2], [3, 7, 2], 73, id="CHK-RA-17-worst"),
    pytest.param("+5", [0, 0, 4, 9], [0, 0, 4, 9], 40, id="CHK-RA-17-capped"),
])
def test_chk_ra_17_a5_tens_dice(bonus: str, script: list[int], rolls: list[int],
                                roll: int) -> None:
    """CHK-RA-17, CHK-RA-A5, OQ-CHK-36: one units die, then 1 + N tens dice (N ≤ tens.max);
    + keeps the best (lowest at-most), − the worst; 00 with 0 reads 100."""
    res = _against(outcomes=None)
    rolled = against.resolve(res, request(game("against-d100"), sheet=50,
                                          attrs={"bonus": bonus}), _stream(script))
    assert (rolled.rolls, rolled.value) == (rolls, roll)


def test_chk_ra_19_a9_margin_and_total_tiers() -> None:
    """CHK-RA-19, CHK-RA-A9, OQ-CHK-37: by margin reads T − r (at-most), by total reads r."""
    margin = {"by": "margin", "tiers": [
        {"id": "well", "label": "Well", "atLeast": 20, "success": True},
        {"id": "ok", "label": "Ok", "atLeast": 0, "success": True},
        {"id": "miss", "label": "Miss"}]}
    res = _against(outcomes=margin)
    assert res.outcomes is not None
    g = game("against-d100")
    for roll, label in [(30, "Well"), (31, "Ok"), (50, "Ok"), (51, "Miss")]:
        rolled = against.resolve(res, request(g, sheet=50), _stream([roll]))
        assert outcomes.pick(res.outcomes, rolled, shift=False).tier.label == label
    total = {"by": "total", "tiers": [
        {"id": "high", "label": "High", "atLeast": 50, "success": True}, {"id": "low", "label": "Low"}]}
    res = _against(outcomes=total, against="at-least")
    assert res.outcomes is not None
    rolled = against.resolve(res, request(g, sheet=10), _stream([50]))
    assert outcomes.pick(res.outcomes, rolled, shift=False).tier.label == "High"


# === symbol-pool ===============================================================================

@pytest.mark.parametrize(("tag", "who", "base", "upgraded"), [
    pytest.param('skill="stealth" dc="0"', "Kira", 1, 2, id="CHK-SYM-10"),
    pytest.param('ability="agility" dc="0"', "Kira", 3, 0, id="CHK-SYM-14"),
    pytest.param('skill="stealth" dc="0" with="presence"', "Kira", 0, 2, id="CHK-SYM-15"),
    pytest.param('skill="charm" dc="0"', "Osk", 3, 1, id="CHK-SYM-13"),
])
def test_chk_sym_10_13_14_15_a1_a2_building_the_pool(tag: str, who: str, base: int,
                                                     upgraded: int) -> None:
    """CHK-SYM-10 (larger-upgraded), CHK-SYM-13 (identity ability), CHK-SYM-14 (rank from the
    tier; 0 in an ability check), CHK-SYM-15 (with= replaces the ability), CHK-SYM-A1,
    CHK-SYM-A2."""
    record, _ = _one("symbols-genesys", f'{tag} who="{who}"')
    assert record["thrown"].count("ability") == base
    assert record["thrown"].count("proficiency") == upgraded
    assert len(record["thrown"]) == base + upgraded


def test_chk_sym_11_sum_build_upgrades_nothing() -> None:
    """CHK-SYM-11: ``build: "sum"`` rolls ability + rank base dice (3 + 2) and upgrades none."""
    g = game("symbols-genesys", pool={"die": "ability", "upgrade": "proficiency", "max": 6,
                                      "build": "sum"})
    record, _ = _one("symbols-genesys", 'skill="stealth" dc="0"', g=g)
    assert record["thrown"] == ["ability"] * 5


@pytest.mark.parametrize(("flat", "bonus", "boost", "setback"), [
    pytest.param(0, "+2", 2, 0, id="CHK-SYM-20-boost"),
    pytest.param(0, "+9", 3, 0, id="CHK-SYM-20-boost-max"),
    pytest.param(0, "-2", 0, 2, id="CHK-SYM-20-setback"),
    pytest.param(-2, "+3", 1, 0, id="CHK-SYM-21-sum-first"),
    pytest.param(2, "-1", 1, 0, id="CHK-SYM-16"),
    pytest.param(-5, "+1", 0, 3, id="CHK-SYM-A6"),
])
def test_chk_sym_16_20_21_a6_signed_bonus(flat: int, bonus: str, boost: int,
                                          setback: int) -> None:
    """CHK-SYM-16/20/21, CHK-SYM-A6: sheet adjustments and bonus= add up before the limit;
    positive → boost dice, negative → setback dice, each capped at its max (3)."""
    req = request(game("symbols-genesys"), sheet=1, flat=flat, attrs={"dc": "0", "bonus": bonus})
    rolled = symbols.resolve(_symbols(), req, _stream([], then=1))
    thrown = rolled.record["thrown"]
    assert (thrown.count("boost"), thrown.count("setback")) == (boost, setback)


@pytest.mark.parametrize(("own", "tag", "boost", "setback"), [
    pytest.param(2, "", 2, 0, id="CHK-SYM-16-plus"),
    pytest.param(-2, "", 0, 2, id="CHK-SYM-16-minus"),
    pytest.param(2, ' bonus="-3"', 0, 1, id="CHK-SYM-21-own-and-tag"),
])
def test_chk_sym_16_the_skills_own_sheet_bonus_adds_boost_or_setback(own: int, tag: str,
                                                                     boost: int,
                                                                     setback: int) -> None:
    """CHK-SYM-16, CHK-SYM-A6 (DESIGN.md "Sheet model"): a skill's own sheet bonus joins the
    signed bonus; before the fix it was dropped in symbol pools."""
    doc = document("symbols-genesys")
    doc["sheet"]["skills"][0]["bonusRange"] = [-3, 3]
    g = load_ruleset(doc)
    people = fixture_json("parties/symbols-genesys.json")
    people["characters"][0]["skills"]["stealth"] = {"tier": "rank_two", "bonus": own}
    record, _ = _one("symbols-genesys", f'skill="stealth" dc="1"{tag}', g=g,
                     state=start_state(g, people))
    thrown = record["thrown"]
    assert (thrown.count("boost"), thrown.count("setback")) == (boost, setback)
    assert thrown.count("ability") + thrown.count("proficiency") == 3  # the pool is unchanged


def test_chk_sym_a7_draw_order() -> None:
    """CHK-SYM-A7: base, upgraded, boost, difficulty, upgraded difficulty, setback."""
    record, _ = _one("symbols-genesys",
                     'skill="stealth" dc="2" upgrade="1" bonus="-1" upgradeOwn="0"')
    assert record["thrown"] == ["ability", "proficiency", "proficiency", "difficulty",
                                "challenge", "setback"]
    record, _ = _one("symbols-genesys", 'skill="stealth" dc="1" bonus="+1"')
    assert record["thrown"] == ["ability", "proficiency", "proficiency", "boost", "difficulty"]


def test_chk_sym_27_upgrade_own_acts_on_the_roller_upgrade_on_the_opposition() -> None:
    """CHK-SYM-27, CHK-SYM-A4, CHK-SYM-A5: upgradeOwn= upgrades the roller's dice, upgrade= only the
    difficulty dice."""
    record, _ = _one("symbols-genesys", 'skill="stealth" dc="2" upgradeOwn="1"')
    assert record["thrown"] == ["proficiency"] * 3 + ["difficulty"] * 2
    record, _ = _one("symbols-genesys", 'skill="stealth" dc="2" upgrade="1"')
    assert record["thrown"] == ["ability", "proficiency", "proficiency", "difficulty",
                                "challenge"]


@pytest.mark.parametrize(("faces", "raw", "net"), [
    pytest.param([("ability", 4)], {"s": 2}, "2s", id="CHK-SYM-8-repeat"),
    pytest.param([("ability", 1)], {}, "", id="CHK-SYM-8-blank"),
    pytest.param([("proficiency", 12), ("ability", 2)], {"t": 1, "s": 1}, "2s 1t",
                 id="CHK-SYM-A9"),
    pytest.param([("ability", 8), ("difficulty", 4), ("difficulty", 4)],
                 {"a": 2, "h": 2}, "", id="CHK-SYM-A10"),
])
def test_chk_sym_8_a8_a9_a10_tally(faces: list[tuple[str, int]], raw: dict[str, int],
                                   net: str) -> None:
    """CHK-SYM-8 (a repeated id counts twice, [] is blank), CHK-SYM-A8 raw tally, CHK-SYM-A9
    counts add before cancelling (a triumph is also a success), CHK-SYM-A10 cancel pairs."""
    res = _symbols()
    got_raw, got_net = symbols.tally(res, faces)
    assert {k: v for k, v in got_raw.items() if v} == raw
    assert symbols.symbols_text(res, got_net) == net


@pytest.mark.parametrize(("doc_key", "value", "says"), [
    pytest.param("symbols", [{"id": "s", "label": "Success"}], "symbols", id="CHK-SYM-2"),
    pytest.param("dice", [{"id": "one", "label": "One", "faces": [["s"], []]}], "dice",
                 id="CHK-SYM-7-count"),
])
def test_chk_sym_2_7_import_sizes(doc_key: str, value: Any, says: str) -> None:
    """CHK-SYM-2: 2..10 symbols; CHK-SYM-7: 2..8 dice."""
    assert says in _rejected("symbols-genesys", **{doc_key: value})


def test_chk_sym_7_8_face_limits() -> None:
    """CHK-SYM-7: 2..20 faces per die; CHK-SYM-8: at most three symbols on a face."""
    doc = document("symbols-genesys")
    doc["resolution"]["dice"][0]["faces"] = [[]] * 21
    with pytest.raises(RulesetError):
        load_ruleset(doc)
    doc = document("symbols-genesys")
    doc["resolution"]["dice"][0]["faces"][1] = ["s", "s", "s", "s"]
    with pytest.raises(RulesetError):
        load_ruleset(doc)


@pytest.mark.parametrize(("needed", "script", "success"), [
    pytest.param(1, [2], True, id="CHK-SYM-29-one"),
    pytest.param(2, [2], False, id="CHK-SYM-29-two-short"),
    pytest.param(2, [4], True, id="CHK-SYM-A11"),
])
def test_chk_sym_29_a11_success_needs_symbols_left(needed: int, script: list[int],
                                                   success: bool) -> None:
    """CHK-SYM-29, CHK-SYM-A11: pass iff the success symbol left ≥ needed."""
    res = _symbols(success={"symbol": "s", "needed": needed})
    req = request(game("symbols-genesys"), sheet=1, attrs={"dc": "0"})
    assert symbols.resolve(res, req, _stream(script)).success is success


def test_chk_sym_30_31_a12_marks_survive_cancelling_and_change_nothing() -> None:
    """CHK-SYM-30/31, CHK-SYM-A12: a triumph and a despair both mark, even though the success
    and failure they added cancel; the check still fails on net successes."""
    req = request(game("symbols-genesys"), sheet=1, rank=1, attrs={"dc": "1", "upgrade": "1"})
    rolled = symbols.resolve(_symbols(), req, _stream([12, 12]))  # ["t"] vs ["d"]
    details = rolled.record["symbolDetails"]
    assert details["criticalSuccess"] is True and details["criticalFailure"] is True
    assert rolled.record["symbols"] == "1t 1d" and rolled.success is False
    assert rolled.critical is None


def test_chk_sym_32_33_a13_tiers_read_net_successes() -> None:
    """CHK-SYM-32/33, CHK-SYM-A13: by total reads net successes, by margin net − needed + 1;
    tiers decide success and the critical marks stay recorded."""
    tiers = {"by": "margin", "tiers": [
        {"id": "well", "label": "Well", "atLeast": 2, "success": True},
        {"id": "ok", "label": "Ok", "atLeast": 1, "success": True},
        {"id": "miss", "label": "Miss"}]}
    g = game("symbols-genesys", outcomes=tiers)
    for record in _records("symbols-genesys", 'skill="stealth" dc="2"', g=g, count=30):
        net = int(next((w[:-1] for w in record["symbols"].split() if w.endswith("s")), "0"))
        margin = net - 1 + 1
        assert record["outcome"] == ("Well" if margin >= 2 else "Ok" if margin >= 1 else "Miss")
        assert record["success"] is (margin >= 1)
        assert "criticalSuccess" in record["symbolDetails"]


def test_chk_sym_34_a3_bought_dice_are_base_dice_within_the_max() -> None:
    """CHK-SYM-34, CHK-SYM-A3: bought dice add base dice while the pool is below its max."""
    req = request(game("symbols-genesys"), sheet=3, rank=2, attrs={"dc": "0"}, bought_dice=5)
    rolled = symbols.resolve(_symbols(), req, _stream([], then=1))
    assert rolled.record["thrown"] == ["ability"] * 4 + ["proficiency"] * 2


def test_chk_sym_6_symbol_text_is_told_to_the_gm() -> None:
    """CHK-SYM-6: a symbol's text explains it to the GM."""
    doc_symbols = document("symbols-genesys")["resolution"]["symbols"]
    doc_symbols[4]["text"] = "Spend on something spectacular."
    res = _symbols(symbols=doc_symbols)
    req = request(game("symbols-genesys"), sheet=1, rank=1, attrs={"dc": "0"})
    rolled = symbols.resolve(res, req, _stream([12]))
    assert rolled.notices == ["Triumph: Spend on something spectacular."]


def test_chk_sym_44_overrides_may_not_replace_symbols_or_dice() -> None:
    """CHK-SYM-44, CHK-OVR-6."""
    override = [{"id": "o", "label": "O", "skills": ["stealth"], "set": {"dice": []}}]
    assert "dice" in _rejected("symbols-genesys", overrides=override)


@pytest.mark.parametrize(("api", "loads"), [
    pytest.param("1.150", False, id="CHK-SYM-35-too-old"),
    pytest.param("1.382", True, id="CHK-SYM-35-new-enough"),
])
def test_chk_sym_35_symbol_pool_combat_needs_1_382(api: str, loads: bool) -> None:
    """CHK-SYM-35 (Capability API half): a package symbol-pool ruleset with a combat block
    needs 1.382. The "any other combat kind is rejected" half is pinned in
    tests/engine/ruleset/test_ruleset_fight.py."""
    doc = document("symbols-genesys")
    doc["capabilityApi"] = api
    doc["combat"] = {"kind": "symbol-pool"}
    if loads:
        combat = load_ruleset(doc).ruleset.combat
        assert combat is not None and combat.kind == "symbol-pool"
    else:
        with pytest.raises(RulesetError) as error:
            load_ruleset(doc)
        assert str(error.value) == ("/combat: combat in a symbol-pool ruleset needs "
                                    "capabilityApi 1.382 or later (the ruleset declares 1.150)")


# === outcome tiers =============================================================================

def _tiers_everywhere() -> dict[str, Any]:
    return {"by": "total", "tiers": [
        {"id": "hi", "label": "High", "atLeast": 1, "success": True, "text": "Narrate it high."},
        {"id": "lo", "label": "Low"}]}


@pytest.mark.parametrize("name", ["sum-2d6", "pool-d10", "highest-blades", "symbols-genesys"])
def test_chk_out_1_2_4_20_21_tiers_work_with_every_kind(name: str) -> None:
    """CHK-OUT-1/2: tiers with every kind; CHK-OUT-4: by total reads the result itself;
    CHK-OUT-20: the record names the tier's label; CHK-OUT-21: the GM gets its text."""
    skill = {"sum-2d6": "climb", "pool-d10": "ward", "highest-blades": "skirmish",
             "symbols-genesys": "stealth"}[name]
    g = game(name, outcomes=_tiers_everywhere(), naturals=None)
    for index in range(20):
        _, answer = check(g, party(g, name), f'[skill_check: skill="{skill}" dc="1"]', (9, index))
        record = answer.record
        if record.get("critical") is None:
            assert record["outcome"] == ("High" if record["total"] >= 1 else "Low")
        if record["outcome"] == "High":
            assert "Narrate it high." in answer.text


def test_chk_out_15_the_tier_decides_success() -> None:
    """CHK-OUT-15, CHK-GEN-A7: total ≥ dc but below the success tier's bound → failure."""
    tiers = {"by": "margin", "tiers": [
        {"id": "s", "label": "Success", "atLeast": 100, "success": True},
        {"id": "f", "label": "Failure"}]}
    g = game("sum-2d6", outcomes=tiers)
    for record in _records("sum-2d6", 'skill="climb" dc="-50"', g=g, count=10):
        assert record["total"] >= -50 and record["success"] is False
        assert record["outcome"] == "Failure"


@pytest.mark.parametrize(("face", "tier", "success"), [
    pytest.param(20, "Great", True, id="CHK-OUT-16-max-best"),
    pytest.param(1, "Awful", False, id="CHK-OUT-16-min-worst"),
])
def test_chk_out_16_naturals_without_on_tiers_go_to_the_end_tiers(face: int, tier: str,
                                                                  success: bool) -> None:
    """CHK-OUT-16, CHK-OUT-A3: a natural with no ``on:`` tier lands in the best or worst tier
    and stays critical."""
    tiers = {"by": "margin", "tiers": [
        {"id": "g", "label": "Great", "atLeast": 5, "success": True},
        {"id": "ok", "label": "Ok", "atLeast": 0, "success": True},
        {"id": "a", "label": "Awful"}]}
    res = _sum(dice={"count": 1, "sides": 20}, naturals="both", outcomes=tiers,
               unmodified=None)
    assert res.outcomes is not None
    rolled = sum_kind.resolve(res, request(game("sum-2d6"), attrs={"dc": "10"}), _stream([face]))
    assert rolled is not None
    landed = outcomes.pick(res.outcomes, rolled, shift=True)
    assert (landed.tier.label, landed.success, landed.critical) == (
        tier, success, "success" if success else "failure")



@pytest.mark.parametrize(("face", "tiers", "tier", "success"), [
    pytest.param(1, "with", "Disaster", False, id="CHK-OUT-A2-on-tier"),
    pytest.param(1, "without", "Failure", False, id="CHK-OUT-A3-worst"),
    pytest.param(20, "with", "Triumph", True, id="CHK-OUT-A1-on-tier"),
])
def test_chk_out_a2_a_critical_failure_falls_into_its_on_tier(face: int, tiers: str, tier: str,
                                                              success: bool) -> None:
    """CHK-OUT-A2: a natural 1 (critFailure) lands in the ``on: "critical-failure"`` tier
    whatever the total — here 1 + 30 against dc 10 — and fails; without such a tier it is the
    worst numeric tier, still critical (CHK-OUT-A3)."""
    rows = [{"id": "win", "label": "Triumph", "on": "critical-success", "success": True},
            {"id": "loss", "label": "Disaster", "on": "critical-failure"},
            {"id": "ok", "label": "Success", "atLeast": 0, "success": True},
            {"id": "no", "label": "Failure"}]
    if tiers == "without":
        rows = [row for row in rows if row.get("on") != "critical-failure"]
    res = _sum(dice={"count": 1, "sides": 20}, naturals="both", unmodified=None,
               outcomes={"by": "margin", "tiers": rows})
    assert res.outcomes is not None
    rolled = sum_kind.resolve(res, request(game("sum-2d6"), sheet=30, attrs={"dc": "10"}),
                              _stream([face]))
    assert rolled is not None and rolled.value == face + 30
    landed = outcomes.pick(res.outcomes, rolled, shift=True)
    assert (landed.tier.label, landed.success) == (tier, success)
    assert landed.critical == ("success" if face == 20 else "failure")

def test_chk_out_5_two_to_eight_tiers() -> None:
    """CHK-OUT-5: tiers number 2 to 8."""
    one = {"by": "margin", "tiers": [{"id": "x", "label": "X", "success": True}]}
    assert "tiers" in _rejected("sum-2d6", outcomes=one)


# === overrides =================================================================================

def test_chk_ovr_4_a3_null_in_set_removes_the_key() -> None:
    """CHK-OVR-4, CHK-OVR-A3: ``"cancel": null`` — ones no longer cancel successes."""
    override = [{"id": "fav", "label": "Favored", "skills": ["ward"], "set": {"cancel": None}}]
    g = game("pool-d10", overrides=override)
    for record in _records("pool-d10", 'skill="ward" dc="2"', g=g, count=40):
        assert record["override"] == "Favored"
        assert record["total"] == sum(1 for f in record["rolls"] if f >= record["threshold"])


def test_chk_ovr_2_9_10_a1_a2_first_override_that_names_the_check() -> None:
    """CHK-OVR-2 (label and text), CHK-OVR-9 (no when → always), CHK-OVR-10, CHK-OVR-A1,
    CHK-OVR-A2 (the first override naming the check whose when holds)."""
    overrides = [
        {"id": "a", "label": "A", "skills": ["climb"], "when": {"field": "favored_athletics"},
         "set": {"dice": {"count": 3, "sides": 6}}},
        {"id": "b", "label": "B", "skills": ["climb"], "set": {"dice": {"count": 1, "sides": 6}},
         "text": "Rule B."},
        {"id": "c", "label": "C", "saves": ["steel"], "set": {"dice": {"count": 4, "sides": 6}}}]
    g = game("sum-2d6", overrides=overrides)
    record, _ = _one("sum-2d6", 'skill="climb" dc="3"', g=g)  # Ada: favored_athletics 1
    assert record["override"] == "A" and len(record["rolls"]) == 3
    record, text = _one("sum-2d6", 'skill="climb" dc="3" who="Bram the Quiet"', g=g)
    assert record["override"] == "B" and len(record["rolls"]) == 1 and "Rule B." in text
    record, _ = _one("sum-2d6", 'save="steel" dc="3"', g=g)
    assert record["override"] == "C" and len(record["rolls"]) == 4
    record, _ = _one("sum-2d6", 'skill="sneak" dc="3"', g=g)
    assert "override" not in record


# === spends and payment ========================================================================

def _spend_game(**entry: Any) -> Game:
    spend = {"pool": "resolve", "amount": 1, "perCheck": 2}
    spend.update(entry)
    return game("pool-d10", explode=None, spend=[spend])


def _bram_purchase(g: Game, offer: str, sheet: float = 5) -> Any:
    state = party(g, "pool-d10")
    character = state.characters[0]
    res = g.ruleset.resolution
    assert res is not None
    return purchases(g, res, character, SheetView(g, character, state), {"spend": offer}, sheet)


@pytest.mark.parametrize(("entry", "offer", "bought", "cost"), [
    pytest.param({"amount": 2, "successes": 1}, "resolve:3", 1, 2, id="CHK-SPEND-3"),
    pytest.param({"successes": 1, "perCheck": 2}, "resolve:3", 2, 2, id="CHK-SPEND-9"),
    pytest.param({"successes": 1, "perCheck": "pool"}, "resolve:3", 3, 3, id="CHK-SPEND-10-pool"),
    pytest.param({"successes": 1, "perCheck": {"abilityScore": "warmth"}}, "resolve:3", 2, 2,
                 id="CHK-SPEND-11"),
    pytest.param({"successes": 1, "perCheck": {"abilityScore": "wits"}}, "resolve:9", 3, 3,
                 id="CHK-SPEND-10-sheet"),
])
def test_chk_spend_3_9_10_11_pay_a2_purchases(entry: dict[str, Any], offer: str, bought: int,
                                              cost: int) -> None:
    """CHK-SPEND-3 (amount is one purchase's price), CHK-SPEND-9/10/11 (perCheck: a number,
    "pool", or a sheet value read for the roller), CHK-PAY-A1, CHK-PAY-A2 (whole purchases, capped)."""
    got = _bram_purchase(_spend_game(**entry), offer, sheet=3)
    assert (got.successes, got.charges) == (bought, {"resolve": cost})
    assert got.record["bought"] == bought


def test_chk_spend_11_a_zero_limit_buys_and_pays_nothing() -> None:
    """CHK-SPEND-11: a limit of 0 buys nothing and pays nothing."""
    g = _spend_game(successes=1, perCheck="pool")
    got = _bram_purchase(g, "resolve:2", sheet=0)
    assert (got.successes, got.charges, got.record) == (0, {}, {})



def test_chk_pool_a17_bought_successes_come_after_cancelling() -> None:
    """CHK-POOL-A17, CHK-SPEND-5: bought successes are added after counting and cancelling:
    three ones cancel nothing they could take, so the one bought success stands (and a
    botch-free roll with it succeeds at dc 1)."""
    res = _pool(pool={"min": 3, "max": 3}, explode=None, botch=None, exceptional=None)
    bought = request(game("pool-d10"), sheet=3, attrs={"dc": "1"}, bought_successes=1)
    rolled = pool.resolve(res, bought, _stream([1, 1, 1]))
    assert (rolled.value, rolled.success) == (1, True)
    plain = pool.resolve(res, request(game("pool-d10"), sheet=3, attrs={"dc": "1"}),
                         _stream([1, 1, 1]))
    assert (plain.value, plain.success) == (0, False)

def test_chk_spend_6_bought_dice_roll_with_the_pool() -> None:
    """CHK-SPEND-6, CHK-SPEND-15, CHK-PAY-A5: bought dice join the pool, within its limits."""
    g = _spend_game(dice=1)
    record, _ = _one("pool-d10", 'skill="ward" dc="2" spend="resolve:2"', g=g,
                     state=_bare(g, "pool-d10"))
    assert len(record["rolls"]) == 5 + 2 and record["spend"] == "resolve:2"


def test_chk_spend_7_8_a_reroll_is_bought_once() -> None:
    """CHK-SPEND-7/8: the spend's reroll reads like resolution.reroll and is bought once however
    many purchases (two purchases still reroll each low die once)."""
    g = _spend_game(reroll={"upTo": 6, "mode": "once"})
    got = _bram_purchase(g, "resolve:2")
    assert got.reroll == RerollRule.model_validate({"upTo": 6, "mode": "once"}) and got.record["bought"] == 2
    res = g.ruleset.resolution
    assert isinstance(res, PoolResolution)
    req = request(g, sheet=2, attrs={"dc": "1"}, bought_reroll=got.reroll)
    rolled = pool.resolve(res, req, _stream([3, 9, 2]))
    assert rolled.rolls == [2, 9] and rolled.record["rerolled"] == 1
    assert "reroll" not in rolled.record  # CHK-TAG-18: not the one named by reroll=


def test_chk_spend_1_scope_3_the_system_spend_is_a_standing_rule() -> None:
    """CHK-SPEND-1, CHK-SCOPE-3: "spend a point for a success" is resolution.spend, charged in
    the same resolution (CHK-SPEND-16); the state before is unchanged."""
    g = game("pool-d10")
    state = party(g, "pool-d10")
    new, answer = check(g, state, '[skill_check: skill="nerve" dc="2" spend="resolve:2"]')
    assert answer.record["successesBought"] == 2
    assert (state.characters[0].pools["resolve"], new.characters[0].pools["resolve"]) == (3, 1)


@pytest.mark.parametrize("kind", [
    pytest.param("opposed-pool", id="CHK-SCOPE-1"),
    pytest.param("wild-die", id="CHK-SCOPE-2"),
])
def test_chk_scope_1_2_unmodelled_kinds_are_rejected(kind: str) -> None:
    """CHK-SCOPE-1/2, CHK-GEN-1: opposed pools and wild-die sums are not kinds."""
    assert _rejected("pool-d10", kind=kind)


def test_chk_scope_4_5_free_and_entry_rerolls_are_modelled() -> None:
    """CHK-SCOPE-4: a free reroll is resolution.reroll; CHK-SCOPE-5: an entry's reroll is its
    mechanics.check (EntryCheck), both read by the pool's reroll choice (CHK-POOL-31)."""
    res = _pool(explode=None)
    assert [r.id for r in res.reroll] == ["careful"]
    entry = EntryCheck(reroll=RerollRule.model_validate({"upTo": 2, "mode": "until"}))
    req = request(game("pool-d10"), sheet=2, attrs={"dc": "1", "reroll": "careful"}, entry=entry)
    rolled = pool.resolve(res, req, _stream([3, 9, 8]))
    assert rolled.rolls == [8, 9] and rolled.record["reroll"] == "careful"


# === the common pipeline =======================================================================

def test_chk_gen_13_what_the_number_means_per_kind() -> None:
    """CHK-GEN-13: the same sheet number 3 is added (sum), counted as dice (pool, highest), kept
    apart as ability/rank (symbol), or is the threshold (roll-against)."""
    g = game("sum-2d6", outcomes=None, unmodified=None)
    summed = sum_kind.resolve(_sum(outcomes=None, unmodified=None), request(g, sheet=3,
                                                                     attrs={"dc": "5"}),
                         _stream([1, 1]))
    assert summed is not None and summed.value == 5
    assert len(pool.resolve(_pool(explode=None), request(game("pool-d10"), sheet=3,
                                                         attrs={"dc": "1"}),
                            _stream([5, 5, 5])).rolls) == 3
    high = highest.resolve(_highest(), request(game("highest-blades"), sheet=3,
                                               attrs={"dc": "4"}), _stream([2, 5, 3]))
    assert high is not None and len(high.rolls) == 3
    assert against.resolve(_against(), request(game("against-d100"), sheet=3),
                           _stream([2])).dc == 3
    sym = symbols.resolve(_symbols(), request(game("symbols-genesys"), sheet=3, rank=1,
                                              attrs={"dc": "0"}), _stream([1, 1, 1]))
    assert sym.record["thrown"] == ["ability", "ability", "proficiency"]


def test_chk_gen_a1_a2_a3_a5_a6_a8_one_pipeline() -> None:
    """CHK-GEN-A1 (parse, name the roller), CHK-GEN-A2 (override), CHK-GEN-A3 (with=),
    CHK-GEN-A5 (purchases before rolling), CHK-GEN-A6 (the kind's algorithm), CHK-GEN-A8
    (record and charge together)."""
    g = game("pool-d10")
    state = party(g, "pool-d10")
    new, answer = check(g, state, '[skill_check: skill="Nerve" dc="2" with="Wits" '
                                  'spend="resolve:1" who="Bram the Quiet"]')
    record = answer.record
    assert record["skill"] == "nerve" and record["with"] == "wits"
    assert record["spend"] == "resolve:1" and new.characters[0].pools["resolve"] == 2
    assert record["threshold"] == 7 and record["dc"] == 2


def test_chk_tal_2_12_use_names_the_entry_in_the_check() -> None:
    """CHK-TAL-12: the GM names the chosen entry with use= in the check itself; CHK-TAL-2: its
    reroll rerolls dice at or below upTo."""
    doc = document("pool-d10")
    doc["catalogs"].append({"id": "disciplines", "label": "Disciplines", "holds": "disciplines",
                            "entries": [{"id": "potence", "label": "Potence", "mechanics": {
                                "kind": "utility", "cost": [{"pool": "resolve", "amount": 1}],
                                "check": {"reroll": {"upTo": 6, "mode": "until"}}}}]})
    g = load_ruleset(doc)
    people = fixture_json("parties/pool-d10.json")
    people["characters"][0]["entries"] = ["disciplines/potence"]
    state = start_state(g, people)
    for index in range(10):
        new, answer = check(g, state, '[skill_check: skill="Ward" dc="2" use="Potence"]',
                            (11, index))
        record = answer.record
        assert record["use"] == "Potence" and new.characters[0].pools["resolve"] == 2
        originals = record["rolls"][:5]
        assert all(f > 6 for f in originals)
