"""The stage keeps every secret secret and fails only as OpenAI errors (issue 22, findings 2-10).

Real loopback servers throughout: the scripted fake model, the stage in a thread or as a real
``gmtags serve`` process, and for protocol faults an upstream written by hand (a Starlette app
whose answers each test writes), which a real model server would not produce on demand.
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
import shutil
import subprocess
import sys
import threading
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from freezegun import freeze_time
from stage_servers import (
    FIXTURES,
    FakeModel,
    ServerThread,
    Stage,
    free_port,
    serve_process,
    start_stage,
    stop_process,
)
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from engine.rules import state as state_module
from engine.rules.memo import IdentityMemo
from replay import cache as cache_module
from replay import replay
from replay.cache import (
    DEFAULT_CACHE_MB,
    ENTRY_OVERHEAD,
    Budget,
    LayeredStore,
    MemoryStore,
    OverBudget,
    RedisStore,
    SnapshotCache,
    fold_turns,
    store_usage,
)
from replay.files import load_party, load_ruleset
from replay.formats.openai import read_turns
from replay.record import answered_form, answered_tags, read_source
from replay.stage import app as stage_app
from replay.stage import courtesy, memory
from replay.stage import upstream as upstream_module
from replay.stage.app import StageConfig, build_app, load_games

ROOT = Path(__file__).resolve().parents[3]
GMTAGS = str(Path(sys.executable).parent / "gmtags")
KEY = "s3cret-key"
SYSTEM = {"role": "system", "content": "You are the game master of Harrow Vale."}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def gm(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def post(stage: Stage, body: dict[str, Any] | bytes, headers: dict[str, str] | None = None,
         path: str = "/games/harrow/v1/chat/completions") -> httpx.Response:
    content = body if isinstance(body, bytes) else json.dumps(body).encode()
    return httpx.post(stage.url(path), content=content, timeout=60,
                      headers={"content-type": "application/json", **(headers or {})})


def sse(response: httpx.Response) -> tuple[str, list[dict[str, Any]], bool]:
    """(content, events, ended with [DONE]) of a streamed response."""
    events: list[dict[str, Any]] = []
    done = False
    for line in response.text.splitlines():
        if line == "data: [DONE]":
            done = True
        elif line.startswith("data: "):
            events.append(json.loads(line[6:]))
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                      if e.get("choices"))
    return content, events, done


# --- finding 2: the client key -------------------------------------------------------------------

@pytest.fixture
def keyed(model: FakeModel, games_dir: Path) -> Iterator[Stage]:
    stage = start_stage(model, games_dir, key=KEY)
    yield stage
    stage.server.stop()


@pytest.mark.parametrize("headers", [
    {"Authorization": f"Bearer {KEY}"},
    {"Authorization": f"bearer {KEY}"},  # auth schemes are case-insensitive
    {"Authorization": f"BEARER  {KEY}"},
    {"Authorization": KEY},  # no scheme: accepted, and still not forwarded
    {"X-Gmtags-Key": KEY},
])
def test_the_client_key_is_accepted_in_every_form_and_never_forwarded(
        keyed: Stage, model: FakeModel, headers: dict[str, str]) -> None:
    response = post(keyed, {"model": "m", "messages": [user("hi")]}, headers)
    assert response.status_code == 200
    assert all(KEY not in value for value in model.headers[-1].values())


def test_the_model_servers_own_key_goes_on_beside_the_gmtags_key(
        keyed: Stage, model: FakeModel) -> None:
    response = post(keyed, {"model": "m", "messages": [user("hi")]},
                    {"X-Gmtags-Key": KEY, "Authorization": "Bearer model-key"})
    assert response.status_code == 200
    assert model.headers[-1]["authorization"] == "Bearer model-key"
    assert "x-gmtags-key" not in model.headers[-1]


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"},
                                     {"Authorization": f"Bearer {KEY}x"},
                                     {"X-Gmtags-Key": KEY[:-1]}])
def test_a_missing_or_wrong_key_is_a_401_openai_error(keyed: Stage, model: FakeModel,
                                                     headers: dict[str, str]) -> None:
    response = post(keyed, {"model": "m", "messages": [user("hi")]}, headers)
    assert response.status_code == 401
    assert response.json()["error"]["type"] == "authentication_error"
    assert model.requests == []


def test_keys_are_compared_in_constant_time(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[tuple[bytes, bytes]] = []
    real = upstream_module.hmac.compare_digest

    def counting(a: bytes, b: bytes) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(upstream_module.hmac, "compare_digest", counting)
    assert upstream_module.same_key(KEY, KEY) and not upstream_module.same_key("x", KEY)
    assert len(calls) == 2


# --- finding 4: credentials and query strings in --upstream ---------------------------------------

def test_upstream_credentials_are_sent_and_never_logged(model: FakeModel,
                                                        games_dir: Path) -> None:
    assert model.server is not None
    upstream = (f"http://gm-user:pa55word@127.0.0.1:{model.server.port}/v1"
                f"?api-key=query-s3cret")
    process, url, lines = serve_process(["--upstream", upstream, "--games", str(games_dir)],
                                 {"GMTAGS_KEY": KEY})
    try:
        response = httpx.post(url + "/games/harrow/v1/chat/completions",
                              json={"model": "m", "messages": [user("hi")]},
                              headers={"Authorization": f"Bearer {KEY}"}, timeout=60)
        assert response.status_code == 200
        httpx.post(url + "/games/nowhere/v1/chat/completions", json={}, timeout=60,
                   headers={"Authorization": f"Bearer {KEY}"})
    finally:
        log = stop_process(process, lines)
    assert model.queries[-1] == "api-key=query-s3cret"  # the query string is kept and sent
    assert model.headers[-1]["authorization"].startswith("Basic ")  # user-info as Basic auth
    assert "game=harrow status=200" in log and "for http://***@127.0.0.1:" in log
    for secret in ("pa55word", "query-s3cret", KEY, "gm-user:"):
        assert secret not in log


def test_the_http_clients_own_log_lines_are_redacted(caplog: pytest.LogCaptureFixture) -> None:
    """The stage installs its redactor on the HTTP client's loggers (aiohttp logs no line per
    request, but a warning of its own may name the URL)."""
    upstream = upstream_module.Upstream.parse("http://gm-user:pa55word@model:8080/v1?key=q5")
    upstream_module.Redactor([*upstream.secrets, KEY]).install()
    with caplog.at_level(logging.DEBUG):
        for name in ("aiohttp.client", "aiohttp.internal"):
            logging.getLogger(name).warning("failed %s with %s", str(upstream.url), KEY)
    assert caplog.text.count("failed http://***@model:8080/v1?key=*** with ***") == 2
    for secret in ("pa55word", "q5", KEY, "gm-user:"):
        assert secret not in caplog.text


# --- finding 3: lone surrogates ---------------------------------------------------------------

def _raw_body(messages_json: str, stream: bool = False) -> bytes:
    flag = "true" if stream else "false"
    return f'{{"model": "m", "stream": {flag}, "messages": {messages_json}}}'.encode()


def test_a_lone_surrogate_in_a_continued_reply_is_answered(stage: Stage,
                                                          model: FakeModel) -> None:
    messages = ('[{"role": "user", "content": "hi"}, {"role": "assistant", "content": '
                '"Half \\ud800 [inventory: action=\\"add\\" item=\\"Rope\\" who=\\"Ada\\"]"}]')
    whole = post(stage, _raw_body(messages))
    assert whole.status_code == 200
    assert [a["ok"] for a in whole.json()["gmtags"]["answers"]] == [True]
    streamed = post(stage, _raw_body(messages, stream=True))
    content, events, done = sse(streamed)
    assert streamed.status_code == 200 and done and content == "The road goes on."
    assert not any("error" in e for e in events)
    assert [a["ok"] for a in events[-1]["gmtags"]["answers"]] == [True]


def test_a_lone_surrogate_in_a_gm_tag_of_the_history_fails_nothing(stage: Stage,
                                                                   model: FakeModel) -> None:
    messages = ('[{"role": "user", "content": "go"}, {"role": "assistant", "content": '
                '"Here. [place: name=\\"Mill\\ud800\\" size=\\"village\\"]"}, '
                '{"role": "user", "content": "more"}]')
    assert post(stage, _raw_body(messages)).status_code == 200
    # the next, unrelated request: the snapshot store left nothing broken behind
    assert post(stage, {"model": "m", "messages": [user("another chat")]}).status_code == 200


def test_a_snapshot_that_cannot_be_stored_is_dropped_and_logged(
        caplog: pytest.LogCaptureFixture, games_dir: Path) -> None:
    class Failing(MemoryStore):
        def put_many(self, items: Any) -> None:
            if any(":next:" in key for key in items):  # the rows of a fold, not the start
                raise RuntimeError("disk on fire")
            super().put_many(items)

    folder = load_games(games_dir).ready["harrow"]
    cache = SnapshotCache(Failing(), deferred=True)
    fold_turns(folder.game, folder.start, read_turns([user("a"), gm("b"), user("c")]), cache)
    assert cache._pending
    with caplog.at_level(logging.ERROR, "gmtags.cache"):
        cache.flush()
    assert not cache._pending and not cache._pending_windows and not cache._pending_next
    assert "could not store" in caplog.text


# --- upstreams written by hand: split surrogates, protocol faults, the deadline --------------------

class Upstream:
    """A model server written by hand, each request answered by ``respond`` (a Starlette
    response), on loopback; and a stage in front of it."""

    def __init__(self, games_dir: Path, **options: Any) -> None:
        self.respond: Any = None
        self.model = ServerThread(Starlette(routes=[
            Route("/v1/{path:path}", self._handle, methods=["GET", "POST"])]))
        config = StageConfig(upstream=self.model.url + "/v1", games=load_games(games_dir),
                             store=MemoryStore(), **options)
        self.server = ServerThread(build_app(config))

    async def _handle(self, request: Request) -> Response:
        await request.body()
        return self.respond(request)  # type: ignore[no-any-return]

    def stop(self) -> None:
        self.server.stop()
        self.model.stop()

    def chat(self, stream: bool) -> httpx.Response:
        return httpx.post(self.server.url + "/games/harrow/v1/chat/completions", timeout=60,
                          json={"model": "m", "stream": stream, "messages": [user("hi")]})


@pytest.fixture
def handmade(games_dir: Path) -> Iterator[Upstream]:
    upstream = Upstream(games_dir)
    yield upstream
    upstream.stop()


def _events(*pieces: str) -> bytes:
    """An SSE stream whose content deltas are ``pieces``, each given as raw JSON string text."""
    lines = [f'data: {{"choices": [{{"index": 0, "delta": {{"content": "{p}"}}, '
             f'"finish_reason": null}}]}}\n\n' for p in pieces]
    lines.append('data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n')
    lines.append("data: [DONE]\n\n")
    return "".join(lines).encode()


def test_an_emoji_split_into_surrogate_halves_is_joined(handmade: Upstream) -> None:
    handmade.respond = lambda request: Response(
        _events("Smile ", "\\ud83d", "\\ude00", " and a lone \\udc00 half."),
        media_type="text/event-stream")
    response = handmade.chat(stream=True)
    content, _, done = sse(response)
    assert done and content == "Smile \U0001F600 and a lone \ufffd half."
    response.content.decode("utf-8")  # strict: every byte is valid UTF-8


def test_a_json_completion_answering_a_stream_request_is_streamed(handmade: Upstream) -> None:
    text = 'Take it. [inventory: action="add" item="Rope" who="Ada"]'
    handmade.respond = lambda request: JSONResponse({
        "id": "c1", "object": "chat.completion", "model": "m",
        "choices": [{"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}]})
    content, events, done = sse(handmade.chat(stream=True))
    assert done and content.startswith('Take it. [inventory: action="add" item="Rope"')
    assert '| ok="true"' in content and events[-1]["gmtags"]["answers"][0]["ok"] is True


@pytest.mark.parametrize("answer", [
    lambda: Response("<html>proxy error</html>", media_type="text/html"),
    lambda: JSONResponse({"not": "a completion"}),
    lambda: Response(b"data: nonsense\n\ndata: [DONE]\n\n", media_type="text/event-stream"),
])
def test_anything_else_answering_a_stream_is_an_error_event_not_an_empty_success(
        handmade: Upstream, answer: Callable[[], Response]) -> None:
    handmade.respond = lambda request: answer()
    content, events, done = sse(handmade.chat(stream=True))
    assert done and content == ""
    assert [e["error"]["code"] for e in events if "error" in e] == ["upstream_protocol"]
    assert not any(e.get("choices") and e["choices"][0].get("finish_reason") == "stop"
                   for e in events)


def test_a_non_completion_answering_a_whole_request_is_a_502(handmade: Upstream) -> None:
    handmade.respond = lambda request: Response("not json", media_type="text/plain")
    response = handmade.chat(stream=False)
    assert response.status_code == 502 and response.json()["error"]["code"] == \
        "upstream_protocol"


def _ticking(pieces: list[bytes], frozen: Any, step: float,
             media_type: str | None = None) -> StreamingResponse:
    """A body that moves the frozen clock on ``step`` seconds before each piece."""

    async def body() -> AsyncIterator[bytes]:
        for piece in pieces:
            frozen.tick(step)
            yield piece
            # Not a wait for the clock (that is frozen): a pause of real time so that each
            # piece reaches the stage as a read of its own, not merged with the next.
            await asyncio.sleep(0.005)

    return StreamingResponse(body(), media_type=media_type)


@pytest.mark.parametrize("stream", [True, False])
def test_the_deadline_bounds_a_whole_reply_that_trickles(games_dir: Path, stream: bool) -> None:
    """--timeout is per read: a model that sends a piece every 1.5 s never trips a 2 s
    timeout. --deadline 10 stops the reply once 10 s (of the stage's clock) have passed."""
    with freeze_time("2026-12-01 12:00:00", real_asyncio=True) as frozen:
        upstream = Upstream(games_dir, deadline=10.0)
        try:
            if stream:
                body = _events(*(f"piece {i} " for i in range(20)))
                pieces = [line + b"\n\n" for line in body.split(b"\n\n") if line]
                upstream.respond = lambda request: _ticking(
                    pieces, frozen, 1.5, "text/event-stream")
                content, events, done = sse(upstream.chat(stream=True))
                assert done
                assert [e["error"]["code"] for e in events if "error" in e] == ["deadline"]
                assert 0 < content.count("piece") < 20
            else:
                document = json.dumps({"choices": [{"index": 0, "finish_reason": "stop",
                                                    "message": {"content": "x" * 2000}}]})
                pieces = [document[i:i + 100].encode() for i in range(0, len(document), 100)]
                upstream.respond = lambda request: _ticking(pieces, frozen, 1.5)
                response = upstream.chat(stream=False)
                assert response.status_code == 504
                assert response.json()["error"]["code"] == "deadline"
        finally:
            upstream.stop()


# --- findings 8 and 9: folds off the event loop, access log, JSON 404/405 --------------------------

def test_large_work_is_done_off_the_event_loop_and_small_work_on_it(
        stage: Stage, model: FakeModel, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 8: a large fold must not hold the loop. What decides is the work, not the
    body's size: a body with more than INLINE_BODY bytes to parse (what it does not share
    with a recent body) is parsed in a worker thread, and a fold larger than INLINE_FOLD is
    folded there, with the stage's pause after each reply (LoopFirst); the next request of
    the same long chat is small work (two new turns) and stays on the loop (a thread hop
    costs more)."""
    threads: dict[str, list[int]] = {"parse": [], "prepare": []}
    parse, prepare = stage_app._parse, stage_app.prepare

    def parsing(*args: Any) -> Any:
        threads["parse"].append(threading.get_ident())
        return parse(*args)

    def preparing(*args: Any) -> Any:
        threads["prepare"].append(threading.get_ident())
        return prepare(*args)

    yields: list[int] = []
    monkeypatch.setattr(stage_app, "_parse", parsing)
    monkeypatch.setattr(stage_app, "prepare", preparing)

    class Counted(courtesy.LoopFirst):
        """The stage's pause of a fold in a thread, counted."""

        def __call__(self) -> None:
            yields.append(1)
            super().__call__()
    monkeypatch.setattr(stage_app, "LoopFirst", Counted)
    big = [m for index in range(400) for m in (
        user(f"turn {index} " + "x" * 100),
        gm('Found. [inventory: action="add" item="Torch" who="Ada"]'))]
    assert len(json.dumps(big)) > stage_app.INLINE_BODY
    loop = stage.server.thread.ident

    def where(messages: list[dict[str, Any]]) -> tuple[list[bool], list[bool], int]:
        """(parse calls on the loop, prepare calls on the loop, GIL yields) of one request."""
        for calls in threads.values():
            calls.clear()
        yields.clear()
        assert stage.chat(messages).status_code == 200
        return ([t == loop for t in threads["parse"]], [t == loop for t in threads["prepare"]],
                len(yields))

    # A long chat sent whole: parsed on the loop up to the budget only, then in a thread.
    assert where([*big, user("go")]) == ([True, False], [False], 400)
    assert where([user("hi")]) == ([True], [True], 0)
    # The same chat's next request: a large body, but two turns of new work.
    assert where([*big, user("go"), gm("The rain falls."), user("on")]) == ([True], [True], 0)
    # Its snapshots gone (a restarted store, none kept in the process): little to parse, but
    # 805 turns to fold.
    monkeypatch.setattr(cache_module, "LIVE_SNAPSHOTS", 0)
    assert where([user("flushes the kept ones")])[2] == 0
    stage.store.clear()  # type: ignore[attr-defined]
    assert where([*big, user("go"), gm("The rain falls."), user("on"), gm("Mud."),
                  user("and on")]) == ([True], [True, False], 402)


def test_a_budget_refuses_large_work_before_doing_any(games_dir: Path) -> None:
    """OverBudget is raised before anything is parsed or folded, and the same call without a
    budget does the work: what the stage relies on to redo it in a worker thread."""
    folder = load_games(games_dir).ready["harrow"]
    reader = stage_app.BodyReader()
    turns = [*(m for index in range(40) for m in (user(f"turn {index}"), gm("Rain."))),
             user("go")]
    raw = json.dumps({"messages": turns}).encode()
    with pytest.raises(OverBudget):
        reader.read(raw, most=100)
    with pytest.raises(OverBudget):
        reader.read(b"[" + b" " * 200 + b"]", most=100)  # not a chat body: json.loads' work
    body = reader.read(raw, most=len(raw))
    more = json.dumps({"messages": [*turns, gm("Mud."), user("more")]}).encode()
    assert reader.read(more, most=100).shared == len(turns)  # 78 new bytes to parse
    cache = SnapshotCache(MemoryStore(), deferred=True)
    with pytest.raises(OverBudget):
        stage_app.prepare(folder, cache, body, Budget(turns=16, chars=10_000))
    assert not cache.pending
    with pytest.raises(OverBudget):
        stage_app.prepare(folder, cache, body, Budget(turns=100, chars=100))
    assert stage_app.prepare(folder, cache, body).outcome.folded == 81
    assert stage_app.prepare(folder, cache, reader.read(more), Budget(turns=16, chars=100)
                             ).outcome.folded == 2


def test_each_request_has_one_access_line_without_secrets(
        keyed: Stage, model: FakeModel, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.INFO, "gmtags.access"):
        post(keyed, {"model": "m", "messages": [user("hi")]}, {"Authorization": KEY})
        post(keyed, {"model": "m", "messages": [user("hi")]})
    lines = [r.getMessage() for r in caplog.records if r.name == "gmtags.access"]
    assert len(lines) == 2
    assert re.fullmatch(r"game=harrow status=200 ms=[\d.]+ folded=1 reused=0 anchor=\w+ "
                        r"anchored=true answered=0", lines[0])
    assert lines[1].startswith("game=harrow status=401")
    assert KEY not in caplog.text


def test_unreachable_model_is_logged(games_dir: Path, model: FakeModel,
                                     caplog: pytest.LogCaptureFixture) -> None:
    stage = start_stage(model, games_dir, upstream=f"http://127.0.0.1:{free_port()}/v1")
    try:
        with caplog.at_level(logging.WARNING, "gmtags.stage"):
            assert stage.chat([user("hi")]).status_code == 502
    finally:
        stage.server.stop()
    assert "cannot be reached" in caplog.text


@pytest.mark.parametrize(("method", "path", "status"), [
    ("GET", "/nowhere", 404), ("POST", "/games/harrow/v1/chat/completions/", 404),
    ("GET", "/games/harrow/v1/chat/completions", 405), ("DELETE", "/healthz", 405)])
def test_unknown_routes_and_methods_are_openai_errors_never_redirects(
        stage: Stage, method: str, path: str, status: int) -> None:
    response = httpx.request(method, stage.url(path), json={}, timeout=30,
                             follow_redirects=False)
    assert response.status_code == status
    assert response.json()["error"]["message"]


# --- finding 7: a broken game folder ---------------------------------------------------------------

@pytest.fixture
def games_with_a_broken_one(tmp_path: Path) -> Path:
    for name in ("harrow", "broken"):
        (tmp_path / name).mkdir()
        shutil.copy(FIXTURES / "rulesets" / "harrow.json", tmp_path / name / "ruleset.json")
    ruleset = json.loads((tmp_path / "broken" / "ruleset.json").read_text())
    del ruleset["label"]
    (tmp_path / "broken" / "ruleset.json").write_text(json.dumps(ruleset))
    return tmp_path


def test_a_broken_game_folder_disables_its_game_not_the_server(
        model: FakeModel, games_with_a_broken_one: Path) -> None:
    process, url, lines = serve_process(["--upstream", model.url, "--games",
                                  str(games_with_a_broken_one)])
    try:
        ok = httpx.post(url + "/games/harrow/v1/chat/completions",
                        json={"model": "m", "messages": [user("hi")]}, timeout=60)
        broken = httpx.post(url + "/games/broken/v1/chat/completions",
                            json={"model": "m", "messages": [user("hi")]}, timeout=60)
    finally:
        log = stop_process(process, lines)
    assert ok.status_code == 200
    assert broken.status_code == 503 and broken.json()["error"]["code"] == "broken_game"
    assert f"{games_with_a_broken_one / 'broken' / 'ruleset.json'}#/" in log
    assert "label" in log


def test_serve_check_validates_the_games_folder_and_exits(
        games_with_a_broken_one: Path, games_dir: Path) -> None:
    bad = subprocess.run([GMTAGS, "serve", "--check", "--games", str(games_with_a_broken_one)],
                         capture_output=True, text=True, timeout=120)
    assert bad.returncode == 1
    assert "'broken' is disabled" in bad.stderr and "'harrow' loads" in bad.stderr
    assert str(games_with_a_broken_one / "broken" / "ruleset.json") in bad.stderr
    good = subprocess.run([GMTAGS, "serve", "--check", "--games", str(games_dir)],
                          capture_output=True, text=True, timeout=120)
    assert good.returncode == 0, good.stderr


# --- finding 6: the in-process store is bounded in bytes ------------------------------------------

def test_the_in_process_store_never_holds_more_than_its_bytes() -> None:
    store = MemoryStore(max_bytes=100_000)
    for index in range(2_000):
        store.put_many({f"k{index}": b"x" * (index % 700)})
        store.claim_many({f"w{index}": b"y" * 40})
        assert store.size <= store.max_bytes
    assert store.size == sum(len(k) + len(v) + ENTRY_OVERHEAD for k, v in store._items.items())
    assert store.get_many(["k1999"]) == [b"x" * (1999 % 700)]


def test_healthz_says_what_the_in_process_store_holds_against_its_bound(
        games_dir: Path) -> None:
    """Finding 6: what the store holds is visible (the soak benchmark prints it beside RSS),
    counted as its bound counts it, and never above the bound."""
    upstream = Upstream(games_dir)
    upstream.respond = lambda request: JSONResponse({"choices": [{
        "index": 0, "finish_reason": "stop",
        "message": {"content": 'A torch. [inventory: action="add" item="Torch" who="Ada"]'}}]})
    health = upstream.server.url + "/healthz"
    try:
        before = httpx.get(health, timeout=60).json()["snapshots"]
        assert before == {"store": "memory", "bytes": 0, "entries": 0,
                          "maxBytes": DEFAULT_CACHE_MB * 1024 * 1024}
        history = [user("hello")]
        for _ in range(3):
            reply = httpx.post(upstream.server.url + "/games/harrow/v1/chat/completions",
                               json={"messages": history}, timeout=60).json()
            history += [gm(reply["choices"][0]["message"]["content"]), user("and then?")]
        after = httpx.get(health, timeout=60).json()["snapshots"]
    finally:
        upstream.stop()
    assert after["entries"] > 0 and 0 < after["bytes"] <= after["maxBytes"]
    assert after["bytes"] > after["entries"] * ENTRY_OVERHEAD  # keys and values counted too


def test_store_usage_names_the_in_process_layer_in_front_of_redis() -> None:
    near = LayeredStore(RedisStore("redis://127.0.0.1:1/0"), near_bytes=5_000)
    near.near.put_many({"snap:a": b"x" * 10})
    assert store_usage(near) == {"store": "redis", "bytes": 6 + 10 + ENTRY_OVERHEAD,
                                 "maxBytes": 5_000, "entries": 1}
    assert store_usage(MemoryStore(max_bytes=7))["maxBytes"] == 7


def test_the_stage_gives_freed_memory_back_every_so_many_requests(
        games_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Finding 6: the allocator's free pages go back to the system every TRIM_EVERY requests
    (replay.stage.memory), in a worker thread, never on the event loop."""
    calls: list[int] = []
    monkeypatch.setattr(stage_app, "Every", lambda: memory.Every(3))
    monkeypatch.setattr(stage_app, "give_back", lambda: calls.append(threading.get_ident()))
    upstream = Upstream(games_dir)
    upstream.respond = lambda request: JSONResponse({"choices": [
        {"index": 0, "finish_reason": "stop", "message": {"content": "The rain."}}]})
    try:
        for number in range(7):
            assert httpx.post(upstream.server.url + "/games/harrow/v1/chat/completions",
                              json={"messages": [user(f"hello {number}")]},
                              timeout=60).status_code == 200
        loop_thread = upstream.server.thread.ident
    finally:
        upstream.stop()
    assert len(calls) == 2 and loop_thread not in calls


def test_give_back_asks_glibc_and_counts_requests() -> None:
    assert memory.give_back() is (memory._malloc_trim() is not None)
    every = memory.Every(4)
    assert [every.due() for _ in range(9)] == [False, False, False, True] * 2 + [False]


def test_remembered_fragments_are_bounded_in_bytes_as_well_as_number() -> None:
    """Finding 6: a character's text grows with its bag, so the fragments the canonical JSON
    reuses are bounded by what they hold (FRAGMENT_BYTES), not only by how many."""
    memo: IdentityMemo[str] = IdentityMemo(1000, weigh=len, most=100)
    held = [object() for _ in range(50)]
    for key in held:
        memo.put((key,), "x" * 30)
        assert memo.weight <= 100 and len(memo._entries) <= 3
    assert memo.get((held[-1],)) == "x" * 30
    memo.put((held[0],), "y" * 101)  # heavier than the bound alone: not remembered
    assert memo.get((held[0],)) is None
    assert state_module._FRAGMENTS.most == state_module.FRAGMENT_BYTES


# --- finding 10: one regex hides every answered tag in SillyTavern --------------------------------

def _readme_regex() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    found = re.search(r"Regex\*\* extension script that matches\s+`([^`]+)`", readme)
    assert found, "the README names the SillyTavern regex"
    return found.group(1)


def _answered_tags_of_the_corpus() -> list[str]:
    """Every answered tag of the recorded corpus as recorded, and as the stage writes it now."""
    corpus = ROOT / "fixtures" / "chats" / "corpus"
    index = json.loads((corpus / "index.json").read_text())
    forms: list[str] = []
    for chat, entry in index["chats"].items():
        game = load_ruleset(corpus / entry["ruleset"])
        state = load_party(game, corpus / entry["party"] if entry.get("party") else None)
        source = read_source((corpus / chat).read_bytes(), chat)
        result = replay(game, source.transcript, state)
        flat = source.transcript.messages()
        for answered in answered_tags(source.transcript, result):
            rendered = answered_form(answered.tag, answered.answer)
            if rendered is not None:
                text = flat[answered.message][2].text
                forms += [text[answered.tag.start:answered.tag.end], rendered]
    return forms


def test_the_readmes_sillytavern_regex_hides_every_answered_tag_whole() -> None:
    pattern = _readme_regex()
    forms = [f for f in _answered_tags_of_the_corpus() if "|" in f]
    assert len(forms) > 500 and any("\\]" in f for f in forms)
    node = shutil.which("node")
    if node is not None:  # SillyTavern's own engine: JavaScript regexes
        script = ("const re = new RegExp(process.argv[1], 'g');"
                  "const forms = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
                  "console.log(JSON.stringify(forms.map(f => f.replace(re, ''))));")
        done = subprocess.run([node, "-e", script, pattern], input=json.dumps(forms),
                              capture_output=True, text=True, timeout=120, check=True)
        left = json.loads(done.stdout)
    else:  # the same pattern means the same in Python's re
        left = [re.sub(pattern, "", form) for form in forms]
    assert [(form, rest) for form, rest in zip(forms, left, strict=True) if rest] == []
