"""Reactions (spec/combat.md A.8: CMB-REACT-1..7, OQ-CMB-11; CMB-TURN-A5): a hero's standing
order, kept in the party file and the state, fired by the engine when a foe's strike hits it,
before the hit is confirmed; the Shield example (+5 defence for the rest of the round). On
fixtures/rulesets/skirmish-spells.json: Ada (defence 12) reacts to being hit with Shield, a
level-1 spell paid with one of her two 1st-level slots; the goblins (+1 to hit) act before her."""

from __future__ import annotations

import copy

import pytest
from fight_spells import GAME, PARTY, START, fighting, first
from helpers import answer, hero, one

from engine import start_state
from engine.rules import reasons
from engine.rules.party import PartyError
from engine.rules.state import StandingOrder, State

GOBLIN_ON_ADA = '[attack: who="Goblin 1" target="Ada"]'
BOTH_ON_ADA = GOBLIN_ON_ADA + ' [attack: who="Goblin 2" target="Ada"]'


def _natural(record) -> int:
    return record["rolls"][-1]


def test_cmb_react_7_shield_adds_5_before_the_hit_is_confirmed() -> None:
    """A strike totalling 12..16 hits defence 12 and misses 17: Shield turns it into a miss."""
    state = fighting()
    after, answers = first(state, GOBLIN_ON_ADA,
                           lambda a: 12 <= a[0].record["total"] <= 16
                           and _natural(a[0].record) not in (1, 20))
    found = answers[0].record
    assert found["result"] == "miss" and found["defence"] == 17 and found["damage"] == 0
    assert found["reaction"] == {"who": "Ada", "use": "Shield", "ref": "spells/shield",
                                 "on": "hit", "paid": "slot_1:1", "added": 5, "defence": 17,
                                 "before": "hit"}
    assert "Ada reacts: Shield, defence 12 → 17 · miss" in answers[0].text
    assert hero(after, "Ada").pools["slot_1"] == 1  # CMB-REACT-7: one slot
    assert one(after, "Ada").reacted == 1 and one(after, "Ada").guard == 5


def test_cmb_react_3_a_hit_that_beats_the_shield_still_lands() -> None:
    state = fighting()
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: a[0].record["total"] >= 17
                       and _natural(a[0].record) != 20)
    assert answers[0].record["result"] == "hit" and answers[0].record["reaction"]["added"] == 5


def test_cmb_react_1_2_a_miss_sets_off_nothing_and_only_one_reaction_a_round() -> None:
    state = fighting()
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: a[0].record["result"] == "miss"
                       and "reaction" not in a[0].record)
    assert answers[0].record["defence"] == 12
    # two strikes that would both hit: the first sets Shield off, the second meets it too
    # (OQ-CMB-11: until her next turn, the rest of the round) and no second reaction fires
    after, answers = first(state, BOTH_ON_ADA, lambda a: all(
        r.record["total"] >= 12 for r in a) and "reaction" in a[0].record)
    assert "reaction" not in answers[1].record and answers[1].record["defence"] == 17
    assert hero(after, "Ada").pools["slot_1"] == 1


def test_the_shield_ends_with_the_round_and_she_may_react_again_in_the_next() -> None:
    state = fighting()
    state, answers = first(state, GOBLIN_ON_ADA, lambda a: "reaction" in a[0].record)
    assert one(state, "Ada").guard == 5
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: a[0].record["result"] == "miss"
                           and "reaction" not in a[0].record, session=2)
    assert answers[0].record["defence"] == 12  # the round passed: 12 again
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: "reaction" in a[0].record, session=2)
    assert answers[0].record["reaction"]["paid"] == "slot_1:1"


def test_cmb_react_5_a_reaction_is_never_a_turn_action_and_spends_no_budget() -> None:
    state = fighting()
    after, answers = answer(GAME, state, '[attack: who="Ada" use="Shield"]', (1, 1))
    assert answers[0].reason == reasons.REACTION_ONLY and after is state
    # the goblins strike first (higher initiative); Ada still has her action after reacting
    after, answers = first(state, GOBLIN_ON_ADA + ' [attack: who="Ada" use="Fire Bolt" '
                           'target="Goblin 1"]', lambda a: "reaction" in a[0].record)
    assert answers[1].ok and one(after, "Ada").spent == ("action",)


def test_no_slot_left_no_reaction() -> None:
    state = fighting(state=START.with_character(0, hero(START, "Ada").model_copy(
        update={"pools": {"hp": 12, "slot_1": 0}})))
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: a[0].record["total"] >= 12)
    assert "reaction" not in answers[0].record and answers[0].record["result"] != "miss"


def test_cmb_type_2_a_paralysed_hero_does_not_react() -> None:
    state = fighting()
    state, _ = answer(GAME, state, '[combat: op="condition" who="Ada" add="paralyzed"]', (0, 1))
    _, answers = first(state, GOBLIN_ON_ADA, lambda a: a[0].record["result"] != "miss")
    assert "reaction" not in answers[0].record


def test_a_reaction_rolls_the_same_on_a_swipe() -> None:
    state = fighting()
    one_way = answer(GAME, state, BOTH_ON_ADA, (1, 7))
    again = answer(GAME, state, BOTH_ON_ADA, (1, 7))
    assert [a.record for a in one_way[1]] == [a.record for a in again[1]]


# --- the standing orders: party file and state (CMB-REACT-3, OQ-CMB-11) ----------------------------

def test_standing_orders_are_kept_in_the_state_and_read_back() -> None:
    assert hero(START, "Ada").reactions == (StandingOrder(on="hit", use="spells/shield"),)
    dumped = START.to_json()
    assert dumped["characters"][0]["reactions"] == [{"on": "hit", "use": "spells/shield"}]
    assert "reactions" not in dumped["characters"][1]  # none: serialised as before
    assert start_state(GAME, dumped).characters == START.characters


def _party(**ada: object) -> dict:
    party = copy.deepcopy(PARTY)
    party["characters"][0].update(ada)
    return party


@pytest.mark.parametrize(("reactions", "message"), [
    ([{"on": "hit", "use": "spells/fire-bolt"}], "is no reaction to \"hit\""),
    ([{"on": "spell", "use": "Shield"}], "is no reaction to \"spell\""),
    ([{"on": "hit", "use": "spells/action-surge"}], "is no entry Ada chose"),
])
def test_a_standing_order_names_a_chosen_reaction_to_that_trigger(reactions, message) -> None:
    with pytest.raises(PartyError) as error:
        start_state(GAME, _party(reactions=reactions))
    assert message in str(error.value) and "/characters/0/reactions/0/use" in str(error.value)


def test_a_standing_order_may_name_the_entry_by_its_label() -> None:
    state: State = start_state(GAME, _party(reactions=[{"on": "hit", "use": "shield"}]))
    assert hero(state, "Ada").reactions[0].use == "spells/shield"
