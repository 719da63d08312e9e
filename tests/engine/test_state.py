"""State values are immutable and changed by copies (DESIGN.md "State, snapshots and scale"):
the engine's one-step ``model_copy`` gives exactly what pydantic's general copy gives."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import BaseModel

from engine.rules.state import Character, JournalEntry, Stack, State

UPDATES = st.fixed_dictionaries({}, optional={
    "count": st.integers(1, 99), "equipped": st.booleans(), "name": st.text(max_size=5),
    "suspected_by": st.lists(st.text(max_size=3), max_size=2).map(tuple)})


@settings(max_examples=100, deadline=None)
@given(UPDATES, st.booleans())
def test_a_copy_with_changes_is_pydantics_copy_with_changes(update, deep):
    stack = Stack(name="Rope", item="kit/rope", count=3)
    ours = stack.model_copy(update=update, deep=deep)
    theirs = BaseModel.model_copy(stack, update=update, deep=deep)
    assert ours == theirs and hash(ours) == hash(theirs)
    assert ours.__dict__ == theirs.__dict__
    assert ours.model_fields_set == theirs.model_fields_set
    assert ours.model_dump(exclude_unset=True) == theirs.model_dump(exclude_unset=True)
    assert stack.count == 3  # the original is untouched


def test_a_copy_of_a_state_shares_what_it_does_not_change():
    state = State(seed="s", player="Ada", characters=(Character(name="Ada"),))
    grown = state.model_copy(update={"journal": (JournalEntry(turn="1", text="x"),)})
    assert grown.characters is state.characters
    assert state.journal == () and grown.journal[0].text == "x"
    assert grown.model_fields_set == state.model_fields_set | {"journal"}
