"""The scanner's canonical shortcut in C (tagparse/_scan.c) against the regex it stands for.

CANONICAL FORM (tags.lark): the C reader takes exactly the tags the shortcut regex
(``tagparse.canonical.DISTINCT_CANONICAL_REST``) takes — canonical, no key twice in a section,
at most eight attributes a section — and leaves every other "[" that might open a tag to the
regex. So ``scan`` with it, with the regex alone, and with the grammar alone give the same
tags and diagnostics, on any text, in strings of every width.
"""

from __future__ import annotations

import gc
import pickle
from collections.abc import Iterator

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_tag_properties import PAIRS, SYNTAX_SOUP, mutated_transcripts, tolerant_tags

import tagparse.scanner
from tagparse import TAG_KINDS, ScanResult, Tag, render, scan
from tagparse.model import Diagnostic

KINDS = tuple(sorted(TAG_KINDS))


def _scan_with_regex(text: str) -> ScanResult:
    """scan's fast path with the regex shortcut in place of the C one."""
    tags: list[Tag] = []
    diagnostics: list[Diagnostic] = []
    tagparse.scanner._scan_regex(text, tags, diagnostics)
    return ScanResult(tuple(tags), tuple(diagnostics))


def _agree(text: str) -> ScanResult:
    """The C shortcut, the regex shortcut and the grammar read ``text`` alike."""
    fast = scan(text)
    assert fast == _scan_with_regex(text)
    assert fast == scan(text, fast=False)
    return fast


def test_c_shortcut_is_built() -> None:
    """The project's install (scripts/test, pip install) builds tagparse/_scan.c; without a C
    compiler the regex reads the same tags, only slower (benchmarks/scan.py)."""
    assert tagparse.scanner.scan_canonical is not None, "tagparse._scan was not built"


@pytest.fixture
def without_c(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setattr(tagparse.scanner, "scan_canonical", None)
    yield


# Each is read by the C shortcut, or left by it to the regex, as DISTINCT_CANONICAL_REST says.
EDGES = {
    "no attributes": "[loot:]",
    "empty answer": '[loot: table="x" |]',
    "answer only": "[loot: | ok=\"true\"]",
    "eight attributes": "[loot: " + " ".join(f'k{i}="v"' for i in range(8)) + "]",
    "nine attributes": "[loot: " + " ".join(f'k{i}="v"' for i in range(9)) + "]",
    "eight and eight": "[loot: " + " ".join(f'k{i}="v"' for i in range(8)) + " |"
    + "".join(f' a{i}="w"' for i in range(8)) + "]",
    "nine in the answer": "[loot: a=\"1\" |" + "".join(f' a{i}="w"' for i in range(9)) + "]",
    "repeated key": '[inventory: item="a" item="b"]',
    "repeated key in the answer": '[inventory: item="a" | ok="1" ok="2"]',
    "key in request and answer": '[inventory: ok="a" | ok="b"]',
    "key that starts another": '[inventory: item="a" item_x="b" items="c"]',
    "every escape": r'[place: name="a\\b\"c\[d\]e\nf\rg"]',
    "unknown escape": r'[place: name="a\qb"]',
    "backslash at the end": '[place: name="a\\',
    "bracket and bar in a value": '[place: name="a]b|c ]"]',
    "open bracket in a value": '[place: name="a[b"]',
    "escaped head in a value": r'[place: name="\[loot: x=\"1\"]"] [loot:]',
    "line break in a value": '[place: name="a\nb"]',
    "unicode in a value": '[place: name="Ærø ×3 “hi” 🐉"]',
    "upper-case kind": '[Loot: table="x"]',
    "upper-case key": '[loot: Table="x"]',
    "space before colon": '[loot : table="x"]',
    "two spaces": '[loot:  table="x"]',
    "space before close": '[loot: table="x" ]',
    "bar without space": '[loot: table="x"|]',
    "digit key": '[loot: 1a="x"]',
    "kind prefix": '[lootx: table="x"] [sheetx:] [inventor:]',
    "unclosed at the end": '[loot: table="x"',
    "bracket at the end": "prose [",
    "bracket then letter at the end": "prose [l",
    "kind at the end": "[loot",
    "kind and colon at the end": "[loot:",
    "stray brackets": "[sighs] [1] [Note: x] [a](b) [ loot:] [\tloot:] [\u2028loot:]",
    "long s and kelvin": "[ſheet:] [ſkill_check:] [\u212aind:] [İnventory:]",
    "tags back to back": '[loot:][loot: a="1"][place: name="x"]',
    "canonical then tolerant": '[loot: a="1"] [loot: a=1] [loot: a="1"]',
    # What models write besides (issue 28): never canonical, so always left to the regex.
    "words without a key": '[inventory: add item="Rope"] [skill_check: dc="1" advantage]',
    "a number key's bare value": "[skill_check: skill=Ward dc=14 with advantage]",
    "an unclosed single quote": "[inventory: action='add' item='Rope] [loot:]",
    "markdown escapes": '\\[loot: table="x"\\] \\[loot:]',
    "an escaped close in a value": r'[place: name="a\]"\]',
    "the template": '[inventory: action="add | remove" item="Item A, Item B"]',
}


@pytest.mark.parametrize("text", EDGES.values(), ids=EDGES.keys())
@pytest.mark.parametrize("width", ["", "é", "ĉ", "🐉"], ids=["ascii", "ucs1", "ucs2", "ucs4"])
def test_c_shortcut_reads_edge_cases_as_the_regex_does(text: str, width: str) -> None:
    """CANONICAL FORM: each edge case, in a string of each width (the C reader has one
    matcher per width), gives the regex's and the grammar's tags and diagnostics."""
    for sample in (width + text + width, text + width, width + " " + text):
        _agree(sample)


def test_c_shortcut_takes_exactly_the_distinct_canonical_tags() -> None:
    """Which tags the C reader itself took (stored without attributes, read on first use)
    and which it left to the regex reader."""
    text = "".join(EDGES.values())
    taken = {tag.raw for tag in scan(text).tags if tuple.__getitem__(tag, 1) is None}
    assert EDGES["eight attributes"] in taken and EDGES["eight and eight"] in taken
    assert EDGES["every escape"] in taken and EDGES["key in request and answer"] in taken
    for left in ("nine attributes", "nine in the answer", "repeated key", "unknown escape",
                 "repeated key in the answer", "upper-case kind", "two spaces"):
        assert EDGES[left] not in taken, left


@given(SYNTAX_SOUP | st.text())
@settings(max_examples=400)
def test_c_shortcut_agrees_on_syntax_soup(text: str) -> None:
    """Any text: the C shortcut, the regex and the grammar agree."""
    _agree(text)


@given(mutated_transcripts(), st.sampled_from(["", "é", "ĉ", "🐉"]))
@settings(max_examples=400, suppress_health_check=[HealthCheck.too_slow])
def test_c_shortcut_agrees_on_mutated_transcripts(text: str, width: str) -> None:
    """Rendered tags cut, quoted and cased the ways models do, in strings of each width."""
    _agree(width + text)


@given(st.lists(tolerant_tags() | st.builds(render, st.sampled_from(KINDS), PAIRS), max_size=6)
       .map(" ".join))
@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow])
def test_c_shortcut_agrees_on_canonical_and_tolerant_tags(text: str) -> None:
    """Canonical tags (any string values) between tolerant ones."""
    _agree(text)


@given(mutated_transcripts())
@settings(max_examples=200, suppress_health_check=[HealthCheck.too_slow])
def test_scan_without_the_c_shortcut_agrees_with_the_grammar(text: str) -> None:
    """Where the extension is not built, scan uses the regex shortcut: same results."""
    with_c = scan(text)
    tagparse.scanner.scan_canonical, saved = None, tagparse.scanner.scan_canonical
    try:
        assert scan(text) == with_c == scan(text, fast=False)
    finally:
        tagparse.scanner.scan_canonical = saved


def test_c_tags_are_plain_values() -> None:
    """A tag the C reader made equals, hashes, pickles and reads like the regex's, and the
    cycle collector does not walk it (it holds strings and integers only)."""
    text = 'Ada pays. [inventory: action="pay" amount="3 shillings" | ok="true"] [loot: a=1]'
    c_tags, regex_tags = scan(text).tags, _scan_with_regex(text).tags
    assert c_tags == regex_tags
    assert [hash(tag) for tag in c_tags] == [hash(tag) for tag in regex_tags]
    assert pickle.loads(pickle.dumps(c_tags)) == regex_tags
    assert c_tags[0].attrs == (("action", "pay"), ("amount", "3 shillings"))
    assert c_tags[0].answer == (("ok", "true"),)
    assert type(c_tags[0]) is Tag and not gc.is_tracked(c_tags[0])


@pytest.mark.parametrize(
    "args",
    [
        (),
        ("[loot:]", 0, [], Tag, KINDS),
        (b"[loot:]", 0, [], Tag, KINDS, bytes(128)),
        ("[loot:]", "0", [], Tag, KINDS, bytes(128)),
        ("[loot:]", 0, (), Tag, KINDS, bytes(128)),
        ("[loot:]", 0, [], dict, KINDS, bytes(128)),
        ("[loot:]", 0, [], type("WithDict", (tuple,), {}), KINDS, bytes(128)),
        ("[loot:]", 0, [], Tag, list(KINDS), bytes(128)),
        ("[loot:]", 0, [], Tag, ("lööt",), bytes(128)),
        ("[loot:]", 0, [], Tag, (1,), bytes(128)),
        ("[loot:]", 0, [], Tag, KINDS, bytes(127)),
    ],
)
def test_c_shortcut_refuses_wrong_arguments(args: tuple[object, ...]) -> None:
    """A wrong call is a TypeError, never a crash."""
    c_shortcut = tagparse.scanner.scan_canonical
    assert c_shortcut is not None
    with pytest.raises(TypeError):
        c_shortcut(*args)  # type: ignore[arg-type]


@pytest.mark.parametrize("position", [-5, 0, 3, 7, 8, 10**6])
def test_c_shortcut_positions(position: int) -> None:
    """From any position: a negative one is the start; at or past the end there is nothing."""
    c_shortcut = tagparse.scanner.scan_canonical
    assert c_shortcut is not None
    kinds, starts = tagparse.scanner._kinds_and_starts()
    tags: list[Tag] = []
    found = c_shortcut("[loot:] [Loot:]", position, tags, Tag, kinds, starts)
    assert found == (8 if position <= 8 else -1)
    assert [tag.raw for tag in tags] == (["[loot:]"] if position <= 0 else [])


def test_the_head_starts_table_follows_the_head_regex() -> None:
    """The C reader stops at "[" then white space or a letter a kind name starts with, in any
    case; the table comes from the head regex itself."""
    _, starts = tagparse.scanner._kinds_and_starts()
    allowed = {chr(code) for code in range(128) if starts[code]}
    firsts = {kind[0] for kind in TAG_KINDS}
    assert allowed == firsts | {c.upper() for c in firsts} | {c for c in allowed if c.isspace()}
    assert {" ", "\t", "\n", "\r", "\x0b", "\x0c", "\x1c"} <= allowed


def test_without_c_fixture_scans(without_c: None) -> None:
    """The regex alone reads canonical tags lazily, as the C reader does."""
    (tag,) = scan('[loot: table="forest"]').tags
    assert tuple.__getitem__(tag, 1) is None and tag.attrs == (("table", "forest"),)
