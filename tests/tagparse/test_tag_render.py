"""Canonical rendering of tags (grammars/tags.lark, CANONICAL FORM)."""

from __future__ import annotations

import re

import pytest

from tagparse import render, render_tag, scan


def test_render_canonical_request() -> None:
    """CANONICAL FORM: one space between attributes, double-quoted values."""
    assert (
        render("inventory", [("action", "add"), ("item", "Hand axe"), ("who", "Ada")])
        == '[inventory: action="add" item="Hand axe" who="Ada"]'
    )


def test_render_answered_tag_and_round_trip() -> None:
    """DESIGN Tags, answered tags: " | " between request and answer; rendering round-trips."""
    text = render(
        "inventory",
        [("action", "pay"), ("amount", "3 shillings")],
        [("ok", "true"), ("text", "Paid with crowns ×1; shillings ×2 back.")],
    )
    assert text == (
        '[inventory: action="pay" amount="3 shillings" | ok="true" '
        'text="Paid with crowns ×1; shillings ×2 back."]'
    )
    (tag,) = scan(text).tags
    assert render_tag(tag) == text


@pytest.mark.parametrize(
    ("attrs", "answer", "text"),
    [
        ([], None, "[loot:]"),
        ([], [], "[loot: |]"),
        ([("table", "x")], [], '[loot: table="x" |]'),
        ([], [("ok", "true")], '[loot: | ok="true"]'),
    ],
)
def test_render_empty_parts(
    attrs: list[tuple[str, str]], answer: list[tuple[str, str]] | None, text: str
) -> None:
    """CANONICAL FORM: no attributes is [loot:]; an empty answer keeps its "|"."""
    assert render("loot", attrs, answer) == text
    (tag,) = scan(text).tags
    assert tag.attrs == tuple(attrs)
    assert tag.answer == (None if answer is None else tuple(answer))


def test_render_escapes_exactly_six_characters() -> None:
    """CANONICAL FORM: \\ " [ ] LF CR are escaped; | and unicode are written as they are, and
    the tag's last character is its only bare ] (issue 22: one regex hides every tag)."""
    value = 'a\\b"c[d]e|f\ng\rh×\u2028'
    text = render("place", [("name", value)])
    assert text == '[place: name="a\\\\b\\"c\\[d\\]e|f\\ng\\rh×\u2028"]'
    assert re.sub(r"\\.", "", text).index("]") == len(re.sub(r"\\.", "", text)) - 1
    result = scan(text)
    assert result.diagnostics == ()
    assert result.tags[0].attrs == (("name", value),)


def test_render_tag_canonicalises_a_repaired_tag() -> None:
    """render_tag writes the canonical form of a tolerantly read tag."""
    (tag,) = scan("[ Inventory : Action=add, who=‘Ada’ ]").tags
    assert render_tag(tag) == '[inventory: action="add" who="Ada"]'


def test_render_tag_keeps_a_malformed_tag_as_written() -> None:
    """A malformed tag has no canonical form; render_tag returns its raw text unchanged."""
    (tag,) = scan("[inventory: item=]").tags
    assert tag.malformed is not None
    assert render_tag(tag) == "[inventory: item=]"


@pytest.mark.parametrize(
    ("kind", "key"), [("note", "item"), ("Inventory", "item"), ("loot", "Item"), ("loot", "a-b")]
)
def test_render_refuses_what_could_not_be_read_back(kind: str, key: str) -> None:
    """render raises ValueError for a kind or key that scan would not read back."""
    with pytest.raises(ValueError):
        render(kind, [(key, "x")])
