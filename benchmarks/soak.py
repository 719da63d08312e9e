"""A soak of a real ``gmtags serve`` process: memory over many requests, and fairness (issue 22).

Prints:
- **memory**: the stage's resident set size (RSS, from /proc) after 2,000, 4,000 and 6,000
  requests of growing chats in 20 games (3 chats a game, 50 requests at once, each request one
  turn longer than its chat's last), against a fast scripted model; goal: flat once warm, less
  than 10 % growth from 4,000 to 6,000. Beside it, what the snapshot store holds (its own
  count, from /healthz) and the RSS besides it: the store fills towards its bound
  (``--cache-mb``) as it should, and the rest is what must stay flat.
- **fairness**: the p50 latency of small requests (new 2-turn chats) with the stage idle, then
  while it folds a 10,000-tag body (a new 2,500-reply chat each time, so nothing is cached),
  three times in turn, 100 requests a phase; goal: within 2x of idle.

Run from the repository root: .venv/bin/python benchmarks/soak.py [--requests 6000] [--cache-mb N]
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

ROOT = Path(__file__).resolve().parent.parent
GMTAGS = str(Path(sys.executable).parent / "gmtags")
GAMES = 20
CHATS_PER_GAME = 3
AT_ONCE = 50
REPLIES = [
    'You find a torch. [inventory: action="add" item="Torch" who="Ada"]',
    'Ada listens. [skill_check: skill="sneak" dc="10" who="Ada"] Rain falls.',
    'Ada pays. [inventory: action="pay" amount="1 penny" who="Ada"]',
    "The road winds on past the old mill.",
]
BIG_REPLY = " ".join(['[inventory: action="add" item="Torch" who="Ada"]',
                      '[skill_check: skill="sneak" dc="10" who="Ada"]',
                      '[inventory: action="give" item="Torch" who="Ada" to="Bram the Quiet"]',
                      '[inventory: action="earn" amount="1 penny" who="Ada"]'])


async def _model_chat(request: Request) -> Response:
    body = await request.json()
    turn = sum(1 for m in body["messages"] if m.get("role") == "user")
    return JSONResponse({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": REPLIES[turn % len(REPLIES)]}}]})


def _model(ready: Any) -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(512)
    ready.put(sock.getsockname()[1])
    app = Starlette(routes=[Route("/v1/chat/completions", _model_chat, methods=["POST"])])
    uvicorn.Server(uvicorn.Config(app, log_level="warning")).run(sockets=[sock])


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def games_folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gmtags-soak-"))
    for number in range(GAMES):
        folder = root / f"game{number}"
        folder.mkdir()
        shutil.copy(ROOT / "fixtures" / "rulesets" / "harrow.json", folder / "ruleset.json")
        shutil.copy(ROOT / "fixtures" / "parties" / "harrow.json", folder / "party.json")
    return root


Mark = tuple[int, float, float]  # requests done, RSS MB, MB the snapshot store holds


async def soak(url: str, pid: int, requests: int) -> list[Mark]:
    chats: dict[tuple[int, int], list[dict[str, Any]]] = {
        (g, c): [] for g in range(GAMES) for c in range(CHATS_PER_GAME)}
    order = [key for _ in range(requests // len(chats) + 1) for key in chats][:requests]
    locks = {key: asyncio.Lock() for key in chats}
    gate = asyncio.Semaphore(AT_ONCE)
    done = 0
    marks: list[Mark] = []
    # Idle connections are dropped before uvicorn's 5 s keep-alive ends them: a request sent
    # on a connection the server is closing that moment fails with a ReadError.
    async with httpx.AsyncClient(timeout=300, limits=httpx.Limits(
            max_connections=AT_ONCE, keepalive_expiry=2)) as client:
        async def one(key: tuple[int, int]) -> None:
            nonlocal done
            async with gate, locks[key]:  # a chat's turns one after the other, as a player's
                history = chats[key]
                history.append({"role": "user",
                                "content": f"game {key[0]} chat {key[1]} turn {len(history)}"})
                reply = await client.post(f"{url}/games/game{key[0]}/v1/chat/completions",
                                          json={"model": "m", "messages": history})
                reply.raise_for_status()
                history.append({"role": "assistant",
                                "content": reply.json()["choices"][0]["message"]["content"]})
                done += 1
                if done % 2000 == 0:
                    at, rss = done, rss_mb(pid)
                    held = (await client.get(f"{url}/healthz")).json()["snapshots"]["bytes"]
                    marks.append((at, rss, held / 2**20))

        await asyncio.gather(*(one(key) for key in order))
    return marks


FAIRNESS_ROUNDS = 3  # idle, then busy, this many times
FAIRNESS_SAMPLES = 100  # small requests timed in each phase


def big_chat(salt: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = []
    for index in range(2_500):  # 4 tags a reply: 10,000 tags
        messages += [{"role": "user", "content": f"big {salt} turn {index}"},
                     {"role": "assistant", "content": BIG_REPLY}]
    messages.append({"role": "user", "content": "go"})
    return messages


async def fairness(url: str) -> tuple[float, float, int]:
    """(idle p50 ms, p50 ms while big bodies fold, big folds done meanwhile)."""
    async with httpx.AsyncClient(timeout=300) as client:
        async def small(number: int) -> float:
            started = time.perf_counter()
            reply = await client.post(f"{url}/games/game1/v1/chat/completions", json={
                "model": "m", "messages": [{"role": "user", "content": f"small {number}"}]})
            reply.raise_for_status()
            return time.perf_counter() - started

        # Idle and busy in turn, FAIRNESS_ROUNDS times: on a shared machine the idle latency
        # alone moved by half within minutes, and one phase of each compared two moments.
        idle: list[float] = []
        busy: list[float] = []
        bigs = 0
        for round_ in range(FAIRNESS_ROUNDS):
            idle += [await small(round_ * 10_000 + i) for i in range(FAIRNESS_SAMPLES)]
            stop = asyncio.Event()

            async def big(stop: asyncio.Event = stop, round_: int = round_) -> None:
                nonlocal bigs
                salt = round_ * 1_000
                while not stop.is_set():
                    salt += 1
                    reply = await client.post(f"{url}/games/game0/v1/chat/completions",
                                              json={"model": "m", "messages": big_chat(salt)})
                    reply.raise_for_status()
                    bigs += 1

            task = asyncio.create_task(big())
            await asyncio.sleep(0.5)  # the first big body is being read and folded
            for index in range(FAIRNESS_SAMPLES):
                busy.append(await small(round_ * 10_000 + 5_000 + index))
            stop.set()
            await task
    return statistics.median(idle) * 1000, statistics.median(busy) * 1000, bigs


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--requests", type=int, default=6_000)
    parser.add_argument("--cache-mb", type=int, default=None,
                        help="the stage's --cache-mb (default: the stage's own default)")
    arguments = parser.parse_args()
    requests = arguments.requests
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    model = context.Process(target=_model, args=(ready,), daemon=True)
    model.start()
    model_url = f"http://127.0.0.1:{ready.get(timeout=120)}/v1"
    port = free_port()
    log_path = Path(tempfile.mkdtemp(prefix="gmtags-soak-")) / "stage.log"
    print(f"the stage's log: {log_path}")
    log = log_path.open("wb")
    stage = subprocess.Popen([GMTAGS, "serve", "--upstream", model_url, "--games",
                              str(games_folder()), "--port", str(port),
                              "--max-body", str(64 * 1024 * 1024),
                              *(["--cache-mb", str(arguments.cache_mb)]
                                if arguments.cache_mb else [])],
                             stderr=log, env={**os.environ, "GMTAGS_KEY": ""})
    url = f"http://127.0.0.1:{port}"
    for _ in range(600):
        try:
            httpx.get(url + "/healthz", timeout=5)
            break
        except httpx.HTTPError:
            time.sleep(0.1)
    try:
        print(f"stage RSS at start: {rss_mb(stage.pid):.0f} MB")
        marks = asyncio.run(soak(url, stage.pid, requests))
        for done, rss, held in marks:
            print(f"after {done:>6,} requests: RSS {rss:6.0f} MB, of which the snapshot "
                  f"store holds {held:5.1f} MB; the rest {rss - held:6.1f} MB")
        if len(marks) >= 3:
            (before, rss0, held0), (after, rss1, held1) = marks[-2], marks[-1]
            print(f"growth from {before:,} to {after:,}: RSS {(rss1 / rss0 - 1) * 100:+.1f} % "
                  f"(goal: under 10 %); the store {held1 - held0:+.1f} MB; the rest "
                  f"{((rss1 - held1) / (rss0 - held0) - 1) * 100:+.1f} %")
        idle, busy, bigs = asyncio.run(fairness(url))
        print(f"small requests p50: idle {idle:.1f} ms, while 10,000-tag bodies fold "
              f"{busy:.1f} ms ({busy / idle:.2f}x of idle; goal: at most 2x; {bigs} big "
              f"folds meanwhile)")
    finally:
        stage.terminate()
        stage.wait(timeout=30)
        log.close()
        model.terminate()


if __name__ == "__main__":
    main()
