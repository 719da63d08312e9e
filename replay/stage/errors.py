"""The stage's errors as OpenAI error bodies (docs/design.md#interfaces: every error one, also
404, 405 and a refused CORS preflight)."""

from __future__ import annotations

from collections.abc import Mapping

from starlette.responses import JSONResponse


def error(status: int, message: str, kind: str = "invalid_request_error",
          code: str | None = None, headers: Mapping[str, str] | None = None) -> JSONResponse:
    """An OpenAI-style error body."""
    return JSONResponse({"error": {"message": message, "type": kind, "param": None,
                                   "code": code}}, status_code=status, headers=headers)
