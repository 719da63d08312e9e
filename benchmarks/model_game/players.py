"""Scripted players: what they say, what a rules-following GM writes in answer, and playing it.

A script is data (``players/<game>.json``)::

    {"game": "harrow", "label": "Harrow Vale",
     "ruleset": "fixtures/rulesets/harrow.json", "party": "fixtures/parties/harrow.json",
     "system": "<the GM persona a front end's user would write>",
     "turns": [{"player": "I hand Bram my rope.",
                "expect": {"kind": "inventory", "action": "give", "item": "rope", "who": "Ada",
                           "to": "Bram the Quiet"}},
               {"player": "What lies ahead?", "expect": null}]}

``expect`` is the tag a GM that follows the rules writes in answer (kind and the attributes that
matter), a list of them when it takes several, or null where the rules leave it open. A tag's
``open`` object holds attributes the GM must write but may choose (a check's dc, a foe's name):
they are not matched, and with them the tag is one that a GM may write there (the tests play
a GM that writes exactly these). Paths are from the repository root.

The player keeps the chat as a client does: the system message, then each line and the reply's
``content`` as the stage returned it. On a text completion route (``--route completion`` or
``v1-completions``) it sends the chat as a Text Completion front end does: one prompt written
with the game's instruct template, the reply's sequence last.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

import httpx

from replay.stage.textcomp.instruct import Template

from .figures import Party, Turn
from .proxy import Recorder

ROOT = Path(__file__).resolve().parents[2]
PLAYERS = Path(__file__).resolve().parent / "players"
Streaming = Literal["yes", "no", "alternate"]
# --route: where the stage is asked, below /games/<game>/
ROUTES = {"chat": "v1/chat/completions", "completion": "completion",
          "v1-completions": "v1/completions"}


@dataclass(frozen=True)
class Line:
    """One thing the player says, and the tags a rules-following GM writes in answer."""

    player: str
    expect: tuple[dict[str, str], ...] | None
    # each expected tag with its open attributes filled in: one tag a GM may write here
    examples: tuple[dict[str, str], ...] = ()


@dataclass(frozen=True)
class Script:
    """A scripted player for one game."""

    game: str
    label: str
    ruleset: Path
    party: Path
    system: str
    lines: tuple[Line, ...]

    def at_the_table(self) -> Party:
        """The party's names and the player's character, from the party file."""
        party = json.loads(self.party.read_text(encoding="utf-8"))
        names = tuple(str(c["name"]) for c in party.get("characters", []))
        return Party(names, str(party.get("player") or (names[0] if names else "")))


def load_script(path: Path, root: Path = ROOT) -> Script:
    """Read a script file (see the module's docstring)."""
    document = json.loads(path.read_text(encoding="utf-8"))
    lines = []
    for turn in document["turns"]:
        expect = turn.get("expect")
        if isinstance(expect, dict):
            expect = [expect]
        if expect is None:
            lines.append(Line(str(turn["player"]), None))
            continue
        if not all(isinstance(e, dict) and "kind" in e for e in expect):
            raise ValueError(f"{path}: expect is a tag (with a kind), a list of them, or null: "
                             f"{turn!r}")
        matters = tuple({k: str(v) for k, v in e.items() if k != "open"} for e in expect)
        examples = tuple({**m, **{k: str(v) for k, v in e.get("open", {}).items()}}
                         for m, e in zip(matters, expect, strict=True))
        lines.append(Line(str(turn["player"]), matters, examples))
    return Script(document["game"], document.get("label", document["game"]),
                  root / document["ruleset"], root / document["party"], document["system"],
                  tuple(lines))


def scripts(games: Sequence[str], folder: Path = PLAYERS) -> list[Script]:
    """The scripts of ``games``, by name."""
    found = []
    for game in games:
        path = folder / f"{game}.json"
        if not path.exists():
            known = ", ".join(sorted(p.stem for p in folder.glob("*.json")))
            raise ValueError(f"no scripted player for game {game!r} (there are: {known})")
        found.append(load_script(path))
    return found


@dataclass(frozen=True)
class Request:
    """What the player's client sends besides the messages."""

    model: str = "gm"
    max_tokens: int = 400
    seed: int | None = None
    temperature: float | None = None

    route: str = "chat"
    template: Template | None = None  # the instruct template of a text completion route

    def body(self, messages: Sequence[Mapping[str, Any]], stream: bool) -> dict[str, Any]:
        if self.template is not None:
            # what a Text Completion front end sends: the prompt, its stop string, the bound
            body: dict[str, Any] = {"prompt": self.template.render(messages), "stream": stream,
                                    "stop": [self.template.stop] if self.template.stop else []}
            body["n_predict" if self.route == "completion" else "max_tokens"] = self.max_tokens
            if self.route == "completion":
                body["cache_prompt"] = True
            else:
                body["model"] = self.model
        else:
            body = {"model": self.model, "messages": list(messages),
                    "max_tokens": self.max_tokens, "stream": stream}
        if self.seed is not None:
            body["seed"] = self.seed
        if self.temperature is not None:
            body["temperature"] = self.temperature
        return body


def streamed(number: int, streaming: Streaming) -> bool:
    """Whether turn ``number`` (1-based) is streamed: ``alternate`` streams the odd ones."""
    return streaming == "yes" or (streaming == "alternate" and number % 2 == 1)


Chat = list[dict[str, Any]]


def play(client: httpx.Client, url: str, script: Script, lines: Sequence[Line],
         streaming: Streaming, request: Request, recorder: Recorder,
         say: Callable[[Turn], None] = lambda turn: None) -> tuple[list[Turn], Chat]:
    """Play ``lines`` against the chat completions at ``url``: the turns and the chat as the
    client keeps it (a turn that failed leaves its player line without a reply)."""
    messages: Chat = [{"role": "system", "content": script.system}]
    turns = []
    for number, line in enumerate(lines, start=1):
        messages.append({"role": "user", "content": line.player})
        turn = Turn(number, line.player, None if line.expect is None else list(line.expect),
                    streamed(number, streaming))
        before = len(recorder)
        began = time.monotonic()
        try:
            if turn.stream:
                _read_stream(client, url, request.body(messages, True), turn, began)
            else:
                _read_whole(client, url, request.body(messages, False), turn)
        except (httpx.HTTPError, ValueError) as failure:
            turn.error = f"{type(failure).__name__}: {failure}"
        turn.seconds = time.monotonic() - began
        turn.legs = recorder.since(before)
        if turn.error is None:
            messages.append({"role": "assistant", "content": turn.text})
        turns.append(turn)
        say(turn)
    return turns, messages


def _read_whole(client: httpx.Client, url: str, body: dict[str, Any], turn: Turn) -> None:
    response = client.post(url, json=body)
    document = response.json()
    if response.status_code != 200:
        turn.error = f"status {response.status_code}: {json.dumps(document)[:500]}"
        return
    turn.text, turn.finish = _reply_of(document)
    turn.metadata = document.get("gmtags")


def _read_stream(client: httpx.Client, url: str, body: dict[str, Any], turn: Turn,
                 began: float) -> None:
    pieces: list[str] = []
    with client.stream("POST", url, json=body) as response:
        if response.status_code != 200:
            turn.error = f"status {response.status_code}: {response.read().decode()[:500]}"
            return
        for line in response.iter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            chunk = json.loads(data)
            if "error" in chunk:
                turn.error = f"error event: {json.dumps(chunk['error'])[:500]}"
                continue
            if isinstance(chunk.get("gmtags"), dict):
                turn.metadata = chunk["gmtags"]
            content, finish = _reply_of(chunk)
            if content:
                if turn.first_byte is None:
                    turn.first_byte = time.monotonic() - began
                pieces.append(content)
            if finish:
                turn.finish = finish
    turn.text = "".join(pieces)


def _reply_of(document: Mapping[str, Any]) -> tuple[str, str | None]:
    """The text and finish reason of an answer or a stream event, in the shape of its route:
    a chat completion (``message``, ``delta``), an OpenAI text completion (``text``) or
    llama.cpp's (``content``, ``stop``)."""
    if "content" in document and "choices" not in document:
        finish = ("length" if document.get("stop_type") == "limit" else "stop") \
            if document.get("stop") else None
        return str(document.get("content") or ""), finish
    for choice in document.get("choices") or ():
        if not isinstance(choice, dict) or choice.get("index", 0) != 0:
            continue
        part = choice.get("message") or choice.get("delta") or {}
        text = part.get("content") if isinstance(part, dict) and "content" in part else \
            choice.get("text")
        return str(text or ""), choice.get("finish_reason")
    return "", None


def served_model(client: httpx.Client, models_url: str) -> str:
    """The first model the model server lists (through the stage), else "gm"."""
    try:
        listed = client.get(models_url).json().get("data") or []
    except (httpx.HTTPError, ValueError, AttributeError):
        return "gm"
    return str(listed[0].get("id")) if listed and isinstance(listed[0], dict) else "gm"
