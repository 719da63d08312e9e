"""gmtags JSONL: the shortcut for the common line (issue 13) reads exactly what the field-by-field
reading reads, and leaves every other line to it."""

from __future__ import annotations

from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from replay.formats.gmtags_jsonl import plain_message, read_fields, read_message
from replay.transcript import ReadDiagnostic

VALUES = st.one_of(
    st.none(), st.booleans(), st.integers(-2, 3), st.floats(allow_nan=False), st.text(max_size=8),
    st.lists(st.text(max_size=3), max_size=2), st.dictionaries(st.text(max_size=3), st.integers(),
                                                               max_size=2),
)
KEYS = st.sampled_from(["role", "name", "text", "hidden", "new_session", "swipes", "swipe",
                        "event", "extra"])
ROLES = st.sampled_from(["player", "gm", "system", "event", "narrator", ""]) | VALUES


@st.composite
def lines(draw: st.DrawFn) -> dict[str, Any]:
    value: dict[str, Any] = draw(st.dictionaries(KEYS, VALUES, max_size=5))
    if draw(st.booleans()):
        value["role"] = draw(ROLES)
    return value


@settings(max_examples=400, deadline=None)
@given(lines(), st.integers(1, 50))
def test_the_shortcut_reads_what_the_full_reading_reads(value, line):
    shortcut = plain_message(line, value)
    diagnostics: list[ReadDiagnostic] = []
    full = read_fields(line, value, diagnostics)
    if shortcut is not None:
        assert full == shortcut
        assert full.model_fields_set == shortcut.model_fields_set
        assert diagnostics == []


def test_the_common_lines_take_the_shortcut():
    for value in ({"role": "gm", "text": "Mud. [inventory: action=\"add\" item=\"Rope\"]"},
                  {"role": "player", "name": "Ada", "text": "Hi", "new_session": True},
                  {"role": "system", "text": None, "hidden": False}):
        message = plain_message(7, value)
        assert message is not None
        assert message == read_message(7, value, [])
        assert message.source_line == 7


def test_anything_unusual_is_left_to_the_full_reading():
    for value in ({"role": "event", "event": {"use": "Torch"}},
                  {"role": "gm", "text": "a", "swipes": ["a", "b"], "swipe": 1},
                  {"role": "gm", "text": 3},
                  {"role": "gm", "text": "a", "hidden": "yes"},
                  {"role": "gm", "text": "a", "mood": "grim"},
                  {"role": ["gm"]},
                  {"role": "narrator"}):
        assert plain_message(1, value) is None
