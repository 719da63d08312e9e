"""Real servers on loopback for the stage tests: a scripted fake model, redis-server, the stage.

The fake model answers with the reply scripted for the last player message and streams it in
random chunk splits (seeded by the request, so a run is reproducible) that cut tags anywhere.
It can also hold a request (``hold``) and report, through thread events, when it started holding
and when it saw its caller go away.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import random
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import httpx
import pytest
import uvicorn
from helpers import system_program
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from replay.cache import MemoryStore, Store
from replay.stage.app import StageConfig, build_app, load_games

ROOT = Path(__file__).resolve().parents[3]
# this checkout's gmtags (the installed command may be another checkout's), in every worker too
GMTAGS = [sys.executable, "-c", "from replay.cli import main; main()"]
ENV = {**os.environ, "GMTAGS_KEY": "",
       "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
ACCESS = re.compile(r"gmtags\.access\[(\d+)\]: game=(\S+) status=(\d+)")
FIXTURES = ROOT / "fixtures"
DEFAULT_REPLY = "The road goes on."
Hold = Literal["request", "stream"]


def bound_socket() -> socket.socket:
    """A listening loopback socket on a free port: connections wait in its backlog.

    IPPROTO_TCP, not the default 0: asyncio turns Nagle off (TCP_NODELAY) only on accepted
    sockets whose proto says TCP; without it each response waits out a delayed ACK (~40 ms).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    return sock


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class RealTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on the system's monotonic clock, read where freezegun does not reach.

    A server thread lives on while a test freezes the clock (the session's fake model does).
    freezegun's ``real_asyncio`` swaps the loops' clock back only after it has frozen
    ``time.monotonic``, and before it unfreezes it: a timer set in between (uvicorn's 0.1 s
    tick) was due decades later, and that server never saw its stop (32 s of join timeouts
    at the end of the session)."""

    def time(self) -> float:
        return time.clock_gettime(time.CLOCK_MONOTONIC)


class ServerThread:
    """An ASGI app served by uvicorn in a thread on an already listening socket."""

    def __init__(self, app: Any) -> None:
        self.sock = bound_socket()
        self.port = int(self.sock.getsockname()[1])
        self.url = f"http://127.0.0.1:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        loop = RealTimeLoop()
        try:
            loop.run_until_complete(self.server.serve(sockets=[self.sock]))
        finally:
            loop.run_until_complete(loop.shutdown_asyncgens())
            loop.close()

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=2)
        if self.thread.is_alive():  # a client keeps a connection open: do not wait on it
            self.server.force_exit = True
            self.thread.join(timeout=30)
        self.sock.close()


def chunks(text: str, seed: str) -> list[str]:
    """``text`` cut at random places (1 to 7 characters a piece), reproducibly per seed."""
    rng = random.Random(hashlib.sha256(seed.encode()).digest())
    pieces, at = [], 0
    while at < len(text):
        step = rng.randint(1, 7)
        pieces.append(text[at:at + step])
        at += step
    return pieces


@dataclass
class FakeModel:
    """The scripted model server: replies by last player message, failures on demand."""

    script: dict[str, str] = field(default_factory=dict)
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    queries: list[str] = field(default_factory=list)
    fail: tuple[int, str] | None = None
    server: ServerThread | None = None
    # "request": answer nothing until the caller hangs up; "stream": send the headers and the
    # first piece of the reply, then nothing more until the stream is cancelled.
    hold: Hold | None = None
    held: threading.Event = field(default_factory=threading.Event)  # a request is being held
    released: threading.Event = field(default_factory=threading.Event)  # ... and its caller left
    # closed (cleared): every request waits here before it is answered, until the test sets it
    gate: threading.Event = field(default_factory=threading.Event)
    waiting: list[int] = field(default_factory=list)  # the caller's port of each request held
    arrived: threading.Condition = field(default_factory=threading.Condition)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/v1"

    def reply_for(self, body: dict[str, Any]) -> str:
        players = [m for m in body["messages"] if m.get("role") == "user"]
        last = players[-1]["content"] if players else ""
        return self.script.get(last, DEFAULT_REPLY)

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            self.headers.append(dict(request.headers))
            self.queries.append(request.url.query)
            if not self.gate.is_set():
                with self.arrived:
                    self.waiting.append(request.client.port if request.client else 0)
                    self.arrived.notify_all()
                await asyncio.to_thread(self.gate.wait)
            if self.hold == "request":
                self.held.set()
                while (await request.receive())["type"] != "http.disconnect":
                    pass  # the body is read: the next message is the caller hanging up
                self.released.set()
                return Response(status_code=499)
            if self.fail is not None:
                status, message = self.fail
                return JSONResponse({"error": {"message": message, "type": "fake"}},
                                    status_code=status)
            text = self.reply_for(body)
            if not body.get("stream"):
                return JSONResponse({
                    "id": "fake-1", "object": "chat.completion", "model": body.get("model"),
                    "choices": [{"index": 0, "finish_reason": "stop",
                                 "message": {"role": "assistant", "content": text}}]})
            seed = json.dumps(body["messages"], sort_keys=True)

            async def events() -> AsyncIterator[bytes]:
                base = {"id": "fake-1", "object": "chat.completion.chunk"}
                first = {**base, "choices": [{"index": 0, "delta": {"role": "assistant"},
                                              "finish_reason": None}]}
                yield f"data: {json.dumps(first)}\n\n".encode()
                if self.hold == "stream":
                    opening = {**base, "choices": [{"index": 0, "delta": {"content": text[:4]},
                                                    "finish_reason": None}]}
                    yield f"data: {json.dumps(opening)}\n\n".encode()
                    self.held.set()
                    try:
                        await asyncio.Event().wait()  # until the response is cancelled
                    finally:
                        self.released.set()
                for piece in chunks(text, seed):
                    chunk = {**base, "choices": [{"index": 0, "delta": {"content": piece},
                                                  "finish_reason": None}]}
                    yield f"data: {json.dumps(chunk)}\n\n".encode()
                last = {**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}
                yield f"data: {json.dumps(last)}\n\n".encode()
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        async def models(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": [{"id": "fake-gm", "object": "model"}]})

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/v1/models", models)])


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeModel]:
    model = FakeModel()
    model.server = ServerThread(model.app())
    yield model
    model.server.stop()


@pytest.fixture
def model(fake_model: FakeModel) -> Iterator[FakeModel]:
    """The session's fake model with a clean script and request log."""
    fake_model.script.clear()
    fake_model.requests.clear()
    fake_model.headers.clear()
    fake_model.queries.clear()
    fake_model.fail = None
    fake_model.hold = None
    fake_model.held.clear()
    fake_model.released.clear()
    fake_model.waiting.clear()
    fake_model.gate.set()
    yield fake_model
    fake_model.gate.set()


@pytest.fixture(scope="session")
def games_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two games: harrow (inline answers) and harrow-block (answers in a trailing block)."""
    return game_folders(tmp_path_factory.mktemp("games"), {
        "harrow": ("harrow", {}), "harrow-block": ("harrow", {"answers": "block"})})


def game_folders(root: Path, games: dict[str, tuple[str, dict[str, Any]]]) -> Path:
    """A games folder: per game, the fixture ruleset and party of that name and its options."""
    for name, (ruleset, options) in games.items():
        folder = root / name
        folder.mkdir()
        shutil.copy(FIXTURES / "rulesets" / f"{ruleset}.json", folder / "ruleset.json")
        shutil.copy(FIXTURES / "parties" / f"{ruleset}.json", folder / "party.json")
        (folder / "options.json").write_text(json.dumps(options))
    return root


class RedisServer:
    """A throwaway redis-server on a free loopback port, nothing saved to disk."""

    def __init__(self) -> None:
        binary = system_program("redis-server", "the shared snapshot cache's tests")
        self.binary = binary
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.start()

    def start(self) -> None:
        """Start (again) on this server's port, empty."""
        self.process = subprocess.Popen(
            [self.binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"], stdout=subprocess.PIPE, text=True)
        assert self.process.stdout is not None
        for line in self.process.stdout:  # blocks until the server says it is ready
            if "Ready to accept connections" in line:
                break
        else:
            raise RuntimeError("redis-server did not start")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
        self.process.wait(timeout=30)
        if self.process.stdout is not None:
            self.process.stdout.close()

    def flush(self) -> None:
        """Empty every database, as a restart without persistence would."""
        import redis

        redis.Redis.from_url(self.url).flushall()


class RedisCluster:
    """A throwaway Redis Cluster of three primaries (no replicas) on free loopback ports, each
    node a ``redis-server --cluster-enabled yes`` in its own folder, nothing saved to disk."""

    def __init__(self, folder: Path) -> None:
        binary = system_program("redis-server", "the Redis Cluster tests")
        cli = system_program("redis-cli", "the Redis Cluster tests (redis-cli --cluster create)")
        self.ports = [free_port() for _ in range(3)]
        self.processes: list[subprocess.Popen[str]] = []
        for port in self.ports:
            home = folder / str(port)
            home.mkdir()
            self.processes.append(subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--cluster-enabled", "yes",
                 "--cluster-port", str(free_port()),  # not port + 10000: that may pass 65535
                 "--cluster-config-file", str(home / "nodes.conf"), "--save", "",
                 "--appendonly", "no", "--dir", str(home), "--logfile", str(home / "log")]))
        for port in self.ports:
            _answering(port)
        subprocess.run([cli, "--cluster", "create", *(f"127.0.0.1:{p}" for p in self.ports),
                        "--cluster-replicas", "0", "--cluster-yes"],
                       check=True, capture_output=True, timeout=60)
        import redis

        for port in self.ports:  # every node agrees the cluster is up before a test uses it
            node = redis.Redis(port=port)
            for _ in range(600):
                if b"cluster_state:ok" in node.execute_command("CLUSTER", "INFO"):
                    break
                threading.Event().wait(0.05)
            node.close()
        self.url = f"redis+cluster://127.0.0.1:{self.ports[0]},127.0.0.1:{self.ports[1]}"

    def flush(self) -> None:
        """Empty every node."""
        import redis

        for port in self.ports:
            redis.Redis(port=port).flushall()

    def stop(self) -> None:
        for process in self.processes:
            process.kill()
            process.wait(timeout=30)


class RedisSentinel:
    """A redis-server and one Sentinel (``redis-server --sentinel``) watching it as ``gm``."""

    def __init__(self, folder: Path) -> None:
        self.master = RedisServer()
        binary = self.master.binary
        self.port = free_port()
        config = folder / "sentinel.conf"
        config.write_text(f"port {self.port}\nbind 127.0.0.1\ndir {folder}\n"
                          f"logfile {folder / 'sentinel.log'}\n"
                          f"sentinel monitor gm 127.0.0.1 {self.master.port} 1\n")
        self.process = subprocess.Popen([binary, str(config), "--sentinel"])
        _answering(self.port)
        self.url = f"redis+sentinel://127.0.0.1:{self.port}/gm"

    def stop(self) -> None:
        self.process.kill()
        self.process.wait(timeout=30)
        self.master.stop()


def _answering(port: int) -> None:
    """Wait (up to 30 s) until the redis-server on ``port`` answers PING."""
    import redis

    client = redis.Redis(port=port, socket_connect_timeout=0.2, socket_timeout=0.2)
    try:
        for _ in range(300):
            try:
                if client.ping():
                    return
            except redis.ConnectionError:
                threading.Event().wait(0.1)
    finally:
        client.close()
    raise RuntimeError(f"redis-server on port {port} did not start")


@pytest.fixture(scope="session")
def redis_server() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@dataclass
class Stage:
    """A stage served in a thread, with a client for it."""

    server: ServerThread
    store: Store

    def url(self, path: str) -> str:
        return self.server.url + path

    def chat(self, messages: list[dict[str, Any]], game: str = "harrow",
             **extra: Any) -> httpx.Response:
        return httpx.post(self.url(f"/games/{game}/v1/chat/completions"),
                          json={"model": "fake-gm", "messages": messages, **extra}, timeout=60)


def start_stage(model: FakeModel, games_dir: Path, store: Store | None = None,
                **options: Any) -> Stage:
    store = store if store is not None else MemoryStore()
    if "upstream" not in options:
        options["upstream"] = model.url
    config = StageConfig(games=load_games(games_dir), store=store, **options)
    return Stage(ServerThread(build_app(config)), store)


@pytest.fixture
def stage(model: FakeModel, games_dir: Path) -> Iterator[Stage]:
    running = start_stage(model, games_dir)
    yield running
    running.server.stop()


def serve_process(args: list[str], env: dict[str, str] | None = None) -> tuple[subprocess.Popen[str],
                                                                         str, list[str]]:
    """A real ``gmtags serve`` process: (process, base URL, the lines it wrote so far)."""
    port = free_port()
    process = subprocess.Popen([str(Path(sys.executable).parent / "gmtags"), "serve", *args, "--port", str(port)],
                               stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "GMTAGS_KEY": "", **(env or {})})
    assert process.stderr is not None
    lines: list[str] = []
    for line in process.stderr:
        lines.append(line)
        if "serving" in line:
            break
    url = f"http://127.0.0.1:{port}"
    for _ in range(300):
        try:
            httpx.get(url + "/healthz", timeout=5)
            break
        except httpx.HTTPError:
            continue
    return process, url, lines


def stop_process(process: subprocess.Popen[str], lines: list[str]) -> str:
    process.terminate()
    assert process.stderr is not None
    rest = process.stderr.read()
    process.wait(timeout=30)
    return "".join(lines) + rest


@dataclass
class Workers:
    """A running ``gmtags serve --workers N``, its standard error read as it comes."""

    process: subprocess.Popen[str]
    url: str
    lines: list[str] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            with self.changed:
                self.lines.append(line)
                self.changed.notify_all()

    def answered_by(self, requests: int) -> list[int]:
        """The pid of the worker that answered each chat request so far, waiting (up to 30 s)
        for ``requests`` access lines."""
        with self.changed:
            self.changed.wait_for(lambda: len(self._access()) >= requests, timeout=30)
            return [int(m.group(1)) for m in self._access()]

    def _access(self) -> list[re.Match[str]]:
        return [m for m in map(ACCESS.search, self.lines) if m]

    def workers(self) -> list[int]:
        """The worker processes now (the spawned children, not multiprocessing's tracker)."""
        found = []
        pid = self.process.pid
        for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
            try:
                command = Path(f"/proc/{child}/cmdline").read_bytes()
            except FileNotFoundError:
                continue
            if b"multiprocessing.spawn" in command:
                found.append(int(child))
        return sorted(found)

    def wait_for_workers(self, count: int, besides: frozenset[int] = frozenset()) -> list[int]:
        """The workers, once ``count`` of them, none in ``besides``, accept connections (the
        supervisor starts a dead one again); up to 60 s."""
        for _ in range(1200):
            running = [pid for pid in self.workers() if pid not in besides]
            if len(running) >= count and all(accepting(pid) for pid in running):
                return running
            threading.Event().wait(0.05)
        raise AssertionError(f"{count} workers did not come up: {self.workers()}")

    def chat(self, messages: list[dict[str, Any]], retries: int = 0) -> tuple[dict[str, Any], int]:
        """The answer to one chat request on a new connection, and how many times it was
        sent again after the connection broke (a worker killed under it)."""
        for attempt in range(retries + 1):
            try:
                response = httpx.post(self.url + "/games/harrow/v1/chat/completions",
                                      json={"model": "fake-gm", "messages": messages},
                                      timeout=60)
            except httpx.TransportError:
                if attempt == retries:
                    raise
                continue
            assert response.status_code == 200, response.text
            return response.json(), attempt
        raise AssertionError("unreachable")


def accepting(pid: int) -> bool:
    """Whether a worker is serving: its event loop's epoll watches the listening socket
    besides the loop's own wake-up socket (uvicorn adds it once the app has started)."""
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            if os.readlink(f"/proc/{pid}/fd/{fd}") == "anon_inode:[eventpoll]":
                watched = Path(f"/proc/{pid}/fdinfo/{fd}").read_text().count("tfd:")
                if watched >= 2:
                    return True
    except (FileNotFoundError, ProcessLookupError):
        return False
    return False


def owner(port: int, pids: list[int]) -> int | None:
    """Which of ``pids`` holds the loopback TCP connection whose local port is ``port``."""
    inodes = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            columns = row.split()
            if int(columns[1].rsplit(":", 1)[1], 16) == port:
                inodes.add(f"socket:[{columns[9]}]")
    for pid in pids:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            try:
                if os.readlink(f"/proc/{pid}/fd/{fd}") in inodes:
                    return pid
            except FileNotFoundError:
                continue
    return None


def serve_workers(model: FakeModel, games_dir: Path, redis_url: str,
                  workers: int = 2) -> Workers:
    port = free_port()
    process = subprocess.Popen(
        [*GMTAGS, "serve", "--upstream", model.url, "--games", str(games_dir), "--port",
         str(port), "--redis", redis_url, "--workers", str(workers)],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV)
    running = Workers(process, f"http://127.0.0.1:{port}")
    threading.Thread(target=running.read, daemon=True).start()
    try:
        with running.changed:  # bound and listening once it says so
            assert running.changed.wait_for(
                lambda: process.poll() is not None or any(
                    "serving" in line for line in running.lines),
                timeout=60) and process.poll() is None, running.lines
        assert "2 workers" in running.lines[-1] or workers != 2
        running.wait_for_workers(workers)
    except BaseException:
        stop_workers(running)  # never leave a supervisor behind starting workers
        raise
    return running


def stop_workers(running: Workers) -> None:
    """Stop the supervisor and its workers: politely, then for sure."""
    children = running.workers()
    for pid in children:
        os.kill(pid, signal.SIGCONT)  # a test that failed while one was stopped
    running.process.terminate()
    try:
        running.process.wait(timeout=60)
    except subprocess.TimeoutExpired:
        running.process.kill()
        running.process.wait(timeout=10)
    for pid in children:
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
