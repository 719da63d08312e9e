"""A recording pass-through between gmtags and the model server.

The stage does not pass llama-server's ``timings`` on in every mode (a mid-reply turn is
several requests, some closed at a tag's ``]`` before they finish), so the prompt tokens a turn
cost are read here, at the model server's side: each request's last ``timings`` (``prompt_n``
evaluated, ``cache_n`` reused from the cache) and its finish. With ``per_token`` (the harness's
own llama-server) a streamed request asks for ``timings_per_token``, so that a request the stage
closes early has reported its prompt's figures with its first token.

Bytes pass through as they come; when the stage goes away mid-stream the request to the model
server is closed too, so the model stops writing, as it would without the proxy.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import socket
import threading
import time
from collections.abc import AsyncGenerator, AsyncIterator
from dataclasses import dataclass, field
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import Response, StreamingResponse
from starlette.routing import Route
from starlette.types import Receive, Scope, Send

DROPPED = frozenset({"host", "content-length", "transfer-encoding", "connection",
                     "accept-encoding"})


@dataclass
class Recorder:
    """The requests the model server got, in order; one dict per request (a leg)."""

    legs: list[dict[str, Any]] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def begin(self, path: str, stream: bool) -> dict[str, Any]:
        leg: dict[str, Any] = {"path": path, "stream": stream, "timings": None, "usage": None,
                               "finish": None, "status": None, "finished": False,
                               "began": time.monotonic()}
        with self.lock:
            self.legs.append(leg)
        return leg

    def since(self, count: int) -> list[dict[str, Any]]:
        """The legs after the first ``count`` (a copy, without the clock)."""
        with self.lock:
            return [{k: v for k, v in leg.items() if k != "began"} for leg in self.legs[count:]]

    def __len__(self) -> int:
        with self.lock:
            return len(self.legs)


def read_event(leg: dict[str, Any], data: str) -> None:
    """Note what one ``data:`` line of a stream says: timings, usage, finish."""
    try:
        chunk = json.loads(data)
    except ValueError:
        return
    if not isinstance(chunk, dict):
        return
    read_document(leg, chunk)


def read_document(leg: dict[str, Any], document: dict[str, Any]) -> None:
    """Note what a completion (or a chunk of one) says: timings, usage, finish."""
    if isinstance(document.get("timings"), dict):
        leg["timings"] = document["timings"]
    if isinstance(document.get("usage"), dict):
        leg["usage"] = document["usage"]
    choices = document.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict) \
            and choices[0].get("finish_reason"):
        leg["finish"] = choices[0]["finish_reason"]


class Relay(StreamingResponse):
    """A stream passed on; however it ends (the stage hung up included), its source is closed
    at once, so the model server stops writing instead of running on to its token limit."""

    body_iterator: AsyncGenerator[bytes, None]

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        finally:
            await self.body_iterator.aclose()


def proxy_app(upstream: str, recorder: Recorder, per_token: bool) -> Starlette:
    """Forward ``/v1/<rest>`` to ``<upstream>/<rest>`` (``upstream`` an OpenAI base URL), and
    any other path to the same path at the upstream's root (without its ``/v1``)."""
    base = httpx.URL(upstream.rstrip("/"))
    client = httpx.AsyncClient(timeout=httpx.Timeout(None, connect=30))

    async def forward(request: Request, root: bool = False) -> Response:
        rest = request.path_params["rest"]
        body = await request.body()
        stream = False
        if body and request.method == "POST":
            try:
                document = json.loads(body)
            except ValueError:
                document = None
            if isinstance(document, dict):
                stream = bool(document.get("stream"))
                if stream and per_token:
                    document["timings_per_token"] = True
                    body = json.dumps(document).encode()
        leg = recorder.begin(rest, stream)
        headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED}
        path = base.path.rstrip("/")
        if root:
            path = path.removesuffix("/v1")
        url = base.copy_with(path=f"{path}/{rest}")
        if request.url.query:
            url = url.copy_merge_params(httpx.QueryParams(request.url.query))
        sent = client.build_request(request.method, url, content=body, headers=headers)
        reply = await client.send(sent, stream=True)
        leg["status"] = reply.status_code
        kind = reply.headers.get("content-type", "")
        passed = {k: v for k, v in reply.headers.items() if k.lower() not in DROPPED}
        if "text/event-stream" not in kind:
            content = await reply.aread()
            await reply.aclose()
            try:
                document = json.loads(content)
                if isinstance(document, dict):
                    read_document(leg, document)
            except ValueError:
                pass
            leg["finished"] = True
            return Response(content, status_code=reply.status_code, headers=passed)

        async def relay() -> AsyncGenerator[bytes, None]:
            pending = b""
            try:
                async for piece in reply.aiter_raw():
                    pending += piece
                    *lines, pending = pending.split(b"\n")
                    for line in lines:
                        text = line.decode("utf-8", "replace").strip()
                        if text.startswith("data:") and text[5:].strip() != "[DONE]":
                            read_event(leg, text[5:].strip())
                    yield piece
                leg["finished"] = True
            finally:
                await reply.aclose()  # the stage went away: so does the model's request

        return Relay(relay(), status_code=reply.status_code, headers=passed)

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()

    async def forward_root(request: Request) -> Response:
        return await forward(request, root=True)

    return Starlette(routes=[Route("/v1/{rest:path}", forward,
                                   methods=["GET", "POST", "PUT", "DELETE"]),
                             # a backend's own routes (llama.cpp's /completion), at its root
                             Route("/{rest:path}", forward_root, methods=["GET", "POST"])],
                     lifespan=lifespan)


class Proxy:
    """The recording proxy served by uvicorn in a thread on a free loopback port."""

    def __init__(self, upstream: str, per_token: bool) -> None:
        self.recorder = Recorder()
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}/v1"
        app = proxy_app(upstream, self.recorder, per_token)
        self.server = uvicorn.Server(uvicorn.Config(app, log_level="warning"))
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.sock]))

    def stop(self) -> None:
        """Stop at once: a request still streaming (the game was interrupted) is cut, and so
        is the model server's work on it (uvicorn's report of the cut stream is not an error
        here, and is not shown)."""
        logging.getLogger("uvicorn.error").setLevel(logging.CRITICAL)
        self.server.should_exit = self.server.force_exit = True
        self.thread.join(timeout=10)
        self.sock.close()
