"""Recording chats (issue #13): answered tags inline, the source format kept byte for byte."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers import FIXTURES, harrow, harrow_party

import tagparse
from engine import answer_attrs
from replay import parse_transcript, replay
from replay.formats import write_gmtags, write_openai, write_sillytavern
from replay.formats.write_json import Edit, MessageEdits, item, member, splice
from replay.record import read_source, record
from replay.regress import regress

GAME = harrow()
DATA = Path(__file__).parent / "data"
PAY = '[inventory: action="pay" amount="3 shillings" who="Ada"]'
ADD = '[inventory: action="add" item="Torch" who="Bram the Quiet"]'

ST_HEADER = {"user_name": "Ada", "character_name": "Seraphina", "create_date": "2024-7-4@15h12m03s",
             "chat_metadata": {"note_prompt": "", "integrity": "f00", "tainted": True}}


def st_line(value: dict) -> str:
    """A line as SillyTavern writes it: JSON.stringify, compact, non-ASCII unescaped."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def st_chat() -> str:
    gm_text = f"A weaver sells you a coil — “fine hemp”. {PAY} Bram takes a torch. {ADD}"
    lines = [
        ST_HEADER,
        {"name": "Seraphina", "is_user": False, "is_system": False, "send_date": "July 4, 2024 3:12pm",
         "mes": "The road bends toward Millbrook.", "extra": {}, "swipe_id": 0,
         "swipes": ["The road bends toward Millbrook."], "swipe_info": [{"extra": {}}]},
        {"name": "Ada", "is_user": True, "is_system": False, "send_date": 1720106100000,
         "mes": f"I buy rope. {PAY}", "extra": {"isSmallSys": False}, "force_avatar": "ada.png"},
        {"name": "Seraphina", "is_user": False, "is_system": False,
         "send_date": "2024-07-04T15:13:40.512Z", "mes": gm_text,
         "extra": {"api": "openai", "model": "gpt-4o", "token_count": 41.0},
         "swipe_id": 1, "swipes": [f"No rope today. {ADD}", gm_text, "Try the chandler."],
         "swipe_info": [{"send_date": "a", "extra": {"gen_id": 1.5e3}}, {}, {}],
         "gen_started": "2024-07-04T15:13:38.000Z"},
        {"name": "Seraphina", "is_user": False, "is_system": True, "send_date": "x",
         "mes": f"(hidden) {ADD}", "extra": {}},
    ]
    return "\n".join(st_line(line) for line in lines)


def recorded(text: str, party=None) -> bytes:
    source = read_source(text.encode("utf-8"))
    return record(GAME, source, party or harrow_party(GAME)).data


def strip_answers(text: str) -> str:
    """The text with every answered tag written back without its answer part."""
    parts, at = [], 0
    for tag in tagparse.scan(text).tags:
        parts += (text[at:tag.start], tagparse.render(tag.kind, tag.attrs))
        at = tag.end
    return "".join(parts) + text[at:]


def test_sillytavern_survives_record_byte_identical_outside_the_answered_tags():
    original = st_chat()
    out = recorded(original).decode("utf-8")
    before, after = original.split("\n"), out.split("\n")
    assert len(before) == len(after)
    changed = [i for i, (b, a) in enumerate(zip(before, after, strict=True)) if b != a]
    assert changed == [3]  # header, player tags, other messages and the hidden one untouched
    line_before, line_after = before[3], after[3]
    # Put the original mes and shown swipe back: the rest of the line is the same bytes.
    mes_b, mes_a = member(line_before, 0, "mes"), member(line_after, 0, "mes")
    sw_b = item(line_before, member(line_before, 0, "swipes")[0], 1)
    sw_a = item(line_after, member(line_after, 0, "swipes")[0], 1)
    restored = (line_after[:mes_a[0]] + line_before[mes_b[0]:mes_b[1]]
                + line_after[mes_a[1]:sw_a[0]] + line_before[sw_b[0]:sw_b[1]] + line_after[sw_a[1]:])
    assert restored == line_before
    # Inside mes only the tags changed, and they gained their answers.
    mes = json.loads(line_after)["mes"]
    assert strip_answers(mes) == json.loads(line_before)["mes"]
    assert json.loads(line_after)["swipes"][1] == mes
    assert json.loads(line_after)["swipes"][0] == json.loads(line_before)["swipes"][0]
    tags = tagparse.scan(mes).tags
    assert [dict(t.answer or ())["ok"] for t in tags] == ["true", "true"]
    assert "“fine hemp”" in line_after  # non-ASCII stays unescaped, as SillyTavern writes it


def test_record_then_regress_is_clean_in_every_format(tmp_path):
    for name in ("ada_two_sessions.jsonl", "seraphina_market.jsonl", "request_body.json"):
        source = read_source((DATA / name).read_bytes(), name)
        data = record(GAME, source, harrow_party(GAME)).data
        again = read_source(data, name)
        assert again.transcript.format == source.transcript.format
        report = regress(name, GAME, again, harrow_party(GAME))
        assert report.differences == [] and report.error is None, name
        assert report.unanswered == [], name
        # Recording a recorded chat changes nothing.
        assert record(GAME, again, harrow_party(GAME)).data == data


def test_demo_record_answers_every_visible_tag_and_keeps_the_rest():
    original = (FIXTURES / "chats/demo.jsonl").read_text(encoding="utf-8")
    out = recorded(original).decode("utf-8")
    before = parse_transcript(original)
    after = parse_transcript(out)
    for (_, _, b), (_, _, a) in zip(before.messages(), after.messages(), strict=True):
        visible_gm = b.role == "gm" and not b.hidden
        if not visible_gm:
            assert a == b
            continue
        assert a.model_copy(update={"text": b.text, "swipes": b.swipes}) == b
        for tag in tagparse.scan(a.text).tags:
            assert tag.answer is not None or tag.malformed is not None
        if b.swipes:  # the other swipes keep their unanswered tags
            others = [s for i, s in enumerate(a.swipes or ()) if i != a.swipe]
            assert others == [s for i, s in enumerate(b.swipes) if i != b.swipe]


def test_record_writes_the_engine_answer_in_place_of_one_the_model_wrote():
    text = json.dumps({"role": "gm", "text": f'Coins! {PAY[:-1]} | ok="true" text="Paid nothing."]'})
    out = recorded(text).decode("utf-8")
    tag = tagparse.scan(json.loads(out)["text"]).tags[0]
    state = harrow_party(GAME)
    now = replay(GAME, parse_transcript(text), state).answers[0].answer
    assert tag.answer == tuple(answer_attrs(now))
    assert dict(tag.answer)["text"] != "Paid nothing."


def test_record_keeps_the_model_attribute_order_and_quotes_canonically():
    text = json.dumps({"role": "gm", "text": "[Inventory: who=“Ada” ITEM='Torch' action=add]"})
    out = json.loads(recorded(text).decode("utf-8"))["text"]
    assert out.startswith('[inventory: who="Ada" item="Torch" action="add" | ok="true" ')


def test_malformed_tags_keep_their_raw_text():
    text = json.dumps({"role": "gm", "text": 'Oops [inventory: action="add" item=] done'})
    assert recorded(text).decode("utf-8") == text


def test_a_chat_without_visible_tags_is_written_back_unchanged():
    text = "\ufeff" + json.dumps({"role": "player", "text": f"I pay. {PAY}"}) + "\r\n"
    data = text.encode("utf-8")
    source = read_source(data)
    assert record(GAME, source, harrow_party(GAME)).data == data


def test_gmtags_bom_and_crlf_survive_record():
    text = "\ufeff" + json.dumps({"role": "gm", "text": f"Here. {ADD}"}) + "\r\n"
    out = record(GAME, read_source(text.encode("utf-8")), harrow_party(GAME)).data
    assert out.startswith(b"\xef\xbb\xbf") and out.endswith(b"\r\n")


def test_openai_request_body_keeps_its_layout_and_other_keys():
    original = (DATA / "request_body.json").read_text(encoding="utf-8")
    body = json.loads(original)
    body["messages"].append({"role": "assistant", "content": f"Sold. {PAY}"})
    text = json.dumps(body, indent=2, ensure_ascii=False)
    out = recorded(text).decode("utf-8")
    after = json.loads(out)
    assert {k: v for k, v in after.items() if k != "messages"} == {
        k: v for k, v in body.items() if k != "messages"}
    assert after["messages"][:-1][:2] == body["messages"][:2]
    assert strip_answers(after["messages"][-1]["content"]) == body["messages"][-1]["content"]
    # Content parts: the tag in the second text part is answered there.
    parts = after["messages"][2]["content"]
    assert parts[0] == body["messages"][2]["content"][0]
    assert tagparse.scan(parts[1]["text"]).tags[0].answer is not None
    assert out.count("\n") == text.count("\n")


@pytest.mark.parametrize("token, edits, expected", [
    ('"ab[x]cd"', [Edit(2, 5, "[y | z]")], '"ab[y | z]cd"'),
    ('"\\u00e9[x]"', [Edit(1, 4, "ü")], '"\\u00e9\\u00fc"'),  # an ensure_ascii writer stays ASCII
    ('"é\\n[x]"', [Edit(2, 5, 'a"b')], '"é\\na\\"b"'),
    ('"\\ud83d\\ude00[x]!"', [Edit(1, 4, "[]")], '"\\ud83d\\ude00[]!"'),
])
def test_splice_replaces_only_the_span(token, edits, expected):
    assert splice(token, edits) == expected
    assert json.loads(expected) == json.loads(token)[:edits[0].start] + edits[0].replacement + \
        json.loads(token)[edits[0].end:]


def test_writers_leave_lines_they_cannot_read_alone():
    change = MessageEdits("x [a]", (Edit(2, 5, "[b]"),))
    assert write_gmtags.write('{"text": 5}\nnot json', {1: change, 2: change, 9: change}) == \
        '{"text": 5}\nnot json'
    assert write_sillytavern.write('{"mes": "other"}', {1: change}) == '{"mes": "other"}'
    assert write_openai.write("[1, 2", {1: change}) == "[1, 2"
    assert write_openai.write('{"model": "m"}', {1: change}) == '{"model": "m"}'


# --- compact answer parts (issue 28) ----------------------------------------------------------

LOOT_AND_CHECK = ('A cache. [loot: table="mill_cache"] Ada climbs. '
                  '[skill_check: skill="climb" dc="9" who="Bram the Quiet"] '
                  '[inventory: action="pay" amount="3 shillings" who="Ada"] '
                  '[inventory: action="remove" item="Longbow"]')


def _recorded_tags(text: str) -> list[tagparse.Tag]:
    out = recorded(json.dumps({"role": "gm", "text": text})).decode("utf-8")
    return list(tagparse.scan(json.loads(out)["text"]).tags)


def test_an_answer_part_carries_ok_text_and_a_few_scalars_never_json_or_null():
    loot, check, pay, remove = _recorded_tags(LOOT_AND_CHECK)
    assert [key for key, _ in loot.answer or ()] == ["ok", "text"]
    assert [key for key, _ in check.answer or ()] == ["ok", "text", "success"]
    assert [key for key, _ in pay.answer or ()] == ["ok", "text"]
    assert dict(remove.answer or ()) == {"ok": "false", "reason": "not-held",
                                         "text": "Ada has no Longbow."}
    for tag in (loot, check, pay, remove):
        for _, value in tag.answer or ():
            assert value != "null" and not value.startswith(("{", "["))


def test_the_whole_record_stays_in_the_replay_json():
    chat = parse_transcript(json.dumps({"role": "gm", "text": LOOT_AND_CHECK}))
    loot = replay(GAME, chat, harrow_party(GAME)).to_json()["answers"][0]
    assert {"table", "draws", "drops"} <= set(loot["record"])


def _old_style(text: str) -> str:
    """``text`` recorded as gmtags recorded chats before issue 28: every record key inline."""
    from engine import every_answer_attr

    chat = parse_transcript(json.dumps({"role": "gm", "text": text}))
    answers = [a.answer for a in replay(GAME, chat, harrow_party(GAME)).answers]
    tags = tagparse.scan(text).tags
    pieces, at = [], 0
    for tag, answer in zip(tags, answers, strict=True):
        pieces += [text[at:tag.start], tagparse.render(tag.kind, tag.attrs,
                                                       every_answer_attr(answer))]
        at = tag.end
    return "".join(pieces) + text[at:]


def test_regress_still_reads_a_recording_made_before_compact_answers():
    """An old recording's answer parts carry the whole record (JSON, nulls): every attribute
    it has is compared, so it regresses clean, and a change in a value only the record
    holds is still found there."""
    old = _old_style(LOOT_AND_CHECK)
    assert 'coin="null"' in old or "draws=" in old
    line = json.dumps({"role": "gm", "text": old})
    clean = regress("old", GAME, read_source(line.encode()), harrow_party(GAME))
    assert clean.answers == 4 and clean.differences == []
    changed = line.replace('table=\\"mill_cache\\" rolls=', 'table=\\"other\\" rolls=', 1)
    assert changed != line
    report = regress("old", GAME, read_source(changed.encode()), harrow_party(GAME))
    assert [d.changes() for d in report.differences] == [[("table", "other", "mill_cache")]]


def test_regress_compares_every_attribute_of_a_compact_recording_and_only_those():
    data = recorded(json.dumps({"role": "gm", "text": LOOT_AND_CHECK}))
    assert regress("new", GAME, read_source(data), harrow_party(GAME)).differences == []
    lost = data.replace(b'success=\\"', b'success=\\"x', 1)
    report = regress("new", GAME, read_source(lost), harrow_party(GAME))
    (difference,) = report.differences
    (change,) = difference.changes()
    assert change[0] == "success" and change[1] in ("xtrue", "xfalse") and change[2] == change[1][1:]
    assert [key for key, _ in difference.now] == [key for key, _ in difference.recorded]


def test_regress_reports_a_recorded_attribute_the_engine_no_longer_gives():
    data = recorded(json.dumps({"role": "gm", "text": PAY}))
    extra = data.replace(b' | ok=\\"true\\"', b' | ok=\\"true\\" paid_in=\\"gold\\"', 1)
    (difference,) = regress("x", GAME, read_source(extra), harrow_party(GAME)).differences
    assert difference.changes() == [("paid_in", "gold", None)]
    assert difference.diff_lines() == ["- paid_in: gold"]


def test_regress_reads_record_keys_and_fractions_as_recordings_wrote_them_before_camel_case():
    """A recording carrying the whole record from before one spelling (``gate_total``,
    ``multiplier="7/5"``) compares with today's ``gateTotal`` and ``{"num": 7, "den": 5}``."""
    from replay.regress import today_form

    assert today_form((("gate_total", "9"), ("multiplier", "7/5"), ("blow", "10"),
                      ("paid_in", "x"), ("text", "1/2"))) == (
        ("gatetotal", "9"), ("multiplier", '{"den":5,"num":7}'),
        ("blow", '{"den":1,"num":10}'),
        ("paid_in", "x"), ("text", "1/2"))
