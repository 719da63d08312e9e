"""Transcript readers: gmtags JSONL, SillyTavern chat .jsonl, OpenAI messages JSON."""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from replay.formats import parse_transcript, read_transcript, transcript_from_openai
from replay.transcript import Message, ReadDiagnostic, Transcript, TranscriptError

DATA = Path(__file__).parent / "data"


def jsonl(*objects: Any) -> str:
    """One JSON value per line, as a reader sees a file."""
    return "".join(json.dumps(value) + "\n" for value in objects)


def codes(transcript: Transcript) -> list[tuple[int | None, str]]:
    return [(item.line, item.code) for item in transcript.diagnostics]


def only_message(transcript: Transcript) -> Message:
    (session,) = transcript.sessions
    (message,) = session.messages
    return message


ST_HEADER = {"user_name": "Ada", "character_name": "Seraphina", "chat_metadata": {}}


def st_message(**fields: Any) -> dict[str, Any]:
    """A SillyTavern GM reply with the keys ST always writes; `fields` override them."""
    return {"name": "Seraphina", "is_user": False, "is_system": False, "mes": "Hello.", **fields}


# --- gmtags JSONL ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        (
            {"role": "player", "name": "Ada", "text": "I head for the market."},
            Message(role="player", name="Ada", text="I head for the market.", source_line=1),
        ),
        ({"role": "gm", "text": "Hi."}, Message(role="gm", text="Hi.", source_line=1)),
        (
            {"role": "system", "text": "note", "hidden": True},
            Message(role="system", text="note", hidden=True, source_line=1),
        ),
        (
            {"role": "event", "name": "Ada", "event": {"action": "use", "item": "Poultice"}},
            Message(
                role="event",
                name="Ada",
                event={"action": "use", "item": "Poultice"},
                source_line=1,
            ),
        ),
        (
            {"role": "gm", "swipes": ["a", "b"], "swipe": 1},
            Message(role="gm", text="b", swipes=("a", "b"), swipe=1, source_line=1),
        ),
        (
            {"role": "gm", "swipes": ["a", "b"]},
            Message(role="gm", text="a", swipes=("a", "b"), swipe=0, source_line=1),
        ),
        (
            {"role": "gm", "text": "b", "swipes": ["a", "b"], "swipe": 1},
            Message(role="gm", text="b", swipes=("a", "b"), swipe=1, source_line=1),
        ),
        ({"role": "player"}, Message(role="player", text="", source_line=1)),
    ],
)
def test_gmtags_line_becomes_the_message_it_describes(
    line: dict[str, Any], expected: Message
) -> None:
    transcript = parse_transcript(jsonl(line))
    assert transcript.format == "gmtags"
    assert only_message(transcript) == expected
    assert transcript.diagnostics == ()


def test_gmtags_text_disagreeing_with_the_selected_swipe_loses_to_the_swipe() -> None:
    transcript = parse_transcript(
        jsonl({"role": "gm", "text": "stale", "swipes": ["a", "b"], "swipe": 1})
    )
    assert only_message(transcript).text == "b"
    assert codes(transcript) == [(1, "text-differs-from-swipe")]


@pytest.mark.parametrize(("swipe", "clamped"), [(2, 1), (99, 1), (-1, 0)])
def test_gmtags_swipe_out_of_range_is_clamped_to_the_nearest_swipe(
    swipe: int, clamped: int
) -> None:
    transcript = parse_transcript(jsonl({"role": "gm", "swipes": ["a", "b"], "swipe": swipe}))
    message = only_message(transcript)
    assert (message.swipe, message.text) == (clamped, ["a", "b"][clamped])
    assert codes(transcript) == [(1, "swipe-out-of-range")]


def test_gmtags_new_session_flag_starts_a_session_with_that_message() -> None:
    transcript = read_transcript(DATA / "ada_two_sessions.jsonl")
    assert [len(session.messages) for session in transcript.sessions] == [4, 2]
    first_of_second = transcript.sessions[1].messages[0]
    assert (first_of_second.text, first_of_second.new_session) == ("We meet again.", True)
    assert transcript.sessions[0].messages[1].text.startswith("Millbrook bustles.")
    assert transcript.diagnostics == ()


def test_gmtags_new_session_on_the_first_message_opens_only_one_session() -> None:
    transcript = parse_transcript(
        jsonl({"role": "player", "new_session": True, "text": "a"}, {"role": "gm", "text": "b"})
    )
    assert [len(session.messages) for session in transcript.sessions] == [2]


@pytest.mark.parametrize(
    ("bad_line", "code"),
    [
        ("this is not json", "bad-json"),
        ('{"role": "gm", "text": "unterminated', "bad-json"),
        ("[1, 2]", "bad-message"),
        ("42", "bad-message"),
        ('{"role": "narrator", "text": "x"}', "unknown-role"),
        ('{"role": 3}', "unknown-role"),
        ('{"text": "no role"}', "unknown-role"),
        ('{"role": "event", "text": "no payload"}', "bad-message"),
        ('{"role": "event", "event": "use"}', "bad-message"),
        ("[" * 100_000, "bad-json"),
    ],
)
def test_gmtags_bad_line_is_skipped_with_a_diagnostic_on_its_line(bad_line: str, code: str) -> None:
    text = jsonl({"role": "player", "text": "a"}) + bad_line + "\n" + jsonl({"role": "gm"})
    transcript = parse_transcript(text)
    assert [message.source_line for _, _, message in transcript.messages()] == [1, 3]
    assert codes(transcript) == [(2, code)]
    assert "\n" not in transcript.diagnostics[0].message


def test_gmtags_unknown_keys_are_reported_and_the_message_is_kept() -> None:
    transcript = parse_transcript(jsonl({"role": "gm", "text": "a", "mood": "grim", "hp": 3}))
    assert only_message(transcript).text == "a"
    assert codes(transcript) == [(1, "unknown-key")]
    assert "'hp', 'mood'" in transcript.diagnostics[0].message


def test_gmtags_an_unknown_key_names_the_key_it_most_likely_meant() -> None:
    """Issue 29: a typo of a known key is a did-you-mean, not only "unknown"."""
    transcript = parse_transcript(jsonl({"role": "gm", "txt": "a", "hiden": True}))
    assert transcript.diagnostics[0].message == (
        """unknown keys ignored: 'hiden' (did you mean "hidden"?), 'txt' (did you mean "text"?)""")


def test_a_line_that_is_not_json_names_its_column_not_a_second_line() -> None:
    transcript = parse_transcript(jsonl({"role": "gm", "text": "a"}) + '{"role": "gm" "x"}\n')
    [diagnostic] = transcript.diagnostics
    assert (diagnostic.line, diagnostic.message) == (
        2, "not JSON: Expecting ',' delimiter at column 15")


@pytest.mark.parametrize(
    ("field", "value", "attribute", "default"),
    [
        ("name", 5, "name", None),
        ("text", ["a"], "text", ""),
        ("hidden", "yes", "hidden", False),
        ("new_session", 1, "new_session", False),
        ("swipes", [1, 2], "swipes", None),
        ("swipes", [], "swipes", None),
        ("swipes", "ab", "swipes", None),
        ("swipe", 3, "swipe", 0),
    ],
)
def test_gmtags_field_of_the_wrong_type_falls_back_to_its_default(
    field: str, value: Any, attribute: str, default: Any
) -> None:
    transcript = parse_transcript(jsonl({"role": "gm", field: value}))
    assert getattr(only_message(transcript), attribute) == default
    assert codes(transcript) == [(1, "bad-field")]


def test_gmtags_event_payload_is_only_read_on_event_lines() -> None:
    transcript = parse_transcript(jsonl({"role": "gm", "text": "a", "event": {"action": "use"}}))
    assert only_message(transcript).event is None
    assert codes(transcript) == [(1, "bad-field")]


# --- SillyTavern -----------------------------------------------------------------------------


def test_st_sample_chat_reads_names_roles_hidden_and_selected_swipe() -> None:
    transcript = read_transcript(DATA / "seraphina_market.jsonl")
    assert transcript.format == "sillytavern"
    assert (transcript.player_name, transcript.gm_name) == ("Ada", "Seraphina")
    assert len(transcript.sessions) == 1
    messages = [message for _, _, message in transcript.messages()]
    assert [(m.role, m.name, m.hidden) for m in messages] == [
        ("gm", "Seraphina", False),
        ("player", "Ada", False),
        ("gm", "Seraphina", False),
        ("player", "Ada", True),
        ("system", "System", False),
        ("player", "Ada", False),
        ("gm", "Seraphina", False),
    ]
    reply = messages[2]
    assert reply.swipe == 1 and reply.swipes is not None and len(reply.swipes) == 3
    assert reply.text == reply.swipes[1]
    assert reply.text.startswith("A weaver sells you a coil.")
    assert [m.source_line for m in messages] == [2, 3, 4, 5, 6, 7, 8]
    assert transcript.diagnostics == ()


@pytest.mark.parametrize(
    ("header", "player_name", "gm_name"),
    [
        ({"user_name": "Ada", "character_name": "Seraphina"}, "Ada", "Seraphina"),
        ({"user_name": "unused", "character_name": "unused", "chat_metadata": {}}, None, None),
        ({"user_name": "", "character_name": 7, "create_date": "2024-7-4"}, None, None),
        ({"chat_metadata": {"tainted": True}}, None, None),
    ],
)
def test_st_header_names_are_recorded_and_placeholders_are_unknown(
    header: dict[str, Any], player_name: str | None, gm_name: str | None
) -> None:
    transcript = parse_transcript(jsonl(header, st_message()))
    assert (transcript.player_name, transcript.gm_name) == (player_name, gm_name)
    assert only_message(transcript).source_line == 2
    assert transcript.diagnostics == ()


def test_st_chat_without_header_reads_its_first_line_as_a_message() -> None:
    transcript = parse_transcript(
        jsonl(st_message(name="Bard", is_group=True), st_message(name="Ada", is_user=True))
    )
    assert transcript.format == "sillytavern"
    assert [(m.role, m.name) for _, _, m in transcript.messages()] == [
        ("gm", "Bard"),
        ("player", "Ada"),
    ]
    assert (transcript.player_name, transcript.gm_name) == (None, None)


@pytest.mark.parametrize(
    "send_date",
    ["July 4, 2024 3:12pm", "2024-07-04T15:12:03.512Z", 1720106100000, None, {"odd": [1]}],
)
def test_st_send_date_in_any_shape_is_ignored(send_date: Any) -> None:
    line = st_message() if send_date is None else st_message(send_date=send_date)
    transcript = parse_transcript(jsonl(ST_HEADER, line))
    assert only_message(transcript).text == "Hello."
    assert transcript.diagnostics == ()


@pytest.mark.parametrize(("is_system", "hidden"), [(True, True), (False, False)])
def test_st_is_system_hides_the_message(is_system: bool, hidden: bool) -> None:
    transcript = parse_transcript(jsonl(ST_HEADER, st_message(is_system=is_system)))
    assert only_message(transcript).hidden is hidden


@pytest.mark.parametrize(
    ("fields", "swipe"),
    [
        ({"mes": "b", "swipes": ["a", "b", "c"], "swipe_id": 1}, 1),
        ({"mes": "a", "swipes": ["a", "b"]}, 0),
        ({"mes": "a"}, 0),
    ],
)
def test_st_swipe_id_selects_the_shown_swipe(fields: dict[str, Any], swipe: int) -> None:
    transcript = parse_transcript(jsonl(ST_HEADER, st_message(**fields)))
    message = only_message(transcript)
    assert (message.swipe, message.text) == (swipe, fields["mes"])
    assert transcript.diagnostics == ()


def test_st_mes_differing_from_the_swipe_is_kept_as_the_text_the_player_saw() -> None:
    transcript = parse_transcript(
        jsonl(ST_HEADER, st_message(mes="edited", swipes=["a", "b"], swipe_id=1))
    )
    message = only_message(transcript)
    assert (message.text, message.swipe, message.swipes) == ("edited", 1, ("a", "b"))
    assert codes(transcript) == [(2, "mes-differs-from-swipe")]


@pytest.mark.parametrize(
    ("mes", "swipe_id", "swipe"),
    [("a", 5, 0), ("edited", 5, 1), ("edited", -2, 0)],
)
def test_st_swipe_id_out_of_range_keeps_mes_and_points_at_the_nearest_swipe(
    mes: str, swipe_id: int, swipe: int
) -> None:
    transcript = parse_transcript(
        jsonl(ST_HEADER, st_message(mes=mes, swipes=["a", "b"], swipe_id=swipe_id))
    )
    message = only_message(transcript)
    assert (message.text, message.swipe) == (mes, swipe)
    assert codes(transcript) == [(2, "swipe-out-of-range")]


@pytest.mark.parametrize(
    ("fields", "role"),
    [
        ({"name": "System", "extra": {"type": "narrator", "isSmallSys": True}}, "system"),
        ({"extra": {"type": "comment"}, "is_system": True}, "system"),
        ({"extra": {"type": "something-an-extension-wrote"}}, "gm"),
        ({"extra": {"api": "openai"}}, "gm"),
        ({"extra": "not an object"}, "gm"),
        ({"is_user": True, "extra": {"type": "narrator"}}, "player"),
    ],
)
def test_st_narrator_and_other_system_types_read_as_system(
    fields: dict[str, Any], role: str
) -> None:
    transcript = parse_transcript(jsonl(ST_HEADER, st_message(**fields)))
    assert only_message(transcript).role == role


@pytest.mark.parametrize(
    ("bad_line", "code"),
    [
        ('{"name": "Seraphina", "mes": "broken', "bad-json"),
        ('{"name": "Seraphina", "is_user": false}', "bad-message"),
        ('{"name": "Seraphina", "mes": null}', "bad-message"),
        ('"just a string"', "bad-message"),
    ],
)
def test_st_malformed_line_in_the_middle_is_skipped_with_a_diagnostic(
    bad_line: str, code: str
) -> None:
    text = jsonl(ST_HEADER, st_message(mes="one")) + bad_line + "\n" + jsonl(st_message(mes="two"))
    transcript = parse_transcript(text)
    assert [m.text for _, _, m in transcript.messages()] == ["one", "two"]
    assert codes(transcript) == [(3, code)]


def test_st_header_without_messages_reads_as_no_messages() -> None:
    transcript = parse_transcript(jsonl(ST_HEADER))
    assert (transcript.format, transcript.sessions) == ("sillytavern", ())
    assert codes(transcript) == [(None, "no-messages")]


# --- OpenAI ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("role", "expected_role", "hidden"),
    [
        ("system", "system", False),
        ("developer", "system", False),
        ("user", "player", False),
        ("assistant", "gm", False),
        ("tool", "system", True),
        ("function", "system", True),
    ],
)
def test_openai_roles_map_to_transcript_roles(role: str, expected_role: str, hidden: bool) -> None:
    transcript = parse_transcript(json.dumps([{"role": role, "content": "x"}]))
    message = only_message(transcript)
    assert (message.role, message.hidden, message.source_line) == (expected_role, hidden, 1)


@pytest.mark.parametrize(
    ("content", "text", "diagnostic_codes"),
    [
        ("plain", "plain", []),
        (None, "", []),
        ([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}], "a\nb", []),
        ([{"type": "image_url", "image_url": {"url": "data:,"}}], "", []),
        ([{"type": "text", "text": "a"}, {"type": "input_audio"}], "a", []),
        (["a", "b"], "a\nb", []),
        ({"type": "text", "text": "single part"}, "single part", []),
        ([{"type": "text", "text": "a"}, 5], "a", ["bad-field"]),
        (42, "", ["bad-field"]),
    ],
)
def test_openai_content_in_each_shape_gives_its_text(
    content: Any, text: str, diagnostic_codes: list[str]
) -> None:
    transcript = parse_transcript(json.dumps([{"role": "assistant", "content": content}]))
    assert only_message(transcript).text == text
    assert [item.code for item in transcript.diagnostics] == diagnostic_codes


def test_openai_request_body_reads_its_messages_array() -> None:
    transcript = read_transcript(DATA / "request_body.json")
    assert transcript.format == "openai"
    messages = [message for _, _, message in transcript.messages()]
    assert [(m.role, m.hidden) for m in messages] == [
        ("system", False),
        ("player", False),
        ("gm", False),
        ("player", False),
        ("gm", False),
        ("system", True),
        ("gm", False),
    ]
    assert messages[1].name == "Ada"
    assert messages[2].text == 'Millbrook bustles.\n[place: name="Millbrook" size="market town"]'
    assert messages[3].text == "What is this?"
    assert [m.source_line for m in messages] == list(range(1, 8))
    assert transcript.diagnostics == ()


def test_openai_unknown_role_is_skipped_and_positions_keep_counting() -> None:
    transcript = parse_transcript(
        json.dumps(
            [{"role": "user", "content": "a"}, {"role": "robot"}, "x", {"role": "assistant"}]
        )
    )
    assert [m.source_line for _, _, m in transcript.messages()] == [1, 4]
    assert codes(transcript) == [(2, "unknown-role"), (3, "bad-message")]


def test_transcript_from_openai_reads_a_request_messages_list() -> None:
    transcript = transcript_from_openai(
        [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}]
    )
    assert [(m.role, m.text) for _, _, m in transcript.messages()] == [
        ("player", "a"),
        ("gm", "b"),
    ]
    assert transcript_from_openai([]).sessions == ()


def test_transcript_from_openai_refuses_what_is_not_a_list() -> None:
    with pytest.raises(TranscriptError):
        transcript_from_openai({"role": "user"})  # type: ignore[arg-type]


def test_openai_document_followed_by_garbage_reports_trailing_data() -> None:
    transcript = parse_transcript(json.dumps([{"role": "user", "content": "a"}]) + "\n\noops\n")
    assert only_message(transcript).text == "a"
    assert codes(transcript) == [(3, "trailing-data")]


# --- decoding --------------------------------------------------------------------------------

GMTAGS_TEXT = jsonl({"role": "player", "text": "a"}, {"role": "gm", "text": "b"})
ST_TEXT = jsonl(ST_HEADER, st_message(mes="a", is_user=True), st_message(mes="b"))
OPENAI_TEXT = json.dumps(
    [{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}], indent=2
)


@pytest.mark.parametrize("text", [GMTAGS_TEXT, ST_TEXT, OPENAI_TEXT])
@pytest.mark.parametrize("as_bytes", [True, False])
def test_crlf_line_ends_and_a_bom_read_like_plain_text(text: str, as_bytes: bool) -> None:
    plain = parse_transcript(text)
    windows = "\ufeff" + text.replace("\n", "\r\n")
    transcript = parse_transcript(windows.encode("utf-8") if as_bytes else windows)
    assert transcript == plain
    assert [m.text for _, _, m in transcript.messages()] == ["a", "b"]


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be"])
def test_utf16_with_a_bom_is_decoded(encoding: str) -> None:
    data = GMTAGS_TEXT.encode(encoding)
    if encoding != "utf-16":
        data = "\ufeff".encode(encoding) + data
    assert parse_transcript(data) == parse_transcript(GMTAGS_TEXT)


def test_broken_utf16_is_replaced_with_one_diagnostic_on_its_line() -> None:
    data = GMTAGS_TEXT.encode("utf-16") + b"\x00\xd8"  # a lone high surrogate at the end
    transcript = parse_transcript(data)
    assert len(transcript.messages()) == 2
    assert (3, "bad-utf8") in codes(transcript)


def test_invalid_utf8_bytes_become_replacement_characters_with_one_diagnostic() -> None:
    data = (
        b'{"role": "player", "text": "ok"}\n'
        b'{"role": "gm", "text": "caf\xe9"}\n'
        b'{"role": "gm", "text": "\xff\xfe"}\n'
    )
    transcript = parse_transcript(data)
    assert [m.text for _, _, m in transcript.messages()] == ["ok", "caf\ufffd", "\ufffd\ufffd"]
    assert codes(transcript) == [(2, "bad-utf8")]


def test_lone_surrogates_in_a_python_string_become_replacement_characters() -> None:
    transcript = parse_transcript('{"role": "gm", "text": "a\ud800"}\n')
    assert only_message(transcript).text == "a\ufffd"
    assert codes(transcript) == [(1, "bad-utf8")]


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ('{"role": "gm", "text": "a\\ud800", "name": "\\udfff"}\n', 1),
        ('{"role": "gm", "swipes": ["x", "a\\ud800"], "swipe": 1}\n', 1),
        ('[{"role": "assistant", "content": [{"type": "text", "text": "a\\ud800"}]}]', None),
    ],
)
def test_escaped_lone_surrogates_become_replacement_characters(text: str, line: int | None) -> None:
    transcript = parse_transcript(text)
    message = only_message(transcript)
    assert message.text == "a\ufffd"
    assert message.name in (None, "\ufffd")
    assert codes(transcript) == [(line, "bad-utf8")]


def test_escaped_lone_surrogates_deep_in_an_event_payload_are_replaced() -> None:
    transcript = parse_transcript('{"role": "event", "event": {"a\\udc00": [{"b": "\\ud800"}]}}')
    assert only_message(transcript).event == {"a\ufffd": [{"b": "\ufffd"}]}
    assert codes(transcript) == [(1, "bad-utf8")]


def test_escaped_surrogate_pair_is_one_character_and_no_repair() -> None:
    transcript = parse_transcript('{"role": "gm", "text": "\\ud83c\\udfb2"}\n')
    assert only_message(transcript).text == "\U0001f3b2"
    assert transcript.diagnostics == ()


def test_raw_control_characters_are_kept_with_one_diagnostic() -> None:
    text = '{"role": "gm", "text": "a\x01b"}\n{"role": "gm", "text": "\x00"}\n'
    transcript = parse_transcript(text)
    assert [m.text for _, _, m in transcript.messages()] == ["a\x01b", "\x00"]
    assert codes(transcript) == [(1, "control-characters")]


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=0x40) | st.sampled_from("\u00e9\u2028"),
               max_size=40))
def test_the_first_control_character_is_the_one_a_character_class_finds(text: str) -> None:
    import re

    from replay.formats import first_control

    found = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f]").search(text)
    assert first_control(text) == (found.start() if found else None)


def test_unicode_line_separators_inside_a_string_do_not_split_the_line() -> None:
    text = '{"role": "gm", "text": "a\u2028b\u0085c"}\n{"role": "player", "text": "d"}\n'
    transcript = parse_transcript(text)
    assert [m.text for _, _, m in transcript.messages()] == ["a\u2028b\u0085c", "d"]
    assert transcript.diagnostics == ()


def test_blank_lines_are_skipped_and_line_numbers_still_count_them() -> None:
    text = '\n  \n{"role": "gm", "text": "a"}\n\n{"role": "gm", "text": "b"}\n\n'
    transcript = parse_transcript(text)
    assert [m.source_line for _, _, m in transcript.messages()] == [3, 5]
    assert transcript.diagnostics == ()


def test_trailing_garbage_lines_are_diagnostics_not_errors() -> None:
    transcript = parse_transcript(GMTAGS_TEXT + "\x1a\n-- end of log --\n")
    assert len(transcript.messages()) == 2
    assert [code for _, code in codes(transcript)] == ["control-characters", "bad-json", "bad-json"]


# --- detection and errors --------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "format"),
    [
        (GMTAGS_TEXT, "gmtags"),
        (jsonl({"role": "gm", "text": "one line"}), "gmtags"),
        (ST_TEXT, "sillytavern"),
        (jsonl(st_message()), "sillytavern"),
        (jsonl({"name": "Ada", "is_user": True, "mes": "hi"}), "sillytavern"),
        (jsonl({"user_name": "Ada", "character_name": "Seraphina"}), "sillytavern"),
        ("not json\n" + jsonl(st_message()), "sillytavern"),
        (OPENAI_TEXT, "openai"),
        (json.dumps({"model": "m", "messages": [{"role": "user", "content": "a"}]}), "openai"),
        ("[]", "openai"),
    ],
)
def test_format_is_detected_from_the_content(text: str, format: str) -> None:
    assert parse_transcript(text).format == format


def test_explicit_format_overrides_detection() -> None:
    transcript = parse_transcript(ST_TEXT, format="gmtags")
    assert transcript.format == "gmtags"
    assert {code for _, code in codes(transcript)} == {"unknown-role", "no-messages"}


@pytest.mark.parametrize(
    ("data", "format"),
    [
        (b"\x00\x01\x02\xff\xfe garbage \x89PNG\r\n\x1a\n", None),
        ("42", None),
        ('"hello"', None),
        ("null", None),
        ("[" * 100_000, None),
        (jsonl({"foo": 1}, {"bar": 2}), None),
        ("Ada: I head for the market.\nGM: Millbrook bustles.\n", None),
        (GMTAGS_TEXT, "openai"),
        ('{"messages": "nope"}', None),
        ("plain prose", "gmtags"),
        (GMTAGS_TEXT, "tavern"),
    ],
)
def test_input_of_no_known_format_raises_transcript_error(
    data: str | bytes, format: str | None
) -> None:
    with pytest.raises(TranscriptError, match=r"^<input>: "):
        parse_transcript(data, format=format)


def test_missing_file_raises_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError, match=r"missing\.jsonl"):
        read_transcript(tmp_path / "missing.jsonl")


def test_directory_instead_of_a_file_raises_transcript_error(tmp_path: Path) -> None:
    with pytest.raises(TranscriptError):
        read_transcript(tmp_path)


@pytest.mark.parametrize("data", ["", "\n\n  \n", "\ufeff", b"\xef\xbb\xbf\r\n"])
def test_empty_input_reads_as_no_sessions_with_an_empty_file_diagnostic(data: str | bytes) -> None:
    transcript = parse_transcript(data)
    assert transcript.sessions == ()
    assert codes(transcript) == [(None, "empty-file")]


def test_messages_are_flattened_with_session_and_position() -> None:
    transcript = read_transcript(DATA / "ada_two_sessions.jsonl")
    assert [(session, index) for session, index, _ in transcript.messages()] == [
        (0, 0),
        (0, 1),
        (0, 2),
        (0, 3),
        (1, 0),
        (1, 1),
    ]


def test_diagnostics_come_sorted_by_line_with_whole_input_ones_first() -> None:
    transcript = parse_transcript(
        b'{"role": "gm", "x": 1}\nbad\n{"role": "gm", "text": "\xff"}\n', format="gmtags"
    )
    assert codes(transcript) == [(1, "unknown-key"), (2, "bad-json"), (3, "bad-utf8")]
    sessionless = parse_transcript("[]")
    assert codes(sessionless) == [(None, "no-messages")]


def test_transcript_models_are_frozen() -> None:
    transcript = parse_transcript(GMTAGS_TEXT)
    message = only_message(parse_transcript(jsonl({"role": "gm"})))
    with pytest.raises(ValidationError):
        message.text = "changed"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        transcript.format = "openai"  # type: ignore[misc]
    with pytest.raises(ValidationError):
        Message(role="gm", colour="red")  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        ReadDiagnostic(line=1, code="x", message="y", extra=1)  # type: ignore[call-arg]


# --- properties ------------------------------------------------------------------------------

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children, max_size=4)
    ),
    max_leaves=12,
)
KEYS = [
    "role", "name", "text", "swipes", "swipe", "hidden", "new_session", "event", "mes",
    "is_user", "is_system", "swipe_id", "extra", "user_name", "character_name", "content",
    "messages", "send_date",
]  # fmt: skip
field_values = (
    json_values
    | st.sampled_from(["player", "gm", "system", "event", "user", "assistant", "tool", "narrator"])
    | st.lists(st.text(max_size=4), max_size=3)
    | st.integers(min_value=-3, max_value=3)
    | st.fixed_dictionaries({"type": st.sampled_from(["narrator", "text", "image_url"])})
)
message_objects = st.dictionaries(st.sampled_from(KEYS), field_values, max_size=7)


def assert_well_formed(transcript: Transcript) -> None:
    for _, _, message in transcript.messages():
        assert message.source_line is not None and message.source_line >= 1
        if message.swipes is not None:
            assert 0 <= message.swipe < len(message.swipes)
    for item in transcript.diagnostics:
        assert "\n" not in item.message


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_parse_transcript_of_any_text_reads_or_raises_transcript_error(text: str) -> None:
    with contextlib.suppress(TranscriptError):
        assert_well_formed(parse_transcript(text))


@settings(max_examples=300, deadline=None)
@given(st.binary())
def test_parse_transcript_of_any_bytes_reads_or_raises_transcript_error(data: bytes) -> None:
    with contextlib.suppress(TranscriptError):
        assert_well_formed(parse_transcript(data))


@settings(max_examples=300, deadline=None)
@given(
    st.lists(message_objects | json_values, max_size=6),
    st.sampled_from([None, "gmtags", "sillytavern", "openai"]),
    st.booleans(),
)
def test_parse_transcript_of_any_json_lines_reads_or_raises_transcript_error(
    values: list[Any], format: str | None, as_array: bool
) -> None:
    text = json.dumps(values) if as_array else jsonl(*values)
    with contextlib.suppress(TranscriptError):
        assert_well_formed(parse_transcript(text, format=format))
