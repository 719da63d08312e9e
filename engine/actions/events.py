"""Host actions that are not tags — taking starting gear, pressing Use, resting, equipping —
recorded as ``event`` messages in the transcript and applied at their position, so they replay like
everything else (docs/design.md#replay-semantics).

An event is answered like a tag: the answer's ``tag`` is ``{"kind": "event", "attrs": {...},
"raw": <the event as canonical JSON>}``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from tagparse import Tag

from ..rules import reasons
from ..rules.context import TurnContext
from ..rules.fakes import settle_fakes
from ..rules.game import Game
from ..rules.state import State
from . import fight, host, rest, starting_gear, use
from .answers import Answer, refused
from .declare import Action, table

MAX_EVENT_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Event:
    """One host action: its ``action``, who it is for, and the whole payload."""

    action: str
    payload: Mapping[str, Any]
    tag: Tag  # the event as a tag value: simple payload keys as attributes, for answers
    size: int  # the payload's length as JSON


def event_from(payload: Mapping[str, Any], name: str | None) -> Event:
    """Wrap a transcript event; ``who`` defaults to the message's ``name``."""
    merged = dict(payload)
    if name and not merged.get("who"):
        merged["who"] = name
    raw = json.dumps(merged, ensure_ascii=False, sort_keys=True, separators=(",", ":"),
                     default=str)
    attrs = tuple((str(key), str(value)) for key, value in merged.items()
                  if isinstance(value, str | int | float | bool) and len(str(value)) <= 200)
    action = str(merged.get("action", "")).strip().lower()
    return Event(action, merged, Tag("event", attrs, 0, 0, raw[:2000], None), len(raw))


# Every host event, declared beside its capability's actions.
EVENTS: dict[tuple[str, str | None], Action] = table(
    starting_gear.take, use.use_event, rest.rest_event, host.player_add, host.add_coins,
    host.player_remove, host.split, host.merge, host.player_set, host.player_give,
    host.toggle, host.player_equip, host.player_unequip, host.player_bind, host.player_unbind,
    fight.want, fight.pass_,
)


def apply_event(game: Game, state: State, payload: Mapping[str, Any], name: str | None,
                ctx: TurnContext) -> tuple[State, Answer]:
    """Apply one host event; an unknown or oversized one is refused, never raised."""
    event = event_from(payload, name)
    if event.size >= MAX_EVENT_BYTES:
        return state, refused(event.tag, reasons.MALFORMED, "This event is too large.")
    declared = EVENTS.get(("event", event.action))
    if declared is None:
        known = ", ".join(sorted(str(action) for _, action in EVENTS))
        return state, refused(event.tag, reasons.UNSUPPORTED,
                              f'Event action "{event.action[:40]}" is not applied by this '
                              f"version of gmtags (known: {known}).")
    new_state, answer = declared.answer(game, state, event.tag, ctx, event.payload)
    if new_state is not state:  # ITM-FAKE-12/18, as after a tag
        new_state = settle_fakes(game, new_state, ctx, before=state)
    return new_state, answer
