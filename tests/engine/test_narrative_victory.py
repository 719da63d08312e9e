"""A won narrative fight (spec/combat.md B.10, D100-PARTY-10; issue 26): the victors' full
experience, the coins of the victory reply split among the standing heroes, named items to a
loot record settled by ``want``/``pass`` host events. Harrow Vale with a template (``xp`` at
``10 × @tier``, 1 hit point), a sheet field ``xp`` and two loot tables."""

from __future__ import annotations

import copy
from collections import Counter

import pytest
from helpers import answer, bag, fixture_json, hero

from engine import load_ruleset, start_state
from engine.actions.events import apply_event
from engine.rules import reasons
from engine.rules.context import TurnContext
from engine.rules.state import State


def _game(xp: str | None = "xp"):
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": {"xp": xp} if xp else {}, "templates": [
        {"role": "beast", "tracks": {"hp": "1"}, "xp": "10 * @tier",
         "combat": {"defence": "10", "attack": "0", "damage": "1"}}]}
    document["sheet"]["fields"].append({"id": "xp", "label": "Experience", "type": "number",
                                        "default": 0})
    document["items"]["lootTables"] += [
        {"id": "ropes", "label": "Ropes", "rolls": 1, "entries": [{"item": "kit/rope",
                                                                   "weight": 1}]},
        {"id": "purse", "label": "Purse", "rolls": 1, "entries": [
            {"coins": "penny", "weight": 1, "count": "5"}]}]
    return load_ruleset(document)


GAME = _game()
START = start_state(GAME, fixture_json("parties/harrow.json"))
RATS = '[combat: op="start" foe="Rat" tier="2"]'


def fighting(text: str = RATS, state: State = START) -> State:
    state, answers = answer(GAME, state, text)
    assert all(a.ok for a in answers), answers
    return state


def winning(text: str, state: State) -> tuple[State, list, tuple[int, ...]]:
    """The first reply position (the dice are fixed by it) where ``text`` wins the fight."""
    for n in range(1, 200):
        after, answers = answer(GAME, state, text, (0, n))
        if after.encounter is None and "end:victory" in answers[0].record.get("events", []):
            return after, answers, (0, n)
    raise AssertionError("no victory in 200 replies")


def event(state: State, payload: dict, name: str, turn: int = 9):
    return apply_event(GAME, state, payload, name, TurnContext(state.seed, (turn, 0)))


# --- experience -----------------------------------------------------------------------------

def test_d100_party_10_every_standing_hero_gets_the_full_experience() -> None:
    state = fighting('[combat: op="start" foe="Rat" tier="2" count="2"]')
    ada = '[attack: who="Ada" target="Rat 1"] [attack: who="Bram the Quiet" target="Rat 2"]'
    for n in range(1, 300):
        after, answers = answer(GAME, state, ada, (0, n))
        if after.encounter is None and any("end:victory" in a.record.get("events", [])
                                           for a in answers):
            break
    won = next(a for a in answers if "end:victory" in a.record.get("events", []))
    # two tier-2 rats felled, 10 × 2 each: the full 40 to each hero, never a share
    assert won.record["xp"] == {"field": "xp", "each": 40,
                                "heroes": ["Ada", "Bram the Quiet"]}
    assert hero(after, "Ada").fields["xp"] == 40 == hero(after, "Bram the Quiet").fields["xp"]
    assert "Each of Ada, Bram the Quiet gains 40 xp." in won.text


def test_d100_party_10_a_downed_hero_gains_nothing() -> None:
    state = fighting()
    bram = hero(state, "Bram the Quiet")
    state = state.with_character(1, bram.model_copy(update={"pools": {**bram.pools,
                                                                      "health": 0}}))
    after, answers, _ = winning('[attack: who="Ada" target="Rat"]', state)
    assert answers[0].record["xp"]["heroes"] == ["Ada"]
    assert hero(after, "Ada").fields["xp"] == 20 and "xp" not in hero(
        after, "Bram the Quiet").fields


def test_op_end_victory_gives_only_the_felled_foes_experience() -> None:
    _, answers = answer(GAME, fighting(), '[combat: op="end" outcome="victory"]', (0, 1))
    assert answers[0].record["xp"]["each"] == 0  # the rat still stands: no experience


def test_no_xp_field_no_experience() -> None:
    game = _game(xp=None)
    state, _ = answer(game, start_state(game, fixture_json("parties/harrow.json")), RATS)
    _, answers = answer(game, state, '[combat: op="end" outcome="victory"]', (0, 1))
    assert "xp" not in answers[0].record


# --- coins split, items to the loot record --------------------------------------------------

def test_d100_party_10_an_earn_without_who_in_the_victory_reply_is_split() -> None:
    after, answers, _ = winning('[attack: who="Ada" target="Rat"] '
                                '[inventory: action="earn" amount="5 pennies"]', fighting())
    earn = answers[1]
    assert earn.ok and earn.record["who"] == "Ada, Bram the Quiet"
    # 5 among 2: 2 each and the remainder to the first in the party's order
    assert earn.text == "Ada receives 3 pennies; Bram the Quiet receives 2 pennies."
    assert after.spoils is None  # nothing named to settle: the record is gone


def test_an_earn_with_who_or_out_of_a_narrative_victory_is_not_split() -> None:
    _, answers = answer(GAME, START, '[inventory: action="earn" amount="5 pennies"]', (0, 1))
    assert answers[0].record["who"] == "Ada"
    _, answers, _ = winning('[attack: who="Ada" target="Rat"] [inventory: action="earn" '
                            'amount="5 pennies" who="Bram the Quiet"]', fighting())
    assert answers[1].record["who"] == "Bram the Quiet"


def test_op_end_victory_splits_the_earn_of_its_reply_too() -> None:
    _, answers = answer(GAME, fighting(), '[inventory: action="earn" amount="4 pennies"] '
                        '[combat: op="end" outcome="victory"]', (0, 1))
    assert answers[0].text == "Ada receives 2 pennies; Bram the Quiet receives 2 pennies."


def victory_with_loot() -> State:
    after, answers, _ = winning('[attack: who="Ada" target="Rat"] [loot: table="ropes"] '
                                '[loot: table="purse"]', fighting())
    ropes, purse = answers[1], answers[2]
    assert ropes.record["drops"] == [{"name": "Rope", "item": "kit/rope", "coin": None,
                                      "count": 1, "to": "loot record"}]
    assert "each of Ada, Bram the Quiet chooses Want or Pass" in ropes.text
    assert [d["to"] for d in purse.record["drops"]] == [[{"who": "Ada", "count": 3},
                                                        {"who": "Bram the Quiet", "count": 2}]]
    assert [s.name for s in after.spoils.items] == ["Rope"]
    assert after.to_json()["spoils"]["heroes"] == ["Ada", "Bram the Quiet"]
    return after


def test_d100_party_10_want_and_pass_settle_the_loot_record() -> None:
    state = victory_with_loot()
    before = bag(state, "Ada")
    state, first = event(state, {"action": "want", "item": "rope"}, "Ada")
    assert first.ok and first.record["waiting"] == ["Bram the Quiet"]
    assert bag(state, "Ada") == before  # nothing moves until every victor chose
    state, second = event(state, {"action": "pass", "item": "Rope"}, "Bram the Quiet")
    assert second.record["to"] == [{"who": "Ada", "count": 1}]
    assert "Rope goes to Ada" in second.text and state.spoils is None
    assert dict(bag(state, "Ada"))["Rope"] == dict(before).get("Rope", 0) + 1


def test_d100_party_10_nobody_wants_it_the_shared_view() -> None:
    state = victory_with_loot()
    state, _ = event(state, {"action": "pass", "item": "Rope"}, "Ada")
    state, last = event(state, {"action": "pass", "item": "Rope"}, "Bram the Quiet")
    assert "nobody wants Rope: it goes to the shared view" in last.text
    assert last.record["to"] == [{"who": "Ada", "count": 1}]  # the player's bag first


def test_d100_party_10_the_engine_draws_among_those_who_want_it_keyed() -> None:
    state = victory_with_loot()
    state, _ = event(state, {"action": "want", "item": "Rope"}, "Ada")
    winners = Counter()
    for turn in range(40):
        after, last = event(state, {"action": "want", "item": "Rope"}, "Bram the Quiet", turn)
        again, same = event(state, {"action": "want", "item": "Rope"}, "Bram the Quiet", turn)
        assert same.record == last.record and again.to_json() == after.to_json()  # keyed
        assert last.record["draw"] in (1, 2)
        winners[last.record["to"][0]["who"]] += 1
    assert set(winners) == {"Ada", "Bram the Quiet"}


@pytest.mark.parametrize(("payload", "name", "words"), [
    ({"action": "want", "item": "Lantern"}, "Ada", 'holds no "Lantern"'),
    ({"action": "want", "item": "Rope"}, "Nobody", "did not stand at the victory"),
])
def test_want_and_pass_refusals_change_nothing(payload, name, words) -> None:
    state = victory_with_loot()
    after, refusal = event(state, payload, name)
    assert refusal.reason == reasons.NO_SPOILS and words in refusal.text and after is state


def test_want_twice_and_without_a_record_are_refused() -> None:
    state, _ = event(victory_with_loot(), {"action": "want", "item": "Rope"}, "Ada")
    again, refusal = event(state, {"action": "pass", "item": "Rope"}, "Ada")
    assert refusal.reason == reasons.ALREADY and again is state
    none, refusal = event(START, {"action": "want", "item": "Rope"}, "Ada")
    assert refusal.reason == reasons.NO_SPOILS and none is START


def test_itm_loot_13_felled_foes_of_a_narrative_fight_drop_nothing() -> None:
    """ITM-LOOT-13: a fight the engine does not resolve by the ruleset's own combat rules (a
    narrative fight) has no creatures of the bestiary, so even a template that names a loot
    table drops nothing when its foe falls; only the GM's ``[loot:]`` in the victory reply
    brings loot (D100-PARTY-10)."""
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["combat"] = {"narrative": {}, "templates": [
        {"role": "beast", "tracks": {"hp": "1"}, "loot": "mill_cache",
         "combat": {"defence": "10", "attack": "0", "damage": "1"}}]}
    game = load_ruleset(document)
    state, _ = answer(game, START, RATS)
    for n in range(1, 200):
        after, answers = answer(game, state, '[attack: who="Ada" target="Rat"]', (0, n))
        if after.encounter is None:
            break
    assert "end:victory" in answers[0].record["events"] and "loot" not in answers[0].record
    assert [c.bag for c in after.characters] == [c.bag for c in state.characters]
