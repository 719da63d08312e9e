"""A foe leaving the heroes' reach sets off their reactions on ``leave`` (spec/combat.md A.8:
CMB-REACT-1..6, OQ-CMB-11; spec/items.md ITM-MODE-9, ITM-OFF-6; engine/actions/fight/leave.py)
on fixtures/rulesets/skirmish-foes.json and its party: Brannoc's standing order on ``leave``
is Opportunity Attack (a reaction entry, ``react.on: "leave"``); he wears a longsword."""

from __future__ import annotations

from helpers import answer, fixture_json, hero, one

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.state import plain_canonical
from engine.text.prompt import instructions

GAME = load_ruleset(fixture_json("rulesets/skirmish-foes.json"))
START = start_state(GAME, fixture_json("parties/skirmish-foes.json"))
LEAVES = '[combat: op="leave" who="Goblin 1"]'


def _fighting():
    state, answers = answer(GAME, START, '[combat: op="start" foe="Goblin" count="2"]')
    assert all(a.ok for a in answers)
    return state


def test_cmb_react_4_leaving_sets_off_the_standing_order_a_weapon_strike_unchanged() -> None:
    state = _fighting()
    after, answers = answer(GAME, state, LEAVES, (1, 1))
    record = answers[0].record
    (row,) = record["reactions"]
    assert (row["who"], row["use"], row["on"]) == ("Brannoc", "Opportunity Attack", "leave")
    # ITM-MODE-9: the first worn weapon, in its default mode, near
    assert row["weapon"] == "Longsword" and row["range"] == "near" and "mode" not in row
    assert row["total"] == row["rolls"][-1] + row["modifier"] and row["defence"] == 13
    assert one(after, "Goblin 1").hp == 14 - row["damage"]
    if row["damage"]:
        assert record["events"] == [f"damage:Goblin 1:{row['damage']}"]  # CMB-CARD-1
    # CMB-REACT-1/5: outside his turn: it spends none of his actions, and is the round's one
    brannoc = one(after, "Brannoc")
    assert brannoc.spent == ("reaction",) and brannoc.reacted == record["round"]


def test_cmb_react_5_the_reaction_leaves_the_turn_and_cmb_react_2_only_one_a_round() -> None:
    state = _fighting()
    _, answers = answer(GAME, state, LEAVES + ' [combat: op="leave" who="Goblin 2"] '
                        '[attack: who="Brannoc" target="Goblin 2"]', (1, 1))
    assert answers[0].ok and answers[1].ok and answers[2].ok  # his own attack still there
    assert len([a for a in answers[:2] if "reactions" in a.record]) == 1


def test_cmb_react_6_a_disengage_or_a_teleport_provokes_nothing() -> None:
    state = _fighting()
    for how in ("disengage", "teleport"):
        after, answers = answer(GAME, state, LEAVES.replace("]", f' how="{how}"]'), (1, 1))
        assert answers[0].record == {"round": 1, "who": "Goblin 1", "how": how}
        assert one(after, "Goblin 1").hp == 14 and one(after, "Brannoc").reacted is None


def test_cmb_type_2_a_paralysed_hero_does_not_react() -> None:
    state, _ = answer(GAME, _fighting(), '[combat: op="condition" who="Brannoc" '
                      'add="paralyzed"]', (1, 1))
    _, answers = answer(GAME, state, LEAVES, (1, 2))
    assert "reactions" not in answers[0].record


def test_a_leave_reaction_rolls_the_same_on_a_swipe() -> None:
    state = _fighting()
    _, one_take = answer(GAME, state, LEAVES, (1, 5))
    _, swiped = answer(GAME, state, "It bolts. " + LEAVES, (1, 5))
    assert one_take[0].record == swiped[0].record


def test_refusals_of_a_leave_leave_the_state_unchanged() -> None:
    state = _fighting()
    for text, reason in (('[combat: op="leave"]', reasons.MISSING_ATTRIBUTE),
                         ('[combat: op="leave" who="Ogre"]', reasons.UNKNOWN_COMBATANT),
                         ('[combat: op="leave" who="Ada"]', reasons.UNSUPPORTED)):
        after, answers = answer(GAME, state, text, (2, 1))
        assert answers[0].reason == reason, answers[0]
        assert plain_canonical(after) == plain_canonical(state)
    _, out = answer(GAME, START, LEAVES, (2, 1))
    assert out[0].reason == reasons.NO_ENCOUNTER
    assert hero(START, "Brannoc").reactions[-1].on == "leave"


def test_the_gm_learns_the_leave_form_only_where_an_entry_reacts_to_leaving() -> None:
    assert '[combat: op="leave" who="Wolf 1"]' in instructions(GAME)
    plain = load_ruleset(fixture_json("rulesets/skirmish-spells.json"))
    assert 'op="leave"' not in instructions(plain)
