"""The installed ``gmtags`` command, run as a subprocess on the files in fixtures/."""

from __future__ import annotations

import json
import os
import pty
import shutil
import subprocess
import sys
from pathlib import Path

import click
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
    kind = jsonschema.validators.validator_for(schema)
    kind.check_schema(schema)  # once: jsonschema.validate checks it again each call (0.45 s)
    validator = kind(schema)
    for path in sorted((FIXTURES / "rulesets").glob("*.json")):
        validator.validate(json.loads(path.read_text()))


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


# --- issue 29: a newcomer's first hour ------------------------------------------------------

def bad_party(tmp_path: Path) -> Path:
    party = json.loads(Path(PARTY).read_text())
    ada = party["characters"][0]
    ada["skills"] = {"sneek": "trained"}
    ada["abilities"]["brawn"] = 9
    path = tmp_path / "party.json"
    path.write_text(json.dumps(party))
    return path


def test_check_with_a_party_checks_it_against_the_ruleset(tmp_path):
    good = run("check", RULESET, "--party", PARTY)
    assert good.returncode == 0, good.stderr
    assert "fits the ruleset — 2 characters (Ada, Bram the Quiet), player Ada" in good.stdout
    party = bad_party(tmp_path)
    result = run("check", RULESET, "--party", str(party))
    assert result.returncode == 1
    assert result.stdout.splitlines()[1:] == [
        f"{party}#/characters/0/abilities/brawn: 9 is outside Brawn's 0..5",
        f'{party}#/characters/0/skills/sneek: no skill "sneek" in the ruleset '
        '(did you mean "sneak"?)',
    ]
    assert result.stderr == f"{party}: 2 problems\n"


def test_check_of_a_party_given_as_the_ruleset_is_not_five_unrelated_errors():
    result = run("check", PARTY)
    assert result.returncode == 1
    assert "unknown key" in result.stdout
    assert result.stderr.startswith(f"{PARTY}: this looks like a party file, not a ruleset: "
                                    f"check it with gmtags check RULESET --party {PARTY}\n")


@pytest.mark.parametrize("command", ["replay", "record", "report", "prompt", "export-state"])
def test_a_party_that_does_not_fit_exits_2_naming_the_file(tmp_path, command):
    party = bad_party(tmp_path)
    result = run(command, DEMO, "--ruleset", RULESET, "--party", str(party),
                 "-o", str(tmp_path / "out")) if command in ("record", "report",
                                                             "export-state") else \
        run(command, DEMO, "--ruleset", RULESET, "--party", str(party))
    assert result.returncode == 2
    assert result.stderr.startswith(f"gmtags: {party}: does not fit the ruleset (2 problems):")
    assert '(did you mean "sneak"?)' in result.stderr


def test_a_ruleset_with_problems_is_named_when_a_chat_is_replayed(tmp_path):
    document = json.loads(Path(RULESET).read_text())
    document["lable"] = "x"
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(document))
    result = run("replay", DEMO, "--ruleset", str(path))
    assert result.returncode == 2
    assert result.stderr.splitlines() == [
        f"gmtags: {path}: not a valid ruleset (1 problem):",
        '  /lable: unknown key "lable" (did you mean "label"?)',
    ]


UNREADABLE = {
    "narrator.jsonl": '{"role": "narrator", "text": "Once upon a time"}\n'
                      '{"role": "narrator", "text": "the end"}\n',
    "numbers.json": "[1, 2, 3]",
}


@pytest.mark.parametrize("command", ["replay", "record", "report", "prompt", "export-state"])
@pytest.mark.parametrize("name", sorted(UNREADABLE))
def test_a_chat_with_nothing_readable_exits_2(tmp_path, command, name):
    chat = tmp_path / name
    chat.write_text(UNREADABLE[name])
    result = run(command, str(chat), "--ruleset", RULESET, "-o", str(tmp_path / "out")) \
        if command in ("record", "report", "export-state") else \
        run(command, str(chat), "--ruleset", RULESET)
    assert result.returncode == 2, result.stdout
    assert result.stderr.startswith(f"gmtags: {chat}: no message could be read")
    assert ("line 1: role 'narrator'" in result.stderr or "entry 1: entry is not a JSON object"
            in result.stderr)


@pytest.mark.parametrize("command", ["replay", "prompt", "export-state"])
def test_an_empty_chat_file_is_an_empty_chat(tmp_path, command):
    chat = tmp_path / "empty.jsonl"
    chat.write_text("")
    result = run(command, str(chat), "--ruleset", RULESET)
    assert result.returncode == 0, result.stderr


def test_a_line_that_is_not_json_is_skipped_with_one_line_number_or_refused_by_strict(tmp_path):
    chat = tmp_path / "chat.jsonl"
    chat.write_text('{"role": "gm", "text": "Hello [inventory: action=\\"add\\" item=\\"Rope\\"]"}\n'
                    '{"role": "gm", "text": "b" "x"}\n')
    lenient = run("replay", str(chat), "--ruleset", RULESET, "--format", "json")
    assert lenient.returncode == 0
    assert "line 2: not JSON: Expecting ',' delimiter at column 28" in lenient.stderr
    assert "line 1 column" not in lenient.stderr + lenient.stdout
    strict = run("replay", str(chat), "--ruleset", RULESET, "--strict")
    assert strict.returncode == 2
    assert strict.stderr.startswith(f"gmtags: {chat}: 1 line could not be read (--strict):")


@pytest.mark.parametrize("command", ["replay", "prompt", "export-state", "record", "report"])
def test_a_chat_can_come_from_standard_input(command):
    result = run(command, "-", "--ruleset", RULESET, "--party", PARTY,
                 stdin=Path(DEMO).read_text())
    assert result.returncode == 0, result.stderr
    assert result.stdout


@pytest.mark.parametrize(("command", "what"), [("report", "an HTML page"),
                                               ("record", "the recorded chat")])
def test_report_and_record_never_pour_a_file_onto_a_terminal(command, what):
    main_end, terminal = pty.openpty()
    try:
        result = subprocess.run([GMTAGS, command, DEMO, "--ruleset", RULESET], stdout=terminal,
                                stderr=subprocess.PIPE, text=True, timeout=120, check=False)
    finally:
        os.close(terminal)
        os.close(main_end)
    assert result.returncode == 2
    assert result.stderr == (f"gmtags: not writing {what} to the terminal: give -o FILE (or "
                             "pipe it: ... | less)\n")


def test_every_command_summary_and_option_has_help_in_full():
    result = run("--help")
    commands = result.stdout.split("Commands:")[1]
    assert "..." not in commands  # no summary cut short
    from replay.cli import main
    missing = [f"{name} {param.name}" for name, command in main.commands.items()
               # serve (replay/stage/cli.py) is issue 22's to touch: its --host/--port
               if name != "serve"
               for param in command.params
               if isinstance(param, click.Option) and not param.help]
    assert missing == []


def test_prompt_help_speaks_the_users_words():
    text = run("prompt", "--help").stdout
    assert "ITM-FAKE" not in text and "Peek Prompt" not in text
    assert "secrets included" in text
    party = run("replay", "--help").stdout
    assert 'named after the chat\'s player (else "Player")' in " ".join(party.split())


def test_parse_names_places_by_line_and_column():
    result = run("parse", "-", stdin='First line.\nHe nods. [inventory: action="add" item=Rope]')
    assert result.returncode == 0
    assert "2:10" in result.stdout
