"""Issue 22, finding 8: a fold in a worker thread lets the event loop go first when it has
I/O waiting (replay.stage.courtesy). The soak benchmark shows the effect on small requests'
latency; these tests pin the mechanism."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections import deque
from collections.abc import Callable
from typing import Any

import pytest
from freezegun import freeze_time

from replay.stage import courtesy
from replay.stage.courtesy import MOST_HOPS, LoopFirst


class FakeSelector:
    def __init__(self) -> None:
        self.waiting = False

    def select(self, timeout: float) -> list[Any]:
        assert timeout == 0  # asking must never block the fold
        return [("key", 1)] if self.waiting else []


class FakeLoop:
    """What LoopFirst reads of a loop, run by hand: ``run_once`` is one loop iteration."""

    def __init__(self) -> None:
        self._selector = FakeSelector()
        self._ready: deque[Callable[[], None]] = deque()
        self.posted = 0

    def call_soon_threadsafe(self, callback: Callable[[], None]) -> None:
        self.posted += 1
        self._ready.append(callback)

    def call_soon(self, callback: Callable[[], None]) -> None:
        self._ready.append(callback)

    def run_once(self) -> None:
        for _ in range(len(self._ready)):
            self._ready.popleft()()


def test_without_io_waiting_the_fold_goes_on_at_once() -> None:
    loop = FakeLoop()
    pause = LoopFirst(loop)  # type: ignore[arg-type]
    for _ in range(100):
        pause()
    assert loop.posted == 0 and pause.turns == 0


def test_with_io_waiting_the_fold_waits_until_the_loop_has_nothing_ready(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(courtesy, "MOST_WAIT", 60.0)  # this test runs the loop by hand
    loop = FakeLoop()
    loop._selector.waiting = True
    ran: list[str] = []
    # work the loop had before the fold asked: a request's step that schedules its next step
    loop.call_soon(lambda: (ran.append("step 1"), loop.call_soon(lambda: ran.append("step 2"))))
    pause = LoopFirst(loop)  # type: ignore[arg-type]
    fold = threading.Thread(target=pause)
    fold.start()
    while not loop.posted:
        threading.Event().wait(0.001)
    loop.run_once()  # step 1, then the fold's check, which sees step 2 ready: one more hop
    assert ran == ["step 1"] and not pause._turn_over.is_set() and fold.is_alive()
    loop.run_once()  # step 2, then the check again: nothing ready, the fold goes on
    fold.join(timeout=5)
    assert ran == ["step 1", "step 2"] and not fold.is_alive()
    assert pause.turns == 1 and loop.posted == 1


def test_callbacks_ready_on_the_loop_are_work_waiting_too() -> None:
    """A loop with callbacks ready but no I/O is between two iterations, waiting for the GIL
    (a request's next step): it is given its turn as well."""
    loop = FakeLoop()
    loop.call_soon(lambda: None)
    pause = LoopFirst(loop)  # type: ignore[arg-type]
    assert pause._waiting()
    loop.run_once()
    assert not pause._waiting()


def test_a_loop_that_is_always_busy_gets_a_bounded_turn() -> None:
    """The check hops at most MOST_HOPS iterations, then lets the fold go on."""
    loop = FakeLoop()
    pause = LoopFirst(loop)  # type: ignore[arg-type]

    def busy() -> None:
        loop.call_soon(busy)  # always something more ready
    loop.call_soon(busy)
    pause._turn_over.clear()
    loop.call_soon(pause._check)
    for _ in range(MOST_HOPS + 2):
        loop.run_once()
    assert pause._turn_over.is_set() and pause._hops == MOST_HOPS


def test_after_a_turn_the_fold_works_as_long_as_it_waited() -> None:
    """A loop with I/O always waiting takes at most half of a fold's time: after a turn that
    took W seconds (here the whole MOST_WAIT, the loop never answering), no turn is handed
    for W seconds."""
    loop = FakeLoop()
    loop._selector.waiting = True
    with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen:
        pause = LoopFirst(loop)  # type: ignore[arg-type]
        waits: list[float] = []

        def wait(timeout: float) -> bool:
            waits.append(timeout)
            frozen.tick(timeout)
            return False
        pause._turn_over.wait = wait  # type: ignore[method-assign]
        pause()
        assert pause.turns == 1 and waits == [courtesy.MOST_WAIT]
        frozen.tick(courtesy.MOST_WAIT / 2)
        pause()  # within the fold's own share: no turn
        assert pause.turns == 1
        frozen.tick(courtesy.MOST_WAIT / 2 + 1e-6)
        pause()
        assert pause.turns == 2


def test_a_loop_without_a_selector_or_closed_is_never_waited_for() -> None:
    class Bare:
        pass
    pause = LoopFirst(Bare())  # type: ignore[arg-type]
    pause()
    assert pause.turns == 0
    closed = asyncio.new_event_loop()
    reader, writer = socket.socketpair()
    try:
        closed.add_reader(reader.fileno(), lambda: None)
        writer.send(b"x")
        pause = LoopFirst(closed)
        closed.close()
        pause()  # its selector is closed: nothing waits
        assert pause.turns == 0
    finally:
        reader.close()
        writer.close()


def test_asyncios_own_loop_is_asked_for_its_waiting_io_without_losing_it() -> None:
    """On this Python's event loop the selector is where LoopFirst looks: a socket with bytes
    waiting is seen (and is still there for the loop), the turn goes through the loop's own
    queue, and the loop, once it runs, lets the fold go on."""
    loop = asyncio.new_event_loop()
    reader, writer = socket.socketpair()
    seen: list[bytes] = []
    try:
        loop.add_reader(reader.fileno(), lambda: seen.append(reader.recv(10)))
        pause = LoopFirst(loop)
        pause()
        assert pause.turns == 0  # nothing waiting
        writer.send(b"hello")
        pause._not_before = 0.0
        pause()  # the loop is not running: the fold waits MOST_WAIT, then goes on
        assert pause.turns == 1 and not pause._turn_over.is_set()
        for _ in range(MOST_HOPS + 2):  # a few iterations: the check waits out the rest
            loop.run_until_complete(asyncio.sleep(0))
        assert seen == [b"hello"]  # asking took nothing away from the loop
        assert pause._turn_over.is_set()  # and the loop's turn ended with its queue empty
    finally:
        loop.close()
        reader.close()
        writer.close()
