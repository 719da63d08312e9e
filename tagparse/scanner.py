"""Find the tags in GM prose: a head prefilter, the canonical fast path, then the span readers."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Final

from tagparse.canonical import CANONICAL_REST, read_pairs
from tagparse.grammar import patterns
from tagparse.model import Diagnostic, ScanResult, Tag
from tagparse.reading import Reading, read_span, read_with_grammar

_LINE_OR_BRACKET: Final = re.compile(r"[\[\]\n\r]")
_LINE_END: Final = re.compile(r"[\n\r]")
_NOTHING: Final = ScanResult((), ())


@cache
def _canonical_or_head() -> re.Pattern[str]:
    """A "[" then a whole canonical tag (groups 1-3), else the rest of a tag head (group
    ``name``). One leading literal "[" lets the regex engine skip prose at full speed."""
    head = patterns().head.pattern
    assert head.startswith(r"\[")
    return re.compile(rf"\[(?:{CANONICAL_REST}|{head[2:]})")


def scan(text: str, *, fast: bool = True) -> ScanResult:
    """Read every tag in ``text``, in order, with the repairs made; never raises.

    Each tag head (``[`` known name ``:``) outside a tag starts exactly one tag; text that
    looks like a head inside a tag's span (an escaped ``\\[`` in a quoted value) is part of
    that tag (tags.lark, EXTENT). ``fast=False`` reads every tag with the grammar, skipping
    the canonical shortcut and the regex reader; the results are the same by contract.
    """
    if "[" not in text:
        return _NOTHING
    found = patterns()
    tags: list[Tag] = []
    diagnostics: list[Diagnostic] = []
    append = tags.append
    search = (_canonical_or_head() if fast else found.head).search
    read: Callable[[str], Reading] = read_span if fast else read_with_grammar
    # Search on from the end of each tag, not of its head: an escaped "\[" inside a quoted
    # value can look like a head ("\[loot:") and must not start a tag inside another one.
    position = 0
    while (head := search(text, position)) is not None:
        if head.lastgroup is None:  # a whole canonical tag matched
            raw, kind, request, answer_source = head.group(0, 1, 2, 3)
            attrs = read_pairs(request)
            answer = None if answer_source is None else read_pairs(answer_source)
            if attrs is not None and (answer is not None or answer_source is None):
                start, position = head.span()
                append(Tag(kind, attrs, start, position, raw, answer))
                continue
            # A repeated key: the readers report it.
            reread = found.head.match(text, head.start())
            assert reread is not None  # every canonical tag begins with a head
            head = reread
        start, body_start = head.span()
        kind = head.group("name").lower()
        extent = found.extent.match(text, body_start)
        if extent is None:
            end, reason = _unclosed(text, start, body_start)
            append(Tag(kind, (), start, end, text[start:end], None, reason))
            diagnostics.append(Diagnostic(start, end, "malformed", reason))
            position = max(end, body_start)
            continue
        end = extent.end()
        position = max(end, body_start)
        raw = text[start:end]
        reading = read(raw)
        if reading.malformed is not None:
            append(Tag(kind, (), start, end, raw, None, reading.malformed))
            diagnostics.append(Diagnostic(start, end, "malformed", reading.malformed))
            continue
        append(Tag(reading.kind or kind, reading.attrs, start, end, raw, reading.answer))
        diagnostics.extend(
            Diagnostic(start + first, start + last, code, message)
            for first, last, code, message in reading.diagnostics
        )
    if not tags:
        return _NOTHING
    return ScanResult(tuple(tags), tuple(diagnostics))


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
