"""Giving the memory a long-running stage has freed back to the system.

Every request allocates and frees buffers of a few kilobytes (the body, the GM section, the
state's canonical JSON) among the long-lived values of the snapshot store, and the C
allocator keeps the free pages between them: measured on a soak of growing chats, the
stage's resident memory grew about twice as fast as what it holds. Every
:data:`TRIM_EVERY` requests the stage asks glibc's allocator to return its free pages
(``malloc_trim``), in a worker thread (ctypes lets go of the GIL for the call, 1–5 ms). On a
system without glibc it does nothing.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import threading
from collections.abc import Callable
from functools import cache

TRIM_EVERY = 500  # requests between two trims


@cache
def _malloc_trim() -> Callable[[int], int] | None:
    name = ctypes.util.find_library("c")
    if name is None:
        return None
    try:
        trim: Callable[[int], int] = ctypes.CDLL(name).malloc_trim
    except (OSError, AttributeError):  # not glibc (musl, macOS)
        return None
    return trim


def give_back() -> bool:
    """Return the allocator's free pages to the system; whether it could be asked."""
    trim = _malloc_trim()
    if trim is None:
        return False
    trim(0)
    return True


class Every:
    """Counts requests: :meth:`due` is true once every ``every`` calls (thread-safe)."""

    def __init__(self, every: int = TRIM_EVERY) -> None:
        self.every = every
        self._count = 0
        self._lock = threading.Lock()

    def due(self) -> bool:
        with self._lock:
            self._count += 1
            if self._count < self.every:
                return False
            self._count = 0
            return True
