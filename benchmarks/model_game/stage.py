"""The real ``gmtags serve`` a model game plays through, and the replay of its saved chats.

The stage runs from a checkout (``--gmtags-root``, default this one) as
``python -c "from replay.cli import main; main()"`` with that checkout first on PYTHONPATH, so a
"before" game can be played on an old commit's worktree; the saved chats are replayed by the
same checkout's ``gmtags replay``, so live and replay are the same code.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import httpx

from .processes import free_port, stop, tail, wait_ready

MODES: dict[str, dict[str, Any]] = {
    "after": {"resolve": "after"},
    "mid-reply": {"resolve": "mid-reply", "upstreamContinues": "as-is"},
}


def gmtags_command(root: Path) -> tuple[list[str], dict[str, str]]:
    """The gmtags command of the checkout at ``root`` and the environment it runs in."""
    path = os.pathsep.join([str(root), *filter(None, [os.environ.get("PYTHONPATH")])])
    # First on sys.path even before the working folder, which "-c" puts ahead of PYTHONPATH:
    # run from this checkout, an old worktree's stage would otherwise import this one's code.
    code = f"import sys; sys.path.insert(0, {str(root)!r}); from replay.cli import main; main()"
    return ([sys.executable, "-c", code], {**os.environ, "PYTHONPATH": path, "GMTAGS_KEY": ""})


def commit_of(root: Path) -> str | None:
    """The commit checked out at ``root`` (with "+changes" when its tree differs from it)."""
    try:
        head = subprocess.run(["git", "-C", str(root), "rev-parse", "HEAD"], capture_output=True,
                              text=True, check=True, timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", str(root), "status", "--porcelain",
                                "--untracked-files=no"], capture_output=True, text=True,
                               check=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return None
    return head + ("+changes" if dirty else "")


def folder_name(game: str, mode: str) -> str:
    return f"{game}-{mode}"


def make_game(games: Path, game: str, mode: str, ruleset: Path, party: Path,
              options: Mapping[str, Any]) -> Path:
    """The game folder ``<game>-<mode>``: the ruleset (and the catalog files it names, beside
    it), the party, and ``options.json`` (the mode's options, then ``options``)."""
    folder = games / folder_name(game, mode)
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copy(ruleset, folder / "ruleset.json")
    for name in json.loads(ruleset.read_text(encoding="utf-8")).get("catalogFiles", []):
        (folder / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy(ruleset.parent / name, folder / name)
    shutil.copy(party, folder / "party.json")
    (folder / "options.json").write_text(json.dumps({**MODES[mode], **options}, indent=1))
    return folder


class Stage:
    """A running ``gmtags serve`` on a free loopback port."""

    def __init__(self, root: Path, games: Path, upstream: str, log: Path) -> None:
        command, env = gmtags_command(root)
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = log
        with log.open("ab") as out:
            self.process = subprocess.Popen(
                [*command, "serve", "--upstream", upstream, "--games", str(games), "--port",
                 str(self.port)], stdout=out, stderr=subprocess.STDOUT, env=env)
        try:
            wait_ready(self.url + "/healthz", self.process, "gmtags serve", 120, tail(log))
            broken = httpx.get(self.url + "/healthz", timeout=10).json().get("broken") or []
            if broken:
                raise RuntimeError(f"gmtags serve: game folders that do not load: {broken}\n"
                                   f"{tail(log)()}")
        except BaseException:
            self.stop()
            raise

    def chat_url(self, folder: str, route: str = "v1/chat/completions") -> str:
        """Where a game's replies are asked for (``route``: below ``/games/<game>/``)."""
        return f"{self.url}/games/{folder}/{route}"

    def stop(self) -> None:
        stop(self.process)


HERE = Path(__file__).resolve().parents[2]  # the checkout the harness itself runs from


def replay_chat(root: Path, chat: Path, folder: Path) -> dict[str, Any]:
    """The replay JSON of the saved chat with the game folder's ruleset and party, from the
    checkout at ``root``: through the public API when it is the harness's own (no second
    interpreter to start), else that checkout's ``gmtags replay --format json``."""
    if root.resolve() == HERE:
        import replay

        game = replay.load_ruleset(folder / "ruleset.json")
        result = replay.replay(game, replay.read_transcript(chat),
                               replay.load_party(game, folder / "party.json"))
        return result.to_json()
    return replay_command(root, chat, folder)


def replay_command(root: Path, chat: Path, folder: Path) -> dict[str, Any]:
    """``gmtags replay CHAT --format json`` of the checkout at ``root``."""
    command, env = gmtags_command(root)
    done = subprocess.run([*command, "replay", str(chat), "--ruleset",
                           str(folder / "ruleset.json"), "--party", str(folder / "party.json"),
                           "--format", "json"], capture_output=True, text=True, env=env,
                          timeout=900, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"gmtags replay {chat} failed ({done.returncode}): "
                           f"{done.stderr.strip()[-2000:]}")
    document = json.loads(done.stdout)
    assert isinstance(document, dict)
    return document


def save_chat(path: Path, messages: Sequence[Mapping[str, Any]]) -> Path:
    """The chat as a client keeps it, as an OpenAI ``messages`` array."""
    path.write_text(json.dumps(list(messages), ensure_ascii=False, indent=1), encoding="utf-8")
    return path
