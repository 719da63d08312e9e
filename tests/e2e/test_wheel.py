"""A non-editable ``pip install .`` into a fresh venv works from another directory
(the grammar and the demo files ship inside the wheel)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import venv
from pathlib import Path

import pytest
from helpers import ROOT


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
