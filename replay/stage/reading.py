"""Reading what the model server sends within the reply's ``--deadline``: the deadline itself,
a whole (non-stream) answer read up to a bound, and the chat completion in it.

Shared by the answer of one request (:mod:`replay.stage.app`) and the continued requests of
one reply answered mid-way (:mod:`replay.stage.midreply`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from .client import ModelReply

T = TypeVar("T")
MAX_UPSTREAM_BODY = 16 * 1024 * 1024  # bytes read of a model server's non-stream answer


class Deadline:
    """The ``--deadline`` of one reply: seconds left, on the stage's clock."""

    def __init__(self, clock: Callable[[], float], seconds: float | None) -> None:
        self._clock = clock
        self._end = None if seconds is None else clock() + seconds

    def left(self) -> float | None:
        return None if self._end is None else self._end - self._clock()

    @property
    def passed(self) -> bool:
        left = self.left()
        return left is not None and left <= 0


class DeadlinePassed(Exception):
    """The reply took longer than ``--deadline``."""


async def within(deadline: Deadline, work: Coroutine[Any, Any, T]) -> T:
    """``work``, cancelled with :class:`DeadlinePassed` when the reply's deadline passes."""
    left = deadline.left()
    if left is None:
        return await work
    if left <= 0:
        work.close()
        raise DeadlinePassed
    try:
        return await asyncio.wait_for(work, timeout=left)
    except TimeoutError:
        raise DeadlinePassed from None


async def read_body(reply: ModelReply, deadline: Deadline) -> bytes:
    """A model server's whole answer, up to :data:`MAX_UPSTREAM_BODY` bytes, the deadline
    checked between its chunks (:class:`DeadlinePassed`)."""
    chunks: list[bytes] = []
    size = 0
    async for chunk in reply.chunks():
        if deadline.passed:
            raise DeadlinePassed
        size += len(chunk)
        if size > MAX_UPSTREAM_BODY:
            break
        chunks.append(chunk)
    return b"".join(chunks)


def completion_of(raw: bytes) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """A chat completion document and its first choice's message, or None."""
    try:
        document = json.loads(raw)
        message = document["choices"][0]["message"]
        if not isinstance(message, dict) or not isinstance(message.get("content") or "", str):
            return None
    except (ValueError, KeyError, IndexError, TypeError, AttributeError, RecursionError):
        return None
    return document, message


__all__ = ["MAX_UPSTREAM_BODY", "Deadline", "DeadlinePassed", "completion_of", "read_body",
           "within"]
