"""SillyTavern chat ``.jsonl``: an optional metadata header line, then one message per line.

The header is the first object without ``mes`` or ``is_user`` (``user_name``, ``character_name``,
``create_date``, ``chat_metadata``); old group chats have none. Names ``"unused"`` (group chats)
or empty mean unknown. Messages carry ``name``, ``is_user``, ``is_system``, ``mes``, ``swipes``,
``swipe_id``, ``extra`` and many keys we do not need (``send_date`` in any shape, ``swipe_info``,
``force_avatar``, ``is_group``, ...), which are ignored without diagnostics. Reading choices:

- role: ``is_user`` true → ``player``; ``extra.type`` one of ST's system message types
  (``narrator`` from ``/sys`` or ``/messagerole system``, ``comment``, ...) → ``system``;
  anything else → ``gm``. ``hidden`` is ``is_system is True`` (ST leaves such messages out of
  the prompt, e.g. after ``/hide``).
- ``text`` is always ``mes``: ST writes ``mes`` as the text on screen, so it is what the player
  saw. ``swipe`` is ``swipe_id`` (missing → 0). When ``swipes[swipe_id]`` differs from ``mes``
  (an edit that ST did not copy into the swipe) the reader says ``mes-differs-from-swipe``; when
  ``swipe_id`` is outside the swipes it says ``swipe-out-of-range`` and ``swipe`` becomes the
  index of ``mes`` among the swipes, or the nearest valid index.
- A line without a string ``mes`` (after the header) is ``bad-message`` and skipped.
- An ST file is one conversation: one session.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from replay.formats import fields
from replay.transcript import (
    BAD_MESSAGE,
    MES_DIFFERS_FROM_SWIPE,
    SWIPE_OUT_OF_RANGE,
    Message,
    ReadDiagnostic,
    Role,
    Session,
    Transcript,
)

# SillyTavern's system_message_types (public/scripts/system-messages.js).
SYSTEM_TYPES = frozenset(
    {
        "help",
        "welcome",
        "empty",
        "generic",
        "narrator",
        "comment",
        "slash_commands",
        "formatting",
        "hotkeys",
        "macros",
        "welcome_prompt",
        "assistant_note",
        "assistant_message",
    }
)
HEADER_KEYS = frozenset({"user_name", "character_name", "create_date", "chat_metadata"})
UNKNOWN_NAMES = frozenset({"", "unused"})


def is_message(value: dict[str, Any]) -> bool:
    """Whether an object is a chat message rather than the metadata header."""
    return "mes" in value or "is_user" in value


def read(records: Sequence[tuple[int, Any]]) -> Transcript:
    """Build the one session of a SillyTavern chat from its parsed (line, JSON value) records."""
    diagnostics: list[ReadDiagnostic] = []
    messages: list[Message] = []
    header: dict[str, Any] | None = None
    for position, (line, value) in enumerate(records):
        if position == 0 and isinstance(value, dict) and not is_message(value):
            header = value
            continue
        message = read_message(line, value, diagnostics)
        if message is not None:
            messages.append(message)
    return Transcript(
        format="sillytavern",
        sessions=(Session(messages=tuple(messages)),) if messages else (),
        player_name=header_name(header, "user_name"),
        gm_name=header_name(header, "character_name"),
        diagnostics=tuple(diagnostics),
    )


def header_name(header: dict[str, Any] | None, key: str) -> str | None:
    """A participant name from the header, or None when absent or a placeholder."""
    name = header.get(key) if header is not None else None
    return name if isinstance(name, str) and name.strip() not in UNKNOWN_NAMES else None


def read_message(line: int, value: Any, diagnostics: list[ReadDiagnostic]) -> Message | None:
    """One line's message, or None (with a diagnostic) when the line cannot be a message."""
    if not isinstance(value, dict):
        diagnostics.append(
            ReadDiagnostic(line=line, code=BAD_MESSAGE, message="line is not a JSON object")
        )
        return None
    mes = value.get("mes")
    if not isinstance(mes, str):
        diagnostics.append(
            ReadDiagnostic(line=line, code=BAD_MESSAGE, message="mes is missing or not a string")
        )
        return None
    extra = value.get("extra")
    extra_type = extra.get("type") if isinstance(extra, dict) else None
    role: Role
    if fields.flag(value, "is_user", line, diagnostics):
        role = "player"
    elif isinstance(extra_type, str) and extra_type in SYSTEM_TYPES:
        role = "system"
    else:
        role = "gm"
    swipes = fields.swipes(value, "swipes", line, diagnostics)
    swipe_id = fields.index(value, "swipe_id", line, diagnostics)
    swipe = 0 if swipes is None else select_swipe(line, swipes, swipe_id or 0, mes, diagnostics)
    return Message(
        role=role,
        name=fields.optional_str(value, "name", line, diagnostics),
        text=mes,
        swipes=swipes,
        swipe=swipe,
        hidden=fields.flag(value, "is_system", line, diagnostics),
        source_line=line,
    )


def select_swipe(
    line: int, swipes: tuple[str, ...], selected: int, mes: str, diagnostics: list[ReadDiagnostic]
) -> int:
    """The index of the shown swipe; `mes` stays the text, disagreements are reported."""
    if not 0 <= selected < len(swipes):
        shown = swipes.index(mes) if mes in swipes else fields.clamp(selected, len(swipes))
        diagnostics.append(
            ReadDiagnostic(
                line=line,
                code=SWIPE_OUT_OF_RANGE,
                message=(
                    f"swipe_id {selected} is outside the {len(swipes)} swipes;"
                    f" using mes, swipe {shown}"
                ),
            )
        )
        return shown
    if swipes[selected] != mes:
        diagnostics.append(
            ReadDiagnostic(
                line=line,
                code=MES_DIFFERS_FROM_SWIPE,
                message=f"mes differs from swipes[{selected}]; using mes, the text on screen",
            )
        )
    return selected
