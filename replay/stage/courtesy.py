"""A fold in a worker thread lets the event loop go first.

A large fold runs in a worker thread so that it does not hold the event loop, but both share
the GIL: every time the loop woke for a small request's bytes it waited for the interpreter's
switch interval (1 ms) before it could run, and lost the GIL again at its next ``select``,
where the fold took it back. Small requests took about twice as long while a big body folded.

:class:`LoopFirst` is the fold's ``pause`` (called after each GM reply it folds). When the
loop has callbacks ready or its selector has I/O waiting, it hands the loop a turn and waits,
off the GIL, until the loop has nothing more ready (at most :data:`MOST_WAIT` seconds);
otherwise it only lets go of the GIL for a moment, as before. After a turn the fold works at
least as long as it waited before it gives another, so a loop that is always busy takes at
most half of a fold's time.

It reads two attributes asyncio keeps to itself, the loop's selector and its queue of ready
callbacks; on a loop without them (uvloop, another implementation) it does only the latter.
"""

from __future__ import annotations

import asyncio
import threading
import time
from typing import Any

MOST_WAIT = 0.005  # seconds a fold waits for the loop to have nothing ready, at most
MOST_HOPS = 64  # loop iterations the loop is given in one turn, at most


class LoopFirst:
    """The pause of a fold in a worker thread that lets ``loop`` run first when it has I/O
    waiting. One per fold (a fold is one thread)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self._loop = loop
        self._selector: Any = getattr(loop, "_selector", None)
        self._ready: Any = getattr(loop, "_ready", None)  # one deque for the loop's life
        self._turn_over = threading.Event()
        self._hops = 0
        self._not_before = 0.0  # no turn before this (perf_counter): the fold's own share
        self.turns = 0  # turns handed to the loop (for tests and curiosity)

    def _waiting(self) -> bool:
        """Whether the loop has callbacks ready (it is waiting for the GIL to run them), or
        its selector has I/O ready (level-triggered: asking takes nothing from the loop)."""
        if self._ready:
            return True  # callbacks ready: the loop is waiting for the GIL to run them
        if self._selector is None:
            return False
        try:
            return bool(self._selector.select(0))
        except (OSError, ValueError, RuntimeError):  # closed under us: the loop is ending
            return False

    def _check(self) -> None:
        """On the loop: once nothing else is ready (or after MOST_HOPS iterations), the
        fold may go on."""
        if self._ready and self._hops < MOST_HOPS:
            self._hops += 1
            self._loop.call_soon(self._check)
        else:
            self._turn_over.set()

    def __call__(self) -> None:
        began = time.perf_counter()
        if began < self._not_before or not self._waiting():
            time.sleep(0)  # lets a thread already waiting for the GIL take it
            return
        self._turn_over.clear()
        self._hops = 0
        try:
            self._loop.call_soon_threadsafe(self._check)
        except RuntimeError:  # the loop is closed: nobody to wait for
            return
        self.turns += 1
        self._turn_over.wait(MOST_WAIT)
        ended = time.perf_counter()
        self._not_before = ended + (ended - began)
