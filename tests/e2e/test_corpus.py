"""The recorded corpus (fixtures/chats/corpus): ``gmtags regress`` over it is clean.

When the engine's answers change on purpose this test fails: run
``gmtags regress fixtures/chats/corpus``, read the differences, then add ``--update``.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from helpers import FIXTURES

from replay import read_transcript

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
