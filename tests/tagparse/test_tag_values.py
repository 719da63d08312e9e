"""Tag and Diagnostic as values (DESIGN.md "Tags"): immutable, equal and hashed by value, the
same whether the scanner's canonical shortcut or the grammar read them."""

from __future__ import annotations

import copy
import pickle

import pytest

from tagparse import Diagnostic, Tag, render, scan

ANSWERED = '[inventory: action="pay" amount="3 shillings" | ok="true" text="Paid \\"x\\"."]'


def test_tags_shortcut_tag_equals_the_grammar_tag_and_hashes_alike() -> None:
    """CANONICAL FORM: a tag the shortcut read (attributes read on first use) is the same
    value as the one the grammar read, before and after its attributes are asked for."""
    (fast,) = scan(ANSWERED).tags
    (slow,) = scan(ANSWERED, fast=False).tags
    assert fast == slow and slow == fast
    assert (fast != slow) is False
    assert hash(fast) == hash(slow)
    assert {fast: 1}[slow] == 1
    assert fast.attrs == (("action", "pay"), ("amount", "3 shillings"))
    assert fast.answer == (("ok", "true"), ("text", 'Paid "x".'))
    assert fast.get("amount") == "3 shillings" and fast.get("who", "-") == "-"
    assert fast.to_json() == slow.to_json()
    assert repr(fast) == repr(slow)


def test_tags_built_by_hand_equal_read_tags() -> None:
    """The engine builds tags by hand with the same constructor and fields."""
    raw = '[loot: table="crypt"]'
    built = Tag("loot", (("table", "crypt"),), 3, 3 + len(raw), raw, None)
    (read,) = scan("Go." + raw).tags
    assert built == read
    assert built.malformed is None and read.malformed is None
    assert built != Tag("loot", (("table", "crypt"),), 3, 3 + len(raw), raw, ())
    assert built != (built.kind, built.attrs, built.start, built.end, built.raw, None, None)


@pytest.mark.parametrize("value", [scan(ANSWERED).tags[0], scan(ANSWERED, fast=False).tags[0]])
def test_tags_pickle_and_copy_keep_the_value(value: Tag) -> None:
    """Tags cross process and cache boundaries as values."""
    for again in (pickle.loads(pickle.dumps(value)), copy.copy(value), copy.deepcopy(value)):
        assert again == value and type(again) is Tag
        assert again.answer == value.answer


def test_tags_are_immutable() -> None:
    (tag,) = scan(ANSWERED).tags
    with pytest.raises(AttributeError):
        tag.kind = "loot"  # type: ignore[misc]
    with pytest.raises(AttributeError):
        tag.attrs = ()  # type: ignore[misc]
    diagnostic = Diagnostic(0, 1, "spaces", "x")
    with pytest.raises(AttributeError):
        diagnostic.code = "commas"  # type: ignore[misc]


def test_tags_diagnostic_is_a_value() -> None:
    diagnostic = Diagnostic(2, 5, "spaces", "stray spaces")
    assert (diagnostic.start, diagnostic.end, diagnostic.code, diagnostic.message) == (
        2, 5, "spaces", "stray spaces",
    )  # fmt: skip
    assert diagnostic == Diagnostic(2, 5, "spaces", "stray spaces")
    assert diagnostic != (2, 5, "spaces", "stray spaces")
    assert hash(diagnostic) == hash(Diagnostic(2, 5, "spaces", "stray spaces"))
    assert pickle.loads(pickle.dumps(diagnostic)) == diagnostic
    assert diagnostic.to_json() == {"code": "spaces", "message": "stray spaces", "span": [2, 5]}


@pytest.mark.parametrize(
    "text",
    [
        render("inventory", [(f"k{i}", str(i)) for i in range(9)]),  # past the shortcut's limit
        render(
            "inventory", [(f"k{i}", str(i)) for i in range(8)], [(f"a{i}", "") for i in range(9)]
        ),
        '[loot: table="a" table="b"]',  # a repeated key is a repair the readers report
        '[loot: a="1" | ok="1" ok="2"]',
        '[loot: ab="1" a="2" b="3" ba="4"]',  # keys that are prefixes of each other
        '[loot: a="\\q"]',  # an unknown escape
    ],
)
def test_tags_canonical_shapes_outside_the_shortcut_read_as_the_grammar_reads(text: str) -> None:
    """CANONICAL FORM, TOLERATED duplicate-attribute: tags the shortcut leaves to the readers
    still read exactly as the grammar reads them."""
    assert scan(text) == scan(text, fast=False)
    assert scan("x " + text + " y") == scan("x " + text + " y", fast=False)


def test_tags_compare_unequal_to_other_values() -> None:
    """Like the dataclasses they replace, tags and diagnostics equal only their own kind."""
    (tag,) = scan(ANSWERED).tags
    diagnostic = Diagnostic(2, 5, "spaces", "stray spaces")
    for other in (None, 1, "x", (), tuple(tag), tuple(diagnostic), diagnostic):
        assert tag != other and other != tag
        assert not tag == other  # noqa: SIM201
    assert diagnostic != tag and tag != diagnostic


def test_tags_and_diagnostics_have_no_order() -> None:
    """Being tuples underneath gives them no ordering: ``<`` raises as it did for the
    dataclasses they replace."""
    import pytest

    from tagparse import scan

    found = scan('[loot: table="a"] and [LOOT: table=b]')
    first, second = found.tags
    for left, right in ((first, second), (found.diagnostics[0], found.diagnostics[0])):
        with pytest.raises(TypeError):
            _ = left < right
        with pytest.raises(TypeError):
            sorted([left, right])
