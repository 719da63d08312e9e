"""Where the GM section goes in the prompt, and how the model reads its past replies.

A local model server (llama.cpp's, KoboldCpp) keeps the prompt it read last and re-reads only
what follows the first token that differs. So what changes rarely — the GM instructions, and in
a fight how to fight: :func:`engine.text.prompt.front_context` — goes near the front, right
after the client's leading system messages, and what changes every turn — the state blocks and
the last answers: :func:`engine.text.prompt.turn_context` — goes ``stateDepth`` messages before
the end (1: before the player's last message). The tokens re-read per turn then stay flat as
the chat grows; ``"stateDepth": null`` puts the whole section up front, as one message.

The model reads its past replies with the answer parts taken out of their tags
(``"pastAnswers": "section"``, :func:`tagparse.requests_only`): a model imitates what it reads,
and the answers it needs are in the section's LAST ANSWERS and in the narration that followed
them. ``"inline"`` sends the history as the client has it.

None of this changes what is folded, answered or saved: it is the copy of the request sent on.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

import tagparse

from ..files import InputError

PastAnswers = Literal["section", "inline"]
MAX_DEPTH = 10_000
DEFAULT_DEPTH = 1


@dataclass(frozen=True)
class Layout:
    """The game options of the prompt's layout (``options.json``)."""

    state_depth: int | None = DEFAULT_DEPTH  # "stateDepth"; None: all of it up front
    past_answers: PastAnswers = "section"  # "pastAnswers"


def read_layout(options: Mapping[str, Any], path: object) -> Layout:
    """``stateDepth`` and ``pastAnswers`` of a game's ``options.json``.

    Raises :class:`InputError` naming the option's JSON pointer in ``path``."""
    depth = options.get("stateDepth", DEFAULT_DEPTH)
    if depth is not None and (isinstance(depth, bool) or not isinstance(depth, int)
                              or not 0 <= depth <= MAX_DEPTH):
        raise InputError(f"{path}#/stateDepth: is null or a whole number from 0 to "
                         f"{MAX_DEPTH}, not {depth!r}")
    past = options.get("pastAnswers", "section")
    if past not in ("section", "inline"):
        raise InputError(f'{path}#/pastAnswers: is "section" or "inline", not {past!r}')
    return Layout(depth, past)


def state_index(messages: int, leading: int, depth: int) -> int:
    """Where the turn's part goes: before message ``messages - depth``, never before the
    front part (after the ``leading`` system messages)."""
    return max(leading, messages - depth)


def without_answers(message: Any) -> dict[str, Any] | None:
    """A GM message of the history as the model reads it (its tags without answer parts), or
    None when it reads as it is."""
    if not isinstance(message, dict) or message.get("role") != "assistant":
        return None
    content = message.get("content")
    if not isinstance(content, str) or "|" not in content:
        return None
    shown = tagparse.requests_only(content)
    return None if shown == content else {**message, "content": shown}


def without_answers_json(message: Any) -> bytes | None:
    """:func:`without_answers` as the JSON bytes of the message sent on."""
    shown = without_answers(message)
    return None if shown is None else json.dumps(shown).encode()


__all__ = ["Layout", "PastAnswers", "read_layout", "state_index", "without_answers",
           "without_answers_json"]
