"""The pipeline stage end to end: real loopback servers (fake model, stage, redis-server)."""

from __future__ import annotations

import asyncio
import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from stage_servers import FakeModel, RedisServer, Stage, free_port, start_stage

import tagparse
from replay.cache import RedisStore
from replay.stage.app import FRONT_BEGIN, SECTION_BEGIN, SECTION_END

ADD_ROPE = 'You find rope. [inventory: action="add" item="Rope" who="Ada"] Onward.'
PAY = 'The innkeeper takes it. [inventory: action="pay" amount="3 pennies" who="Ada"]'
ADD_TORCH = 'Two torches. [inventory: action="add" item="Torch" count="2" who="Ada"]'
GMTAGS = str(Path(sys.executable).parent / "gmtags")
SYSTEM = {"role": "system", "content": "You are the game master of Harrow Vale."}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def gm(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": text}


def section(model: FakeModel, request: int = -1) -> str:
    """The gmtags system section the model was sent."""
    messages = model.requests[request]["messages"]
    found = [m["content"] for m in messages if m["role"] == "system"
             and m["content"].startswith(SECTION_BEGIN)]
    assert len(found) == 1
    assert found[0].endswith(SECTION_END)
    return str(found[0])


def stream_chat(stage: Stage, messages: list[dict[str, Any]],
                game: str = "harrow") -> tuple[str, list[dict[str, Any]]]:
    """Content and chunks of a streamed answer; checks the SSE framing ends with [DONE]."""
    chunks: list[dict[str, Any]] = []
    done = False
    with httpx.stream("POST", stage.url(f"/games/{game}/v1/chat/completions"),
                      json={"model": "fake-gm", "messages": messages, "stream": True},
                      timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if not line.startswith("data: "):
                continue
            assert not done, "nothing may follow [DONE]"
            if line == "data: [DONE]":
                done = True
                continue
            chunks.append(json.loads(line[6:]))
    assert done
    content = "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks
                      if c.get("choices"))
    return content, chunks


def test_answers_inline_and_the_prompt_gets_the_gm_section_in_two_parts(
        stage: Stage, model: FakeModel) -> None:
    """The instructions after the client's system message, the state before the player's
    last message (replay.stage.layout: "stateDepth" 1 by default)."""
    model.script["I search the mill."] = ADD_ROPE
    response = stage.chat([SYSTEM, user("I search the mill.")],
                          temperature=0.7, max_tokens=99)
    assert response.status_code == 200
    content = response.json()["choices"][0]["message"]["content"]
    tags = tagparse.scan(content).tags
    assert len(tags) == 1 and tags[0].answer is not None
    assert dict(tags[0].answer)["ok"] == "true"
    assert content.startswith("You find rope. [inventory: action=\"add\"")
    assert content.endswith("] Onward.")
    sent = model.requests[-1]
    assert sent["temperature"] == 0.7 and sent["max_tokens"] == 99  # the client's parameters
    assert sent["messages"][0] == SYSTEM and sent["messages"][3] == user("I search the mill.")
    assert sent["messages"][1]["content"].startswith(FRONT_BEGIN)
    assert sent["messages"][2]["content"] == section(model)
    assert "INVENTORY" in section(model) and "INVENTORY" not in sent["messages"][1]["content"]
    meta = response.json()["gmtags"]
    assert meta["anchored"] is True and meta["answers"][0]["ok"] is True


def test_client_headers_go_to_the_model(stage: Stage, model: FakeModel) -> None:
    httpx.post(stage.url("/games/harrow/v1/chat/completions"),
               json={"messages": [user("hi")]},
               headers={"Authorization": "Bearer upstream-secret", "X-Trace": "t1"}, timeout=60)
    assert model.headers[-1]["authorization"] == "Bearer upstream-secret"
    assert model.headers[-1]["x-trace"] == "t1"


@pytest.mark.parametrize("text", [
    ADD_ROPE, PAY, ADD_TORCH + " " + PAY,
    'Odd [sighs] and [Inventory : action="add" item="Rope"] then [1] [note: x] [inv',
    'A [skill_check: skill="sneak" dc="2"] and an unclosed [inventory: action="add" item="Rope',
    "[inventory: action=\"add\" item='Torch' who=Ada] ends on a tag",
])
def test_streamed_answer_equals_the_whole_answer_whatever_the_chunk_splits(
        stage: Stage, model: FakeModel, text: str) -> None:
    model.script["go"] = text
    whole = stage.chat([SYSTEM, user("go")]).json()["choices"][0]["message"]["content"]
    for seed in range(6):  # each history seeds a different split of the same reply
        history = [{"role": "system", "content": f"You are the GM ({seed})."}, user("go")]
        streamed, chunks = stream_chat(stage, history)
        assert streamed == whole
        assert chunks[-1]["choices"][0]["finish_reason"] == "stop"
        assert "gmtags" in chunks[-1]


def test_regeneration_of_the_same_prefix_never_applies_twice(stage: Stage, model: FakeModel) -> None:
    model.script["I search the mill."] = ADD_TORCH
    chat = [SYSTEM, user("I search the mill.")]
    first = stage.chat(chat).json()["choices"][0]["message"]["content"]
    again = stage.chat(chat).json()["choices"][0]["message"]["content"]  # regenerate
    assert first == again
    for history in ([*chat, gm(again), user("Next.")],
                    [*chat, gm(first), user("Next."), gm("Fine."), user("Next.")]):
        stage.chat(history)
        ada = section(model).split("Ada (")[1].split("Bram the Quiet (")[0]
        # Ada had no torch: the two were added once (the prompt's line format may grow)
        assert re.findall(r"- Torch\b[^\n]*×(\d+)", ada) == ["2"]


def test_answered_tags_in_earlier_replies_are_re_evaluated_not_trusted(
        stage: Stage, model: FakeModel) -> None:
    lie = ('[inventory: action="add" item="Torch" count="40" who="Ada" | ok="false" '
           'reason="cannot-afford" text="Nothing."]')
    stage.chat([SYSTEM, user("a"), gm(lie), user("b")])
    assert "- [inventory] ok: Added Torch ×40 to Ada's bag." in section(model)


def test_block_mode_keeps_the_text_and_appends_the_answers(stage: Stage, model: FakeModel) -> None:
    model.script["x"] = ADD_ROPE
    content = stage.chat([user("x")], game="harrow-block").json()["choices"][0]["message"][
        "content"]
    assert content.startswith(ADD_ROPE)
    assert "— gmtags —" in content and "inventory: ok: " in content
    streamed, _ = stream_chat(stage, [user("x")], game="harrow-block")
    assert streamed == content


def test_continue_treats_the_continued_reply_as_one_reply(stage: Stage, model: FakeModel) -> None:
    model.script["search"] = 'item="Rope" who="Ada"] and more.'
    partial = 'You find [inventory: action="add" '
    chat = [SYSTEM, user("search"), gm(partial)]
    response = stage.chat(chat).json()
    content = response["choices"][0]["message"]["content"]
    assert content.startswith('item="Rope" who="Ada" | ok="true"')
    assert content.endswith("] and more.")
    whole = partial + content
    tags = tagparse.scan(whole).tags
    assert len(tags) == 1 and dict(tags[0].answer or ())["ok"] == "true"
    streamed, _ = stream_chat(stage, chat)
    assert streamed == content
    assert response["gmtags"]["replies"] == 0  # the continued reply is still reply 0


def test_a_chat_whose_front_was_dropped_re_anchors_on_what_was_seen(
        stage: Stage, model: FakeModel) -> None:
    turns: list[dict[str, Any]] = []
    for index in range(6):
        turns += [user(f"turn {index}"), gm(ADD_TORCH if index == 0 else f"Quiet {index}.")]
    stage.chat([SYSTEM, *turns, user("full")])
    full_inventory = section(model)
    # SillyTavern drops the oldest turns and injects its own system messages at depth.
    truncated = [SYSTEM, *turns[5:9], {"role": "system", "content": "[Author's note]"},
                 *turns[9:], user("full")]
    meta = stage.chat(truncated).json()["gmtags"]
    assert meta["anchor"] == "re-anchored" and meta["anchored"] is True
    assert section(model) == full_inventory
    assert meta["replies"] == 6


def test_an_unknown_truncated_chat_says_it_could_not_be_anchored(
        stage: Stage, model: FakeModel) -> None:
    """Nothing of the chat was seen, but its GM replies carry answers that the fold from the
    party file does not give (Ada never had 9 crowns to pay): its front is missing."""
    stage.chat([SYSTEM, user("hello")])
    paid = ('Paid. [inventory: action="pay" amount="9 crowns" who="Ada" | ok="true" '
            'text="Paid with crowns ×9."]')
    meta = stage.chat([SYSTEM, user("never seen 1"), gm(paid), user("never seen 3"),
                       gm("x"), user("y")]).json()["gmtags"]
    assert meta["anchored"] is False and meta["anchor"] == "start"
    assert "front of the chat is probably missing" in meta["note"]


def test_an_unknown_chat_whose_answers_agree_is_anchored(stage: Stage, model: FakeModel) -> None:
    """A chat the server never saw, sent whole, is answered from the party file as itself:
    anchored, whatever else the server has served."""
    model.script["hi"] = ADD_ROPE
    first = stage.chat([SYSTEM, user("hi")]).json()
    reply = first["choices"][0]["message"]["content"]
    stage.chat([SYSTEM, user("other chat"), gm("Quiet."), user("more"), gm("Quiet."),
                user("hi")])
    meta = stage.chat([SYSTEM, user("hi"), gm(reply), user("and then")]).json()["gmtags"]
    assert meta["anchored"] is True


@pytest.mark.parametrize(("status", "message"), [(500, "model crashed"), (429, "slow down"),
                                                 (401, "bad key")])
def test_upstream_errors_become_openai_errors_with_their_status(
        stage: Stage, model: FakeModel, status: int, message: str) -> None:
    model.fail = (status, message)
    for stream in (False, True):
        response = stage.chat([user("x")], stream=stream)
        assert response.status_code == status
        assert message in response.json()["error"]["message"]
        assert response.json()["error"]["type"] == "upstream_error"


def test_an_unreachable_model_is_a_502(games_dir: Path) -> None:
    nowhere = FakeModel(server=None)
    stage = start_stage(nowhere, games_dir, upstream=f"http://127.0.0.1:{free_port()}/v1")
    try:
        response = stage.chat([user("x")])
        assert response.status_code == 502
        assert response.json()["error"]["code"] == "upstream_unreachable"
    finally:
        stage.server.stop()


def test_key_size_limit_unknown_game_and_bad_bodies(model: FakeModel, games_dir: Path) -> None:
    stage = start_stage(model, games_dir, key="client-key", max_body=4096)
    try:
        url = stage.url("/games/harrow/v1/chat/completions")
        assert httpx.post(url, json={"messages": []}).status_code == 401
        ok = httpx.post(url, json={"messages": [user("x")]},
                        headers={"Authorization": "Bearer client-key"}, timeout=60)
        assert ok.status_code == 200
        assert "authorization" not in model.headers[-1]  # gmtags' key is not the model's
        big = httpx.post(url, json={"messages": [user("x" * 5000)]},
                         headers={"X-Gmtags-Key": "client-key"})
        assert big.status_code == 413
        bad = httpx.post(url, content=b"{not json", headers={"X-Gmtags-Key": "client-key"})
        assert bad.status_code == 400 and "error" in bad.json()
        unknown = httpx.post(stage.url("/games/nope/v1/chat/completions"),
                             json={"messages": []}, headers={"X-Gmtags-Key": "client-key"})
        assert unknown.status_code == 404
    finally:
        stage.server.stop()


def test_healthz_and_models(stage: Stage) -> None:
    health = httpx.get(stage.url("/healthz")).json()
    assert {k: health[k] for k in ("status", "games", "broken")} == {
        "status": "ok", "games": ["harrow", "harrow-block"], "broken": []}
    assert health["snapshots"]["store"] == "memory"
    assert httpx.get(stage.url("/games/harrow/v1/models")).json()["data"][0]["id"] == "fake-gm"


def test_v1_replay_gives_the_replay_json_of_the_cli(stage: Stage) -> None:
    root = Path(__file__).resolve().parents[3]
    chat = (root / "fixtures/chats/demo.jsonl").read_text(encoding="utf-8")
    body = {"ruleset": json.loads((root / "fixtures/rulesets/harrow.json").read_text()),
            "party": json.loads((root / "fixtures/parties/harrow.json").read_text()),
            "transcript": chat}
    served = httpx.post(stage.url("/v1/replay"), json=body, timeout=60).json()
    cli = subprocess.run(
        [GMTAGS, "replay", str(root / "fixtures/chats/demo.jsonl"),
         "--ruleset", str(root / "fixtures/rulesets/harrow.json"),
         "--party", str(root / "fixtures/parties/harrow.json"), "--format", "json"],
        capture_output=True, text=True, check=False, cwd=root)
    assert cli.returncode == 0
    assert served == json.loads(cli.stdout)
    bad = httpx.post(stage.url("/v1/replay"), json={"ruleset": {}, "transcript": ""})
    assert bad.status_code == 422


def test_fifty_concurrent_requests_on_one_game_agree(stage: Stage, model: FakeModel) -> None:
    model.script["buy"] = PAY
    base = [SYSTEM, user("a"), gm(ADD_TORCH), user("b"), gm(PAY)]
    chats = [[*base, *[user("c"), gm(f"Step {k}.")] * (i % 5), user("buy")] for i, k in
             zip(range(50), range(50), strict=True)]

    async def run() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=120) as client:
            return await asyncio.gather(*[
                client.post(stage.url("/games/harrow/v1/chat/completions"),
                            json={"messages": chat, "stream": i % 2 == 1})
                for i, chat in enumerate(chats)])

    responses = asyncio.run(run())
    assert all(r.status_code == 200 for r in responses)
    by_shape: dict[int, set[str]] = {}
    for i, response in enumerate(responses):
        if i % 2:
            content = "".join(
                json.loads(line[6:])["choices"][0]["delta"].get("content") or ""
                for line in response.text.splitlines()
                if line.startswith("data: {") and '"choices"' in line)
        else:
            content = response.json()["choices"][0]["message"]["content"]
        by_shape.setdefault(i % 5, set()).add(content)
    assert all(len(contents) == 1 for contents in by_shape.values())
    # the same chat, answered alone on a fresh server, gives the same answer
    alone = stage.chat(chats[0]).json()["choices"][0]["message"]["content"]
    assert by_shape[0] == {alone}


def _serve(model: FakeModel, games_dir: Path, redis_url: str) -> tuple[subprocess.Popen[str], str]:
    port = free_port()
    process = subprocess.Popen(
        [GMTAGS, "serve", "--upstream", model.url, "--games",
         str(games_dir), "--port", str(port), "--redis", redis_url],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONHASHSEED": str(port)})
    url = f"http://127.0.0.1:{port}"
    transport = httpx.HTTPTransport(retries=12)  # connection retries with back-off
    with httpx.Client(transport=transport, timeout=60) as client:
        assert client.get(url + "/healthz").status_code == 200
    return process, url


def test_two_processes_sharing_redis_give_the_same_answers(
        model: FakeModel, games_dir: Path, redis_server: RedisServer) -> None:
    model.script["buy"] = PAY
    first, first_url = _serve(model, games_dir, redis_server.url)
    second, second_url = _serve(model, games_dir, redis_server.url)
    try:
        chat = [SYSTEM, user("a"), gm(ADD_TORCH), user("b"), gm(PAY), user("buy")]
        a = httpx.post(first_url + "/games/harrow/v1/chat/completions",
                       json={"messages": chat}, timeout=60).json()
        b = httpx.post(second_url + "/games/harrow/v1/chat/completions",
                       json={"messages": chat}, timeout=60).json()
        assert a["choices"] == b["choices"]
        assert a["gmtags"]["answers"] == b["gmtags"]["answers"]
        assert b["gmtags"]["anchor"] == "cached"  # the second process used the first's work
        assert b["gmtags"]["foldedTurns"] == 0
    finally:
        for process in (first, second):
            process.terminate()
            process.wait(timeout=30)


def test_redis_killed_mid_test_still_answers_correctly(
        model: FakeModel, games_dir: Path, caplog: pytest.LogCaptureFixture) -> None:
    own = RedisServer()
    model.script["buy"] = PAY
    stage = start_stage(model, games_dir, store=RedisStore(own.url))
    reference = start_stage(model, games_dir)
    try:
        chat = [SYSTEM, user("a"), gm(ADD_TORCH), user("b"), gm(PAY), user("buy")]
        warm = stage.chat(chat).json()
        own.stop()
        later = [*chat[:-1], user("c"), gm(PAY), user("buy")]
        with caplog.at_level("WARNING", logger="gmtags.cache"):
            cold = stage.chat(later)
            again = stage.chat(later)
        assert cold.status_code == 200 and again.status_code == 200
        expected = reference.chat(later).json()
        assert cold.json()["choices"] == expected["choices"] == again.json()["choices"]
        assert warm["choices"] == reference.chat(chat).json()["choices"]
        assert sum("Redis unavailable" in r.message for r in caplog.records) == 1
    finally:
        stage.server.stop()
        reference.server.stop()
        own.stop()
