"""gmtags' own transcript JSONL: one message object per line.

Keys: ``role`` (``player``, ``gm``, ``system``, ``event``), ``name``, ``text``, ``swipes``,
``swipe``, ``hidden``, ``new_session``, ``event``. Reading choices:

- ``swipes`` given: ``text`` is ``swipes[swipe]``. A ``text`` that differs is reported
  (``text-differs-from-swipe``) and the swipe wins: the file says which swipe was selected.
- ``swipe`` outside the swipes: ``swipe-out-of-range``, clamped to the nearest swipe (the last
  one when too large, the first when negative).
- Unknown keys: one ``unknown-key`` diagnostic per line; the message is kept.
- A field of the wrong type: ``bad-field``, the field's default is used; the message is kept.
- Not an object: ``bad-message``; unknown or missing role: ``unknown-role``; an ``event`` line
  without an ``event`` object: ``bad-message``. Each of these skips the line.
- ``new_session: true`` starts a new session with that message; the first session starts at the
  first message with or without the flag.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, get_args

from engine.rules.trusted import trusted
from engine.ruleset.pointers import did_you_mean
from replay.formats import fields
from replay.transcript import (
    BAD_MESSAGE,
    SWIPE_OUT_OF_RANGE,
    TEXT_DIFFERS_FROM_SWIPE,
    UNKNOWN_KEY,
    UNKNOWN_ROLE,
    Message,
    ReadDiagnostic,
    Role,
    Session,
    Transcript,
)

ROLES: dict[str, Role] = {role: role for role in get_args(Role)}
KEYS = frozenset({"role", "name", "text", "swipes", "swipe", "hidden", "new_session", "event"})
# The keys of the common line, read by :func:`plain_message` without the field-by-field checks.
PLAIN_KEYS = frozenset({"role", "name", "text", "hidden", "new_session"})


def read(records: Sequence[tuple[int, Any]]) -> Transcript:
    """Build the sessions of a gmtags transcript from its parsed (line, JSON value) records."""
    diagnostics: list[ReadDiagnostic] = []
    sessions: list[list[Message]] = []
    for line, value in records:
        message = read_message(line, value, diagnostics)
        if message is None:
            continue
        if message.new_session or not sessions:
            sessions.append([])
        sessions[-1].append(message)
    return Transcript(
        format="gmtags",
        sessions=tuple(Session(messages=tuple(session)) for session in sessions),
        diagnostics=tuple(diagnostics),
    )


def read_message(line: int, value: Any, diagnostics: list[ReadDiagnostic]) -> Message | None:
    """One line's message, or None (with a diagnostic) when the line cannot be a message."""
    if not isinstance(value, dict):
        diagnostics.append(
            ReadDiagnostic(line=line, code=BAD_MESSAGE, message="line is not a JSON object")
        )
        return None
    plain = plain_message(line, value)
    return plain if plain is not None else read_fields(line, value, diagnostics)


def read_fields(
    line: int, value: dict[str, Any], diagnostics: list[ReadDiagnostic]
) -> Message | None:
    """A message object read field by field: every key and type checked and reported."""
    role_value = value.get("role")
    role = ROLES.get(role_value) if isinstance(role_value, str) else None
    if role is None:
        diagnostics.append(
            ReadDiagnostic(
                line=line,
                code=UNKNOWN_ROLE,
                message=f"role {fields.shorten(role_value)} is not player, gm, system or event",
            )
        )
        return None
    unknown = sorted(key for key in value if key not in KEYS)
    if unknown:
        names = ", ".join(fields.shorten(key, 30) + did_you_mean(key, KEYS)
                          for key in unknown[:5])
        more = f" and {len(unknown) - 5} more" if len(unknown) > 5 else ""
        diagnostics.append(
            ReadDiagnostic(
                line=line, code=UNKNOWN_KEY, message=f"unknown keys ignored: {names}{more}"
            )
        )
    event = value.get("event")
    if role == "event" and not isinstance(event, dict):
        diagnostics.append(
            ReadDiagnostic(
                line=line, code=BAD_MESSAGE, message="an event line needs an event object"
            )
        )
        return None
    if role != "event" and event is not None:
        diagnostics.append(fields.bad_field(line, "event", "is only read on event lines"))
        event = None

    text = fields.optional_str(value, "text", line, diagnostics)
    swipes = fields.swipes(value, "swipes", line, diagnostics)
    swipe = fields.index(value, "swipe", line, diagnostics)
    if swipes is None:
        if swipe:
            diagnostics.append(fields.bad_field(line, "swipe", "is given without swipes"))
        swipe = 0
    else:
        swipe, text = select_swipe(line, swipes, swipe or 0, text, diagnostics)
    return Message(
        role=role,
        name=fields.optional_str(value, "name", line, diagnostics),
        text=text or "",
        swipes=swipes,
        swipe=swipe,
        hidden=fields.flag(value, "hidden", line, diagnostics),
        new_session=fields.flag(value, "new_session", line, diagnostics),
        event=event,
        source_line=line,
    )


def plain_message(line: int, value: dict[str, Any]) -> Message | None:
    """The common line — a player, GM or system message with text, name and flags of the right
    types and nothing else — as the full reading builds it; None for any other line, which
    :func:`read_message` then reads field by field (with its diagnostics)."""
    role = value.get("role")
    if not isinstance(role, str) or role == "event" or role not in ROLES:
        return None
    if not PLAIN_KEYS.issuperset(value):
        return None
    name, text = value.get("name"), value.get("text")
    hidden, new_session = value.get("hidden"), value.get("new_session")
    if not (
        (name is None or isinstance(name, str))
        and (text is None or isinstance(text, str))
        and (hidden is None or isinstance(hidden, bool))
        and (new_session is None or isinstance(new_session, bool))
    ):
        return None
    return trusted(Message, {  # every field checked above
        "role": ROLES[role], "name": name, "text": text or "", "swipes": None, "swipe": 0,
        "hidden": bool(hidden), "new_session": bool(new_session), "event": None,
        "source_line": line,
    })


def select_swipe(
    line: int,
    swipes: tuple[str, ...],
    selected: int,
    text: str | None,
    diagnostics: list[ReadDiagnostic],
) -> tuple[int, str]:
    """The selected swipe's index and text; the swipe wins over a disagreeing `text`."""
    if not 0 <= selected < len(swipes):
        clamped = fields.clamp(selected, len(swipes))
        diagnostics.append(
            ReadDiagnostic(
                line=line,
                code=SWIPE_OUT_OF_RANGE,
                message=f"swipe {selected} is outside the {len(swipes)} swipes; using {clamped}",
            )
        )
        selected = clamped
    if text is not None and text != swipes[selected]:
        diagnostics.append(
            ReadDiagnostic(
                line=line,
                code=TEXT_DIFFERS_FROM_SWIPE,
                message=f"text differs from swipes[{selected}]; the swipe wins",
            )
        )
    return selected, swipes[selected]
