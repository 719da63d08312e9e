"""``gmtags sillytavern install`` and the extension it installs (issue 41): the copy is the
shipped extension byte for byte, where SillyTavern loads it from; its manifest loads on
SillyTavern 1.12.6 and carries gmtags' version; what it uses of SillyTavern is what real
SillyTavern releases offer."""

from __future__ import annotations

import json
import re
import tomllib
from pathlib import Path

import pytest
from click.testing import CliRunner
from helpers import ROOT

from replay.cli import main
from replay.sillytavern_cli import MARK, extension_version

SHIPPED = ROOT / "sillytavern-extension" / "gmtags"
RECORDED = ROOT / "tests" / "fixtures" / "sillytavern"


def sillytavern(tmp_path: Path) -> Path:
    st_dir = tmp_path / "SillyTavern"
    (st_dir / "public" / "scripts" / "extensions").mkdir(parents=True)
    return st_dir


def install(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(main, ["sillytavern", "install", *args])
    return result.exit_code, result.output


def same_files(copy: Path) -> None:
    for shipped in SHIPPED.iterdir():
        assert (copy / shipped.name).read_bytes() == shipped.read_bytes(), shipped.name
    assert sorted(p.name for p in copy.iterdir()) == sorted(
        [p.name for p in SHIPPED.iterdir()] + [MARK])


def test_install_for_one_user_copies_the_extension(tmp_path: Path) -> None:
    st_dir = sillytavern(tmp_path)
    code, output = install(str(st_dir))
    assert code == 0, output
    copy = st_dir / "data" / "default-user" / "extensions" / "gmtags"
    same_files(copy)
    assert f"extension {extension_version()} for user default-user" in output


def test_install_for_all_users(tmp_path: Path) -> None:
    st_dir = sillytavern(tmp_path)
    code, output = install(str(st_dir), "--all-users")
    assert code == 0, output
    same_files(st_dir / "public" / "scripts" / "extensions" / "third-party" / "gmtags")


def test_install_for_a_user_under_another_data_root(tmp_path: Path) -> None:
    st_dir = sillytavern(tmp_path)
    code, output = install(str(st_dir), "--user", "ada", "--data-root", str(tmp_path / "data"))
    assert code == 0, output
    same_files(tmp_path / "data" / "ada" / "extensions" / "gmtags")


def test_install_again_replaces_its_own_copy(tmp_path: Path) -> None:
    st_dir = sillytavern(tmp_path)
    install(str(st_dir))
    copy = st_dir / "data" / "default-user" / "extensions" / "gmtags"
    (copy / "old.js").write_text("stale")
    (copy / "index.js").write_text("changed")
    code, output = install(str(st_dir))
    assert code == 0, output
    same_files(copy)


def test_install_leaves_a_folder_it_did_not_make(tmp_path: Path) -> None:
    st_dir = sillytavern(tmp_path)
    clone = st_dir / "data" / "default-user" / "extensions" / "gmtags"
    clone.mkdir(parents=True)
    (clone / "index.js").write_text("from a URL install")
    code, output = install(str(st_dir))
    assert code == 1 and "was not installed by gmtags sillytavern install" in output
    assert (clone / "index.js").read_text() == "from a URL install"


def test_install_needs_a_sillytavern_folder(tmp_path: Path) -> None:
    code, output = install(str(tmp_path))
    assert code == 1 and "is not a SillyTavern folder" in output


def test_the_manifest_loads_on_1_12_6_and_says_gmtags_version() -> None:
    manifest = json.loads((SHIPPED / "manifest.json").read_text(encoding="utf-8"))
    # 1.12.6 activates an extension only when "requires" is an array (isSubsetOf)
    assert manifest["requires"] == [] and manifest["optional"] == []
    assert (SHIPPED / manifest["js"]).is_file() and (SHIPPED / manifest["css"]).is_file()
    assert manifest["display_name"] and manifest["author"]
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert manifest["version"] == project["version"] == extension_version()
    assert manifest["auto_update"] is False


def recorded_versions() -> list[Path]:
    return sorted(RECORDED.glob("context-*.json"))


@pytest.mark.parametrize("recorded", recorded_versions(), ids=lambda p: p.stem)
def test_what_the_extension_uses_is_what_sillytavern_offers(recorded: Path) -> None:
    """Drift guard: every member of getContext(), event and element the extension needs is in
    what a real SillyTavern offered (recorded by scripts/st-check); the optional ones it uses
    only when present."""
    used = json.loads((SHIPPED / "st_api.json").read_text(encoding="utf-8"))
    offered = json.loads(recorded.read_text(encoding="utf-8"))
    assert set(used["context"]) <= set(offered["context"])
    assert set(used["events"]) <= set(offered["events"])
    assert set(used["elements"]) <= set(offered["elements"])


def test_sillytavern_1_12_6_was_recorded() -> None:
    assert "context-1.12.6" in [p.stem for p in recorded_versions()]


def test_the_extension_reads_only_what_st_api_lists() -> None:
    """Each getContext() member and event name index.js names is listed in st_api.json (the
    stand-in host offers exactly that list, and the drift guard checks it)."""
    used = json.loads((SHIPPED / "st_api.json").read_text(encoding="utf-8"))
    script = (SHIPPED / "index.js").read_text(encoding="utf-8")
    members = set(re.findall(r"\b(?:context|ctx\(\))\??\.([A-Za-z]+)", script))
    assert members == {*used["context"], *used["optionalContext"]}
    events = set(re.findall(r"'([A-Z][A-Z_]{3,})'", script)) - {"POST"}
    assert events == {*used["events"], *used["optionalEvents"]}
