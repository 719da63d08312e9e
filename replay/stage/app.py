"""The HTTP stage: an OpenAI-compatible proxy that plays the rules (docs/design.md#interfaces).

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
import threading
import time
from collections import OrderedDict
from collections.abc import AsyncIterable, AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, cast

from starlette.applications import Starlette
from starlette.background import BackgroundTask
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route
from yarl import URL

from engine import Answer, Game, PartyError, RulesetError, State
from engine.text.prompt import (
    StackLines,
    front_context,
    reply_reminder,
    state_context,
    turn_context,
    with_last_answers,
)

from ..cache import (
    Budget,
    FoldOutcome,
    MemoryStore,
    OverBudget,
    Snapshot,
    SnapshotCache,
    Store,
    fold_turns,
    reply_position,
    store_usage,
)
from ..files import InputError, load_party, load_ruleset, read_json
from ..fold import replay
from ..formats import parse_transcript, transcript_from_openai
from ..formats.fields import unicode_text
from ..transcript import TranscriptError
from .answering import AnswerMode, ReplyStream
from .body import Body, BodyReader
from .client import Content, ModelClient, ModelReply, UpstreamFailure
from .cors import DEFAULT_ORIGINS, PanelCors
from .courtesy import LoopFirst
from .errors import error
from .layout import (
    Layout,
    PastAnswers,
    read_layout,
    state_index,
    without_answers,
    without_answers_json,
)
from .memory import Every, give_back
from .midreply import LegFailed, MidReply, MidReplyOptions, late_places, read_options
from .reading import (
    ClientGone,
    Deadline,
    DeadlinePassed,
    completion_of,
    read_body,
    read_reply,
    read_request,
    unless_gone,
    within,
)
from .state_view import VIEW, StateViews, ViewError, gmtags_version
from .textcomp.instruct import Template, read_template
from .textcomp.routes import StageTools, TextRoutes
from .upstream import (
    Redactor,
    SurrogateJoiner,
    Upstream,
    presented_keys,
    same_key,
    without_key,
)

log = logging.getLogger("gmtags.stage")
access = logging.getLogger("gmtags.access")

GAME_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")
SECTION_BEGIN = "=== gmtags: game state (written by gmtags, not by the player) ==="
FRONT_BEGIN = "=== gmtags: how to play (written by gmtags, not by the player) ==="
SECTION_END = "=== end of gmtags ==="
# Hop-by-hop and body headers are the proxy's own; everything else goes to the model as sent.
DROPPED_HEADERS = frozenset({
    "host", "content-length", "transfer-encoding", "connection", "keep-alive", "upgrade",
    "accept-encoding", "te", "trailer", "proxy-authorization", "proxy-connection",
})
# A request's work is done on the event loop when it is small: at most INLINE_BODY bytes of
# the body to parse (what it does not share with a recent body of the chat) and a fold of at
# most INLINE_FOLD (a few hundred tags at most, in milliseconds). Larger work goes to a worker
# thread, so that it cannot hold the loop while small requests of other chats wait; a thread
# hop costs more than the whole work of a small request (0.1-0.3 ms each, and a warm request
# of a 10,000-turn chat is small work in a large body).
INLINE_BODY = 64 * 1024
INLINE_FOLD = Budget(turns=16, chars=INLINE_BODY)
INLINE_ROWS = 16  # snapshots stored on the event loop after a reply; more go to a worker thread


class GmSection:
    """The delimited GM section of one game's prompts, remembered between requests.

    The state's blocks per state: a regenerated reply folds to the very state object the
    snapshot cache keeps parsed, and a reply that changes nothing (a check, a refusal) leaves
    the state object as it was, so only the last answers are written again. And each stack's
    line (:class:`engine.text.prompt.StackLines`): the next reply's state keeps most of the last
    state's stacks as they were, so only the lines of changed stacks are written.
    """

    # Per game, so a server of many games multiplies them: enough for the latest states and
    # stacks of a game's chats at once, and a bound on what they cost (a cache capped by entries
    # alone let a busy server's memory grow with its chats).
    STATES = 16
    LINES = 512

    def __init__(self, game: Game, states: int = STATES, mid_reply: bool = False) -> None:
        self.game = game
        self.mid_reply = mid_reply  # the instructions say each tag is answered right after it
        self.states = states
        self.lines = StackLines(self.LINES)
        self._texts: OrderedDict[int, tuple[State, str]] = OrderedDict()
        self._turns: OrderedDict[int, tuple[State, str]] = OrderedDict()
        # in a fight or not: the front part and the reminder depend on no more
        self._fronts: dict[bool, tuple[str, str]] = {}
        self._lock = threading.Lock()

    def __call__(self, state: State, last_answers: Sequence[Answer]) -> str:
        """The whole section, one message (``"stateDepth": null``)."""
        state_text = self._remembered(self._texts, state, lambda: state_context(
            self.game, state, self.lines, self.mid_reply))
        return "\n".join([SECTION_BEGIN, with_last_answers(state_text, last_answers),
                          SECTION_END])

    def parts(self, state: State, last_answers: Sequence[Answer]) -> tuple[str, str]:
        """The section in two (:mod:`replay.stage.layout`): what changes rarely, for the front
        of the prompt, and what changes each turn, for near its end."""
        fighting = state.encounter is not None
        found = self._fronts.get(fighting)
        if found is None:
            found = ("\n".join([FRONT_BEGIN, front_context(self.game, state, self.mid_reply),
                                SECTION_END]), reply_reminder(self.game, state))
            self._fronts[fighting] = found
        front, reminder = found
        turn_text = self._remembered(self._turns, state, lambda: turn_context(
            self.game, state, self.lines))
        return front, "\n".join([SECTION_BEGIN, with_last_answers(turn_text, last_answers),
                                 reminder, SECTION_END])

    def _remembered(self, texts: OrderedDict[int, tuple[State, str]], state: State,
                    write: Callable[[], str]) -> str:
        """``state``'s text in ``texts`` (the very state object), else ``write()``, kept."""
        with self._lock:
            found = texts.get(id(state))
            if found is not None and found[0] is state:
                texts.move_to_end(id(state))
                return found[1]
        text = write()
        with self._lock:
            texts[id(state)] = (state, text)
            texts.move_to_end(id(state))
            while len(texts) > self.states:
                texts.popitem(last=False)
        return text


@dataclass(frozen=True)
class GameFolder:
    """One game the stage serves: its ruleset, its start state and its options."""

    name: str
    game: Game
    start: State
    answers: AnswerMode = "inline"
    continue_replies: bool = True
    mid_reply: MidReplyOptions = field(default_factory=MidReplyOptions)
    layout: Layout = field(default_factory=Layout)
    instruct: Template | None = None  # how its text completion prompts are cut into turns
    section: GmSection = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "section", GmSection(self.game, mid_reply=self.mid_reply.stops))


def _problems(path: Path, failure: Exception) -> str:
    """Each line of a load error, prefixed with the file it is about (``file#/pointer: …``)."""
    lines = str(failure).splitlines() or [type(failure).__name__]
    named = str(path)
    return "\n".join(line if line.startswith(named) else
                     f"{named}#{line}" if line.startswith("/") else f"{named}: {line}"
                     for line in lines)


def load_game(folder: Path) -> GameFolder:
    """Read ``ruleset.json``, ``party.json`` (optional) and ``options.json`` (optional).

    Raises :class:`InputError` naming the file and, for a ruleset or party, every problem's
    JSON pointer."""
    path = folder / "ruleset.json"
    try:
        game = load_ruleset(path)
        path = folder / "party.json"
        start = load_party(game, path if path.exists() else None)
        path = folder / "options.json"
        options: dict[str, Any] = {}
        if path.exists():
            loaded = read_json(path)
            if not isinstance(loaded, dict):
                raise InputError("/: options are a JSON object")
            options = loaded
    except (InputError, RulesetError, PartyError) as failure:
        raise InputError(_problems(path, failure)) from None
    answers = options.get("answers", "inline")
    if answers not in ("inline", "block", "none"):
        raise InputError(f"{path}#/answers: is inline, block or none, not {answers!r}")
    return GameFolder(folder.name, game, start, answers,
                      bool(options.get("continue", True)), read_options(options, path),
                      read_layout(options, path), read_template(options, path))


@dataclass
class Games:
    """The game folders under a games folder: those that load, and why each other one does
    not (a broken folder disables its game, never the server)."""

    ready: dict[str, GameFolder] = field(default_factory=dict)
    broken: dict[str, str] = field(default_factory=dict)  # game -> its problems, one a line


def load_games(root: Path) -> Games:
    """Every game folder under ``root`` (a folder with a ``ruleset.json``)."""
    games = Games()
    for folder in sorted(root.iterdir()):
        if folder.is_dir() and GAME_NAME.fullmatch(folder.name) and (
                folder / "ruleset.json").exists():
            try:
                games.ready[folder.name] = load_game(folder)
            except InputError as failure:
                games.broken[folder.name] = str(failure)
    return games


@dataclass
class StageConfig:
    upstream: str
    games: dict[str, GameFolder] | Games
    store: Store
    key: str | None = field(default=None, repr=False)  # clients must send it (Authorization,
    # with or without Bearer, or X-Gmtags-Key)
    max_body: int = 8 * 1024 * 1024
    timeout: float = 300.0  # seconds the model server may stay silent (connect, each read)
    deadline: float | None = None  # seconds one reply may take in all, None: no limit
    connect_timeout: float = 10.0
    clock: Callable[[], float] = field(default=lambda: time.monotonic(), repr=False)
    # the pages that may read /healthz and the state view (replay.stage.cors)
    cors_origins: tuple[str, ...] = DEFAULT_ORIGINS

    @property
    def game_folders(self) -> Games:
        return self.games if isinstance(self.games, Games) else Games(dict(self.games))


@dataclass
class Prepared:
    """A chat request made ready for the model: what to send and how to answer the reply."""

    request: dict[str, Any] | Body  # as the client sent it
    section: dict[str, str]  # the GM section's system message (its front part), sent as
    at: int  # message ``at``
    outcome: FoldOutcome
    before: str  # the text of a reply being continued, else ""
    resolve: dict[str, Any] | None = None  # what the metadata says of mid-reply answers
    turn: dict[str, str] | None = None  # the section's turn part, sent before message
    turn_at: int = 0  # ``turn_at`` (replay.stage.layout)
    past: PastAnswers = "inline"  # how the model reads its past replies (replay.stage.layout)

    @property
    def body(self) -> dict[str, Any]:
        """The request for the model: the client's, with the GM section added (and its past
        replies as the layout shows them)."""
        document = self.request.document if isinstance(self.request, Body) else self.request
        messages = document["messages"]
        if self.past != "section":
            edits: Mapping[int, dict[str, Any]] = {}
        elif isinstance(self.request, Body):  # remembered along the chat's shared messages
            edits = self.request.rewritten(without_answers)
        else:
            edits = {i: e for i, m in enumerate(messages) if (e := without_answers(m))}
        shown: list[Any] = []
        for index, message in enumerate(messages):
            shown += self._inserted(index)
            shown.append(edits.get(index, message))
        shown += self._inserted(len(messages))
        return {**document, "messages": shown}

    def _inserted(self, index: int) -> list[dict[str, str]]:
        """The section's messages that go before message ``index``."""
        found = [self.section] if index == self.at else []
        if self.turn is not None and index == self.turn_at:
            found.append(self.turn)
        return found

    def content(self) -> bytes:
        """:attr:`body` as JSON bytes: the client's own bytes with the section spliced in
        when they were read by a :class:`BodyReader` (nothing the client wrote is serialised
        again)."""
        return b"".join(self.pieces())

    def pieces(self) -> tuple[bytes | memoryview, ...]:
        """:meth:`content` as pieces sent one after the other: the client's bytes are not
        copied into a new body (a copy of megabytes, and its fresh pages, per request)."""
        if not isinstance(self.request, Body):
            return (json.dumps(self.body).encode(),)
        inserted = [(self.at, json.dumps(self.section).encode())]
        if self.turn is not None:
            inserted.append((self.turn_at, json.dumps(self.turn).encode()))
        replaced = self.request.rewritten(without_answers_json) if self.past == "section" \
            else {}
        return self.request.edited(inserted, replaced)


def prepare(folder: GameFolder, cache: SnapshotCache, body: dict[str, Any] | Body,
            budget: Budget | None = None, pause: Callable[[], None] | None = None,
            continues: bool | None = None) -> Prepared:
    """Fold the request's transcript and add the GM section to its messages.

    A :class:`Body` (the client's bytes, read by a :class:`BodyReader`) lets the turns of the
    messages it shares with a recent request be reused without comparing them again. With a
    ``budget`` (on the event loop), a fold larger than it raises :class:`OverBudget` before
    anything is folded; without one (in a worker thread), ``pause`` is called between its
    replies (default: let go of the GIL for a moment; the stage passes a
    :class:`~replay.stage.courtesy.LoopFirst`), so that small requests on the event loop are
    not kept waiting behind it (one big fold on the loop held every other chat's requests up
    for seconds). ``continues``: whether a last GM message is a reply being continued (default:
    the game's ``"continue"`` option; a text completion prompt that ends inside a reply always
    is)."""
    read = body if isinstance(body, Body) else None
    messages = read.messages if read is not None else cast(dict[str, Any], body)["messages"]
    like = (read.base.messages, read.shared) if read is not None and read.base else None
    turns = cache.turns(messages, like)
    before = ""
    if (folder.continue_replies if continues is None else continues) and turns and \
            turns[-1].role == "gm":
        # SillyTavern's Continue: the last GM message is the start of the reply being written.
        before = turns[-1].text
        turns = cache.drop_last(turns)
    if budget is not None:
        pause = None
    elif pause is None:
        pause = _yield_gil
    outcome = fold_turns(folder.game, folder.start, turns, cache, pause, budget)
    state, last = outcome.snapshot.state, outcome.snapshot.last_answers
    leading = 0
    while leading < len(messages) and isinstance(messages[leading], dict) and messages[
            leading].get("role") in ("system", "developer"):
        leading += 1
    layout = folder.layout
    if layout.state_depth is None:
        return Prepared(body, {"role": "system", "content": folder.section(state, last)},
                        leading, outcome, before, _resolve(folder), past=layout.past_answers)
    front, turn = folder.section.parts(state, last)
    return Prepared(body, {"role": "system", "content": front}, leading, outcome, before,
                    _resolve(folder), {"role": "system", "content": turn},
                    state_index(len(messages), leading, layout.state_depth),
                    layout.past_answers)


def _model_wrote(stream: ReplyStream) -> dict[str, Any]:
    """What the metadata says of the model's own answer parts taken out of the reply
    (``takenOut``, as it wrote them), of its tags written under a wrong head and read as the
    tags they are (``readAs``: ``wrote`` and ``read``) and of a reply ended early (``cut``);
    nothing when none of these happened."""
    found: dict[str, Any] = {}
    if stream.taken:
        found["takenOut"] = list(stream.taken)
    if stream.mended:
        found["readAs"] = [dict(m) for m in stream.mended]
    if stream.cut is not None:
        found["cut"] = dict(stream.cut)
    return found


def _tag_counts(stream: ReplyStream) -> str:
    """`` answered=2 refused=malformed:1,unknown-item:1 takenOut=1 cut=echo`` of a reply."""
    refused: dict[str, int] = {}
    for answer in stream.answers:
        if not answer.ok:
            refused[answer.reason or "-"] = refused.get(answer.reason or "-", 0) + 1
    text = f" answered={len(stream.answers) - sum(refused.values())}"
    if refused:
        text += " refused=" + ",".join(f"{reason}:{count}" for reason, count in sorted(
            refused.items()))
    if stream.taken:
        text += f" takenOut={len(stream.taken)}"
    if stream.mended:
        text += f" readAs={len(stream.mended)}"
    if stream.cut is not None:
        text += f" cut={stream.cut['reason']}"
    return text


def _metadata(prepared: Prepared, stream: ReplyStream) -> dict[str, Any]:
    found = {**prepared.outcome.to_json(), "answers": [a.to_json() for a in stream.answers],
             **_model_wrote(stream)}
    return found if prepared.resolve is None else {**found, "resolve": prepared.resolve}


def _mid_metadata(prepared: Prepared, mid: MidReply) -> dict[str, Any]:
    """The metadata of a reply answered mid-way: which tags it stopped at, and a note on a
    [place:] written after other tags, which is answered only after the reply
    (docs/design.md#mid-reply-answers)."""
    differs = mid.differs()
    if differs:
        log.warning("mid-reply: %d answer(s) the model read differ from the whole reply's "
                    "(the fold should answer each stop before the tags after it)", len(differs))
    resolve = {"mode": "mid-reply", "upstreamContinues": mid.options.continues,
               "stops": len(mid.stopped), "stoppedAt": mid.stopped, "differs": differs}
    return {**prepared.outcome.to_json(), "answers": late_places(mid.stream.answers, mid.stopped),
            **_model_wrote(mid.stream), "resolve": resolve}


def _resolve(folder: GameFolder) -> dict[str, Any] | None:
    """What the metadata says of ``"resolve"`` when the reply is answered after it."""
    if folder.mid_reply.resolve == "mid-reply":  # and the upstream cannot continue a reply
        return {"mode": "after", "upstreamContinues": "no",
                "note": 'answered after the reply: "upstreamContinues" is "no", so the model '
                        "was not stopped at its tags"}
    return None


def _client_headers(request: Request, config: StageConfig) -> dict[str, str]:
    """The client's headers for the model server: gmtags' own key is not the model's."""
    headers = {k: v for k, v in request.headers.items() if k.lower() not in DROPPED_HEADERS}
    return without_key(headers, config.key)


def _authorised(request: Request, config: StageConfig) -> bool:
    if config.key is None:
        return True
    matched = False
    for value in presented_keys(request.headers):
        matched = same_key(value, config.key) or matched  # every one compared: no early exit
    return matched


async def _read_json(request: Request, limit: int,
                     reader: BodyReader | None = None) -> tuple[Any, bool]:
    """The request's JSON (a :class:`Body` for a chat request read by ``reader``), and whether
    it was read on the event loop: a body with more than :data:`INLINE_BODY` bytes to parse
    is parsed in a worker thread, so that it does not hold the loop."""
    raw = await read_request(request, limit)
    try:
        return _parse(raw, reader, INLINE_BODY), True
    except OverBudget:
        return await run_in_threadpool(_parse, raw, reader, None), False


def _yield_gil() -> None:
    time.sleep(0)


def _parse(raw: bytes, reader: BodyReader | None, most: int | None) -> Any:
    """``raw``'s JSON; more than ``most`` bytes to parse raises :class:`OverBudget`."""
    if reader is None and most is not None and len(raw) > most:
        raise OverBudget
    try:
        return json.loads(raw) if reader is None else reader.read(raw, most)
    except RecursionError:
        raise InputError("request body is nested too deeply") from None
    except ValueError as failure:  # not JSON, or not UTF-8
        raise InputError(f"request body is not JSON ({failure})") from None


def build_app(config: StageConfig) -> Starlette:
    """The stage as an ASGI app (uvicorn runs it; tests may too)."""
    cache = SnapshotCache(config.store, deferred=True, replies=True)
    local = isinstance(config.store, MemoryStore)  # only this process reads it
    running: set[asyncio.Future[Any]] = set()  # flushes and trims (a task needs a reference)
    reader = BodyReader()
    trimming = Every()  # memory given back to the system (replay.stage.memory)
    upstream = Upstream.parse(config.upstream)
    Redactor([*upstream.secrets, *([config.key] if config.key else [])]).install()
    games = config.game_folders
    # aiohttp turns Nagle off (TCP_NODELAY) on its connections: without that a request's
    # body waits for the model server's delayed ACK of its headers (~40 ms on Linux).
    client = ModelClient(config.timeout, config.connect_timeout)

    async def healthz(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": gmtags_version(),
                             "api": {"state": VIEW}, "games": sorted(games.ready),
                             "broken": sorted(games.broken),
                             "snapshots": store_usage(config.store)})

    def _game(request: Request) -> GameFolder | Response:
        if not _authorised(request, config):
            return error(401, "missing or wrong gmtags key (send it as the API key, or in an "
                         "X-Gmtags-Key header)", "authentication_error")
        name = request.path_params["game"]
        folder = games.ready.get(name)
        if folder is None:
            if name in games.broken:
                return error(503, f"game {name!r} is disabled: its folder does not load "
                             "(the server's log and `gmtags serve --check` list why)",
                             "server_error", "broken_game")
            return error(404, f"no game {name[:64]!r} on this server", code="unknown_game")
        return folder

    async def models(request: Request) -> Response:
        folder = _game(request)
        if isinstance(folder, Response):
            return folder
        try:
            deadline = Deadline(config.clock, config.deadline)
            status, kind, raw = await within(deadline, read_reply(
                client, "GET", upstream.endpoint("models"), None, _client_headers(request, config),
                deadline))
        except DeadlinePassed:
            return _deadline_failure(config)
        except UpstreamFailure as failure:
            return _upstream_failure(failure)
        if status != 200:
            return _upstream_status(status, raw.decode("utf-8", "replace"))
        return Response(raw, status_code=status, media_type=kind or "application/json")

    views = StateViews(cache)

    async def state(request: Request) -> Response:
        """The game as the player sees it (replay.stage.state_view), folded in a worker
        thread that lets the event loop go first."""
        folder = _game(request)
        if isinstance(folder, Response):
            return folder
        try:
            body, _ = await _read_json(request, config.max_body)
        except InputError as failure:
            return error(413 if "larger" in str(failure) else 400, str(failure))
        try:
            return JSONResponse(await run_in_threadpool(
                views.view, folder, body, LoopFirst(asyncio.get_running_loop())))
        except ViewError as failure:
            return error(failure.status, str(failure), code=failure.code)

    async def chat(request: Request) -> Response:
        began = time.perf_counter()
        folder = _game(request)
        if isinstance(folder, Response):
            _access(request, folder.status_code, began)
            return folder
        response, prepared, stream = await _chat(request, folder)
        if isinstance(response, StreamingResponse) and stream is not None:
            # logged once the whole reply is sent: its tags are known only then
            response.body_iterator = _logged(response.body_iterator, request, began, prepared,
                                             stream)
        else:
            _access(request, response.status_code, began, prepared, stream)
        return response

    async def _logged(events: AsyncIterable[Any], request: Request, began: float,
                      prepared: Prepared | None, stream: ReplyStream) -> AsyncIterator[Any]:
        """A streamed reply's events, and its access line when the last one is sent (or the
        client left): the time to the first event beside the whole reply's."""
        first: float | None = None
        try:
            async for event in events:
                if first is None:
                    first = time.perf_counter()
                yield event
        finally:
            _access(request, 200, began, prepared, stream, first)

    async def _chat(request: Request, folder: GameFolder) -> tuple[
            Response, Prepared | None, ReplyStream | None]:
        try:
            read, inline = await _read_json(request, config.max_body, reader)
        except InputError as failure:
            status = 413 if "larger" in str(failure) else 400
            return error(status, str(failure)), None, None
        if not isinstance(read, Body) and (
                not isinstance(read, dict) or not isinstance(read.get("messages"), list)):
            return error(400, "the body must be a JSON object with a messages array"), None, None
        try:
            prepared = await _prepared(folder, read, inline)
        except TranscriptError as failure:
            return error(400, str(failure)), None, None
        stream = ReplyStream(folder.game, prepared.outcome.snapshot.state,
                             prepared.outcome.snapshot.replies, folder.answers, prepared.before)
        headers = _client_headers(request, config)
        # The body sent on is JSON in UTF-8, whatever the client called it (it was read as JSON).
        headers = {k: v for k, v in headers.items() if k.lower() != "content-type"}
        headers["content-type"] = "application/json"
        storing = _storing()
        deadline = Deadline(config.clock, config.deadline)
        if folder.mid_reply.stops:
            mid = MidReply(client, upstream.endpoint("chat/completions"), headers, prepared.body,
                           stream, folder.mid_reply, deadline)
            response = await _mid_reply(request, prepared, mid)
        elif read.get("stream"):
            response = await _streamed(request, prepared, stream, headers, deadline)
        else:
            response = await _whole(request, prepared, stream, headers, deadline)
        await _stored(response, storing)
        return response, prepared, stream

    async def _prepared(folder: GameFolder, read: dict[str, Any] | Body, inline: bool,
                        continues: bool | None = None) -> Prepared:
        """:func:`prepare` on the event loop when it is small work, else in a worker thread.
        A body parsed in a worker thread is large work already (its turns, their keys): its
        fold goes there too, without trying the loop first."""
        if inline:
            with suppress(OverBudget):  # nothing was folded: fold it where it may take long
                return prepare(folder, cache, read, INLINE_FOLD, None, continues)
        return await run_in_threadpool(prepare, folder, cache, read, None,
                                       LoopFirst(asyncio.get_running_loop()), continues)

    def _storing() -> asyncio.Future[Any] | None:
        """Before the request goes to the model: a shared store (Redis) gets the new snapshots
        while the model writes, and before the client has the reply: its next request, on any
        process, finds them. This process's own store is filled once the reply is sent
        (_stored_after): until then its lookups see them anyway, and a flush in a thread
        beside the reply took the GIL from it. What this request folded, taken now: the
        reply's own snapshot (saved once it is answered) waits for the next flush, however
        late the thread starts."""
        storing = _in_thread(cache.taken()) if cache.pending and not local else None
        if trimming.due():
            _in_thread(give_back)
        return storing

    async def _stored(response: Response, storing: asyncio.Future[Any] | None) -> None:
        """Once the response is made: the shared store's flush waited for, or this process's
        store filled after the response is sent."""
        if storing is not None:
            await storing
        elif cache.pending:
            response.background = BackgroundTask(_stored_after)

    def _in_thread(work: Callable[[], Any]) -> asyncio.Future[Any]:
        """``work`` started in a worker thread, held until it is done."""
        future = asyncio.ensure_future(run_in_threadpool(work))
        running.add(future)
        future.add_done_callback(running.discard)
        return future

    async def _stored_after() -> None:
        """Store what the last replies folded, once the reply is sent: a few snapshots on the
        event loop (a thread hop costs more), a large fold's in a worker thread."""
        if cache.queued <= INLINE_ROWS:
            cache.flush()
        else:
            await run_in_threadpool(cache.flush)

    async def _whole(request: Request, prepared: Prepared, stream: ReplyStream,
                     headers: dict[str, str], deadline: Deadline) -> Response:
        try:
            status, _, raw = await unless_gone(request, within(deadline, read_reply(
                client, "POST", upstream.endpoint("chat/completions"), prepared.pieces(),
                headers, deadline)))
        except ClientGone:
            return Response(status_code=499)
        except DeadlinePassed:
            return _deadline_failure(config)
        except UpstreamFailure as failure:
            return _upstream_failure(failure)
        if status != 200:
            return _upstream_status(status, raw.decode("utf-8", "replace"))
        completion = completion_of(raw)
        if completion is None:
            log.warning("model server: answered with something that is not a chat completion")
            return error(502, "the model server's answer is not a chat completion",
                         "upstream_error", "upstream_protocol")
        document, message = completion
        message["content"] = _answered(stream, message)
        document["gmtags"] = _metadata(prepared, stream)
        _remember(cache, prepared, stream)
        return JSONResponse(document)

    async def _opened(request: Request, url: URL, content: Content, headers: dict[str, str],
                      deadline: Deadline) -> ModelReply | Response:
        """The model's streamed reply once it sent its headers with a 200, or the response
        that says why not (the client gone: 499; the deadline; the model unreachable or
        answering with an error status). Until the model sends its headers the client's
        hanging up is watched here; then StreamingResponse watches it and cancels the relay,
        which closes the model's stream."""
        try:
            reply = await unless_gone(request, within(deadline, client.send(
                "POST", url, headers, content)))
        except ClientGone:
            return Response(status_code=499)
        except DeadlinePassed:
            return _deadline_failure(config)
        except UpstreamFailure as failure:
            return _upstream_failure(failure)
        if reply.status != 200:
            try:
                text = (await within(deadline, read_body(reply, deadline))).decode(
                    "utf-8", "replace")
            except (DeadlinePassed, UpstreamFailure):
                text = ""
            finally:
                await reply.close()
            return _upstream_status(reply.status, text)
        return reply

    async def _streamed(request: Request, prepared: Prepared, stream: ReplyStream,
                        headers: dict[str, str], deadline: Deadline) -> Response:
        reply = await _opened(request, upstream.endpoint("chat/completions"),
                              prepared.pieces(), headers, deadline)
        if isinstance(reply, Response):
            return reply
        kind = reply.media_type
        events = _relay(reply, prepared, stream, deadline, config, cache) \
            if kind in ("text/event-stream", "") else \
            _restream(reply, prepared, stream, deadline, config, cache)
        return StreamingResponse(events, media_type="text/event-stream",
                                 headers={"cache-control": "no-cache"})

    async def _mid_reply(request: Request, prepared: Prepared, mid: MidReply) -> Response:
        """A reply answered mid-way (docs/design.md#mid-reply-answers): its first request's failure
        is the response's, as for any reply; after that the reply is one stream, or one
        completion."""
        reply = await _opened(request, mid.url, mid.first_content(prepared.pieces()),
                              mid.headers, mid.deadline)
        if isinstance(reply, Response):
            return reply
        if mid.client_streams:
            return StreamingResponse(_mid_events(reply, prepared, mid, config),
                                     media_type="text/event-stream",
                                     headers={"cache-control": "no-cache"})
        try:
            text = await unless_gone(request, within(mid.deadline, _joined(mid.run(reply))))
        except ClientGone:
            return Response(status_code=499)
        except DeadlinePassed:
            return _deadline_failure(config)
        except LegFailed as failure:
            log.warning("model server: %s", failure.message)
            return error(502, failure.message, "upstream_error", failure.code)
        document: dict[str, Any] = {
            **mid.base, "object": "chat.completion",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text},
                         "finish_reason": mid.finish}]}
        if mid.usage is not None:
            document["usage"] = mid.usage
        document["gmtags"] = _mid_metadata(prepared, mid)
        return JSONResponse(document)

    def _access(request: Request, status: int, began: float,
                prepared: Prepared | None = None, stream: ReplyStream | None = None,
                first: float | None = None) -> None:
        """One line per chat request: game, status, time (a streamed reply's to its first
        event, ``ms``, and to its end, ``total``), turns folded, anchor, and what became of the
        reply's tags: answered, refused by reason, the model's answer parts taken out, a cut.
        No headers, no body, no URL: nothing that may be secret."""
        now = time.perf_counter()
        outcome = prepared.outcome if prepared is not None else None
        timing = f"ms={((first or now) - began) * 1000:.1f}"
        if first is not None:
            timing += f" total={(now - began) * 1000:.1f}"
        access.info("game=%s status=%d %s folded=%s reused=%s anchor=%s anchored=%s%s",
                    request.path_params.get("game", "-")[:64], status, timing,
                    outcome.folded if outcome else "-", outcome.reused if outcome else "-",
                    outcome.anchor if outcome else "-",
                    str(outcome.anchored).lower() if outcome else "-",
                    _tag_counts(stream) if stream is not None and status == 200 else "")

    async def not_found(request: Request, failure: Exception) -> Response:
        status = failure.status_code if isinstance(failure, HTTPException) else 500
        if status == 405:
            return error(405, f"{request.method} is not allowed on {request.url.path[:200]}",
                         code="method_not_allowed")
        if status == 404:
            return error(404, f"no route {request.url.path[:200]!r} (chat requests go to "
                         "/games/<game>/v1/chat/completions)", code="not_found")
        return error(status, str(getattr(failure, "detail", "")) or "error")

    text = TextRoutes(StageTools(
        config.max_body, lambda: Deadline(config.clock, config.deadline), client,
        upstream.root, _game, lambda request: _client_headers(request, config), _prepared,
        _storing, _stored, lambda prepared, stream: _remember(cache, prepared, stream),
        _metadata, _mid_metadata, _access, _logged))
    routes = [
        Route("/healthz", healthz),
        Route("/games/{game}/v1/models", models),
        Route("/games/{game}/v1/chat/completions", chat, methods=["POST"]),
        Route("/games/{game}/v1/state", state, methods=["POST"]),
        Route("/v1/replay", replay_endpoint(config), methods=["POST"]),
        *text.routes(),
    ]

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        yield
        await client.close()
        await run_in_threadpool(cache.flush)

    app = Starlette(routes=routes, lifespan=lifespan,
                    exception_handlers={404: not_found, 405: not_found},
                    middleware=[Middleware(PanelCors, origins=config.cors_origins)])
    app.router.redirect_slashes = False  # a POST redirected loses its body: answer 404 instead
    return app


def _remember(cache: SnapshotCache, prepared: Prepared, stream: ReplyStream) -> None:
    """Save the state after a reply answered whole, where the chat's next request finds it
    when it holds the reply as the client got it (SnapshotCache.save_reply)."""
    if not stream.finished:
        return
    before = prepared.outcome.snapshot
    cache.save_reply(reply_position(prepared.outcome.end, stream.shown),
                     Snapshot(stream.after, before.replies + 1, tuple(stream.answers),
                              before.doubts))


def _answered(stream: ReplyStream, message: dict[str, Any]) -> str:
    """A whole completion's message content, with its tags answered."""
    return stream.feed(unicode_text(message.get("content") or "")) + stream.finish()


def _deadline_passed(config: StageConfig) -> str:
    """Log that a reply passed ``--deadline``; the message for the client."""
    log.warning("model server: the reply took longer than --deadline %ss", config.deadline)
    return f"the reply took longer than the stage's deadline ({config.deadline} s)"


def _deadline_failure(config: StageConfig) -> JSONResponse:
    return error(504, _deadline_passed(config), "upstream_error", "deadline")


def _sse(document: Mapping[str, Any]) -> bytes:
    # Every text in it went through unicode_text or a SurrogateJoiner; "replace" is the last
    # guard that an event is never invalid UTF-8.
    return f"data: {json.dumps(document, ensure_ascii=False)}\n\n".encode("utf-8", "replace")


def _error_event(message: str, code: str) -> bytes:
    return _sse({"error": {"message": message, "type": "upstream_error", "param": None,
                           "code": code}})


async def _relay(reply: ModelReply, prepared: Prepared, stream: ReplyStream,
                 deadline: Deadline, config: StageConfig,
                 cache: SnapshotCache) -> AsyncIterator[bytes]:
    """Pass the model's SSE stream on, holding back unfinished tags and answering them."""
    last: dict[str, Any] | None = None
    finished = False
    failed = False
    joiner = SurrogateJoiner()
    try:
        async for line in reply.lines():
            if deadline.passed:
                yield _error_event(_deadline_passed(config), "deadline")
                failed = True
                break
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                break
            try:
                chunk = json.loads(data)
                choice = chunk["choices"][0] if chunk.get("choices") else None
            except (ValueError, KeyError, TypeError, AttributeError, IndexError):
                continue
            if not isinstance(choice, dict) or choice.get("index", 0) != 0:
                yield _sse(chunk)
                continue
            last = chunk
            delta = choice.get("delta") or {}
            piece = delta.get("content")
            text = stream.feed(joiner.feed(piece if isinstance(piece, str) else ""))
            if stream.cut is not None:  # a model in a loop: its reply ends here, and so does
                choice["finish_reason"] = "stop"  # the stream (closed below)
            if choice.get("finish_reason") is not None and not finished:
                text += stream.feed(joiner.finish()) + stream.finish()
                finished = True
                chunk["gmtags"] = _metadata(prepared, stream)
            if "content" in delta or text:
                delta["content"] = text
                choice["delta"] = delta
            if text or choice.get("finish_reason") is not None or set(delta) - {"content"}:
                yield _sse(chunk)
            if stream.cut is not None:
                break
    except UpstreamFailure as failure:
        log.warning("model server: failed mid-stream (%s)", failure.name)
        yield _error_event(f"the model server failed mid-stream ({failure.name})",
                           "upstream_failed")
        failed = True
    finally:
        await reply.close()
    if last is None and not failed:
        # Not one chat completion chunk: a protocol fault, never an empty success.
        log.warning("model server: its stream held no chat completion chunk")
        yield _error_event("the model server's stream held no chat completion chunk",
                           "upstream_protocol")
    elif not finished:
        rest = stream.feed(joiner.finish()) + stream.finish()
        base = last or {"id": "gmtags", "object": "chat.completion.chunk", "choices": []}
        yield _sse({**base, "choices": [{"index": 0, "delta": {"content": rest},
                                         "finish_reason": "stop"}],
                    "gmtags": _metadata(prepared, stream)})
    if not failed:
        _remember(cache, prepared, stream)
    yield b"data: [DONE]\n\n"


async def _joined(pieces: AsyncIterator[str]) -> str:
    return "".join([piece async for piece in pieces])


async def _mid_events(reply: ModelReply, prepared: Prepared, mid: MidReply,
                      config: StageConfig) -> AsyncIterator[bytes]:
    """A reply answered mid-way as one event stream: the answered text as it comes over
    every request of the reply, one finish (with the metadata and the summed usage), one
    ``[DONE]``; a failure after the first request ends it with an error event."""
    base = {**mid.base, "object": "chat.completion.chunk"}
    role = True
    try:
        async for text in mid.run(reply):
            base = {**mid.base, "object": "chat.completion.chunk"}
            delta = {"role": "assistant", "content": text} if role else {"content": text}
            role = False
            yield _sse({**base, "choices": [{"index": 0, "delta": delta,
                                             "finish_reason": None}]})
    except DeadlinePassed:
        yield _error_event(_deadline_passed(config), "deadline")
        yield b"data: [DONE]\n\n"
        return
    except LegFailed as failure:
        log.warning("model server: %s", failure.message)
        yield _error_event(failure.message, failure.code)
        yield b"data: [DONE]\n\n"
        return
    base = {**mid.base, "object": "chat.completion.chunk"}
    last: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": {},
                                                 "finish_reason": mid.finish}],
                            "gmtags": _mid_metadata(prepared, mid)}
    if mid.usage is not None:
        last["usage"] = mid.usage
    yield _sse(last)
    yield b"data: [DONE]\n\n"


async def _restream(reply: ModelReply, prepared: Prepared, stream: ReplyStream,
                    deadline: Deadline, config: StageConfig,
                    cache: SnapshotCache) -> AsyncIterator[bytes]:
    """A model server that answers a stream request with a whole JSON completion: its answer
    sent as one chunk and the finish; anything else an error event."""
    raw = b""
    try:
        raw = await read_body(reply, deadline)
    except DeadlinePassed:
        yield _error_event(_deadline_passed(config), "deadline")
        yield b"data: [DONE]\n\n"
        return
    except UpstreamFailure as failure:
        log.warning("model server: failed mid-answer (%s)", failure.name)
    finally:
        await reply.close()
    completion = completion_of(raw)
    if completion is None:
        log.warning("model server: answered a stream request with neither a stream nor a "
                    "chat completion")
        yield _error_event("the model server answered with neither an event stream nor a chat "
                           "completion", "upstream_protocol")
        yield b"data: [DONE]\n\n"
        return
    document, message = completion
    text = _answered(stream, message)
    _remember(cache, prepared, stream)
    base = {"id": document.get("id", "gmtags"), "object": "chat.completion.chunk",
            "created": document.get("created", 0), "model": document.get("model")}
    finish = document["choices"][0].get("finish_reason") or "stop"
    yield _sse({**base, "choices": [{"index": 0, "delta": {"role": "assistant",
                                                          "content": text},
                                     "finish_reason": None}]})
    yield _sse({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": finish}],
                "gmtags": _metadata(prepared, stream)})
    yield b"data: [DONE]\n\n"


def _upstream_failure(failure: UpstreamFailure) -> JSONResponse:
    if failure.timed_out:
        log.warning("model server: no answer within --timeout (%s)", failure.name)
        return error(504, "the model server did not answer in time", "upstream_error",
                     "upstream_timeout")
    log.warning("model server: cannot be reached (%s)", failure.name)
    return error(502, f"the model server cannot be reached ({failure.name})",
                 "upstream_error", "upstream_unreachable")


def _upstream_status(status: int, text: str) -> JSONResponse:
    """The model server's own error, passed on with its status, as an OpenAI error body."""
    try:
        document = json.loads(text)
        detail = document["error"]["message"] if isinstance(document.get("error"), dict) \
            else str(document.get("error") or document)
    except (ValueError, AttributeError, KeyError, TypeError):
        detail = text
    log.warning("model server: answered %d", status)
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
            body, _ = await _read_json(request, config.max_body)
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


__all__ = ["GameFolder", "Games", "StageConfig", "build_app", "load_game", "load_games",
           "prepare"]
