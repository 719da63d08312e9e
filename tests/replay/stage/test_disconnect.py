"""A client that hangs up mid-request cancels the stage's request to the model (issue 12).

The fake model holds the request (before answering, or after the first piece of a stream) and
sets ``released`` once it sees its caller, the stage, go away. The client is a raw loopback
socket, so hanging up is exactly one ``close()``. Every wait is on an event with a generous
timeout, and the assertion is on the event, never on elapsed time.
"""

from __future__ import annotations

import json
import socket

import pytest
from stage_servers import FakeModel, Hold, Stage

WAIT = 30.0  # seconds: only reached when the cancellation never happens


def post(stage: Stage, stream: bool) -> socket.socket:
    """Send a chat request on a fresh connection and leave it open."""
    body = json.dumps({"model": "fake-gm", "stream": stream,
                       "messages": [{"role": "user", "content": "I wait at the gate."}]}).encode()
    port = stage.server.port
    sock = socket.create_connection(("127.0.0.1", port), timeout=WAIT)
    sock.sendall(b"POST /games/harrow/v1/chat/completions HTTP/1.1\r\n"
                 b"Host: 127.0.0.1\r\nContent-Type: application/json\r\n"
                 b"Content-Length: %d\r\n\r\n" % len(body) + body)
    return sock


def read_until(sock: socket.socket, marker: bytes) -> bytes:
    """What the stage sent until ``marker`` (the socket's timeout bounds the wait)."""
    received = b""
    while marker not in received:
        data = sock.recv(65536)
        assert data, f"the stage closed the connection before sending {marker!r}"
        received += data
    return received


@pytest.mark.parametrize(("stream", "hold"), [(False, "request"), (True, "request"),
                                              (True, "stream")])
def test_a_client_that_hangs_up_cancels_the_request_to_the_model(
        stage: Stage, model: FakeModel, stream: bool, hold: Hold) -> None:
    model.hold = hold
    sock = post(stage, stream)
    try:
        assert model.held.wait(WAIT), "the request never reached the model"
        if hold == "stream":
            # The reply has begun: the headers and the first piece went through the stage
            # (but its last space, which may yet come before a model's "| ok=" part).
            received = read_until(sock, b'"content": "The"')
            assert received.startswith(b"HTTP/1.1 200")
        assert not model.released.is_set()  # the model is still holding it
    finally:
        sock.close()
    assert model.released.wait(WAIT), "the stage kept the model's request open"


def test_the_stage_still_answers_after_a_client_hung_up(stage: Stage, model: FakeModel) -> None:
    for stream in (False, True):
        model.hold = "request"
        model.held.clear()
        model.released.clear()
        sock = post(stage, stream)
        assert model.held.wait(WAIT)
        sock.close()
        assert model.released.wait(WAIT)
        model.hold = None
        response = stage.chat([{"role": "user", "content": "I wait at the gate."}])
        assert response.status_code == 200
        assert response.json()["choices"][0]["message"]["content"] == "The road goes on."
