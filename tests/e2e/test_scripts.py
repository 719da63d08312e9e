"""The quick-start scripts' shared install and system programs (scripts/install.sh, issue 29):
one editable install for scripts/demo and scripts/test, apt-get that waits for a busy apt and
retries, a clear word when it cannot run, and under CI a failure instead of skipped tests.

apt-get, id and python are stand-ins written by the tests: nothing is installed."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from helpers import ROOT

INSTALL = ROOT / "scripts" / "install.sh"
TOOLS = ("bash", "cat", "mktemp", "tail", "sed", "sleep", "rm", "sort", "mv", "find", "grep",
         "env", "id", "touch", "chmod")


def toolbox(tmp_path: Path, **fakes: str) -> Path:
    """A PATH directory with the few real tools the functions use and the given stand-ins."""
    tools = tmp_path / "bin"
    tools.mkdir()
    for name in TOOLS:
        real = shutil.which(name)
        assert real is not None
        (tools / name).symlink_to(real)
    for name, body in fakes.items():
        (tools / name).unlink(missing_ok=True)
        (tools / name).write_text("#!" + str(shutil.which("bash")) + "\n" + body)
        (tools / name).chmod(0o755)
    return tools


def run(script: str, tools: Path, cwd: Path, ci: bool = False) -> subprocess.CompletedProcess[str]:
    env = {"PATH": str(tools), "APT_PAUSE": "0", "HOME": str(cwd)}
    if ci:
        env["CI"] = "true"
    return subprocess.run([str(tools / "bash"), "-c", f"set -euo pipefail; . {INSTALL}; {script}"],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
                          check=False)


def test_without_apt_get_it_says_what_to_install_and_the_tests_skip(tmp_path):
    tools = toolbox(tmp_path)
    result = run('need /nonexistent/chromium chromium "the browser tests"', tools, tmp_path)
    assert result.returncode == 0
    assert result.stderr.splitlines() == [
        "scripts/test: cannot install chromium (no apt-get on this machine): install it "
        "yourself, e.g. 'sudo apt-get install chromium', so that /nonexistent/chromium exists.",
        "scripts/test: until then the browser tests skip.",
    ]


def test_under_ci_a_missing_program_fails_the_run(tmp_path):
    tools = toolbox(tmp_path)
    result = run('need /nonexistent/chromium chromium "the browser tests"; echo went-on',
                 tools, tmp_path, ci=True)
    assert result.returncode == 1
    assert "went-on" not in result.stdout
    assert ("scripts/test: CI is set, so a missing chromium fails the run (the browser tests "
            "need it).") in result.stderr


def test_not_root_and_no_sudo_is_said_plainly(tmp_path):
    tools = toolbox(tmp_path, id='echo 1000\n', **{"apt-get": "exit 0\n"})
    result = run('need /nonexistent/redis redis-server "the Redis tests"', tools, tmp_path)
    assert "(this is not root and there is no sudo)" in result.stderr


def test_a_busy_apt_is_waited_for_and_tried_again(tmp_path):
    calls = tmp_path / "calls"
    apt = f"""echo "$*" >> {calls}
case "$*" in *install*) ;; *) exit 0 ;; esac
tries=$(grep -c install {calls})
if [ "$tries" -lt 3 ]; then
    echo "E: Could not get lock /var/lib/dpkg/lock-frontend" >&2; exit 100
fi
touch {tmp_path}/redis-server-installed
"""
    tools = toolbox(tmp_path, id="echo 0\n", **{"apt-get": apt})
    result = run('need /nonexistent/redis redis-server "the Redis tests"', tools, tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "redis-server-installed").exists()
    assert "failed (attempt 1 of 3)" in result.stderr and "(attempt 2 of 3)" in result.stderr
    assert "Could not get lock" in result.stderr
    assert all("-o DPkg::Lock::Timeout=600" in line for line in calls.read_text().splitlines())


def test_a_program_already_there_needs_no_apt(tmp_path):
    tools = toolbox(tmp_path)
    result = run('need bash bash "nothing"', tools, tmp_path)
    assert (result.returncode, result.stderr) == (0, "")


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A checkout whose .venv python only notes how pip was called."""
    for name in ("pyproject.toml", "setup.py"):
        (tmp_path / name).write_text("")
    (tmp_path / "tagparse").mkdir()
    (tmp_path / "tagparse" / "_scan.c").write_text("")
    (tmp_path / "tagparse" / "_scan_reader.h").write_text("")
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text(f'#!{shutil.which("bash")}\necho "$*" >> {tmp_path}/pip\n'
                                    f"touch {bin_dir}/gmtags; chmod +x {bin_dir}/gmtags\n")
    (bin_dir / "python").chmod(0o755)
    return tmp_path


def pip_calls(checkout: Path) -> list[str]:
    log = checkout / "pip"
    return log.read_text().splitlines() if log.exists() else []


def test_demo_after_test_keeps_the_one_editable_install(checkout, tmp_path_factory):
    tools = toolbox(tmp_path_factory.mktemp("tools"))
    assert run("install_gmtags test", tools, checkout).returncode == 0
    assert run("install_gmtags", tools, checkout).returncode == 0  # scripts/demo
    assert run("install_gmtags test", tools, checkout).returncode == 0
    assert pip_calls(checkout) == [
        "-m pip install --quiet --disable-pip-version-check -e .[test]"]


def test_demo_first_then_test_adds_the_test_tools_to_the_same_install(checkout,
                                                                      tmp_path_factory):
    tools = toolbox(tmp_path_factory.mktemp("tools"))
    run("install_gmtags", tools, checkout)
    run("install_gmtags test", tools, checkout)
    run("install_gmtags", tools, checkout)
    assert pip_calls(checkout) == [
        "-m pip install --quiet --disable-pip-version-check -e .",
        "-m pip install --quiet --disable-pip-version-check -e .[test]"]


def test_a_changed_packaging_file_installs_again(checkout, tmp_path_factory):
    tools = toolbox(tmp_path_factory.mktemp("tools"))
    run("install_gmtags", tools, checkout)
    stamp = checkout / ".venv" / ".gmtags-install"
    past = stamp.stat().st_mtime - 10
    os.utime(stamp, (past, past))
    run("install_gmtags", tools, checkout)
    assert len(pip_calls(checkout)) == 2


def test_the_test_script_says_how_long_the_suite_takes():
    text = (ROOT / "scripts" / "test").read_text()
    assert "about 5 minutes alone on 2 cores, two test processes" in text
    assert 'pytest -n "${GMTAGS_TEST_PROCESSES:-auto}"' in text  # one process per core
    assert "the last full run here took" in text


def test_a_missing_program_skips_a_test_or_under_ci_fails_it(monkeypatch):
    from helpers import system_program
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match="scripts/test installs it"):
        system_program("/nonexistent/redis-server", "the Redis tests")
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="CI is set"):
        system_program("/nonexistent/redis-server", "the Redis tests")
    assert system_program("bash", "nothing") == shutil.which("bash")


def test_st_extension_branch_holds_the_extension_at_its_root(tmp_path):
    """Issue 41: SillyTavern installs an extension from a URL by cloning a repository's root,
    so the extension is split onto a branch of its own (scripts/st-extension-branch)."""
    clone = tmp_path / "clone"
    subprocess.run(["git", "clone", "--quiet", "--no-local", str(ROOT), str(clone)], check=True,
                   timeout=300)
    head = subprocess.run(["git", "-C", str(clone), "rev-parse", "HEAD"], capture_output=True,
                          text=True, check=True).stdout.strip()
    shipped = subprocess.run(["git", "-C", str(clone), "ls-tree", "--name-only",
                              f"{head}:sillytavern-extension/gmtags"], capture_output=True, text=True,
                             check=True).stdout.split()
    result = subprocess.run([str(clone / "scripts" / "st-extension-branch")], cwd=clone,
                            capture_output=True, text=True, timeout=300, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("st-extension: ")
    root = subprocess.run(["git", "-C", str(clone), "ls-tree", "--name-only", "st-extension"],
                          capture_output=True, text=True, check=True).stdout.split()
    assert root == shipped and "manifest.json" in root
    again = subprocess.run([str(clone / "scripts" / "st-extension-branch")], cwd=clone,
                           capture_output=True, text=True, timeout=300, check=True)
    assert again.stdout.split()[1] == result.stdout.split()[1]  # the same commits again
