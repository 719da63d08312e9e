"""The real-client check (issue 39): what a SillyTavern player sees holds only gmtags' answers.

Sets up and runs, all on loopback and stopped afterwards:
- a model server: llama.cpp's ``llama-server`` with a GGUF (``--llama-server``, ``--model``), or
  the one at ``--upstream URL``;
- ``gmtags serve`` in front of it with Harrow Vale (fixtures/rulesets/harrow.json and
  fixtures/parties/harrow.json), from ``--gmtags-root`` (default: this checkout);
- SillyTavern, from your own copy (``--sillytavern PATH``) or checked out of a git copy of it
  (``--snapshot GITDIR`` with ``--tag``) into ``~/.cache/gmtags-sillytavern/<tag>`` and
  ``npm install``-ed there, with a config and a data root of the check's own (settings: Chat
  Completion, Custom (OpenAI-compatible) at the stage, streaming on; a GM card; persona Ada);
- headless Chromium (Debian's ``/usr/bin/chromium``) on SillyTavern's page through Playwright:
  six player turns, one swipe and one regenerate, each reply waited for until it has streamed.

Then it reads what the player sees — the rendered text of every visible message and the saved
``.jsonl`` chat — and counts the answer parts gmtags did not write (benchmarks/sillytavern/
counting.py), replays the saved chat with the gmtags under test (``gmtags replay`` and
``gmtags regress``), and prints a report. Exit 0 when no answer part on the page or in the saved
chat was written by anyone but gmtags and the saved chat regresses clean; 1 otherwise; 2 when
the set-up failed.

Run from the repository root (needs node and npm, /usr/bin/chromium, Python Playwright from the
test extra; 15 to 20 minutes on 2 cores with Qwen2.5-Coder-1.5B Q4):

    .venv/bin/python benchmarks/sillytavern_check.py --snapshot PATH/TO/SillyTavern.git \\
        --llama-server PATH/TO/llama-server --model PATH/TO/model.gguf
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.append(str(HERE))  # last: a module of this folder (replay.py) is no package

from sillytavern import counting, prepare  # noqa: E402

ROOT = HERE.parent
MODEL_CACHE = Path.home() / ".cache" / "gmtags-model-game"
LLAMA_SERVER = (MODEL_CACHE / "src" / "llama_cpp_python-0.3.36" / "vendor" / "llama.cpp"
                / "build" / "bin" / "llama-server")
MODEL = MODEL_CACHE / "models" / "qwen2.5-coder-1.5b-instruct-q4.gguf"
MINIMUM = (1, 12, 6)

#: What the player says: a turn for each thing the rules decide (issue 39's scripted player).
TURNS = [
    "I pick up the torch lying by the mill door.",
    "I give my rope to Bram.",
    "I sneak past the sleeping watchdog by the gate.",
    "I search the mill cache under the floorboards and take what I find.",
    "I climb the crumbling wall of the watchtower.",
    "At the bridge I pay the toll keeper his toll.",
]
SWIPE_AFTER = 3  # swipe right on the reply to this turn
REGENERATE_AFTER = 5  # regenerate the reply to this turn


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_http(url: str, seconds: float, proc: subprocess.Popen[bytes] | None = None) -> None:
    """Wait until ``url`` answers 200 (or the process that should serve it has ended)."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if proc is not None and proc.poll() is not None:
            raise RuntimeError(f"{url}: the server ended with exit code {proc.returncode}")
        with (contextlib.suppress(OSError, urllib.error.URLError),
              urllib.request.urlopen(url, timeout=5) as response):
            if response.status == 200:
                return
        time.sleep(0.5)
    raise RuntimeError(f"{url} did not answer within {seconds:.0f} s")


class Processes:
    """The servers this check started; each in its own process group, stopped at the end."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.started: list[tuple[str, subprocess.Popen[bytes]]] = []

    def start(self, name: str, command: list[str], **kw: Any) -> subprocess.Popen[bytes]:
        out = (self.logs / f"{name}.log").open("wb")
        proc = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, **kw)
        self.started.append((name, proc))
        return proc

    def stop(self) -> None:
        for _, proc in reversed(self.started):
            if proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGTERM)
        for _, proc in reversed(self.started):
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()


# -- SillyTavern --------------------------------------------------------------------------------


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("-")[0].split(".") if part.isdigit())


def sillytavern_dir(args: argparse.Namespace) -> Path:
    """The SillyTavern install to run: ``--sillytavern``, or the cache folder of ``--tag``
    (checked out of ``--snapshot`` and ``npm install``-ed there when missing)."""
    if args.sillytavern:
        st = Path(args.sillytavern).resolve()
        if not (st / "server.js").exists():
            raise SystemExit(f"{st}: no server.js (not a SillyTavern folder)")
        prepare.npm_install(st)
        return st
    tag: str | None = args.tag
    git_dir = prepare.git_dir_of(Path(args.snapshot)) if args.snapshot else None
    if tag is None:
        if git_dir is None:
            cached = sorted((p for p in prepare.CACHE.glob("*") if (p / "server.js").exists()),
                            key=lambda p: version_tuple(p.name))
            if not cached:
                raise SystemExit("no SillyTavern: pass --sillytavern PATH or --snapshot GITDIR")
            tag = cached[-1].name
        else:
            tag = prepare.release_tags(git_dir)[-1]
    st = prepare.CACHE / tag
    if not (st / "server.js").exists():
        if git_dir is None:
            raise SystemExit(f"{st} is missing: pass --snapshot GITDIR to check {tag} out")
        log(f"checking SillyTavern {tag} out into {st}")
        st.parent.mkdir(parents=True, exist_ok=True)
        missing = prepare.export_tag(git_dir, tag, st)
        if missing:
            log(f"  the copy lacks {len(missing)} file(s), left out: {', '.join(missing)}")
    log(f"npm install in {st} (once)")
    prepare.npm_install(st)
    return st


# -- reading the results ----------------------------------------------------------------------


def saved_chat(data_root: Path) -> Path:
    chats = sorted((data_root / prepare.USER / "chats").rglob("*.jsonl"),
                   key=lambda p: p.stat().st_mtime)
    if not chats:
        raise RuntimeError(f"no saved chat under {data_root}")
    return chats[-1]


def gmtags_json(python: str, root: Path, *args: str) -> tuple[int, dict[str, Any]]:
    """Run ``gmtags ARGS --format json`` from ``root`` with ``python``; (exit code, its JSON)."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    done = subprocess.run([python, "-c", "from replay.cli import main; main()", *args,
                           "--format", "json"], capture_output=True, text=True, env=env)
    try:
        return done.returncode, json.loads(done.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f"gmtags {args[0]}: {done.stderr.strip()[-800:]}") from None


def streamed_reply(stream: str | None) -> tuple[str | None, dict[str, Any] | None]:
    """The reply text and the ``gmtags`` object of a streamed chat completion."""
    if stream is None:
        return None, None
    text, meta = [], None
    for line in stream.splitlines():
        if not line.startswith("data:"):
            continue
        body = line[5:].strip()
        if body == "[DONE]":
            continue
        try:
            event = json.loads(body)
        except json.JSONDecodeError:
            continue
        for choice in event.get("choices") or []:  # a chat chunk, or a text completion's
            text.append((choice.get("delta") or {}).get("content") or choice.get("text") or "")
        if "choices" not in event and isinstance(event.get("content"), str):
            text.append(event["content"])  # llama.cpp's own stream
        if isinstance(event.get("gmtags"), dict):
            meta = event["gmtags"]
    return "".join(text), meta


def access_lines(log_path: Path) -> list[str]:
    if not log_path.exists():
        return []
    return [line.strip() for line in log_path.read_text(errors="replace").splitlines()
            if "game=" in line and "status=" in line]


def report(result: dict[str, Any]) -> str:
    out = [
        f"SillyTavern {result['sillytavern']} · gmtags at {result['gmtags_root']} · "
        f"model {result['model']}",
        f"{'Text' if result.get('api') == 'text' else 'Chat'} Completion · player turns "
        f"{result['turns']}, swipes {result['swipes']}, regenerates {result['regenerates']}, "
        f"continues {result.get('continues', 0)}; GM replies visible {len(result['replies'])} "
        f"(the greeting included)",
        f"answer parts not written by gmtags: page {result['foreign_shown']}, "
        f"saved chat {result['foreign_saved']}",
        f"regress of the saved chat: {result['regress_answers']} answers compared, "
        f"{result['regress_differences']} differences, {result['regress_unanswered']} "
        f"tags without an answer part (exit {result['regress_exit']})",
        f"tags read {result['tags_read']}, refused {dict(result['refused']) or 0}; tag-like "
        f"heads gmtags does not read, shown as they were: {result['unread']}",
        f"live replies saved as streamed (reply or swipe): {result['live_equal']} of "
        f"{result['live_compared']}; model-written parts the stage took out: "
        f"{sum(len(item['takenOut']) for item in result['live'])}",
        f"seconds per reply: {', '.join(f'{s:.0f}' for s in result['seconds'])}",
    ]
    if result["errors"]:
        out.append("page errors and notices: " + " | ".join(result["errors"][:8]))
    for item in result["live"]:
        said = f" {item['said']!r}" if item["said"] else ""
        out.append(f"  {item['kind']}{said}: {item['seconds']:.0f} s, answers "
                   f"{item['answers']}, taken out {len(item['takenOut'])}"
                   + (f", cut {item['cut']}" if item["cut"] else "")
                   + (", replaced by the regenerate" if item.get("replaced")
                      else "" if item["saved"] else ", NOT saved as streamed"))
        for part in item["takenOut"]:
            out.append(f"      taken out: {str(part)[:160]}")
    for line in result["access"]:
        out.append(f"  stage: {line.split('gmtags.access: ')[-1]}")
    out.append("")
    for reply in result["replies"]:
        flags = []
        if reply["foreign_saved"]:
            flags.append(f"NOT GMTAGS' (saved): {reply['foreign_saved']}")
        if reply["foreign_shown"]:
            flags.append(f"NOT GMTAGS' (page): {reply['foreign_shown']}")
        if reply["unread"]:
            flags.append(f"heads not read: {reply['unread']}")
        if reply["differing"]:
            flags.append(f"differs from the engine: {reply['differing']}")
        out.append(f"--- reply #{reply['mesid']} (tags read {reply['tags_read']}, gmtags' "
                   f"answers {reply['written']}) {'; '.join(flags)}")
        out.append(reply["saved_text"].strip())
    out.append("")
    out.append("PASS" if result["passed"] else "FAIL")
    return "\n".join(out)


# -- the run ---------------------------------------------------------------------------------


def run(args: argparse.Namespace, workdir: Path) -> dict[str, Any]:
    from sillytavern import driver

    if not driver.CHROMIUM.exists():
        raise SystemExit("no /usr/bin/chromium: apt-get install -y chromium")
    gmtags_root = Path(args.gmtags_root).resolve()
    python = args.gmtags_python or str(gmtags_root / ".venv" / "bin" / "python")
    st = sillytavern_dir(args)
    version = prepare.version_of(st)
    if version_tuple(version) < MINIMUM:
        raise SystemExit(f"SillyTavern {version}: the check needs 1.12.6 or newer")
    logs = workdir / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    procs = Processes(logs)
    try:
        upstream = args.upstream
        model = upstream or Path(args.model).name
        if not upstream:
            port = free_port()
            log(f"starting llama-server on {port} with {Path(args.model).name}")
            llama = procs.start("llama-server", [
                args.llama_server, "-m", args.model, "--jinja", "-t", str(args.threads),
                "-c", str(args.context), "--host", "127.0.0.1", "--port", str(port)])
            wait_http(f"http://127.0.0.1:{port}/health", 600, llama)
            upstream = f"http://127.0.0.1:{port}/v1"

        games = workdir / "games" / "harrow"
        games.mkdir(parents=True, exist_ok=True)
        ruleset = gmtags_root / "fixtures" / "rulesets" / "harrow.json"
        party = gmtags_root / "fixtures" / "parties" / "harrow.json"
        shutil.copy(ruleset, games / "ruleset.json")
        shutil.copy(party, games / "party.json")
        options = json.loads(args.options) if args.options else {}
        if args.api == "text":
            options.setdefault("instruct", "chatml")
        if options:
            (games / "options.json").write_text(json.dumps(options))
        gm_port = free_port()
        log(f"starting gmtags serve on {gm_port} (from {gmtags_root})")
        env = {**os.environ, "PYTHONPATH": str(gmtags_root)}
        env.pop("GMTAGS_KEY", None)
        stage = procs.start("gmtags", [
            python, "-c", "from replay.cli import main; main()", "serve", "--upstream",
            upstream, "--games", str(games.parent), "--port", str(gm_port)], env=env)
        wait_http(f"http://127.0.0.1:{gm_port}/healthz", 120, stage)
        endpoint = f"http://127.0.0.1:{gm_port}/games/harrow" + (
            "" if args.api == "text" else "/v1")

        st_port = free_port()
        data_root = workdir / "st-data"
        prepare.write_data_root(data_root, st, endpoint, max_tokens=args.max_tokens,
                                instruct="ChatML" if args.api == "text" else None,
                                text_type=args.text_type)
        run_dir = prepare.shadow_dir(st, workdir / "st-run", st_port, data_root)
        log(f"starting SillyTavern {version} on {st_port}")
        server = procs.start("sillytavern", prepare.server_command(run_dir, st_port, data_root),
                             cwd=run_dir)
        wait_http(f"http://127.0.0.1:{st_port}/", 180, server)

        turns = TURNS[:args.turns]
        log(f"playing {len(turns)} turns in headless Chromium")
        played = driver.play(f"http://127.0.0.1:{st_port}/", prepare.GM_NAME, turns,
                             swipe_after=args.swipe_after, regenerate_after=args.regenerate_after,
                             continue_after=args.continue_after,
                             api="textgenerationwebui" if args.api == "text" else "openai",
                             reply_timeout=args.reply_timeout, workdir=workdir, log=log)
    finally:
        procs.stop()

    chat_path = saved_chat(data_root)
    kept = workdir / "chat.jsonl"
    shutil.copy(chat_path, kept)
    saved = counting.read_sillytavern_chat(kept.read_text().splitlines())
    _, replayed = gmtags_json(python, gmtags_root, "replay", str(kept), "--ruleset",
                              str(ruleset), "--party", str(party))
    regress_exit, regressed = gmtags_json(python, gmtags_root, "regress", str(kept),
                                          "--ruleset", str(ruleset), "--party", str(party))
    offset = message_offset(saved, replayed)
    replies = counting.count_replies(saved, played.messages, replayed, regressed, offset)

    saved_texts = {text.strip() for message in saved if not message.get("is_user")
                   for text in [message.get("mes", ""), *(message.get("swipes") or [])]}
    live = []
    for step in played.steps:
        text, meta = streamed_reply(step.streamed)
        meta = meta or {}
        # a continuation is saved as the end of the reply it continues
        saved_as = text is not None and (text.strip() in saved_texts or (
            step.kind == "continue" and bool(text.strip()) and
            any(saved.endswith(text.strip()) for saved in saved_texts)))
        live.append({
            "kind": step.kind, "said": step.text, "seconds": round(step.seconds, 1),
            "text": text, "saved": saved_as,
            "answers": len(meta.get("answers") or []),
            "takenOut": meta.get("takenOut") or [], "cut": meta.get("cut"),
        })
    for before, after in itertools.pairwise(live):
        if after["kind"] == "regenerate":
            before["replaced"] = True  # a regenerate deletes the reply it writes again
    live_compared = sum(item["text"] is not None and not item.get("replaced") for item in live)
    live_equal = sum(bool(item["saved"]) for item in live)
    refused: Counter[str] = Counter()
    for reply in replies:
        refused.update(reply.refused)
    summary = regressed.get("summary", {}) if isinstance(regressed.get("summary"), dict) else {}
    chats = regressed.get("chats", [])
    differences = sum(len(c.get("differences", [])) for c in chats)
    result: dict[str, Any] = {
        "sillytavern": version,
        "gmtags_root": str(gmtags_root),
        "model": model,
        "turns": sum(s.kind == "send" for s in played.steps),
        "swipes": sum(s.kind == "swipe" for s in played.steps),
        "regenerates": sum(s.kind == "regenerate" for s in played.steps),
        "continues": sum(s.kind == "continue" for s in played.steps),
        "api": args.api,
        "foreign_shown": sum(r.foreign_shown for r in replies),
        "foreign_saved": sum(r.foreign for r in replies),
        "regress_exit": regress_exit,
        "regress_answers": sum(c.get("answers", 0) for c in chats) or summary.get("answers", 0),
        "regress_differences": differences,
        "regress_unanswered": sum(len(c.get("unanswered", [])) for c in chats),
        "tags_read": sum(r.tags_read for r in replies),
        "unread": sum(len(r.unread) for r in replies),
        "refused": refused,
        "live_equal": live_equal,
        "live_compared": live_compared,
        "seconds": [s.seconds for s in played.steps],
        "live": live,
        "errors": played.errors,
        "access": access_lines(logs / "gmtags.log"),
        "chat": str(kept),
        "replies": [{
            "mesid": r.mesid, "tags_read": r.tags_read, "written": r.written,
            "differing": r.differing, "foreign_saved": r.foreign_saved, "unread": r.unread,
            "foreign_shown": r.foreign_shown, "saved_text": r.saved_text,
            "shown_text": r.shown_text,
        } for r in replies],
    }
    result["passed"] = (result["foreign_shown"] == 0 and result["foreign_saved"] == 0
                        and differences == 0 and regress_exit == 0
                        and result["turns"] == len(turns))
    return result


def message_offset(saved: list[dict[str, Any]], replayed: dict[str, Any]) -> int:
    """How ``gmtags replay`` numbers this chat's messages against the page's ``mesid``.

    Found from the first answered tag: the message (by index) whose text holds its raw text.
    """
    for answer in replayed.get("answers", []):
        raw = answer["tag"]["raw"]
        for offset in (0, 1):
            index = answer["message"] - offset
            if 0 <= index < len(saved) and raw in str(saved[index].get("mes", "")):
                return offset
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--sillytavern", metavar="PATH",
                        help="your SillyTavern folder (default: the cache folder of --tag)")
    parser.add_argument("--snapshot", metavar="GITDIR",
                        help="a git copy of SillyTavern to check --tag out of")
    parser.add_argument("--tag", help="the release to run (default: the newest in --snapshot, "
                                      "or the newest already in the cache)")
    parser.add_argument("--upstream", metavar="URL",
                        help="a running model server's OpenAI base URL (default: start one)")
    parser.add_argument("--llama-server", default=str(LLAMA_SERVER))
    parser.add_argument("--model", default=str(MODEL))
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--context", type=int, default=8192)
    parser.add_argument("--gmtags-root", default=str(ROOT),
                        help="the gmtags checkout to check (default: this one)")
    parser.add_argument("--gmtags-python",
                        help="its Python (default: GMTAGS_ROOT/.venv/bin/python)")
    parser.add_argument("--options", help="the game's options.json, as JSON text")
    parser.add_argument("--turns", type=int, default=len(TURNS))
    parser.add_argument("--swipe-after", type=int, default=SWIPE_AFTER,
                        help="swipe right on the reply to this turn (0: no swipe)")
    parser.add_argument("--regenerate-after", type=int, default=REGENERATE_AFTER,
                        help="regenerate the reply to this turn (0: none)")
    parser.add_argument("--continue-after", type=int, default=0,
                        help="press Continue on the reply to this turn (0: never)")
    parser.add_argument("--api", choices=["chat", "text"], default="chat",
                        help="SillyTavern's connection: chat (Chat Completion, Custom) or text "
                             "(Text Completion, llama.cpp, instruct mode with ChatML and the "
                             'game\'s "instruct": "chatml")')
    parser.add_argument("--text-type", choices=["llamacpp", "vllm"], default="llamacpp",
                        help="the Text Completion API type: llamacpp (POST /completion) or vllm "
                             "(POST /v1/completions, SillyTavern sends only the keys vLLM reads: "
                             "SillyTavern 1.12.6 sends llama.cpp a string dry_sequence_breakers "
                             "that a current llama-server refuses with 400)")
    parser.add_argument("--max-tokens", type=int, default=300)
    parser.add_argument("--reply-timeout", type=float, default=600)
    parser.add_argument("--workdir", help="keep everything here (default: a temporary folder)")
    parser.add_argument("--json", metavar="FILE", help="also write the result as JSON")
    args = parser.parse_args(argv)
    if not args.upstream and not Path(args.llama_server).exists():
        parser.error(f"{args.llama_server}: no llama-server (or pass --upstream URL)")
    with workspace(args.workdir) as workdir:
        try:
            result = run(args, workdir)
        except Exception as err:  # a set-up or page failure, reported
            log(f"set-up or play failed: {err} (logs in {workdir / 'logs'})")
            return 2
        print(report(result))
        if args.json:
            Path(args.json).write_text(json.dumps(result, indent=2, default=str))
    return 0 if result["passed"] else 1


@contextlib.contextmanager
def workspace(path: str | None) -> Iterator[Path]:
    if path:
        Path(path).mkdir(parents=True, exist_ok=True)
        yield Path(path).resolve()
        return
    with tempfile.TemporaryDirectory(prefix="gmtags-st-") as tmp:
        yield Path(tmp)


if __name__ == "__main__":
    sys.exit(main())
