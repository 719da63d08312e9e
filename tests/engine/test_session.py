"""A new session: the place resets, unowned inventions are forgotten, the rest carries over."""

from __future__ import annotations

import json

from helpers import fixture_json

from engine import load_ruleset, start_state
from replay import parse_transcript, replay

GAME = load_ruleset(fixture_json("rulesets/bags.json"))
PARTY = fixture_json("parties/bags.json")
INVENT = ('[inventory: action="add" item="Lucky stone of Avel" category="{category}" '
          'summary="A smooth grey stone."]')


def _fold(*messages):
    text = "\n".join(json.dumps(m) for m in messages)
    return replay(GAME, parse_transcript(text, format="gmtags"), start_state(GAME, PARTY))


def _category():
    return GAME.ruleset.items.categories[0].id


def test_itm_prop_21_a_new_session_forgets_an_invention_nobody_owns():
    tag = INVENT.format(category=_category())
    who = start_state(GAME, PARTY).player
    result = _fold(
        {"role": "gm", "text": tag},
        {"role": "gm", "text": f'[inventory: action="remove" item="Lucky stone of Avel" who="{who}"]'},
        {"role": "player", "new_session": True, "text": "Later."},
        {"role": "gm", "text": "Nothing."},
    )
    assert [a.answer.ok for a in result.answers] == [True, True]
    assert all(i.name != "Lucky stone of Avel" for i in result.state.invented)


def test_itm_prop_20_an_owned_invention_and_the_bags_carry_over_but_not_the_place():
    tag = INVENT.format(category=_category())
    result = _fold(
        {"role": "gm", "text": tag + ' [place: name="Crossroads"]'},
        {"role": "player", "new_session": True, "text": "Later."},
        {"role": "gm", "text": "Nothing."},
    )
    assert any(i.name == "Lucky stone of Avel" for i in result.state.invented)
    assert result.state.place is None


def test_an_exported_state_with_an_invention_loads_as_the_next_party():
    tag = INVENT.format(category=_category())
    result = _fold({"role": "gm", "text": tag})
    exported = json.loads(json.dumps(result.state.to_json()))
    again = start_state(GAME, exported)
    assert any(i.name == "Lucky stone of Avel" for i in again.invented)
    assert again.characters == result.state.characters
