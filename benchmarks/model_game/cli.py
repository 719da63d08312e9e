"""``benchmarks/model_game.py``: the command line, and one model game from set-up to figures."""

from __future__ import annotations

import argparse
import contextlib
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import textwrap
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import FrameType
from typing import Any, cast

import httpx

from replay.stage.textcomp.instruct import BUILT_IN

from .figures import Turn, differences, replayed_per_reply, run_figures, total_figures, turn_figures
from .model_server import MODELS, Cache, prepare_model, prepare_server, server_command
from .players import (
    PLAYERS,
    ROOT,
    ROUTES,
    Request,
    Script,
    Streaming,
    play,
    scripts,
    served_model,
)
from .processes import free_port, stop, tail, wait_ready
from .proxy import Proxy
from .report import examples, figures_table, progress, turn_json
from .stage import MODES, Stage, commit_of, folder_name, make_game, replay_chat, save_chat


def parser() -> argparse.ArgumentParser:
    about = argparse.ArgumentParser(
        prog="benchmarks/model_game.py",
        description="Play scripted players against a real model through a real gmtags serve, "
                    "and print what the model and the stage made of it.")
    about.add_argument("--model", choices=sorted(MODELS), default="qwen",
                       help="the packaged model llama-server serves (default: qwen)")
    about.add_argument("--upstream", metavar="URL",
                       help="your own OpenAI-compatible server's base URL instead (no set-up)")
    about.add_argument("--timings-per-token", action="store_true",
                       help="with --upstream, a llama.cpp server: ask it for timings in every "
                            "streamed chunk (the packaged server is always asked)")
    about.add_argument("--games", default="harrow,srd5", help="scripted games (default: both)")
    about.add_argument("--modes", default="after,mid-reply",
                       help="resolve modes: after, mid-reply (default: both)")
    about.add_argument("--stream", default="alternate",
                       help="yes, no or alternate (per turn), or a comma list of them: a run "
                            "of each (default: alternate)")
    about.add_argument("--route", choices=sorted(ROUTES), default="chat",
                       help="the stage's route the player uses: chat (chat completions, the "
                            "default), completion (llama.cpp's /completion) or v1-completions "
                            "(OpenAI text completions): a prompt written with --instruct")
    about.add_argument("--instruct", default="chatml",
                       help="the instruct template of a text completion route, a built-in "
                            "name (default chatml: Qwen's); also the game's \"instruct\"")
    about.add_argument("--turns", type=int, default=None,
                       help="play only the first N turns of each script")
    about.add_argument("--max-tokens", type=int, default=400, help="per reply (default 400)")
    about.add_argument("--seed", type=int, default=1, help="the sampling seed sent (default 1)")
    about.add_argument("--temperature", type=float, default=None,
                       help="sent with each request (default: the server's own)")
    about.add_argument("--option", action="append", default=[], metavar="KEY=JSON",
                       help="a game option for options.json, e.g. stateDepth=4 (repeatable)")
    about.add_argument("--gmtags-root", type=Path, default=ROOT, metavar="PATH",
                       help="run the stage (and the replay) from this checkout (default: this "
                            "one), e.g. an old commit's worktree for a 'before' run")
    about.add_argument("--replies", action="store_true",
                       help="print each reply, as the player got it, under its turn's line")
    about.add_argument("--json", type=Path, metavar="OUT",
                       help="write every figure and every turn here")
    about.add_argument("--context", type=int, default=16384,
                       help="llama-server's context in tokens (default 16384: 40 turns)")
    about.add_argument("--threads", type=int, default=2, help="llama-server's threads (2)")
    about.add_argument("--server-arg", action="append", default=[], metavar="ARG",
                       help="one more llama-server argument (repeatable), e.g. "
                            "--server-arg=--cache-reuse --server-arg=256")
    about.add_argument("--workdir", type=Path, metavar="DIR",
                       help="keep the game folders, saved chats and logs here (default: a "
                            "temporary folder, removed)")
    about.add_argument("--setup-only", action="store_true",
                       help="only set up llama-server and the model (download, build), then "
                            "say where they are")
    return about


def options(pairs: Sequence[str]) -> dict[str, Any]:
    """``KEY=JSON`` pairs as a dict (a value that is not JSON is taken as a string)."""
    found: dict[str, Any] = {}
    for pair in pairs:
        key, sep, value = pair.partition("=")
        if not sep or not key:
            raise SystemExit(f"--option {pair!r}: write KEY=JSON, e.g. stateDepth=4")
        try:
            found[key] = json.loads(value)
        except ValueError:
            found[key] = value
    return found


def _listed(value: str, allowed: Sequence[str], what: str) -> list[str]:
    items = [v.strip() for v in value.split(",") if v.strip()]
    wrong = [v for v in items if v not in allowed]
    if wrong or not items:
        raise SystemExit(f"--{what}: {', '.join(wrong) or '(none)'}; choose from "
                         f"{', '.join(allowed)}")
    return items


def say(text: str) -> None:
    print(text, file=sys.stderr, flush=True)


def _terminated(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt  # so that every process started is stopped on the way out


@contextlib.contextmanager
def model_server(args: argparse.Namespace, workdir: Path) -> Iterator[tuple[str, bool, str]]:
    """The model server's OpenAI base URL, whether to ask for per-token timings, and what it
    serves: the user's own, or llama-server started here (and stopped on the way out)."""
    if args.upstream:
        yield args.upstream, args.timings_per_token, args.upstream
        return
    cache = Cache.default()
    model = MODELS[args.model]
    server = prepare_server(cache, say=say)
    path = prepare_model(cache, model, say=say)
    if args.setup_only:
        yield "", True, f"{server} {path}"
        return
    port = free_port()
    log = workdir / "llama-server.log"
    command = server_command(server, path, port, args.context, args.threads, args.server_arg)
    say(f"starting llama-server with {model.label} on port {port} (log: {log})")
    with log.open("ab") as out:
        process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_ready(f"http://127.0.0.1:{port}/health", process, "llama-server", 600, tail(log))
        yield f"http://127.0.0.1:{port}/v1", True, f"{model.label} ({path.name})"
    finally:
        # It finishes the batch it is decoding before it exits (13 s of an interrupted first
        # prompt on 2 cores): it has nothing to save, so 5 s, then it is killed.
        stop(process, grace=5)


def main(argv: Sequence[str] | None = None) -> int:
    """Play, print, write; 130 when interrupted (Ctrl-C or SIGTERM), once every process it
    started has been stopped."""
    args = parser().parse_args(argv)
    # Ctrl-C, and SIGTERM, end the game through the with-blocks that stop the processes: set
    # here too because a shell starts a background job with SIGINT ignored.
    signal.signal(signal.SIGTERM, _terminated)
    signal.signal(signal.SIGINT, _terminated)
    try:
        return _main(args)
    except KeyboardInterrupt:
        say("interrupted: every process the game started is stopped")
        return 130


def _main(args: argparse.Namespace) -> int:
    games = _listed(args.games, sorted(p.stem for p in PLAYERS.glob("*.json")), "games")
    modes = _listed(args.modes, list(MODES), "modes")
    streams = cast(list[Streaming], _listed(args.stream, ["yes", "no", "alternate"], "stream"))
    extra = options(args.option)
    template = None
    if args.route != "chat":
        template = BUILT_IN.get(args.instruct)
        if template is None:
            raise SystemExit(f"--instruct {args.instruct!r}: choose from "
                             f"{', '.join(sorted(BUILT_IN))}")
        extra = {"instruct": args.instruct, **extra}
    played = scripts(games)
    with contextlib.ExitStack() as stack:
        if args.workdir:
            workdir = args.workdir.resolve()
            workdir.mkdir(parents=True, exist_ok=True)
        else:
            workdir = Path(tempfile.mkdtemp(prefix="model-game-"))
            stack.callback(shutil.rmtree, workdir, True)
        upstream, per_token, serving = stack.enter_context(model_server(args, workdir))
        if args.setup_only:
            print(serving)
            return 0
        proxy = Proxy(upstream, per_token)
        stack.callback(proxy.stop)
        folders = {}
        for script in played:
            for mode in modes:
                folders[script.game, mode] = make_game(workdir / "games", script.game, mode,
                                                       script.ruleset, script.party, extra)
        root = args.gmtags_root.resolve()
        stage = Stage(root, workdir / "games", proxy.url, workdir / "gmtags.log")
        stack.callback(stage.stop)
        say(f"gmtags serve from {root} on {stage.url} (log: {workdir / 'gmtags.log'})")
        client = stack.enter_context(httpx.Client(timeout=httpx.Timeout(None, connect=30)))
        first = folder_name(played[0].game, modes[0])
        name = served_model(client, f"{stage.url}/games/{first}/v1/models") if args.upstream \
            else "gm"
        request = Request(name, args.max_tokens, args.seed, args.temperature, args.route,
                          template)
        at_table = Table(client, stage, proxy, root, workdir, request, args.replies)
        runs = [at_table.run(script, folders[script.game, mode], mode, streaming, args.turns)
                for script in played for mode in modes for streaming in streams]
        total = total_figures([run["figures"] for run in runs])
        print(figures_table(runs, total))
        notes = examples(runs)
        if notes:
            print()
            print(notes)
        if args.json:
            args.json.write_text(json.dumps({
                "settings": {**{k: str(v) if isinstance(v, Path) else v
                                for k, v in vars(args).items()},
                             "serving": serving, "gmtagsCommit": commit_of(root),
                             "options": extra},
                "runs": runs, "total": total}, ensure_ascii=False, indent=1), encoding="utf-8")
            say(f"wrote {args.json}")
    return 0


@dataclass
class Table:
    """What every run of a game shares: the client, the stage, the proxy, where files go."""

    client: httpx.Client
    stage: Stage
    proxy: Proxy
    root: Path  # the checkout the stage (and the replay) runs from
    workdir: Path
    request: Request
    replies: bool = False  # print each reply under its turn's line

    def run(self, script: Script, folder: Path, mode: str, streaming: Streaming,
            turns: int | None) -> dict[str, Any]:
        """Play one script in one game folder; its figures, turns, the replay's differences,
        the chat."""
        route = self.request.route
        name = f"{script.game}/{mode}/{streaming}" + ("" if route == "chat" else f"/{route}")
        party = script.at_the_table()
        lines = script.lines[:turns] if turns else script.lines

        def said(turn: Turn) -> None:
            say(progress(name, len(lines), turn, turn_figures(turn, party)))
            if self.replies and turn.error is None:
                say(textwrap.indent(turn.text.strip() or "(nothing)", "    | "))

        played, messages = play(self.client, self.stage.chat_url(folder.name, ROUTES[route]),
                                script, lines,
                                streaming, self.request, self.proxy.recorder, said)
        figures = [turn_figures(turn, party) for turn in played]
        chat = save_chat(self.workdir / f"{name.replace('/', '-')}.json", messages)
        replies = [i for i, m in enumerate(messages) if m["role"] == "assistant"]
        answered = [t for t in played if t.error is None]
        differ: list[dict[str, Any]] | None = None
        failure = None
        try:
            replayed = replayed_per_reply(replay_chat(self.root, chat, folder), replies)
            differ = differences([t.number for t in answered], [t.answers for t in answered],
                                 replayed)
        except (RuntimeError, ValueError, subprocess.SubprocessError) as error:
            failure = str(error)
        return {"name": name, "game": script.game, "mode": mode, "stream": streaming,
                "figures": run_figures(figures, differ), "differences": differ,
                "replayError": failure,
                "turns": [turn_json(t, f) for t, f in zip(played, figures, strict=True)],
                "chat": messages}
