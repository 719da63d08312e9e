"""Scanning stays linear on adversarial text (grammars/tags.lark, EXTENT).

No clock: each case checks the structural bound that makes scanning linear -- the grammar only
ever sees disjoint spans, so it reads each character at most once -- and simply has to finish.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import tagparse.grammar
import tagparse.reading
from tagparse import scan

SIZE = 100_000


def _repeat(piece: str) -> str:
    return piece * (SIZE // len(piece))


ADVERSARIAL: dict[str, str] = {
    "open brackets": _repeat("["),
    "double quotes": _repeat('"'),
    "heads": _repeat("[inventory:"),
    "heads with spaces": _repeat("[ loot :"),
    "open quotes": _repeat('[inventory: a="'),
    "open single quotes": _repeat("[inventory: a='"),
    "open curly quotes": _repeat("[inventory: a=“"),
    "quote then brackets": '[inventory: a="' + _repeat("["),
    "quote then fake heads": '[inventory: a="' + _repeat("[x:"),
    "one long bare word": "[inventory: a=" + _repeat("b") + "]",
    "long bare value of words": "[inventory: a=" + _repeat("b ") + "]",
    "bare value then spaces": "[inventory: a=x" + _repeat(" ") + "]",
    "spaces then no colon": "[" + _repeat(" "),
    "apostrophes in single quotes": "[inventory: a='" + _repeat("'x") + "]",
    "escapes": '[inventory: a="' + _repeat("\\") + "]",
    "one huge valid tag": "[inventory: " + _repeat('a="b" ') + "]",
    "many clean tags": _repeat('[loot: table="forest"] '),
    "many tolerant tags": _repeat("[loot: table=forest] "),
    "unclosed tags over lines": _repeat('[place: name="Inn\n'),
    "prose brackets": _repeat("[sighs] [Note: x] [a](b) "),
    # issue 28: words without a key, numbers before prose, open quotes, markdown escapes
    "long words without a key": "[inventory: " + _repeat("add ") + "]",
    "words then a key far away": "[inventory: " + _repeat("w ") + "a=1]",
    "number key then prose": "[skill_check: dc=1" + _repeat(" with advantage") + "]",
    "many number keys": "[skill_check: " + _repeat("dc=1 x ") + "]",
    "open single quote to the end": "[inventory: a='" + _repeat("x ") + "]",
    "open quote of backslashes": "[inventory: a='" + _repeat("\\") + "\\]",
    "markdown escapes": _repeat('\\[loot: table=x\\] '),
    "bare backslashes": "[inventory: a=" + _repeat("\\ ") + "\\]",
}


@pytest.fixture
def parsed_characters(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    """Record the length of every span handed to the Lark parser."""
    lengths: list[int] = []
    real = tagparse.grammar.parser()

    class Counting:
        def parse(self, span: str) -> object:
            lengths.append(len(span))
            return real.parse(span)

    tagparse.reading.tokenize("[loot:]")  # the regex reader's patterns come from the real parser
    monkeypatch.setattr(tagparse.reading, "parser", Counting)
    tagparse.reading.read_span.cache_clear()
    tagparse.reading.read_with_grammar.cache_clear()
    yield lengths
    tagparse.reading.read_span.cache_clear()
    tagparse.reading.read_with_grammar.cache_clear()


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_tags_scan_is_linear_on_adversarial_text(text: str, parsed_characters: list[int]) -> None:
    """EXTENT: spans are disjoint, so the grammar reads at most len(text) characters in total."""
    result = scan(text, fast=False)
    assert sum(parsed_characters) <= len(text)
    assert sum(len(tag.raw) for tag in result.tags) <= len(text)
    ends = [(tag.start, tag.end) for tag in result.tags]
    assert all(end <= start for (_, end), (start, _) in itertools.pairwise(ends))


@pytest.mark.parametrize("text", ADVERSARIAL.values(), ids=ADVERSARIAL.keys())
def test_tags_fast_scan_is_linear_and_agrees_on_adversarial_text(
    text: str, parsed_characters: list[int]
) -> None:
    """EXTENT: the fast path (canonical shortcut, regex reader) reads the same disjoint spans,
    hands the grammar at most what is left, and gives exactly the grammar's result."""
    result = scan(text)
    assert sum(parsed_characters) <= len(text)
    assert result == scan(text, fast=False)


def _body_with_every_attempt() -> re.Pattern[str]:
    """The extent's body as first written: a single-quoted value tried after every "=",
    however often the same dead end had been walked (quadratic on a line of ``a='x``)."""
    lark = tagparse.grammar.parser()

    def terminal(name: str) -> str:
        return lark.get_terminal(name).pattern.to_regexp()

    double = f"{terminal('DQ_STRING')}|{terminal('CDQ_STRING')}"
    single = f"{terminal('SQ_STRING')}|{terminal('CSQ_STRING')}"
    return re.compile(rf"(?:{double}|=\s*+(?:{single})?|[^\[\]\"“=]++)*+")


BODY_PIECES = st.sampled_from(
    ["'", "‘", "’", '"', "“", "”", "=", " ", "  ", "\n", "\r", "\t", "\u2028", "\\", "[", "]",
     "[loot:", "\\[loot:", "[ x :", "a", "x y", ",", "|", "='", "=‘", "= '", "=\n'", "\\\""]
)  # fmt: skip


@given(st.lists(BODY_PIECES, max_size=40).map("".join))
@settings(max_examples=1500)
# A single-quoted value that cannot close, then one that can and holds a "]": after an escaped
# head in a double-quoted value, after a line break, after "=" and a line break; the other
# kind of single quote inside the dead one's reach.
@example("""a='x "\\[loot:" b='y]z' ]""")
@example("a='x\n b='y]' ]")
@example("a='x b= \n'y]' ]")
@example("a='x b=‘y]’ ]")
@example("a=‘x b='y]' ]")
@example("a='x b=‘y c='z d=‘w ]")
def test_tags_extent_body_reads_as_with_every_attempt(text: str) -> None:
    """EXTENT: the body that skips single-quoted values known not to close reaches exactly
    where the body that tries each one reaches, from every position of any text."""
    reference = _body_with_every_attempt()
    body = tagparse.grammar.patterns().body
    for start in range(len(text) + 1):
        expected = reference.match(text, start)
        found = body.match(text, start)
        assert expected is not None and found is not None
        assert found.end() == expected.end(), (text, start)


RUNAWAY_QUOTES = {
    "single quotes after equals": "[inventory: " + _repeat("a='x "),
    "single quotes after equals, closed": "[inventory: " + _repeat("a='x ") + "]",
    "curly single quotes after equals": "[inventory: " + _repeat("a=‘x "),
    "both single quotes after equals": "[inventory: " + _repeat("a='x b=‘y "),
    "escaped heads in an open quote": '[inventory: a="' + _repeat('\\[inventory: a=\\"'),
    "escaped heads in open quotes, closed": _repeat('[loot: a="\\[loot: b=\\"') + "]",
}


@pytest.mark.parametrize("text", RUNAWAY_QUOTES.values(), ids=RUNAWAY_QUOTES.keys())
def test_tags_scan_is_linear_on_quotes_that_never_close(text: str) -> None:
    """EXTENT: a quoted value that never closes is walked once. Each of these took seconds
    (quadratic: every later "='" or escaped head walked the rest of the line again); the
    structural check is that the text is one tag, or one per unescaped head."""
    result = scan(text)
    assert result == scan(text, fast=False)
    unescaped_heads = text.count("[") - text.count("\\[")
    assert len(result.tags) == unescaped_heads
