"""``gmtags serve --workers N`` end to end: real worker processes sharing a real redis-server
(issue 30). Which worker takes a request is forced by stopping the others (SIGSTOP: a stopped
process accepts nothing, so the kernel hands the connection to a running one)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from stage_servers import FakeModel, RedisServer, Stage, free_port, start_stage

from replay.stage.cli import serve

ROOT = Path(__file__).resolve().parents[3]
# this checkout's gmtags (the installed command may be another checkout's), in every worker too
GMTAGS = [sys.executable, "-c", "from replay.cli import main; main()"]
ENV = {**os.environ, "GMTAGS_KEY": "",
       "PYTHONPATH": os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])}
ADD_TORCH = 'Two torches. [inventory: action="add" item="Torch" count="2" who="Ada"]'
PAY = 'The innkeeper takes it. [inventory: action="pay" amount="3 pennies" who="Ada"]'
REPLIES = [ADD_TORCH, PAY, "Quiet.", PAY, 'Rope. [inventory: action="add" item="Rope" who="Ada"]']
ACCESS = re.compile(r"gmtags\.access\[(\d+)\]: game=(\S+) status=(\d+)")

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds the worker processes through /proc")


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
            if len(running) >= count and all(_accepting(pid) for pid in running):
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


def _accepting(pid: int) -> bool:
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


def _owner(port: int, pids: list[int]) -> int | None:
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
    with running.changed:  # bound and listening once it says so
        assert running.changed.wait_for(
            lambda: process.poll() is not None or any("serving" in line for line in running.lines),
            timeout=60) and process.poll() is None, running.lines
    assert "2 workers" in running.lines[-1] or workers != 2
    running.wait_for_workers(workers)
    return running


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def workers(fake_model: FakeModel, games_dir: Path, own_redis: RedisServer) -> Iterator[Workers]:
    running = serve_workers(fake_model, games_dir, own_redis.url)
    yield running
    for pid in running.workers():
        os.kill(pid, signal.SIGCONT)  # a test that failed while one was stopped
    running.process.terminate()
    running.process.wait(timeout=60)


@pytest.fixture
def reference(model: FakeModel, games_dir: Path) -> Iterator[Stage]:
    """One in-process stage with its own cache: what every answer must be."""
    running = start_stage(model, games_dir)
    yield running
    running.server.stop()


def _chat(model: FakeModel, name: str, turns: int) -> list[dict[str, Any]]:
    """A chat of ``turns`` player messages and the GM reply scripted for each (all but the
    last in the chat); its player messages name it, so no other chat shares its turns."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM of Harrow Vale."}]
    for index in range(turns):
        player = f"{name}, turn {index}"
        model.script[player] = REPLIES[index % len(REPLIES)]
        messages.append({"role": "user", "content": player})
        if index < turns - 1:
            messages.append({"role": "assistant", "content": model.script[player]})
    return messages


def _answer(document: dict[str, Any]) -> tuple[Any, Any]:
    return document["choices"], document["gmtags"]["answers"]


def test_two_workers_answer_a_chat_as_one_process_whichever_takes_each_request(
        workers: Workers, reference: Stage, model: FakeModel) -> None:
    """Each request of the chat goes to the worker that did not answer the one before (that one
    is stopped meanwhile): every answer is the one process's, and each worker resumes from the
    snapshots the other stored in Redis instead of folding the chat again."""
    before = len(workers.answered_by(0))
    last: int | None = None
    for turns in range(1, 9):
        messages = _chat(model, "the alternating chat", turns)
        if last is not None:
            os.kill(last, signal.SIGSTOP)
        try:
            document, _ = workers.chat(messages)
        finally:
            if last is not None:
                os.kill(last, signal.SIGCONT)
        answered = workers.answered_by(before + turns)[before + turns - 1]
        assert answered != last
        last = answered
        assert _answer(document) == _answer(reference.chat(messages).json())
        if turns > 1:
            # the previous request's two new turns were folded by the other worker
            assert document["gmtags"]["anchor"] == "cached"
            assert document["gmtags"]["reused_turns"] == 2 * (turns - 1) - 1
            assert document["gmtags"]["folded_turns"] == 2
    assert len(set(workers.answered_by(before + 8)[before:])) == 2


def test_a_killed_worker_loses_no_request_and_is_started_again(
        workers: Workers, reference: Stage, model: FakeModel) -> None:
    """Requests wait at the model in both workers; one worker is killed (SIGKILL) under them.
    Its clients see the connection break, send again, and get the very answer the others and
    the one process give; uvicorn's supervisor starts a new worker in the dead one's place."""
    chats = [_chat(model, f"chat {index}", 2 + index % 4) for index in range(10)]
    expected = [_answer(reference.chat(messages).json()) for messages in chats]
    alive = workers.wait_for_workers(2)
    model.waiting.clear()
    model.gate.clear()
    with ThreadPoolExecutor(len(chats)) as pool:
        sent = [pool.submit(workers.chat, messages, 3) for messages in chats]
        with model.arrived:
            assert model.arrived.wait_for(lambda: len(model.waiting) == len(chats), timeout=30)
        holders = [_owner(port, alive) for port in model.waiting]
        victim = max(alive, key=holders.count)  # the worker holding the most requests
        held = holders.count(victim)
        assert held >= 1
        os.kill(victim, signal.SIGKILL)
        model.gate.set()
        results = [future.result(timeout=60) for future in sent]
    assert [_answer(document) for document, _ in results] == expected
    assert sum(retried for _, retried in results) == held  # exactly its requests were sent again
    replacement = workers.wait_for_workers(2, besides=frozenset({victim}))
    assert victim not in replacement and set(alive) - {victim} <= set(replacement)
    # the new worker answers too (the others stopped), from what Redis holds
    others = [pid for pid in replacement if pid not in set(alive)]
    survivors = [pid for pid in replacement if pid in set(alive)]
    for pid in survivors:
        os.kill(pid, signal.SIGSTOP)
    try:
        document, _ = workers.chat(chats[0])
    finally:
        for pid in survivors:
            os.kill(pid, signal.SIGCONT)
    assert workers.answered_by(0)[-1] == others[0]
    assert _answer(document) == expected[0]
    assert document["gmtags"]["folded_turns"] == 0  # its snapshot came from Redis


def test_redis_restarted_mid_traffic_still_answers_correctly(
        workers: Workers, reference: Stage, own_redis: RedisServer, model: FakeModel) -> None:
    """Redis killed and started again empty while a chat goes on: every answer stays the one
    process's (the workers fold what they cannot find, and store again once it is back)."""
    for turns in range(1, 4):
        messages = _chat(model, "the restarted chat", turns)
        assert _answer(workers.chat(messages)[0]) == _answer(reference.chat(messages).json())
    own_redis.stop()
    for turns in range(4, 7):
        messages = _chat(model, "the restarted chat", turns)
        assert _answer(workers.chat(messages)[0]) == _answer(reference.chat(messages).json())
    own_redis.start()
    for turns in range(7, 10):
        messages = _chat(model, "the restarted chat", turns)
        assert _answer(workers.chat(messages)[0]) == _answer(reference.chat(messages).json())
    warnings = [line for line in workers.lines if "Redis unavailable" in line]
    assert warnings and all("redis://" not in line for line in warnings)


def test_workers_without_redis_are_refused_saying_why(games_dir: Path) -> None:
    result = CliRunner().invoke(serve, ["--upstream", "http://127.0.0.1:9/v1", "--games",
                                        str(games_dir), "--workers", "2"])
    assert result.exit_code == 2
    assert "--workers > 1 needs --redis" in result.output
    assert "each worker would keep its own snapshot cache" in result.output


def test_workers_on_a_port_in_use_exit_2_in_one_line(games_dir: Path,
                                                     own_redis: RedisServer) -> None:
    import socket

    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen(1)
        port = taken.getsockname()[1]
        result = CliRunner().invoke(serve, [
            "--upstream", "http://127.0.0.1:9/v1", "--games", str(games_dir),
            "--workers", "2", "--redis", own_redis.url, "--port", str(port)])
    assert result.exit_code == 2
    assert result.output.strip().splitlines() == [
        f"gmtags: cannot listen on 127.0.0.1:{port}: Address already in use"]
