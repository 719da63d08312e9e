"""The HTML replay report (issue #16), without a browser: what the page embeds and how.

The page's script rebuilds each turn's bags from per-message diffs; ``rebuild`` below applies
the same rules as that script (``apply`` in ``replay/report.py``), so these tests pin the diff
format against the engine's own states. The browser tests (tests/e2e/test_report_browser.py)
check that the page shows them.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import FIXTURES, key_problems

import replay
from engine import Answer, State
from engine.actions.answers import TagRef
from replay.cli import main
from replay.fold import MessageAnswer, ReplayResult
from replay.regress import Difference
from replay.report import (
    REPORT_FORMAT,
    render_regress_html,
    render_report,
    report_document,
    report_html,
    stack_label,
)
from replay.report import _checks as checks_of

RULESET = FIXTURES / "rulesets/harrow.json"
PARTY = FIXTURES / "parties/harrow.json"
DEMO = FIXTURES / "chats/demo.jsonl"
LONG_ROAD = FIXTURES / "chats/corpus/harrow-long-road.jsonl"
GAME = replay.load_ruleset(RULESET)
DATA = re.compile(r'<script type="application/json" id="report-data">(.*?)</script>', re.S)


def demo(chat: Path = DEMO) -> tuple[replay.Transcript, State]:
    transcript = replay.read_transcript(chat)
    return transcript, replay.load_party(GAME, PARTY, transcript.player_name)


def embedded(page: str) -> dict[str, Any]:
    found = DATA.findall(page)
    assert len(found) == 1
    return json.loads(found[0])


def engine_states(chat: Path) -> dict[int, State]:
    transcript, state = demo(chat)
    states: dict[int, State] = {}
    replay.replay(GAME, transcript, state, on_message=states.__setitem__)
    return states


def rebuild(document: dict[str, Any]) -> list[list[list[tuple[str, int]]]]:
    """Per message, per character, the bag the page shows: the page script's rules."""
    bags: list[dict[str, Any]] = [{"order": [], "counts": {}} for _ in document["characters"]]

    def apply(delta: dict[str, Any] | None) -> None:
        for key, change in (delta or {}).get("b", {}).items():
            bag = bags[int(key)]
            for stack, count in change["s"]:
                if count == 0:
                    bag["counts"].pop(stack, None)
                    continue
                if stack not in bag["counts"]:
                    bag["order"].append(stack)
                bag["counts"][stack] = count
            bag["order"] = (list(change["o"]) if "o" in change
                            else [s for s in bag["order"] if s in bag["counts"]])

    apply(document["start"])
    shown = []
    for message in document["messages"]:
        apply(message.get("d"))
        shown.append([[(document["stacks"][s][0], bag["counts"][s]) for s in bag["order"]]
                      for bag in bags])
    return shown


# The page is self-contained ------------------------------------------------------------------


def test_report_is_one_self_contained_file():
    page = report_html(GAME, *demo())
    assert page.startswith("<!DOCTYPE html>")
    # Nothing to fetch: no src/href at all, no link or import, and a policy that forbids fetches.
    assert not re.search(r"\b(src|href)\s*=", page, re.I)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    assert not re.search(r"https?:", DATA.sub("", page)) and "//" not in "".join(
        re.findall(r"""(?:src|href|action)\s*=\s*["'][^"']*""", page))
    assert "default-src 'none'" in page
    assert page.count("<script") == 2 and page.count("<style>") == 1


def test_report_embeds_the_document_as_json():
    transcript, state = demo()
    page = report_html(GAME, transcript, state, title="demo")
    assert embedded(page) == json.loads(json.dumps(report_document(GAME, transcript, state,
                                                                   "demo")))
    assert embedded(page)["format"] == REPORT_FORMAT


@pytest.mark.parametrize("chat, ruleset, party", [
    ("harrow-long-road.jsonl", "harrow", "harrow"), ("srd5-fights.jsonl", "srd5", "srd5"),
    ("against-d100-fights.jsonl", "against-d100-fight", "against-d100-fight")])
def test_the_reports_data_spells_every_key_camel_case(chat: str, ruleset: str,
                                                     party: str) -> None:
    """README "The JSON gmtags writes": the report's data too (its per-character changes are
    maps by character index, data like a character's skills)."""
    game = replay.load_ruleset(FIXTURES / f"rulesets/{ruleset}.json")
    transcript = replay.read_transcript(FIXTURES / "chats/corpus" / chat)
    document = report_document(game, transcript,
                               replay.load_party(game, FIXTURES / f"parties/{party}.json"))
    assert key_problems(document) == []


def test_report_is_deterministic():
    assert report_html(GAME, *demo()) == report_html(GAME, *demo())


def test_report_command_is_identical_under_different_hash_seeds(tmp_path):
    gmtags = str(Path(sys.executable).parent / "gmtags")
    pages = []
    for seed in ("1", "4242"):
        out = tmp_path / f"report-{seed}.html"
        result = subprocess.run([gmtags, "report", str(DEMO), "-r", str(RULESET), "-p",
                                 str(PARTY), "-o", str(out)], capture_output=True, text=True,
                                env={**os.environ, "PYTHONHASHSEED": seed}, timeout=120,
                                check=False)
        assert result.returncode == 0, result.stderr
        pages.append(out.read_bytes())
    assert pages[0] == pages[1]


@pytest.mark.parametrize("hostile", [
    "</script><script>alert(1)</script>",
    "<!-- <script> -->",
    "</SCRIPT >&amp;\u2028\u2029",
    '<img src="https://example.invalid/x.png">',
])
def test_chat_text_cannot_break_out_of_the_data_block(hostile):
    transcript = replay.parse_transcript(
        json.dumps({"role": "gm", "text": f"{hostile} [inventory: action=\"add\" item=\"Rope\"]"}),
        name="hostile.jsonl")
    state = replay.load_party(GAME, PARTY, transcript.player_name)
    page = report_html(GAME, transcript, state, title=hostile)
    assert page.count("</script>") == 2  # the data block's and the script's own
    assert "<img" not in page and "<script>alert" not in page
    document = embedded(page)
    assert document["messages"][0]["t"].startswith(hostile)
    assert document["title"] == hostile


# What the page shows --------------------------------------------------------------------------


def test_each_message_keeps_its_text_answers_and_diagnostics():
    document = report_document(GAME, *demo())
    messages = document["messages"]
    assert [m["r"] for m in messages][:3] == ["system", "player", "gm"]
    # The unselected swipe is kept for "on demand"; the selected one is the text.
    assert messages[2]["w"] == [[0, 'The millstone is bare. [inventory: action="add" '
                                    'item="Silver lantern"]']]
    assert [a["k"] for a in messages[2]["a"]] == ["inventory add", "inventory add"]
    assert messages[2]["a"][0]["x"] == "Added Torch ×2 to Ada's bag."
    # Repairs go to the answer of the tag they were made in (issue 29: one badge per tag);
    # refusals keep their reason code and sentence.
    assert [[code for code, _ in a.get("r", [])] for a in messages[4]["a"]] == [
        ["curly-quotes"] * 4, ["upper-case-name", *["single-quotes"] * 3]]
    assert "g" not in messages[4]
    malformed = next(a for a in messages[7]["a"] if a.get("why") == "malformed")
    assert "r" not in malformed  # its reason is the refusal, not a repair
    refused = [(a["why"], a["ok"]) for a in messages[7]["a"] if not a["ok"]]
    assert refused == [("not-held", False), ("malformed", False)]
    service = next(a for a in messages[9]["a"] if a.get("why") == "service")
    assert service["x"]
    # The hidden reply and the player's typed tag are shown, never answered; the typed tag is
    # marked as not counted (issue 29).
    assert messages[5]["h"] == 1 and "a" not in messages[5]
    assert "a" not in messages[3]
    assert messages[3]["u"] == ['[inventory: action="add" item="Silver lantern"]']
    assert "u" not in messages[1] and "u" not in messages[5]
    # Every message carries its line, named as everywhere: message 3 (line 4).
    assert [m["l"] for m in messages[:4]] == [1, 2, 3, 4] and document["unit"] == "line"


def test_bag_diffs_rebuild_the_engine_state_after_every_message():
    for chat in (DEMO, LONG_ROAD):
        states = engine_states(chat)
        transcript, state = demo(chat)
        shown = rebuild(report_document(GAME, transcript, state))
        assert len(shown) == len(states)
        for index, after in states.items():
            assert shown[index] == [[(stack_label(s), s.count) for s in c.bag]
                                    for c in after.characters], (chat.name, index)


def test_only_messages_that_change_the_party_carry_a_diff():
    document = report_document(GAME, *demo(LONG_ROAD))
    for message in document["messages"]:
        if message["r"] in ("player", "system") or message.get("h"):
            assert "d" not in message
    # Diffs, not states: far fewer stack entries than full bags after every message.
    entries = sum(len(change["s"]) for m in document["messages"]
                  for change in m.get("d", {}).get("b", {}).values())
    full = sum(len(bag) for bags in rebuild(document) for bag in bags)
    assert entries * 10 < full


def test_purse_pools_conditions_and_place_change_with_their_turns():
    document = report_document(GAME, *demo())
    start = document["start"]
    assert start["p"] == {"0": "Coin worth 67 pennies", "1": "Coin worth 48 pennies"}
    assert start["l"]["0"] == ["Grit 10/10", "Resolve 3/4"]  # as the GM's SHEET block
    assert start["c"] == {"0": [], "1": []} and start["pl"] is None
    # ITM-PAY-5: Ada pays 3 shillings (36 pennies) at message 9.
    assert document["messages"][9]["d"]["p"] == {"0": "Coin worth 31 pennies"}
    # A place without a market (no size) holds from its turn; Bram earns 5 shillings (60).
    assert document["messages"][11]["d"]["pl"] == ["Millbrook road", None, 1]
    assert document["messages"][11]["d"]["p"] == {"1": "Coin worth 108 pennies"}


def test_itm_out_3_the_report_shows_wound_tracks_and_a_heal_closing_one():
    """ITM-OUT-3/11: a wound track shows with its penalty, and a poultice closing a wound
    changes it on its own turn."""
    game = replay.load_ruleset(FIXTURES / "rulesets/wounds.json")
    lines = [{"role": "gm", "text": "You rest by the fire."},
             {"role": "gm", "text": '[inventory: action="use" item="Poultice" who="Ada"]'}]
    transcript = replay.parse_transcript("\n".join(json.dumps(line) for line in lines))
    state = replay.load_party(game, FIXTURES / "parties/wounds.json", transcript.player_name)
    document = report_document(game, transcript, state)
    assert document["start"]["l"]["0"] == ["Resolve 3/3",
                                           "Wounds 2/5 (-1 on checks; -1 on saves)"]
    assert "d" not in document["messages"][0]
    assert document["messages"][1]["d"]["l"] == {"0": ["Resolve 3/3", "Wounds 1/5"]}


def test_place_shows_from_its_turn_and_resets_with_the_session():
    lines = [{"role": "gm", "text": "Prose."}, {"role": "gm", "text": '[place: name="Millbrook"]'},
             {"role": "player", "new_session": True, "text": "Next day."}]
    transcript = replay.parse_transcript("\n".join(json.dumps(line) for line in lines))
    state = replay.load_party(GAME, PARTY, transcript.player_name)
    messages = report_document(GAME, transcript, state)["messages"]
    assert "d" not in messages[0]
    assert messages[1]["d"]["pl"] == ["Millbrook", None, 1]
    assert messages[2]["d"]["pl"] is None  # the place counts from the latest session start


def test_charts_coin_worth_checks_and_loot():
    document = report_document(GAME, *demo())
    worth = {s["who"]: s["points"] for s in document["charts"]["worth"]}
    assert worth == {"Ada": [[-1, 67], [9, 31]], "Bram the Quiet": [[-1, 48], [11, 108]]}
    assert document["families"] == [{"label": "Coin", "unit": "pennies"}]
    [check] = document["charts"]["checks"]
    assert (check["m"], check["skill"], check["who"]) == (9, "Climb", "Bram the Quiet")
    assert isinstance(check["success"], bool) and len(check["rolls"]) == 2  # 2d6
    # The demo's one [loot:] (message 9): the mill cache, drawn from the turn's own dice.
    assert document["charts"]["loot"] == [
        {"table": "Mill cache", "rolls": 1, "drops": [("Poultice", 1), ("Rope", 1)]}]


def test_loot_chart_counts_drops_per_table():
    lines = [json.dumps({"role": "gm", "text": '[loot: table="mill_cache"]'})] * 5
    transcript = replay.parse_transcript("\n".join(lines), name="loot.jsonl")
    state = replay.load_party(GAME, PARTY, transcript.player_name)
    result = replay.replay(GAME, transcript, state)
    dropped: dict[str, int] = {}
    for item in result.answers:
        for drop in item.answer.record["drops"]:
            dropped[drop["name"]] = dropped.get(drop["name"], 0) + drop["count"]
    [table] = report_document(GAME, transcript, state)["charts"]["loot"]
    assert table == {"table": "Mill cache", "rolls": 5, "drops": sorted(dropped.items())}


def test_checks_without_success_or_rolls_still_chart():
    """Check answers from an engine that records no ``success``/``rolls`` chart as 'no result'."""
    tag = TagRef(kind="skill_check", attrs={"skill": "climb"}, raw='[skill_check: skill="climb"]')
    answer = Answer(tag=tag, ok=True, text="Climbed.", record={})
    result = ReplayResult([MessageAnswer(3, answer)], demo()[1])
    [check] = checks_of(GAME, result, "Ada")
    assert check == {"m": 3, "skill": "Climb", "who": "Ada", "success": None, "rolls": [],
                     "total": None, "dc": None, "outcome": None, "x": "Climbed."}


def test_render_report_takes_any_document():
    page = render_report({"title": "<b>x</b>", "messages": []})
    assert "<title>&lt;b&gt;x&lt;/b&gt;</title>" in page and "<h1>&lt;b&gt;x&lt;/b&gt;</h1>" in page


# The command ----------------------------------------------------------------------------------


def test_report_command_writes_the_page(tmp_path):
    out = tmp_path / "report.html"
    result = CliRunner().invoke(main, ["report", str(DEMO), "--ruleset", str(RULESET),
                                       "--party", str(PARTY), "-o", str(out)])
    assert result.exit_code == 0, result.output
    assert embedded(out.read_text(encoding="utf-8"))["title"] == "demo.jsonl"


def test_report_command_to_standard_output():
    result = CliRunner().invoke(main, ["report", str(DEMO), "-r", str(RULESET), "--title", "T"])
    assert result.exit_code == 0
    assert embedded(result.stdout)["title"] == "T"


@pytest.mark.parametrize("args", [
    ["missing.jsonl", "-r", str(RULESET)],
    [str(DEMO), "-r", "missing.json"],
    [str(DEMO), "-r", str(RULESET), "-p", str(DEMO)],
])
def test_report_command_unreadable_input_exits_2(args):
    result = CliRunner().invoke(main, ["report", *args])
    assert result.exit_code == 2
    assert result.output.startswith("gmtags: ")


# The regression view --------------------------------------------------------------------------


def test_regress_view_shows_recorded_and_now_side_by_side():
    difference = Difference(message=4, line=5, tag='[inventory: action="pay" amount="1 crown"]',
                            recorded=(("ok", "true"), ("text", "Paid with crowns ×1.")),
                            now=(("ok", "true"), ("text", "Paid with crown ×1.")))
    page = render_regress_html([{"chat": "market.jsonl", **difference.to_json()}])
    assert "1 difference</p>" in page and "market.jsonl · message 4 (line 5)" in page
    rows = re.findall(r'<tr class="(\w+)"><th>(\w+)</th><td class="recorded">(.*?)</td>'
                      r'<td class="now">(.*?)</td></tr>', page)
    assert rows == [("same", "ok", "true", "true"),
                    ("changed", "text", "Paid with crowns ×1.", "Paid with crown ×1.")]
    assert not re.search(r"\b(src|href)\s*=", page) and "<script" not in page


def test_regress_view_takes_pairs_escapes_and_marks_missing_attributes():
    page = render_regress_html([{"tag": "<x>", "recorded": [["ok", "false"], ["reason", "a&b"]],
                                 "now": [["ok", "true"]]}])
    assert "<code>&lt;x&gt;</code>" in page and "a&amp;b" in page
    assert '<tr class="changed"><th>reason</th><td class="recorded">a&amp;b</td>' \
           '<td class="now">—</td></tr>' in page


def test_regress_view_without_differences_and_deterministic():
    assert "No differences." in render_regress_html([])
    rows = [{"message": 1, "recorded": {"ok": "true"}, "now": {"ok": "false"}}]
    assert render_regress_html(rows) == render_regress_html(rows)
