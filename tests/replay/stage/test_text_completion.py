"""The text completion routes (issue 42): each backend's routes against a scripted backend that
speaks its real shapes, streamed and not; a chat played through them with every built-in
instruct template replays, saved as SillyTavern ``.jsonl``, to the answers returned live, and
to the answers and state of the same game played through the chat route; what does not parse
goes through byte for byte, and says why.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from st_chats import sillytavern_text
from stage_servers import Stage, game_folders, start_stage
from text_servers import TextModel, text_model

import tagparse
from replay import read_transcript
from replay.files import load_party, load_ruleset
from replay.fold import replay
from replay.formats import transcript_from_openai
from replay.stage.textcomp.instruct import BUILT_IN

__all__ = ["text_model"]

SYSTEM = "You are the game master of Harrow Vale."
CLIMB = '[skill_check: skill="climb" dc="9" who="Ada"]'
LOOT = '[loot: table="mill_cache"]'
ADD = '[inventory: action="add" item="Torch" count="2" who="Ada"]'
PAY = '[inventory: action="pay" amount="3 pennies" who="Ada"]'
STORIES = {
    "I climb the mill wall.": ["Ada reaches for a hold. ", CLIMB, " She hauls herself up."],
    "I search the loft.": ["Dust everywhere. ", LOOT, " Something glints."],
    "I take two torches.": ["Ada takes them. ", ADD, " And pays. ", PAY, " Done."],
}
TURNS = list(STORIES)
ROUTES = {  # route -> (backend, streams by the route)
    "v1/completions": "openai", "completion": "llama.cpp", "api/v1/generate": "koboldcpp",
    "api/extra/generate/stream": "koboldcpp"}
GAMES: dict[str, dict[str, Any]] = {
    **{name: {"instruct": name} for name in BUILT_IN},
    "plain": {},
    "mid": {"instruct": "chatml", "resolve": "mid-reply"},
    "inline": {"instruct": "chatml", "pastAnswers": "inline", "stateDepth": None},
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return game_folders(tmp_path_factory.mktemp("text-games"),
                        {name: ("harrow", options) for name, options in GAMES.items()})


@pytest.fixture(scope="module")
def stage(text_model: TextModel, folders: Path) -> Iterator[Stage]:
    running = start_stage(text_model, folders)  # type: ignore[arg-type]
    yield running
    running.server.stop()


@pytest.fixture
def model(text_model: TextModel) -> TextModel:
    text_model.script.clear()
    text_model.script.update(STORIES)
    text_model.requests.clear()
    text_model.fail = None
    return text_model


def ask(stage: Stage, game: str, route: str, prompt: str, stream: bool = False,
        **extra: Any) -> tuple[str, dict[str, Any] | None, httpx.Response]:
    """(the reply's text, its gmtags metadata, the response) of one text completion."""
    body: dict[str, Any] = {"prompt": prompt, **extra}
    if route in ("v1/completions", "completion"):
        body["stream"] = stream
    else:
        route = "api/extra/generate/stream" if stream else "api/v1/generate"
    url = stage.url(f"/games/{game}/{route}")
    if not stream:
        response = httpx.post(url, json=body, timeout=60)
        assert response.status_code == 200, response.text
        document = response.json()
        text = document["choices"][0]["text"] if "choices" in document else \
            document["content"] if "content" in document else document["results"][0]["text"]
        return text, document.get("gmtags"), response
    pieces, meta = [], None
    with httpx.stream("POST", url, json=body, timeout=60) as response:
        assert response.status_code == 200
        assert response.headers["content-type"].startswith("text/event-stream")
        for line in response.iter_lines():
            if not line.startswith("data:") or line == "data: [DONE]":
                continue
            event = json.loads(line[5:])
            assert "error" not in event and "detail" not in event, event
            pieces.append(event["choices"][0]["text"] if "choices" in event else
                          event.get("content", event.get("token", "")))
            meta = event.get("gmtags", meta)
    return "".join(pieces), meta, response


def chat_prompt(game: str, messages: list[dict[str, Any]], reply: str = "") -> str:
    template = BUILT_IN[GAMES[game]["instruct"]]
    return template.render(messages, reply)


def opening(game: str) -> list[dict[str, Any]]:
    return [{"role": "system", "content": SYSTEM},
            {"role": "assistant", "content": "You stand before the old mill."}]


# -- each route, streamed and not --

@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("route", ["v1/completions", "completion", "api/v1/generate"])
def test_each_route_answers_the_reply_inline_in_its_backends_shape(
        stage: Stage, model: TextModel, route: str, stream: bool) -> None:
    messages = [*opening("chatml"), {"role": "user", "content": TURNS[0]}]
    prompt = chat_prompt("chatml", messages)
    text, meta, _ = ask(stage, "chatml", route, prompt, stream)
    assert meta is not None and [a["ok"] for a in meta["answers"]] == [True]
    tags = tagparse.scan(text).tags
    assert [t.kind for t in tags] == ["skill_check"] and tags[0].answer is not None
    assert text.startswith("Ada reaches for a hold. ") and text.endswith(" She hauls herself up.")
    path = "/" + ("api/extra/generate/stream" if stream and route == "api/v1/generate"
                  else route)
    sent = model.prompts(path)[-1]
    # the client's prompt, the GM section spliced in as ChatML system turns
    assert "<|im_start|>system\n=== gmtags: how to play" in sent
    assert "<|im_start|>system\n=== gmtags: game state" in sent
    assert _without_sections(sent) == prompt


def _without_sections(prompt: str) -> str:
    """A prompt sent on without the ChatML turns of the GM section."""
    out = prompt
    while "<|im_start|>system\n=== gmtags" in out:
        start = out.index("<|im_start|>system\n=== gmtags")
        end = out.index("<|im_end|>\n", start) + len("<|im_end|>\n")
        out = out[:start] + out[end:]
    return out


def test_the_game_state_goes_before_the_players_last_line(stage: Stage,
                                                          model: TextModel) -> None:
    messages = [*opening("llama3"), {"role": "user", "content": TURNS[0]}]
    ask(stage, "llama3", "completion", chat_prompt("llama3", messages))
    sent = model.prompts("/completion")[-1]
    front = sent.index("<|start_header_id|>system<|end_header_id|>\n\n=== gmtags: how to play")
    state = sent.index("<|start_header_id|>system<|end_header_id|>\n\n=== gmtags: game state")
    assert sent.index(SYSTEM) < front < sent.index("You stand before") < state < \
        sent.index(TURNS[0])


def test_past_replies_are_sent_without_their_answer_parts(stage: Stage,
                                                          model: TextModel) -> None:
    first = [*opening("chatml"), {"role": "user", "content": TURNS[0]}]
    text, _, _ = ask(stage, "chatml", "completion", chat_prompt("chatml", first))
    assert "ok=" in text
    second = [*first, {"role": "assistant", "content": text},
              {"role": "user", "content": TURNS[1]}]
    ask(stage, "chatml", "completion", chat_prompt("chatml", second))
    sent = model.prompts("/completion")[-1]
    assert tagparse.requests_only(text) in sent and text not in sent


def test_echo_gives_the_clients_own_prompt_and_logprobs_pass_through(
        stage: Stage, model: TextModel) -> None:
    prompt = chat_prompt("chatml", [*opening("chatml"), {"role": "user", "content": TURNS[1]}])
    for stream in (False, True):
        text, meta, _ = ask(stage, "chatml", "v1/completions", prompt, stream, echo=True,
                            logprobs=1)
        assert text.startswith(prompt) and "gmtags" not in text[:len(prompt)]
        assert meta is not None and meta["answers"][0]["tag"]["kind"] == "loot"
    whole = httpx.post(stage.url("/games/chatml/v1/completions"),
                       json={"prompt": prompt, "logprobs": 1}, timeout=60).json()
    assert whole["choices"][0]["logprobs"]["token_logprobs"] == [-0.5] * 3


# -- mid-reply: the prompt grows by the reply so far --

@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("route", ["v1/completions", "completion", "api/v1/generate"])
def test_mid_reply_continues_by_growing_the_prompt(stage: Stage, model: TextModel,
                                                   route: str, stream: bool,
                                                   folders: Path) -> None:
    messages = [*opening("chatml"), {"role": "user", "content": TURNS[2]}]
    prompt = chat_prompt("chatml", messages)
    text, meta, _ = ask(stage, "mid", route, prompt, stream, max_tokens=400)
    assert meta is not None and meta["resolve"]["stops"] == 2
    path = "/" + ("api/extra/generate/stream" if route == "api/v1/generate" else route)
    legs = model.prompts(path)
    assert len(legs) == 3
    # each leg's prompt is the one before it and the reply so far, the tag answered
    assert legs[1].startswith(legs[0]) and legs[2].startswith(legs[1])
    first, second = tagparse.scan(text).tags
    assert legs[1][len(legs[0]):] == text[:first.end]  # "Ada takes them. [inventory: … | …]"
    assert legs[2][len(legs[0]):] == text[:second.end]
    assert first.answer is not None and second.answer is not None
    assert [a["ok"] for a in meta["answers"]] == [True, True]
    assert _replayed(folders, "mid", [*messages, {"role": "assistant", "content": text}]) \
        == [_same(a) for a in meta["answers"]]


# -- Continue and impersonate --

def test_a_prompt_ending_inside_a_reply_continues_it(stage: Stage, model: TextModel,
                                                     folders: Path) -> None:
    messages = [*opening("chatml"), {"role": "user", "content": TURNS[0]}]
    started = "Ada reaches for a hold. "
    prompt = chat_prompt("chatml", messages, started)
    text, meta, _ = ask(stage, "chatml", "completion", prompt)
    assert not text.startswith(started) and text.startswith("[skill_check:")
    assert meta is not None and len(meta["answers"]) == 1
    whole = [*messages, {"role": "assistant", "content": started + text}]
    assert _replayed(folders, "chatml", whole) == [_same(a) for a in meta["answers"]]


def test_an_impersonation_is_passed_through_and_says_so(stage: Stage,
                                                        model: TextModel) -> None:
    template = BUILT_IN["chatml"]
    prompt = template.render(opening("chatml")) [:-len("<|im_start|>assistant\n")] + \
        "<|im_start|>user\n"
    body = json.dumps({"prompt": prompt, "n_predict": 20}, indent=3).encode()
    response = httpx.post(stage.url("/games/chatml/completion"), content=body, timeout=60)
    assert response.headers["x-gmtags-passthrough"] == "impersonation"
    assert model.requests[-1] == ("/completion", body)


# -- passed through, byte for byte --

@pytest.mark.parametrize(("game", "prompt", "reason"), [
    ("plain", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "no-template"),
    ("chatml", "### Instruction:\nhi\n\n### Response:\n", "no-turns"),
    ("alpaca", "<|im_start|>user\nhi<|im_end|>\n<|im_start|>assistant\n", "no-turns"),
])
@pytest.mark.parametrize("route", ["v1/completions", "completion", "api/v1/generate",
                                   "api/extra/generate/stream"])
def test_a_prompt_in_an_unknown_format_goes_through_byte_identical(
        stage: Stage, model: TextModel, game: str, prompt: str, reason: str,
        route: str) -> None:
    body = ('{"prompt":  ' + json.dumps(prompt) + ', "weird": [1,2, 3],"stream":' +
            ("true" if "stream" in route else "false") + "}").encode()
    response = httpx.post(stage.url(f"/games/{game}/{route}"), content=body, timeout=60)
    assert response.status_code == 200
    assert response.headers["x-gmtags-passthrough"] == reason
    assert model.requests[-1] == (f"/{route}", body)
    assert "gmtags" not in response.text


@pytest.mark.parametrize("body", [b"not json", b"[1, 2]", b'{"prompt": ["a", "b"]}',
                                  b'{"prompt": 7}', b'{"no": "prompt"}', b'"\\ud800"'])
def test_a_body_gmtags_cannot_read_goes_on_as_it_is(stage: Stage, model: TextModel,
                                                     body: bytes) -> None:
    response = httpx.post(stage.url("/games/chatml/completion"), content=body, timeout=60)
    assert response.headers["x-gmtags-passthrough"] in ("not-json", "no-prompt")
    assert model.requests[-1][1] == body


@pytest.mark.parametrize(("method", "route", "body", "expected"), [
    ("GET", "props", None, {"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
                            "chat_template": "chatml"}),
    ("POST", "tokenize", {"content": "ab"}, {"tokens": [97, 98]}),
    ("POST", "detokenize", {"tokens": [97, 98]}, {"content": "ab"}),
    ("GET", "api/v1/model", None, {"result": "koboldcpp/fake"}),
    ("GET", "api/extra/version", None, {"result": "KoboldCpp", "version": "1.80"}),
    ("POST", "api/extra/abort", {"genkey": "k1"}, {"success": "true", "done": "true"}),
    ("POST", "api/extra/tokencount", {"prompt": "abc"}, {"value": 3, "ids": [97, 98, 99]}),
])
def test_the_routes_gmtags_does_not_change_are_passed_through(
        stage: Stage, model: TextModel, method: str, route: str, body: Any,
        expected: Any) -> None:
    response = httpx.request(method, stage.url(f"/games/chatml/{route}"), json=body, timeout=60)
    assert response.status_code == 200 and response.json() == expected


# -- errors in the backend's own shape --

def test_errors_are_in_each_backends_shape(stage: Stage, model: TextModel) -> None:
    prompt = chat_prompt("chatml", [*opening("chatml"), {"role": "user", "content": TURNS[0]}])
    unknown = httpx.post(stage.url("/games/nope/completion"), json={"prompt": prompt})
    assert unknown.status_code == 404
    assert unknown.json()["error"]["code"] == 404 and unknown.json()["error"]["message"]
    kobold = httpx.post(stage.url("/games/nope/api/v1/generate"), json={"prompt": prompt})
    assert kobold.status_code == 404 and set(kobold.json()["detail"]) == {"msg", "type"}
    openai = httpx.post(stage.url("/games/nope/v1/completions"), json={"prompt": prompt})
    assert openai.json()["error"]["code"] == "unknown_game"
    model.fail = (503, {"detail": {"msg": "Server is busy", "type": "service_unavailable"}})
    busy = httpx.post(stage.url("/games/chatml/api/v1/generate"), json={"prompt": prompt})
    assert busy.status_code == 503 and busy.json() == {
        "detail": {"msg": "Server is busy", "type": "service_unavailable"}}


def test_the_key_and_the_body_limit_hold_on_every_text_route(
        text_model: TextModel, folders: Path) -> None:
    guarded = start_stage(text_model, folders, key="sesame",  # type: ignore[arg-type]
                          max_body=4096)
    try:
        for route in [*ROUTES, "props", "api/v1/model"]:
            method = "GET" if route in ("props", "api/v1/model") else "POST"
            response = httpx.request(method, guarded.url(f"/games/chatml/{route}"),
                                     json={"prompt": "x"})
            assert response.status_code == 401, route
        big = httpx.post(guarded.url("/games/chatml/completion"),
                         headers={"Authorization": "Bearer sesame"},
                         json={"prompt": "x" * 5000})
        assert big.status_code == 413 and big.json()["error"]["code"] == 413
    finally:
        guarded.server.stop()


def test_an_unreachable_backend_is_a_502_in_its_shape(text_model: TextModel,
                                                      folders: Path) -> None:
    gone = start_stage(text_model, folders,  # type: ignore[arg-type]
                       upstream="http://127.0.0.1:9/v1", connect_timeout=2)
    try:
        prompt = chat_prompt("chatml", [*opening("chatml"),
                                        {"role": "user", "content": TURNS[0]}])
        response = httpx.post(gone.url("/games/chatml/api/v1/generate"),
                              json={"prompt": prompt}, timeout=30)
        assert response.status_code == 502
        assert response.json()["detail"]["type"] == "upstream_unreachable"
    finally:
        gone.server.stop()


# -- a whole game: live = replay, text = chat --

def _same(answer: dict[str, Any]) -> tuple[Any, ...]:
    return (answer["tag"]["kind"], answer["tag"]["attrs"], answer["ok"], answer["reason"],
            answer["text"], answer["record"])


def _replayed(folders: Path, game: str, messages: list[dict[str, Any]],
              saved: Path | None = None) -> list[tuple[Any, ...]]:
    """The answers to the last reply of a chat saved as SillyTavern .jsonl."""
    chat = [{"name": "Ada" if m["role"] == "user" else "GM", "is_user": m["role"] == "user",
             "is_system": False, "send_date": "July 4, 2024 3:00pm", "mes": m["content"],
             "extra": {"type": "narrator"} if m["role"] == "system" else {}}
            for m in messages]
    path = saved or folders / "chat.jsonl"
    path.write_text(sillytavern_text({"user_name": "Ada", "character_name": "GM",
                                      "chat_metadata": {}}, chat), encoding="utf-8")
    game_rules = load_ruleset(folders / game / "ruleset.json")
    result = replay(game_rules, read_transcript(path),
                    load_party(game_rules, folders / game / "party.json"))
    last = max((a.message for a in result.answers), default=0)
    return [_same(a.answer.to_json()) for a in result.answers if a.message == last]


def _play_text(stage: Stage, game: str, routes: list[tuple[str, bool]]) -> tuple[
        list[dict[str, Any]], list[list[dict[str, Any]]]]:
    """The script played through the text routes (a swipe of the second reply included):
    the chat as the client keeps it, and the answers returned live per reply."""
    messages = opening(game)
    live = []
    for number, line in enumerate(TURNS):
        route, stream = routes[number % len(routes)]
        messages.append({"role": "user", "content": line})
        text, meta, _ = ask(stage, game, route, chat_prompt(game, messages), stream)
        if number == 1:  # the player swipes: the same prompt again, its reply kept
            text, meta, _ = ask(stage, game, route, chat_prompt(game, messages), not stream)
        assert meta is not None
        messages.append({"role": "assistant", "content": text})
        live.append(meta["answers"])
    return messages, live


@pytest.mark.parametrize("game", sorted(BUILT_IN))
def test_a_chat_played_with_each_template_replays_to_the_answers_returned_live(
        stage: Stage, model: TextModel, folders: Path, game: str) -> None:
    messages, live = _play_text(stage, game, [("completion", True), ("v1/completions", False),
                                              ("api/v1/generate", True)])
    saved = folders / f"{game}.jsonl"
    for reply in range(len(TURNS)):
        upto = messages[:2 + 2 * reply + 2]
        assert _replayed(folders, game, upto, saved) == [_same(a) for a in live[reply]]
    assert [len(a) for a in live] == [1, 1, 2]


def test_the_same_game_through_chat_and_text_completion_gives_the_same_answers_and_state(
        stage: Stage, model: TextModel, folders: Path) -> None:
    text_messages, text_live = _play_text(stage, "chatml", [("completion", False)])
    text_prompt = model.prompts("/completion")[-1]
    chat_messages = opening("chatml")
    chat_live = []
    for number, line in enumerate(TURNS):
        chat_messages.append({"role": "user", "content": line})
        for _ in range(2 if number == 1 else 1):  # the same swipe
            response = stage.chat(chat_messages, game="chatml")
            assert response.status_code == 200, response.text
        document = response.json()
        chat_messages.append({"role": "assistant",
                              "content": document["choices"][0]["message"]["content"]})
        chat_live.append(document["gmtags"]["answers"])
    assert chat_messages == text_messages
    assert [[_same(a) for a in r] for r in chat_live] == [[_same(a) for a in r]
                                                          for r in text_live]
    # the model read the same GM section, in the template's system turns
    sent = json.loads(model.requests[-1][1])["messages"]
    sections = [m["content"] for m in sent if m["role"] == "system" and
                m["content"].startswith("=== gmtags")]
    assert len(sections) == 2 and all(section in text_prompt for section in sections)
    game = load_ruleset(folders / "chatml" / "ruleset.json")
    start_state = load_party(game, folders / "chatml" / "party.json")
    states = [replay(game, transcript_from_openai(m), start_state).state
              for m in (text_messages, chat_messages)]
    assert states[0] == states[1] and states[0] != start_state


PROMPT_PARTS = st.sampled_from(["<|im_start|>user\n", "<|im_start|>assistant\n",
                                "<|im_start|>system\n", "<|im_end|>\n", "[", "]", "|",
                                'ok="true"', '[loot: table="mill_cache"', "I search the loft."])


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.one_of(st.text(max_size=10), PROMPT_PARTS), max_size=12), st.booleans())
def test_any_prompt_is_answered_or_passed_through_never_a_crash(
        stage: Stage, model: TextModel, parts: list[str], stream: bool) -> None:
    response = httpx.post(stage.url("/games/chatml/completion"),
                          json={"prompt": "".join(parts), "stream": stream}, timeout=60)
    assert response.status_code == 200, response.text
    if "x-gmtags-passthrough" not in response.headers and not stream:
        assert "gmtags" in response.json()
