"""Reading what the model server sends within the reply's ``--deadline``: the deadline itself,
a whole (non-stream) answer read up to a bound, and the chat completion in it.

Shared by the answer of one request (:mod:`replay.stage.app`, :mod:`replay.stage.textcomp`)
and the continued requests of one reply answered mid-way (:mod:`replay.stage.midreply`); and
the client's hanging up while the model server has not answered yet (:func:`unless_gone`).
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

from starlette.requests import Request
from yarl import URL

from ..files import InputError
from .client import Content, ModelClient, ModelReply

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


async def read_request(request: Request, limit: int) -> bytes:
    """The client's request body; more than ``limit`` bytes raises :class:`InputError`."""
    size = 0
    chunks: list[bytes] = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise InputError(f"request body larger than {limit} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


async def read_reply(client: ModelClient, method: str, url: URL, content: Content | None,
                     headers: dict[str, str], deadline: Deadline) -> tuple[int, str, bytes]:
    """(status, content type, body) of a request answered whole (:func:`read_body`)."""
    reply = await client.send(method, url, headers, content)
    try:
        return reply.status, reply.headers.get("content-type", ""), await read_body(
            reply, deadline)
    finally:
        await reply.close()


class ClientGone(Exception):
    """The client hung up before the model answered."""


async def disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def unless_gone(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """``work``'s result, unless the client hangs up first: then ``work`` (the request to the
    model) is cancelled, and has finished cancelling, before :class:`ClientGone` is raised.
    The request's body must have been read: what ``receive`` gives after it is the hang-up."""
    call = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(disconnected(request))
    try:
        done, _ = await asyncio.wait({call, gone}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (call, gone):
            if not task.done():
                task.cancel()
        await asyncio.wait({call, gone})  # a cancelled call has closed its connection
    if call not in done:
        raise ClientGone
    return call.result()


__all__ = ["MAX_UPSTREAM_BODY", "ClientGone", "Deadline", "DeadlinePassed", "completion_of",
           "read_body", "read_reply", "read_request", "unless_gone", "within"]
