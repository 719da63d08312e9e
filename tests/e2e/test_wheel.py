"""A non-editable ``pip install .`` into a fresh venv works from another directory
(the grammar, the demo files, the report's page files and the SillyTavern extension ship
inside the wheel)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import ROOT

from replay import load_party, load_ruleset, read_transcript
from replay.report import report_html


@pytest.mark.slow
def test_wheel_installs_and_runs_from_another_directory(tmp_path):
    source = tmp_path / "src"
    shutil.copytree(ROOT, source, ignore=shutil.ignore_patterns(
        ".venv*", ".git", "build", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis",
        "*.so"))  # the wheel builds its own C extension
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True, system_site_packages=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--disable-pip-version-check", str(source)], check=True, timeout=600)
    # Dependencies come from the test environment (already downloaded), not the network.
    site = subprocess.run([sys.executable, "-c", "import lark, pydantic, click, rich, os;"
                           "print(os.path.dirname(os.path.dirname(lark.__file__)))"],
                          capture_output=True, text=True, check=True).stdout.strip()
    pth = next((env_dir / "lib").glob("python3*/site-packages")) / "deps.pth"
    pth.write_text(site + "\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    # The tag scanner's C shortcut (tagparse/_scan.c) is built into the wheel and used.
    built = subprocess.run([python, "-c", "import tagparse._scan, tagparse.scanner as s;"
                            "print(tagparse._scan.__file__, s.scan_canonical is not None)"],
                           cwd=elsewhere, capture_output=True, text=True, check=True).stdout
    assert "site-packages" in built and built.strip().endswith("True"), built
    demo = subprocess.run([env_dir / "bin" / "gmtags", "demo", "--format", "json"],
                          cwd=elsewhere, capture_output=True, text=True, timeout=120, check=False)
    assert demo.returncode == 0, demo.stderr
    assert '"answers"' in demo.stdout
    shutil.rmtree(source)  # prove nothing is read from the source tree
    again = subprocess.run([env_dir / "bin" / "gmtags", "demo"], cwd=elsewhere,
                           capture_output=True, text=True, timeout=120, check=False)
    assert again.returncode == 0, again.stderr
    assert Path(elsewhere).exists()
    # The report's template, style and script (replay/report_assets) are in the wheel: the
    # installed gmtags writes the very page this checkout writes.
    chat, ruleset, party = subprocess.run(
        [python, "-c", "from replay.files import bundled; print(bundled('chats/demo.jsonl'));"
         "print(bundled('rulesets/harrow.json')); print(bundled('parties/harrow.json'))"],
        cwd=elsewhere, capture_output=True, text=True, check=True).stdout.split()
    page = elsewhere / "demo.html"
    report = subprocess.run([env_dir / "bin" / "gmtags", "report", chat, "--ruleset", ruleset,
                             "--party", party, "-o", str(page)], cwd=elsewhere,
                            capture_output=True, text=True, timeout=120, check=False)
    assert report.returncode == 0, report.stderr
    game = load_ruleset(ROOT / "fixtures/rulesets/harrow.json")
    expected = report_html(game, read_transcript(ROOT / "fixtures/chats/demo.jsonl"),
                           load_party(game, ROOT / "fixtures/parties/harrow.json"), "demo.jsonl")
    assert page.read_text(encoding="utf-8") == expected
    # The SillyTavern extension is in the wheel: the installed gmtags copies this checkout's.
    st_dir = tmp_path / "SillyTavern"
    (st_dir / "public" / "scripts" / "extensions").mkdir(parents=True)
    installed = subprocess.run([env_dir / "bin" / "gmtags", "sillytavern", "install",
                                str(st_dir)], cwd=elsewhere, capture_output=True, text=True,
                               timeout=120, check=False)
    assert installed.returncode == 0, installed.stderr
    copied = st_dir / "data" / "default-user" / "extensions" / "gmtags"
    for shipped in (ROOT / "sillytavern-extension" / "gmtags").iterdir():
        assert (copied / shipped.name).read_bytes() == shipped.read_bytes(), shipped.name
