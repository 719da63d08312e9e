"""Scaling out the stage (issue 30): worker processes sharing one Redis, and what Redis holds.

Prints:
- **throughput**: requests per second and p50/p99 latency of ``gmtags serve --redis URL`` with
  ``--workers 1`` and ``--workers 2``, 20 games × 2 chats that grow one turn a request (a
  chat's next request waits for its last answer, as a player does), against a fast scripted
  model; the same load sent straight to the model gives the latency the stage adds. The figure
  is the ratio of requests per second, 2 workers / 1 worker (goal: ≥ 1.6 on 2 cores). The load
  client and the model are deliberately thin (raw asyncio HTTP/1.1) and share the machine.
- **memory** (``--memory``): Redis ``used_memory`` (INFO memory) and the sum of ``MEMORY
  USAGE`` over every key, per stored turn, for the chats of fixtures/chats/corpus and for one
  10,000-turn chat, each folded into an empty redis-server.

Run from the repository root: .venv/bin/python benchmarks/scale.py [--seconds 8] [--memory]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
GAMES = 20
CHATS_PER_GAME = 2
LONGEST = 120  # turns a chat grows to before it starts again as a new chat
REPLIES = [
    'You find a torch. [inventory: action="add" item="Torch" who="Ada"]',
    'Ada listens. [skill_check: skill="sneak" dc="10" who="Ada"] Rain falls.',
    'Ada pays. [inventory: action="pay" amount="1 penny" who="Ada"]',
    "The road winds on past the old mill.",
]
ANSWERS = [json.dumps({"id": "x", "object": "chat.completion", "choices": [
    {"index": 0, "finish_reason": "stop",
     "message": {"role": "assistant", "content": reply}}]}).encode() for reply in REPLIES]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# --- a thin model server and a thin client -------------------------------------------------

async def _read_request(reader: asyncio.StreamReader) -> bytes | None:
    head = await reader.readuntil(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n"):
        if line[:15].lower() == b"content-length:":
            length = int(line[15:])
    return await reader.readexactly(length)


async def _model_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            body = await _read_request(reader)
            answer = ANSWERS[(body or b"").count(b'"user"') % len(ANSWERS)]
            writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                         b"content-length: %d\r\n\r\n%s" % (len(answer), answer))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        writer.close()


def model_process(port: int) -> subprocess.Popen[bytes]:
    """The scripted model in its own process: a reply by the count of player messages."""
    process = subprocess.Popen([sys.executable, __file__, "--model", str(port)])
    _wait_port(port)
    return process


async def _serve_model(port: int) -> None:
    server = await asyncio.start_server(_model_connection, "127.0.0.1", port)
    await server.serve_forever()


def _wait_port(port: int, seconds: float = 60) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            time.sleep(0.05)
    raise RuntimeError(f"nothing listens on {port}")


class Client:
    """One keep-alive HTTP/1.1 connection."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def post(self, path: str, body: bytes) -> bytes:
        for attempt in range(2):
            if self.writer is None:
                self.reader, self.writer = await asyncio.open_connection("127.0.0.1", self.port)
            assert self.reader is not None
            self.writer.write(b"POST %s HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n"
                              b"content-length: %d\r\n\r\n%s" % (path.encode(), len(body), body))
            try:
                await self.writer.drain()
                head = await self.reader.readuntil(b"\r\n\r\n")
            except (asyncio.IncompleteReadError, ConnectionError):
                self.writer.close()
                self.writer = None  # the server closed an idle connection: once more
                if attempt:
                    raise
                continue
            length = 0
            for line in head.split(b"\r\n"):
                if line[:15].lower() == b"content-length:":
                    length = int(line[15:])
            if not head.startswith(b"HTTP/1.1 200"):
                raise RuntimeError(head.split(b"\r\n")[0].decode())
            return await self.reader.readexactly(length)
        raise RuntimeError("unreachable")


async def load(port: int, seconds: float, warm: float,
               through_stage: bool) -> tuple[int, list[float]]:
    """(requests answered in ``seconds`` after ``warm`` seconds, their latencies in ms)."""
    latencies: list[float] = []
    answered = 0
    begin = time.perf_counter()
    measuring = begin + warm
    end = measuring + seconds

    async def chat(game: int, number: int) -> None:
        nonlocal answered
        client = Client(port)
        path = f"/games/game{game}/v1/chat/completions" if through_stage \
            else "/v1/chat/completions"
        generation = 0
        messages: list[dict[str, str]] = []
        while time.perf_counter() < end:
            if len(messages) >= 2 * LONGEST:
                generation, messages = generation + 1, []
            messages.append({"role": "user", "content": f"game {game} chat {number}.{generation} "
                                                        f"turn {len(messages) // 2}"})
            body = json.dumps({"model": "m", "messages": messages}).encode()
            sent = time.perf_counter()
            answer = json.loads(await client.post(path, body))
            done = time.perf_counter()
            messages.append({"role": "assistant",
                             "content": answer["choices"][0]["message"]["content"]})
            if measuring <= sent and done <= end:
                answered += 1
                latencies.append((done - sent) * 1000)

    await asyncio.gather(*(chat(g, c) for g in range(GAMES) for c in range(CHATS_PER_GAME)))
    return answered, latencies


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def games_folder() -> Path:
    root = Path(tempfile.mkdtemp(prefix="gmtags-scale-"))
    for number in range(GAMES):
        folder = root / f"game{number}"
        folder.mkdir()
        shutil.copy(ROOT / "fixtures" / "rulesets" / "harrow.json", folder / "ruleset.json")
        shutil.copy(ROOT / "fixtures" / "parties" / "harrow.json", folder / "party.json")
    return root


def redis_server(port: int) -> subprocess.Popen[bytes]:
    binary = shutil.which("redis-server")
    if binary is None:
        raise SystemExit("scale.py needs redis-server (apt-get install redis-server)")
    process = subprocess.Popen([binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no"], stdout=subprocess.DEVNULL)
    _wait_port(port)
    return process


ACCESS = re.compile(rb"gmtags\.access\[(\d+)\]: ")


def shares(log: Path) -> str:
    """How the requests of a run split between the workers (their access lines)."""
    counts = Counter(match.group(1) for match in map(ACCESS.search,
                                                     log.read_bytes().splitlines()) if match)
    total = sum(counts.values()) or 1
    return " / ".join(f"{100 * n / total:.0f} %" for n in sorted(counts.values(), reverse=True))


def stage_process(model_port: int, redis_port: int, games: Path,
                  workers: int, log: Path) -> tuple[subprocess.Popen[bytes], int]:
    port = free_port()
    process = subprocess.Popen(
        [sys.executable, "-c", "from replay.cli import main; main()", "serve", "--upstream",
         f"http://127.0.0.1:{model_port}/v1", "--games", str(games), "--port", str(port),
         "--redis", f"redis://127.0.0.1:{redis_port}/0", "--workers", str(workers)],
        cwd=ROOT, stderr=log.open("wb"),
        env={**os.environ, "GMTAGS_KEY": "", "PYTHONPATH": str(ROOT)})
    _wait_port(port)
    # every worker up: a request answered by each (a worker still starting waits in the queue)
    asyncio.run(load(port, 1.0, 1.0, True))
    return process, port


def throughput(seconds: float) -> None:
    games = games_folder()
    model_port, redis_port = free_port(), free_port()
    model = model_process(model_port)
    redis = redis_server(redis_port)
    try:
        answered, latencies = asyncio.run(load(model_port, seconds, 1.0, False))
        base50, base99 = percentile(latencies, 0.5), percentile(latencies, 0.99)
        print(f"straight to the model: {answered / seconds:7.0f} requests/s, "
              f"p50 {base50:.1f} ms, p99 {base99:.1f} ms ({GAMES * CHATS_PER_GAME} chats at once)")
        rates = {}
        for workers in (1, 2):
            subprocess.run(["redis-cli", "-p", str(redis_port), "flushall"], check=True,
                           stdout=subprocess.DEVNULL)
            log = games / f"stage-{workers}.log"
            stage, port = stage_process(model_port, redis_port, games, workers, log)
            try:
                answered, latencies = asyncio.run(load(port, seconds, 2.0, True))
            finally:
                stage.send_signal(signal.SIGTERM)
                stage.wait(timeout=60)
            rates[workers] = answered / seconds
            if workers > 1:
                print(f"requests per worker (--workers {workers}): {shares(log)}")
            print(f"--workers {workers}: {rates[workers]:7.0f} requests/s, p50 "
                  f"{percentile(latencies, 0.5):.1f} ms, p99 {percentile(latencies, 0.99):.1f} ms;"
                  f" added p50 {percentile(latencies, 0.5) - base50:.1f} ms, p99 "
                  f"{percentile(latencies, 0.99) - base99:.1f} ms")
        print(f"2 workers / 1 worker: {rates[2] / rates[1]:.2f}x requests/s "
              f"(goal >= 1.6x on 2 cores; {os.cpu_count()} CPUs here, shared with the model, "
              f"Redis and the load client)")
    finally:
        model.kill()
        redis.kill()
        shutil.rmtree(games, ignore_errors=True)


# --- memory ----------------------------------------------------------------------------------

def _redis_bytes(client: Any) -> tuple[int, int, int]:
    """(used_memory, sum of MEMORY USAGE over every key, keys)."""
    total = keys = 0
    for key in client.scan_iter(count=1000):
        total += client.memory_usage(key, samples=0) or 0
        keys += 1
    return int(client.info("memory")["used_memory"]), total, keys


def memory() -> None:
    import redis as redis_py

    from replay.cache import RedisStore, SnapshotCache, fold_turns
    from replay.files import load_party, load_ruleset, read_json
    from replay.formats import read_transcript
    from replay.transcript import Turn

    port = free_port()
    server = redis_server(port)
    client = redis_py.Redis(port=port)
    url = f"redis://127.0.0.1:{port}/0"
    try:
        index = read_json(ROOT / "fixtures" / "chats" / "corpus" / "index.json")
        rows: list[tuple[str, int, int, int]] = []
        for name, entry in sorted(index["chats"].items()):
            folder = ROOT / "fixtures" / "chats" / "corpus"
            game = load_ruleset(folder / entry["ruleset"])
            start = load_party(game, folder / entry["party"] if entry.get("party") else None)
            messages = [m for _, _, m in read_transcript(folder / name).messages()]
            turns = [Turn(at, m.role, m.text) for at, m in enumerate(messages)
                     if m.role in ("player", "gm") and not m.hidden]
            client.flushall()
            before = _redis_bytes(client)[0]
            fold_turns(game, start, turns, SnapshotCache(RedisStore(url)))
            used, usage, keys = _redis_bytes(client)
            rows.append((name, len(turns), used - before, usage))
        stored = sum(r[1] for r in rows)
        print("corpus (fixtures/chats/corpus), each chat into an empty Redis:")
        for name, count, used, usage in rows:
            print(f"  {name:34} {count:5} turns: {used / count:7.0f} B/turn used_memory, "
                  f"{usage / count:7.0f} B/turn MEMORY USAGE")
        print(f"  all {stored} turns: {sum(r[2] for r in rows) / stored:.0f} B/turn used_memory, "
              f"{sum(r[3] for r in rows) / stored:.0f} B/turn MEMORY USAGE")
        game = load_ruleset(ROOT / "fixtures" / "rulesets" / "harrow.json")
        start = load_party(game, ROOT / "fixtures" / "parties" / "harrow.json")
        turns = []
        for number in range(5_000):
            turns += [Turn(2 * number, "player", f"long chat turn {number}"),
                      Turn(2 * number + 1, "gm", REPLIES[number % len(REPLIES)])]
        client.flushall()
        before = _redis_bytes(client)[0]
        fold_turns(game, start, turns, SnapshotCache(RedisStore(url)))
        used, usage, keys = _redis_bytes(client)
        print(f"one 10,000-turn chat: {(used - before) / len(turns):.0f} B/turn used_memory, "
              f"{usage / len(turns):.0f} B/turn MEMORY USAGE ({keys} keys, "
              f"{(used - before) / 2**20:.1f} MiB)")
    finally:
        server.kill()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=8.0,
                        help="seconds each load is measured (after a warm-up)")
    parser.add_argument("--memory", action="store_true",
                        help="measure Redis memory per stored turn instead")
    parser.add_argument("--model", type=int, metavar="PORT", help=argparse.SUPPRESS)
    arguments = parser.parse_args()
    if arguments.model:
        asyncio.run(_serve_model(arguments.model))
    elif arguments.memory:
        memory()
    else:
        throughput(arguments.seconds)


if __name__ == "__main__":
    main()
