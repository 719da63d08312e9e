"""The stage's HTTP client for the model server: aiohttp behind the few calls the stage makes.

Why aiohttp and not httpx (the stage should add little over a bare proxy): on loopback, sending one
chat request and reading its answer took httpx's ``AsyncClient`` 1.5-1.6 ms of CPU and aiohttp's
``ClientSession`` 0.4-0.5 ms, for a 1.6 kB body and a 160 kB one alike (same model server,
same bytes). That millisecond was most of what the stage added over a bare proxy on a short
chat.

What the stage relies on, kept as it was with httpx:

- ``--timeout`` is how long the model server may stay silent: connecting, and between any two
  reads (``sock_read``), not the whole reply (``--deadline`` is that).
- The upstream URL's user-info is sent as Basic auth (over the client's own Authorization
  header, as httpx did); its query string is sent as written (``?key=…``).
- No redirects are followed; gzip and deflate answers are decoded.
- A proxy named by the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``NO_PROXY``), as httpx
  took it, is looked up once per model server host, not per request: aiohttp's own
  ``trust_env`` reads the environment (and ``~/.netrc``) on every request, about 1 ms each.
- Every failure to reach or read the model server is one :class:`UpstreamFailure`, which
  says whether it was a timeout.

A kept-alive connection may be closed by the model server just as a request is written on it
(uvicorn and llama.cpp's server close one after 5 idle seconds; a fold of a long chat takes
longer than that). Idle connections are let go after :data:`KEEP_ALIVE` seconds, before such
servers close them, and a request whose connection breaks before any answer came is sent once
more on a new connection, as nginx does with a kept-alive upstream connection.
"""

from __future__ import annotations

import asyncio
import base64
import codecs
import functools
import re
import urllib.request
from collections.abc import AsyncIterator, Mapping, Sequence
from typing import Any

import aiohttp
from yarl import URL

Content = bytes | Sequence[bytes | memoryview]  # a body, or the pieces it is sent as
KEEP_ALIVE = 4.0  # seconds an idle connection to the model server is kept for another request
MAX_LINE = 16 * 1024 * 1024  # characters of one event-stream line kept before it is a fault
_LINE_END = re.compile(r"\r\n|\r|\n")


class UpstreamFailure(Exception):
    """The model server could not be reached, or failed while answering."""

    def __init__(self, name: str, timed_out: bool) -> None:
        super().__init__(name)
        self.name = name  # the failure's kind, for logs and messages (never a URL)
        self.timed_out = timed_out


def _failure(error: BaseException) -> UpstreamFailure:
    return UpstreamFailure(type(error).__name__, isinstance(error, asyncio.TimeoutError))


_FAULTS = (aiohttp.ClientError, asyncio.TimeoutError, OSError)


def _broken_before_answer(error: BaseException) -> bool:
    """Whether a request failed because its connection broke before an answer came (a stale
    kept-alive one), not because the server cannot be reached or was too slow."""
    return isinstance(error, (aiohttp.ServerDisconnectedError, aiohttp.ClientOSError)) and \
        not isinstance(error, (aiohttp.ClientConnectorError, asyncio.TimeoutError))


class ModelReply:
    """The model server's answer once its status and headers came; the body read as asked."""

    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status = response.status
        self.headers: Mapping[str, str] = response.headers

    @property
    def media_type(self) -> str:
        """The content type without its parameters, in lower case ("" when none was sent)."""
        return self.headers.get("content-type", "").split(";")[0].strip().lower()

    async def chunks(self) -> AsyncIterator[bytes]:
        """The body's bytes as they come (decoded when the server compressed them)."""
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except _FAULTS as error:
            raise _failure(error) from None

    async def lines(self) -> AsyncIterator[str]:
        """The body's lines as text (UTF-8, bad bytes replaced), without their ends; a line
        ends at CR, LF or CRLF, as an event stream's do. A line longer than :data:`MAX_LINE`
        is a fault (a server that never ends one must not fill the memory)."""
        decoder = codecs.getincrementaldecoder("utf-8")("replace")
        line: list[str] = []  # the pieces of the line not ended yet (no line end in them)
        size = 0
        held_cr = False  # the text so far ended with a CR: maybe the first half of a CRLF
        final = False
        chunks = self.chunks()
        while not final:
            try:
                text = decoder.decode(await anext(chunks))
            except StopAsyncIteration:
                text, final = decoder.decode(b"", final=True), True
            if not text and not final:
                continue  # the chunk held only part of a character: nothing has changed
            if held_cr:
                yield "".join(line)  # the line ended at that CR (or its CRLF)
                line, size, held_cr = [], 0, False
                if text.startswith("\n"):
                    text = text[1:]
            # Only the new text is searched (the line so far holds no line end): each byte is
            # looked at once, however long a line grows.
            cut = len(text) - 1 if text.endswith("\r") and not final else len(text)
            at = 0
            for end in _LINE_END.finditer(text, 0, cut):
                yield "".join(line) + text[at:end.start()]
                line, size = [], 0
                at = end.end()
            if at < cut:
                line.append(text[at:cut])
                size += cut - at
            held_cr = cut < len(text)
            if size > MAX_LINE:
                raise UpstreamFailure("LineTooLong", False)
        if size:
            yield "".join(line)

    async def close(self) -> None:
        """Let go of the connection: back to the pool when the body was read to its end,
        else closed (the model server sees the request end, and stops writing)."""
        if self._response.content.at_eof():
            self._response.release()
        else:
            self._response.close()


class _Pieces(aiohttp.payload.Payload):
    """A request body sent as the pieces it is made of (a client's bytes around the GM
    section), each written as it is: not joined into one more copy of the body first."""

    _autoclose = True

    def __init__(self, pieces: Sequence[bytes | memoryview]) -> None:
        super().__init__(pieces, content_type="application/json")
        self._pieces = pieces
        self._size = sum(len(piece) for piece in pieces)

    def decode(self, encoding: str = "utf-8", errors: str = "strict") -> str:
        return b"".join(self._pieces).decode(encoding, errors)

    async def write(self, writer: Any) -> None:
        for piece in self._pieces:
            if piece:
                await writer.write(piece)

    async def write_with_length(self, writer: Any, content_length: int | None) -> None:
        if content_length is None:
            await self.write(writer)
            return
        left = content_length
        for piece in self._pieces:
            if left <= 0:
                return
            part = piece[:left]
            left -= len(part)
            if part:
                await writer.write(part)


class ModelClient:
    """Requests to the model server, on one connection pool per event loop (made on first
    use, inside the loop that serves the stage)."""

    def __init__(self, timeout: float, connect_timeout: float) -> None:
        self._timeout = aiohttp.ClientTimeout(total=None, connect=connect_timeout,
                                              sock_connect=connect_timeout, sock_read=timeout)
        self._session: aiohttp.ClientSession | None = None

    def _pool(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            # No limit of connections: a reply waiting for a free one would wait unbounded
            # by --timeout; how many replies run at once is the clients' and the model
            # server's to bound.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=0, keepalive_timeout=KEEP_ALIVE),
                timeout=self._timeout, auto_decompress=True)
        return self._session

    async def send(self, method: str, url: URL, headers: Mapping[str, str],
                   content: Content | None = None) -> ModelReply:
        """The answer to one request, once its headers came (raises :class:`UpstreamFailure`).
        The caller reads it and must :meth:`ModelReply.close` it."""
        headers = dict(headers)
        if url.user is not None or url.password is not None:
            # The URL's user-info is the model server's credential: it wins over an
            # Authorization header the client sent (aiohttp would refuse the two together).
            for name in [name for name in headers if name.lower() == "authorization"]:
                del headers[name]
            pair = f"{url.user or ''}:{url.password or ''}".encode("utf-8", "surrogatepass")
            headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
            url = url.with_user(None)
        data = content if content is None or isinstance(content, bytes) else _Pieces(content)
        for attempt in (1, 2):
            try:
                response = await self._pool().request(
                    method, url, data=data, headers=headers, allow_redirects=False,
                    proxy=env_proxy(url.scheme, url.host or ""))
            except _FAULTS as error:
                if attempt == 1 and _broken_before_answer(error):
                    continue  # once more, on a new connection (the broken one is dropped)
                raise _failure(error) from None
            return ModelReply(response)
        raise AssertionError("unreachable")  # pragma: no cover

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()


@functools.lru_cache(maxsize=64)
def env_proxy(scheme: str, host: str) -> str | None:
    """The proxy the environment names for ``scheme://host`` (None: none, or ``NO_PROXY``
    says this host goes direct)."""
    found = urllib.request.getproxies().get(scheme)
    if not found or urllib.request.proxy_bypass(host):
        return None
    return found


def endpoint(base: URL, route: str) -> URL:
    """``base`` with ``/route`` added to its path; its query string and user-info kept."""
    return base.with_path(base.raw_path.rstrip("/") + "/" + route, encoded=True,
                          keep_query=True)


__all__ = ["KEEP_ALIVE", "MAX_LINE", "Content", "ModelClient", "ModelReply", "UpstreamFailure",
           "endpoint", "env_proxy"]
