"""The spending style's number (issue 25; spec/items.md glossary "Spending / taking style",
§11.3 ITM-FLOOR-3, §12.3 ITM-HARD-1/2; docs/rulesets.md "Pool fights"), on
fixtures/rulesets/gravewatch-fights.json with ``combat.pool.gain``: each combatant's initiative
is a number that joins at its initiative (the base), rises by the gain every round after the
first, is thrown as a landed spending strike's damage and then falls back to the base."""

from __future__ import annotations

import copy
from typing import Any

from helpers import answer, fixture_json, one, problems_of, put

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.pool import risen, spent, thrown, thrown_line
from engine.rules.state import Combatant, State, plain_canonical
from engine.text.fight.block import combat_block

DOCUMENT = fixture_json("rulesets/gravewatch-fights.json")
PARTY = fixture_json("parties/gravewatch-fights.json")
DEAD = '[combat: op="start" foe="Dead" role="standard" tier="1"]'
WARDEN = '[combat: op="start" foe="Warden" role="warden" tier="1"]'
ADA = '[attack: who="Ada" target="Dead"]'


def gained(gain: int = 2, *mutations: Any) -> Any:
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["pool"]["gain"] = gain
    for mutate in mutations:
        mutate(document)
    return load_ruleset(document)


GAME = gained()
START = start_state(GAME, PARTY)


def fighting(text: str, game: Any = GAME) -> State:
    state, answers = answer(game, start_state(game, PARTY), text)
    assert all(a.ok for a in answers), answers
    return state


def numbers(state: State, **set_to: tuple[int, int]) -> State:
    """The state with each named combatant's (number, base) set."""
    assert state.encounter is not None
    combatants = tuple(
        c.model_copy(update={"initiative": set_to[c.name][0], "base": set_to[c.name][1]})
        if c.name in set_to else c for c in state.encounter.combatants)
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": combatants})})


def strike_until(game: Any, state: State, text: str, wanted: Any, most: int = 60
                 ) -> tuple[State, dict[str, Any], str]:
    """The first reply turn whose one strike's record ``wanted`` accepts (the dice differ per
    turn, each turn is the encounter's first round here); the state after it, its record and
    its text."""
    for turn in range(1, most):
        after, answers = answer(game, state, text, (turn, 0))
        assert answers[0].ok, answers[0]
        if wanted(answers[0].record):
            return after, answers[0].record, answers[0].text
    raise AssertionError(f"no strike in {most} turns matched")


# --- the arithmetic -------------------------------------------------------------------------

def test_itm_floor_3_a_thrown_number_less_reduction_never_raised() -> None:
    assert thrown(5, 0) == 5 and thrown(5, 1) == 4 and thrown(2, 9) == 0 and thrown(-3, 0) == 0
    assert thrown_line(5, 1) == ", throws 5 − 1 reduction = 4"
    assert thrown_line(3, 0) == ", throws 3 = 3"


def test_the_number_rises_by_its_gain_and_falls_back_to_its_base() -> None:
    hero = Combatant(name="Ada", side="party", initiative=3, joined=0, base=1, gain=2)
    assert risen(hero).initiative == 5 and spent(risen(hero)).initiative == 1
    plain = Combatant(name="Ada", side="party", initiative=3, joined=0)
    assert risen(plain) == plain and spent(plain) == plain  # no number outside the style


# --- joining ------------------------------------------------------------------------------

def test_every_combatant_joins_with_its_initiative_as_base_and_the_gain() -> None:
    state = fighting(DEAD)
    assert state.encounter is not None
    for combatant in state.encounter.combatants:
        assert (combatant.base, combatant.gain) == (combatant.initiative, 2)
        assert combatant.model_dump(by_alias=True)["base"] == combatant.initiative


def test_without_gain_the_state_reads_as_before() -> None:
    game = load_ruleset(DOCUMENT)
    state, _ = answer(game, start_state(game, PARTY), DEAD)
    assert state.encounter is not None
    for combatant in state.encounter.combatants:
        assert combatant.base is None and combatant.gain == 0
        dumped = combatant.model_dump(by_alias=True)
        assert "base" not in dumped and "gain" not in dumped


def test_gain_needs_the_spending_style() -> None:
    found = problems_of(DOCUMENT, put(("combat", "pool"), {"style": "taking", "gain": 1}))
    assert '/combat/pool/gain: gain needs combat.pool.style "spending"' in found
    assert problems_of(DOCUMENT, put(("combat", "pool", "gain"), 1)) == []
    assert any("gain" in p for p in problems_of(DOCUMENT, put(("combat", "pool", "gain"), -1)))


# --- a hero's spending strike -------------------------------------------------------------

def test_itm_floor_3_a_heros_landed_strike_throws_its_number_and_falls_back() -> None:
    """Ada's number 3 (base 1) lands on the dead (hp 5, hardness 1, reduction 0): 3 blunt,
    whatever the successes, and her number falls back to 1; no extra dice are rolled."""
    state = numbers(fighting(DEAD), Ada=(3, 1))
    after, record, text = strike_until(GAME, state, ADA, lambda r: r["result"] != "miss")
    assert record["number"] == 3 and record["damage"] == 3 and "floor" not in record
    assert record["initiative"] == {"Ada": 1} and "damageRolls" not in record
    assert one(after, "Dead").hp == record["hp"] == 2
    assert one(after, "Ada").initiative == 1
    assert ", throws 3 = 3 blunt · Dead 2/5; Ada's number falls back to 1." in text


def test_itm_floor_3_a_thrown_number_fells_and_wins_as_any_damage() -> None:
    state = numbers(fighting(DEAD), Ada=(7, 2))
    after, record, text = strike_until(GAME, state, ADA, lambda r: r["result"] != "miss")
    assert record["damage"] == 7 and record["hp"] == 0
    assert record["events"] == ["damage:Dead:7", "felled:Dead", "end:victory"]
    assert after.encounter is None and "The fight is won." in text


def test_itm_floor_3_reduction_comes_off_the_number_and_no_floor_raises_it() -> None:
    def thick(document: Any) -> None:
        document["combat"]["templates"][0]["combat"]["reduction"] = "20"
    game = gained(2, thick)
    state = numbers(fighting(DEAD, game), Ada=(4, 1))
    after, record, text = strike_until(game, state, ADA, lambda r: r["result"] != "miss")
    assert record["damage"] == 0 and record["reduction"] == 20 and "floor" not in record
    assert ", throws 4 − 20 reduction = 0" in text
    assert one(after, "Ada").initiative == 1


def test_itm_hard_2_below_hardness_does_nothing_and_the_number_still_falls_back() -> None:
    """Ada's spade throws 5 dice against the warden's hardness 6: it hits, does nothing, and
    her number 9 still falls back to its base 3."""
    state = numbers(fighting(WARDEN), Ada=(9, 3))
    after, record, text = strike_until(GAME, state, '[attack: who="Ada" target="Warden"]',
                                       lambda r: r["result"] != "miss")
    assert record["hardness"] == 6 and record["damage"] == 0 and record["number"] == 9
    assert record["initiative"] == {"Ada": 3} and one(after, "Ada").initiative == 3
    assert one(after, "Warden").hp == one(state, "Warden").hp
    assert ("Ada's Grave spade lands on the warden with 5 dice, below a hardness of 6, and "
            "does nothing.") in text


def test_a_miss_throws_nothing_and_keeps_the_number() -> None:
    state = numbers(fighting(DEAD), Ada=(6, 2))
    after, record, _ = strike_until(GAME, state, ADA, lambda r: r["result"] == "miss")
    assert "number" not in record and record["damage"] == 0
    assert one(after, "Ada").initiative == 6


# --- a foe's spending strike --------------------------------------------------------------

def test_itm_floor_3_a_foes_strike_throws_its_number_less_the_heros_reduction() -> None:
    """The dead's number 5 (base 1) lands on Ada, whose Oilskin coat gives a reduction
    (combat.pool.reduction, its armour through itemStat)."""
    state = numbers(fighting(DEAD), Dead=(5, 1))
    before = state.characters[0]
    after, record, text = strike_until(GAME, state, '[attack: who="Dead" target="Ada"]',
                                       lambda r: r["result"] != "miss")
    assert record["number"] == 5 and record["reduction"] == 1 and record["damage"] == 4
    assert record["initiative"] == {"Dead": 1} and one(after, "Dead").initiative == 1
    assert (record["hp"], record["hpMax"]) == (4, 8) and "damageRolls" not in record
    assert after.characters[0].pools != before.pools
    assert ("hit, throws 5 − 1 reduction = 4 blunt · Ada 4/8; Dead's number falls back to 1."
            in text)


# --- rounds, the COMBAT block, refusals, determinism ---------------------------------------

def test_each_new_round_after_the_first_raises_every_number_by_the_gain() -> None:
    state = numbers(fighting(DEAD), Ada=(3, 3), Mira=(1, 1), Dead=(2, 2))
    first, answers = answer(GAME, state, '[attack: who="Mira" target="Dead"]', (1, 0))
    assert answers[0].ok and first.encounter is not None and first.encounter.round == 1
    assert answers[0].record["result"] == "miss"
    assert one(first, "Ada").initiative == 3  # the first round starts at the base
    assert one(first, "Mira").initiative == 1
    second, answers = answer(GAME, first, '[attack: who="Dead" target="Mira"]', (2, 0))
    assert answers[0].ok and second.encounter is not None and second.encounter.round == 2
    assert one(second, "Ada").initiative == 5  # + gain 2, Ada did not strike
    assert answers[0].record["result"] == "miss"  # so the dead keeps its risen number
    assert (one(second, "Mira").initiative, one(second, "Dead").initiative) == (3, 4)


def test_the_combat_block_shows_the_number_its_base_and_gain() -> None:
    state = numbers(fighting(DEAD), Ada=(7, 2))
    assert "number 7 (base 2, +2 a round)" in combat_block(GAME, state)
    plain = load_ruleset(DOCUMENT)
    assert "number " not in combat_block(plain, answer(plain, start_state(plain, PARTY),
                                                       DEAD)[0])


def test_a_refused_strike_leaves_the_number_alone() -> None:
    state = numbers(fighting(DEAD), Ada=(7, 2))
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Wight"]', (1, 0))
    assert not answers[0].ok and answers[0].reason == reasons.UNKNOWN_COMBATANT
    assert plain_canonical(after) == plain_canonical(state)


def test_a_swipe_throws_the_same_number() -> None:
    state = numbers(fighting(DEAD), Ada=(7, 2), Dead=(4, 1))
    tags = f'{ADA} [attack: who="Dead" target="Mira"]'
    first, one_way = answer(GAME, state, "Spades ring. " + tags, (1, 0))
    second, other = answer(GAME, state, tags + " Mud everywhere.", (1, 0))
    assert [a.record for a in one_way] == [a.record for a in other]
    assert plain_canonical(first) == plain_canonical(second)
