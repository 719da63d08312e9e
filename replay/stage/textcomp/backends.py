"""The text completion backends a front end talks to, each one entry of :data:`BACKENDS`: its
request and response shapes, how its stream is framed, its errors, how a reply is continued.

- ``openai``: OpenAI's ``POST /v1/completions`` (vLLM, TabbyAPI, text-generation-webui,
  Aphrodite, KoboldCpp and llama.cpp's server all speak it): ``{"prompt", "max_tokens",
  "stream"}`` → ``{"choices": [{"text", "finish_reason"}]}``; a stream of ``data:`` chunks of
  the same shape, then ``data: [DONE]``.
- ``llama.cpp``: llama.cpp's server's own ``POST /completion``: ``{"prompt", "n_predict",
  "stream"}`` → ``{"content", "stop", "stop_type", "timings", ...}``; a stream of ``data:``
  events of the same shape, the last one with ``"stop": true``, and no ``[DONE]``.
- ``koboldcpp``: KoboldCpp's ``POST /api/v1/generate`` (``{"prompt", "max_length"}`` →
  ``{"results": [{"text", "finish_reason"}]}``) and ``POST /api/extra/generate/stream``, whose
  events are ``event: message`` / ``data: {"token", "finish_reason"}``.

A text backend can always continue a reply: the prompt grows by the reply so far, answers in
(:class:`TextShape`, the :class:`~replay.stage.midreply.Shape` of the mid-reply legs).
"""

from __future__ import annotations

import json
from collections.abc import AsyncGenerator, Mapping
from dataclasses import dataclass
from typing import Any

from ..client import ModelReply
from ..midreply import LegFailed, Piece, usage_of
from ..reading import Deadline, read_body

Json = dict[str, Any]


def _first(document: Mapping[str, Any], key: str) -> Json | None:
    """``document[key][0]`` when it is an object (a choice, a result)."""
    items = document.get(key)
    if isinstance(items, list) and items and isinstance(items[0], dict):
        return items[0]
    return None


def _text(value: Any) -> str:
    return value if isinstance(value, str) else ""


class Backend:
    """One backend's shapes. ``route``: where a reply is asked for (below the backend's root);
    ``stream_route``: where a streamed one is, when it differs (KoboldCpp)."""

    name = ""
    route = ""
    stream_route: str | None = None
    limits: tuple[str, ...] = ()
    prompt_key = "prompt"
    done = b""  # what ends a stream after its last event

    def streams(self, request: Mapping[str, Any], route: str) -> bool:
        """Whether the client asked for a stream (by a flag, or by the route it called)."""
        return bool(request.get("stream"))

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> Json:
        """The request asking for a stream."""
        return {**request, "stream": True}

    def piece(self, event: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """(text, finish reason or None) of one stream event of the reply, None when it is
        not one."""
        raise NotImplementedError

    def with_piece(self, event: Json, text: str, finish: str | None) -> Json:
        """The event carrying ``text`` instead (and ending the reply with ``finish``)."""
        raise NotImplementedError

    def whole(self, document: Mapping[str, Any]) -> tuple[str, str | None] | None:
        """(text, finish reason) of a whole answer, None when it is not one."""
        raise NotImplementedError

    def with_whole(self, document: Json, text: str) -> Json:
        """The whole answer carrying ``text`` instead."""
        raise NotImplementedError

    def made(self, base: Mapping[str, Any], text: str, finish: str | None,
             usage: Mapping[str, int] | None, streamed: bool) -> Json:
        """An answer (or, ``streamed``, a stream event) of the stage's own: a reply written
        over several requests, or the end of a stream the model server cut short."""
        raise NotImplementedError

    def usage(self, document: Mapping[str, Any]) -> dict[str, int] | None:
        """The token counts an answer or event reports (``completion_tokens`` among them)."""
        return usage_of(document)

    def error(self, message: str, code: str, status: int) -> Json:
        """An error body in the backend's own shape."""
        return {"error": {"message": message, "type": "invalid_request_error" if status < 500
                          else "upstream_error", "param": None, "code": code}}

    def frame(self, event: Mapping[str, Any]) -> bytes:
        """One stream event as sent."""
        # Every text in it went through unicode_text or a SurrogateJoiner; "replace" is the
        # last guard that an event is never invalid UTF-8.
        return f"data: {json.dumps(event, ensure_ascii=False)}\n\n".encode("utf-8", "replace")


class OpenAIText(Backend):
    name = "openai"
    route = "v1/completions"
    limits = ("max_tokens",)
    done = b"data: [DONE]\n\n"

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> Json:
        upstream = {**request, "stream": True}
        if not client_streams:
            upstream["stream_options"] = {"include_usage": True}
        return upstream

    def piece(self, event: Mapping[str, Any]) -> tuple[str, str | None] | None:
        choice = _first(event, "choices")
        if choice is None or choice.get("index", 0) != 0:
            return None
        finish = choice.get("finish_reason")
        return _text(choice.get("text")), finish if isinstance(finish, str) else None

    def with_piece(self, event: Json, text: str, finish: str | None) -> Json:
        choice = {**(_first(event, "choices") or {"index": 0}), "text": text}
        if finish is not None:
            choice["finish_reason"] = finish
        return {**event, "choices": [choice, *event.get("choices", [])[1:]]}

    def whole(self, document: Mapping[str, Any]) -> tuple[str, str | None] | None:
        choice = _first(document, "choices")
        if choice is None or not isinstance(choice.get("text", ""), str):
            return None
        finish = choice.get("finish_reason")
        return _text(choice.get("text")), finish if isinstance(finish, str) else None

    def with_whole(self, document: Json, text: str) -> Json:
        return self.with_piece(document, text, None)

    def made(self, base: Mapping[str, Any], text: str, finish: str | None,
             usage: Mapping[str, int] | None, streamed: bool) -> Json:
        made: Json = {**base, "object": "text_completion",
                      "choices": [{"index": 0, "text": text, "logprobs": None,
                                   "finish_reason": finish}]}
        if usage is not None:
            made["usage"] = dict(usage)
        return made


class LlamaCpp(Backend):
    name = "llama.cpp"
    route = "completion"
    limits = ("n_predict", "max_tokens")

    def piece(self, event: Mapping[str, Any]) -> tuple[str, str | None] | None:
        if "content" not in event and "stop" not in event:
            return None
        return _text(event.get("content")), self._finish(event)

    @staticmethod
    def _finish(document: Mapping[str, Any]) -> str | None:
        if document.get("stop") is not True:
            return None
        limited = document.get("stop_type") == "limit" or document.get("stopped_limit") is True
        return "length" if limited else "stop"

    def with_piece(self, event: Json, text: str, finish: str | None) -> Json:
        changed = {**event, "content": text}
        if finish is not None and event.get("stop") is not True:
            changed.update(stop=True, stop_type="limit" if finish == "length" else "word")
        return changed

    def whole(self, document: Mapping[str, Any]) -> tuple[str, str | None] | None:
        if not isinstance(document.get("content", None), str):
            return None
        return document["content"], self._finish(document) or "stop"

    def with_whole(self, document: Json, text: str) -> Json:
        return {**document, "content": text}

    def made(self, base: Mapping[str, Any], text: str, finish: str | None,
             usage: Mapping[str, int] | None, streamed: bool) -> Json:
        made: Json = {"content": text, "stop": finish is not None}
        if "model" in base:
            made["model"] = base["model"]
        if finish is not None:
            made["stop_type"] = "limit" if finish == "length" else "eos"
        if usage is not None and "completion_tokens" in usage:
            made["tokens_predicted"] = usage["completion_tokens"]
        return made

    def usage(self, document: Mapping[str, Any]) -> dict[str, int] | None:
        predicted = document.get("tokens_predicted")
        if isinstance(predicted, int) and not isinstance(predicted, bool) and \
                document.get("stop") is True:
            return {"completion_tokens": predicted}
        return None

    def error(self, message: str, code: str, status: int) -> Json:
        return {"error": {"code": status, "message": message,
                          "type": "invalid_request_error" if status < 500 else "server_error"}}


class KoboldCpp(Backend):
    name = "koboldcpp"
    route = "api/v1/generate"
    stream_route = "api/extra/generate/stream"
    limits = ("max_length",)

    def streams(self, request: Mapping[str, Any], route: str) -> bool:
        return route == self.stream_route

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> Json:
        return dict(request)  # the stream is asked for by its route

    def piece(self, event: Mapping[str, Any]) -> tuple[str, str | None] | None:
        if "results" in event:  # a whole answer sent instead of a stream
            return self.whole(event)
        if "token" not in event and "finish_reason" not in event:
            return None
        finish = event.get("finish_reason")
        return _text(event.get("token")), finish if isinstance(finish, str) and finish else None

    def with_piece(self, event: Json, text: str, finish: str | None) -> Json:
        changed = {**event, "token": text} if "results" not in event else \
            {"token": text, "finish_reason": None}
        if finish is not None:
            changed["finish_reason"] = finish
        return changed

    def whole(self, document: Mapping[str, Any]) -> tuple[str, str | None] | None:
        result = _first(document, "results")
        if result is None or not isinstance(result.get("text", ""), str):
            return None
        finish = result.get("finish_reason")
        return _text(result.get("text")), finish if isinstance(finish, str) else "stop"

    def with_whole(self, document: Json, text: str) -> Json:
        result = {**(_first(document, "results") or {}), "text": text}
        return {**document, "results": [result, *document.get("results", [])[1:]]}

    def made(self, base: Mapping[str, Any], text: str, finish: str | None,
             usage: Mapping[str, int] | None, streamed: bool) -> Json:
        if streamed:
            return {"token": text, "finish_reason": finish}
        return {"results": [{"text": text, "finish_reason": finish or "stop"}]}

    def usage(self, document: Mapping[str, Any]) -> dict[str, int] | None:
        result = _first(document, "results")
        return usage_of({"usage": result}) if result is not None else None

    def error(self, message: str, code: str, status: int) -> Json:
        return {"detail": {"msg": message, "type": code}}

    def frame(self, event: Mapping[str, Any]) -> bytes:
        return b"event: message\n" + super().frame(event)


BACKENDS: dict[str, Backend] = {b.name: b for b in (OpenAIText(), LlamaCpp(), KoboldCpp())}


async def events(reply: ModelReply) -> AsyncGenerator[Json, None]:
    """Each ``data:`` event of a stream that is a JSON object (``[DONE]`` ends it)."""
    async for line in reply.lines():
        if not line.startswith("data:"):
            continue  # "event: message", comments, blank lines
        data = line[5:].strip()
        if data == "[DONE]":
            return
        try:
            event = json.loads(data)
        except (ValueError, RecursionError):
            continue
        if isinstance(event, dict):
            yield event


def whole_of(backend: Backend, raw: bytes) -> tuple[Json, str, str | None] | None:
    """A whole answer's document, its text and finish reason, or None."""
    try:
        document = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    if not isinstance(document, dict):
        return None
    found = backend.whole(document)
    return None if found is None else (document, *found)


@dataclass(frozen=True)
class TextShape:
    """The legs of a reply on a text backend (:class:`~replay.stage.midreply.Shape`): the
    prompt sent grows by the reply so far, answers in."""

    backend: Backend
    route: str  # the route the client called
    prompt: str  # the prompt sent on, GM section in; it ends with the reply's opening

    @property
    def limits(self) -> tuple[str, ...]:
        return self.backend.limits

    def streams(self, request: Mapping[str, Any]) -> bool:
        return self.backend.streams(request, self.route)

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> Json:
        return self.backend.streaming(request, client_streams)

    def continuation(self, request: Mapping[str, Any], prefix: str, before: str) -> Json:
        """The prompt up to the reply being continued, then the reply so far: ``before`` (the
        part the prompt already ends with) is written again as ``prefix`` begins."""
        head = self.prompt[:len(self.prompt) - len(before)] if before and \
            self.prompt.endswith(before) else self.prompt
        return {**request, self.backend.prompt_key: head + prefix}

    async def pieces(self, reply: ModelReply, deadline: Deadline) -> AsyncGenerator[Piece, None]:
        if reply.media_type not in ("text/event-stream", ""):
            found = whole_of(self.backend, await read_body(reply, deadline))
            if found is None:
                raise LegFailed(f"the model server answered with neither an event stream nor "
                                f"a {self.backend.name} completion", "upstream_protocol")
            document, text, finish = found
            yield text, finish, self.backend.usage(document), document
            return
        async for event in events(reply):
            found_piece = self.backend.piece(event)
            if found_piece is not None:
                yield (*found_piece, self.backend.usage(event), event)


__all__ = ["BACKENDS", "Backend", "TextShape", "events", "whole_of"]
