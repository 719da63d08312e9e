"""Property tests for the tag reader (conventions: never raises; render ∘ scan is identity;
the canonical fast path agrees with the grammar)."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tagparse import TAG_KINDS, ScanResult, render, render_tag, scan
from tagparse.reading import read_span, read_with_grammar, tokenize

KEYS = st.from_regex(r"[a-z_]{1,12}", fullmatch=True)
PAIRS = st.dictionaries(KEYS, st.text(), max_size=5).map(lambda pairs: tuple(pairs.items()))
KINDS = st.sampled_from(sorted(TAG_KINDS))

# Pieces that exercise the syntax: heads, quotes of every kind, brackets, escapes, line breaks.
PIECES = st.sampled_from(
    [
        "[", "]", '"', "“", "”", "'", "‘", "’", "=", ":", "|", ",", "\\", " ", "\n", "\r", "\t",
        "[inventory:", "[Loot :", "[ place:", "[sighs]", "[Note:", "a", "Ada", "who", "who=",
        'item="', "x y", "×", "\u2028", "\\]", "\\[", "dc=", "DC=14 ", "add ", "advantage",
        "'Rope]", "=+3 hard",
    ]
)  # fmt: skip
SYNTAX_SOUP = st.lists(PIECES | st.text(max_size=3), max_size=60).map("".join)


def _check_invariants(text: str, result: ScanResult) -> None:
    previous_end = 0
    malformed_spans = {(d.start, d.end) for d in result.diagnostics if d.code == "malformed"}
    for tag in result.tags:
        assert text[tag.start : tag.end] == tag.raw
        assert previous_end <= tag.start < tag.end
        previous_end = tag.end
        assert tag.kind in TAG_KINDS
        if tag.malformed is not None:
            assert tag.attrs == () and tag.answer is None
            assert "\n" not in tag.malformed
            assert (tag.start, tag.end) in malformed_spans


@given(st.text() | SYNTAX_SOUP)
@settings(max_examples=300)
def test_tags_scan_never_raises(text: str) -> None:
    """DESIGN Tags: reading never raises on any text; spans slice the text and do not overlap."""
    _check_invariants(text, scan(text))


@given(KINDS, PAIRS, st.none() | PAIRS, st.sampled_from(["", "He nods. ", "[sighs] ", "“Go.” "]))
@settings(max_examples=300)
def test_tags_render_then_scan_is_identity(
    kind: str,
    attrs: tuple[tuple[str, str], ...],
    answer: tuple[tuple[str, str], ...] | None,
    prose: str,
) -> None:
    """CANONICAL FORM: scan(render(...)) gives back exactly the kind, attributes and answer,
    with no diagnostics, for every string value."""
    rendered = render(kind, attrs, answer)
    result = scan(prose + rendered + " " + prose)
    assert result.diagnostics == ()
    (tag,) = result.tags
    assert (tag.kind, tag.attrs, tag.answer, tag.malformed) == (kind, attrs, answer, None)
    assert tag.raw == rendered
    assert render_tag(tag) == rendered


@st.composite
def mutated_transcripts(draw: st.DrawFn) -> str:
    """GM prose with rendered tags, then random edits of the kinds models make."""
    parts: list[str] = []
    for _ in range(draw(st.integers(1, 4))):
        parts.append(draw(st.sampled_from(["", "You walk on. ", "[sighs] ", "He says “hi”.\n"])))
        values = st.text(alphabet=st.sampled_from("ab ×\"\\[]|\n='“"), max_size=8)
        pairs = draw(st.dictionaries(KEYS, values, max_size=3))
        answer = draw(st.none() | st.dictionaries(KEYS, values, max_size=2))
        parts.append(render(draw(KINDS), pairs.items(), None if answer is None else answer.items()))
    text = "".join(parts)
    for _ in range(draw(st.integers(0, 4))):
        if not text:
            break
        at = draw(st.integers(0, len(text) - 1))
        edit = draw(st.sampled_from(["delete", "insert", "swap-quote", "case", "space"]))
        if edit == "delete":
            text = text[:at] + text[at + 1 :]
        elif edit == "insert":
            piece = draw(st.sampled_from(["[", "]", '"', "\n", "\\", "|", ",", "'", "=", "[loot:"]))
            text = text[:at] + piece + text[at:]
        elif edit == "swap-quote":
            text = text.replace('"', draw(st.sampled_from(["“", "”", "'", "‘", "’"])), 1 + at % 3)
        elif edit == "case":
            text = text[:at] + text[at:].upper() if at % 2 else text.title()
        else:
            text = text[:at] + draw(st.sampled_from([" ", "  ", "\n ", "\t"])) + text[at:]
    return text


@given(mutated_transcripts())
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
def test_tags_fast_path_agrees_with_the_grammar(text: str) -> None:
    """The canonical fast path is only a shortcut: with and without it, scan yields exactly the
    same tags and diagnostics, on rendered tags and on mutated ones."""
    fast = scan(text)
    assert fast == scan(text, fast=False)
    _check_invariants(text, fast)


# Tolerant spellings of one attribute value (tags.lark, TOLERATED) and the ways to join them.
WORDS = st.text(alphabet=st.sampled_from("abAB×'’\\[]|:,= "), max_size=6)
BARE_WORDS = st.from_regex(r"[A-Za-z0-9×:'’_.\-]{1,6}( [A-Za-z0-9×'’.]{1,5}){0,2}", fullmatch=True)


@st.composite
def tolerant_values(draw: st.DrawFn) -> str:
    """One value as models write it: quoted every way, bare, with escapes, or slightly broken."""
    style = draw(st.sampled_from(["double", "curly", "single", "curly-single", "bare", "number",
                                  "open", "raw"]))
    word = draw(WORDS)
    if style == "double":
        return '"' + word.replace('"', '\\"') + '"'
    if style == "curly":
        return "“" + word.replace("”", "") + "”"
    if style == "single":
        return "'" + word + "'"
    if style == "curly-single":
        return "‘" + word + "’"
    if style == "bare":
        return draw(BARE_WORDS)
    if style == "number":  # a number, maybe with trailing prose (issue 28)
        return draw(st.from_regex(r"[+-]?[0-9]{1,3}( [a-z(]{1,5}\)?){0,2}", fullmatch=True))
    if style == "open":  # a single quote that never closes (read to the "]" when last)
        return draw(st.sampled_from(["'", "‘"])) + word
    return draw(st.sampled_from(['"', "“", "'", "", '"a\\q"', '"a\\', '"\\[loot:"', "x=y"]))


@st.composite
def tolerant_tags(draw: st.DrawFn) -> str:
    """A tag with the repairs models need: case, spaces, line breaks, commas, repeated keys."""
    space = st.sampled_from(["", " ", "  ", "\t", "\n", " \r\n ", "\u2028", "\xa0"])
    kind = draw(KINDS)
    kind = draw(st.sampled_from([kind, kind.upper(), kind.title()]))
    keys = st.sampled_from(["who", "Who", "ITEM", "item", "count", "_x1", "amount", "dc", "DC",
                            "upgradeown", "dcx"])
    words = st.sampled_from(["add", "advantage", "with advantage", "Remove", "x y", "\\", "2"])
    parts = ["[", draw(space), kind, draw(space), ":"]
    for section in range(draw(st.sampled_from([1, 1, 2, 3]))):
        if section:
            parts += [draw(space), "|"]
        for _ in range(draw(st.integers(0, 3))):
            parts.append(draw(st.sampled_from([" ", "", "  ", "\n"])))
            if draw(st.integers(0, 5)) == 0:  # words without a key (issue 28)
                parts.append(draw(words))
            else:
                parts += [draw(keys), draw(space), "=", draw(space), draw(tolerant_values())]
            parts.append(draw(st.sampled_from(["", "", ",", " ,", ", "])))
    parts += [draw(space), draw(st.sampled_from(["]", "]", "]", "\\]"]))]
    return "".join(parts)


@given(tolerant_tags(), st.sampled_from(["", "He nods. ", "[sighs] ", "“Go.”\n"]))
@settings(max_examples=1500, suppress_health_check=[HealthCheck.too_slow])
def test_tags_regex_reader_agrees_with_the_grammar_on_tolerant_tags(tag: str, prose: str) -> None:
    """TOLERATED: the regex reader gives exactly the grammar's tags and diagnostics, and reads
    every span the grammar reads without a refusal (so Lark is left only malformed spans)."""
    text = prose + tag + " " + prose + '[loot: table="x"]'
    fast = scan(text)
    assert fast == scan(text, fast=False)
    _check_invariants(text, fast)
    for found in fast.tags:
        grammar = read_with_grammar(found.raw)
        assert read_span(found.raw) == grammar
        if grammar.malformed is None:
            assert tokenize(found.raw) is not None, found.raw


@given(st.lists(tolerant_tags() | PIECES, max_size=8)
       .map("".join), st.integers(0, 10**6))
@settings(max_examples=600, suppress_health_check=[HealthCheck.too_slow])
def test_tags_regex_reader_agrees_with_the_grammar_on_mutated_tolerant_text(
    text: str, seed: int
) -> None:
    """The same agreement on tolerant tags run together with syntax pieces and cut anywhere."""
    cut = text[: seed % (len(text) + 1)] + text[seed % (len(text) + 1) + 1 :]
    for sample in (text, cut):
        assert scan(sample) == scan(sample, fast=False)
