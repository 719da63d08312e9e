"""The stage's client for the model server (replay/stage/client.py): lines as an event stream
ends them, a bounded line, failures as one kind, credentials and the query string as sent, the
environment's proxy. Real loopback servers where the network is part of it."""

from __future__ import annotations

import asyncio
import itertools
import re
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from stage_servers import ServerThread, free_port
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route
from yarl import URL

from replay.stage import client as client_module
from replay.stage.client import ModelClient, ModelReply, UpstreamFailure, endpoint, env_proxy


class _Content:
    def __init__(self, chunks: list[bytes]) -> None:
        self._chunks = chunks

    async def iter_any(self) -> AsyncIterator[bytes]:
        for chunk in self._chunks:
            yield chunk


class _Response:
    """What ModelReply reads of aiohttp's response: status, headers, content."""

    def __init__(self, chunks: list[bytes]) -> None:
        self.status = 200
        self.headers: dict[str, str] = {"content-type": "Text/Event-Stream; charset=utf-8"}
        self.content = _Content(chunks)


def _lines(chunks: list[bytes]) -> list[str]:
    async def read() -> list[str]:
        return [line async for line in ModelReply(_Response(chunks)).lines()]  # type: ignore[arg-type]
    return asyncio.run(read())


def test_lines_end_at_lf_crlf_and_cr_even_split_across_chunks() -> None:
    assert _lines([b"data: a\r", b"\ndata: b\rdata: c\n\n", b"data: d"]) == \
        ["data: a", "data: b", "data: c", "", "data: d"]
    assert _lines([b"one\r\n", b"\r\n", b"two\r"]) == ["one", "", "two"]
    assert _lines([]) == [] and _lines([b""]) == []
    # a CR, then a character cut in two: the CR still ends its (empty) line
    assert _lines([b"\r", b"\xc3", b"\xa9"]) == ["", "\u00e9"]


def test_a_character_split_across_chunks_is_whole_and_bad_bytes_are_replaced() -> None:
    smile = "\U0001F600".encode()
    assert _lines([b"data: " + smile[:2], smile[2:] + b"\xff\n"]) == ["data: \U0001F600\ufffd"]


def test_a_line_that_never_ends_is_a_fault_not_unbounded_memory(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client_module, "MAX_LINE", 100)
    with pytest.raises(UpstreamFailure) as failure:
        _lines([b"x" * 60] * 3)
    assert failure.value.name == "LineTooLong" and not failure.value.timed_out


def test_the_media_type_is_read_without_parameters() -> None:
    assert ModelReply(_Response([])).media_type == "text/event-stream"  # type: ignore[arg-type]


def test_endpoint_keeps_the_query_string_and_user_info() -> None:
    base = URL("http://u:p%40ss@host:8080/v1/?key=a%2Bb")
    assert str(endpoint(base, "chat/completions")) == \
        "http://u:p%40ss@host:8080/v1/chat/completions?key=a%2Bb"


def test_the_environments_proxy_is_taken_unless_no_proxy_says_otherwise(
        monkeypatch: pytest.MonkeyPatch) -> None:
    env_proxy.cache_clear()
    monkeypatch.setenv("http_proxy", "http://proxy.example:3128")
    monkeypatch.setenv("no_proxy", "direct.example")
    try:
        assert env_proxy("http", "model.example") == "http://proxy.example:3128"
        assert env_proxy("http", "direct.example") is None
        assert env_proxy("https", "model.example") is None
    finally:
        env_proxy.cache_clear()


def _model(handler: Any) -> ServerThread:
    return ServerThread(Starlette(routes=[Route("/v1/{path:path}", handler,
                                                methods=["GET", "POST"])]))


def test_user_info_is_basic_auth_over_the_clients_header_and_the_query_is_sent() -> None:
    seen: list[tuple[str, str]] = []

    async def handler(request: Request) -> Response:
        await request.body()
        seen.append((request.headers.get("authorization", ""), request.url.query))
        return JSONResponse({"ok": True})

    model = _model(handler)
    base = URL(model.url.replace("http://", "http://gm:pa55@") + "/v1?key=q")

    async def call() -> int:
        client = ModelClient(5, 5)
        try:
            reply = await client.send("POST", endpoint(base, "chat/completions"),
                                      {"Authorization": "Bearer sk-client"}, b"{}")
            await reply.close()
            return reply.status
        finally:
            await client.close()

    try:
        assert asyncio.run(call()) == 200
    finally:
        model.stop()
    assert seen == [("Basic Z206cGE1NQ==", "key=q")]  # base64 of gm:pa55


def test_an_unreachable_server_is_a_failure_that_did_not_time_out() -> None:
    async def call() -> UpstreamFailure:
        client = ModelClient(5, 5)
        try:
            with pytest.raises(UpstreamFailure) as refused:
                await client.send("GET", URL(f"http://127.0.0.1:{free_port()}/v1/models"), {})
            return refused.value
        finally:
            await client.close()

    refused = asyncio.run(call())
    assert not refused.timed_out and "Error" in refused.name


class _Silent(_Content):
    """A body whose next read passes aiohttp's sock_read timeout after its first chunk."""

    async def iter_any(self) -> AsyncIterator[bytes]:
        yield b"data: first\n\n"
        raise aiohttp.SocketTimeoutError("Timeout on reading data from socket")


def test_a_model_silent_past_timeout_is_a_timed_out_failure() -> None:
    """--timeout is aiohttp's sock_read (the longest silence between two reads), connecting
    bounded by --connect-timeout; its timeout error is a failure that timed out (a 504)."""
    client = ModelClient(7.5, 3.0)
    assert (client._timeout.sock_read, client._timeout.sock_connect, client._timeout.total) \
        == (7.5, 3.0, None)
    response = _Response([])
    response.content = _Silent([])
    got: list[str] = []

    async def read() -> None:
        async for line in ModelReply(response).lines():  # type: ignore[arg-type]
            got.append(line)

    with pytest.raises(UpstreamFailure) as failure:
        asyncio.run(read())
    assert failure.value.timed_out and failure.value.name == "SocketTimeoutError"
    assert got == ["data: first", ""]


class _DropsSecondRequest:
    """A raw HTTP/1.1 server on loopback: on each connection it answers the first request
    (keep-alive), then closes the connection when the next one arrives, without an answer (a
    kept-alive connection the server closed as the request was written). ``always``: every
    request is dropped, new connection or not."""

    def __init__(self, always: bool = False) -> None:
        self.always = always
        self.connections = 0
        self.answered = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        served = 0
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next((int(line.split(b":")[1]) for line in head.split(b"\r\n")
                               if line.lower().startswith(b"content-length:")), 0)
                await reader.readexactly(length)
                if served or self.always:
                    return  # closed with no answer
                served += 1
                self.answered += 1
                writer.write(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
                             b"content-length: 2\r\n\r\n{}")
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError):
            return
        finally:
            writer.close()


def _serve_and_send(server: _DropsSecondRequest, requests: int) -> list[int | str]:
    async def run() -> list[int | str]:
        listening = await asyncio.start_server(server.handle, "127.0.0.1", 0)
        port = listening.sockets[0].getsockname()[1]
        client = ModelClient(5, 5)
        got: list[int | str] = []
        try:
            for _ in range(requests):
                try:
                    reply = await client.send("POST", URL(f"http://127.0.0.1:{port}/v1/x"), {},
                                              (b'{"a":', memoryview(b"1}")))
                    await reply.close()
                    got.append(reply.status)
                except UpstreamFailure as failure:
                    got.append(failure.name)
        finally:
            await client.close()
            listening.close()
            await listening.wait_closed()
        return got
    return asyncio.run(run())


def test_a_kept_alive_connection_closed_under_a_request_is_retried_once_on_a_new_one() -> None:
    """The model server closed the idle connection as the stage wrote its next request on it
    (seen with uvicorn's 5 s keep-alive after a long fold): the request goes again, once."""
    server = _DropsSecondRequest()
    assert _serve_and_send(server, 3) == [200, 200, 200]
    assert server.connections == 3 and server.answered == 3


def test_a_server_that_drops_every_request_is_a_failure_after_one_retry() -> None:
    server = _DropsSecondRequest(always=True)
    got = _serve_and_send(server, 1)
    assert got == ["ServerDisconnectedError"] and server.connections == 2


def test_idle_connections_are_let_go_before_common_servers_close_them() -> None:
    session = ModelClient(5, 5)._pool
    assert client_module.KEEP_ALIVE < 5  # uvicorn's and llama.cpp's keep-alive

    async def check() -> float | None:
        pool = session()
        try:
            return pool.connector._keepalive_timeout  # type: ignore[union-attr]
        finally:
            await pool.close()
    assert asyncio.run(check()) == client_module.KEEP_ALIVE


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet="a\r\n\u00e9\U0001F600", max_size=40), st.lists(st.integers(0, 200)))
@example(text="\r\u00e9", cuts=[1, 2])  # found by this test: the CR before a split character
def test_lines_are_the_whole_texts_lines_wherever_the_chunks_are_cut(
        text: str, cuts: list[int]) -> None:
    """However the bytes are cut (inside a CRLF, inside a character), the lines are those of
    the whole text: split at CR, LF and CRLF, a last empty piece not a line."""
    raw = text.encode()
    points = sorted({min(cut, len(raw)) for cut in cuts} | {0, len(raw)})
    chunks = [raw[a:b] for a, b in itertools.pairwise(points)]
    expected = re.split(r"\r\n|\r|\n", text)
    if expected and expected[-1] == "":
        expected.pop()
    assert _lines(chunks) == expected
