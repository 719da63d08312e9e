"""Tolerant reading of GM tags (DESIGN.md "Tags"; grammars/tags.lark, TOLERATED and EXTENT).

One row per case: the text a model wrote, the attributes read, the repair codes reported.
"""

from __future__ import annotations

import itertools

import pytest

from tagparse import TAG_KINDS, ScanResult, Tag, scan

Pairs = tuple[tuple[str, str], ...]

TOLERATED: list[tuple[str, str, Pairs, list[str]]] = [
    # (case, text, attrs read, diagnostic codes in span order)
    (
        "canonical",
        '[inventory: action="add" item="Hand axe" who="Ada"]',
        (("action", "add"), ("item", "Hand axe"), ("who", "Ada")),
        [],
    ),
    (
        "curly double quotes",
        "[inventory: action=“add” who=“Ada”]",
        (("action", "add"), ("who", "Ada")),
        ["curly-quotes", "curly-quotes"],
    ),
    (
        "curly single quotes",
        "[inventory: action=‘add’ who=‘Ada’s axe’]",
        (("action", "add"), ("who", "Ada’s axe")),
        ["curly-quotes", "curly-quotes"],
    ),
    (
        "single quotes",
        "[inventory: action='add' who='Ada']",
        (("action", "add"), ("who", "Ada")),
        ["single-quotes", "single-quotes"],
    ),
    (
        "single quotes around an apostrophe",
        "[inventory: action=\"add\" item='Ada's axe']",
        (("action", "add"), ("item", "Ada's axe")),
        ["single-quotes"],
    ),
    (
        "bare value",
        '[inventory: action="add" who=Ada]',
        (("action", "add"), ("who", "Ada")),
        ["bare-value"],
    ),
    (
        "multi-word bare value runs to the next key=",
        '[inventory: who=Bram the Quiet item="Rope"]',
        (("who", "Bram the Quiet"), ("item", "Rope")),
        ["bare-value"],
    ),
    (
        "multi-word bare value runs to ] and is trimmed",
        '[inventory: item="Rope" who=Bram the Quiet ]',
        (("item", "Rope"), ("who", "Bram the Quiet")),
        ["bare-value", "spaces"],
    ),
    (
        "bare values only",
        "[inventory: action=pay amount=3 shillings]",
        (("action", "pay"), ("amount", "3 shillings")),
        ["bare-value", "bare-value"],
    ),
    (
        "extra spaces everywhere",
        '[ inventory : action = "add" ]',
        (("action", "add"),),
        ["spaces"],
    ),
    (
        "spaces around =",
        '[inventory: action = "add" item="Rope"]',
        (("action", "add"), ("item", "Rope")),
        ["spaces"],
    ),
    (
        "no space after the colon",
        '[inventory:action="add"]',
        (("action", "add"),),
        ["spaces"],
    ),
    (
        "tab between attributes",
        '[inventory: action="add"\titem="Rope"]',
        (("action", "add"), ("item", "Rope")),
        ["spaces"],
    ),
    (
        "mixed-case name and key",
        '[Inventory: Action="add"]',
        (("action", "add"),),
        ["upper-case-name", "upper-case-name"],
    ),
    (
        "upper-case name",
        '[SKILL_CHECK: skill="Ward" dc="2"]',
        (("skill", "Ward"), ("dc", "2")),
        ["upper-case-name"],
    ),
    (
        "tag broken across lines",
        '[inventory: action="add"\n    item="Hand axe"\n    who="Ada"]',
        (("action", "add"), ("item", "Hand axe"), ("who", "Ada")),
        ["line-break"],
    ),
    (
        "tag broken right after the head",
        '[inventory:\r\naction="add"]',
        (("action", "add"),),
        ["line-break"],
    ),
    (
        "commas between attributes",
        '[inventory: action="add", item="x"]',
        (("action", "add"), ("item", "x")),
        ["commas"],
    ),
    (
        "bare value before a comma",
        "[inventory: who=Ada, item=Rope]",
        (("who", "Ada"), ("item", "Rope")),
        ["bare-value", "commas", "bare-value"],
    ),
    (
        "duplicate attribute: first wins",
        '[inventory: who="Ada" item="Rope" who="Bram"]',
        (("who", "Ada"), ("item", "Rope")),
        ["duplicate-attribute"],
    ),
    (
        "unknown escape reads as the character",
        r'[inventory: item="a\tb"]',
        (("item", "atb"),),
        ["unknown-escape"],
    ),
    (
        "canonical escapes",
        r'[inventory: text="say \"hi\" \\ \[x] \] \n \r"]',
        (("text", 'say "hi" \\ [x] ] \n \r'),),
        [],
    ),
    (
        "] | and [ without a head are text inside quotes",
        '[inventory: text="a ] b | c [d] [e f]"]',
        (("text", "a ] b | c [d] [e f]"),),
        [],
    ),
    # What models write besides (issue 28; tags.lark, TOLERATED).
    (
        "a bare word is the action",
        '[inventory: add item="Bronze Key"]',
        (("action", "add"), ("item", "Bronze Key")),
        ["bare-word"],
    ),
    (
        "a bare word is the action, then a bare value",
        "[inventory: remove item=Bronze Key]",
        (("action", "remove"), ("item", "Bronze Key")),
        ["bare-word", "bare-value"],
    ),
    (
        "a bare word alone",
        "[inventory: add]",
        (("action", "add"),),
        ["bare-word"],
    ),
    (
        "the action given elsewhere wins over a bare word",
        "[inventory: count=3 arrows action=add]",
        (("count", "3"), ("action", "add")),
        ["bare-value", "bare-word", "bare-value"],
    ),
    (
        "a bare flag of a check is its mode",
        '[skill_check: skill="Stealth" dc="14" advantage]',
        (("skill", "Stealth"), ("dc", "14"), ("mode", "advantage")),
        ["bare-word"],
    ),
    (
        "a bare number stops before trailing prose",
        "[skill_check: skill=Stealth dc=14 with advantage]",
        (("skill", "Stealth"), ("dc", "14"), ("mode", "with advantage")),
        ["bare-value", "bare-value", "bare-word"],
    ),
    (
        "a key that takes a number, in upper case, with a sign",
        "[skill_check: skill=Ward DC=14 Bonus=+2]",
        (("skill", "Ward"), ("dc", "14"), ("bonus", "+2")),
        ["bare-value", "upper-case-name", "bare-value", "upper-case-name", "bare-value"],
    ),
    (
        "a bare value that only starts with digits is one value",
        "[skill_check: skill=Ward dc=14th floor]",
        (("skill", "Ward"), ("dc", "14th floor")),
        ["bare-value", "bare-value"],
    ),
    (
        "a key that does not take a number keeps its words",
        "[inventory: action=pay amount=3 shillings]",
        (("action", "pay"), ("amount", "3 shillings")),
        ["bare-value", "bare-value"],
    ),
    (
        "a quoted number keeps what follows it",
        '[skill_check: skill="Athletics" dc="15 (hard)"]',
        (("skill", "Athletics"), ("dc", "15 (hard)")),
        [],
    ),
    (
        "words under a name that has no positional key are ignored",
        '[loot: forest table="crypt"]',
        (("table", "crypt"),),
        ["bare-word"],
    ),
    (
        "a single quote that never closes ends at the ]",
        "[inventory: action='add' item='Rope]",
        (("action", "add"), ("item", "Rope")),
        ["single-quotes", "unclosed-quote"],
    ),
    (
        "an unclosed single quote leaves out the space before the ]",
        "[inventory: item='Rope  ]",
        (("item", "Rope"),),
        ["unclosed-quote"],
    ),
    (
        "a curly single quote that never closes ends at the ]",
        "[inventory: who=‘Ada’s axe]",
        (("who", "Ada’s axe"),),
        ["unclosed-quote"],
    ),
    (
        "markdown escapes around the tag",
        '[inventory: action="add" item="Rope"\\]',
        (("action", "add"), ("item", "Rope")),
        ["markdown-escape"],
    ),
    (
        "markdown escape after a single-quoted and a bare value",
        "[inventory: item='Rope' who=Ada\\]",
        (("item", "Rope"), ("who", "Ada")),
        ["single-quotes", "bare-value", "markdown-escape"],
    ),
    ("no attributes", "[sheet:]", (), []),
    ("empty value", '[inventory: item=""]', (("item", ""),), []),
    (
        "everything at once",
        "[ Inventory :Action = “add”, Who=Bram the Quiet\n item='Ada's axe' ]",
        (("action", "add"), ("who", "Bram the Quiet"), ("item", "Ada's axe")),
        [
            "spaces",
            "upper-case-name",
            "upper-case-name",
            "curly-quotes",
            "commas",
            "upper-case-name",
            "bare-value",
            "line-break",
            "single-quotes",
        ],
    ),
]


def _one_tag(result: ScanResult) -> Tag:
    assert len(result.tags) == 1, result
    return result.tags[0]


@pytest.mark.parametrize(
    ("text", "attrs", "codes"),
    [row[1:] for row in TOLERATED],
    ids=[row[0] for row in TOLERATED],
)
def test_tags_tolerant_reading_repairs_and_reports(
    text: str, attrs: Pairs, codes: list[str]
) -> None:
    """DESIGN Tags: what models commonly write is read, and each repair is reported."""
    for fast in (True, False):
        result = scan(text, fast=fast)
        tag = _one_tag(result)
        assert tag.malformed is None
        assert tag.attrs == attrs
        assert tag.answer is None
        assert tag.raw == text
        assert sorted(d.code for d in result.diagnostics) == sorted(codes)
        assert [d.code for d in result.diagnostics] == codes


def test_tags_diagnostic_messages_name_the_attribute_and_the_reading() -> None:
    """A repair message is one actionable line: which attribute, and what was read."""
    result = scan("[inventory: who=“Ada”]")
    (diagnostic,) = result.diagnostics
    assert diagnostic.message == 'attribute "who" used curly quotes; read as "Ada"'
    assert result.tags[0].raw[diagnostic.start : diagnostic.end] == "“Ada”"
    assert diagnostic.to_json() == {
        "code": "curly-quotes",
        "message": 'attribute "who" used curly quotes; read as "Ada"',
        "span": [16, 21],
    }


def test_tags_kind_is_lower_cased() -> None:
    """Upper-case names read as the canonical lower-case kind."""
    assert scan('[Loot: table="forest"]').tags[0].kind == "loot"


def test_tags_kinds_come_from_the_grammar() -> None:
    """TAG_KINDS is the grammar's KIND list."""
    assert frozenset({"inventory", "skill_check", "place", "loot", "sheet", "combat",
                      "attack"}) == TAG_KINDS


MALFORMED: list[tuple[str, str, str]] = [
    # (case, text, words the reason contains)
    ("missing value", '[inventory: action="add" item=]', "expected a quoted value"),
    ("value without key", '[loot: "x"]', "expected"),
    ("next tag starts first", '[inventory: action="add" item="Rope"', 'before the next "["'),
    ("unterminated quote", '[inventory: item="Rope] and then he left.', "never closed"),
    ("unterminated single quote on two lines", "[inventory: who='Ada\nsays]", "never closed"),
    ("unterminated curly quote", "[inventory: who=“Ada]", "never closed"),
    ("never closed", '[inventory: action="add"\nThe tavern is quiet.', 'closed with "]"'),
    ("bad key", '[inventory: item-name="x"]', "expected"),
    ("two answers", '[inventory: action="add" | ok="true" | x="y"]', "expected"),
    ("unescaped inner quote", '[inventory: text="He said "hi" to me"]', "expected"),
    ("stray equals", '[inventory: ="x"]', "expected"),
    ("bare word then =", "[inventory: add = ]", "expected a quoted value"),
]


@pytest.mark.parametrize(
    ("text", "reason"), [row[1:] for row in MALFORMED], ids=[row[0] for row in MALFORMED]
)
def test_tags_malformed_tag_is_reported_and_the_next_still_parses(text: str, reason: str) -> None:
    """DESIGN Tags: a malformed tag never raises; it carries a one-line reason, no attributes,
    a "malformed" diagnostic on its span, and never swallows the next tag."""
    for fast in (True, False):
        result = scan(text + ' [loot: table="forest"]', fast=fast)
        assert len(result.tags) == 2, result
        broken, loot = result.tags
        assert broken.malformed is not None
        assert "\n" not in broken.malformed
        assert broken.attrs == ()
        assert broken.kind in TAG_KINDS
        assert [(d.code, d.start, d.end, d.message) for d in result.diagnostics] == [
            ("malformed", broken.start, broken.end, broken.malformed)
        ]
        assert loot.malformed is None
        assert loot.attrs == (("table", "forest"),)
        assert reason in broken.malformed


def test_tags_broken_tag_span_stops_before_the_next_tag() -> None:
    """EXTENT: a "[" outside quotes ends a broken tag, trimmed of trailing space."""
    result = scan('[inventory: action="add" item="Rope" [loot: table="x"]')
    assert [tag.raw for tag in result.tags] == [
        '[inventory: action="add" item="Rope"',
        '[loot: table="x"]',
    ]


def test_tags_unclosed_quote_span_runs_to_the_first_bracket_on_its_line() -> None:
    """EXTENT: an unclosed quote stops at its line end; the span ends at the first "]" there."""
    text = '[inventory: item="Rope] and then he left.\nHe said "go". [sighs]'
    (tag,) = scan(text).tags
    assert tag.raw == '[inventory: item="Rope]'


def test_tags_unclosed_quote_does_not_cross_the_next_head() -> None:
    """EXTENT: a quote cannot contain a tag head, so a later tag on the same line survives."""
    text = '[inventory: item="Rope and [loot: table="forest"] more'
    first, second = scan(text).tags
    assert first.malformed is not None
    assert first.raw == '[inventory: item="Rope and'
    assert second.attrs == (("table", "forest"),)


def test_tags_never_closed_span_ends_at_the_line_end() -> None:
    """EXTENT: a tag with no "]" at all spans only the rest of its head's line."""
    (tag,) = scan('Look: [place: name="Inn"   \nThe tavern is quiet.').tags
    assert tag.raw == '[place: name="Inn"'
    assert tag.malformed == 'tag is never closed with "]"'


@pytest.mark.parametrize(
    "text",
    [
        "He [sighs] and waits.",
        "Footnote [1].",
        "[Note: the door is locked]",
        "See [the map](https://example.com/map).",
        "[inventory] is not a head without a colon",
        '[places: name="Inn"]',
        '[loot table: x="y"]',
        "[] [[ ]] [ : ]",
        "",
        "plain prose with no brackets at all",
    ],
)
def test_tags_prose_brackets_are_not_tags(text: str) -> None:
    """DESIGN Tags: brackets without a known name and ":" are prose: no tag, no diagnostic."""
    assert scan(text) == ScanResult((), ())


def test_tags_answered_tag_reads_request_and_answer() -> None:
    """DESIGN Tags, answered tags: request attributes, "|", answer attributes."""
    text = (
        '[inventory: action="pay" amount="3 shillings" who="Ada" | ok="true" '
        'text="Paid with crowns ×1; shillings ×2 back."]'
    )
    result = scan(text)
    tag = _one_tag(result)
    assert tag.attrs == (("action", "pay"), ("amount", "3 shillings"), ("who", "Ada"))
    assert tag.answer == (("ok", "true"), ("text", "Paid with crowns ×1; shillings ×2 back."))
    assert result.diagnostics == ()


def test_tags_bar_inside_quotes_is_text() -> None:
    """Answered tags: a "|" inside quotes does not start the answer."""
    tag = _one_tag(scan('[inventory: text="a | b" | ok="true"]'))
    assert tag.attrs == (("text", "a | b"),)
    assert tag.answer == (("ok", "true"),)


@pytest.mark.parametrize(
    ("text", "attrs", "answer", "codes"),
    [
        ("[loot: | ok='true']", (), (("ok", "true"),), ["single-quotes"]),
        ('[loot: table="x" |]', (("table", "x"),), (), []),
        ('[loot: table="x"|ok="true"]', (("table", "x"),), (("ok", "true"),), ["spaces"]),
        ('[loot: | ok="1" ok="2"]', (), (("ok", "1"),), ["duplicate-attribute"]),
    ],
)
def test_tags_answered_tag_tolerant_forms(
    text: str, attrs: Pairs, answer: Pairs, codes: list[str]
) -> None:
    """Answered tags: the answer part is read with the same tolerance."""
    result = scan(text)
    tag = _one_tag(result)
    assert (tag.attrs, tag.answer) == (attrs, answer)
    assert [d.code for d in result.diagnostics] == codes


def test_tags_spans_slice_the_raw_text() -> None:
    """Tag spans: text[start:end] == raw, for clean, repaired and malformed tags alike."""
    text = (
        'You find rope. [inventory: action="add" item="Rope"] Then [ LOOT : table=forest ]\n'
        "and [place: name=“Inn” [sighs] [inventory: who='Ada'] done."
    )
    result = scan(text)
    assert len(result.tags) == 4
    for tag in result.tags:
        assert text[tag.start : tag.end] == tag.raw
    for diagnostic in result.diagnostics:
        assert 0 <= diagnostic.start <= diagnostic.end <= len(text)


def test_tags_get_returns_the_first_value() -> None:
    """Tag.get: value of a request attribute, default when absent."""
    tag = _one_tag(scan('[inventory: who="Ada" who="Bram" | who="Cid"]'))
    assert tag.get("who") == "Ada"
    assert tag.get("item") is None
    assert tag.get("item", "none") == "none"


def test_tags_to_json() -> None:
    """Tag.to_json: the wire shape replay stores."""
    tag = _one_tag(scan('x [loot: table="forest" | ok="true"]'))
    assert tag.to_json() == {
        "kind": "loot",
        "attrs": {"table": "forest"},
        "raw": '[loot: table="forest" | ok="true"]',
        "answer": {"ok": "true"},
        "span": [2, 36],
        "malformed": None,
    }


def test_an_escaped_bracket_that_looks_like_a_head_stays_inside_its_tag() -> None:
    """Found by hypothesis: `\\[loot:` inside a quoted value must not start a second tag."""
    text = ('You walk on. [place: __="\\[" ________="===\\[\\[" _________="==\\[loot:["]'
            "[inventory:]")
    for fast in (True, False):
        result = scan(text, fast=fast)
        spans = [(t.start, t.end) for t in result.tags]
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
        assert [t.kind for t in result.tags][-1] == "inventory"
    assert scan(text) == scan(text, fast=False)


def test_tags_markdown_escaped_tag_is_read_from_its_bracket() -> None:
    """TOLERATED (issue 28): a tag a model wrote with markdown escapes, ``\\[...\\]``, is the tag
    from its "[" to its "\\]"; the backslash before the head stays prose."""
    text = 'You find rope. \\[inventory: action="add" item="Rope"\\] Onward.'
    for fast in (True, False):
        result = scan(text, fast=fast)
        tag = _one_tag(result)
        assert tag.raw == '[inventory: action="add" item="Rope"\\]'
        assert text[tag.start - 1] == "\\"
        assert tag.attrs == (("action", "add"), ("item", "Rope"))
        assert [d.code for d in result.diagnostics] == ["markdown-escape"]
        (diagnostic,) = result.diagnostics
        assert text[diagnostic.start : diagnostic.end] == "\\]"
