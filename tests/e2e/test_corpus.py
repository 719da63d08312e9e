"""The recorded corpus (fixtures/chats/corpus): ``gmtags regress`` over it is clean.

When the engine's answers change on purpose this test fails: run
``gmtags regress fixtures/chats/corpus``, read the differences, then add ``--update``.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType

from helpers import FIXTURES, ROOT, key_problems

import tagparse
from replay import load_party, load_ruleset, read_transcript, replay
from replay.record import read_source

GMTAGS = shutil.which("gmtags", path=str(Path(sys.executable).parent)) or "gmtags"
CORPUS = FIXTURES / "chats/corpus"


def index() -> dict[str, dict[str, str]]:
    return json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))["chats"]


def test_regress_over_the_whole_corpus_is_clean():
    result = subprocess.run([GMTAGS, "regress", str(CORPUS), "--strict", "--format", "json"],
                            capture_output=True, text=True, timeout=300, check=False)
    report = json.loads(result.stdout)
    problems = [(c["chat"], d["message"], d["tag"], d["changed"])
                for c in report["chats"] for d in c["differences"]]
    assert result.returncode == 0, (problems[:10], result.stderr[-2000:])
    assert report["differences"] == 0 and report["unanswered"] == 0 and report["errors"] == 0
    assert key_problems(report) == []
    assert len(report["chats"]) == len(index()) >= 12
    assert report["answers"] >= 1000


def test_the_corpus_has_what_real_games_have():
    chats = {name: read_transcript(CORPUS / name) for name in index()}
    formats = {t.format for t in chats.values()}
    assert formats == {"gmtags", "sillytavern", "openai"}
    long = [n for n, t in chats.items() if sum(m.role == "player" for _, _, m in t.messages()) > 200]
    assert len(long) >= 3
    assert sum(len(t.sessions) > 1 for t in chats.values()) >= 3
    messages = [m for t in chats.values() for _, _, m in t.messages()]
    assert sum(m.swipes is not None and len(m.swipes) > 1 for m in messages) >= 20
    assert sum(m.hidden and m.role == "gm" for m in messages) >= 20
    texts = "\n".join(m.text for m in messages if m.role == "gm")
    for mistake in ("“", "[Inventory:", "ok=", "rolls=", 'item=]', "Strange idol"):
        assert mistake in texts, mistake
    codes = {d.code for t in chats.values() for d in t.diagnostics}
    assert "mes-differs-from-swipe" in codes  # edits SillyTavern did not copy into the swipe
    for entry in index().values():
        assert (CORPUS / entry["ruleset"]).is_file()
        assert (CORPUS / entry["party"]).is_file()


def test_the_srd5_fights_have_what_the_issue_asks():
    """Issue 24: a recorded srd5 fight of 60+ rounds with several foes, a late joiner
    (CMB-TURN-5), conditions counted down or saved against at a round's end (CMB-COND-3..6),
    a critical (CMB-ATK-A4), a downed hero (CMB-TURN-8) stood up by a potion (ITM-OUT-3),
    victory with loot (ITM-LOOT-12), a fight fled, and the model's mistakes refused."""
    name = "srd5-fights.jsonl"
    entry = index()[name]
    game = load_ruleset(CORPUS / entry["ruleset"])
    transcript = read_transcript(CORPUS / name)
    result = replay(game, transcript, load_party(game, CORPUS / entry["party"]))
    answers = [a.answer for a in result.answers]
    fights = [a for a in answers if a.tag.kind in ("attack", "combat")]
    records = [a.record for a in fights if a.ok]
    events = [e for r in records for e in r.get("events") or []]
    rounds = {(a.message) for a in result.answers
              if a.answer.ok and a.answer.tag.kind == "attack"}
    assert len(rounds) >= 60  # a reply with an answered attack is a round
    assert sum(r.get("result") == "critical" for r in records) >= 1
    assert any(e.startswith("down:") for e in events)
    assert any(e.startswith("felled:") for e in events)
    assert "end:defeat" not in events
    won = [r for r in records if "end:victory" in (r.get("events") or [])]
    assert won and all(r.get("loot") for r in won)
    assert any(r.get("outcome") == "fled" and not r.get("loot") for r in records)
    assert any(a.ok and a.tag.attrs.get("op") == "join" for a in fights)
    ended = [e for r in records for e in r.get("roundEnd") or []]
    assert any(e.get("save") for e in ended) and any(e.get("rounds") == 0 for e in ended)
    healed = [a for a in answers if a.ok and a.tag.attrs.get("action") == "use"
              and a.record.get("healed")]
    downed = {e.split(":", 1)[1] for e in events if e.startswith("down:")}
    assert {a.record["who"] for a in healed} & downed
    refused = {a.reason for a in fights if not a.ok}
    assert {"unknown-combatant", "no-time", "target-down", "downed", "not-worn",
            "unknown-weapon", "cannot-act", "no-encounter"} <= refused
    assert any("ignored \"hit\"" in note for a in fights for note in a.notes)
    messages = [m for _, _, m in transcript.messages()]
    attack_swipes = [m for m in messages if m.swipes and "[attack:" in m.text]
    assert any(m.swipe == len(m.swipes) - 1 for m in attack_swipes)  # a regeneration
    assert any(m.swipe == 0 for m in attack_swipes)
    assert sum(m.new_session for m in messages) == 1


def _benchmark() -> ModuleType:
    """benchmarks/answers.py, whose figures the issue-28 goal is stated in."""
    spec = importlib.util.spec_from_file_location("answers_benchmark",
                                                  ROOT / "benchmarks/answers.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_recorded_answer_parts_are_compact():
    """Issue 28: each earlier answered tag is sent back to the model on every turn, so over the
    recorded corpus the answer part is at most 1.2 times the request (median) and never over
    400 characters — for every tag but the fights', which the benchmark measures on their own
    (benchmarks/answers.py FIGHT_KINDS) — and no answer value is JSON or null."""
    benchmark = _benchmark()
    parts = []
    for name in index():
        source = read_source((CORPUS / name).read_bytes(), name)
        parts += benchmark.answered_parts(source)
        for _, _, message in source.transcript.messages():
            for tag in tagparse.scan(message.text).tags if message.role == "gm" else ():
                for _, value in tag.answer or ():
                    assert value != "null" and not value.startswith(("{", "[")), (name, tag.raw)
    ratio, longest = benchmark.figures(benchmark.goal_parts(parts))
    assert len(benchmark.goal_parts(parts)) >= 1000
    assert ratio <= benchmark.MOST_RATIO and longest <= benchmark.MOST_LENGTH


def _sillytavern_regex() -> re.Pattern[str]:
    """The regex README.md gives for SillyTavern's Regex extension (JavaScript syntax; the
    same in Python for what it uses)."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"Regex\*\* extension script that matches\s+`([^`]+)`", readme)
    assert found is not None
    return re.compile(found.group(1))


def test_the_readme_sillytavern_regex_hides_every_answered_tag_whole():
    """Every answered tag of the recorded corpus is matched from its "[" to its "]", and
    nothing after it; also with "]", "\\]" and "|" inside an answer value."""
    hide = _sillytavern_regex()
    hidden = 0
    for name in index():
        for _, _, message in read_transcript(CORPUS / name).messages():
            for tag in tagparse.scan(message.text).tags if message.role == "gm" else ():
                if tag.malformed is None and tag.answer is not None:
                    found = hide.match(message.text, tag.start)
                    assert found is not None and found.end() == tag.end, (name, tag.raw)
                    hidden += 1
    assert hidden >= 1000
    text = ('Go. [inventory: action="add" item="Rope" | ok="false" text="a ] b \\] c | \\"d\\""]'
            " and ] more")
    found = hide.search(text)
    assert found is not None and found.group(0) == text[4:text.index(" and ]")]
