"""The GM's line for items used in a fight (spec/items.md §13: ITM-USE-5, 7..9, 13..17;
DESIGN.md "Combat" → "Prompt"; engine/actions/fight/use_teach.py): ``target=`` on
``[inventory: action="use"]`` is taught with the COMBAT block's lines, so only while a fight
is on, and only where the ruleset has an item with a use. On fixtures/rulesets/
ember-fights.json (the fire flask, poultice, dawn bell, …) and skirmish-foes.json (no item with
a use). The line shows the ruleset's first usable item aimed as its use is: ember-fights'
poultice heals an ally, so the example names the party's second member (issue 39)."""

from __future__ import annotations

from helpers import answer, fixture_json

from engine import load_ruleset, start_state
from engine.actions.fight.use_teach import USE_TAIL
from engine.text.fight.block import combat_block
from engine.text.prompt import gm_context, instructions

GAME = load_ruleset(fixture_json("rulesets/ember-fights.json"))
START = start_state(GAME, fixture_json("parties/ember-fights.json"))
TAUGHT = '[inventory: action="use" item="Poultice" who="Ada" target="Juno"]'
USE_LINE = f"- A hero uses an item in the fight: {TAUGHT}{USE_TAIL}"


def _fighting(game=GAME, state=START):
    state, answers = answer(game, state, '[combat: op="start" foe="Goblin" count="2"]')
    assert all(a.ok for a in answers) and state.encounter is not None
    return state


def test_out_of_a_fight_the_use_line_is_not_shown() -> None:
    assert TAUGHT not in instructions(GAME)
    assert TAUGHT not in gm_context(GAME, START) and combat_block(GAME, START) == ""


def test_in_a_fight_the_combat_block_teaches_target_on_a_use_once_before_the_end_line() -> None:
    block = combat_block(GAME, _fighting())
    lines = block.splitlines()
    assert lines.count(USE_LINE) == 1 and TAUGHT in USE_LINE
    assert "target= names the foes it is aimed at, or the hero a heal or buff is for" in USE_LINE
    assert lines.index(USE_LINE) == len(lines) - 2 and lines[-1].startswith("- It ends:")
    assert gm_context(GAME, _fighting()).count(TAUGHT) == 1  # not in the instructions too


def test_the_line_goes_when_the_fight_ends() -> None:
    ended, answers = answer(GAME, _fighting(), '[combat: op="end" outcome="fled"]', (1, 1))
    assert answers[0].ok and ended.encounter is None
    assert TAUGHT not in gm_context(GAME, ended)


def test_a_ruleset_without_an_item_to_use_is_not_taught_it_in_a_fight() -> None:
    game = load_ruleset(fixture_json("rulesets/skirmish-foes.json"))
    state = _fighting(game, start_state(game, fixture_json("parties/skirmish-foes.json")))
    block = combat_block(game, state)
    assert block.startswith("COMBAT (") and TAUGHT not in block


def test_the_taught_form_is_answered_in_a_fight() -> None:
    """What the line teaches works: a poultice aimed at an ally with target= heals that ally
    (ITM-USE-22), a flask aimed at a foe rolls against its defence (ITM-USE-7)."""
    state = _fighting()
    _, answers = answer(GAME, state, '[inventory: action="use" item="Poultice" who="Juno" '
                        'target="Ada"] [inventory: action="use" item="Fire flask" who="Ada" '
                        'target="Goblin 2"]', (1, 1))
    assert all(a.ok for a in answers), answers
    assert answers[0].record["targets"][0]["target"] == "Ada"
    assert answers[1].record["targets"][0]["target"] == "Goblin 2"
    assert "defence" in answers[1].record["targets"][0]
