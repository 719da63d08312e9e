"""The pipeline stage's cost per reply, for chats of 10, 1,000 and 10,000 turns (issue 12).

Prints, per chat length:
- ``prepare``: the stage's own work for one more reply with a warm snapshot cache, from the
  request's bytes, as the server does it (read the body, find the longest cached prefix, fold
  what is new, write the GM section), p50 in ms;
  goal: flat — 10,000 turns within 1.5x of 10 turns. Each new reply pays a penny: once the
  purse is empty (long before 1,000 turns) it is refused and the state stays the same object,
  so the GM section is remembered whole.
- ``changing``: the same, with new replies that hand a torch from Ada to Bram and back, so
  every reply makes a new state and only the lines of its changed stacks are written again.
- ``store``: then storing the new snapshots (with the changing replies: a new state's canonical
  JSON each time), which the server does while the model writes, off the reply's path.
- ``splice``: then making the body for the model (the client's bytes with the GM section
  spliced in: one copy of the body, what sending it on costs anyway), p50 in ms.
- ``added``: the proxy's added latency over calling the fake model directly with the same body
  (real HTTP on loopback, one client, keep-alive), p50 in ms; goal: under 5 ms at 1,000 turns.

Run from the repository root: .venv/bin/python benchmarks/stage.py
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
from replay.stage.app import GameFolder, StageConfig, build_app, load_game, prepare
from replay.stage.body import BodyReader

SIZES = (10, 1_000, 10_000)
ROUNDS = {10: 60, 1_000: 60, 10_000: 20}
REPLY = 'The innkeeper nods. [inventory: action="pay" amount="1 penny" who="Ada"] Rain falls.'
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
         "message": {"role": "assistant", "content": REPLY}}]})


def _model_app() -> Starlette:
    return Starlette(routes=[Route("/v1/chat/completions", _model_chat, methods=["POST"])])


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


def prepare_p50(folder: GameFolder, turns: int,
                replies: list[str]) -> tuple[float, float, float]:
    """The stage's work in process, warm: each round adds one more reply to the chat. Each
    request is timed from its bytes (as a client sends them: a new JSON text each time, so
    nothing is shared with the last request's objects unless the stage shares it)."""
    cache = SnapshotCache(MemoryStore(), deferred=True)  # as the server keeps it
    reader = BodyReader()
    messages = chat(turns)
    first = {"model": "m", "messages": [*messages, {"role": "user", "content": "go"}]}
    prepare(folder, cache, reader.read(json.dumps(first).encode())).content()
    cache.flush()
    prepared: list[float] = []
    spliced: list[float] = []
    stored: list[float] = []
    for round_ in range(ROUNDS[turns]):
        messages += [{"role": "user", "content": f"more {round_}"},
                     {"role": "assistant", "content": replies[round_ % len(replies)]}]
        raw = json.dumps({"model": "m",
                          "messages": [*messages, {"role": "user", "content": "go"}]}).encode()
        started = time.perf_counter()
        ready = prepare(folder, cache, reader.read(raw))
        prepared.append(time.perf_counter() - started)
        started = time.perf_counter()
        ready.content()
        spliced.append(time.perf_counter() - started)
        started = time.perf_counter()
        cache.flush()
        stored.append(time.perf_counter() - started)
    return p50(prepared), p50(spliced), p50(stored)


def measure(folder: GameFolder, game: Path, model_url: str,
            turns: int) -> tuple[float, float, float, float, float]:
    prepared, spliced, _ = prepare_p50(folder, turns, [REPLY])
    changing, _, stored = prepare_p50(folder, turns, SWAPS)
    # The proxy over HTTP against the model directly, same bodies, warm cache.
    stage_url, stage = serve(_stage_app, game, model_url + "/v1")
    direct: list[float] = []
    proxied: list[float] = []
    messages = chat(turns)
    # TCP_NODELAY on the measuring client too, or each call waits out a delayed ACK.
    nodelay = httpx.HTTPTransport(socket_options=[(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)])
    with httpx.Client(timeout=120, transport=nodelay) as client:
        client.post(f"{stage_url}/games/harrow/v1/chat/completions", json={"messages": messages})
        for round_ in range(ROUNDS[turns]):
            messages += [{"role": "user", "content": f"more {round_}"},
                         {"role": "assistant", "content": REPLY}]
            body = {"model": "m", "messages": [*messages, {"role": "user", "content": "go"}]}
            started = time.perf_counter()
            client.post(f"{model_url}/v1/chat/completions", json=body).raise_for_status()
            direct.append(time.perf_counter() - started)
            started = time.perf_counter()
            client.post(f"{stage_url}/games/harrow/v1/chat/completions",
                        json=body).raise_for_status()
            proxied.append(time.perf_counter() - started)
    stage.terminate()
    stage.join()
    added = [p - d for p, d in zip(proxied, direct, strict=True)]
    return prepared, changing, stored, spliced, p50(added)


def main() -> None:
    root = Path(__file__).resolve().parent.parent
    game = _game_folder(root)
    folder = load_game(game)
    model_url, model = serve(_model_app)
    print(f"{'turns':>7}  {'prepare p50 ms':>14}  {'vs 10 turns':>11}  "
          f"{'changing p50 ms':>15}  {'vs 10 turns':>11}  {'store p50 ms':>12}  "
          f"{'splice p50 ms':>13}  {'added p50 ms':>12}")
    base: tuple[float, float] | None = None
    for turns in SIZES:
        prepared, changing, stored, spliced, added = measure(folder, game, model_url, turns)
        base = base or (prepared, changing)
        print(f"{turns:>7}  {prepared:>14.2f}  {prepared / base[0]:>10.2f}x  "
              f"{changing:>15.2f}  {changing / base[1]:>10.2f}x  {stored:>12.2f}  "
              f"{spliced:>13.2f}  {added:>12.2f}")
    model.terminate()
    model.join()


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
