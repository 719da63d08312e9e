"""ITM-OUT-15, ITM-RCHG-5: a regenerated answer never uses or recharges twice."""

from __future__ import annotations

import json

import replay
from tests.engine.test_use import bell, grave, grave_party, person

USE = 'You ring it. [inventory: action="use" item="Dawn bell" who="Ada"]'
REST = 'Dawn comes. [sheet: op="rest" rest="vigil" who="Ada"]'


def _chat(*lines: dict[str, object]) -> replay.Transcript:
    return replay.parse_transcript("\n".join(json.dumps(line) for line in lines) + "\n",
                                   format="gmtags")


def test_itm_out_15_swipes_of_a_use_reply_use_the_bell_once() -> None:
    game = grave()
    state = grave_party(game, [bell()])
    chat = _chat({"role": "player", "name": "Ada", "text": "I ring the bell."},
                 {"role": "gm", "text": USE, "swipes": [USE, USE + " Again.", USE], "swipe": 2},
                 {"role": "player", "name": "Ada", "text": "And again."},
                 {"role": "gm", "text": "Nothing."})
    result = replay.replay(game, chat, state)
    assert person(result.state, "Ada").bag[0].charges == 2
    assert [a.answer.text for a in result.answers] == [
        "Ada uses Dawn bell: hits nobody, as there is no fight; debuff, Steel 7 save negates "
        "it, Rattled. 2 left."]


def test_itm_rchg_5_swipes_of_a_rest_recharge_once_and_uses_count_once() -> None:
    game = grave()
    state = grave_party(game, [bell(charges=1)])
    chat = _chat({"role": "event", "name": "Ada", "event": {"action": "use", "item": "Dawn bell"}},
                 {"role": "gm", "text": "It tolls."},
                 {"role": "gm", "text": REST, "swipes": [REST, REST], "swipe": 1},
                 {"role": "gm", "text": USE, "swipes": [USE, USE], "swipe": 0})
    result = replay.replay(game, chat, state)
    texts = [a.answer.text for a in result.answers]
    assert len(texts) == 3
    if result.answers[0].answer.record.get("broke"):
        assert texts[1] == "Vigil. Ada: nothing to recharge."
        return
    assert texts[1] == "Vigil. Ada: Dawn bell 3/3 charges."
    assert person(result.state, "Ada").bag[0].charges == 2


def test_itm_out_15_replay_is_the_same_every_time() -> None:
    game = grave()
    state = grave_party(game, [bell(charges=1)])
    chat = _chat({"role": "gm", "text": USE, "swipes": [USE, USE], "swipe": 1},
                 {"role": "gm", "text": REST})
    first = json.dumps(replay.replay(game, chat, state).to_json(), sort_keys=True)
    second = json.dumps(replay.replay(game, chat, state).to_json(), sort_keys=True)
    assert first == second
