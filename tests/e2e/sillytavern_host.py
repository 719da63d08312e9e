"""The servers of the panel's browser tests: a real ``gmtags serve`` (scripted upstream) and a
stand-in SillyTavern host on another loopback port, so the page's requests to gmtags are
cross-origin and CORS is real (issue 41).

The host serves its page (``st_host/host.html`` and ``host.js``), the extension as ``gmtags
sillytavern install`` put it into a SillyTavern folder (at SillyTavern's own URL for it), the
chat it opens, and does SillyTavern's server work: it asks gmtags for replies (chat
completions go from SillyTavern's server, never from the page) and keeps each chat file the
page saves.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
from helpers import ROOT
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, JSONResponse, PlainTextResponse, Response
from starlette.routing import Route

sys.path.insert(0, str(ROOT / "tests" / "replay" / "stage"))  # the stage tests' servers

from stage_servers import ServerThread, free_port

PAGE = Path(__file__).resolve().parent / "st_host"
GMTAGS = str(Path(sys.executable).parent / "gmtags")


class Gmtags:
    """A real ``gmtags serve`` process on a port of its own, which can be stopped and started
    again on the same port (gmtags down, then back)."""

    def __init__(self, upstream: str, games: Path, cors_origin: str, game: str = "harrow",
                 **env: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.args = ["serve", "--upstream", upstream, "--games", str(games), "--port",
                     str(self.port), "--cors-origin", cors_origin]
        self.env = {**os.environ, "GMTAGS_KEY": "", **env}
        self.game = game
        self.process: subprocess.Popen[str] | None = None
        self.log: list[str] = []
        self.start()

    @property
    def endpoint(self) -> str:
        """What SillyTavern's Custom Endpoint is set to."""
        return f"{self.url}/games/{self.game}/v1"

    def start(self) -> None:
        process = subprocess.Popen([GMTAGS, *self.args], stderr=subprocess.PIPE, text=True,
                                   env=self.env)
        assert process.stderr is not None
        for line in process.stderr:
            self.log.append(line)
            if "serving" in line:
                break
        else:
            raise RuntimeError("gmtags serve did not start:\n" + "".join(self.log))
        threading.Thread(target=self._read, args=(process,), daemon=True).start()
        self.process = process

    def _read(self, process: subprocess.Popen[str]) -> None:
        assert process.stderr is not None
        for line in process.stderr:
            self.log.append(line)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            self.process.wait(timeout=30)
        self.process = None


class Host:
    """The stand-in SillyTavern: its page, the installed extension, replies through gmtags."""

    def __init__(self, extension: Path, header: dict[str, Any],
                 messages: list[dict[str, Any]]) -> None:
        self.gmtags: Gmtags | None = None  # set once it runs: it must know this host's origin
        self.extension = extension
        self.header = header
        self.messages = messages
        self.saved: list[str] = []  # every chat file the page saved, in order
        self.server = ServerThread(self.app())
        self.url = self.server.url

    def app(self) -> Starlette:
        async def page(request: Request) -> Response:
            return FileResponse(PAGE / "host.html", media_type="text/html")

        async def script(request: Request) -> Response:
            return FileResponse(PAGE / "host.js", media_type="text/javascript")

        async def extension_file(request: Request) -> Response:
            name = request.path_params["name"]
            found = self.extension / name
            if "/" in name or not found.is_file():
                return PlainTextResponse("not found", status_code=404)
            kinds = {".js": "text/javascript", ".css": "text/css", ".html": "text/html",
                     ".json": "application/json"}
            return FileResponse(found, media_type=kinds.get(found.suffix, "text/plain"))

        async def chat(request: Request) -> Response:
            assert self.gmtags is not None
            return JSONResponse({"endpoint": self.gmtags.endpoint, "header": self.header,
                                 "messages": self.messages})

        async def generate(request: Request) -> Response:
            body = await request.json()
            assert self.gmtags is not None
            async with httpx.AsyncClient(timeout=60) as client:
                answer = await client.post(
                    f"{self.gmtags.endpoint}/chat/completions",
                    json={"model": "fake-gm", "messages": body["messages"]})
            answer.raise_for_status()
            return JSONResponse({"text": answer.json()["choices"][0]["message"]["content"]})

        async def save(request: Request) -> Response:
            self.saved.append((await request.body()).decode("utf-8"))
            return PlainTextResponse("ok")

        return Starlette(routes=[
            Route("/", page), Route("/host.js", script),
            Route("/scripts/extensions/third-party/gmtags/{name}", extension_file),
            Route("/chat.json", chat), Route("/api/generate", generate, methods=["POST"]),
            Route("/api/chats/save", save, methods=["POST"]),
        ])

    def stop(self) -> None:
        self.server.stop()


def chat_file(header: dict[str, Any], messages: list[dict[str, Any]]) -> str:
    """A chat file as SillyTavern's page saves it (JSON.stringify of each line)."""
    return "".join(json.dumps(value, ensure_ascii=False, separators=(",", ":")) + "\n"
                   for value in [header, *messages])
