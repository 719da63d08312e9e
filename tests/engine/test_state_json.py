"""A state's canonical JSON (DESIGN.md "State, snapshots and scale") is built from the
remembered JSON of the values it shares with states serialised before (issue 12); whatever
states the engine builds, the text is byte for byte the whole state's ``json.dumps``."""

from __future__ import annotations

import json

from helpers import answer, fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_ruleset, start_state
from engine.rules.state import (
    Character,
    JournalEntry,
    Place,
    Stack,
    State,
    Taken,
    canonical_fragment,
    plain_canonical,
)

TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=8)
STACKS = st.builds(Stack, name=TEXT, item=st.none() | st.sampled_from(["core/rope", "x/ü"]),
                   coin=st.none() | st.just("gc"), count=st.integers(1, 99),
                   equipped=st.booleans(), charges=st.none() | st.integers(0, 3),
                   suspected_by=st.lists(TEXT, max_size=2).map(tuple))
ENTRIES = st.builds(JournalEntry, turn=TEXT, text=TEXT)


def plain(state: State) -> str:
    return json.dumps(state.model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
                      ensure_ascii=False)


@st.composite
def steps(draw: st.DrawFn) -> list[tuple[str, object]]:
    kinds = st.sampled_from(["append", "count", "drop", "journal", "place", "field", "same"])
    return [(kind, draw(STACKS if kind in ("append",) else ENTRIES if kind == "journal"
                        else st.integers(0, 10**6)))
            for kind in draw(st.lists(kinds, max_size=25))]


def changed(state: State, kind: str, value: object) -> State:
    """One change the engine makes, sharing everything else with ``state``."""
    who = state.characters[0]
    bag = who.bag
    if kind == "append":
        assert isinstance(value, Stack)
        bag = (*bag, value)
    elif kind == "count" and bag:
        assert isinstance(value, int)
        at = value % len(bag)
        bag = (*bag[:at], bag[at].model_copy(update={"count": value % 7 + 1}), *bag[at + 1:])
    elif kind == "drop" and bag:
        assert isinstance(value, int)
        at = value % len(bag)
        bag = bag[:at] + bag[at + 1:]
    elif kind == "journal":
        return state.model_copy(update={"journal": (*state.journal, value)})
    elif kind == "place":
        assert isinstance(value, int)
        taken = (Taken(item="core/rope", count=value % 5 + 1),) if value % 2 else ()
        return state.model_copy(update={"place": Place(name=f"P{value % 3}", taken=taken)})
    elif kind == "field":
        fields = {**who.fields, "gold": value, "ratio": value / 7}
        return state.with_character(0, who.model_copy(update={"fields": fields}))
    elif kind == "same":
        return state
    return state.with_character(0, who.model_copy(update={"bag": bag}))


@settings(max_examples=150, deadline=None)
@given(steps())
def test_canonical_json_is_the_whole_states_json_dumps_after_any_changes(
        changes: list[tuple[str, object]]) -> None:
    state = State(seed="s", player="Ada", characters=(Character(name="Ada"), Character(name="Bo")))
    assert state.canonical() == plain(state) == plain_canonical(state)
    history = [state]
    for kind, value in changes:
        state = changed(state, kind, value)
        assert state.canonical() == plain(state)
        history.append(state)
        if isinstance(value, int) and value % 3 == 0:  # an older state, its texts forgotten:
            canonical_fragment.clear()  # built from the last tuples serialised, which differ from it
            older = history[value % len(history)]
            assert older.canonical() == plain(older)
        assert canonical_fragment(state.characters[0]) == json.dumps(
            state.characters[0].model_dump(mode="json"), sort_keys=True, separators=(",", ":"),
            ensure_ascii=False)


def test_a_grown_journal_reuses_the_last_ones_text_and_an_edited_one_does_not() -> None:
    first = JournalEntry(turn="1", text="Ada paid 1 penny.")
    state = State(seed="s", player="Ada", characters=(Character(name="Ada"),), journal=(first,))
    state.canonical()
    grown = state.model_copy(update={"journal": (first, JournalEntry(turn="2", text="ü"))})
    assert grown.canonical() == plain(grown)
    edited = state.model_copy(update={"journal": (first, JournalEntry(turn="2", text="é"))})
    assert edited.canonical() == plain(edited)
    shorter = state.model_copy(update={"journal": (first.model_copy(update={"turn": "0"}),)})
    assert shorter.canonical() == plain(shorter)


def test_every_state_of_a_game_serialises_as_its_whole_json() -> None:
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    state = start_state(game, fixture_json("parties/harrow.json"))
    tags = ['[inventory: action="add" item="Rope" count=3]', '[inventory: action="earn" '
            'amount="5 shillings"]', '[inventory: action="pay" amount="1 penny"]',
            '[inventory: action="remove" item="Rope"]', '[inventory: action="add" '
            'item="Torch" count=30]', '[inventory: action="give" item="Torch" count=2 '
            'to="Bram the Quiet"]']
    for tag in tags:
        state, answers = answer(game, state, tag)
        assert state.canonical() == plain(state), answers[0].text
