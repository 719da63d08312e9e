"""Scanning stays linear on adversarial text (grammars/tags.lark, EXTENT).

No clock: each case checks the structural bound that makes scanning linear -- the grammar only
ever sees disjoint spans, so it reads each character at most once -- and simply has to finish.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import pytest

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
