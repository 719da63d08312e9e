"""The pipeline stage's cost per reply, for chats of 10, 1,000 and 10,000 turns (issue 12).

Prints, per chat length:
- ``prepare``: the stage's own work for one more reply with a warm snapshot cache, from the
  request's bytes, as the server does it (read the body, find the longest cached prefix, fold
  what is new, write the GM section), p50 in ms; goal: flat — 10,000 turns within 1.5x of 10
  turns. Each new reply rolls a skill check: the same work at every length (the state stays
  the same object; the section's last answers change).
- ``changing``: the same, with new replies that hand a torch from Ada to Bram and back, so
  every reply makes a new state and only the lines of its changed stacks are written again.
  The chat's earlier replies found a torch every fourth turn, so at 10,000 turns Ada carries
  hundreds of torch stacks, which each hand-over looks through: this column grows with what
  the party carries, which grows with the chat here.
- ``store``: then storing the new snapshots (with the changing replies: a new state's canonical
  JSON each time), which the server does while the model writes, off the reply's path.
- ``splice``: then making the body for the model: the client's bytes with the GM section
  spliced in, as the pieces the stage sends (views of the client's bytes around the section:
  nothing is copied), p50 in ms.
- a last line: the 10-turn reply again, with a body the size of the 10,000-turn one read
  beside it: made anew before each round, as each round of the 10,000-turn chat makes its
  body (1.6 MB written through the caches, which leaves the next work running on cold ones:
  that alone doubled the 10-turn fold), and compared with the last one inside the timing (the
  reader's one ``memcmp`` of a body against the last): the part of the 10,000-turn figure that
  is reading the body's bytes, which grows with the chat's size in bytes however little the
  stage does with them.
- ``added``: the proxy's added latency over calling the fake model directly with the same body
  (real HTTP on loopback, one client, keep-alive), p50 in ms; goal: under 5 ms at 1,000 turns.
  Each reply goes on in the chat as the stage answered it, as a chat client keeps it, so the
  stage takes the state after it from what it saved when it answered it.
- ``bare``: the same for a bare pass-through proxy (Starlette + httpx forwarding the bytes, no
  parsing), and ``vs bare``: the stage's added latency over the bare proxy's; goal (issue 22):
  at most 1.3x at every length.
- ``stream``: answering a live reply of 1, 10 and 40 tags fed in chunks of 4 characters, as a
  model streams it (issue 23: each tag answered once, as it completes), p50 ms per reply, and
  ``vs whole``: that over answering the same reply in one piece.

- ``--mid-reply`` (issue 27) prints only this: a streamed reply of 1 and 4 tags through the
  stage with ``"resolve": "after"`` and with ``"resolve": "mid-reply"`` (each tag stopped at,
  answered, and the reply continued by a fake model that continues an assistant prefix), p50
  of the time to the first token and of the whole reply, and the added latency over the same
  reply streamed from the model directly. The fake model writes at no speed limit, so the
  figures are the stage's own cost plus one loopback request per stop; a real model also
  reads the prefix again per continuation (fast with a prompt cache) and that is not here.

The three chats are measured in one process, a round of each in turn (10, 1,000, 10,000 turns,
then again), so that each length meets the same heap and the same moments of a shared
machine: measured one length after the other, the figures moved by a third from run to run
with what the process had allocated before and what the neighbours did.

Run from the repository root: .venv/bin/python benchmarks/stage.py [--mid-reply]
"""

from __future__ import annotations

import json
import multiprocessing
import socket
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from replay.cache import MemoryStore, SnapshotCache
from replay.files import bundled
from replay.stage.answering import ReplyStream
from replay.stage.app import GameFolder, StageConfig, build_app, load_game, prepare
from replay.stage.body import BodyReader

SIZES = (10, 1_000, 10_000)
ROUNDS = 60  # replies added to each chat, in turn
HTTP_ROUNDS = {10: 100, 1_000: 100, 10_000: 40}  # a p50 of this many, on a noisy machine
CHECK = ('Ada listens at the door. [skill_check: skill="sneak" dc="10" who="Ada"] '
         'Rain falls.')
SWAPS = ['Ada hands Bram a torch. [inventory: action="give" item="Torch" who="Ada" '
         'to="Bram the Quiet"]',
         'Bram hands it back. [inventory: action="give" item="Torch" who="Bram the Quiet" '
         'to="Ada"]']
TAGGED = [
    'You find a torch. [inventory: action="add" item="Torch" who="Ada"]',
    "The road winds on past the old mill while Bram watches the treeline for movement.",
    'Ada pays. [inventory: action="pay" amount="1 penny" who="Ada"]',
    "Nothing stirs; the wind carries rain over the moor.",
]


async def _model_chat(request: Request) -> Response:
    await request.body()
    return JSONResponse({"id": "x", "object": "chat.completion", "choices": [
        {"index": 0, "finish_reason": "stop",
         "message": {"role": "assistant", "content": CHECK}}]})


def _model_app() -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", _model_chat, methods=["POST"])])


def _bare_app(upstream: str) -> Starlette:
    """The baseline: a proxy that forwards the client's bytes and the model's, nothing more."""
    client = httpx.AsyncClient(timeout=120, transport=httpx.AsyncHTTPTransport(
        socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)]))

    async def forward(request: Request) -> Response:
        reply = await client.post(f"{upstream}/chat/completions", content=await request.body(),
                                  headers={"content-type": "application/json"})
        return Response(reply.content, status_code=reply.status_code,
                        media_type="application/json")

    return Starlette(routes=[Route("/v1/chat/completions", forward, methods=["POST"])])


def _stage_app(game: Path, upstream: str) -> Starlette:
    return build_app(StageConfig(upstream=upstream, games={"harrow": load_game(game)},
                                 store=MemoryStore()))


def _server(ready: Any, make: Callable[..., Any], args: tuple[Any, ...]) -> None:
    # IPPROTO_TCP, not the default 0: asyncio only turns Nagle off (TCP_NODELAY) on accepted
    # sockets whose proto says TCP, and with Nagle on a response written as headers, then body
    # waits for the client's delayed ACK (~40 ms per call on Linux).
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.bind(("127.0.0.1", 0))
    sock.listen(128)
    ready.put(sock.getsockname()[1])
    uvicorn.Server(uvicorn.Config(make(*args), log_level="warning")).run(sockets=[sock])


def serve(make: Callable[..., Any], *args: Any) -> tuple[str, Any]:
    """``make(*args)``'s app served on loopback by a process of its own, as the client, the
    stage and the model are in use (in one process each would take the GIL from the others:
    the model's reading of a 1.6 MB body counted as the stage's latency): (URL, process)."""
    context = multiprocessing.get_context("spawn")
    ready = context.Queue()
    process = context.Process(target=_server, args=(ready, make, args), daemon=True)
    process.start()
    return f"http://127.0.0.1:{ready.get(timeout=120)}", process


def chat(turns: int) -> list[dict[str, Any]]:
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are the GM."}]
    for index in range(turns):
        messages.append({"role": "user", "content": f"Turn {index}: we walk on."})
        messages.append({"role": "assistant", "content": TAGGED[index % len(TAGGED)]})
    return messages


def p50(values: list[float]) -> float:
    return statistics.median(values) * 1000


class ChatRounds:
    """One chat of ``turns`` turns served warm, one more reply per round, timed as the stage
    does its work: from the request's bytes (a new JSON text each time, as a client sends it,
    so nothing is shared with the last request's objects unless the stage shares it)."""

    def __init__(self, folder: GameFolder, turns: int, replies: list[str],
                 read_first: list[dict[str, Any]] | None = None) -> None:
        self.folder, self.turns, self.replies = folder, turns, replies
        # messages of a body made before each round and compared with the last inside it
        self.read_first = read_first
        self.last_first = b""
        self.cache = SnapshotCache(MemoryStore(), deferred=True)  # as the server keeps it
        self.reader = BodyReader()
        self.messages = chat(turns)
        first = {"model": "m", "messages": [*self.messages, {"role": "user", "content": "go"}]}
        prepare(folder, self.cache, self.reader.read(json.dumps(first).encode())).content()
        self.cache.flush()
        self.prepared: list[float] = []
        self.spliced: list[float] = []
        self.stored: list[float] = []

    def round(self, number: int) -> None:
        self.messages += [{"role": "user", "content": f"more {number}"},
                          {"role": "assistant",
                           "content": self.replies[number % len(self.replies)]}]
        raw = json.dumps({"model": "m",
                          "messages": [*self.messages, {"role": "user", "content": "go"}]}).encode()
        first = b""
        if self.read_first is not None:
            first = json.dumps({"model": "m", "messages": self.read_first}).encode()
        started = time.perf_counter()
        if self.read_first is not None:
            if self.last_first and first != self.last_first:
                raise RuntimeError("the bodies to compare differ")  # not an assert: -O drops it
            self.last_first = first
        ready = prepare(self.folder, self.cache, self.reader.read(raw))
        self.prepared.append(time.perf_counter() - started)
        started = time.perf_counter()
        ready.pieces()
        self.spliced.append(time.perf_counter() - started)
        started = time.perf_counter()
        self.cache.flush()
        self.stored.append(time.perf_counter() - started)


def interleaved(folder: GameFolder, replies: list[str],
                read_first: list[dict[str, Any]] | None = None) -> dict[int, ChatRounds]:
    """Each chat length's rounds, taken in turn: 10, 1,000, 10,000 turns, then again.
    ``read_first``: the 10-turn chat reads a body of these messages beside its own."""
    chats = {turns: ChatRounds(folder, turns, replies, read_first if turns == SIZES[0] else None)
             for turns in SIZES}
    for number in range(ROUNDS):
        for rounds in chats.values():
            rounds.round(number)
    return chats


def added_latency(game: Path, model_url: str, turns: int) -> tuple[float, float]:
    """The stage and the bare proxy over HTTP against the model directly, same bodies, warm
    cache, one call of each in turn: (stage's added p50, bare proxy's added p50) in ms."""
    stage_url, stage = serve(_stage_app, game, model_url + "/v1")
    bare_url, bare = serve(_bare_app, model_url + "/v1")
    direct: list[float] = []
    proxied: list[float] = []
    passed: list[float] = []
    messages = chat(turns)
    # TCP_NODELAY on the measuring client too, or each call waits out a delayed ACK.
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(timeout=120, transport=nodelay) as client:
        client.post(f"{bare_url}/v1/chat/completions", json={"messages": messages})
        # As a chat client does, each reply goes on in the chat as the stage returned it
        # (answered); the three are sent the same bytes.
        messages.append({"role": "user", "content": "more"})
        first = client.post(f"{stage_url}/games/harrow/v1/chat/completions",
                            json={"messages": messages})
        reply = first.json()["choices"][0]["message"]["content"]
        for round_ in range(HTTP_ROUNDS[turns]):
            messages += [{"role": "assistant", "content": reply},
                         {"role": "user", "content": f"more {round_}"}]
            body = json.dumps({"model": "m", "messages": messages}).encode()
            headers = {"content-type": "application/json"}
            for url, times in ((f"{model_url}/v1/chat/completions", direct),
                               (f"{stage_url}/games/harrow/v1/chat/completions", proxied),
                               (f"{bare_url}/v1/chat/completions", passed)):
                started = time.perf_counter()
                answer = client.post(url, content=body, headers=headers)
                times.append(time.perf_counter() - started)
                answer.raise_for_status()
                if times is proxied:
                    reply = answer.json()["choices"][0]["message"]["content"]
    for process in (stage, bare):
        process.terminate()
        process.join()
    return (p50([p - d for p, d in zip(proxied, direct, strict=True)]),
            p50([p - d for p, d in zip(passed, direct, strict=True)]))


STREAM_TAGS = (1, 10, 40)
STREAM_CHUNK = 4  # characters a streamed chunk holds
STREAM_ROUNDS = 30


def live_reply(tags: int) -> str:
    """A reply of ``tags`` tags between sentences of prose, as a model writes one."""
    pieces = ["Ada walks into the market square."]
    for index in range(tags):
        pieces.append(TAGGED[0] if index % 2 else CHECK)
    return " ".join(pieces)


def streamed(folder: GameFolder) -> dict[int, tuple[float, float]]:
    """Per reply size: (p50 ms answering it as it streams, p50 ms answering it whole)."""
    figures: dict[int, tuple[float, float]] = {}
    for tags in STREAM_TAGS:
        text = live_reply(tags)
        chunked: list[float] = []
        whole: list[float] = []
        for _ in range(STREAM_ROUNDS):
            started = time.perf_counter()
            stream = ReplyStream(folder.game, folder.start, 0)
            for at in range(0, len(text), STREAM_CHUNK):
                stream.feed(text[at:at + STREAM_CHUNK])
            stream.finish()
            chunked.append(time.perf_counter() - started)
            started = time.perf_counter()
            stream = ReplyStream(folder.game, folder.start, 0)
            stream.feed(text)
            stream.finish()
            whole.append(time.perf_counter() - started)
        figures[tags] = (p50(chunked), p50(whole))
    return figures


MID_TAGS = (1, 4)
MID_ROUNDS = 30
MID_PROSE = " The rain keeps on and the road bends toward the ford; Bram says nothing."


def mid_story(tags: int) -> str:
    """A reply of ``tags`` skill checks, each followed by a sentence of narration."""
    return "Ada walks into the square." + "".join(
        f' [skill_check: skill="sneak" dc="{8 + i}" who="Ada"]{MID_PROSE}' for i in range(tags))


async def _continuing_chat(request: Request) -> Response:
    """A model that continues the final assistant message: the story after the tags it has."""
    from starlette.responses import StreamingResponse

    import tagparse

    body = json.loads(await request.body())
    messages = body["messages"]
    tags = int(messages[-2 if messages[-1]["role"] == "assistant" else -1]["content"])
    story = mid_story(tags)
    prefix = messages[-1]["content"] if messages[-1]["role"] == "assistant" else ""
    done = len(tagparse.scan(prefix).tags)
    at = tagparse.scan(story).tags[done - 1].end if done else 0
    text = story[at:]

    async def events() -> Any:
        for start in range(0, len(text), STREAM_CHUNK):
            if await request.is_disconnected():
                return  # the stage stopped the reply at a tag
            piece = {"choices": [{"index": 0, "delta": {"content": text[start:start + 4]},
                                  "finish_reason": None}]}
            yield f"data: {json.dumps(piece)}\n\n".encode()
        yield b'data: {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}\n\n'
        yield b"data: [DONE]\n\n"

    return StreamingResponse(events(), media_type="text/event-stream")


def _continuing_app() -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", _continuing_chat, methods=["POST"])])


def _stages_app(root: Path, upstream: str) -> Starlette:
    from replay.stage.app import load_games

    return build_app(StageConfig(upstream=upstream, games=load_games(root), store=MemoryStore()))


def _timed_stream(client: httpx.Client, url: str, tags: int) -> tuple[float, float]:
    """(seconds to the first content, seconds to [DONE]) of one streamed reply."""
    started = time.perf_counter()
    first = None
    body = {"model": "m", "stream": True, "messages": [{"role": "user", "content": str(tags)}]}
    with client.stream("POST", url, json=body) as response:
        for line in response.iter_lines():
            if first is None and '"content": "' in line and '"content": ""' not in line:
                first = time.perf_counter() - started
    return first or 0.0, time.perf_counter() - started


def mid_reply() -> None:
    """The --mid-reply figures (issue 27)."""
    import shutil
    import tempfile

    root = Path(tempfile.mkdtemp(prefix="gmtags-bench-mid-"))
    for name, options in (("after", {}), ("mid", {"resolve": "mid-reply"})):
        (root / name).mkdir()
        shutil.copy(bundled("rulesets/harrow.json"), root / name / "ruleset.json")
        shutil.copy(bundled("parties/harrow.json"), root / name / "party.json")
        (root / name / "options.json").write_text(json.dumps(options))
    model_url, model = serve(_continuing_app)
    stage_url, stage = serve(_stages_app, root, model_url + "/v1")
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    print(f"{'tags':>4}  {'resolve':>9}  {'first token p50 ms':>18}  {'reply p50 ms':>12}  "
          f"{'added p50 ms':>12}  {'direct reply p50 ms':>19}")
    with httpx.Client(timeout=120, transport=nodelay) as client:
        for tags in MID_TAGS:
            urls = {"direct": f"{model_url}/v1/chat/completions",
                    "after": f"{stage_url}/games/after/v1/chat/completions",
                    "mid-reply": f"{stage_url}/games/mid/v1/chat/completions"}
            times: dict[str, list[tuple[float, float]]] = {name: [] for name in urls}
            for url in urls.values():
                _timed_stream(client, url, tags)  # warm: connections, caches
            for _ in range(MID_ROUNDS):
                for name, url in urls.items():
                    times[name].append(_timed_stream(client, url, tags))
            direct = times["direct"]
            for name in ("after", "mid-reply"):
                added = [t[1] - d[1] for t, d in zip(times[name], direct, strict=True)]
                print(f"{tags:>4}  {name:>9}  {p50([t[0] for t in times[name]]):>18.2f}  "
                      f"{p50([t[1] for t in times[name]]):>12.2f}  "
                      f"{p50(added):>12.2f}  {p50([d[1] for d in direct]):>19.2f}")
    for process in (stage, model):
        process.terminate()
        process.join()


def main() -> None:
    if "--mid-reply" in sys.argv[1:]:
        mid_reply()
        return
    root = Path(__file__).resolve().parent.parent
    game = _game_folder(root)
    folder = load_game(game)
    # Over HTTP first, while this process (the client) holds nothing else: its collector
    # walking the chats measured below made the proxied calls look slower.
    model_url, model = serve(_model_app)
    added = {turns: added_latency(game, model_url, turns) for turns in SIZES}
    model.terminate()
    model.join()
    steady = interleaved(folder, [CHECK])
    changing = interleaved(folder, SWAPS)
    # The 10-turn reply again, beside a body the size of a 10,000-turn one (made anew each
    # round, compared with the last: what the stage's reader does with such a body): how much
    # of the 10,000-turn figure is reading the body's bytes rather than work that grows with
    # the chat.
    read_first = interleaved(folder, [CHECK], chat(SIZES[-1]))
    size = len(read_first[SIZES[0]].last_first)  # the body it read beside each round
    live = streamed(folder)
    print(f"{'turns':>7}  {'prepare p50 ms':>14}  {'vs 10 turns':>11}  "
          f"{'changing p50 ms':>15}  {'vs 10 turns':>11}  {'store p50 ms':>12}  "
          f"{'splice p50 ms':>13}  {'added p50 ms':>12}  {'bare p50 ms':>11}  {'vs bare':>7}")
    base = (p50(steady[SIZES[0]].prepared), p50(changing[SIZES[0]].prepared))
    for turns in SIZES:
        prepared, changed = p50(steady[turns].prepared), p50(changing[turns].prepared)
        print(f"{turns:>7}  {prepared:>14.2f}  {prepared / base[0]:>10.2f}x  "
              f"{changed:>15.2f}  {changed / base[1]:>10.2f}x  "
              f"{p50(changing[turns].stored):>12.2f}  {p50(steady[turns].spliced):>13.2f}  "
              f"{added[turns][0]:>12.2f}  {added[turns][1]:>11.2f}  "
              f"{added[turns][0] / added[turns][1]:>6.2f}x")
    alike = p50(read_first[SIZES[0]].prepared)
    print(f"10 turns beside reading {size / 1e6:.1f} MB as the reader does for a "
          f"{SIZES[-1]:,}-turn body: prepare p50 {alike:.2f} ms; {SIZES[-1]:,} turns is "
          f"{p50(read_first[SIZES[-1]].prepared) / alike:.2f}x of that")
    print(f"{'tags':>7}  {'stream p50 ms':>13}  {'whole p50 ms':>12}  {'vs whole':>8}")
    for tags, (chunked, whole) in live.items():
        print(f"{tags:>7}  {chunked:>13.2f}  {whole:>12.2f}  {chunked / whole:>7.2f}x")


def _game_folder(root: Path) -> Path:
    """A game folder built from the bundled Harrow Vale ruleset and party."""
    import shutil
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="gmtags-bench-")) / "harrow"
    folder.mkdir()
    shutil.copy(bundled("rulesets/harrow.json"), folder / "ruleset.json")
    shutil.copy(bundled("parties/harrow.json"), folder / "party.json")
    return folder


if __name__ == "__main__":
    main()
