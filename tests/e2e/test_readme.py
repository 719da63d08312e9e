"""The README's examples run: its Python block, every `gmtags` command of "Using it", and the
worked fight of "Combat", whose output excerpts are what the commands print."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import ROOT

README = (ROOT / "README.md").read_text(encoding="utf-8")
GMTAGS = str(Path(sys.executable).parent / "gmtags")


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def _using_it_commands() -> list[str]:
    section = README.split("## Using it", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, flags=re.DOTALL)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]


def test_the_python_example_runs_and_prints_what_it_says(tmp_path):
    [code] = [b for b in _blocks("python") if "replay.replay(" in b]
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                            text=True, timeout=120, check=False)
    assert result.returncode == 0, result.stderr
    expected = code.split("# ", 1)[1].strip().splitlines()[0]
    assert result.stdout.strip() == expected


@pytest.mark.parametrize("command", _using_it_commands())
def test_every_using_it_command_runs(command, tmp_path):
    shell = command.replace(".venv/bin/gmtags", shlex.quote(GMTAGS))
    shell = shell.replace("-o report.html", f"-o {shlex.quote(str(tmp_path / 'report.html'))}")
    shell = shell.replace("> ruleset.schema.json", f"> {shlex.quote(str(tmp_path / 's.json'))}")
    result = subprocess.run(shell, shell=True, cwd=ROOT, capture_output=True, text=True,
                            timeout=120, check=False)
    assert result.returncode == 0, (command, result.stderr)


def _combat_section() -> str:
    return README.split("\n### Combat\n", 1)[1].split("\n## ", 1)[0]


def _combat_commands() -> list[str]:
    block = re.search(r"```sh\n(.*?)```", _combat_section(), flags=re.DOTALL)
    assert block is not None
    joined = block.group(1).replace("\\\n", " ")
    return [line.strip() for line in joined.splitlines() if line.strip()]


def test_the_combat_example_prints_what_the_readme_shows():
    """Issue 24: the worked srd5 fight runs (replay, then prompt mid-fight) and every line of
    the section's output excerpts is in what they print (a wide terminal, so no line wraps)."""
    commands = _combat_commands()
    assert [c.split()[1] for c in commands] == ["replay", "prompt"]
    printed = []
    for command in commands:
        result = subprocess.run(command.replace(".venv/bin/gmtags", shlex.quote(GMTAGS)),
                                shell=True, cwd=ROOT, capture_output=True, text=True,
                                timeout=120, check=False, env={**os.environ, "COLUMNS": "250"})
        assert result.returncode == 0, (command, result.stderr)
        printed.append(" ".join(result.stdout.split()))
    excerpts = re.findall(r"```text\n(.*?)```", _combat_section(), flags=re.DOTALL)
    assert len(excerpts) == 2
    for excerpt, output in zip(excerpts, printed, strict=True):
        for line in excerpt.splitlines():
            assert " ".join(line.split()) in output, line
    assert "COMBAT (round 4 fought" in printed[1]
