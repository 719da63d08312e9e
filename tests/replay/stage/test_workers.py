"""``gmtags serve --workers N`` end to end: real worker processes sharing a real redis-server
(issue 30). Which worker takes a request is forced by stopping the others (SIGSTOP: a stopped
process accepts nothing, so the kernel hands the connection to a running one)."""

from __future__ import annotations

import os
import signal
import sys
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from stage_servers import (
    FakeModel,
    RedisServer,
    Stage,
    Workers,
    owner,
    serve_workers,
    start_stage,
    stop_workers,
)

from replay.stage.cli import serve

ADD_TORCH = 'Two torches. [inventory: action="add" item="Torch" count="2" who="Ada"]'
PAY = 'The innkeeper takes it. [inventory: action="pay" amount="3 pennies" who="Ada"]'
REPLIES = [ADD_TORCH, PAY, "Quiet.", PAY, 'Rope. [inventory: action="add" item="Rope" who="Ada"]']

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"),
                                reason="finds the worker processes through /proc")


@pytest.fixture(scope="module")
def own_redis() -> Iterator[RedisServer]:
    server = RedisServer()
    yield server
    server.stop()


@pytest.fixture(scope="module")
def workers(fake_model: FakeModel, games_dir: Path, own_redis: RedisServer) -> Iterator[Workers]:
    running = serve_workers(fake_model, games_dir, own_redis.url)
    yield running
    stop_workers(running)


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
            assert document["gmtags"]["reusedTurns"] == 2 * (turns - 1) - 1
            assert document["gmtags"]["foldedTurns"] == 2
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
        holders = [owner(port, alive) for port in model.waiting]
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
    assert document["gmtags"]["foldedTurns"] == 0  # its snapshot came from Redis


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
