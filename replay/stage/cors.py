"""CORS for the SillyTavern panel (``sillytavern-extension/gmtags/``): a page of another origin may
read ``/healthz`` and post to ``/games/<game>/v1/state``, and nothing else.

Starlette's CORSMiddleware on those paths only: never on chat completions, whose answers a
page could otherwise have the browser fetch with the player's model key. Only the origins
given (``gmtags serve --cors-origin``; SillyTavern's own loopback origins by default) are
echoed back; no credentials (the gmtags key travels as ``X-Gmtags-Key``, which the preflight
allows). A preflight that is refused is an OpenAI error body, as every error of the stage.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from starlette.datastructures import Headers
from starlette.middleware.cors import CORSMiddleware
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from .errors import error

DEFAULT_ORIGINS = ("http://127.0.0.1:8000", "http://localhost:8000")  # SillyTavern's own
PATHS = re.compile(r"/healthz|/games/[^/]+/v1/state")
MAX_AGE = 600  # seconds a browser may keep a preflight's answer


class RefusingCors(CORSMiddleware):
    """CORSMiddleware whose refused preflight says why in an OpenAI error body."""

    def preflight_response(self, request_headers: Headers) -> Response:
        response = super().preflight_response(request_headers)
        if response.status_code == 200:
            return response
        kept = {k: v for k, v in response.headers.items()
                if k.lower() not in ("content-length", "content-type")}
        reason = bytes(response.body).decode("utf-8", "replace")
        return error(400, f"{reason} (gmtags serve --cors-origin names the pages that may "
                     "ask; they may post JSON with an X-Gmtags-Key)", code="cors_refused",
                     headers=kept)


class PanelCors:
    """:class:`RefusingCors` on :data:`PATHS`; every other path as if it were not there."""

    def __init__(self, app: ASGIApp, origins: Sequence[str] = DEFAULT_ORIGINS) -> None:
        self.app = app
        self.cors = RefusingCors(app, allow_origins=list(origins),
                                 allow_methods=["GET", "POST"],
                                 allow_headers=["content-type", "x-gmtags-key"],
                                 # a page of ST served on the LAN asks this of a loopback
                                 # gmtags (Chrome's Private Network Access); its origin must
                                 # still be one given
                                 allow_private_network=True, max_age=MAX_AGE)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and PATHS.fullmatch(scope.get("path", "")):
            await self.cors(scope, receive, send)
        else:
            await self.app(scope, receive, send)
