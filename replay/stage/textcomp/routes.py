"""The text completion routes of the stage (docs/design.md#interfaces): front ends that run a
local model over a Text Completion connection send one prompt string to their backend's own routes,
and a stage between the model and the chat has to stand on every route the chat uses.

Under ``/games/<game>/``, each backend's own routes (:data:`~.backends.BACKENDS`):

- a reply: OpenAI's ``POST v1/completions``, llama.cpp's ``POST completion``, KoboldCpp's
  ``POST api/v1/generate`` and ``POST api/extra/generate/stream``. The prompt is cut into turns
  with the game's instruct template (:mod:`.instruct`), folded as the chat route folds its
  ``messages`` (:func:`replay.stage.app.prepare`), the GM section is spliced into the client's
  own prompt in the template's system form where the chat route's layout puts it, and the
  reply's tags are answered as the chat route answers them (:class:`ReplyStream`, and
  :class:`MidReply` in ``"resolve": "mid-reply"``, whose legs grow the prompt by the reply so
  far). Without a template, or for a prompt that does not parse with it (an impersonation
  among them), the request goes on byte for byte and the response says why in an
  ``X-Gmtags-Passthrough`` header (and the log).
- what gmtags does not change, passed through: llama.cpp's ``props``, ``tokenize``,
  ``detokenize``; KoboldCpp's ``api/v1/model``, ``api/extra/version``, ``api/extra/abort``,
  ``api/extra/tokencount``.

Every route keeps the stage's safety (the gmtags key, the body limit, ``--timeout`` and
``--deadline``), and every error the stage writes is in the backend's own error shape; an
error the backend writes is passed on as it wrote it. These routes go to the backend's root:
``--upstream`` without its trailing ``/v1``.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import AsyncIterable, AsyncIterator, Awaitable, Callable, Coroutine
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from ...files import InputError
from ...formats.fields import unicode_text
from ...transcript import TranscriptError
from ..answering import ReplyStream
from ..client import ModelClient, ModelReply, UpstreamFailure
from ..layout import without_answers
from ..midreply import LegFailed, MidReply
from ..reading import (
    ClientGone,
    Deadline,
    DeadlinePassed,
    read_body,
    read_reply,
    read_request,
    unless_gone,
    within,
)
from ..upstream import SurrogateJoiner, Upstream
from .backends import BACKENDS, Backend, TextShape, events, whole_of
from .instruct import NotParsed, ParsedPrompt

if TYPE_CHECKING:
    import asyncio

    from ..app import GameFolder, Prepared

log = logging.getLogger("gmtags.stage")
T = TypeVar("T")
PASSTHROUGH = "X-Gmtags-Passthrough"  # the header that says why a reply was not played


@dataclass(frozen=True)
class StageTools:
    """What the text routes share with the chat route (:func:`replay.stage.app.build_app`)."""

    max_body: int
    deadline: Callable[[], Deadline]
    client: ModelClient
    root: Upstream  # the backend's root
    game: Callable[[Request], GameFolder | Response]  # the key checked, the game found
    headers: Callable[[Request], dict[str, str]]  # the client's, for the model server
    prepare: Callable[[GameFolder, dict[str, Any], bool, bool | None], Awaitable[Prepared]]
    storing: Callable[[], asyncio.Future[Any] | None]
    stored: Callable[[Response, asyncio.Future[Any] | None], Awaitable[None]]
    remember: Callable[[Prepared, ReplyStream], None]
    metadata: Callable[[Prepared, ReplyStream], dict[str, Any]]
    mid_metadata: Callable[[Prepared, MidReply], dict[str, Any]]
    access: Callable[..., None]
    logged: Callable[[AsyncIterable[Any], Request, float, Prepared | None, ReplyStream],
                     AsyncIterator[Any]]
    inline_body: int = 64 * 1024  # a body this small is folded on the event loop first


# (route under /games/<game>/, backend, methods) of what is passed through as it is
PASSED = (("props", "llama.cpp", ["GET", "POST"]), ("tokenize", "llama.cpp", ["POST"]),
          ("detokenize", "llama.cpp", ["POST"]), ("api/v1/model", "koboldcpp", ["GET"]),
          ("api/extra/version", "koboldcpp", ["GET"]), ("api/extra/abort", "koboldcpp", ["POST"]),
          ("api/extra/tokencount", "koboldcpp", ["POST"]))


@dataclass
class Play:
    """One reply to play on a text route: the request as sent on and how to answer it."""

    backend: Backend
    route: str
    prepared: Prepared
    stream: ReplyStream
    body: dict[str, Any]  # the request for the model (GM section in)
    head: str  # the prompt sent up to the reply's text (what a continuation grows)
    echo: str | None  # the client's prompt, when it asked for it before the reply (echo)


class TextRoutes:
    """The text completion routes, on the chat route's tools."""

    def __init__(self, tools: StageTools) -> None:
        self.tools = tools

    def routes(self) -> list[Route]:
        found = []
        for backend in BACKENDS.values():
            for route in filter(None, (backend.route, backend.stream_route)):
                found.append(Route(f"/games/{{game}}/{route}",
                                   partial(self.complete, backend=backend, route=route),
                                   methods=["POST"]))
        for route, name, methods in PASSED:
            found.append(Route(f"/games/{{game}}/{route}",
                               partial(self.passed, backend=BACKENDS[name], route=route),
                               methods=methods))
        return found

    # -- answers in the backend's shape --

    @staticmethod
    def failed(backend: Backend, status: int, message: str, code: str,
               headers: dict[str, str] | None = None) -> JSONResponse:
        return JSONResponse(backend.error(message, code, status), status_code=status,
                            headers=headers)

    def reshaped(self, backend: Backend, response: Response) -> Response:
        """The stage's own error (an OpenAI error body) in the backend's shape."""
        try:
            found = json.loads(bytes(response.body))["error"]
            return self.failed(backend, response.status_code, str(found["message"]),
                               str(found.get("code") or "error"))
        except (ValueError, KeyError, TypeError):
            return response

    def unreachable(self, backend: Backend, failure: UpstreamFailure) -> JSONResponse:
        if failure.timed_out:
            log.warning("model server: no answer within --timeout (%s)", failure.name)
            return self.failed(backend, 504, "the model server did not answer in time",
                               "upstream_timeout")
        log.warning("model server: cannot be reached (%s)", failure.name)
        return self.failed(backend, 502, f"the model server cannot be reached ({failure.name})",
                           "upstream_unreachable")

    def late(self, backend: Backend) -> JSONResponse:
        return self.failed(backend, 504, self._deadline_message(), "deadline")

    def _deadline_message(self) -> str:
        log.warning("model server: the reply took longer than --deadline")
        return "the reply took longer than the stage's deadline"

    def error_event(self, backend: Backend, message: str, code: str) -> bytes:
        return backend.frame(backend.error(message, code, 502))

    # -- passed through --

    def _folder(self, request: Request, backend: Backend, began: float) -> GameFolder | Response:
        """The game asked for (the key checked), or the error in the backend's shape."""
        folder = self.tools.game(request)
        if isinstance(folder, Response):
            self.tools.access(request, folder.status_code, began)
            return self.reshaped(backend, folder)
        return folder

    async def passed(self, request: Request, backend: Backend, route: str) -> Response:
        """A route gmtags does not change: the request and the answer as they are."""
        began = time.perf_counter()
        folder = self._folder(request, backend, began)
        if isinstance(folder, Response):
            return folder
        response = await self._through(request, backend, route, None)
        self.tools.access(request, response.status_code, began)
        return response

    async def _through(self, request: Request, backend: Backend, route: str,
                       raw: bytes | None, why: str | None = None) -> Response:
        """Send the request on byte for byte and its answer back as it comes (a stream, or
        not: the same bytes), with ``why`` in the passthrough header."""
        if raw is None and request.method != "GET":
            try:
                raw = await read_request(request, self.tools.max_body)
            except InputError as failure:
                return self.failed(backend, 413, str(failure), "body_too_large")
        headers = {PASSTHROUGH: why} if why else {}
        deadline = self.tools.deadline()
        reply = await self._asked(request, backend, deadline, self.tools.client.send(
            request.method, self.tools.root.endpoint(route), self.tools.headers(request),
            raw or None))
        if isinstance(reply, Response):
            return reply
        kind = reply.headers.get("content-type", "")
        if reply.media_type == "text/event-stream":
            return StreamingResponse(self._bytes(reply, deadline), status_code=reply.status,
                                     media_type=kind, headers={**headers,
                                                               "cache-control": "no-cache"})
        try:
            content = await within(deadline, read_body(reply, deadline))
        except DeadlinePassed:
            return self.late(backend)
        except UpstreamFailure as failure:
            return self.unreachable(backend, failure)
        finally:
            await reply.close()
        return Response(content, status_code=reply.status,
                        media_type=kind or "application/json", headers=headers)

    async def _asked(self, request: Request, backend: Backend, deadline: Deadline,
                     work: Coroutine[Any, Any, T]) -> T | Response:
        """``work``, a request to the model server; or the response that says why not: the
        client left (499), the deadline passed, the server cannot be reached."""
        try:
            return await unless_gone(request, within(deadline, work))
        except ClientGone:
            return Response(status_code=499)
        except DeadlinePassed:
            return self.late(backend)
        except UpstreamFailure as failure:
            return self.unreachable(backend, failure)

    @staticmethod
    async def _bytes(reply: ModelReply, deadline: Deadline) -> AsyncIterator[bytes]:
        try:
            async for chunk in reply.chunks():
                yield chunk
                if deadline.passed:
                    break
        except UpstreamFailure as failure:
            log.warning("model server: failed mid-stream (%s)", failure.name)
        finally:
            await reply.close()

    # -- a reply --

    async def complete(self, request: Request, backend: Backend, route: str) -> Response:
        began = time.perf_counter()
        folder = self._folder(request, backend, began)
        if isinstance(folder, Response):
            return folder
        try:
            raw = await read_request(request, self.tools.max_body)
        except InputError as failure:
            self.tools.access(request, 413, began)
            return self.failed(backend, 413, str(failure), "body_too_large")
        found = self._parsed(folder, backend, raw)
        if isinstance(found, NotParsed):
            log.info("game %s: %s passed through untouched (%s): %s", folder.name, route,
                     found.reason, found.message)
            response = await self._through(request, backend, route, raw, found.reason)
            self.tools.access(request, response.status_code, began)
            return response
        body, parsed = found
        try:
            prepared = await self.tools.prepare(folder, {"messages": parsed.messages()},
                                                len(raw) <= self.tools.inline_body, True)
        except TranscriptError as failure:
            self.tools.access(request, 400, began)
            return self.failed(backend, 400, str(failure), "bad_transcript")
        play = self._play(folder, backend, route, body, parsed, prepared)
        storing = self.tools.storing()
        response = await self._answer(request, folder, play)
        await self.tools.stored(response, storing)
        if isinstance(response, StreamingResponse) and response.status_code == 200:
            response.body_iterator = self.tools.logged(response.body_iterator, request, began,
                                                       prepared, play.stream)
        else:
            self.tools.access(request, response.status_code, began, prepared, play.stream)
        return response

    @staticmethod
    def _parsed(folder: GameFolder, backend: Backend,
                raw: bytes) -> tuple[dict[str, Any], ParsedPrompt] | NotParsed:
        """The request and its prompt cut into turns, or why it is passed through."""
        template = folder.instruct
        if template is None:
            return NotParsed("no-template", 'the game has no instruct template ("instruct" '
                             "in its options.json)")
        try:
            body = json.loads(raw)
        except (ValueError, RecursionError):
            return NotParsed("not-json", "the body is not JSON")
        prompt = body.get(backend.prompt_key) if isinstance(body, dict) else None
        if not isinstance(prompt, str):
            return NotParsed("no-prompt", f"the body has no {backend.prompt_key!r} text")
        parsed = template.parse(prompt)
        return parsed if isinstance(parsed, NotParsed) else (body, parsed)

    @staticmethod
    def _play(folder: GameFolder, backend: Backend, route: str, body: dict[str, Any],
              parsed: ParsedPrompt, prepared: Prepared) -> Play:
        prompt, head = spliced(parsed, prepared)
        sent = {**body, backend.prompt_key: prompt}
        echo = None
        if backend.name == "openai" and body.get("echo") is True:
            # the prompt before the reply is the client's own, not the one with the GM section
            sent["echo"] = False
            echo = parsed.prompt
        stream = ReplyStream(folder.game, prepared.outcome.snapshot.state,
                             prepared.outcome.snapshot.replies, folder.answers, prepared.before)
        return Play(backend, route, prepared, stream, sent, head, echo)

    async def _answer(self, request: Request, folder: GameFolder, play: Play) -> Response:
        backend = play.backend
        headers = {k: v for k, v in self.tools.headers(request).items()
                   if k.lower() != "content-type"}
        headers["content-type"] = "application/json"
        deadline = self.tools.deadline()
        client_streams = backend.streams(play.body, play.route)
        if folder.mid_reply.resolve == "mid-reply":  # a text backend can always continue
            mid = MidReply(self.tools.client,
                           self.tools.root.endpoint(backend.stream_route or backend.route),
                           headers, play.body, play.stream, folder.mid_reply, deadline,
                           shape=TextShape(backend, play.route, play.head))
            return await self._mid(request, play, mid)
        url = self.tools.root.endpoint(play.route)
        content = json.dumps(play.body).encode()
        if client_streams:
            reply = await self._open(request, backend, url, content, headers, deadline)
            if isinstance(reply, Response):
                return reply
            return StreamingResponse(self._relay(reply, play, deadline),
                                     media_type="text/event-stream",
                                     headers={"cache-control": "no-cache"})
        whole = await self._asked(request, backend, deadline, read_reply(
            self.tools.client, "POST", url, content, headers, deadline))
        if isinstance(whole, Response):
            return whole
        status, kind, raw = whole
        if status != 200:
            log.warning("model server: answered %d", status)
            return Response(raw, status_code=status, media_type=kind or "application/json")
        found = whole_of(backend, raw)
        if found is None:
            log.warning("model server: answered with something that is not a %s completion",
                        backend.name)
            return self.failed(backend, 502, f"the model server's answer is not a "
                               f"{backend.name} completion", "upstream_protocol")
        document, text, _ = found
        answered = play.stream.feed(unicode_text(text)) + play.stream.finish()
        document = backend.with_whole(document, (play.echo or "") + answered)
        document["gmtags"] = self.tools.metadata(play.prepared, play.stream)
        self.tools.remember(play.prepared, play.stream)
        return JSONResponse(document)

    async def _open(self, request: Request, backend: Backend, url: Any, content: bytes,
                    headers: dict[str, str], deadline: Deadline) -> ModelReply | Response:
        """The model's streamed answer once it sent a 200, or the response that says why
        not (its own error passed on as it wrote it)."""
        reply = await self._asked(request, backend, deadline, self.tools.client.send(
            "POST", url, headers, content))
        if isinstance(reply, Response):
            return reply
        if reply.status != 200:
            try:
                raw = await within(deadline, read_body(reply, deadline))
            except (DeadlinePassed, UpstreamFailure):
                raw = b""
            finally:
                await reply.close()
            log.warning("model server: answered %d", reply.status)
            return Response(raw, status_code=reply.status,
                            media_type=reply.headers.get("content-type") or "application/json")
        return reply

    async def _relay(self, reply: ModelReply, play: Play,
                     deadline: Deadline) -> AsyncIterator[bytes]:
        """Pass the model's stream on in its own framing, holding back unfinished tags and
        answering them; the metadata rides on the event that ends the reply."""
        backend, stream = play.backend, play.stream
        joiner = SurrogateJoiner()
        last: dict[str, Any] | None = None
        finished = failed = False
        echo = play.echo
        try:
            async for event in self._events(reply, deadline):
                if deadline.passed:
                    yield self.error_event(backend, self._deadline_message(), "deadline")
                    failed = True
                    break
                found = backend.piece(event)
                if found is None:
                    yield backend.frame(event)
                    continue
                last = event
                piece, finish = found
                text = stream.feed(joiner.feed(piece))
                if stream.cut is not None:  # a model in a loop: its reply ends here
                    finish = "stop"
                if finish is not None:
                    text += stream.feed(joiner.finish()) + stream.finish()
                    finished = True
                if echo is not None:
                    text, echo = echo + text, None
                shown = backend.with_piece(event, text, finish)
                if finished:
                    shown["gmtags"] = self.tools.metadata(play.prepared, stream)
                yield backend.frame(shown)
                if finished:
                    break
        except UpstreamFailure as failure:
            log.warning("model server: failed mid-stream (%s)", failure.name)
            yield self.error_event(backend, f"the model server failed mid-stream "
                                   f"({failure.name})", "upstream_failed")
            failed = True
        except LegFailed as failure:
            log.warning("model server: %s", failure.message)
            yield self.error_event(backend, failure.message, failure.code)
            failed = True
        finally:
            await reply.close()
        if last is None and not failed:
            log.warning("model server: its stream held no %s event", backend.name)
            yield self.error_event(backend, f"the model server's stream held no "
                                   f"{backend.name} event", "upstream_protocol")
            failed = True
        elif not finished and not failed:
            rest = (echo or "") + stream.feed(joiner.finish()) + stream.finish()
            yield backend.frame({**backend.made(last or {}, rest, "stop", None, True),
                                 "gmtags": self.tools.metadata(play.prepared, stream)})
        if not failed:
            self.tools.remember(play.prepared, stream)
        yield backend.done

    @staticmethod
    async def _events(reply: ModelReply, deadline: Deadline) -> AsyncIterator[dict[str, Any]]:
        """The events of the model's stream; a whole answer sent instead is one event."""
        if reply.media_type in ("text/event-stream", ""):
            async for event in events(reply):
                yield event
            return
        try:
            document = json.loads(await read_body(reply, deadline))
        except (ValueError, RecursionError):
            document = None
        if not isinstance(document, dict):
            raise LegFailed("the model server answered with neither an event stream nor a "
                            "completion", "upstream_protocol")
        yield document

    async def _mid(self, request: Request, play: Play, mid: MidReply) -> Response:
        """A reply answered mid-way: its first request's failure is the response's; after
        that the reply is one stream, or one answer."""
        backend = play.backend
        reply = await self._open(request, backend, mid.url, json.dumps(mid.request).encode(),
                                 mid.headers, mid.deadline)
        if isinstance(reply, Response):
            return reply
        if mid.client_streams:
            return StreamingResponse(self._mid_events(reply, play, mid),
                                     media_type="text/event-stream",
                                     headers={"cache-control": "no-cache"})
        try:
            text = await unless_gone(request, within(mid.deadline, _joined(mid.run(reply))))
        except ClientGone:
            return Response(status_code=499)
        except DeadlinePassed:
            return self.late(backend)
        except LegFailed as failure:
            log.warning("model server: %s", failure.message)
            return self.failed(backend, 502, failure.message, failure.code)
        document = backend.made(mid.base, (play.echo or "") + text, mid.finish, mid.usage,
                                False)
        document["gmtags"] = self.tools.mid_metadata(play.prepared, mid)
        return JSONResponse(document)

    async def _mid_events(self, reply: ModelReply, play: Play,
                          mid: MidReply) -> AsyncIterator[bytes]:
        backend = play.backend
        if play.echo:
            yield backend.frame(backend.made(mid.base, play.echo, None, None, True))
        try:
            async for text in mid.run(reply):
                yield backend.frame(backend.made(mid.base, text, None, None, True))
        except DeadlinePassed:
            yield self.error_event(backend, self._deadline_message(), "deadline")
            yield backend.done
            return
        except LegFailed as failure:
            log.warning("model server: %s", failure.message)
            yield self.error_event(backend, failure.message, failure.code)
            yield backend.done
            return
        yield backend.frame({**backend.made(mid.base, "", mid.finish, mid.usage, True),
                             "gmtags": self.tools.mid_metadata(play.prepared, mid)})
        yield backend.done


async def _joined(pieces: AsyncIterator[str]) -> str:
    return "".join([piece async for piece in pieces])


def spliced(parsed: ParsedPrompt, prepared: Prepared) -> tuple[str, str]:
    """The client's prompt with the GM section in, in the template's system form, where the
    chat route puts it in ``messages``; and the past replies as the layout shows them. And
    the new prompt up to the reply's text: what a continuation grows by the reply so far."""
    template, prompt = parsed.template, parsed.prompt
    edits: list[tuple[int, int, str]] = [
        (parsed.offset(prepared.at), parsed.offset(prepared.at),
         template.system_turn(prepared.section["content"]))]
    if prepared.turn is not None:
        at = parsed.offset(prepared.turn_at)
        edits.append((at, at, template.system_turn(prepared.turn["content"])))
    opening = parsed.opening if parsed.continues else ""
    if prepared.past == "section":
        for index, turn in enumerate(parsed.counted):
            if turn.role != "assistant":
                continue
            start, end = parsed.text_span(index)
            shown = without_answers({"role": "assistant", "content": prompt[start:end]})
            if shown is not None:
                edits.append((start, end, shown["content"]))
                if turn is parsed.turns[-1]:
                    opening = shown["content"]
    edits.sort(key=lambda edit: edit[0])  # stable: the front part before the turn's
    pieces, at = [], 0
    for start, end, text in edits:
        pieces += [prompt[at:start], text]
        at = end
    pieces.append(prompt[at:])
    written = "".join(pieces)
    return written, written[:len(written) - len(opening)]


__all__ = ["PASSTHROUGH", "StageTools", "TextRoutes", "spliced"]
