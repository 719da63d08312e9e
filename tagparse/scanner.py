"""Find the tags in GM prose: a head prefilter, the canonical fast path, then the grammar."""

from __future__ import annotations

import re
from typing import Final

from tagparse.canonical import read_canonical
from tagparse.grammar import patterns
from tagparse.model import Diagnostic, ScanResult, Tag
from tagparse.reading import read_span

_LINE_OR_BRACKET: Final = re.compile(r"[\[\]\n\r]")
_LINE_END: Final = re.compile(r"[\n\r]")


def scan(text: str, *, fast: bool = True) -> ScanResult:
    """Read every tag in ``text``, in order, with the repairs made; never raises.

    Each tag head (``[`` known name ``:``) starts exactly one tag. ``fast=False`` reads every
    tag with the grammar, skipping the canonical shortcut; results are the same by contract.
    """
    found = patterns()
    tags: list[Tag] = []
    diagnostics: list[Diagnostic] = []
    for head in found.head.finditer(text):
        start = head.start()
        if fast:
            tag = read_canonical(text, start)
            if tag is not None:
                tags.append(tag)
                continue
        kind = head.group(1).lower()
        extent = found.extent.match(text, head.end())
        if extent is None:
            end, reason = _unclosed(text, start, head.end())
            tags.append(Tag(kind, (), start, end, text[start:end], None, reason))
            diagnostics.append(Diagnostic(start, end, "malformed", reason))
            continue
        end = extent.end()
        raw = text[start:end]
        reading = read_span(raw)
        if reading.malformed is not None:
            tags.append(Tag(kind, (), start, end, raw, None, reading.malformed))
            diagnostics.append(Diagnostic(start, end, "malformed", reading.malformed))
            continue
        tags.append(Tag(reading.kind or kind, reading.attrs, start, end, raw, reading.answer))
        diagnostics.extend(
            Diagnostic(start + first, start + last, code, message)
            for first, last, code, message in reading.diagnostics
        )
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
