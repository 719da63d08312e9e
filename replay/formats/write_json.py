"""Rewrite string values inside JSON text without re-serialising anything else.

The writers of answered chats (``write_gmtags``, ``write_sillytavern``, ``write_openai``) change
only the tag spans inside a message's text. Rather than re-serialising the changed object (which
would reformat numbers, key spacing and escapes the other tool chose), they splice: find the raw
JSON string token of the value, map positions in the decoded string to positions in the token,
and replace only the raw bytes of each tag span. Everything outside the spans stays
byte-identical, whichever JSON writer produced the file (SillyTavern writes
``chat.map(JSON.stringify).join('\\n')``: compact, non-ASCII unescaped).
"""

from __future__ import annotations

import json
import json.decoder
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

_DECODER = json.JSONDecoder(strict=False)
_WHITESPACE = " \t\n\r"
# The C string scanner json itself uses (typeshed does not list it): (text, end, strict).
scanstring: Final[Callable[[str, int, bool], tuple[str, int]]] = (
    json.decoder.scanstring  # type: ignore[attr-defined]
)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` of a message's decoded text with ``replacement``."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class MessageEdits:
    """The edits of one message: the text they apply to and the selected swipe's index.

    ``swipe`` is the index in ``swipes`` of the shown swipe; that swipe is rewritten too when its
    text equals ``text`` (otherwise it is left alone: the spans would not fit it).
    """

    text: str
    edits: tuple[Edit, ...]
    swipe: int | None = None

    def apply(self) -> str:
        """The message text with every edit made."""
        return apply_edits(self.text, self.edits)


def apply_edits(text: str, edits: Sequence[Edit]) -> str:
    """``text`` with each (non-overlapping) edit made."""
    parts: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda item: item.start):
        parts += (text[at:edit.start], edit.replacement)
        at = edit.end
    parts.append(text[at:])
    return "".join(parts)


class NotJson(ValueError):
    """The raw text is not the JSON shape the writer expected; the message is left alone."""


def skip_space(source: str, at: int) -> int:
    while at < len(source) and source[at] in _WHITESPACE:
        at += 1
    return at


def value_end(source: str, at: int) -> int:
    """The end of the JSON value that starts at ``at``."""
    try:
        _, end = _DECODER.raw_decode(source, at)
    except (ValueError, RecursionError) as error:
        raise NotJson(str(error)) from None
    return int(end)


def members(source: str, at: int) -> Iterator[tuple[str, int, int]]:
    """(key, value start, value end) of each member of the object starting at ``at``."""
    at = skip_space(source, at)
    if source[at:at + 1] != "{":
        raise NotJson("not an object")
    at = skip_space(source, at + 1)
    if source[at:at + 1] == "}":
        return
    while True:
        if source[at:at + 1] != '"':
            raise NotJson("expected a key")
        try:
            key, at = scanstring(source, at + 1, False)
        except ValueError as error:
            raise NotJson(str(error)) from None
        at = skip_space(source, at)
        if source[at:at + 1] != ":":
            raise NotJson("expected ':'")
        start = skip_space(source, at + 1)
        end = value_end(source, start)
        yield key, start, end
        at = skip_space(source, end)
        if source[at:at + 1] == ",":
            at = skip_space(source, at + 1)
            continue
        if source[at:at + 1] == "}":
            return
        raise NotJson("expected ',' or '}'")


def member(source: str, at: int, key: str) -> tuple[int, int] | None:
    """The value span of ``key`` in the object at ``at``; the last one wins, as in ``json``."""
    found = None
    for name, start, end in members(source, at):
        if name == key:
            found = (start, end)
    return found


def items(source: str, at: int) -> Iterator[tuple[int, int]]:
    """(start, end) of each element of the array starting at ``at``."""
    at = skip_space(source, at)
    if source[at:at + 1] != "[":
        raise NotJson("not an array")
    at = skip_space(source, at + 1)
    if source[at:at + 1] == "]":
        return
    while True:
        end = value_end(source, at)
        yield at, end
        at = skip_space(source, end)
        if source[at:at + 1] == ",":
            at = skip_space(source, at + 1)
            continue
        if source[at:at + 1] == "]":
            return
        raise NotJson("expected ',' or ']'")


def item(source: str, at: int, index: int) -> tuple[int, int] | None:
    """The span of element ``index`` of the array at ``at``, or None when it has fewer."""
    for position, span in enumerate(items(source, at)):
        if position == index:
            return span
    return None


def string_value(source: str, span: tuple[int, int]) -> str | None:
    """The decoded string of a JSON string token, or None when the value is not a string."""
    start, end = span
    if source[start:start + 1] != '"':
        return None
    try:
        value, stop = scanstring(source, start + 1, False)
    except ValueError:
        return None
    return value if stop == end else None


def _offsets(token: str) -> list[int]:
    """For a JSON string token, the raw index of each decoded character (and of the end)."""
    offsets: list[int] = []
    at = 1
    stop = len(token) - 1
    while at < stop:
        offsets.append(at)
        if token[at] != "\\":
            at += 1
        elif token[at + 1] != "u":
            at += 2
        else:
            high = int(token[at + 2:at + 6], 16)
            low = int(token[at + 8:at + 12], 16) if token[at + 6:at + 8] == "\\u" else 0
            if 0xD800 <= high <= 0xDBFF and 0xDC00 <= low <= 0xDFFF:
                at += 12  # a surrogate pair decodes to one character
            else:
                at += 6
    offsets.append(stop)
    return offsets


def escape(text: str, ascii_only: bool) -> str:
    """``text`` written for the inside of a JSON string, as ``json.dumps`` writes it."""
    return json.dumps(text, ensure_ascii=ascii_only)[1:-1]


def splice(token: str, edits: Sequence[Edit]) -> str:
    """The JSON string token with each edit's span replaced, the rest byte-identical.

    Replacements are escaped like the token: with ``\\uXXXX`` for non-ASCII only when the token
    is pure ASCII but its value is not (a writer with ``ensure_ascii``).
    """
    offsets = _offsets(token)
    ascii_only = token.isascii() and "\\u" in token
    parts: list[str] = []
    at = 0
    for edit in sorted(edits, key=lambda item: item.start):
        parts += (token[at:offsets[edit.start]], escape(edit.replacement, ascii_only))
        at = offsets[edit.end]
    parts.append(token[at:])
    return "".join(parts)


Replacement = tuple[int, int, str]
"""(start, end, new raw text) in the source."""


def string_replacements(source: str, span: tuple[int, int] | None, expected: str,
                        edits: Sequence[Edit]) -> list[Replacement]:
    """The replacement of one string value, when it holds exactly ``expected``."""
    if span is None or string_value(source, span) != expected:
        return []
    start, end = span
    return [(start, end, splice(source[start:end], edits))]


def replace_spans(source: str, replacements: Sequence[Replacement]) -> str:
    """``source`` with each (non-overlapping) raw span replaced."""
    parts: list[str] = []
    at = 0
    for start, end, text in sorted(replacements):
        parts += (source[at:start], text)
        at = end
    parts.append(source[at:])
    return "".join(parts)


def json_start(line: str) -> int:
    """Where the JSON of a JSONL line starts (the readers strip white space and a BOM)."""
    at = 0
    while at < len(line) and (line[at].isspace() or line[at] == "\ufeff"):
        at += 1
    return at


def text_and_swipe(line: str, text_key: str, change: MessageEdits) -> str:
    """A JSONL message line with its text value and its shown swipe rewritten."""
    start = json_start(line)
    try:
        text_span = member(line, start, text_key)
        swipes_span = member(line, start, "swipes")
        replacements = string_replacements(line, text_span, change.text, change.edits)
        if swipes_span is not None and change.swipe is not None:
            swipe_span = item(line, swipes_span[0], change.swipe)
            replacements += string_replacements(line, swipe_span, change.text, change.edits)
    except NotJson:
        return line
    return replace_spans(line, replacements)


def rewrite_lines(original: str, changes: dict[int, MessageEdits], text_key: str) -> str:
    """A JSONL file with the messages on the changed lines (1-based) rewritten."""
    lines = original.split("\n")
    for number, change in changes.items():
        if 1 <= number <= len(lines):
            lines[number - 1] = text_and_swipe(lines[number - 1], text_key, change)
    return "\n".join(lines)
