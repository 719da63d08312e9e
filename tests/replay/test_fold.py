"""The transcript fold (DESIGN.md "Replay semantics"): only what the player sees counts."""

from __future__ import annotations

import json

from helpers import bag, harrow, harrow_party

from replay import parse_transcript, replay

GAME = harrow()


def fold(*messages):
    text = "\n".join(json.dumps(m) for m in messages)
    return replay(GAME, parse_transcript(text, format="gmtags"), harrow_party(GAME))


ADD_ROPE = '[inventory: action="add" item="Rope" who="Bram the Quiet"]'


def test_gm_reply_tags_apply():
    result = fold({"role": "gm", "text": f"Here. {ADD_ROPE}"})
    assert ("Rope", 1) in bag(result.state, "Bram the Quiet")
    assert [a.message for a in result.answers] == [0]


def test_player_typed_tags_never_count():
    result = fold({"role": "player", "text": f"I take it {ADD_ROPE}"})
    assert result.answers == []
    assert result.state == harrow_party(GAME)


def test_only_the_selected_swipe_applies():
    result = fold({"role": "gm", "swipes": [f"A {ADD_ROPE}", "B, nothing here"], "swipe": 1})
    assert result.answers == []
    result = fold({"role": "gm", "swipes": ["nothing", f"B {ADD_ROPE}"], "swipe": 1})
    assert ("Rope", 1) in bag(result.state, "Bram the Quiet")


def test_swipe_from_a_sillytavern_file_with_swipe_id():
    lines = [
        {
            "user_name": "Ada",
            "character_name": "GM",
            "create_date": "2024-07-04@15h12m",
            "chat_metadata": {},
        },
        {
            "name": "GM",
            "is_user": False,
            "is_system": False,
            "send_date": 1720105920000,
            "mes": f"Second. {ADD_ROPE}",
            "swipe_id": 1,
            "swipes": [
                'First. [inventory: action="add" item="Torch" who="Ada"]',
                f"Second. {ADD_ROPE}",
            ],
        },
    ]
    transcript = parse_transcript("\n".join(json.dumps(x) for x in lines))
    result = replay(GAME, transcript, harrow_party(GAME))
    assert ("Rope", 1) in bag(result.state, "Bram the Quiet")
    assert ("Torch", 3) in bag(result.state, "Bram the Quiet")
    assert not any(name == "Torch" for name, _ in bag(result.state, "Ada"))


def test_hidden_messages_are_skipped():
    result = fold({"role": "gm", "hidden": True, "text": ADD_ROPE})
    assert result.answers == []


def test_hidden_reply_keeps_its_turn_number():
    """Hiding an earlier reply never changes the turn key (and so the dice) of later ones."""
    result_a = fold({"role": "gm", "hidden": True, "text": "x"}, {"role": "gm", "text": ADD_ROPE})
    result_b = fold({"role": "gm", "text": "x"}, {"role": "gm", "text": ADD_ROPE})
    assert result_a.answers[0].message == result_b.answers[0].message == 1


def test_new_session_carries_bags_over():
    result = fold(
        {"role": "gm", "text": ADD_ROPE},
        {"role": "player", "new_session": True, "text": "Next day."},
        {"role": "gm", "text": ADD_ROPE},
    )
    assert ("Rope", 2) in bag(result.state, "Bram the Quiet")
    assert [a.message for a in result.answers] == [0, 2]


def test_system_messages_do_not_answer_tags_and_unknown_events_are_refused():
    result = fold(
        {"role": "system", "text": ADD_ROPE},
        {"role": "event", "event": {"action": "juggle", "item": "Poultice"}},
    )
    assert [(a.answer.tag.kind, a.answer.ok, a.answer.reason) for a in result.answers] == [
        ("event", False, "unsupported")]


def test_repairs_in_gm_replies_become_diagnostics_with_the_message_index():
    result = fold(
        {"role": "player", "text": "hi"},
        {"role": "gm", "text": "[inventory: action='add' item='Rope']"},
    )
    assert result.answers[0].answer.ok
    assert result.diagnostics and all(d.message == 1 for d in result.diagnostics)


def test_malformed_tag_is_answered_refused():
    result = fold(
        {
            "role": "gm",
            "text": '[inventory: action="add" item=] then [inventory: action="add" item="Rope"]',
        }
    )
    assert [(a.answer.ok, a.answer.reason) for a in result.answers] == [
        (False, "malformed"),
        (True, None),
    ]


def test_same_inputs_give_identical_json():
    messages = [{"role": "gm", "text": ADD_ROPE}, {"role": "gm", "text": ADD_ROPE}]
    first = json.dumps(fold(*messages).to_json(), ensure_ascii=False)
    second = json.dumps(fold(*messages).to_json(), ensure_ascii=False)
    assert first == second


def test_replay_json_contract_keys():
    document = fold({"role": "gm", "text": ADD_ROPE}).to_json()
    assert set(document) == {"answers", "state", "diagnostics"}
    answer = document["answers"][0]
    assert {"message", "tag", "ok", "reason", "text", "record"} <= set(answer)
    assert set(answer["tag"]) == {"kind", "attrs", "raw"}
    character = document["state"]["characters"][1]
    assert character["name"] == "Bram the Quiet"
    assert {"name", "item", "coin", "count"} <= set(character["bag"][0])
