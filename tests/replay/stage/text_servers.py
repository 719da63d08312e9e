"""A scripted text completion backend on loopback, speaking each backend's real shapes: OpenAI's
``/v1/completions``, llama.cpp's ``/completion`` (and ``/props``, ``/tokenize``, ``/detokenize``),
KoboldCpp's ``/api/v1/generate``, ``/api/extra/generate/stream`` (and ``/api/v1/model``,
``/api/extra/version``, ``/api/extra/abort``, ``/api/extra/tokencount``).

It writes the story scripted for the player line that comes last in the prompt, whatever the
instruct template around it. A story is prose and tags; a prompt that already holds some of
the story's tags after that line (a continuation of a reply stopped at a tag, answered) is
continued after the last of them, and text the prompt already ends with (a Continue) is not
written again. It streams in random chunk splits (seeded by the prompt) that cut tags anywhere.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from stage_servers import ServerThread, chunks
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from replay.stage.textcomp.instruct import BUILT_IN

DEFAULT_STORY = ["The road goes on."]


@dataclass
class TextModel:
    """The scripted text backend: stories by player line, every request kept."""

    script: dict[str, list[str]] = field(default_factory=dict)
    requests: list[tuple[str, bytes]] = field(default_factory=list)  # (path, body)
    fail: tuple[int, Any] | None = None  # (status, body) of every reply request
    server: ServerThread | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/v1"

    def prompts(self, path: str) -> list[str]:
        """The prompts of the reply requests to ``path``, in order."""
        return [json.loads(body)["prompt"] for p, body in self.requests if p == path]

    def write(self, prompt: str) -> str:
        """What the model writes after ``prompt``."""
        found = [(prompt.rfind(line), line) for line in self.script if line in prompt]
        if not found:
            return "".join(DEFAULT_STORY)
        at, line = max(found)
        story = self.script[line]
        tail = prompt[at + len(line):]
        after, looked = 0, 0
        for index, part in enumerate(story):
            if not part.startswith("["):
                continue
            head = part.rstrip("]")
            place = tail.find(head, looked)
            if place < 0:
                break
            after, looked = index + 1, place + len(head)
        out = "".join(story[after:])
        for size in range(min(len(out), len(tail)), 0, -1):  # a Continue: not written again
            if tail.endswith(out[:size]) and size > 3:
                return out[size:]
        return out

    def app(self) -> Starlette:
        async def openai(request: Request) -> Response:
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            out = self.write(body["prompt"])
            text = body["prompt"] + out if body.get("echo") else out
            logprobs = {"tokens": list(out[:3]), "token_logprobs": [-0.5] * 3} \
                if body.get("logprobs") else None
            base = {"id": "cmpl-1", "object": "text_completion", "created": 1, "model": "fake"}
            if not body.get("stream"):
                return JSONResponse({**base, "choices": [
                    {"text": text, "index": 0, "logprobs": logprobs, "finish_reason": "stop"}],
                    "usage": {"prompt_tokens": 10, "completion_tokens": len(out),
                              "total_tokens": 10 + len(out)}})
            events = [{**base, "choices": [{"text": piece, "index": 0, "logprobs": logprobs,
                                            "finish_reason": None}]}
                      for piece in chunks(text, body["prompt"])]
            events.append({**base, "choices": [{"text": "", "index": 0, "logprobs": None,
                                                "finish_reason": "stop"}]})
            return _stream([f"data: {json.dumps(e)}\n\n" for e in events] + ["data: [DONE]\n\n"])

        async def llama(request: Request) -> Response:
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            out = self.write(body["prompt"])
            timings = {"prompt_n": 10, "cache_n": 0, "predicted_n": len(out)}
            last = {"content": "", "stop": True, "stop_type": "eos", "stopping_word": "",
                    "tokens_predicted": len(out), "tokens_evaluated": 10, "model": "fake",
                    "timings": timings}
            if not body.get("stream"):
                return JSONResponse({**last, "content": out})
            events = [{"index": 0, "content": piece, "tokens": [1], "stop": False,
                       "id_slot": 0} for piece in chunks(out, body["prompt"])]
            return _stream([f"data: {json.dumps(e)}\n\n" for e in [*events, last]])

        async def kobold(request: Request) -> Response:
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            out = self.write(body["prompt"])
            return JSONResponse({"results": [{"text": out, "finish_reason": "stop",
                                              "prompt_tokens": 10,
                                              "completion_tokens": len(out)}]})

        async def kobold_stream(request: Request) -> Response:
            body = await self._body(request)
            if isinstance(body, Response):
                return body
            out = self.write(body["prompt"])
            events = [{"token": piece, "finish_reason": None}
                      for piece in chunks(out, body["prompt"])]
            events.append({"token": "", "finish_reason": "stop"})
            return _stream([f"event: message\ndata: {json.dumps(e)}\n\n" for e in events])

        async def props(request: Request) -> Response:
            self.requests.append(("/props", await request.body()))
            return JSONResponse({"default_generation_settings": {"n_ctx": 4096},
                                 "total_slots": 1, "chat_template": "chatml"})

        async def tokenize(request: Request) -> Response:
            body = await request.json()
            self.requests.append(("/tokenize", json.dumps(body).encode()))
            return JSONResponse({"tokens": [ord(c) for c in body.get("content", "")]})

        async def detokenize(request: Request) -> Response:
            body = await request.json()
            self.requests.append(("/detokenize", json.dumps(body).encode()))
            return JSONResponse({"content": "".join(chr(t) for t in body.get("tokens", []))})

        async def model(request: Request) -> Response:
            return JSONResponse({"result": "koboldcpp/fake"})

        async def version(request: Request) -> Response:
            return JSONResponse({"result": "KoboldCpp", "version": "1.80"})

        async def abort(request: Request) -> Response:
            self.requests.append(("/api/extra/abort", await request.body()))
            return JSONResponse({"success": "true", "done": "true"})

        async def tokencount(request: Request) -> Response:
            body = await request.json()
            return JSONResponse({"value": len(body.get("prompt", "")),
                                 "ids": [ord(c) for c in body.get("prompt", "")]})

        async def chat(request: Request) -> Response:
            """The same model behind a chat completion route: the chat rendered as ChatML."""
            body = await request.json()
            self.requests.append(("/v1/chat/completions", json.dumps(body).encode()))
            out = self.write(BUILT_IN["chatml"].render(body["messages"]))
            return JSONResponse({"id": "chat-1", "object": "chat.completion", "choices": [
                {"index": 0, "finish_reason": "stop",
                 "message": {"role": "assistant", "content": out}}]})

        async def models(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": [{"id": "fake", "object": "model"}]})

        return Starlette(routes=[
            Route("/v1/completions", openai, methods=["POST"]),
            Route("/completion", llama, methods=["POST"]),
            Route("/api/v1/generate", kobold, methods=["POST"]),
            Route("/api/extra/generate/stream", kobold_stream, methods=["POST"]),
            Route("/props", props, methods=["GET", "POST"]),
            Route("/tokenize", tokenize, methods=["POST"]),
            Route("/detokenize", detokenize, methods=["POST"]),
            Route("/api/v1/model", model), Route("/api/extra/version", version),
            Route("/api/extra/abort", abort, methods=["POST"]),
            Route("/api/extra/tokencount", tokencount, methods=["POST"]),
            Route("/v1/chat/completions", chat, methods=["POST"]),
            Route("/v1/models", models)])

    async def _body(self, request: Request) -> dict[str, Any] | Response:
        raw = await request.body()
        self.requests.append((request.url.path, raw))
        if self.fail is not None:
            status, body = self.fail
            return JSONResponse(body, status_code=status)
        document = json.loads(raw)
        assert isinstance(document, dict)
        return document


def _stream(events: list[str]) -> StreamingResponse:
    async def sent() -> AsyncIterator[bytes]:
        for event in events:
            yield event.encode()

    return StreamingResponse(sent(), media_type="text/event-stream")


@pytest.fixture(scope="module")
def text_model() -> Iterator[TextModel]:
    running = TextModel()
    running.server = ServerThread(running.app())
    yield running
    running.server.stop()
