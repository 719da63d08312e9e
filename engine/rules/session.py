"""What a new conversation (session) of a game does to the state it inherits."""

from __future__ import annotations

from .state import State


def start_session(state: State) -> State:
    """A new session: the place counts from the latest conversation start, so none holds
    (docs/design.md#replay-semantics); an invented item is kept only while someone owns it
    (ITM-PROP-21). Bags, sheets and the journal carry over. The same object when nothing changes."""
    if state.place is not None:
        state = state.model_copy(update={"place": None})
    return new_session(state)


def held_refs(state: State) -> set[str]:
    return {s.item for c in state.characters for s in c.bag if s.item is not None}


def new_session(state: State) -> State:
    """ITM-PROP-21: a new session keeps an invented item only while somebody owns it; the
    rest are forgotten (their names become free again). The same object when nothing goes."""
    held = held_refs(state)
    kept = tuple(i for i in state.invented if i.ref in held)
    if len(kept) == len(state.invented):
        return state
    return state.model_copy(update={"invented": kept})
