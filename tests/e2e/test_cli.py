"""The installed ``gmtags`` command, run as a subprocess on the files in fixtures/."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import jsonschema
import pytest
from helpers import FIXTURES

GMTAGS = shutil.which("gmtags", path=str(Path(sys.executable).parent)) or "gmtags"
RULESET = str(FIXTURES / "rulesets/harrow.json")
PARTY = str(FIXTURES / "parties/harrow.json")
DEMO = str(FIXTURES / "chats/demo.jsonl")


def run(*args: str, stdin: str | None = None, env: dict[str, str] | None = None):
    return subprocess.run([GMTAGS, *args], capture_output=True, text=True, input=stdin,
                          env={**os.environ, **(env or {})}, timeout=120, check=False)


def test_help_lists_every_command():
    result = run("--help")
    assert result.returncode == 0
    for command in ("check", "parse", "replay", "schema", "demo", "record", "regress",
                    "export-state", "report", "serve", "prompt"):
        assert command in result.stdout


def test_replay_json_is_identical_under_different_hash_seeds():
    args = ("replay", DEMO, "--ruleset", RULESET, "--party", PARTY, "--format", "json")
    first = run(*args, env={"PYTHONHASHSEED": "1"})
    second = run(*args, env={"PYTHONHASHSEED": "4242"})
    assert first.returncode == 0, first.stderr
    assert first.stdout == second.stdout
    document = json.loads(first.stdout)
    assert set(document) == {"answers", "state", "diagnostics"}


def test_demo_replay_answers(tmp_path):
    result = run("replay", DEMO, "--ruleset", RULESET, "--party", PARTY, "--format", "json")
    document = json.loads(result.stdout)
    answers = [(a["message"], a["tag"]["kind"], a["ok"], a["reason"]) for a in document["answers"]]
    # The unselected swipe (Silver lantern), the player's typed tag and the hidden reply never count.
    assert not any("Silver lantern" in a["tag"]["raw"] or "Longbow" in a["tag"]["raw"]
                   for a in document["answers"])
    assert (7, "inventory", False, "malformed") in answers
    assert (9, "inventory", False, "service") in answers
    ada = document["state"]["characters"][0]
    assert {"name": "Torch", "count": 4} in [{"name": s["name"], "count": s["count"]} for s in ada["bag"]]


def test_demo_command_prints_answers_and_bags():
    result = run("demo")
    assert result.returncode == 0, result.stderr
    assert "Ada's bag" in result.stdout and "Bram the Quiet's bag" in result.stdout


def test_check_valid_ruleset_exits_0_with_a_summary():
    result = run("check", RULESET)
    assert result.returncode == 0
    assert "valid" in result.stdout and "Harrow Vale" in result.stdout


def test_check_lists_every_problem_with_its_pointer(tmp_path):
    document = json.loads(Path(RULESET).read_text())
    document["items"]["categories"].append({"id": "gear", "label": "Again"})
    document["catalogs"][0]["entries"][0]["item"]["rarity"] = "mythic"
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document))
    result = run("check", str(path))
    assert result.returncode == 1
    assert result.stdout.splitlines() == [
        '/items/categories/5/id: duplicate id "gear"',
        '/catalogs/0/entries/0/item/rarity: unknown rarity "mythic"',
    ]


@pytest.mark.parametrize("content", ["{not json", "[" * 10_000 + "]" * 10_000])
def test_unreadable_ruleset_exits_2(tmp_path, content):
    path = tmp_path / "broken.json"
    path.write_text(content)
    assert run("check", str(path)).returncode == 2
    assert run("replay", DEMO, "--ruleset", str(path)).returncode == 2


def test_replay_of_a_missing_chat_exits_2():
    result = run("replay", "/nonexistent/chat.jsonl", "--ruleset", RULESET)
    assert result.returncode == 2
    assert result.stderr.startswith("gmtags: ")


def test_parse_reads_standard_input():
    result = run("parse", "-", "--format", "json",
                 stdin='The smith nods. [inventory: action="add" item="Hand axe"] [sighs]')
    assert result.returncode == 0
    document = json.loads(result.stdout)
    assert [t["kind"] for t in document["tags"]] == ["inventory"]


def test_schema_validates_the_fixture_rulesets():
    result = run("schema")
    schema = json.loads(result.stdout)
    for path in sorted((FIXTURES / "rulesets").glob("*.json")):
        jsonschema.validate(json.loads(path.read_text()), schema)


def test_replay_without_a_party_uses_one_default_character():
    result = run("replay", DEMO, "--ruleset", RULESET, "--format", "json")
    assert result.returncode == 0, result.stderr
    document = json.loads(result.stdout)
    assert [c["name"] for c in document["state"]["characters"]] == ["Player"]


def test_check_points_into_the_catalog_file_a_problem_is_in(tmp_path):
    """A ruleset split with catalogFiles: the pointer names the file and the place in it."""
    document = json.loads(Path(RULESET).read_text())
    kit = document.pop("catalogs")[0]
    document["catalogFiles"] = ["kit.json", "more.json"]
    kit["entries"][1]["item"]["rarity"] = "mythic"
    (tmp_path / "kit.json").write_text(json.dumps(kit))
    extra = {"id": "extra", "label": "Extra", "holds": "items",
             "entries": [{"id": "x", "label": "X", "item": {"category": "wand"}}]}
    (tmp_path / "more.json").write_text(json.dumps([extra]))
    (tmp_path / "ruleset.json").write_text(json.dumps(document))
    result = run("check", str(tmp_path / "ruleset.json"))
    assert result.returncode == 1
    assert 'kit.json#/entries/1/item/rarity: unknown rarity "mythic"' in result.stdout
    assert 'more.json#/0/entries/0/item/category: unknown category "wand"' in result.stdout


def test_prompt_shows_what_the_gm_sees_next():
    """ITM-FAKE-21's "Peek Prompt": the GM context after the chat, truth included."""
    result = run("prompt", DEMO, "--ruleset", RULESET, "--party", PARTY)
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "INVENTORY" in text and "Ada (Coin worth 31 pennies):" in text
    assert "- Old boot ×1" in text
    assert text.rstrip().endswith("unbind, unequip, use).")  # the last reply's answers
