"""Sustained abilities (spec/combat.md A.9: CMB-SUS-1..8, OQ-CMB-12; CMB-ATK-A6): who sustains
what, one at a time; the ``combat.sustain`` save (Fortitude against max(10, ⌊damage/2⌋)) on
every foe's strike that damages the sustainer, temporary points that soak it included; the end
when that save fails or the sustainer is downed, and everything it applied leaving everyone.
On fixtures/rulesets/skirmish-spells.json: Ada (Con 12: +1) sustains Hold Person or Faerie
Fire; the goblins act before her."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from fight_spells import DOCUMENT, GAME, PARTY, fighting, first
from helpers import answer, hero, one
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.actions.checks.pipeline import roll_check
from engine.actions.fight.react import sustain_after_damage
from engine.rules.context import TurnContext
from engine.rules.state import State
from engine.text.fight.block import combat_block

HOLD = '[attack: who="Ada" use="Hold Person" target="Goblin 2"]'
FAERIE = '[attack: who="Ada" use="Faerie Fire" target="Goblin 1"]'
ORC_ON_ADA = '[attack: who="Orc" target="Ada"]'


def _held(answers) -> bool:
    """Hold Person took, and the end of the round did not save it off at once."""
    found = answers[0].record
    return answers[0].ok and not found["targets"][0]["saved"] and not any(
        r.get("saved") for r in found.get("roundEnd", []))


def holding(state: State | None = None) -> State:
    state, _ = first(state or fighting(), HOLD, _held)
    return state


def test_cmb_sus_1_2_who_sustains_what_is_recorded_with_what_it_applied() -> None:
    state = holding()
    assert one(state, "Ada").sustains == "spells/hold-person"
    paralysed = one(state, "Goblin 2").conditions[0]
    assert (paralysed.name, paralysed.by) == ("paralyzed", "Ada")


def test_cmb_sus_3_a_second_sustained_ability_ends_the_first_and_frees_its_targets() -> None:
    state = holding()
    after, answers = first(state, FAERIE, lambda a: a[0].ok, session=2)
    assert one(after, "Goblin 2").conditions == ()  # CMB-SUS-7: Hold Person left it
    assert one(after, "Ada").sustains == "spells/faerie-fire"
    assert answers[0].record["ended"] == {"ref": "spells/hold-person",
                                          "removed": ["Goblin 2: paralyzed"]}


def test_cmb_sus_8_the_combat_block_shows_what_is_sustained() -> None:
    block = combat_block(GAME, holding())
    assert "sustaining Hold Person" in block
    assert "reacts: Shield when hit" in block
    assert "abilities: Fire Bolt, Burning Hands, Hold Person, Faerie Fire" in block


def _with_orc(state: State, **ada: object) -> State:
    """A tier-6 orc (6d6 + 6) joins, so strikes deal enough for a DC above 10."""
    if ada:
        state = state.with_character(0, hero(state, "Ada").model_copy(update=ada))
    state, answers = answer(GAME, state, '[combat: op="join" foe="Orc" tier="6"]', (0, 9))
    assert answers[0].ok
    return state


def _damaged(answers) -> bool:
    return answers[0].ok and answers[0].record["damage"] > 0


@pytest.mark.parametrize("turn", range(1, 25))
def test_cmb_sus_4_5_every_damaging_strike_asks_the_save_at_max_10_half_the_damage(turn) \
        -> None:
    state = _with_orc(holding(), pools={"hp": 12, "hp:temporary": 80})
    after, answers = answer(GAME, state, ORC_ON_ADA, (3, turn))
    found = answers[0].record
    if not found["damage"]:
        assert "sustain" not in found  # no damage, no save (CMB-SUS-5)
        return
    sustain = found["sustain"]
    # OQ-CMB-12, ITM-OUT-4: half the damage rounded down, temporary points soaking it count
    assert sustain["dc"] == max(10, found["damage"] // 2)
    assert found["hp"] == 12  # the temporary points took it all
    assert sustain["total"] == sustain["rolls"][-1] + 1  # Fortitude: Con 12 gives +1
    assert sustain["saved"] == (sustain["rolls"][-1] == 20 or (
        sustain["rolls"][-1] != 1 and sustain["total"] >= sustain["dc"]))
    if sustain["saved"]:
        assert one(after, "Ada").sustains == "spells/hold-person"
    else:  # CMB-SUS-4, CMB-SUS-7
        assert sustain["ended"] and sustain["why"] == "failed"
        assert one(after, "Ada").sustains is None
        assert all(c.name != "paralyzed" for c in one(after, "Goblin 2").conditions)


def test_cmb_sus_6_downed_ends_it_without_a_save() -> None:
    state = _with_orc(holding(), pools={"hp": 1})
    after, answers = first(state, ORC_ON_ADA, _damaged, session=3)
    sustain = answers[0].record["sustain"]
    assert sustain == {"use": "Hold Person", "ended": True, "why": "downed",
                       "removed": ["Goblin 2: paralyzed"]}
    assert one(after, "Ada").sustains is None and one(after, "Goblin 2").conditions == ()


def test_a_ruleset_without_combat_sustain_ends_it_only_when_downed() -> None:
    document = copy.deepcopy(DOCUMENT)
    del document["combat"]["sustain"]
    game = load_ruleset(document)
    state, _ = first(fighting(start_state(game, PARTY), game=game), HOLD, _held, game=game)
    state = state.with_character(0, hero(state, "Ada").model_copy(
        update={"pools": {"hp": 12, "hp:temporary": 80}}))
    state, _ = answer(game, state, '[combat: op="join" foe="Orc" tier="6"]', (0, 9))
    after, answers = first(state, ORC_ON_ADA, _damaged, game=game, session=3)
    assert "sustain" not in answers[0].record
    assert one(after, "Ada").sustains == "spells/hold-person"


@pytest.mark.parametrize(("damage", "dc"), [(0, None), (1, 10), (21, 10), (22, 11), (31, 15),
                                           (40, 20)])
def test_oq_cmb_12_the_dc_is_the_larger_of_10_and_half_the_damage_rounded_down(damage,
                                                                              dc) -> None:
    state = holding()
    found = sustain_after_damage(GAME, state, state.encounter.find("Ada"), damage, False,
                                 TurnContext(state.seed, (4, 1)), "probe")
    assert found.record.get("dc") == dc


def test_cmb_sus_4_the_save_rate_is_exact_for_the_dc() -> None:
    """d20 + 1 against DC 15 saves on 14..20 (7 in 20): 20,000 saves drawn with the very
    check and dice key a strike's sustain save uses (the first ones compared whole)."""
    state = holding()
    index = state.encounter.find("Ada")
    ctx = TurnContext(state.seed, (4, 1))
    attrs = {"save": "fortitude", "dc": "15"}
    for n in range(30):  # the same roll as the strike's own save
        found = sustain_after_damage(GAME, state, index, 31, False, ctx, f"probe/{n}")
        _, checked = roll_check(GAME, state, 0, attrs, ctx.for_tag(0), f"probe/{n}/sustain")
        assert (found.record["saved"], found.record["rolls"]) == (
            checked.success, checked.record["rolls"])
    counts = Counter(roll_check(GAME, state, 0, attrs, ctx.for_tag(0),
                                f"probe/{n}/sustain")[1].success for n in range(20_000))
    assert chisquare([counts[True], counts[False]], [7_000, 13_000]).pvalue > 1e-4


def test_the_sustain_save_rolls_the_same_on_a_swipe() -> None:
    state = _with_orc(holding())
    one_way = answer(GAME, state, ORC_ON_ADA, (3, 4))[1][0].record
    assert one_way == answer(GAME, state, ORC_ON_ADA, (3, 4))[1][0].record
