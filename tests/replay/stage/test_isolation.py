"""One chat's state never comes from another chat (DESIGN.md "Interfaces", issue 22 finding 1).

A chat that arrives whole is answered the same whatever the server served before, in whatever
order, with whatever was evicted or flushed meanwhile: its reply content, the GM section the
model receives and ``anchored``. A chat whose front the client dropped continues an earlier
chat only on strong evidence: a window (at least three consecutive whole turns with at least
two GM replies) seen at exactly one place, with the earlier chat holding the rest of the
request but its last two turns, and ending where the request goes on.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from stage_servers import FakeModel, RedisServer, Stage, serve_process, start_stage, stop_process

from replay.cache import MemoryStore, RedisStore
from replay.stage.app import SECTION_BEGIN

GMTAGS = str(Path(sys.executable).parent / "gmtags")
SYSTEM = {"role": "system", "content": "You are the game master of Harrow Vale."}
GREETING = "Welcome to Harrow Vale, traveller."
ROB = 'You grab a sack. [inventory: action="earn" amount="19 shillings" who="Ada"]'
# Lines many chats share, each with the same scripted GM reply in every chat.
SHARED = {
    "hi": 'Hello. [inventory: action="earn" amount="2 pennies" who="Ada"]',
    "ok then": ROB,
    "go on": "The road goes on.",
    "I look around.": 'You search. [skill_check: skill="sneak" dc="9" who="Ada"]',
    "I pay.": 'The keeper nods. [inventory: action="pay" amount="3 pennies" who="Ada"]',
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def gm(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def section_of(body: dict[str, Any]) -> str:
    found = [m["content"] for m in body["messages"] if m["role"] == "system"
             and m["content"].startswith(SECTION_BEGIN)]
    assert len(found) == 1
    return str(found[0])


# --- the chats a player writes ------------------------------------------------------------------

@dataclass
class Chat:
    """A chat as a client keeps it: it sends its whole history each turn, with the replies the
    stage gave it (answered tags and all)."""

    name: str
    lines: list[str]
    greeting: bool
    stream: bool
    history: list[dict[str, Any]] = field(default_factory=list)
    sent: int = 0

    def __post_init__(self) -> None:
        self.history = [gm(GREETING)] if self.greeting else []

    def next_messages(self) -> list[dict[str, Any]]:
        line = self.lines[self.sent]
        self.history.append(user(line))
        self.sent += 1
        return [SYSTEM, *self.history]


def send(stage: Stage, model: FakeModel, chat: Chat) -> tuple[str, str, bool]:
    """One turn of ``chat``: (reply content, GM section sent to the model, anchored)."""
    messages = chat.next_messages()
    body = {"model": "fake-gm", "messages": messages, "stream": chat.stream}
    if chat.stream:
        content, meta = "", {}
        with httpx.stream("POST", stage.url("/games/harrow/v1/chat/completions"), json=body,
                          timeout=60) as response:
            assert response.status_code == 200
            for line in response.iter_lines():
                if line.startswith("data: ") and line != "data: [DONE]":
                    chunk = json.loads(line[6:])
                    if chunk.get("choices"):
                        content += chunk["choices"][0]["delta"].get("content") or ""
                    meta = chunk.get("gmtags", meta)
    else:
        response = httpx.post(stage.url("/games/harrow/v1/chat/completions"), json=body,
                              timeout=60)
        assert response.status_code == 200, response.text
        document = response.json()
        content, meta = document["choices"][0]["message"]["content"], document["gmtags"]
    chat.history.append(gm(content))
    return content, section_of(model.requests[-1]), bool(meta["anchored"])


def script(model: FakeModel, chats: list[Chat]) -> None:
    model.script.update(SHARED)
    for chat in chats:
        for index, line in enumerate(chat.lines):
            if line not in SHARED:  # a line of this chat's own; some replies are alike
                model.script[line] = ROB if index % 3 == 0 else "The road goes on."


@st.composite
def chats(draw: st.DrawFn) -> list[Chat]:
    """Two to four chats of one game that share lines: greetings, "ok then", identical scripted
    GM replies. Never three shared player lines in a row: a run of turns that two chats share
    that long, with its GM replies, is as strong as the evidence a truncated chat gives (the
    test of that line is below)."""
    found: list[Chat] = []
    for number in range(draw(st.integers(2, 4))):
        lines: list[str] = []
        shared_run = 0
        for index in range(draw(st.integers(1, 7))):
            if shared_run < 2 and draw(st.booleans()):
                lines.append(draw(st.sampled_from(sorted(SHARED))))
                shared_run += 1
            else:
                lines.append(f"chat {number} line {index}")
                shared_run = 0
        found.append(Chat(f"chat {number}", lines, draw(st.booleans()), draw(st.booleans())))
    return found


def alone(model: FakeModel, games_dir: Path, chat: Chat) -> list[tuple[str, str, bool]]:
    """``chat`` sent alone, turn after turn, to a fresh server."""
    stage = start_stage(model, games_dir)
    try:
        return [send(stage, model, chat) for _ in chat.lines]
    finally:
        stage.server.stop()


def fresh(chat: Chat) -> Chat:
    return Chat(chat.name, chat.lines, chat.greeting, chat.stream)


@given(chats(), st.data())
@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
def test_chats_that_arrive_whole_never_mix_whatever_the_server_saw(
        model: FakeModel, games_dir: Path, redis_server: RedisServer, chats: list[Chat],
        data: st.DataObject) -> None:
    """The isolation property: interleaved in a random order on one server, with the in-process
    store evicting and emptied, or Redis flushed and killed in between, each chat gets exactly
    what it gets alone on a fresh server."""
    script(model, chats)
    expected = {chat.name: alone(model, games_dir, fresh(chat)) for chat in chats}
    turns = [chat.name for chat in chats for _ in chat.lines]
    order = data.draw(st.permutations(turns))
    on_redis = data.draw(st.booleans())
    store = RedisStore(redis_server.url) if on_redis else MemoryStore(max_bytes=40_000)
    if on_redis:
        redis_server.flush()
    stage = start_stage(model, games_dir, store)
    by_name = {chat.name: fresh(chat) for chat in chats}
    got: dict[str, list[tuple[str, str, bool]]] = {name: [] for name in by_name}
    try:
        for name in order:
            trouble = data.draw(st.sampled_from(["none", "none", "none", "flush", "kill"]))
            if trouble == "flush":
                redis_server.flush() if on_redis else store.clear()  # type: ignore[union-attr]
            elif trouble == "kill" and on_redis:
                redis_server.stop()
                redis_server.start()
            got[name].append(send(stage, model, by_name[name]))
    finally:
        stage.server.stop()
        if redis_server.process.poll() is not None:
            redis_server.start()
    for name, answers in got.items():
        for turn, (mine, theirs) in enumerate(zip(answers, expected[name], strict=True)):
            assert mine[0] == theirs[0], (name, turn, "reply content")
            assert mine[1] == theirs[1], (name, turn, "GM section")
            assert mine[2] == theirs[2], (name, turn, "anchored")
            assert mine[2] is True  # every chat here arrives whole


# --- the line between a chat that lost its front and one that shares lines ----------------------

def on_a_fresh_server(model: FakeModel, games_dir: Path,
                      messages: list[dict[str, Any]]) -> str:
    """The GM section a fresh server sends the model for ``messages``."""
    stage = start_stage(model, games_dir)
    try:
        assert stage.chat(messages).status_code == 200
        return section_of(model.requests[-1])
    finally:
        stage.server.stop()


def test_a_new_chat_sharing_one_line_never_gets_another_chats_state(
        stage: Stage, model: FakeModel, games_dir: Path) -> None:
    """Issue 22's first finding: a new chat ``["ok then"]`` came back re-anchored onto chat A,
    with Ada holding chat A's 19 shillings."""
    model.script["Chat A. I rob the bank."] = "Go on then."
    stage.chat([SYSTEM, user("Chat A. I rob the bank."), gm(ROB), user("ok then")])
    with_a = section_of(model.requests[-1])
    new = stage.chat([SYSTEM, user("ok then")]).json()["gmtags"]
    assert new["anchor"] == "start" and new["anchored"] is True
    assert section_of(model.requests[-1]) == on_a_fresh_server(
        model, games_dir, [SYSTEM, user("ok then")]) != with_a


def test_a_new_three_turn_chat_keeps_its_own_earn(stage: Stage, model: FakeModel,
                                                  games_dir: Path) -> None:
    """A new 3-turn chat ending in "hi" skipped its own earn: it was re-anchored on "hi"."""
    model.script["hi"] = "Hello."
    for index in range(3):
        stage.chat([SYSTEM, user(f"old {index}"), gm("Quiet."), user("hi")])
    earn = 'Coins! [inventory: action="earn" amount="5 shillings" who="Ada"]'
    sent = [SYSTEM, user("new chat"), gm(earn), user("hi")]
    meta = stage.chat(sent).json()["gmtags"]
    assert meta["anchor"] == "start" and meta["foldedTurns"] == 3
    assert section_of(model.requests[-1]) == on_a_fresh_server(model, games_dir, sent)


def _long_chat(model: FakeModel, prefix: str, replies: list[str]) -> list[dict[str, Any]]:
    turns: list[dict[str, Any]] = []
    for index, reply in enumerate(replies):
        turns += [user(f"{prefix} {index}"), gm(reply)]
    return turns


def test_a_truncated_chat_re_anchors_on_a_window_of_three_turns_with_two_replies(
        stage: Stage, model: FakeModel) -> None:
    """The strong side of the line: [gm, player, gm] seen once, the rest of the request is the
    earlier chat's, and it ended there."""
    turns = _long_chat(model, "t", [ROB, "Quiet 1.", "Quiet 2.", "Quiet 3."])
    stage.chat([SYSTEM, *turns, user("last")])
    full = section_of(model.requests[-1])
    # dropped: the first player turn and the first GM reply and player turn after it
    truncated = [SYSTEM, *turns[3:], user("last")]  # gm, user, gm, user, gm, user
    meta = stage.chat(truncated).json()["gmtags"]
    assert meta["anchor"] == "re-anchored" and meta["anchored"] is True
    assert section_of(model.requests[-1]) == full  # Ada still has the 19 shillings


def test_three_turns_with_one_reply_are_not_enough(stage: Stage, model: FakeModel,
                                                   games_dir: Path) -> None:
    """The weak side: [player, gm, player] is no window; the chat is folded from the party."""
    turns = _long_chat(model, "w", [ROB, "Quiet 1."])
    stage.chat([SYSTEM, *turns, user("last")])
    truncated = [SYSTEM, *turns[2:], user("last")]  # user, gm, user
    meta = stage.chat(truncated).json()["gmtags"]
    assert meta["anchor"] == "start"
    assert section_of(model.requests[-1]) == on_a_fresh_server(model, games_dir, truncated)


def test_a_window_seen_in_two_chats_anchors_on_neither(stage: Stage, model: FakeModel) -> None:
    """Exactly one earlier chat: the same run of turns in two chats is no evidence."""
    run = [user("ok then"), gm("Sure."), user("go on"), gm("Sure.")]
    stage.chat([SYSTEM, user("a"), gm(ROB), *run, user("end a")])
    stage.chat([SYSTEM, user("b"), gm("Nothing."), *run, user("end a")])
    meta = stage.chat([SYSTEM, *run, user("end a")]).json()["gmtags"]
    assert meta["anchor"] == "start"
    assert "not in one place" in meta["note"]


def test_a_chat_that_went_on_otherwise_is_not_continued(stage: Stage, model: FakeModel) -> None:
    """A request that shares a window with an earlier chat, and then goes another way where
    the earlier chat went on, only shares turns with it."""
    run = [user("ok then"), gm("Sure."), user("go on"), gm("Sure.")]
    stage.chat([SYSTEM, user("a"), gm(ROB), *run, user("more of a"), gm("A goes on."),
                user("end a")])
    meta = stage.chat([SYSTEM, *run, user("something else")]).json()["gmtags"]
    assert meta["anchor"] == "start"


def test_a_chat_edited_near_its_start_folds_its_edit(stage: Stage, model: FakeModel) -> None:
    """An edited second turn must not be skipped by continuing the unedited chat."""
    turns = _long_chat(model, "e", ["Quiet.", ROB, "Quiet.", "Quiet.", "Quiet."])
    stage.chat([SYSTEM, *turns, user("last")])
    edited = [turns[0], gm("Nothing happens."), *turns[2:]]
    meta = stage.chat([SYSTEM, *edited, user("last")]).json()["gmtags"]
    assert meta["anchor"] == "cached" and meta["reusedTurns"] == 1


# --- the same through a real `gmtags serve` process ---------------------------------------------

@pytest.fixture
def serving(model: FakeModel, games_dir: Path) -> Iterator[str]:
    process, url, lines = serve_process(["--upstream", model.url, "--games", str(games_dir)])
    yield url
    stop_process(process, lines)


def test_gmtags_serve_answers_a_new_chat_from_its_own_messages(
        serving: str, model: FakeModel) -> None:
    model.script["ok then"] = "Fine."
    url = serving + "/games/harrow/v1/chat/completions"
    httpx.post(url, json={"model": "m", "messages": [
        user("Chat A. I rob the bank."), gm(ROB), user("ok then")]}, timeout=60)
    with_a = section_of(model.requests[-1])
    meta = httpx.post(url, json={"model": "m", "messages": [user("ok then")]},
                      timeout=60).json()["gmtags"]
    alone_section = section_of(model.requests[-1])
    assert meta["anchor"] == "start" and meta["anchored"] is True
    assert alone_section != with_a
