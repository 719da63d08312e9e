"""Chats as SillyTavern saves them: the corpus chats of every format written as a SillyTavern
``.jsonl`` and recorded by ``gmtags record`` (answers inline, as the stage leaves them), with
the game folders they are played in. What SillyTavern's page holds of such a file
(``getContext().chat``) is its lines after the header.
"""

from __future__ import annotations

import gc
import json
import shutil
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from helpers import FIXTURES

from replay import read_transcript
from replay.cli import main
from replay.transcript import Transcript

CORPUS = FIXTURES / "chats/corpus"
SEND_DATE = "July 4, 2024 3:00pm"


def corpus() -> dict[str, dict[str, str]]:
    """Each corpus chat's ruleset and party, relative to the corpus folder."""
    return json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))["chats"]


def game_name(entry: dict[str, str], per_swipe: bool = False) -> str:
    """The game folder a corpus chat is played in: one per ruleset and party."""
    name = Path(entry["ruleset"]).stem + "--" + Path(entry["party"]).stem
    return name + "--per-swipe" if per_swipe else name


def make_games(root: Path, per_swipe: bool = False) -> Path:
    """A games folder with a game per (ruleset, party) of the corpus; ``per_swipe``: also
    each with ``"dice": "per-swipe"`` in its party (a swipe rolls its own dice)."""
    for entry in corpus().values():
        for swiped in (False, True) if per_swipe else (False,):
            folder = root / game_name(entry, swiped)
            if folder.exists():
                continue
            folder.mkdir(parents=True)
            ruleset = CORPUS / entry["ruleset"]
            shutil.copy(ruleset, folder / "ruleset.json")
            for relative in json.loads(ruleset.read_text(encoding="utf-8")).get(
                    "catalogFiles", []):  # beside the ruleset, where it names them
                (folder / relative).parent.mkdir(parents=True, exist_ok=True)
                shutil.copy(ruleset.parent / relative, folder / relative)
            party = json.loads((CORPUS / entry["party"]).read_text(encoding="utf-8"))
            if swiped:
                party["dice"] = "per-swipe"
            (folder / "party.json").write_text(json.dumps(party), encoding="utf-8")
    return root


def sillytavern_chat(transcript: Transcript) -> list[dict[str, Any]]:
    """A transcript's messages as SillyTavern keeps them. Sessions run on as one chat (an ST
    file is one conversation); a system message or a host event (ST has none: its JSON as
    the text) is a narrator message, a hidden message ``is_system``."""
    player = transcript.player_name or "Ada"
    gm = transcript.gm_name or "Narrator"
    chat = []
    for _, _, message in transcript.messages():
        is_user = message.role == "player"
        text = message.text if message.event is None else json.dumps(message.event)
        entry: dict[str, Any] = {
            "name": message.name or (player if is_user else gm), "is_user": is_user,
            "is_system": message.hidden, "send_date": SEND_DATE, "mes": text,
            "extra": {"type": "narrator"} if message.role in ("system", "event") else {}}
        if message.swipes is not None:
            entry["swipe_id"] = message.swipe
            entry["swipes"] = list(message.swipes)
        chat.append(entry)
    return chat


def sillytavern_text(header: dict[str, Any], chat: list[dict[str, Any]]) -> str:
    """A SillyTavern chat file: the header line, then a message a line, as JSON.stringify
    writes them."""
    return "".join(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for value in [header, *chat])


def saved_chat(name: str, folder: Path, games: Path, per_swipe: bool = False) -> Path:
    """Corpus chat ``name`` saved as SillyTavern ``.jsonl`` in ``folder`` and recorded with
    its game's ruleset and party (``gmtags record``)."""
    entry = corpus()[name]
    game = games / game_name(entry, per_swipe)
    source = CORPUS / name
    if source.name.endswith(".st.jsonl"):
        text = source.read_text(encoding="utf-8")
    else:
        transcript = read_transcript(source)
        header = {"user_name": transcript.player_name or "Ada",
                  "character_name": transcript.gm_name or "Narrator",
                  "create_date": "2024-7-4@15h12m03s", "chat_metadata": {}}
        text = sillytavern_text(header, sillytavern_chat(transcript))
    plain = folder / f"{name}.plain.jsonl"
    plain.write_text(text, encoding="utf-8")
    saved = folder / f"{name}.{'per-swipe.' if per_swipe else ''}st.jsonl"
    gmtags("record", str(plain), "-r", str(game / "ruleset.json"), "-p",
           str(game / "party.json"), "-o", str(saved))
    return saved


def gmtags(*args: str) -> str:
    """The ``gmtags`` command run in this process (its standard output); the cycle collector
    it pauses for a one-shot command is left as it was."""
    collecting = gc.isenabled()
    try:
        result = CliRunner().invoke(main, list(args))
    finally:
        if collecting:
            gc.enable()
    assert result.exit_code == 0, result.output
    return result.stdout


def page_chat(saved: Path) -> list[Any]:
    """What SillyTavern's page holds of a saved chat: every line after the header."""
    lines = saved.read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines[1:] if line.strip()]


def replay_json(saved: Path, game: Path) -> dict[str, Any]:
    """``gmtags replay --format json`` of a saved chat in a game folder."""
    return json.loads(gmtags("replay", str(saved), "-r", str(game / "ruleset.json"), "-p",
                             str(game / "party.json"), "--format", "json"))
