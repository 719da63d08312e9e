"""The HTTP stage: an OpenAI-compatible proxy that plays the rules (DESIGN.md "Interfaces").

One server runs many games; a game is a folder (``ruleset.json``, ``party.json``,
``options.json``) selected by path: ``/games/<game>/v1/chat/completions``. Per request the
``messages`` are the visible transcript: they are folded (through the snapshot cache), the GM
context is added as one delimited system message, the request goes on to the model with the
client's own headers and parameters, and the tags of the reply are answered on the way back.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import socket
import threading
from collections import OrderedDict
from collections.abc import AsyncIterator, Coroutine, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar, cast

import httpx
from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from engine import Answer, Game, PartyError, RulesetError, State
from engine.prompt import StackLines, state_context, with_last_answers

from ..cache import FoldOutcome, SnapshotCache, Store, fold_turns
from ..files import InputError, load_party, load_ruleset, read_json
from ..fold import replay
from ..formats import parse_transcript, transcript_from_openai
from ..transcript import TranscriptError
from .answering import AnswerMode, ReplyStream
from .body import Body, BodyReader

log = logging.getLogger("gmtags.stage")
T = TypeVar("T")

GAME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SECTION_BEGIN = "=== gmtags: game state (written by gmtags, not by the player) ==="
SECTION_END = "=== end of gmtags ==="
# Hop-by-hop and body headers are the proxy's own; everything else goes to the model as sent.
DROPPED_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
    "accept-encoding", "te", "trailer", "proxy-authorization", "proxy-connection",
    "x-gmtags-key",
})


class GmSection:
    """The delimited GM section of one game's prompts, remembered between requests.

    The state's blocks per state: a regenerated reply folds to the very state object the
    snapshot cache keeps parsed, and a reply that changes nothing (a check, a refusal) leaves
    the state object as it was, so only the last answers are written again. And each stack's
    line (:class:`engine.prompt.StackLines`): the next reply's state keeps most of the last
    state's stacks as they were, so only the lines of changed stacks are written.
    """

    def __init__(self, game: Game, states: int = 64) -> None:
        self.game = game
        self.states = states
        self.lines = StackLines()
        self._texts: OrderedDict[int, tuple[State, str]] = OrderedDict()
        self._lock = threading.Lock()

    def __call__(self, state: State, last_answers: Sequence[Answer]) -> str:
        with self._lock:
            found = self._texts.get(id(state))
            if found is not None and found[0] is state:
                self._texts.move_to_end(id(state))
        if found is not None and found[0] is state:
            state_text = found[1]
        else:
            state_text = state_context(self.game, state, self.lines)
            with self._lock:
                self._texts[id(state)] = (state, state_text)
                self._texts.move_to_end(id(state))
                while len(self._texts) > self.states:
                    self._texts.popitem(last=False)
        return "\n".join([SECTION_BEGIN, with_last_answers(state_text, last_answers),
                          SECTION_END])


@dataclass(frozen=True)
class GameFolder:
    """One game the stage serves: its ruleset, its start state and its options."""

    name: str
    game: Game
    start: State
    answers: AnswerMode = "inline"
    continue_replies: bool = True
    section: GmSection = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "section", GmSection(self.game))


def load_game(folder: Path) -> GameFolder:
    """Read ``ruleset.json``, ``party.json`` (optional) and ``options.json`` (optional)."""
    game = load_ruleset(folder / "ruleset.json")
    party = folder / "party.json"
    start = load_party(game, party if party.exists() else None)
    options: dict[str, Any] = {}
    if (folder / "options.json").exists():
        loaded = read_json(folder / "options.json")
        options = loaded if isinstance(loaded, dict) else {}
    answers = options.get("answers", "inline")
    if answers not in ("inline", "block", "none"):
        raise InputError(f"{folder / 'options.json'}: answers is inline, block or none")
    return GameFolder(folder.name, game, start, answers,
                      bool(options.get("continue", True)))


def load_games(root: Path) -> dict[str, GameFolder]:
    """Every game folder under ``root`` (a folder with a ``ruleset.json``)."""
    games: dict[str, GameFolder] = {}
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and GAME_NAME.fullmatch(folder.name) and (
                folder / "ruleset.json").exists():
            games[folder.name] = load_game(folder)
    return games


@dataclass
class StageConfig:
    upstream: str
    games: dict[str, GameFolder]
    store: Store
    key: str | None = None  # clients must send it (Authorization: Bearer, or X-Gmtags-Key)
    max_body: int = 8 * 1024 * 1024
    timeout: float = 300.0  # seconds for the model's whole answer (read timeout per chunk)
    connect_timeout: float = 10.0
    transport: httpx.AsyncBaseTransport | None = field(default=None, repr=False)


def error(status: int, message: str, kind: str = "invalid_request_error",
          code: str | None = None) -> JSONResponse:
    """An OpenAI-style error body."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": None,
                                   "code": code}}, status_code=status)


@dataclass
class Prepared:
    """A chat request made ready for the model: what to send and how to answer the reply."""

    request: dict[str, Any] | Body  # as the client sent it
    section: dict[str, str]  # the GM section's system message, sent as message ``at``
    at: int
    outcome: FoldOutcome
    before: str  # the text of a reply being continued, else ""

    @property
    def body(self) -> dict[str, Any]:
        """The request for the model: the client's, with the GM section added."""
        document = self.request.document if isinstance(self.request, Body) else self.request
        messages = document["messages"]
        return {**document,
                "messages": [*messages[:self.at], self.section, *messages[self.at:]]}

    def content(self) -> bytes:
        """:attr:`body` as JSON bytes: the client's own bytes with the section spliced in
        when they were read by a :class:`BodyReader` (nothing the client wrote is serialised
        again)."""
        if isinstance(self.request, Body):
            return self.request.spliced(self.at, json.dumps(self.section).encode())
        return json.dumps(self.body).encode()


def prepare(folder: GameFolder, cache: SnapshotCache, body: dict[str, Any] | Body) -> Prepared:
    """Fold the request's transcript and add the GM section to its messages (worker thread).

    A :class:`Body` (the client's bytes, read by a :class:`BodyReader`) lets the turns of the
    messages it shares with a recent request be reused without comparing them again."""
    read = body if isinstance(body, Body) else None
    messages = read.messages if read is not None else cast(dict[str, Any], body)["messages"]
    like = (read.base.messages, read.shared) if read is not None and read.base else None
    turns = cache.turns(messages, like)
    before = ""
    if folder.continue_replies and turns and turns[-1].role == "gm":
        # SillyTavern's Continue: the last GM message is the start of the reply being written.
        before = turns[-1].text
        turns = cache.drop_last(turns)
    outcome = fold_turns(folder.game, folder.start, turns, cache)
    section = folder.section(outcome.snapshot.state, outcome.snapshot.last_answers)
    leading = 0
    while leading < len(messages) and isinstance(messages[leading], dict) and messages[
            leading].get("role") in ("system", "developer"):
        leading += 1
    return Prepared(body, {"role": "system", "content": section}, leading, outcome, before)


def _metadata(prepared: Prepared, stream: ReplyStream) -> dict[str, Any]:
    return {**prepared.outcome.to_json(),
            "answers": [a.to_json() for a in stream.answers]}


def _client_headers(request: Request, config: StageConfig) -> dict[str, str]:
    headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED_HEADERS}
    if config.key is not None and headers.get("authorization") == f"Bearer {config.key}":
        del headers["authorization"]  # gmtags' own key is not the model server's
    return headers


def _authorised(request: Request, config: StageConfig) -> bool:
    if config.key is None:
        return True
    return config.key in (request.headers.get("x-gmtags-key"),
                          (request.headers.get("authorization") or "").removeprefix("Bearer "))


async def _read_json(request: Request, limit: int, reader: BodyReader | None = None) -> Any:
    """The request's JSON (a :class:`Body` for a chat request read by ``reader``)."""
    size = 0
    chunks: list[bytes] = []
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise InputError(f"request body larger than {limit} bytes")
        chunks.append(chunk)
    raw = b"".join(chunks)
    try:
        return json.loads(raw) if reader is None else reader.read(raw)
    except RecursionError:
        raise InputError("request body is nested too deeply") from None
    except ValueError as failure:  # not JSON, or not UTF-8
        raise InputError(f"request body is not JSON ({failure})") from None


def build_app(config: StageConfig) -> Starlette:
    """The stage as an ASGI app (uvicorn runs it; tests may too)."""
    cache = SnapshotCache(config.store, deferred=True)
    storing_now: set[asyncio.Future[None]] = set()  # flushes running (a task needs a reference)
    reader = BodyReader()
    upstream = config.upstream.rstrip("/")
    # TCP_NODELAY: a request's headers and body go out as separate writes; without it the
    # second one waits for the model server's delayed ACK (~40 ms on Linux).
    transport = config.transport or httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    client = httpx.AsyncClient(
        timeout=httpx.Timeout(config.timeout, connect=config.connect_timeout),
        transport=transport)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "games": sorted(config.games)})

    def _game(request: Request) -> GameFolder | Response:
        if not _authorised(request, config):
            return error(401, "missing or wrong gmtags key", "authentication_error")
        folder = config.games.get(request.path_params["game"])
        if folder is None:
            return error(404, f"no game {request.path_params['game'][:64]!r} on this server",
                         code="unknown_game")
        return folder

    async def models(request: Request) -> Response:
        folder = _game(request)
        if isinstance(folder, Response):
            return folder
        try:
            reply = await client.get(f"{upstream}/models",
                                     headers=_client_headers(request, config))
        except httpx.HTTPError as failure:
            return _upstream_failure(failure)
        return Response(reply.content, status_code=reply.status_code,
                        media_type=reply.headers.get("content-type", "application/json"))

    async def chat(request: Request) -> Response:
        folder = _game(request)
        if isinstance(folder, Response):
            return folder
        try:
            read = await _read_json(request, config.max_body, reader)
        except InputError as failure:
            status = 413 if "larger" in str(failure) else 400
            return error(status, str(failure))
        if not isinstance(read, Body) and (
                not isinstance(read, dict) or not isinstance(read.get("messages"), list)):
            return error(400, "the body must be a JSON object with a messages array")
        try:
            prepared = await run_in_threadpool(prepare, folder, cache, read)
        except TranscriptError as failure:
            return error(400, str(failure))
        stream = ReplyStream(folder.game, prepared.outcome.snapshot.state,
                             prepared.outcome.snapshot.replies, folder.answers, prepared.before)
        headers = _client_headers(request, config)
        # The body sent on is JSON in UTF-8, whatever the client called it (it was read as JSON).
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        headers["content-type"] = "application/json"
        # The new snapshots are stored while the model writes, and before the client has the
        # reply: its next request, on any process, finds them.
        storing = asyncio.ensure_future(run_in_threadpool(cache.flush))
        storing_now.add(storing)
        storing.add_done_callback(storing_now.discard)
        if read.get("stream"):
            response = await _streamed(request, prepared, stream, headers)
        else:
            response = await _whole(request, prepared, stream, headers)
        await storing
        return response

    async def _whole(request: Request, prepared: Prepared, stream: ReplyStream,
                     headers: dict[str, str]) -> Response:
        try:
            reply = await _unless_gone(request, client.post(
                f"{upstream}/chat/completions", content=prepared.content(), headers=headers))
        except ClientGone:
            return Response(status_code=499)
        except httpx.HTTPError as failure:
            return _upstream_failure(failure)
        if reply.status_code != 200:
            return _upstream_status(reply.status_code, reply.text)
        try:
            document = reply.json()
            message = document["choices"][0]["message"]
            content = message.get("content") or ""
        except (ValueError, KeyError, IndexError, TypeError, AttributeError):
            return error(502, "the model server's answer is not a chat completion",
                         "upstream_error")
        text = stream.feed(content) + stream.finish()
        message["content"] = text
        document["gmtags"] = _metadata(prepared, stream)
        return JSONResponse(document)

    async def _streamed(request: Request, prepared: Prepared, stream: ReplyStream,
                        headers: dict[str, str]) -> Response:
        upstream_request = client.build_request("POST", f"{upstream}/chat/completions",
                                                content=prepared.content(), headers=headers)
        try:
            # Until the model sends its headers the client's hanging up is watched here; then
            # StreamingResponse watches it and cancels _relay, which closes the model's stream.
            reply = await _unless_gone(request, client.send(upstream_request, stream=True))
        except ClientGone:
            return Response(status_code=499)
        except httpx.HTTPError as failure:
            return _upstream_failure(failure)
        if reply.status_code != 200:
            text = (await reply.aread()).decode("utf-8", "replace")
            await reply.aclose()
            return _upstream_status(reply.status_code, text)
        return StreamingResponse(_relay(reply, prepared, stream),
                                 media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})

    routes = [
        Route("/healthz", healthz),
        Route("/games/{game}/v1/models", models),
        Route("/games/{game}/v1/chat/completions", chat, methods=["POST"]),
        Route("/v1/replay", replay_endpoint(config), methods=["POST"]),
    ]
    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.aclose()
        await run_in_threadpool(cache.flush)

    return Starlette(routes=routes, lifespan=lifespan)


class ClientGone(Exception):
    """The client hung up before the model answered."""


async def _disconnected(request: Request) -> None:
    while True:
        message = await request.receive()
        if message["type"] == "http.disconnect":
            return


async def _unless_gone(request: Request, work: Coroutine[Any, Any, T]) -> T:
    """``work``'s result, unless the client hangs up first: then ``work`` (the request to the
    model) is cancelled, and has finished cancelling, before :class:`ClientGone` is raised.
    The request's body must have been read: what ``receive`` gives after it is the hang-up."""
    call = asyncio.ensure_future(work)
    gone = asyncio.ensure_future(_disconnected(request))
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


def _sse(document: Mapping[str, Any]) -> bytes:
    return f"data: {json.dumps(document, ensure_ascii=False)}\n\n".encode()


async def _relay(reply: httpx.Response, prepared: Prepared,
                 stream: ReplyStream) -> AsyncIterator[bytes]:
    """Pass the model's SSE stream on, holding back unfinished tags and answering them."""
    last: dict[str, Any] | None = None
    finished = False
    try:
        async for line in reply.aiter_lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = json.loads(data)
                choice = chunk["choices"][0] if chunk.get("choices") else None
            except (ValueError, KeyError, TypeError, AttributeError):
                continue
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                yield _sse(chunk)
                continue
            last = chunk
            delta = choice.get("delta") or {}
            text = stream.feed(delta.get("content") or "")
            if choice.get("finish_reason") is not None and not finished:
                text += stream.finish()
                finished = True
                chunk["gmtags"] = _metadata(prepared, stream)
            if "content" in delta or text:
                delta["content"] = text
                choice["delta"] = delta
            if text or choice.get("finish_reason") is not None or set(delta) - {"content"}:
                yield _sse(chunk)
    except httpx.HTTPError as failure:
        yield _sse({"error": {"message": f"the model server failed mid-stream "
                                         f"({type(failure).__name__})",
                              "type": "upstream_error", "param": None, "code": None}})
    finally:
        await reply.aclose()
    if not finished:
        rest = stream.finish()
        base = last or {"id": "gmtags", "object": "chat.completion.chunk", "choices": []}
        yield _sse({**base, "choices": [{"index": 0, "delta": {"content": rest},
                                         "finish_reason": "stop"}],
                    "gmtags": _metadata(prepared, stream)})
    yield b"data: [DONE]\n\n"


def _upstream_failure(failure: httpx.HTTPError) -> JSONResponse:
    if isinstance(failure, httpx.TimeoutException):
        return error(504, "the model server did not answer in time", "upstream_error",
                     "upstream_timeout")
    return error(502, f"the model server cannot be reached ({type(failure).__name__})",
                 "upstream_error", "upstream_unreachable")


def _upstream_status(status: int, text: str) -> JSONResponse:
    """The model server's own error, passed on with its status, as an OpenAI error body."""
    try:
        document = json.loads(text)
        detail = document["error"]["message"] if isinstance(document.get("error"), dict) \
            else str(document.get("error") or document)
    except (ValueError, AttributeError, KeyError, TypeError):
        detail = text
    return error(status, f"the model server answered {status}: {str(detail)[:500]}",
                 "upstream_error", "upstream_status")


def replay_endpoint(config: StageConfig) -> Any:
    """``POST /v1/replay``: ``{ruleset, party, transcript}`` → the replay JSON."""

    def run(body: dict[str, Any]) -> dict[str, Any]:
        game = load_ruleset(body["ruleset"])
        state = load_party(game, body.get("party"))
        source = body["transcript"]
        # A transcript file's text (any format gmtags reads), or an OpenAI messages array.
        if isinstance(source, list):
            transcript = transcript_from_openai(source)
        elif isinstance(source, str):
            transcript = parse_transcript(source)
        else:
            raise TranscriptError("transcript is a chat file's text or a messages array")
        return replay(game, transcript, state).to_json()

    async def endpoint(request: Request) -> Response:
        if not _authorised(request, config):
            return error(401, "missing or wrong gmtags key", "authentication_error")
        try:
            body = await _read_json(request, config.max_body)
        except InputError as failure:
            return error(413 if "larger" in str(failure) else 400, str(failure))
        if not isinstance(body, dict) or not isinstance(body.get("ruleset"), dict) or \
                "transcript" not in body:
            return error(400, "the body is {ruleset, party, transcript}")
        try:
            return JSONResponse(await run_in_threadpool(run, body))
        except (RulesetError, PartyError) as failure:
            return error(422, str(failure))
        except (InputError, TranscriptError, AttributeError, TypeError) as failure:
            return error(400, str(failure))

    return endpoint


__all__ = ["GameFolder", "StageConfig", "build_app", "load_game", "load_games",
           "prepare"]
