"""The regression harness (issue #13): recorded answers against today's engine."""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner
from helpers import FIXTURES, fixture_json, harrow_party

import tagparse
from engine import load_ruleset
from replay.cli import main
from replay.record import read_source, record
from replay.regress import Difference, regress

RULESET = fixture_json("rulesets/harrow.json")
GAME = load_ruleset(RULESET)
PARTY = str(FIXTURES / "parties/harrow.json")

# Amounts name crowns only as "1 crown" (the coin's `one`), so renaming the plural label changes
# exactly the answers whose text or record shows "crowns".
GM_REPLIES = [
    'The ferryman wants his fare. [inventory: action="pay" amount="3 shillings" who="Ada"]',
    'Bram finds a purse. [inventory: action="earn" amount="2 shillings" who="Bram the Quiet"]',
    'A lucky find. [inventory: action="earn" amount="1 crown" who="Ada"]',
    'Ada pays the smith. [inventory: action="pay" amount="2 pennies" who="Ada"]',
    'Rope for the road. [inventory: action="add" item="Rope" who="Bram the Quiet"]',
    'Ada buys a cloak. [inventory: action="pay" amount="70 pennies" who="Ada"]',
    'Bram pays a toll. [inventory: action="pay" amount="1 shilling" who="Bram the Quiet"]',
    'A gift. [inventory: action="earn" amount="5 crown" who="Bram the Quiet"]',
]


def chat_text() -> str:
    lines = []
    for reply in GM_REPLIES:
        lines += [{"role": "player", "name": "Ada", "text": "Go on."}, {"role": "gm", "text": reply}]
    return "\n".join(json.dumps(line, ensure_ascii=False) for line in lines)


def recorded_source():
    data = record(GAME, read_source(chat_text().encode()), harrow_party(GAME)).data
    return read_source(data)


def with_crown_label(label: str):
    document = json.loads(json.dumps(RULESET))
    for unit in document["items"]["currencies"][0]["units"]:
        if unit["id"] == "crown":
            unit["label"] = label
    return load_ruleset(document)


def test_record_then_regress_is_clean():
    report = regress("chat", GAME, recorded_source(), harrow_party(GAME))
    assert report.answers == len(GM_REPLIES)
    assert report.differences == [] and report.unanswered == [] and not report.failed(strict=True)


def test_changing_a_coin_label_reports_exactly_the_answers_that_show_it():
    source = recorded_source()
    mentions = set()
    for index, (_, _, message) in enumerate(source.transcript.messages()):
        for tag in tagparse.scan(message.text).tags:
            if message.role == "gm" and any("crowns" in v for _, v in tag.answer or ()):
                mentions.add(index)
    assert len(mentions) >= 3  # the test means something: several answers show the label
    renamed = with_crown_label("marks")
    report = regress("chat", renamed, source, harrow_party(renamed))
    assert {d.message for d in report.differences} == mentions
    for difference in report.differences:
        for _key, before, after in difference.changes():
            assert "crowns" in (before or "") and after == (before or "").replace("crowns", "marks")


def test_difference_reads_as_a_diff():
    difference = Difference(3, 4, '[inventory: action="pay" amount="3 shillings"]',
                            (("ok", "true"), ("text", "Paid with crowns ×1."), ("who", "Ada")),
                            (("ok", "true"), ("text", "Paid with marks ×1."), ("paid", "x")))
    assert difference.diff_lines() == [
        "- text: Paid with crowns ×1.", "+ text: Paid with marks ×1.", "- who: Ada", "+ paid: x"]
    assert difference.to_json()["changed"] == ["text", "who", "paid"]


def test_unanswered_tags_are_reported_but_not_differences_unless_strict():
    source = read_source(chat_text().encode())
    report = regress("chat", GAME, source, harrow_party(GAME))
    assert report.answers == 0 and len(report.unanswered) == len(GM_REPLIES)
    assert not report.failed() and report.failed(strict=True)


def write_corpus(tmp_path: Path) -> Path:
    data = record(GAME, read_source(chat_text().encode()), harrow_party(GAME)).data
    (tmp_path / "coins.jsonl").write_bytes(data)
    ruleset = tmp_path / "ruleset.json"
    ruleset.write_text(json.dumps(RULESET), encoding="utf-8")
    index = {"chats": {"coins.jsonl": {"ruleset": "ruleset.json", "party": PARTY}}}
    (tmp_path / "index.json").write_text(json.dumps(index), encoding="utf-8")
    return ruleset


def test_regress_command_exit_codes_and_update(tmp_path):
    runner = CliRunner()
    ruleset = write_corpus(tmp_path)
    clean = runner.invoke(main, ["regress", str(tmp_path)])
    assert clean.exit_code == 0, clean.output
    assert "0 differences" in clean.output
    document = json.loads(ruleset.read_text())
    document["items"]["currencies"][0]["units"][2]["label"] = "marks"
    ruleset.write_text(json.dumps(document), encoding="utf-8")
    found = runner.invoke(main, ["regress", str(tmp_path), "--format", "json"])
    assert found.exit_code == 1
    report = json.loads(found.output)
    assert report["differences"] >= 3
    assert all(d["changed"] == ["text"] or "amount" in d["changed"] or "name" in d["changed"]
               for d in report["chats"][0]["differences"])
    text = runner.invoke(main, ["regress", str(tmp_path / "coins.jsonl")])
    assert text.exit_code == 1 and "- text: " in text.output and "+ text: " in text.output
    updated = runner.invoke(main, ["regress", str(tmp_path), "--update"])
    assert updated.exit_code == 0 and "re-recorded" in updated.output
    assert runner.invoke(main, ["regress", str(tmp_path)]).exit_code == 0


def test_regress_with_ruleset_option_and_unreadable_inputs(tmp_path):
    runner = CliRunner()
    write_corpus(tmp_path)
    chat = str(tmp_path / "coins.jsonl")
    ruleset = str(FIXTURES / "rulesets/harrow.json")
    assert runner.invoke(main, ["regress", chat, "-r", ruleset, "-p", PARTY]).exit_code == 0
    assert runner.invoke(main, ["regress", str(tmp_path / "missing.jsonl"), "-r", ruleset]
                         ).exit_code == 2
    (tmp_path / "bad.jsonl").write_text("not a chat", encoding="utf-8")
    assert runner.invoke(main, ["regress", str(tmp_path / "bad.jsonl"), "-r", ruleset]
                         ).exit_code == 2
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    (lonely / "chat.jsonl").write_text('{"role": "gm", "text": "hi"}', encoding="utf-8")
    assert runner.invoke(main, ["regress", str(lonely)]).exit_code == 2  # no index, no ruleset
    assert runner.invoke(main, ["regress", str(lonely), "-r", ruleset]).exit_code == 0


def test_record_and_export_state_commands(tmp_path):
    runner = CliRunner()
    ruleset = str(FIXTURES / "rulesets/harrow.json")
    chat = tmp_path / "chat.jsonl"
    chat.write_text(chat_text(), encoding="utf-8")
    out = tmp_path / "recorded.jsonl"
    result = runner.invoke(main, ["record", str(chat), "-r", ruleset, "-p", PARTY, "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert runner.invoke(main, ["regress", str(out), "-r", ruleset, "-p", PARTY]).exit_code == 0
    state_path = tmp_path / "state.json"
    result = runner.invoke(main, ["export-state", str(out), "-r", ruleset, "-p", PARTY,
                                  "-o", str(state_path)])
    assert result.exit_code == 0, result.output
    state = json.loads(state_path.read_text(encoding="utf-8"))
    assert state["format"] == "gmtags-state/2"
    # The exported state is a party for the next session: replaying nothing keeps it.
    empty = tmp_path / "next.jsonl"
    empty.write_text('{"role": "player", "text": "Next session."}', encoding="utf-8")
    again = runner.invoke(main, ["export-state", str(empty), "-r", ruleset, "-p", str(state_path)])
    assert again.exit_code == 0 and json.loads(again.output) == state
    assert runner.invoke(main, ["record", str(tmp_path / "nope"), "-r", ruleset]).exit_code == 2


def test_regress_html_shows_each_difference_side_by_side(tmp_path):
    runner = CliRunner()
    ruleset = write_corpus(tmp_path)
    document = json.loads(ruleset.read_text())
    document["items"]["currencies"][0]["units"][2]["label"] = "marks"
    ruleset.write_text(json.dumps(document), encoding="utf-8")
    page = tmp_path / "diff.html"
    result = runner.invoke(main, ["regress", str(tmp_path), "--html", str(page)])
    assert result.exit_code == 1
    html = page.read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") or html.lower().startswith("<!doctype html>")
    assert "marks" in html and "crowns" in html
    assert "http://" not in html and "https://" not in html


def test_update_re_records_an_older_recording_in_the_compact_form(tmp_path):
    """Issue 28: a recording whose answer parts carry the whole record regresses clean and
    ``--update`` rewrites it with compact answer parts; an up-to-date one is left alone."""
    from engine import every_answer_attr
    from replay import replay as fold

    runner = CliRunner()
    write_corpus(tmp_path)
    path = tmp_path / "coins.jsonl"
    compact = path.read_bytes()
    source = read_source(compact)
    answers = iter(fold(GAME, source.transcript, harrow_party(GAME)).answers)
    lines = []
    for line in compact.decode().splitlines():
        message = json.loads(line)
        if message["role"] == "gm":
            (tag,) = tagparse.scan(message["text"]).tags
            full = tagparse.render(tag.kind, tag.attrs, every_answer_attr(next(answers).answer))
            message["text"] = message["text"][:tag.start] + full + message["text"][tag.end:]
        lines.append(json.dumps(message, ensure_ascii=False))
    path.write_text("\n".join(lines), encoding="utf-8")
    assert b'amount=\\"3 shillings\\" paid=' in path.read_bytes()
    assert runner.invoke(main, ["regress", str(tmp_path), "--strict"]).exit_code == 0
    updated = runner.invoke(main, ["regress", str(tmp_path), "--update"])
    assert updated.exit_code == 0 and f"{path}: re-recorded" in updated.output
    assert path.read_bytes() == compact
    again = runner.invoke(main, ["regress", str(tmp_path), "--update"])
    assert again.exit_code == 0 and "re-recorded" not in again.output
