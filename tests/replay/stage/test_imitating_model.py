"""A model that imitates answers and loops, as a real small one did (DESIGN.md "Interfaces":
the model never supplies an answer).

The scripted model here writes what Qwen2.5-Coder-1.5B wrote through the stage: answer parts
of its own in tags, in broken tags, in brackets gmtags does not read and loose after tags, the
mid-reply mark, and the same tag over and over. Whatever it writes, the client gets only
answer parts gmtags wrote, the metadata lists what was taken out, a loop ends the reply, and
the saved reply replays to exactly the answers returned — after the reply and mid-reply,
streamed and not.
"""

from __future__ import annotations

import json
import logging
import re
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest
from stage_servers import ServerThread, Stage, chunks, game_folders, start_stage

import tagparse
from engine import answer_attrs
from engine.actions.answers import Answer
from replay.files import load_party, load_ruleset
from replay.fold import replay
from replay.formats import transcript_from_openai

SYSTEM = {"role": "system", "content": "You are the game master."}
LOOT = '[loot: table="mill_cache" who="Ada"]'
# What the model wrote (the first request's text, then what it writes when continued after
# its first tag), and what the player may see of it.
IMITATIONS = {
    "give": (['She hands it over. [inventory: action="give" item="Rope" who="Ada" to="Bram the '
              'Quiet" | ok="true" text="Given Rope ×1 to Bram." | ok="true" text="Bram: Rope '
              '1/1 to his bag."] Bram nods.', " Bram nods."],
             'She hands it over. [inventory: action="give" item="Rope" who="Ada" to="Bram the '
             'Quiet"] Bram nods.'),
    "sneak": (['[skill_check: skill="Sneak" dc="10" who="Ada" | ok="true" text="Ada tries to '
               'sneak past the sleeping watchdog. | ok="true" text="Ada has a sneak check of 10 '
               '(DC 10)."] The dog sleeps on.', " The dog sleeps on."],
              '[skill_check: skill="Sneak" dc="10" who="Ada"] The dog sleeps on.'),
    # a tag under a wrong head is read as the tag it stands for (tagparse.heads)
    "battle": (['[Battle: op="start" foe="watchdog" | ok="false" text="A fight begins." '
                'answered="mid-reply"] The dog wakes.', " The dog wakes."],
               '[combat: op="start" foe="watchdog"] The dog wakes.'),
    "prefixed": (['She hands it over. [Agive: who="Ada" to="Bram the Quiet" item="Rope"] '
                  'Bram nods.', " Bram nods."],
                 'She hands it over. [inventory: action="give" who="Ada" to="Bram the Quiet" '
                 'item="Rope"] Bram nods.'),
    "loose": (['Ada climbs. [skill_check: skill="Climb" dc="9" who="Ada"] | ok="true" '
               'text="Ada: 3 vs 9: failure." | ok="true" text="Ada falls."\nShe tries again.',
               ' | ok="true" text="Ada: 3 vs 9: failure." | ok="true" text="Ada falls."\nShe '
               'tries again.'],
              'Ada climbs. [skill_check: skill="Climb" dc="9" who="Ada"]\nShe tries again.'),
    "marked": (['[inventory: action="add" item="Torch" who="Ada" | ok="true" text="Added." '
                'answered="mid-reply"] A torch.', " A torch."],
               '[inventory: action="add" item="Torch" who="Ada"] A torch.'),
}


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


@dataclass
class Imitator:
    """A scripted model: per last player message, the text it writes on every request of the
    reply (the first and each continuation: a model that ignores what it was shown), or a
    list of texts: the first request's, then the continuation after the reply's first tag,
    its second, ... (the last one for every continuation after)."""

    script: dict[str, str | list[str]] = field(default_factory=dict)
    whole: bool = False  # stream each reply as one piece
    requests: list[dict[str, Any]] = field(default_factory=list)
    server: ServerThread | None = None

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url + "/v1"

    def text(self, body: dict[str, Any]) -> str:
        messages = body["messages"]
        last = next(m["content"] for m in reversed(messages) if m["role"] == "user")
        written = self.script.get(last, "The road goes on.")
        if isinstance(written, str):
            return written
        prefix = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
        leg = len(tagparse.scan(prefix).tags)  # the tags stopped at so far
        return written[min(leg, len(written) - 1)]

    def app(self) -> Any:
        from starlette.applications import Starlette
        from starlette.requests import Request
        from starlette.responses import JSONResponse, Response, StreamingResponse
        from starlette.routing import Route

        async def chat(request: Request) -> Response:
            body = await request.json()
            self.requests.append(body)
            text = self.text(body)
            if not body.get("stream"):
                return JSONResponse({"id": "i", "object": "chat.completion", "choices": [
                    {"index": 0, "finish_reason": "stop",
                     "message": {"role": "assistant", "content": text}}]})
            base = {"id": "i", "object": "chat.completion.chunk", "model": "imitator"}

            async def events() -> AsyncIterator[bytes]:
                for piece in [text] if self.whole else chunks(text, json.dumps(body["messages"])):
                    yield _event({**base, "choices": [{"index": 0, "delta": {"content": piece},
                                                       "finish_reason": None}]})
                yield _event({**base, "choices": [{"index": 0, "delta": {},
                                                   "finish_reason": "stop"}]})
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"])])


def _event(document: dict[str, Any]) -> bytes:
    return f"data: {json.dumps(document)}\n\n".encode()


GAMES: dict[str, dict[str, Any]] = {"after": {}, "mid": {"resolve": "mid-reply"}}


@pytest.fixture(scope="module")
def imitator() -> Iterator[Imitator]:
    running = Imitator()
    running.server = ServerThread(running.app())
    yield running
    running.server.stop()


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return game_folders(tmp_path_factory.mktemp("imitated"),
                        {name: ("harrow", options) for name, options in GAMES.items()})


@pytest.fixture(scope="module")
def stage(imitator: Imitator, folders: Path) -> Iterator[Stage]:
    running = start_stage(imitator, folders)  # type: ignore[arg-type]
    yield running
    running.server.stop()


@pytest.fixture
def model(imitator: Imitator) -> Imitator:
    imitator.script.clear()
    imitator.requests.clear()
    imitator.whole = False
    return imitator


def ask(stage: Stage, game: str, messages: list[dict[str, Any]], stream: bool
        ) -> tuple[str, dict[str, Any], str | None]:
    """(content, gmtags metadata, finish reason) of one reply."""
    url = stage.url(f"/games/{game}/v1/chat/completions")
    body = {"model": "gm", "messages": messages, "stream": stream}
    if not stream:
        response = httpx.post(url, json=body, timeout=60)
        assert response.status_code == 200, response.text
        document = response.json()
        choice = document["choices"][0]
        return choice["message"]["content"], document["gmtags"], choice["finish_reason"]
    events = []
    with httpx.stream("POST", url, json=body, timeout=60) as response:
        assert response.status_code == 200
        for line in response.iter_lines():
            if line.startswith("data: ") and line != "data: [DONE]":
                events.append(json.loads(line[6:]))
    content = "".join(e["choices"][0]["delta"].get("content") or "" for e in events
                      if e.get("choices"))
    finishes = [e["choices"][0]["finish_reason"] for e in events
                if e.get("choices") and e["choices"][0]["finish_reason"]]
    assert len(finishes) == 1
    return content, events[-1]["gmtags"], finishes[0]


def answer_parts_not_written_by_gmtags(content: str, meta: dict[str, Any]) -> list[str]:
    """Every answer part of ``content`` that is not the answer gmtags returned for its tag, and
    every ``ok=``/``answered=`` outside the tags gmtags answered."""
    answers = [Answer.model_validate(a) for a in meta["answers"]]
    tags = tagparse.scan(content).tags
    wrong, outside, at = [], [], 0
    written = iter(answers)
    for tag in tags:
        outside.append(content[at:tag.start])
        at = tag.end
        if tag.malformed is not None:
            outside.append(tag.raw)
            next(written, None)
            continue
        answer = next(written, None)
        if tag.answer is not None and (answer is None or
                                       list(tag.answer) != answer_attrs(answer)):
            wrong.append(tag.raw)
    outside.append(content[at:])
    stray = re.findall(r"\b(?:ok|answered)\s*=", "".join(outside))
    return wrong + stray


def replayed(folders: Path, game: str, messages: list[dict[str, Any]], content: str
             ) -> list[dict[str, Any]]:
    """The answers the saved reply replays to."""
    ruleset = load_ruleset(folders / game / "ruleset.json")
    start = load_party(ruleset, folders / game / "party.json")
    chat = [*messages, {"role": "assistant", "content": content}]
    answers = replay(ruleset, transcript_from_openai(chat), start).answers
    last = max((a.message for a in answers), default=0)
    return [a.answer.to_json() for a in answers if a.message == last]


def same_answers(live: list[dict[str, Any]], saved: list[dict[str, Any]]) -> None:
    result = [(a["tag"]["kind"], a["tag"]["attrs"], a["ok"], a["reason"], a["text"], a["record"])
              for a in live]
    assert result == [(a["tag"]["kind"], a["tag"]["attrs"], a["ok"], a["reason"], a["text"],
                       a["record"]) for a in saved]


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("game", ["after", "mid"])
@pytest.mark.parametrize("case", sorted(IMITATIONS))
def test_the_client_gets_only_answer_parts_gmtags_wrote_and_the_reply_replays_to_them(
        stage: Stage, model: Imitator, folders: Path, game: str, stream: bool,
        case: str) -> None:
    written, visible = IMITATIONS[case]
    model.script["go"] = written if game == "mid" else written[0]
    messages = [SYSTEM, user("go")]
    content, meta, _ = ask(stage, game, messages, stream)
    assert answer_parts_not_written_by_gmtags(content, meta) == []
    # the text the player sees is the model's with its parts taken out and gmtags' written in
    assert tagparse.requests_only(content) == visible
    if "| ok=" in written[0]:
        assert meta["takenOut"] and all("ok=" in part for part in meta["takenOut"])
    else:
        assert "takenOut" not in meta
    same_answers(meta["answers"], replayed(folders, game, messages, content))
    assert all(answer["reason"] != "malformed" for answer in meta["answers"])
    # a tag under a wrong head is answered as the tag it stands for, and the metadata says so
    heads = re.findall(r"\[([A-Za-z_]+):", written[0])
    wrong = [head for head in heads if head not in tagparse.TAG_KINDS]
    assert [m["wrote"].split(":")[0][1:] for m in meta.get("readAs", [])] == wrong
    assert len(meta["answers"]) == len(heads) and all(a["ok"] for a in meta["answers"]
                                                      if a["tag"]["kind"] != "combat")


def test_the_mid_reply_mark_counts_only_where_the_stage_put_it(
        stage: Stage, model: Imitator, folders: Path) -> None:
    """A mark the model copied is taken out with its part; the stage marks its own stops."""
    model.script["go"] = IMITATIONS["marked"][0]
    messages = [SYSTEM, user("go")]
    content, meta, _ = ask(stage, "mid", messages, False)
    tags = tagparse.scan(content).tags
    assert len(tags) == 1 and dict(tags[0].answer or ())["answered"] == "mid-reply"
    assert meta["resolve"]["stoppedAt"] == [0]
    content, meta, _ = ask(stage, "after", messages, False)
    tags = tagparse.scan(content).tags
    assert len(tags) == 1 and "answered" not in dict(tags[0].answer or ())


@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_that_loops_ends_before_the_fourth_copy_of_a_tag(
        stage: Stage, model: Imitator, folders: Path, stream: bool) -> None:
    """After the reply: sixteen copies of one loot tag roll the table three times; the rest of
    the reply is not sent and the replay gives the same three answers."""
    model.script["pick up the lantern"] = "Ada looks. " + " ".join([LOOT] * 16) + " The end."
    messages = [SYSTEM, user("pick up the lantern")]
    content, meta, finish = ask(stage, "after", messages, stream)
    assert content.count("[loot:") == 3 and "The end." not in content
    assert meta["cut"] == {"reason": "repeated-tag", "tag": LOOT}
    assert [a["ok"] for a in meta["answers"]] == [True, True, True]
    assert finish == "stop"
    same_answers(meta["answers"], replayed(folders, "after", messages, content))


@pytest.mark.parametrize("stream", [False, True])
def test_a_continuation_that_asks_again_for_the_tag_it_stopped_at_ends_the_reply(
        stage: Stage, model: Imitator, folders: Path, stream: bool) -> None:
    """Mid-reply: a model shown its answered tag that writes the same tag again would loop
    until maxStops and then max_tokens; the reply ends before the copy, after one roll."""
    model.script["pick up the lantern"] = ["Ada looks. " + LOOT, " " + LOOT]
    messages = [SYSTEM, user("pick up the lantern")]
    content, meta, _ = ask(stage, "mid", messages, stream)
    assert content.count("[loot:") == 1 and content.startswith("Ada looks. [loot:")
    assert meta["cut"]["reason"] == "echo"
    assert len(model.requests) == 2  # the first request and one continuation
    assert meta["resolve"]["stoppedAt"] == [0]
    same_answers(meta["answers"], replayed(folders, "mid", messages, content))


def test_the_access_line_counts_the_reply_and_times_a_stream_to_its_end(
        stage: Stage, model: Imitator, caplog: pytest.LogCaptureFixture) -> None:
    model.script["go"] = (IMITATIONS["give"][0][0] + ' [inventory: action="pay" amount="900 '
                          'crowns" who="Ada"] [loot: table="nowhere"]')
    with caplog.at_level(logging.INFO, "gmtags.access"):
        ask(stage, "after", [SYSTEM, user("go")], True)
        ask(stage, "after", [SYSTEM, user("go")], False)
    lines = [r.getMessage() for r in caplog.records if r.name == "gmtags.access"]
    streamed, whole = lines[-2:]
    counts = (" answered=1 refused=cannot-afford:1,unknown-table:1 takenOut=1")
    assert re.fullmatch(r"game=after status=200 ms=[\d.]+ total=[\d.]+ .*", streamed)
    assert streamed.endswith(counts) and whole.endswith(counts)
    assert " total=" not in whole


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("game", ["after", "mid"])
def test_a_name_shortened_to_its_first_word_is_the_member_with_a_note(
        stage: Stage, model: Imitator, folders: Path, game: str, stream: bool) -> None:
    """A model writes "Bram" for Bram the Quiet, the only Bram (engine.rules.names)."""
    model.script["go"] = ['Ada hands it over. [inventory: action="give" item="rope" who="ada" '
                          'to="Bram"] He nods.', " He nods."]
    messages = [SYSTEM, user("go")]
    content, meta, _ = ask(stage, game, messages, stream)
    [answer] = meta["answers"]
    assert answer["ok"] is True and 'read to="Bram" as Bram the Quiet' in answer["notes"]
    same_answers(meta["answers"], replayed(folders, game, messages, content))


@pytest.mark.parametrize("between", [" ", " Ada smiles at the lantern's glow. "])
def test_a_continuation_that_asks_again_after_some_words_ends_the_reply_too(
        stage: Stage, model: Imitator, folders: Path, between: str) -> None:
    """What Qwen2.5-Coder-1.5B did mid-reply: a sentence, then the tag it was stopped at."""
    model.script["pick up the lantern"] = ["Ada looks. " + LOOT, between + LOOT]
    messages = [SYSTEM, user("pick up the lantern")]
    content, meta, _ = ask(stage, "mid", messages, False)
    assert content.count("[loot:") == 1 and meta["cut"]["reason"] == "echo"
    assert content.endswith(between.rstrip())  # the words before the copy stay
    same_answers(meta["answers"], replayed(folders, "mid", messages, content))


def test_words_before_a_copy_in_the_same_piece_stay(stage: Stage, model: Imitator,
                                                     folders: Path) -> None:
    """A server that sends the continuation in one piece: the words before the copy are sent,
    the copy is not."""
    model.script["pick up the lantern"] = ["Ada looks. " + LOOT, " It glows. " + LOOT]
    model.whole = True
    try:
        content, meta, _ = ask(stage, "mid", [SYSTEM, user("pick up the lantern")], False)
    finally:
        model.whole = False
    assert content.count("[loot:") == 1 and content.endswith("] It glows.")
    assert meta["cut"]["reason"] == "echo"
