"""A weapon's mode aimed at several foes (spec/items.md ITM-MODE-6, ITM-MODE-3/4;
engine/actions/fight/volley.py) on fixtures/rulesets/skirmish-arms.json: Ada's hunting bow
looses a Volley (2 arrows, -2 to hit, up to 2 targets)."""

from __future__ import annotations

from helpers import answer, bag, fixture_json, one

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.state import plain_canonical

GAME = load_ruleset(fixture_json("rulesets/skirmish-arms.json"))
START = start_state(GAME, fixture_json("parties/skirmish-arms.json"))
VOLLEY = ('[attack: who="Ada" with="Hunting bow" mode="volley" target="Goblin 1, Goblin 2" '
          'range="far"]')


def _fighting(count: str = "3"):
    state, answers = answer(GAME, START, f'[combat: op="start" foe="Goblin" count="{count}"]')
    assert all(a.ok for a in answers)
    return state


def test_itm_mode_6_each_target_gets_its_own_attack_roll_and_the_shots_are_taken_once() \
        -> None:
    state = _fighting()
    after, answers = answer(GAME, state, VOLLEY, (1, 1))
    first = answers[0].record
    (second,) = first["volley"]
    assert first["target"] == "Goblin 1" and second["target"] == "Goblin 2"
    assert first["mode"] == second["mode"] == "volley"
    # ITM-MODE-4: the mode's -2 to hit on each roll (Dex 14's +2, the bow's toHit, -2)
    assert first["modifier"] == second["modifier"]
    for row in (first, second):
        assert row["total"] == row["rolls"][-1] + row["modifier"]
        assert one(after, row["target"]).hp == 14 - row["damage"]
    # ITM-MODE-3: the mode shoots 2, once for the attack
    assert first["ammo"] == {"shot": 2, "left": 3} and "ammo" not in second
    assert ("Arrow", 1) in bag(after, "Ada")
    # one attack of the Action: a second one is NO TIME
    _, late = answer(GAME, state, VOLLEY + ' [attack: who="Ada" with="Hunting bow" '
                     'target="Goblin 3" range="far"]', (1, 1))
    assert late[1].reason == reasons.NO_TIME
    assert one(after, "Ada").spent == ("action", "volley")


def test_itm_mode_6_rolls_the_same_on_a_swipe_and_differ_between_targets() -> None:
    state = _fighting()
    rolls = set()
    for turn in range(1, 30):
        _, answers = answer(GAME, state, VOLLEY, (1, turn))
        _, again = answer(GAME, state, "Arrows fly. " + VOLLEY, (1, turn))
        assert answers[0].record == again[0].record
        rolls.add(answers[0].record["rolls"][-1] == answers[0].record["volley"][0]["rolls"][-1])
    assert False in rolls  # the rolls are not one die shown twice


def test_refusals_of_a_volley_leave_the_state_unchanged() -> None:
    state = _fighting()
    for text, reason in (
            (VOLLEY.replace("Goblin 2", "Goblin 2, Goblin 3"), reasons.TOO_MANY_TARGETS),
            (VOLLEY.replace(' mode="volley"', ""), reasons.TOO_MANY_TARGETS),
            (VOLLEY.replace("Goblin 2", "Ogre"), reasons.UNKNOWN_COMBATANT),
            ('[attack: who="Goblin 1" target="Ada, Brannoc"]', reasons.TOO_MANY_TARGETS)):
        after, answers = answer(GAME, state, text, (3, 1))
        assert answers[0].reason == reason, (text, answers[0])
        assert plain_canonical(after) == plain_canonical(state)


def test_a_volley_stops_when_the_fight_is_won() -> None:
    state = _fighting("2")
    encounter = state.encounter
    assert encounter is not None
    combatants = [c.model_copy(update={"hp": 1}) if c.side == "foes" else c
                  for c in encounter.combatants]
    weak = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})
    for turn in range(1, 200):
        after, answers = answer(GAME, weak, VOLLEY, (1, turn))
        record = answers[0].record
        if record["result"] != "miss" and record.get("volley", [{}])[0].get("result") not in (
                None, "miss"):
            assert after.encounter is None
            assert record["events"][-1] == "end:victory"
            assert record["events"].count("end:victory") == 1
            return
    raise AssertionError("never both hit")


def test_a_several_target_attack_refused_changes_nothing_whoever_makes_it() -> None:
    state = _fighting()
    melee = ('[attack: who="Brannoc" with="Silver coffin nail" target="Goblin 1, Goblin 2" '
             'range="far"]')
    after, answers = answer(GAME, state, melee, (3, 2))
    assert answers[0].reason == reasons.TOO_MANY_TARGETS  # no mode: one target
    bow_near_far = VOLLEY.replace('who="Ada"', 'who="Brannoc"')
    after, answers = answer(GAME, state, bow_near_far, (3, 3))
    assert not answers[0].ok and plain_canonical(after) == plain_canonical(state)
