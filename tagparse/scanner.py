"""Find the tags in GM prose: a head prefilter, the canonical fast path, then the span readers."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import cache
from typing import Final

from tagparse.canonical import DISTINCT_CANONICAL_REST
from tagparse.grammar import TAG_KINDS, patterns
from tagparse.model import Diagnostic, ScanResult, Tag
from tagparse.reading import Reading, read_span, read_with_grammar

CShortcut = Callable[[str, int, list[Tag], type[Tag], tuple[str, ...], bytes], int]


def _c_shortcut() -> CShortcut | None:
    """The canonical shortcut in C (tagparse/_scan.c), built by ``pip install`` where a C
    compiler is at hand; else None, and the regex alone finds the same tags."""
    try:
        from tagparse._scan import scan_canonical
    except ImportError:  # pragma: no cover - tests/tagparse/test_tag_c_shortcut.py
        return None
    return scan_canonical


scan_canonical = _c_shortcut()

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


@cache
def _head() -> re.Pattern[str]:
    """A tag head with, when the tag closes, the rest of its extent (group ``name``: the
    name as written): what the shortcut-or-head regex matches where no canonical tag is."""
    found = patterns()
    return re.compile(rf"{found.head.pattern}(?:{found.extent.pattern})?+")


@cache
def _kinds_and_starts() -> tuple[tuple[str, ...], bytes]:
    """The kinds for the C shortcut, and per ASCII character whether a "[" followed by it
    might start a tag head: the head regex itself decides, on "[" then the character then the
    rest of each kind's name (or the whole name, after white space)."""
    kinds = tuple(sorted(TAG_KINDS))
    head = patterns().head
    starts = bytes(
        any(
            head.match(f"[{character}{kind[1:]}:") or head.match(f"[{character}{kind}:")
            for kind in kinds
        )
        for character in map(chr, range(128))
    )
    return kinds, starts


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
    """The shortcut for canonical tags (in C where built), the regex reader (else the
    grammar) for the rest."""
    if scan_canonical is None:
        _scan_regex(text, tags, diagnostics)
        return
    kinds, starts = _kinds_and_starts()
    match = _head().match
    position = 0
    # The C shortcut takes the canonical tags and skips brackets that cannot open a tag; it
    # stops at any other "[" that might, where no canonical tag starts: the head regex reads it.
    while (position := scan_canonical(text, position, tags, Tag, kinds, starts)) >= 0:
        found = match(text, position)
        position = position + 1 if found is None else _read(text, found, tags, diagnostics)


def _scan_regex(text: str, tags: list[Tag], diagnostics: list[Diagnostic]) -> None:
    """The shortcut for canonical tags and the head prefilter as one regex, in Python."""
    append = tags.append
    new = tuple.__new__
    finditer = _shortcut_or_head().finditer
    # Each match ends where its tag ends, so the search goes on from the end of each tag, not
    # of its head: an escaped "\[" inside a quoted value can look like a head ("\[loot:") and
    # must not start a tag inside another one. Only an unclosed tag reaches past its match.
    position = 0
    while True:
        for found in finditer(text, position):
            kind = found[1]
            if kind is not None:  # canonical: its attributes are read from raw when asked for
                start, end = found.span()
                append(new(Tag, (kind, None, start, end, found[0], None, None)))
                continue
            position = _read(text, found, tags, diagnostics)
            if position > found.end():
                break
        else:
            return


def _read(text: str, found: re.Match[str], tags: list[Tag], diagnostics: list[Diagnostic]) -> int:
    """Add the tag whose head (and, when it closes, extent) is ``found``, a match with a
    group ``name`` that is no canonical tag; where the search goes on."""
    start, end = found.span()
    raw = found[0]
    if raw[-1] != "]":  # the head's tag does not close
        return _add_unclosed(text, tags, diagnostics, found["name"].lower(), start, end)
    _add(tags, diagnostics, found["name"].lower(), start, raw, read_span(raw))
    return end


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
    end, reason, resume = _unclosed(text, start, body_start)
    tags.append(Tag(kind, (), start, end, text[start:end], None, reason))
    diagnostics.append(Diagnostic(start, end, "malformed", reason))
    return max(end, body_start, resume)


def _unclosed(text: str, start: int, body_start: int) -> tuple[int, str, int]:
    """Span end and reason for a tag with no closing "]" (tags.lark, EXTENT), and where the
    search for the next head goes on."""
    found = patterns()
    stop = found.body.match(text, body_start)
    assert stop is not None  # the body pattern matches the empty string
    at = stop.end()
    if at < len(text) and text[at] == "[":
        end = _trim(text, body_start, at)
        reason = f'tag is not closed with "]" before the next "[" at column {at - start + 1}'
        return end, reason, end
    if at < len(text):  # a quote that cannot close on its line
        bound = _LINE_OR_BRACKET.search(text, at + 1)
        if bound is None:
            end = _trim(text, body_start, len(text))
        elif text[bound.start()] == "]":
            end = bound.end()
        else:
            end = _trim(text, body_start, bound.start())
        # The text the broken value runs over is not read for tags: any head in it is escaped
        # ("\[loot:"; an unescaped one ends the value). Reading on inside it made each such
        # head walk the rest of the value again: quadratic time on a line of them.
        value = found.open_value.match(text, at)
        assert value is not None  # the quote at ``at`` opens a value that does not close
        return end, f"quote at column {at - start + 1} of the tag is never closed", value.end()
    line_end = _LINE_END.search(text, body_start)
    end = _trim(text, body_start, len(text) if line_end is None else line_end.start())
    return end, 'tag is never closed with "]"', end


def _trim(text: str, floor: int, end: int) -> int:
    """``end`` moved back over trailing white space, but not before ``floor``."""
    while end > floor and text[end - 1].isspace():
        end -= 1
    return end
