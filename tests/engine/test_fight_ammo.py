"""Ammunition and clips in a formula fight (spec/items.md §10: ITM-AMMO-1..11, ITM-CLIP-1..9,
OQ-29/30), on fixtures/rulesets/skirmish-arms.json: Ada's hunting bow shoots arrows (half
picked up after a won fight), Brannoc's watch pistol holds one ball loaded from his shot."""

from __future__ import annotations

import copy
import math
from typing import Any

import pytest
from helpers import answer, fixture_json

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.ammo import loaded
from engine.rules.state import State

DOCUMENT = fixture_json("rulesets/skirmish-arms.json")
PARTY = fixture_json("parties/skirmish-arms.json")
WALL = {"role": "wall", "tracks": {"hp": "500"},
        "combat": {"defence": "5", "attack": "0", "damage": "1"}}


def game_of(change: Any = None):
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["templates"].append(WALL)
    if change is not None:
        change(document)
    return load_ruleset(document)


GAME = game_of()


def party(**bags: list[dict[str, Any]]) -> dict[str, Any]:
    """The fixture party with the bags named replaced."""
    found = copy.deepcopy(PARTY)
    for character in found["characters"]:
        if character["name"] in bags:
            character["bag"] = bags[character["name"]]
    return found


QUIVERS = [{"item": "arms/bow", "count": 1, "equipped": True},
           {"item": "arms/arrows", "count": 3}, {"item": "arms/silver-arrows", "count": 5}]
PISTOL = [{"item": "arms/pistol", "count": 1, "equipped": True}, {"item": "arms/shot", "count": 2}]


def fight(game=GAME, who: dict[str, Any] | None = None, foe: str = "wall") -> State:
    state = start_state(game, who or party(Ada=QUIVERS, Brannoc=PISTOL))
    state, answers = answer(game, state, f'[combat: op="start" foe="Target" role="{foe}"]')
    assert answers[0].ok
    return state


def bag(state: State, who: str) -> dict[str, int]:
    character = next(c for c in state.characters if c.name == who)
    return {s.name: s.count for s in character.bag}


def stack(state: State, who: str, name: str):
    character = next(c for c in state.characters if c.name == who)
    return next(s for s in character.bag if s.name == name)


def rounds(game, state: State, replies: list[str], start: int = 1):
    """Each reply one round (its own turn key); the answers of each."""
    told = []
    for offset, reply in enumerate(replies):
        state, answers = answer(game, state, reply, (0, start + offset))
        told.append(answers)
    return state, told


SHOOT = '[attack: who="Ada" target="Target"]'


# --- ITM-AMMO-3/4/8/10: what an attack takes, from which stack --------------------------------

def test_itm_ammo_3_an_attack_takes_from_the_first_stack_then_the_next() -> None:
    state, told = rounds(GAME, fight(), [SHOOT] * 4)
    assert all(t[0].ok for t in told)
    assert [t[0].record["ammo"]["left"] for t in told] == [7, 6, 5, 4]  # ITM-AMMO-4: left
    assert bag(state, "Ada") == {"Hunting bow": 1, "Silver arrow": 4}  # Arrow used up first
    assert told[2][0].record["ammo"]["usedUp"] == ["Arrow"]


def test_itm_ammo_8_the_journal_names_what_was_used_up() -> None:
    state, _ = rounds(GAME, fight(), [SHOOT] * 3)
    assert [j.text for j in state.journal][-1] == "Ada used up Arrow."


def test_itm_ammo_10_the_log_names_every_shot() -> None:
    _, told = rounds(GAME, fight(), [SHOOT])
    assert told[0][0].text.endswith("Hunting bow: 7 left to shoot.")


def test_itm_ammo_3_a_miss_shoots_too() -> None:
    _, told = rounds(GAME, fight(), [SHOOT] * 12)
    results = {t[0].record["result"] for t in told[:8]}
    assert all(t[0].record["ammo"]["shot"] == 1 for t in told[:8])
    assert "miss" in results or results <= {"hit", "critical"}  # every attack shot, whatever
    assert [t[0].reason for t in told[8:]] == [reasons.NO_AMMO] * 4


def test_itm_ammo_4_refused_no_ammo_when_too_little_is_carried_and_nothing_changes() -> None:
    state, _ = rounds(GAME, fight(), [SHOOT] * 8)
    assert bag(state, "Ada") == {"Hunting bow": 1}
    after, answers = answer(GAME, state, SHOOT, (0, 20))
    assert answers[0].reason == reasons.NO_AMMO
    assert after is state
    assert "carries 0" in answers[0].text


def test_itm_ammo_4_a_mode_that_shoots_more_needs_more() -> None:
    state, _ = rounds(GAME, fight(), [SHOOT] * 7)
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Target" mode="volley"]',
                            (0, 20))
    assert answers[0].reason == reasons.NO_AMMO and after is state
    _, answers = answer(GAME, state, SHOOT, (0, 20))
    assert answers[0].ok and answers[0].record["ammo"]["left"] == 0


def test_itm_ammo_3_worn_or_not_carried_ammunition_counts() -> None:
    worn = [*QUIVERS[:1], {"item": "arms/arrows", "count": 1, "equipped": True}]
    state = fight(who=party(Ada=worn))
    _, answers = answer(GAME, state, SHOOT, (0, 1))
    assert answers[0].ok and answers[0].record["ammo"]["left"] == 0


# --- ITM-AMMO-5..7, OQ-29/30: what a won fight gives back ----------------------------------

@pytest.mark.parametrize(("arrows", "silver", "shots", "left"), [
    (7, 0, 5, {"Arrow": 2 + 2}),                     # ITM-AMMO-6: half of five is two
    (3, 5, 6, {"Arrow": 1, "Silver arrow": 2 + 1}),  # per stack: 1 of 3, then 1 of 3
    (3, 5, 1, {"Arrow": 2, "Silver arrow": 5}),      # half of one is nothing
    (3, 5, 8, {"Arrow": 1, "Silver arrow": 2}),      # OQ-29: the used-up stacks form again
])
def test_itm_ammo_5_6_recovered_is_half_of_what_each_stack_shot_rounded_down_once(
        arrows, silver, shots, left) -> None:
    quivers = [QUIVERS[0]] + [{"item": ref, "count": n} for ref, n in
                              (("arms/arrows", arrows), ("arms/silver-arrows", silver)) if n]
    state, _ = rounds(GAME, fight(who=party(Ada=quivers)), [SHOOT] * shots)
    won, answers = answer(GAME, state, '[combat: op="end" outcome="victory"]', (0, 50))
    assert answers[0].ok and won.encounter is None
    carried = {k: v for k, v in bag(won, "Ada").items() if k != "Hunting bow"}
    assert carried == left
    recovered = sum(r["recovered"] for r in answers[0].record["recovered"])
    # carried - spent + recovered, recovered <= floor(spent x recover) per stack
    assert sum(carried.values()) == arrows + silver - shots + recovered
    for row in answers[0].record["recovered"]:
        assert row["recovered"] == math.floor(row["shot"] * 0.5)


def test_oq_30_the_pick_up_is_logged_per_stack() -> None:
    state, _ = rounds(GAME, fight(), [SHOOT] * 5)
    _, answers = answer(GAME, state, '[combat: op="end" outcome="victory"]', (0, 50))
    assert answers[0].text.endswith("Ada picks up 1 of 3 Arrow shot. "
                                    "Ada picks up 1 of 2 Silver arrow shot.")


@pytest.mark.parametrize("outcome", ["defeat", "fled", "truce"])
def test_itm_ammo_7_a_lost_or_fled_fight_returns_nothing(outcome) -> None:
    state, _ = rounds(GAME, fight(), [SHOOT] * 4)
    ended, answers = answer(GAME, state, f'[combat: op="end" outcome="{outcome}"]', (0, 50))
    assert answers[0].ok and "recovered" not in answers[0].record
    assert bag(ended, "Ada") == {"Hunting bow": 1, "Silver arrow": 4}


def test_itm_ammo_5_felling_the_last_foe_picks_up_too() -> None:
    state = fight(foe="minion")  # one hit point
    for turn in range(1, 40):
        state, answers = answer(GAME, state, SHOOT, (0, turn))
        if state.encounter is None:
            break
    record = answers[0].record
    assert "end:victory" in record["events"]
    shot = 8 - sum(v for k, v in bag(state, "Ada").items() if k != "Hunting bow") \
        + sum(r["recovered"] for r in record["recovered"])
    assert sum(r["shot"] for r in record["recovered"]) == shot


def test_ammunition_is_spent_once_whatever_the_swipes() -> None:
    """The fold: a swipe answers the reply again from the state before it, never on top."""
    state = fight()
    one, _ = answer(GAME, state, SHOOT, (0, 1))
    two, _ = answer(GAME, state, SHOOT, (0, 1))
    assert one.canonical() == two.canonical()
    assert bag(one, "Ada") == {"Hunting bow": 1, "Arrow": 2, "Silver arrow": 5}


# --- ITM-CLIP-1..9: the loaded count and the Reload action ---------------------------------

PISTOL_CLIP = GAME.items["arms/pistol"].item.attack.clip
FIRE = '[attack: who="Brannoc" target="Target" with="Watch pistol"]'
RELOAD = '[combat: op="reload" who="Brannoc" with="Watch pistol"]'


def test_itm_clip_1_7_a_weapon_never_fired_is_loaded_and_firing_spends_the_clip() -> None:
    """ITM-CLIP-1: the loaded count is the weapon's own, kept on its stack."""
    state = fight()
    assert stack(state, "Brannoc", "Watch pistol").loaded is None
    state, told = rounds(GAME, state, [FIRE])
    assert told[0][0].record["ammo"] == {"shot": 1, "left": 0, "of": 1}
    assert told[0][0].text.endswith("Watch pistol: 0 left to shoot.")
    assert stack(state, "Brannoc", "Watch pistol").loaded == 0
    assert bag(state, "Brannoc")["Shot"] == 2  # ITM-CLIP-4: not from the bag


def test_itm_clip_4_an_empty_clip_is_refused_not_loaded_and_nothing_changes() -> None:
    state, _ = rounds(GAME, fight(), [FIRE])
    after, answers = answer(GAME, state, FIRE, (0, 2))
    assert answers[0].reason == reasons.NOT_LOADED and after is state


def test_itm_clip_5_reload_loads_from_the_bag_and_spends_its_budget() -> None:
    state, _ = rounds(GAME, fight(), [FIRE])
    state, answers = answer(GAME, state, f"{RELOAD} {FIRE}", (0, 2))
    assert answers[0].ok and answers[0].text == \
        "Brannoc loads 1 into Watch pistol: 1 of 1 loaded."  # ITM-AMMO-10
    assert answers[0].record["budget"] == "action"
    assert answers[1].reason == reasons.NO_TIME  # the reload spent the action
    assert stack(state, "Brannoc", "Watch pistol").loaded == 1
    assert bag(state, "Brannoc")["Shot"] == 1
    state, answers = answer(GAME, state, FIRE, (0, 3))
    assert answers[0].ok


def test_itm_clip_5_a_reload_acts_in_its_heros_place_among_the_attacks() -> None:
    state, _ = rounds(GAME, fight(), [FIRE])
    same_time = f"{FIRE} {RELOAD}"  # text order within one hero: the shot comes first
    _, answers = answer(GAME, state, same_time, (0, 2))
    assert answers[0].reason == reasons.NOT_LOADED and answers[1].ok


def test_itm_clip_5_a_reload_takes_what_the_bag_still_has() -> None:
    game = game_of(lambda d: d["catalogs"][0]["entries"][6]["item"]["attack"]["clip"]
                   .update({"max": 6}))
    state, _ = rounds(game, fight(game), [FIRE] * 3)
    state, answers = answer(game, state, RELOAD, (0, 5))
    assert answers[0].record == {"round": 4, "who": "Brannoc", "weapon": "Watch pistol",
                                 "budget": "action", "loaded": 2, "held": 5, "of": 6,
                                 "usedUp": ["Shot"]}
    assert "Shot" not in bag(state, "Brannoc")


def test_itm_clip_5_a_weapon_without_ammo_is_filled_fully() -> None:
    def no_ammo(d):
        d["catalogs"][0]["entries"][6]["item"]["attack"].pop("ammo")
    game = game_of(no_ammo)
    state, _ = rounds(game, fight(game, party(Brannoc=PISTOL[:1])), [FIRE])
    state, answers = answer(game, state, RELOAD, (0, 2))
    assert answers[0].ok and answers[0].record["held"] == 1


@pytest.mark.parametrize(("before", "reply", "reason"), [
    (0, '[combat: op="reload" who="Brannoc"]', reasons.ALREADY),  # never fired: full
    (1, '[combat: op="reload" who="Ada"]', reasons.NO_CLIP),
    (1, '[combat: op="reload" who="Brannoc" with="Hunting bow"]', reasons.UNKNOWN_WEAPON),
    (1, '[combat: op="reload" who="Nobody"]', reasons.UNKNOWN_COMBATANT),
])
def test_itm_clip_5_reload_refusals_change_nothing(before, reply, reason) -> None:
    state, _ = rounds(GAME, fight(), [FIRE] * before)
    after, answers = answer(GAME, state, reply, (0, 9))
    assert answers[0].reason == reason and after is state


def test_itm_clip_5_nothing_to_load_is_refused_no_ammo() -> None:
    state, _ = rounds(GAME, fight(who=party(Brannoc=PISTOL[:1])), [FIRE])
    after, answers = answer(GAME, state, RELOAD, (0, 2))
    assert answers[0].reason == reasons.NO_AMMO and after is state


def test_itm_clip_6_an_emptied_pistol_is_still_empty_in_the_next_fight() -> None:
    state, _ = rounds(GAME, fight(), [FIRE, '[combat: op="end" outcome="fled"]'])
    state, _ = answer(GAME, state, '[combat: op="start" foe="Target" role="wall"]', (0, 5))
    _, answers = answer(GAME, state, FIRE, (0, 6))
    assert answers[0].reason == reasons.NOT_LOADED


def test_itm_clip_8_a_fired_weapon_put_into_a_stack_of_several_is_loaded() -> None:
    two = [PISTOL[0], {"item": "arms/pistol", "count": 1}, PISTOL[1]]
    state, _ = rounds(GAME, fight(who=party(Brannoc=two)), [FIRE])
    assert stack(state, "Brannoc", "Watch pistol").loaded == 0
    state, answers = answer(GAME, state, '[inventory: action="unequip" who="Brannoc" '
                            'item="Watch pistol"]', (0, 2))
    assert answers[0].ok and bag(state, "Brannoc")["Watch pistol"] == 2
    held = stack(state, "Brannoc", "Watch pistol")
    assert loaded(GAME, GAME.items["arms/pistol"].item, PISTOL_CLIP, held) == 1
    assert loaded(GAME, GAME.items["arms/pistol"].item, PISTOL_CLIP,
                  held.model_copy(update={"loaded": 0})) == 1  # several: full
    state, _ = answer(GAME, state, '[inventory: action="equip" who="Brannoc" '
                      'item="Watch pistol"]', (0, 3))
    _, answers = answer(GAME, state, FIRE, (0, 4))
    assert answers[0].ok


def test_itm_clip_9_what_a_clip_shot_is_never_picked_up() -> None:
    game = game_of(lambda d: d["catalogs"][0]["entries"][6]["item"]["attack"]["ammo"]
                   .update({"recover": 1}))
    state, _ = rounds(game, fight(game), [FIRE, RELOAD, FIRE])
    won, answers = answer(game, state, '[combat: op="end" outcome="victory"]', (0, 9))
    assert "recovered" not in answers[0].record and bag(won, "Brannoc")["Shot"] == 1


@pytest.mark.parametrize("written", [6, {"stat": "chamber"}])
def test_itm_clip_2_the_max_is_written_out_or_read_from_an_item_stat(written) -> None:
    """ITM-CLIP-2: ``clip.max`` written out (6) or read from the pistol's own ``chamber``
    stat (6): a reload after three shots loads back to 6, as far as the bag's shot goes."""
    def six(document: dict[str, Any]) -> None:
        document["items"]["stats"] = [{"id": "chamber", "label": "Chamber", "type": "number",
                                       "min": 0, "max": 12}]
        pistol = document["catalogs"][0]["entries"][6]["item"]
        pistol["stats"] = {"chamber": 6}
        pistol["attack"]["clip"]["max"] = written
    game = game_of(six)
    state, _ = rounds(game, fight(game, party(Brannoc=[PISTOL[0], {"item": "arms/shot",
                                                                 "count": 9}])), [FIRE] * 3)
    state, answers = answer(game, state, RELOAD, (0, 5))
    assert (answers[0].record["loaded"], answers[0].record["held"],
            answers[0].record["of"]) == (3, 6, 6)
