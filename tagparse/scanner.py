"""Find the tags in GM prose: a head prefilter, the canonical fast path, then the span readers."""

from __future__ import annotations

import re
from functools import cache
from typing import Final

from tagparse.canonical import DISTINCT_CANONICAL_REST
from tagparse.grammar import patterns
from tagparse.model import Diagnostic, ScanResult, Tag
from tagparse.reading import Reading, read_span, read_with_grammar

_LINE_OR_BRACKET: Final = re.compile(r"[\[\]\n\r]")
_LINE_END: Final = re.compile(r"[\n\r]")
_NOTHING: Final = ScanResult((), ())


@cache
def _shortcut_or_head() -> re.Pattern[str]:
    """A "[" then either a whole canonical tag that reads without a diagnostic (group 1: its
    kind) or a tag head (group ``name``) with, when the tag closes, the rest of its extent.
    One leading literal "[" lets the regex engine skip prose at full speed."""
    found = patterns()
    head = found.head.pattern
    assert head.startswith(r"\[")
    return re.compile(rf"\[(?:{DISTINCT_CANONICAL_REST}|{head[2:]}(?:{found.extent.pattern})?+)")


def scan(text: str, *, fast: bool = True) -> ScanResult:
    """Read every tag in ``text``, in order, with the repairs made; never raises.

    Each tag head (``[`` known name ``:``) outside a tag starts exactly one tag; text that
    looks like a head inside a tag's span (an escaped ``\\[`` in a quoted value) is part of
    that tag (tags.lark, EXTENT). ``fast=False`` reads every tag with the grammar, skipping
    the canonical shortcut and the regex reader; the results are the same by contract.
    """
    if "[" not in text:
        return _NOTHING
    tags: list[Tag] = []
    diagnostics: list[Diagnostic] = []
    if fast:
        _scan_fast(text, tags, diagnostics)
    else:
        _scan_with_grammar(text, tags, diagnostics)
    if not tags:
        return _NOTHING
    return ScanResult(tuple(tags), tuple(diagnostics))


def _scan_fast(text: str, tags: list[Tag], diagnostics: list[Diagnostic]) -> None:
    """The shortcut for canonical tags, the regex reader (else the grammar) for the rest."""
    append = tags.append
    new = tuple.__new__
    finditer = _shortcut_or_head().finditer
    # Each match ends where its tag ends, so the search goes on from the end of each tag, not
    # of its head: an escaped "\[" inside a quoted value can look like a head ("\[loot:") and
    # must not start a tag inside another one. Only an unclosed tag reaches past its match.
    position = 0
    while True:
        for match in finditer(text, position):
            kind = match[1]
            if kind is not None:  # canonical: its attributes are read from raw when asked for
                start, end = match.span()
                append(new(Tag, (kind, None, start, end, match[0], None, None)))
                continue
            start, end = match.span()
            raw = match[0]
            if raw[-1] == "]":  # the head's tag closes: the regex reader, else the grammar
                reading = read_span(raw)
                if reading.kind is None:
                    _add(tags, diagnostics, match["name"].lower(), start, raw, reading)
                    continue
                append(
                    new(Tag, (reading.kind, reading.attrs, start, end, raw, reading.answer, None))
                )
                if reading.diagnostics:
                    diagnostics += [
                        new(Diagnostic, (start + first, start + last, code, message))
                        for first, last, code, message in reading.diagnostics
                    ]
                continue
            position = _add_unclosed(text, tags, diagnostics, match["name"].lower(), start, end)
            if position > end:
                break
        else:
            return


def _scan_with_grammar(text: str, tags: list[Tag], diagnostics: list[Diagnostic]) -> None:
    """Every tag read by the Lark grammar alone: what the shortcuts must agree with."""
    found = patterns()
    position = 0
    while (head := found.head.search(text, position)) is not None:
        start, body_start = head.span()
        kind = head.group("name").lower()
        extent = found.extent.match(text, body_start)
        if extent is None:
            position = _add_unclosed(text, tags, diagnostics, kind, start, body_start)
            continue
        position = extent.end()
        raw = text[start:position]
        _add(tags, diagnostics, kind, start, raw, read_with_grammar(raw))


def _add(
    tags: list[Tag],
    diagnostics: list[Diagnostic],
    kind: str,
    start: int,
    raw: str,
    reading: Reading,
) -> None:
    """Add the tag at ``start`` read as ``reading``, with its diagnostics."""
    end = start + len(raw)
    new = tuple.__new__
    if reading.malformed is not None:
        tags.append(new(Tag, (kind, (), start, end, raw, None, reading.malformed)))
        diagnostics.append(new(Diagnostic, (start, end, "malformed", reading.malformed)))
        return
    tags.append(
        new(Tag, (reading.kind or kind, reading.attrs, start, end, raw, reading.answer, None))
    )
    diagnostics += [
        new(Diagnostic, (start + first, start + last, code, message))
        for first, last, code, message in reading.diagnostics
    ]


def _add_unclosed(
    text: str,
    tags: list[Tag],
    diagnostics: list[Diagnostic],
    kind: str,
    start: int,
    body_start: int,
) -> int:
    """Add the malformed tag whose head spans ``start:body_start`` and that never closes;
    where the search goes on."""
    end, reason = _unclosed(text, start, body_start)
    tags.append(Tag(kind, (), start, end, text[start:end], None, reason))
    diagnostics.append(Diagnostic(start, end, "malformed", reason))
    return max(end, body_start)


def _unclosed(text: str, start: int, body_start: int) -> tuple[int, str]:
    """Span end and reason for a tag with no closing "]" (tags.lark, EXTENT)."""
    stop = patterns().body.match(text, body_start)
    assert stop is not None  # the body pattern matches the empty string
    at = stop.end()
    if at < len(text) and text[at] == "[":
        end = _trim(text, body_start, at)
        return end, f'tag is not closed with "]" before the next "[" at column {at - start + 1}'
    if at < len(text):  # a quote that cannot close on its line
        bound = _LINE_OR_BRACKET.search(text, at + 1)
        if bound is None:
            end = _trim(text, body_start, len(text))
        elif text[bound.start()] == "]":
            end = bound.end()
        else:
            end = _trim(text, body_start, bound.start())
        return end, f"quote at column {at - start + 1} of the tag is never closed"
    line_end = _LINE_END.search(text, body_start)
    end = _trim(text, body_start, len(text) if line_end is None else line_end.start())
    return end, 'tag is never closed with "]"'


def _trim(text: str, floor: int, end: int) -> int:
    """``end`` moved back over trailing white space, but not before ``floor``."""
    while end > floor and text[end - 1].isspace():
        end -= 1
    return end
