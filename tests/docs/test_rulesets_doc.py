"""Every JSON example of docs/rulesets.md is checked by the engine, and every ``gmtags check``
output it shows is what the command prints for the file shown.

The guide marks each ```json block with an HTML comment on the line before it:

* ``<!-- ruleset: NAME.json -->`` a complete ruleset file;
* ``<!-- party: NAME.json -->`` a complete party file;
* ``<!-- fragment: POINTER -->`` a block set at the JSON pointer POINTER of the guide's base
  ruleset (``millbrook.json``), a final ``/-`` appending it to that list;
* ``... as NAME.json`` after a ruleset or fragment names the file it is saved as.

A ruleset or fragment that no ```console block runs must be valid. A ```console block holds
``$ gmtags ...`` lines, each followed by what the command prints (standard output, then
standard error); it runs in a folder holding every file saved before it.
"""

from __future__ import annotations

import copy
import json
import re
import shlex
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from helpers import ROOT

from engine.ruleset import validate
from replay.cli import main

DOC = ROOT / "docs" / "rulesets.md"
BASE = "millbrook.json"
MARKER = re.compile(r"<!-- (ruleset|party|fragment): (\S+)(?: as (\S+))? -->")
FENCE = re.compile(r"^```(\w*)\n(.*?)^```$", re.MULTILINE | re.DOTALL)


def _blocks() -> list[tuple[int, str, str, str | None, str | None, str | None]]:
    """(line, fence language, body, marker kind, marker argument, saved name) in order."""
    text = DOC.read_text(encoding="utf-8")
    found = []
    for match in FENCE.finditer(text):
        before = text[:match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.fullmatch(before.strip())
        kind, argument, name = marker.groups() if marker else (None, None, None)
        line = text.count("\n", 0, match.start()) + 1
        found.append((line, match.group(1), match.group(2), kind, argument, name))
    return found


def _set(document: dict[str, Any], pointer: str, value: Any) -> dict[str, Any]:
    """The document with ``value`` at the RFC 6901 ``pointer`` (objects made on the way)."""
    result = copy.deepcopy(document)
    parts = [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]
    node: Any = result
    for part in parts[:-1]:
        node = node[int(part)] if isinstance(node, list) else node.setdefault(part, {})
    last = parts[-1]
    if isinstance(node, list):
        if last == "-":
            node.append(value)
        else:
            node[int(last)] = value
    else:
        node[last] = value
    return result


def _documents() -> tuple[dict[str, Any], list[tuple[int, str | None, Any, bool]]]:
    """The files the guide saves, and every (line, name, document, is a ruleset) in order."""
    base: dict[str, Any] | None = None
    shown: list[tuple[int, str | None, Any, bool]] = []
    for line, language, body, kind, argument, name in _blocks():
        if language != "json":
            continue
        assert kind is not None, f"docs/rulesets.md:{line}: a json block without a marker"
        document = json.loads(body)
        if kind == "fragment":
            assert base is not None, f"docs/rulesets.md:{line}: a fragment before {BASE}"
            document = _set(base, str(argument), document)
        else:
            name = argument
        if kind == "ruleset" and name == BASE:
            base = document
        shown.append((line, name, document, kind != "party"))
    assert base is not None, f"docs/rulesets.md shows no {BASE}"
    return base, shown


def _runs() -> set[str]:
    """The file names the console blocks run ``gmtags check`` on."""
    names: set[str] = set()
    for _, language, body, *_ in _blocks():
        if language == "console":
            for command in body.splitlines():
                if command.startswith("$ "):
                    names.update(w for w in shlex.split(command[2:]) if w.endswith(".json"))
    return names


def test_every_ruleset_and_fragment_the_guide_does_not_run_is_valid() -> None:
    _, shown = _documents()
    checked = _runs()
    for line, name, document, is_ruleset in shown:
        if not is_ruleset or name in checked:
            continue
        ruleset, problems = validate(document)
        assert ruleset is not None and not problems, \
            f"docs/rulesets.md:{line}: " + "; ".join(map(str, problems))


def test_the_guide_shows_what_gmtags_check_prints(tmp_path: Path,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    _, shown = _documents()
    saved = {line: (name, document) for line, name, document, _ in shown if name is not None}
    commands = 0
    for line, language, body, *_ in _blocks():
        for at, (name, document) in list(saved.items()):
            if at < line:
                (tmp_path / name).write_text(json.dumps(document, indent=2), encoding="utf-8")
                del saved[at]
        if language != "console":
            continue
        for command, expected in re.findall(r"^\$ (.*)\n((?:(?!\$ ).*\n?)*)", body + "\n",
                                            re.MULTILINE):
            words = shlex.split(command)
            assert words[0] == "gmtags", f"docs/rulesets.md:{line}: runs {words[0]}"
            # The command itself, in this process (the wheel test runs the installed one):
            # a process per example cost most of a minute.
            monkeypatch.chdir(tmp_path)
            result = CliRunner().invoke(main, words[1:], catch_exceptions=False)
            assert result.stdout + result.stderr == expected.rstrip("\n") + "\n", \
                f"docs/rulesets.md:{line}: $ {command}"
            commands += 1
    assert commands, "docs/rulesets.md runs no gmtags check"


def test_the_guide_names_only_rule_ids_beside_words() -> None:
    """A rule ID (ITM-PAY-4) is a cross-reference next to the rule in words, never the text."""
    rule_id = re.compile(r"\b(?:ITM|CHK|CMB|OQ)(?:-[A-Z0-9]+)+\b")
    for paragraph in DOC.read_text(encoding="utf-8").split("\n\n"):
        if rule_id.search(paragraph):
            words = re.findall(r"[A-Za-z]{2,}", rule_id.sub(" ", paragraph))
            assert len(words) >= 5, f"a rule ID without words: {paragraph!r}"


@pytest.mark.parametrize("name", ["spec/", "issue "])
def test_the_guide_points_to_nothing_outside_the_repository(name: str) -> None:
    assert name not in DOC.read_text(encoding="utf-8")
