"""``gmtags sillytavern install ST_DIR``: put the SillyTavern extension that matches this
gmtags (the panel beside the chat; ``sillytavern-extension/gmtags/`` in the repository,
package data in the wheel) into a SillyTavern folder, offline.

SillyTavern serves ``data/<user>/extensions/<dir>`` (one user's) and
``public/scripts/extensions/third-party/<dir>`` (every user's) as
``/scripts/extensions/third-party/<dir>/``; the extension is ``gmtags`` there. A copy this
command made before is replaced; anything else in the way is left alone.
"""

from __future__ import annotations

import json
import shutil
from importlib import resources
from importlib.abc import Traversable
from pathlib import Path

import click

from .cli_io import fail

EXTENSION = "gmtags"
DEFAULT_USER = "default-user"  # SillyTavern's one user while user accounts are off
MARK = ".gmtags-install"  # written into each copy: what to replace next time


def extension_files() -> Traversable:
    """The extension as shipped with this gmtags."""
    return resources.files("gmtags_sillytavern").joinpath(EXTENSION)


def extension_version() -> str:
    """The version in the shipped extension's manifest (gmtags' own)."""
    manifest = json.loads(extension_files().joinpath("manifest.json").read_text("utf-8"))
    return str(manifest["version"])


def install_extension(st_dir: Path, all_users: bool = False, user: str = DEFAULT_USER,
                      data_root: Path | None = None) -> Path:
    """Copy the extension into SillyTavern at ``st_dir``; the folder it is in now.

    Raises :class:`click.ClickException` for a folder that is not SillyTavern, or a
    ``gmtags`` extension folder this command did not make (a clone from a URL install)."""
    if not (st_dir / "public" / "scripts" / "extensions").is_dir():
        raise click.ClickException(
            f"{st_dir} is not a SillyTavern folder (no public/scripts/extensions in it)")
    if all_users:
        parent = st_dir / "public" / "scripts" / "extensions" / "third-party"
    else:
        parent = (data_root or st_dir / "data") / user / "extensions"
    target = parent / EXTENSION
    if target.exists() and not (target / MARK).exists():
        raise click.ClickException(
            f"{target} exists and was not installed by gmtags sillytavern install (a copy "
            "installed from a URL?): remove it in SillyTavern's Manage Extensions, or by hand, "
            "first")
    if target.exists():
        shutil.rmtree(target)
    parent.mkdir(parents=True, exist_ok=True)
    target.mkdir()
    for item in extension_files().iterdir():
        if item.is_file():
            (target / item.name).write_bytes(item.read_bytes())
    (target / MARK).write_text(f"gmtags {extension_version()}\n", encoding="utf-8")
    return target


@click.group(name="sillytavern", short_help="The SillyTavern extension: install it.")
def sillytavern() -> None:
    """The SillyTavern extension: the party beside the chat, answered tags as badges."""


@sillytavern.command(name="install")
@click.argument("st_dir", type=click.Path(file_okay=False, path_type=Path))
@click.option("--all-users", is_flag=True,
              help="Install for every user (public/scripts/extensions/third-party) instead of "
                   "one user's data folder.")
@click.option("--user", default=DEFAULT_USER, show_default=True,
              help="The SillyTavern user to install for (its data folder's name).")
@click.option("--data-root", type=click.Path(file_okay=False, path_type=Path), default=None,
              help="SillyTavern's data root, when it runs with --dataRoot (default: ST_DIR/data).")
def install_command(st_dir: Path, all_users: bool, user: str, data_root: Path | None) -> None:
    """Copy the gmtags extension matching this gmtags into SillyTavern at ST_DIR (offline).

    Reload SillyTavern's page afterwards; open the panel from the extensions (wand) menu. The
    panel asks the gmtags of your Custom Endpoint (API Connections); gmtags serve answers
    SillyTavern on http://127.0.0.1:8000 or http://localhost:8000, others with --cors-origin.
    """
    try:
        target = install_extension(st_dir, all_users, user, data_root)
    except OSError as failure:
        fail(f"cannot install into {st_dir}: {failure.strerror or failure}")
    where = "every user" if all_users else f"user {user}"
    click.echo(f"gmtags: installed the SillyTavern extension {extension_version()} for {where} "
               f"in {target}")
    click.echo("Reload SillyTavern's page; open the panel from the extensions (wand) menu.")
