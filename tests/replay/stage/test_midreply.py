"""Mid-reply answers end to end (issue 27; DESIGN.md "Interfaces", "Mid-reply answers").

A scripted model that continues an assistant prefix: its story is prose and tags, and the
narration it writes right after a tag reads that tag's answer from the prefix (``<saw …>``, a
hash of the answer's text) — or, when it has not seen one, guesses (``<guess>``). It streams in
random chunk splits (seeded by the request) that cut tags anywhere. The stage in front of it is
the real app on loopback, in game folders with ``"resolve": "mid-reply"``.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import shutil
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from helpers import key_problems
from stage_servers import FIXTURES, ServerThread, Stage, chunks, game_folders, start_stage

import tagparse
from engine.text.prompt import MID_REPLY_LINE
from replay.files import InputError, load_party, load_ruleset
from replay.formats import transcript_from_openai
from replay.record import Source
from replay.regress import regress
from replay.stage.app import FRONT_BEGIN, load_game
from replay.stage.midreply import LATE_PLACE, first_stop, stops_at

WAIT = 30.0
SYSTEM = {"role": "system", "content": "You are the game master."}
CLIMB = '[skill_check: skill="climb" dc="9" who="Ada"]'
SNEAK = '[skill_check: skill="sneak" dc="5" who="Bram the Quiet"]'
LOOT = '[loot: table="mill_cache"]'
PAY = '[inventory: action="pay" amount="3 pennies" who="Ada"]'
ADD = '[inventory: action="add" item="Torch" count="2" who="Ada"]'


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def seen(text: str) -> str:
    """What the scripted model writes after a tag whose answer text it read."""
    return f" <saw {hashlib.sha256(text.encode()).hexdigest()[:10]}>"


GUESS = " <guess>"


@dataclass
class Writer:
    """The scripted model: a story per last player message (prose and canonical request tags);
    after each tag it writes :func:`seen` of the answer it read, or :data:`GUESS`."""

    stories: dict[str, list[str]] = field(default_factory=dict)
    continues: bool = True  # False: a model that ignores the assistant prefix and starts over
    requests: list[dict[str, Any]] = field(default_factory=list)
    fail_at: int | None = None  # the request (0-based) answered 500
    hold_at: int | None = None  # the request held open after its first piece
    held: threading.Event = field(default_factory=threading.Event)
    released: threading.Event = field(default_factory=threading.Event)
    usage: bool = False  # every leg that finishes reports its token counts
    server: ServerThread | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/v1"

    def text(self, story: list[str], answers: list[str | None]) -> str:
        out = ""
        tags = 0
        for part in story:
            out += part
            if part.startswith("["):
                answer = answers[tags] if tags < len(answers) else None
                out += GUESS if answer is None else seen(answer)
                tags += 1
        return out

    def continuation(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        players = [m for m in messages if m.get("role") == "user"]
        story = self.stories.get(players[-1]["content"] if players else "", ["The road goes on."])
        prefix = messages[-1]["content"] if messages[-1].get("role") == "assistant" else ""
        if not self.continues:
            return self.text(story, [])
        # The prefix with its answer parts taken out, and the answer texts it shows.
        scanned = tagparse.scan(prefix)
        plain, at, answers = "", 0, []
        for tag in scanned.tags:
            plain += prefix[at:tag.start] + (tagparse.render(tag.kind, tag.attrs)
                                             if tag.malformed is None else tag.raw)
            answers.append(dict(tag.answer).get("text") if tag.answer else None)
            at = tag.end
        plain += prefix[at:]
        whole = self.text(story, answers)
        assert whole.startswith(plain), (plain, whole)
        return whole[len(plain):]

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def chat(request: Request) -> Response:
            body = await request.json()
            number = len(self.requests)
            self.requests.append(body)
            if number == self.fail_at:
                return JSONResponse({"error": {"message": "out of memory"}}, status_code=500)
            text = self.continuation(body)
            if not body.get("stream"):
                return JSONResponse({"id": f"w-{number}", "object": "chat.completion",
                                     "choices": [{"index": 0, "finish_reason": "stop", "message":
                                                  {"role": "assistant", "content": text}}]})
            seed = json.dumps(body["messages"], sort_keys=True)
            base = {"id": f"w-{number}", "object": "chat.completion.chunk", "created": 7,
                    "model": "writer"}

            pieces = chunks(text, seed)
            finish = "stop"
            limit = body.get("max_tokens")
            if isinstance(limit, int) and len(pieces) > limit:  # a piece is a token here
                pieces, finish = pieces[:limit], "length"

            async def events() -> AsyncIterator[bytes]:
                for index, piece in enumerate(pieces):
                    yield _event({**base, "choices": [{"index": 0, "delta": {"content": piece},
                                                       "finish_reason": None}]})
                    if index == 0 and number == self.hold_at:
                        self.held.set()
                        try:
                            await asyncio.Event().wait()  # until the stage goes away
                        finally:
                            self.released.set()
                last: dict[str, Any] = {**base, "choices": [{"index": 0, "delta": {},
                                                             "finish_reason": finish}]}
                if self.usage:
                    last["usage"] = {"prompt_tokens": 100, "completion_tokens": len(pieces),
                                     "total_tokens": 100 + len(pieces)}
                yield _event(last)
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _event(document: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(document)}\n\n".encode()


GAMES = {
    "mid": ("harrow", {"resolve": "mid-reply"}),
    "mid-vllm": ("harrow", {"resolve": "mid-reply", "upstreamContinues": "vllm"}),
    "mid-no": ("harrow", {"resolve": "mid-reply", "upstreamContinues": "no"}),
    "mid-two": ("harrow", {"resolve": "mid-reply", "maxStops": 2}),
    "mid-block": ("harrow", {"resolve": "mid-reply", "answers": "block"}),
    "after": ("harrow", {}),
    "market": ("gravewatch", {"resolve": "mid-reply"}),
    "fight": ("skirmish", {"resolve": "mid-reply"}),
}


@pytest.fixture(scope="module")
def writer() -> Iterator[Writer]:
    running = Writer()
    running.server = ServerThread(running.app())
    yield running
    running.server.stop()


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return game_folders(tmp_path_factory.mktemp("mid-games"), GAMES)


@pytest.fixture(scope="module")
def running(writer: Writer, folders: Path) -> Iterator[Stage]:
    stage = start_stage(writer, folders)  # type: ignore[arg-type]
    yield stage
    stage.server.stop()


@pytest.fixture
def mid(running: Stage, writer: Writer) -> Stage:
    writer.stories.clear()
    writer.requests.clear()
    writer.continues, writer.usage = True, False
    writer.fail_at = writer.hold_at = None
    writer.held.clear()
    writer.released.clear()
    return running


def ask(stage: Stage, game: str, messages: list[dict[str, Any]], stream: bool,
        **extra: Any) -> tuple[str, dict[str, Any], dict[str, Any] | None, list[dict[str, Any]]]:
    """(content, gmtags metadata, usage, chunks) of one reply, streamed or whole."""
    url = stage.url(f"/games/{game}/v1/chat/completions")
    body = {"model": "gm", "messages": messages, "stream": stream, **extra}
    if not stream:
        response = httpx.post(url, json=body, timeout=60)
        assert response.status_code == 200, response.text
        document = response.json()
        return (document["choices"][0]["message"]["content"], document["gmtags"],
                document.get("usage"), [])
    events: list[dict[str, Any]] = []
    done = 0
    with httpx.stream("POST", url, json=body, timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line == "data: [DONE]":
                done += 1
            elif line.startswith("data: "):
                assert not done, "nothing may follow [DONE]"
                events.append(json.loads(line[6:]))
    assert done == 1
    finishes = [e for e in events if e.get("choices") and e["choices"][0]["finish_reason"]]
    assert len(finishes) == 1 and finishes[0] is events[-1], "one finish, the last chunk"
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                      if e.get("choices"))
    return content, events[-1]["gmtags"], events[-1].get("usage"), events


def replays_clean(folders: Path, game: str, messages: list[dict[str, Any]], content: str,
                  meta: dict[str, Any]) -> None:
    """The returned reply, saved in the chat and replayed, gives exactly the answers returned:
    every answer part in it is what the fold answers (``gmtags regress``), and so is the
    metadata."""
    ruleset = load_ruleset(folders / game / "ruleset.json")
    start = load_party(ruleset, folders / game / "party.json")
    chat = [*messages, {"role": "assistant", "content": content}]
    report = regress("mid", ruleset, Source("", b"", transcript_from_openai(chat)), start)
    assert report.differences == [], report.differences
    if content.count("[") == content.count("| ok="):  # inline answers: every tag answered
        assert report.unanswered == []
    from replay.fold import replay
    replayed = replay(ruleset, transcript_from_openai(chat), start).answers
    last = max(a.message for a in replayed) if replayed else 0
    mine = [a.answer.to_json() for a in replayed if a.message == last]
    assert [_result(a) for a in meta["answers"]] == [_result(a) for a in mine]


def _result(answer: dict[str, Any]) -> tuple[Any, ...]:
    """An answer's request and result (not the tag's raw text: the saved one is answered)."""
    return (answer["tag"]["kind"], answer["tag"]["attrs"], answer["ok"], answer["reason"],
            answer["text"], answer["record"])


def narrated(content: str) -> list[str]:
    """What the model wrote right after each tag: ``saw`` (and it matches the tag's answer) or
    ``guess``."""
    found = []
    for tag in tagparse.scan(content).tags:
        after = content[tag.end:]
        if after.startswith(GUESS):
            found.append("guess")
        else:
            assert tag.answer is not None and after.startswith(seen(dict(tag.answer)["text"])), \
                (tag.raw, after[:40])
            found.append("saw")
    return found


# --- where the reply stops ---------------------------------------------------------------

def _tags(text: str) -> tuple[tagparse.Tag, ...]:
    return tagparse.scan(text).tags


@pytest.mark.parametrize(("text", "expected"), [
    (f"{CLIMB} {PAY} {LOOT}", [True, True, True]),
    ('[place: name="Greywater"] ' + CLIMB, [True, True]),
    (CLIMB + ' [place: name="Greywater"]', [True, False]),  # a later place is answered after
    ('[combat: op="start" foe="Goblin"] ' + CLIMB, [False, False]),  # after a fight tag: no
    (CLIMB + ' [attack: who="Ada" target="Goblin"] ' + PAY, [True, False, False]),
    ('[inventory: action="pay" amount="3 pennies" who="Ada" ' + CLIMB, [False, True]),
    ("[note: not a command] " + CLIMB, [True]),  # not a tag at all
])
def test_the_reply_stops_only_where_the_replay_answers_the_tag_the_same(
        text: str, expected: list[bool]) -> None:
    tags = _tags(text)
    assert [stops_at(tags, i) for i in range(len(tags))] == expected


def test_the_stop_is_at_the_closing_bracket_of_the_first_tag_that_closes_after_the_offset() -> None:
    text = f"Up. {CLIMB} and on {PAY}"
    first = text.index(CLIMB) + len(CLIMB)
    assert first_stop(text, 0) == first
    assert first_stop(text, first) == len(text)
    assert first_stop(text[:first - 1], 0) is None  # not closed yet: no stop


# --- end to end --------------------------------------------------------------------------

@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("game", ["mid", "mid-vllm"])
def test_each_tag_is_answered_inline_and_the_narration_after_it_reads_the_answer(
        mid: Stage, writer: Writer, folders: Path, game: str, stream: bool) -> None:
    writer.stories["I climb."] = ["You reach for the wall. ", CLIMB, " Then ", SNEAK,
                                  " and in the loft ", LOOT, " Done."]
    for seed in range(3):  # other chunk splits of the same reply
        messages = [{"role": "system", "content": f"GM {seed}"}, user("I climb.")]
        writer.requests.clear()
        content, meta, _, _ = ask(mid, game, messages, stream)
        assert narrated(content) == ["saw", "saw", "saw"]
        assert content.startswith("You reach for the wall. [skill_check:")
        assert content.endswith(" Done.")
        assert meta["resolve"] == {"mode": "mid-reply", "upstreamContinues":
                                   "as-is" if game == "mid" else "vllm",
                                   "stops": 3, "stoppedAt": [0, 1, 2], "differs": []}
        assert len(writer.requests) == 4  # the first request and three continuations
        for number, sent in enumerate(writer.requests[1:], start=1):
            final = sent["messages"][-1]
            assert final["role"] == "assistant"
            assert _tags(final["content"])[-1].answer is not None  # ends on the answered tag
            assert final["content"].endswith("]") and content.startswith(final["content"])
            assert len(_tags(final["content"])) == number
            vllm = {"continue_final_message": True, "add_generation_prompt": False}
            assert all(sent.get(k) == v for k, v in vllm.items()) == (game == "mid-vllm")
        replays_clean(folders, game, messages, content, meta)


def test_every_tag_kind_answered_mid_reply_replays_to_the_answers_returned(
        mid: Stage, writer: Writer, folders: Path) -> None:
    harrow = [CLIMB, SNEAK, LOOT, PAY, ADD, '[inventory: action="remove" item="Torch" who="Ada"]',
              '[inventory: action="earn" amount="4 pennies" who="Bram the Quiet"]',
              '[inventory: action="give" item="Torch" who="Ada" to="Bram the Quiet"]',
              '[inventory: action="equip" item="Rope" who="Ada"]',  # refused: still stops
              '[inventory: action="use" item="Poultice" who="Ada"]',
              '[sheet: op="rest" who="Ada"]',
              '[inventory: action="inspect" item="Torch" who="Ada"]']
    story: list[str] = []
    for tag in harrow:
        story += [" So: ", tag]
    writer.stories["Everything."] = story
    messages = [SYSTEM, user("Everything.")]
    content, meta, _, _ = ask(mid, "mid", messages, True)
    assert narrated(content) == ["saw"] * 8 + ["guess"] * 4  # maxStops 8 by default
    assert meta["resolve"]["stops"] == 8
    replays_clean(folders, "mid", messages, content, meta)


def test_a_place_first_then_a_purchase_at_its_prices(mid: Stage, writer: Writer,
                                                     folders: Path) -> None:
    writer.stories["Shopping."] = [
        "The town. ", '[place: name="Greyholm" size="market town"]', " The chandler. ",
        '[inventory: action="buy" item="Warming tonic" who="Ada"]', " And the old shot. ",
        '[inventory: action="sell" item="Shot and powder" count="2" who="Ada"]']
    messages = [SYSTEM, user("Shopping.")]
    content, meta, _, _ = ask(mid, "market", messages, True)
    assert narrated(content) == ["saw", "saw", "saw"]
    assert [a["ok"] for a in meta["answers"]] == [True, True, True]
    replays_clean(folders, "market", messages, content, meta)


def test_a_later_place_is_answered_after_the_reply_with_a_note_to_name_it_first(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.stories["Pay and go."] = ["Paid. ", PAY, " You arrive. ",
                                     '[place: name="Greywater"]', " Rest."]
    messages = [SYSTEM, user("Pay and go.")]
    content, meta, _, _ = ask(mid, "mid", messages, False)
    assert narrated(content) == ["saw", "guess"]
    assert meta["resolve"]["stoppedAt"] == [0]
    assert LATE_PLACE in meta["answers"][1]["notes"]
    assert LATE_PLACE not in meta["answers"][0].get("notes", [])
    replays_clean(folders, "mid", messages, content, meta)


def test_a_purchase_before_a_later_place_replays_to_the_answer_the_model_read(
        mid: Stage, writer: Writer, folders: Path) -> None:
    """A [place:] written after a purchase the model was answered mid-reply is resolved after
    it, not before (the stop's answer part says ``answered="mid-reply"``, and the fold answers
    the tags up to a stop before the tags after it): the returned reply replays to exactly the
    answers returned, and the place holds at the end of the reply."""
    writer.stories["Buy, then arrive."] = [
        "A tonic. ", '[inventory: action="buy" item="Warming tonic" who="Ada"]', " Then ",
        '[place: name="Greyholm" size="market town"]']
    messages = [SYSTEM, user("Buy, then arrive.")]
    content, meta, _, _ = ask(mid, "market", messages, True)
    assert narrated(content) == ["saw", "guess"]
    assert meta["resolve"]["stoppedAt"] == [0] and meta["resolve"]["differs"] == []
    assert meta["answers"][0]["record"]["answered"] == "mid-reply"
    assert 'answered="mid-reply"' in content.split("Then", 1)[0]
    assert "answered" not in meta["answers"][1]["record"]
    assert LATE_PLACE in meta["answers"][1]["notes"]
    replays_clean(folders, "market", messages, content, meta)


def test_a_fight_is_answered_after_the_reply_and_nothing_after_its_first_tag_stops(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.stories["Ambush!"] = [
        "Ada checks her purse. ", '[inventory: action="pay" amount="1 silver" who="Ada"]',
        " Goblins! ", '[combat: op="start" foe="Goblin" count="2"]', " Ada swings. ",
        '[attack: who="Ada" target="Goblin 1"]', " And counts coins. ",
        '[inventory: action="pay" amount="1 silver" who="Ada"]']
    messages = [SYSTEM, user("Ambush!")]
    content, meta, _, _ = ask(mid, "fight", messages, True)
    assert narrated(content) == ["saw", "guess", "guess", "guess"]
    assert meta["resolve"]["stoppedAt"] == [0]
    replays_clean(folders, "fight", messages, content, meta)


@pytest.mark.parametrize("stream", [True, False])
@pytest.mark.parametrize("game", ["fight", "after", "mid-no"])
def test_the_metadata_and_the_state_view_spell_every_key_camel_case(
        mid: Stage, writer: Writer, game: str, stream: bool) -> None:
    """README "The JSON gmtags writes": the ``gmtags`` metadata of a reply answered mid-way
    (``fight``) or after it (``after``; ``mid-no``, whose metadata says why), streamed or
    not, and the ``/state`` view of the chat in the fight it started, with heroes and foes."""
    writer.stories["Ambush!"] = [
        "Ada checks her purse. ", '[inventory: action="pay" amount="1 silver" who="Ada"]',
        " Goblins! ", '[combat: op="start" foe="Goblin" count="2"]', " Ada swings. ",
        '[attack: who="Ada" target="Goblin 1"]', " Up. ", CLIMB]
    messages = [SYSTEM, user("Ambush!")]
    content, meta, _, _ = ask(mid, game, messages, stream)
    assert meta["answers"] and "foldedTurns" in meta
    assert key_problems(meta) == []
    chat = [{"name": "Ada", "is_user": True, "is_system": False, "mes": "Ambush!"},
            {"name": "GM", "is_user": False, "is_system": False, "mes": content}]
    view = httpx.post(mid.url(f"/games/{game}/v1/state"), json={"chat": chat}, timeout=60)
    assert view.status_code == 200, view.text
    if game == "fight":  # heroes and goblins, each written as its side is
        fighting = view.json()["state"]["encounter"]["combatants"]
        assert {c["side"] for c in fighting} == {"party", "foes"}
    assert key_problems(view.json()) == []


def test_max_stops_bounds_the_continuations_and_the_rest_is_answered_after(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.stories["Four."] = ["a ", CLIMB, " b ", SNEAK, " c ", PAY, " d ", ADD, " e"]
    messages = [SYSTEM, user("Four.")]
    content, meta, _, _ = ask(mid, "mid-two", messages, True)
    assert narrated(content) == ["saw", "saw", "guess", "guess"]
    assert len(writer.requests) == 3
    assert meta["resolve"]["stops"] == 2
    replays_clean(folders, "mid-two", messages, content, meta)


def test_a_model_that_cannot_continue_is_answered_after_the_reply_and_the_metadata_says_so(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.continues = False
    writer.stories["I climb."] = ["Up. ", CLIMB, " Then ", PAY]
    messages = [SYSTEM, user("I climb.")]
    for stream in (True, False):
        writer.requests.clear()
        content, meta, _, _ = ask(mid, "mid-no", messages, stream)
        assert narrated(content) == ["guess", "guess"]
        assert len(writer.requests) == 1
        assert meta["resolve"]["mode"] == "after"
        assert '"upstreamContinues" is "no"' in meta["resolve"]["note"]
        replays_clean(folders, "mid-no", messages, content, meta)
    # and its GM instructions do not promise answers mid-reply
    section = next(m["content"] for m in writer.requests[-1]["messages"]
                   if m["content"].startswith(FRONT_BEGIN))
    assert MID_REPLY_LINE not in section


def test_the_gm_instructions_say_the_answer_appears_right_after_each_tag(
        mid: Stage, writer: Writer) -> None:
    writer.stories["hi"] = ["Hello."]
    for game, said in (("mid", True), ("after", False)):
        ask(mid, game, [SYSTEM, user("hi")], False)
        section = next(m["content"] for m in writer.requests[-1]["messages"]
                       if m["content"].startswith(FRONT_BEGIN))
        assert (MID_REPLY_LINE in section) == said


def test_a_swipe_rolls_the_same_and_the_next_turn_folds_the_reply(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.stories["I climb."] = ["Up. ", CLIMB, " Then ", LOOT, " ok."]
    writer.stories["Again."] = ["Once more. ", CLIMB]
    messages = [SYSTEM, user("I climb.")]
    first = ask(mid, "mid", messages, True)[0]
    assert ask(mid, "mid", messages, False)[0] == first  # a swipe: same dice, same reply
    later = [*messages, {"role": "assistant", "content": first}, user("Again.")]
    content, meta, _, _ = ask(mid, "mid", later, True)
    assert narrated(content) == ["saw"]
    replays_clean(folders, "mid", later, content, meta)


def test_continue_goes_on_from_the_clients_last_message_even_inside_a_tag(
        mid: Stage, writer: Writer, folders: Path) -> None:
    writer.stories["I climb."] = ["You reach for the wall. ", CLIMB, " Then ", PAY, " fin."]
    whole = writer.text(writer.stories["I climb."], [])
    cut = whole.index(CLIMB) + 10  # the client's reply stopped inside the first tag
    messages = [SYSTEM, user("I climb."), {"role": "assistant", "content": whole[:cut]}]
    content, meta, _, _ = ask(mid, "mid", messages, True)
    reply = whole[:cut] + content  # what the client's message becomes
    assert narrated(reply) == ["saw", "saw"]
    assert writer.requests[1]["messages"][-1]["content"] == reply[:len(
        writer.requests[1]["messages"][-1]["content"])]
    assert len([m for m in writer.requests[1]["messages"] if m["role"] == "assistant"]) == 1
    replays_clean(folders, "mid", messages[:-1], reply, meta)


def test_usage_is_summed_over_the_continuations(mid: Stage, writer: Writer) -> None:
    writer.usage = True
    writer.stories["Two."] = ["a ", CLIMB, " b ", PAY, " c"]
    for stream in (True, False):
        writer.requests.clear()
        _, _, usage, _ = ask(mid, "mid", [SYSTEM, user("Two.")], stream)
        # the two stopped legs were cut before their finish: only the last one reported
        assert usage is not None and usage["prompt_tokens"] == 100


def test_block_answers_still_show_the_model_its_answers_inline(
        mid: Stage, writer: Writer) -> None:
    writer.stories["I climb."] = ["Up. ", CLIMB, " ok."]
    content, meta, _, _ = ask(mid, "mid-block", [SYSTEM, user("I climb.")], True)
    assert content.startswith("Up. " + CLIMB + seen(meta["answers"][0]["text"]))
    assert "— gmtags —" in content
    assert _tags(writer.requests[1]["messages"][-1]["content"])[0].answer is not None


def test_an_error_mid_way_ends_the_reply_with_an_error_event_after_what_was_sent(
        mid: Stage, writer: Writer) -> None:
    writer.stories["I climb."] = ["Up. ", CLIMB, " Then ", PAY]
    writer.fail_at = 1  # the first continuation
    content, _, _, events = _ask_failing(mid, [SYSTEM, user("I climb.")])
    assert content.startswith("Up. [skill_check:") and content.endswith("]")
    assert events[-1]["error"]["code"] == "upstream_status"
    assert "500" in events[-1]["error"]["message"]
    writer.requests.clear()  # a whole reply: nothing was sent yet, so an error response
    response = httpx.post(mid.url("/games/mid/v1/chat/completions"),
                          json={"messages": [SYSTEM, user("I climb.")]}, timeout=60)
    assert response.status_code == 502 and response.json()["error"]["code"] == "upstream_status"


def _ask_failing(stage: Stage, messages: list[dict[str, Any]]
                 ) -> tuple[str, None, None, list[dict[str, Any]]]:
    events: list[dict[str, Any]] = []
    done = 0
    with httpx.stream("POST", stage.url("/games/mid/v1/chat/completions"),
                      json={"messages": messages, "stream": True}, timeout=60) as response:
        for line in response.iter_lines():
            if line == "data: [DONE]":
                done += 1
            elif line.startswith("data: "):
                events.append(json.loads(line[6:]))
    assert done == 1
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                      if e.get("choices"))
    return content, None, None, events


@pytest.mark.parametrize("stream", [True, False])
def test_a_client_that_hangs_up_cancels_the_continuation(mid: Stage, writer: Writer,
                                                         stream: bool) -> None:
    writer.stories["I wait."] = ["Up. ", CLIMB, " and then a long wait."]
    writer.hold_at = 1  # the continuation is held after its first piece
    body = json.dumps({"messages": [SYSTEM, user("I wait.")], "stream": stream}).encode()
    sock = socket.create_connection(("127.0.0.1", mid.server.port), timeout=WAIT)
    try:
        sock.sendall(b"POST /games/mid/v1/chat/completions HTTP/1.1\r\nHost: x\r\n"
                     b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n"
                     % len(body) + body)
        assert writer.held.wait(WAIT), "the continuation never reached the model"
        assert not writer.released.is_set()
    finally:
        sock.close()
    assert writer.released.wait(WAIT), "the stage kept the continuation open"


@pytest.mark.parametrize(("options", "problem"), [
    ({"resolve": "during"}, "/resolve"),
    ({"resolve": "mid-reply", "upstreamContinues": "sometimes"}, "/upstreamContinues"),
    ({"resolve": "mid-reply", "maxStops": -1}, "/maxStops"),
    ({"resolve": "mid-reply", "maxStops": True}, "/maxStops"),
    ({"resolve": "mid-reply", "maxStops": 1000}, "/maxStops"),
])
def test_bad_options_are_a_clear_error_when_the_game_loads(
        tmp_path: Path, options: dict[str, Any], problem: str) -> None:
    shutil.copy(FIXTURES / "rulesets" / "harrow.json", tmp_path / "ruleset.json")
    (tmp_path / "options.json").write_text(json.dumps(options))
    with pytest.raises(InputError, match=f"options.json#{problem}: "):
        load_game(tmp_path)


def test_good_options_load() -> None:
    from replay.stage.midreply import MidReplyOptions, read_options
    assert read_options({}, "o") == MidReplyOptions("after", "as-is", 8)
    assert read_options({"resolve": "mid-reply", "upstreamContinues": "vllm", "maxStops": 0},
                        "o") == MidReplyOptions("mid-reply", "vllm", 0)
    assert not read_options({"resolve": "mid-reply", "upstreamContinues": "no"}, "o").stops



@pytest.mark.parametrize("stream", [True, False])
def test_max_tokens_bounds_the_whole_reply_not_each_continuation(
        mid: Stage, writer: Writer, stream: bool) -> None:
    """The client's max_tokens is the reply's: each continuation asks for what the requests
    before it left (their reported completion tokens, else the chunks they sent: one token a
    chunk, as llama.cpp and vLLM stream), and a reply that runs out ends with "length"."""
    writer.stories["Four."] = ["a ", CLIMB, " b ", SNEAK, " c ", PAY, " d ", ADD, " e"]
    messages = [SYSTEM, user("Four.")]
    _, meta, _, _ = ask(mid, "mid", messages, stream, max_tokens=10_000)
    bounds = [request["max_tokens"] for request in writer.requests]
    assert meta["resolve"]["stops"] == 4 and len(bounds) == 5
    assert bounds[0] == 10_000 and all(b > a for a, b in zip(bounds[1:], bounds, strict=False))
    assert all(request.get("max_completion_tokens") is None for request in writer.requests)

    writer.requests.clear()
    _, _, _, events = ask(mid, "mid", messages, stream, max_completion_tokens=6,
                             max_tokens=9)
    bounds = [request["max_tokens"] for request in writer.requests]
    assert bounds[0] == 9 and all(0 < b <= 6 for b in bounds[1:])  # the smaller bound holds
    assert [r["max_completion_tokens"] for r in writer.requests[1:]] == bounds[1:]
    if stream:
        assert events[-1]["choices"][0]["finish_reason"] == "length"
    assert len(writer.requests) < 5  # it ran out before the fourth stop
