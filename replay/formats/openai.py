"""OpenAI chat messages: a bare array of ``{role, content, name?}`` or a request body
``{"messages": [...], ...}``. The whole array is one session; ``source_line`` is the array
position + 1. Reading choices:

- roles: ``system`` and ``developer`` → ``system``; ``user`` → ``player``; ``assistant`` →
  ``gm``; ``tool`` and ``function`` → ``system`` with ``hidden=True``. Tool results are kept, not
  dropped, so message positions stay those of the request (the HTTP stage maps answers back by
  position); hidden keeps them out of the fold. Any other role: ``unknown-role``, skipped.
- ``content``: a string; null → ``""``; a list of parts → the ``text`` of each ``{"type": "text"}``
  part (and bare string parts) joined with a newline, so two parts never run into one word;
  other part types (``image_url``, ``input_audio``, ...) contribute nothing. Anything else:
  ``bad-field`` and ``""``. A lone surrogate (``"\\ud800"``: valid JSON, but no character)
  reads as U+FFFD.
- Other keys (``tool_calls``, ``tool_call_id``, ``refusal``, ...) are the API's own and are
  ignored without diagnostics.

The HTTP stage reads a request's messages with :func:`read_turns`: the same roles and the same
content reading, keeping only what the fold can change state with (player and GM messages) and
building no message model for them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.formats import fields
from replay.transcript import (
    BAD_MESSAGE,
    UNKNOWN_ROLE,
    Message,
    ReadDiagnostic,
    Role,
    Session,
    Transcript,
    TranscriptError,
    Turn,
)

ROLES: dict[str, Role] = {
    "system": "system",
    "developer": "system",
    "user": "player",
    "assistant": "gm",
    "tool": "system",
    "function": "system",
}
HIDDEN_ROLES = frozenset({"tool", "function"})


def is_document(value: Any) -> bool:
    """Whether a JSON value is an OpenAI messages array or a request body holding one."""
    return isinstance(value, list) or (isinstance(value, dict) and "messages" in value)


def read_document(value: Any) -> Transcript:
    """Read a messages array or a request body; anything else is not this format."""
    if isinstance(value, dict) and "messages" in value:
        value = value["messages"]
    if not isinstance(value, list):
        raise TranscriptError("not an OpenAI messages array or a request body with messages")
    return read(value)


def read(messages: list[Any]) -> Transcript:
    """Build the one session of an OpenAI messages array."""
    diagnostics: list[ReadDiagnostic] = []
    read_messages: list[Message] = []
    for position, value in enumerate(messages, start=1):
        message = read_message(position, value, diagnostics)
        if message is not None:
            read_messages.append(message)
    return Transcript(
        format="openai",
        sessions=(Session(messages=tuple(read_messages)),) if read_messages else (),
        diagnostics=tuple(diagnostics),
    )


def read_message(position: int, value: Any, diagnostics: list[ReadDiagnostic]) -> Message | None:
    """One array entry's message, or None (with a diagnostic) when it cannot be a message."""
    if not isinstance(value, dict):
        diagnostics.append(
            ReadDiagnostic(line=position, code=BAD_MESSAGE, message="entry is not a JSON object")
        )
        return None
    source_role = value.get("role")
    role = role_of(source_role)
    if role is None:
        diagnostics.append(
            ReadDiagnostic(
                line=position,
                code=UNKNOWN_ROLE,
                message=f"role {fields.shorten(source_role)} is not an OpenAI chat role",
            )
        )
        return None
    return Message(
        role=role,
        name=fields.optional_str(value, "name", position, diagnostics),
        text=content_text(value.get("content"), position, diagnostics),
        hidden=source_role in HIDDEN_ROLES,
        source_line=position,
    )


def role_of(source_role: Any) -> Role | None:
    """The transcript role of an OpenAI role, or None when it is not one."""
    return ROLES.get(source_role) if isinstance(source_role, str) else None


def read_turns(messages: Sequence[Any], first: int = 0) -> list[Turn]:
    """The player and GM turns of a messages array from message ``first`` on, read as
    :func:`read_message` reads them; ``Turn.at`` is the index in the whole array.

    The stage's hot path: no message model is built and no diagnostics are kept. System,
    developer, tool and unreadable entries are left out: they never change the state.
    """
    turns: list[Turn] = []
    append = turns.append
    new = tuple.__new__  # Turn(...) without its Python-level __new__: this loop sees every turn
    unused: list[ReadDiagnostic] = []  # what read_message would report; the stage does not
    for index, value in enumerate(messages[first:] if first else messages, first):
        if not isinstance(value, dict):
            continue
        role = role_of(value.get("role"))
        if role == "player" or role == "gm":
            append(new(Turn, (index, role, content_text(value.get("content"), index + 1,
                                                       unused), False, 0, None)))
    return turns


def content_text(content: Any, position: int, diagnostics: list[ReadDiagnostic]) -> str:
    """The text of a message's content: a string, null, or a list of content parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return fields.unicode_text(content)
    parts = [content] if isinstance(content, dict) else content
    if not isinstance(parts, list):
        diagnostics.append(fields.bad_field(position, "content", "is not text or content parts"))
        return ""
    texts: list[str] = []
    for part in parts:
        if isinstance(part, str):
            texts.append(part)
        elif isinstance(part, dict):
            if part.get("type") == "text" and isinstance(part.get("text"), str):
                texts.append(part["text"])
        else:
            diagnostics.append(fields.bad_field(position, "content part", "is not an object"))
    return fields.unicode_text("\n".join(texts))
