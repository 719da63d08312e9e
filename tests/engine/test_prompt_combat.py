"""The GM's side of a fight (DESIGN.md "Combat" → "Prompt"; CMB-TURN-9, 12, 13, 16; CMB-ATK-6;
CMB-TYPE-2): out of a fight the instructions say only how to start one; in one the COMBAT block
shows the order with initiative, hit points, defences, conditions and each hero's attacks, then
the combat lines. On fixtures/rulesets/skirmish.json."""

from __future__ import annotations

import copy

import pytest
from helpers import answer, fell, fixture_json

from engine import load_ruleset, start_state
from engine.actions.examples import party_of
from engine.dice import Stream
from engine.rules.fight.formula import attacks_left
from engine.rules.sheet import SheetView
from engine.rules.state import Combatant, FightCondition, State
from engine.text.fight.block import combat_block
from engine.text.prompt import gm_context, instructions, state_context

DOCUMENT = fixture_json("rulesets/skirmish.json")
PARTY = fixture_json("parties/skirmish.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
STREAM = Stream("test", (), "budget")


def game_with(change) -> object:
    document = copy.deepcopy(DOCUMENT)
    change(document)
    return load_ruleset(document)


def fighting(game=GAME, state: State = START,
             text: str = '[combat: op="start" foe="Goblin" count="2"]') -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers) and state.encounter is not None, answers
    return state


def line_of(block: str, name: str) -> str:
    found = [line for line in block.splitlines() if line[:1].isdigit()
             and line.split(". ", 1)[1].startswith(name + " (")]
    assert len(found) == 1, block
    return found[0]


def with_combatant(state: State, name: str, **changes: object) -> State:
    encounter = state.encounter
    assert encounter is not None
    index = encounter.find(name)
    assert index is not None
    combatants = list(encounter.combatants)
    combatants[index] = combatants[index].model_copy(update=changes)
    return state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})


def with_character(state: State, name: str, **changes: object) -> State:
    index = state.character_index(name)
    assert index is not None
    return state.with_character(index, state.characters[index].model_copy(update=changes))


# --- out of a fight: only how to start one --------------------------------------------------

def test_out_of_a_fight_the_gm_learns_only_how_to_start_one() -> None:
    taught = instructions(GAME, party=party_of(START))
    assert '[combat: op="start" foe="Wolf" role="standard" tier="1" count="2"]' in taught
    assert "roles: standard, minion" in taught
    assert "[attack:" not in taught and 'op="end"' not in taught
    context = gm_context(GAME, START)
    assert "\nCOMBAT (" not in context and "How to fight" not in context
    assert combat_block(GAME, START) == ""


@pytest.mark.parametrize("fixture", ["harrow", "symbols-genesys"])
def test_a_ruleset_that_fights_otherwise_is_taught_no_formula_fight(fixture) -> None:
    """Harrow fights narratively (issue 26): it is taught a rank=, never a role= or budget."""
    game = load_ruleset(fixture_json(f"rulesets/{fixture}.json"))
    taught = instructions(game)
    if fixture == "harrow":
        assert 'rank="' in taught and "role=" not in taught
    else:
        assert "[combat:" not in taught


def test_kind_none_teaches_no_fight_at_all() -> None:
    game = game_with(lambda d: d["combat"].update(kind="none"))
    assert "[combat:" not in instructions(game) and "[attack:" not in instructions(game)


# --- in a fight: the COMBAT block ---------------------------------------------------------

def test_cmb_turn_13_the_block_lists_the_order_with_initiative() -> None:
    state = fighting()
    block = combat_block(GAME, state)
    assert block.splitlines()[:2] == [
        "COMBAT (no attack yet; the next reply with an attack is round 1)",
        "Order, highest initiative first:"]
    encounter = state.encounter
    assert encounter is not None
    shown = [line for line in block.splitlines() if line[:1].isdigit()]
    assert len(shown) == len(encounter.combatants) == 4
    for place, (line, combatant) in enumerate(zip(shown, encounter.combatants,
                                                   strict=True), 1):
        assert line.startswith(f"{place}. {combatant.name} (")
        assert f"initiative {combatant.initiative})" in line
    assert block in state_context(GAME, state)  # the GM section carries it


def test_the_numbers_are_the_states_foes_and_the_heroes_sheets() -> None:
    """A foe's hp/hpMax and defence as fixed when it joined (CMB-TPL-8); a hero's health
    pool and its defence, ``10 + @dex.mod`` read on its sheet (CMB-ATK-6)."""
    state = fighting()
    block = combat_block(GAME, state)
    assert line_of(block, "Goblin 1").endswith(
        "(foe: standard, tier 1; initiative 20): hp 14/14; defence 13")
    assert line_of(block, "Brannoc").endswith(  # dex 12: +1
        "(hero; initiative 9): Hit points 12/12; defence 11; attacks: 1 (Action)")
    assert line_of(block, "Ada").endswith(  # dex 14: +2; 9 of 12 hit points
        "(hero; initiative 16): Hit points 9/12; defence 12; attacks: 1 (Action)")


def test_a_hit_shows_the_foes_hit_points_after_it() -> None:
    state = fighting()
    hit, answers = answer(GAME, state, '[attack: target="Goblin 2"]', (0, 3))
    record = answers[0].record
    assert answers[0].ok and record["result"] == "hit" and record["damage"] > 0
    block = combat_block(GAME, hit)
    assert block.startswith("COMBAT (round 1 fought; the next reply with an attack is round 2)")
    assert f"hp {record['hp']}/14; defence 13" in line_of(block, "Goblin 2")
    assert "hp 14/14" in line_of(block, "Goblin 1")


def test_a_felled_foe_is_shown_felled() -> None:
    state = fighting(text='[combat: op="start" foe="Rat" role="minion" count="2"]')
    felled, answers = answer(GAME, state, '[attack: target="Rat 1"]', (0, 4))
    assert fell(answers[0].record) == ["felled:Rat 1"]
    block = combat_block(GAME, felled)
    assert line_of(block, "Rat 1").endswith(": FELLED (hp 0/1)")
    assert "defence" not in line_of(block, "Rat 1")
    assert line_of(block, "Rat 2").endswith("hp 1/1; defence 10")


def test_the_last_foe_felled_ends_the_fight_and_the_block() -> None:
    state = fighting(text='[combat: op="start" foe="Rat" role="minion"]')
    won, answers = answer(GAME, state, '[attack: target="Rat"]', (0, 0))
    assert "end:victory" in answers[0].record["events"] and won.encounter is None
    assert combat_block(GAME, won) == "" and "How to fight" not in gm_context(GAME, won)


def test_a_hero_at_0_hit_points_is_shown_downed() -> None:
    state = with_character(fighting(), "Ada", pools={"hp": 0})
    assert line_of(combat_block(GAME, state), "Ada").endswith(": DOWNED (Hit points 0/12)")


def test_conditions_are_shown_and_itm_out_4_temporary_points() -> None:
    state = with_combatant(fighting(), "Goblin 1", conditions=(
        FightCondition(name="paralyzed", save="dex", dc=13), FightCondition(name="prone",
                                                                            rounds=2)))
    state = with_character(state, "Brannoc", pools={"hp": 7, "hp:temporary": 3})
    block = combat_block(GAME, state)
    # CMB-COND-3/4, CMB-TYPE-2: what the fight counts for each, and that it stops the foe
    assert line_of(block, "Goblin 1").endswith(
        "defence 13; conditions: Paralyzed (save dex DC 13), Prone (2 rounds); "
        "cannot act (Paralyzed)")
    assert "Hit points 7/12 (+3 temporary); defence 11" in line_of(block, "Brannoc")


def test_cmb_type_2_a_hero_who_cannot_act_is_told_so_instead_of_a_budget() -> None:
    state = with_character(fighting(), "Ada", conditions=("paralyzed",))
    line = line_of(combat_block(GAME, state), "Ada")
    assert line.endswith("defence 12; conditions: Paralyzed; cannot act (Paralyzed)")


def test_a_health_track_is_read_where_there_is_no_health_pool() -> None:
    def track(document) -> None:
        document["live"] = {"tracks": [{"id": "vigour", "label": "Vigour", "kind": "health",
                                        "max": {"const": 10}}]}
    game = game_with(track)
    party = copy.deepcopy(PARTY)
    for character in party["characters"]:
        character.pop("pools")
    party["characters"][1]["tracks"] = {"vigour": 4}
    state = fighting(game, start_state(game, party))
    block = combat_block(game, state)
    assert "(hero; initiative 9): Vigour 10/10; defence 11" in line_of(block, "Brannoc")
    assert "Vigour 4/10; defence 12" in line_of(block, "Ada")


# --- the budget: CMB-TURN-9/12/16 ----------------------------------------------------------

def two_attacks(document) -> None:
    document["combat"]["turn"]["actions"] = [
        {"id": "action", "name": "Action", "per": "1", "attacks": "@str.mod - 1"},
        {"id": "bonus", "name": "Bonus action", "per": "2", "attacks": "1"}]


@pytest.mark.parametrize(("spent", "action_left", "bonus_left"), [
    ((), 2, 2), (("action",), 1, 2), (("action", "bonus"), 1, 1),
    (("action", "action", "bonus", "bonus"), 0, 0), (("action",) * 5, 0, 2)])
def test_attacks_left_counts_down_with_what_was_spent(spent, action_left, bonus_left) -> None:
    """Brannoc's str 16 (+3): Action allows 1 × (3 - 1) attacks, Bonus action 2 × 1; each
    spent attack takes one, never below 0."""
    game = game_with(two_attacks)
    actions = game.ruleset.combat.turn_actions
    view = SheetView(game, START.characters[0], START)
    assert [attacks_left(a, view, STREAM, spent) for a in actions] == [action_left,
                                                                          bonus_left]


def test_oq_cmb_7_c_an_action_without_attacks_allows_none() -> None:
    bonus = GAME.ruleset.combat.turn_actions[1]
    assert bonus.attacks is None
    view = SheetView(GAME, START.characters[0], START)
    assert attacks_left(bonus, view, STREAM, ()) == 0


def test_the_budget_counts_down_in_a_round_and_the_block_shows_the_next_rounds() -> None:
    """Within one reply each attack spends its budget until NO TIME (CMB-TURN-12); the block,
    read between replies, shows the round the GM writes next: a fresh budget each round."""
    game = game_with(two_attacks)
    state = fighting(game, text='[combat: op="start" foe="Goblin" tier="6" count="2"]')
    assert "attacks: 2 (Action), 2 (Bonus action)" in line_of(combat_block(game, state),
                                                              "Brannoc")
    view = SheetView(game, state.characters[0], state)
    action = game.ruleset.combat.turn_actions[0]
    left = []
    for _ in range(3):
        state, answers = answer(game, state, '[attack: target="Goblin 1"]', (0, 1))
        me = state.encounter.combatants[state.encounter.find("Brannoc")]
        left.append(attacks_left(action, view, STREAM, me.spent))
    assert left == [1, 0, 0] and answers[0].reason == "no-time"
    assert "attacks: 2 (Action), 2 (Bonus action)" in line_of(combat_block(game, state),
                                                              "Brannoc")


def test_a_hero_with_no_attack_in_any_action_is_told_so() -> None:
    game = game_with(lambda d: d["combat"]["turn"]["actions"][0].update(attacks="0"))
    state = fighting(game)
    assert line_of(combat_block(game, state), "Brannoc").endswith("defence 11; no attacks")


# --- the combat lines -----------------------------------------------------------------------

def test_in_a_fight_the_gm_gets_the_combat_lines_under_the_block() -> None:
    """Each line shows a tag filled from the party and the example fight's wolves (issue 39);
    the condition line stays in the instructions, which a fight keeps, and is not repeated."""
    state = fighting()
    block = combat_block(GAME, state)
    lines = block.splitlines()
    taught = "\n".join(lines[lines.index(next(x for x in lines if x.startswith("How to fight"))):])
    for form in ('[attack: who="Brannoc" target="Wolf 1"]',
                 "action= the turn action it spends (action (Action), bonus (Bonus action))",
                 '[attack: who="Wolf 2" target="Brannoc"]',
                 '[combat: op="join" foe="Wolf" role="standard" tier="1"] (roles: standard, '
                 "minion)",
                 '[combat: op="end" outcome="fled"] (or victory, defeat, truce)',
                 "Write no numbers: the engine rolls"):
        assert form in taught, form
    assert 'op="condition"' not in taught
    assert state_context(GAME, state).count('op="condition"') == 1


def test_a_ruleset_without_conditions_gets_no_condition_line() -> None:
    def plain(document) -> None:
        document["conditions"] = []
        document["combat"]["conditions"] = []
    game = game_with(plain)
    assert 'op="condition"' not in state_context(game, fighting(game))


def test_the_block_is_the_same_for_the_same_state() -> None:
    """A state's blocks are a function of it alone: the stage may keep them per state."""
    state = fighting()
    again, _ = answer(GAME, START, '[combat: op="start" foe="Goblin" count="2"]')
    assert combat_block(GAME, state) == combat_block(GAME, again)


def test_a_combatant_no_longer_in_the_party_is_named_only() -> None:
    state = fighting()
    encounter = state.encounter
    assert encounter is not None
    stranger = Combatant(name="Mira", side="party", initiative=30, joined=9)
    state = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": (stranger, *encounter.combatants)})})
    assert combat_block(GAME, state).splitlines()[2] == "1. Mira (hero; initiative 30)"
