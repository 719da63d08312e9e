"""Host actions that are not tags — taking starting gear, pressing Use, resting, equipping —
recorded as ``event`` messages in the transcript and applied at their position, so they replay
like everything else (DESIGN.md "Replay semantics").

An event is answered like a tag: the answer's ``tag`` is ``{"kind": "event", "attrs": {...},
"raw": <the event as canonical JSON>}``.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from tagparse import Tag

from . import reasons
from .answers import Answer, refused
from .context import TurnContext
from .game import Game
from .state import State

MAX_EVENT_BYTES = 64 * 1024


@dataclass(frozen=True, slots=True)
class Event:
    """One host action: its ``action``, who it is for, and the whole payload."""

    action: str
    payload: Mapping[str, Any]
    tag: Tag  # the event as a tag value: simple payload keys as attributes, for answers

    def get(self, key: str) -> Any:
        return self.payload.get(key)


EventHandler = Callable[[Game, State, Event, TurnContext], tuple[State, Answer]]


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
    return Event(action, merged, Tag("event", attrs, 0, 0, raw[:2000], None))


def _events() -> dict[str, EventHandler]:
    from . import host, rest, starting_gear, use  # capabilities import Event: import them late

    return {"starting-gear": starting_gear.take,
            "use": use.use_event,
            "rest": rest.rest_event,
            "add": host.player_add,
            "add-coins": host.add_coins,
            "remove": host.player_remove,
            "split": host.split,
            "merge": host.merge,
            "set": host.player_set,
            "give": host.player_give,
            "toggle": host.toggle,
            "equip": host.player_equip,
            "unequip": host.player_unequip,
            "bind": host.player_bind,
            "unbind": host.player_unbind_event}


def apply_event(game: Game, state: State, payload: Mapping[str, Any], name: str | None,
                ctx: TurnContext) -> tuple[State, Answer]:
    """Apply one host event; an unknown or oversized one is refused, never raised."""
    event = event_from(payload, name)
    if len(event.tag.raw) >= MAX_EVENT_BYTES:
        return state, refused(event.tag, reasons.MALFORMED, "This event is too large.")
    handlers = _events()
    handler = handlers.get(event.action)
    if handler is None:
        known = ", ".join(sorted(handlers))
        return state, refused(event.tag, reasons.UNSUPPORTED,
                              f'Event action "{event.action[:40]}" is not applied by this '
                              f"version of gmtags (known: {known}).")
    new_state, answer = handler(game, state, event, ctx)
    if new_state is not state:  # ITM-FAKE-12/18, as after a tag
        from .fakes import settle_fakes

        new_state = settle_fakes(game, new_state, ctx, before=state)
    return new_state, answer
