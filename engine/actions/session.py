"""What a new conversation (session) of a game does to the state it inherits."""

from __future__ import annotations

from ..rules.state import State
from .invent import new_session as forget_unowned_inventions


def start_session(state: State) -> State:
    """A new session: the place counts from the latest conversation start, so none holds
    (DESIGN.md "Replay semantics"); an invented item is kept only while someone owns it
    (ITM-PROP-21). Bags, sheets and the journal carry over. The same object when nothing
    changes."""
    if state.place is not None:
        state = state.model_copy(update={"place": None})
    return forget_unowned_inventions(state)
