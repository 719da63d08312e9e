"""Issue 28: what real models write, read as the GM meant it, through the fold.

One test per row of the issue's table (a peer GM product's prompts teach these forms), then
the forms the issue says gmtags already read, so they stay read. Each reply is replayed from
the fixture party as one GM turn, as ``gmtags replay`` would.
"""

from __future__ import annotations

import json
from functools import cache

import pytest
from helpers import FIXTURES

import replay
from engine import Game, State

Reply = tuple[State, State, replay.MessageAnswer]


@cache
def _game(name: str) -> Game:
    return replay.load_ruleset(FIXTURES / f"rulesets/{name}.json")


def _party(name: str) -> State:
    return replay.load_party(_game(name), FIXTURES / f"parties/{name}.json")


def _reply(text: str, ruleset: str = "harrow") -> tuple[State, State, list[replay.MessageAnswer]]:
    """The fixture party, the state after one GM reply ``text``, and the reply's answers."""
    lines = [{"role": "player", "name": "Ada", "text": "Go on."}, {"role": "gm", "text": text}]
    chat = replay.parse_transcript("\n".join(json.dumps(line) for line in lines) + "\n",
                                   format="gmtags")
    start = _party(ruleset)
    result = replay.replay(_game(ruleset), chat, start)
    return start, result.state, result.answers


def _one(text: str, ruleset: str = "harrow") -> Reply:
    start, end, answers = _reply(text, ruleset)
    (answer,) = answers
    return start, end, answer


def _bag(state: State, who: int = 0) -> list[tuple[str, int]]:
    return [(stack.name, stack.count) for stack in state.characters[who].bag]


# --- the table ------------------------------------------------------------------------------


def test_row_1_a_comma_list_in_item_is_two_items() -> None:
    _, end, found = _one('[inventory: action="add" item="Bronze Key, Health Potion"]')
    answer = found.answer
    assert answer.ok
    assert answer.text == ("Added Bronze Key ×1 to Ada's bag. "
                           "Added Health Potion ×1 to Ada's bag.")
    assert _bag(end)[-2:] == [("Bronze Key", 1), ("Health Potion", 1)]


def test_row_2_items_without_an_action_adds_both() -> None:
    _, end, found = _one('[inventory: items="Bronze Key, Map"]')
    assert found.answer.ok and found.answer.reason is None
    assert _bag(end)[-2:] == [("Bronze Key", 1), ("Map", 1)]


def test_row_3_a_bare_word_is_the_action() -> None:
    _, added, found = _one('[inventory: add item="Bronze Key"]')
    assert found.answer.ok and found.answer.tag.attrs == {"action": "add", "item": "Bronze Key"}
    assert ("Bronze Key", 1) in _bag(added)
    start, end, found = _one("[inventory: remove item=Rope]")
    assert found.answer.ok and found.answer.text == "Removed Rope ×1 from Ada's bag."
    assert ("Rope", 1) in _bag(start) and ("Rope", 1) not in _bag(end)


def test_row_4_markdown_escaping_is_the_tag() -> None:
    _, end, found = _one('You find rope. \\[inventory: action="add" item="Rope"\\]')
    assert found.answer.ok and ("Rope", 2) in _bag(end)


def test_row_5_a_single_quote_that_never_closes_ends_at_the_bracket() -> None:
    _, end, found = _one("[inventory: action='add' item='Rope]")
    assert found.answer.ok and ("Rope", 2) in _bag(end)


def test_row_6_a_bare_advantage_flag_is_a_check_with_advantage() -> None:
    """5e: Brannoc's chain mail gives disadvantage on Stealth; advantage cancels it."""
    _, _, plain = _one('[skill_check: skill="Stealth" dc="14"]', "srd5")
    _, _, asked = _one('[skill_check: skill="Stealth" dc="14" mode="advantage"]', "srd5")
    _, _, found = _one('[skill_check: skill="Stealth" dc="14" advantage]', "srd5")
    assert found.answer.ok and found.answer.record == asked.answer.record
    assert len(plain.answer.record["rolls"]) == 2 and len(found.answer.record["rolls"]) == 1


def test_row_7_a_leading_number_is_the_dc() -> None:
    _, _, found = _one('[skill_check: skill="Athletics" dc="15 (hard)"]', "srd5")
    answer = found.answer
    assert answer.ok and answer.record["dc"] == 15
    assert answer.notes == ('read dc="15 (hard)" as 15',)


def test_row_8_a_bare_dc_stops_before_with_advantage() -> None:
    _, _, asked = _one('[skill_check: skill="Stealth" dc="14" mode="advantage"]', "srd5")
    _, _, found = _one("[skill_check: skill=Stealth dc=14 with advantage]", "srd5")
    assert found.answer.ok and found.answer.record == asked.answer.record
    assert found.answer.record["dc"] == 14 and found.answer.notes == ()


def test_row_9_the_copied_template_is_refused_as_the_template() -> None:
    start, end, found = _one('[inventory: action="add | remove" item="Item A, Item B"]')
    answer = found.answer
    assert (answer.ok, answer.reason, end == start) == (False, "unknown-action", True)
    assert answer.text == ('action="add | remove" is the template, not an action: write one '
                           'of them, e.g. [inventory: action="add" ...] with real values; '
                           "nothing was done.")


def test_row_10_a_written_result_is_not_used_and_the_answer_says_what_to_narrate() -> None:
    _, _, found = _one('[skill_check: skill="Stealth" dc="14" rolls="11" total="14" '
                       'result="success"]', "srd5")
    answer = found.answer
    rolled = answer.record["total"]
    word = "success" if answer.record["success"] else "failure"
    assert answer.text.startswith('Brannoc: Stealth. You wrote result="success"; the engine '
                                  "rolled 1d20")
    assert answer.text.endswith(f"= {rolled} vs 14: {word}. Narrate the {word}.")


# --- what gmtags already read, kept read ----------------------------------------------------


@pytest.mark.parametrize(("text", "bag"), [
    ('[inventory: action="add" item="Torch" count="3"]', ("Torch", 3)),
    ('[inventory: action="add" item="Torch" who="Bram the Quiet"]', ("Torch", 4)),
    ("[inventory: action=“add” item=“Torch”]", ("Torch", 1)),
    ('[ inventory : action="add" item="Torch" ]', ("Torch", 1)),
    ('[inventory: action="add" item="Map [torn]"]', ("Map [torn]", 1)),
    ('[qte: press X] Then: [inventory: action="add" item="Torch"]', ("Torch", 1)),
])
def test_forms_already_read_stay_read(text: str, bag: tuple[str, int]) -> None:
    _, end, answers = _reply(text)
    assert [found.answer.ok for found in answers] == [True]
    who = 1 if "Bram" in text or bag == ("Torch", 4) else 0
    assert bag in _bag(end, who)


def test_a_curly_quoted_remove_stays_a_remove() -> None:
    start, end, found = _one("[inventory: action=“remove” item=“Rope”]")
    assert found.answer.ok and ("Rope", 1) in _bag(start) and ("Rope", 1) not in _bag(end)


def test_a_label_with_a_comma_stays_one_item() -> None:
    _, end, found = _one('[inventory: action="add" item="Lantern, Hooded"]', "srd5")
    assert found.answer.ok and found.answer.record["name"] == "Lantern, Hooded"
    assert any(("Lantern, Hooded", 1) in _bag(end, who) for who in range(len(end.characters)))
