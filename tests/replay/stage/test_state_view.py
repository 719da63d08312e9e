"""``POST /games/<game>/v1/state`` (issue 41): SillyTavern's chat in, the game as the player
sees it out, equal to ``gmtags replay --format json`` of the same chat saved as ``.jsonl``;
CORS for the allowed origins only, on this route and ``/healthz``; the key, body limits and
errors as on every route."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import ROOT, key_problems
from st_chats import (
    corpus,
    game_name,
    make_games,
    page_chat,
    replay_json,
    saved_chat,
    sillytavern_text,
)
from stage_servers import FakeModel, Stage, start_stage

from replay.cache import MemoryStore, SnapshotCache
from replay.stage.app import load_game
from replay.stage.cors import DEFAULT_ORIGINS
from replay.stage.state_view import VIEW, StateViews, TurnMemo

ST_ORIGIN = DEFAULT_ORIGINS[0]
SHARED = ("answers", "state", "diagnostics")


@pytest.fixture(scope="module")
def corpus_games(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_games(tmp_path_factory.mktemp("corpus-games"), per_swipe=True)


@pytest.fixture
def corpus_stage(model: FakeModel, corpus_games: Path) -> Iterator[Stage]:
    running = start_stage(model, corpus_games)
    yield running
    running.server.stop()


def post_state(stage: Stage, game: str, body: Any, **headers: str) -> httpx.Response:
    return httpx.post(stage.url(f"/games/{game}/v1/state"), json=body, headers=headers,
                      timeout=120)


@pytest.mark.parametrize("name", sorted(corpus()))
def test_state_equals_replay_on_every_corpus_chat_saved_by_sillytavern(
        name: str, corpus_stage: Stage, corpus_games: Path, tmp_path: Path) -> None:
    for per_swipe in (False, True):
        game = game_name(corpus()[name], per_swipe)
        saved = saved_chat(name, tmp_path, corpus_games, per_swipe)
        expected = replay_json(saved, corpus_games / game)
        response = post_state(corpus_stage, game, {"chat": page_chat(saved)})
        assert response.status_code == 200, response.text
        view = response.json()
        assert view["view"] == VIEW and view["game"] == game
        assert key_problems(view) == [] and key_problems(expected) == []  # one spelling
        for key in SHARED:
            assert view[key] == expected[key], (name, per_swipe, key)
        assert view["refused"] == [i for i, a in enumerate(expected["answers"]) if not a["ok"]]
        again = post_state(corpus_stage, game, {"chat": page_chat(saved)}).json()
        assert again.pop("cache")["foldedTurns"] == 0
        assert again.pop("base") != view.pop("base")  # each chat read has its own name
        view.pop("cache")
        assert again == view  # from the cache and the remembered answers, the same


def test_hidden_swipes_and_per_swipe_dice_are_in_the_corpus(tmp_path: Path,
                                                            corpus_games: Path) -> None:
    """The equality above covers what a SillyTavern chat has that a prompt has not."""
    chats = [page_chat(saved_chat(n, tmp_path, corpus_games)) for n in corpus()
             if n.endswith(".st.jsonl")]
    messages = [m for chat in chats for m in chat]
    assert sum(m["is_system"] and not m["is_user"] for m in messages) >= 5
    assert sum(len(m.get("swipes", [])) > 1 and m.get("swipe_id", 0) > 0 for m in messages) >= 5


def harrow_folder(games_dir: Path) -> Any:
    return load_game(games_dir / "harrow")


def reply(text: str, swipes: list[str] | None = None, swipe: int = 0) -> dict[str, Any]:
    out: dict[str, Any] = {"name": "Narrator", "is_user": False, "is_system": False,
                           "mes": text, "extra": {}}
    if swipes is not None:
        out.update({"swipes": swipes, "swipe_id": swipe, "mes": swipes[swipe]})
    return out


def said(text: str) -> dict[str, Any]:
    return {"name": "Ada", "is_user": True, "is_system": False, "mes": text, "extra": {}}


PAY = '[inventory: action="pay" amount="1 shilling" who="Ada"]'
ROPE = '[inventory: action="add" item="Rope" count="2" who="Ada"]'
BROKE = '[inventory: action="pay" amount="900 crowns" who="Ada"]'


def test_a_new_reply_folds_only_the_new_turns(games_dir: Path) -> None:
    views = StateViews(SnapshotCache(MemoryStore(), deferred=True, replies=True), TurnMemo())
    folder = harrow_folder(games_dir)
    chat = [reply("Welcome.")]
    for number in range(40):
        chat += [said(f"turn {number}"), reply(f"You pay. {PAY} And pack. {ROPE}")]
    first = views.view(folder, {"chat": chat})
    assert first["cache"]["foldedTurns"] == len(chat)
    chat += [said("more"), reply(f"Again. {PAY}")]
    second = views.view(folder, {"chat": chat})
    assert second["cache"] == {"reusedTurns": len(chat) - 2, "foldedTurns": 2}
    assert len(second["answers"]) == len(first["answers"]) + 1
    swiped = [*chat[:-1], reply("", [f"Again. {PAY}", f"Instead. {ROPE}"], 1)]
    third = views.view(folder, {"chat": swiped})
    assert third["cache"]["foldedTurns"] == 1
    assert third["answers"][-1]["tag"]["raw"] == ROPE


def test_a_request_may_send_only_what_changed(games_dir: Path) -> None:
    """``base``: the first messages of a chat read before, by the name its reply gave it."""
    views = StateViews(SnapshotCache(MemoryStore()))
    folder = harrow_folder(games_dir)
    chat = [reply("Welcome."), said("a"), reply(f"One. {PAY}"), said("b"), reply(f"Two. {ROPE}")]
    first = views.view(folder, {"chat": chat[:3]})
    whole = views.view(folder, {"chat": chat})
    tail = views.view(folder, {"chat": chat[2:], "base": {"view": first["base"], "keep": 2}})
    named = tail["base"]
    assert named not in (first["base"], whole["base"])
    for reply_ in (whole, tail):
        reply_.pop("base")
        reply_.pop("cache")
    assert tail == whole
    swiped = [reply("", [f"Two. {ROPE}", f"Again. {PAY}"], 1)]
    again = views.view(folder, {"chat": swiped, "base": {"view": named, "keep": 4}})
    assert again["answers"][-1]["tag"]["raw"] == PAY


@pytest.mark.parametrize("base", [{"view": "nobody", "keep": 1}, "first:9"])
def test_a_base_this_process_does_not_know_is_409(stage: Stage, base: Any) -> None:
    known = post_state(stage, "harrow", {"chat": [reply("Welcome.")]}).json()["base"]
    if base == "first:9":
        base = {"view": known, "keep": 9}  # more messages than that chat had
    response = post_state(stage, "harrow", {"chat": [], "base": base})
    assert response.status_code == 409
    assert response.json()["error"]["code"] == "base_unknown"


@pytest.mark.parametrize("base", [[], {"view": 3, "keep": 1}, {"view": "x", "keep": -1},
                                  {"view": "x"}])
def test_a_malformed_base_is_400(stage: Stage, base: Any) -> None:
    response = post_state(stage, "harrow", {"chat": [], "base": base})
    assert response.status_code == 400 and '"base"' in response.json()["error"]["message"]


def test_changes_are_what_the_last_reply_did(games_dir: Path) -> None:
    views = StateViews(SnapshotCache(MemoryStore()))
    folder = harrow_folder(games_dir)
    chat = [reply("Welcome."), said("buy"), reply(f"Paid. {PAY}"), said("pack"),
            reply(f"Packed. {ROPE} {BROKE}")]
    view = views.view(folder, {"chat": chat})
    assert view["lastReply"] == 4
    ada = view["changes"]["characters"]["Ada"]
    assert ada["bag"] == [{"label": "Rope", "was": 1, "change": "more"}]
    assert "purse" not in ada  # the pay was the reply before
    assert [view["answers"][i]["reason"] for i in view["refused"]] == ["cannot-afford"]
    hidden = [*chat[:4], {**chat[4], "is_system": True}]
    view = views.view(folder, {"chat": hidden})
    assert view["lastReply"] == 2 and view["changes"]["characters"]["Ada"]["purse"] is True


def test_after_keeps_the_answers_of_the_messages_on_screen(games_dir: Path) -> None:
    views = StateViews(SnapshotCache(MemoryStore()))
    folder = harrow_folder(games_dir)
    chat = [reply("Welcome."), said("a"), reply(f"One. {PAY}"), said("b"), reply(f"Two. {ROPE}")]
    whole = views.view(folder, {"chat": chat})
    shown = views.view(folder, {"chat": chat, "after": 3})
    assert [a["message"] for a in shown["answers"]] == [4]
    assert shown["state"] == whole["state"] and shown["after"] == 3


def test_party_shows_purse_bag_pools_and_the_place(games_dir: Path) -> None:
    views = StateViews(SnapshotCache(MemoryStore()))
    folder = harrow_folder(games_dir)
    chat = [reply('[place: name="Millbrook"] You arrive.')]
    party = views.view(folder, {"chat": chat})["party"]
    ada = party["characters"][0]
    assert ada["name"] == "Ada" and ada["purse"][0]["label"] == "Coin"
    assert all(stack["kind"] != "coin" for stack in ada["bag"])
    assert ada["pools"] and ada["sheet"]["abilities"]
    assert party["place"]["name"] == "Millbrook" and party["encounter"] is None


def test_a_reply_the_stage_answered_is_shown_as_replay_shows_it(
        stage: Stage, model: FakeModel, tmp_path: Path, games_dir: Path) -> None:
    """The stage saves the state after a reply it answered; the view still answers every tag
    of that reply (it folds it, rather than take the saved state and lose its answers)."""
    model.script["I pay."] = f"You pay. {PAY} And pack. {ROPE}"
    messages = [{"role": "assistant", "content": "Welcome."},
                {"role": "user", "content": "I pay."}]
    answered = stage.chat(messages).json()["choices"][0]["message"]["content"]
    chat = [reply("Welcome."), said("I pay."), reply(answered)]
    view = post_state(stage, "harrow", {"chat": chat}).json()
    saved = tmp_path / "chat.jsonl"
    saved.write_text(sillytavern_text({"user_name": "Ada", "character_name": "Narrator",
                                       "chat_metadata": {}}, chat), encoding="utf-8")
    expected = replay_json(saved, games_dir / "harrow")
    for key in SHARED:
        assert view[key] == expected[key]
    assert [a["tag"]["kind"] for a in view["answers"]] == ["inventory", "inventory"]


def test_the_key_is_required_when_set(model: FakeModel, games_dir: Path) -> None:
    keyed = start_stage(model, games_dir, key="sekrit")
    try:
        body = {"chat": [reply("Welcome.")]}
        assert post_state(keyed, "harrow", body).status_code == 401
        assert post_state(keyed, "harrow", body, **{"X-Gmtags-Key": "wrong"}).status_code == 401
        refused = post_state(keyed, "harrow", body, Origin=ST_ORIGIN)
        assert refused.status_code == 401 and refused.json()["error"]["type"] == \
            "authentication_error"
        assert refused.headers["access-control-allow-origin"] == ST_ORIGIN  # it can say why
        assert post_state(keyed, "harrow", body, **{"X-Gmtags-Key": "sekrit"}).status_code == 200
        preflight = httpx.options(keyed.url("/games/harrow/v1/state"), headers={
            "Origin": ST_ORIGIN, "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type,x-gmtags-key"})
        assert preflight.status_code == 200  # a preflight carries no key
    finally:
        keyed.server.stop()


def test_only_allowed_origins_get_cors_headers(stage: Stage) -> None:
    body = {"chat": [reply("Welcome.")]}
    allowed = post_state(stage, "harrow", body, Origin=ST_ORIGIN)
    assert allowed.headers["access-control-allow-origin"] == ST_ORIGIN
    assert "Origin" in allowed.headers["vary"]
    other = post_state(stage, "harrow", body, Origin="http://evil.example")
    assert other.status_code == 200 and "access-control-allow-origin" not in other.headers
    health = httpx.get(stage.url("/healthz"), headers={"Origin": DEFAULT_ORIGINS[1]})
    assert health.headers["access-control-allow-origin"] == DEFAULT_ORIGINS[1]
    chat = httpx.post(stage.url("/games/harrow/v1/chat/completions"),
                      headers={"Origin": ST_ORIGIN}, timeout=60,
                      json={"model": "fake-gm", "messages": [{"role": "user", "content": "hi"}]})
    assert chat.status_code == 200
    assert "access-control-allow-origin" not in chat.headers  # never on chat completions


@pytest.mark.parametrize(("origin", "headers", "status"), [
    (ST_ORIGIN, "content-type,x-gmtags-key", 200),
    (DEFAULT_ORIGINS[1], "content-type", 200),
    ("http://evil.example", "content-type", 400),
    (ST_ORIGIN, "content-type,x-something-else", 400),
])
def test_preflight(stage: Stage, origin: str, headers: str, status: int) -> None:
    response = httpx.options(stage.url("/games/harrow/v1/state"), headers={
        "Origin": origin, "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": headers})
    assert response.status_code == status
    if status == 200:
        assert response.headers["access-control-allow-origin"] == origin
        assert response.headers["access-control-max-age"] == "600"
        assert "x-gmtags-key" in response.headers["access-control-allow-headers"]
        assert "access-control-allow-credentials" not in response.headers
    else:
        assert response.json()["error"]["code"] == "cors_refused"
        if origin not in DEFAULT_ORIGINS:
            assert "access-control-allow-origin" not in response.headers


def test_preflight_on_chat_completions_is_refused(stage: Stage) -> None:
    response = httpx.options(stage.url("/games/harrow/v1/chat/completions"), headers={
        "Origin": ST_ORIGIN, "Access-Control-Request-Method": "POST"})
    assert response.status_code == 405 and "access-control-allow-origin" not in response.headers


def test_cors_origins_are_the_servers_own(model: FakeModel, games_dir: Path) -> None:
    mine = "http://192.168.1.20:8000"
    running = start_stage(model, games_dir, cors_origins=(mine,))
    try:
        body = {"chat": [reply("Welcome.")]}
        assert post_state(running, "harrow", body, Origin=mine).headers[
            "access-control-allow-origin"] == mine
        assert "access-control-allow-origin" not in post_state(
            running, "harrow", body, Origin=ST_ORIGIN).headers
    finally:
        running.server.stop()


@pytest.mark.parametrize(("body", "message"), [
    (b"not json", "not JSON"),
    (b"[]", "getContext().chat"),
    (b'{"messages": []}', "getContext().chat"),
    (b'{"chat": {}}', "getContext().chat"),
    (b'{"chat": [], "after": -1}', "after"),
    (b'{"chat": [], "after": "3"}', "after"),
])
def test_a_bad_body_is_400(stage: Stage, body: bytes, message: str) -> None:
    response = httpx.post(stage.url("/games/harrow/v1/state"), content=body,
                          headers={"content-type": "application/json"})
    assert response.status_code == 400
    assert message in response.json()["error"]["message"]


def test_a_chat_of_odd_messages_is_read_as_replay_reads_it(stage: Stage, tmp_path: Path,
                                                          games_dir: Path) -> None:
    """Lines the reader skips or repairs say so with the line of the saved file."""
    chat: list[Any] = [reply("Welcome."), "not a message", {"is_user": True},
                       reply(f"Paid. {PAY}"), {**reply("x"), "swipes": ["a"], "swipe_id": 4}]
    view = post_state(stage, "harrow", {"chat": chat}).json()
    saved = tmp_path / "odd.jsonl"
    saved.write_text(sillytavern_text({"chat_metadata": {}}, chat), encoding="utf-8")
    expected = replay_json(saved, games_dir / "harrow")
    for key in SHARED:
        assert view[key] == expected[key]
    assert view["chatIndex"] == [0, 3, 4]


def test_a_big_body_is_413(model: FakeModel, games_dir: Path) -> None:
    small = start_stage(model, games_dir, max_body=2048)
    try:
        response = post_state(small, "harrow", {"chat": [reply("x" * 4096)]})
        assert response.status_code == 413 and "larger" in response.json()["error"]["message"]
    finally:
        small.server.stop()


def test_unknown_game_and_method(stage: Stage) -> None:
    assert post_state(stage, "nope", {"chat": []}).json()["error"]["code"] == "unknown_game"
    assert httpx.get(stage.url("/games/harrow/v1/state")).status_code == 405


def test_healthz_says_version_and_api(stage: Stage) -> None:
    health = httpx.get(stage.url("/healthz")).json()
    assert health["api"] == {"state": VIEW} and health["version"]


def test_an_empty_chat_is_the_party(stage: Stage) -> None:
    view = post_state(stage, "harrow", {"chat": []}).json()
    assert view["answers"] == [] and view["lastReply"] is None
    assert [d["code"] for d in view["diagnostics"]] == ["no-messages"]
    assert json.dumps(view)  # plain JSON


def test_the_panel_reads_the_view_this_stage_sends() -> None:
    """A change of the view's keys (2: the state in it written camelCase) raises VIEW, and
    the panel shipped beside it reads that version."""
    script = (ROOT / "sillytavern-extension/gmtags/index.js").read_text(encoding="utf-8")
    assert f"const VIEW = {VIEW};" in script
