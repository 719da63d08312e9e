"""Typed fields out of untrusted JSON objects: a wrong type becomes a diagnostic, never an error."""

from __future__ import annotations

import re
from typing import Any

from replay.transcript import BAD_FIELD, ReadDiagnostic

_SURROGATE = re.compile("[\ud800-\udfff]")


def unicode_text(text: str) -> str:
    """``text`` with each lone surrogate (valid in JSON as ``"\\ud800"``, but no character, so
    not writable as UTF-8) replaced by U+FFFD; JSON readers already join the pairs."""
    return text if _SURROGATE.search(text) is None else _SURROGATE.sub("\ufffd", text)


def shorten(value: object, limit: int = 60) -> str:
    """A one-line repr of a value for a diagnostic, cut to `limit` characters."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def bad_field(line: int | None, key: str, problem: str) -> ReadDiagnostic:
    """The diagnostic for a field that is ignored because of its type."""
    return ReadDiagnostic(line=line, code=BAD_FIELD, message=f"{key} {problem}; ignored")


def optional_str(
    fields: dict[str, Any], key: str, line: int | None, diagnostics: list[ReadDiagnostic]
) -> str | None:
    """The string at `key`, or None when it is missing, null or not a string."""
    value = fields.get(key)
    if value is None or isinstance(value, str):
        return value
    diagnostics.append(bad_field(line, key, "is not a string"))
    return None


def flag(
    fields: dict[str, Any], key: str, line: int | None, diagnostics: list[ReadDiagnostic]
) -> bool:
    """The boolean at `key`; missing, null or not a boolean reads as False."""
    value = fields.get(key)
    if value is None:
        return False
    if isinstance(value, bool):
        return value
    diagnostics.append(bad_field(line, key, "is not true or false"))
    return False


def index(
    fields: dict[str, Any], key: str, line: int | None, diagnostics: list[ReadDiagnostic]
) -> int | None:
    """The integer at `key` (a whole float such as 1.0 counts), or None when missing or bad."""
    value = fields.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    diagnostics.append(bad_field(line, key, "is not a whole number"))
    return None


def swipes(
    fields: dict[str, Any], key: str, line: int | None, diagnostics: list[ReadDiagnostic]
) -> tuple[str, ...] | None:
    """The non-empty list of strings at `key`, or None when missing or unusable."""
    value = fields.get(key)
    if value is None:
        return None
    if not isinstance(value, list) or not all(isinstance(swipe, str) for swipe in value):
        diagnostics.append(bad_field(line, key, "is not a list of strings"))
        return None
    if not value:
        diagnostics.append(bad_field(line, key, "is empty"))
        return None
    return tuple(value)


def clamp(selected: int, count: int) -> int:
    """The nearest valid index into `count` swipes."""
    return min(max(selected, 0), count - 1)
