"""The Lark reading of one tag span: attributes, answer, and a diagnostic for every repair."""

from __future__ import annotations

import itertools
import json
from functools import lru_cache
from typing import Final, NamedTuple

from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from tagparse.canonical import UNESCAPES, Pairs
from tagparse.grammar import parser

Span = tuple[int, int, str, str]
"""A diagnostic relative to the start of the tag: (start, end, code, message)."""

_VALUES: Final = frozenset({"DQ_STRING", "CDQ_STRING", "SQ_STRING", "CSQ_STRING", "BARE"})
_QUOTES: Final = "\"“'‘"
_WANTED: Final[dict[str, str]] = {
    "KIND": "a tag name",
    "COLON": '":"',
    "KEY": "an attribute name",
    "EQ": '"="',
    "BAR": '"|"',
    "CLOSE": '"]"',
    "COMMA": '","',
    "OPEN": '"["',
    "$END": "the end of the tag",
    **{name: "a quoted value" for name in _VALUES},
}
# The repair each value spelling needs, with the words the message uses for it.
_VALUE_REPAIRS: Final[dict[str, tuple[str, str]]] = {
    "CDQ_STRING": ("curly-quotes", "used curly quotes"),
    "CSQ_STRING": ("curly-quotes", "used curly single quotes"),
    "SQ_STRING": ("single-quotes", "used single quotes"),
    "BARE": ("bare-value", "was not quoted"),
}


class Reading(NamedTuple):
    """What the grammar made of a tag span; diagnostics are relative to the span."""

    kind: str | None
    attrs: Pairs
    answer: Pairs | None
    malformed: str | None
    diagnostics: tuple[Span, ...]


def _show(text: str) -> str:
    """A short one-line quotation of ``text`` for a message."""
    if len(text) > 24:
        text = text[:21] + "..."
    return json.dumps(text, ensure_ascii=False)


def _found(text: str) -> str:
    """What the reader tripped over, quoted for a message without doubled escapes."""
    if '"' in text and "'" not in text and "\n" not in text and len(text) <= 24:
        return f"'{text}'"
    return _show(text)


@lru_cache(maxsize=4096)
def read_span(span: str) -> Reading:
    """Parse one tag span (head to closing "]") with the grammar; never raises."""
    try:
        tree = parser().parse(span)
    except LarkError as error:
        return Reading(None, (), None, _failure(span, error), ())
    return _Reader(span).read(tree)


def _failure(span: str, error: LarkError) -> str:
    """A one-line reason the span does not parse."""
    if isinstance(error, UnexpectedCharacters):
        position = error.pos_in_stream or 0
        found = span[position]
        wanted = set(error.allowed or ())
        if found in _QUOTES and wanted & _VALUES:
            return f"quote at column {position + 1} of the tag is never closed"
        return _expected(wanted, _found(found), position)
    if isinstance(error, UnexpectedToken):
        position = error.token.start_pos
        return _expected(set(error.expected), _found(str(error.token)), position or 0)
    if isinstance(error, UnexpectedInput):
        return f"cannot read the tag: {type(error).__name__}"
    return "cannot read the tag"


def _expected(wanted: set[str], found: str, position: int) -> str:
    words = sorted({_WANTED.get(name, name) for name in wanted})
    return f"expected {' or '.join(words)} but found {found} at column {position + 1} of the tag"


def _tokens(tree: Tree[Token]) -> list[Token]:
    return list(tree.scan_values(lambda value: isinstance(value, Token)))


class _Reader:
    """Turns a parse tree into attributes and repair diagnostics."""

    def __init__(self, span: str) -> None:
        self.span = span
        self.diagnostics: list[Span] = []

    def note(self, start: int, end: int, code: str, message: str) -> None:
        self.diagnostics.append((start, end, code, message))

    def read(self, tree: Tree[Token]) -> Reading:
        kind_token = tree.children[1]
        assert isinstance(kind_token, Token)
        kind = self._name(kind_token, "tag name")
        attrs: Pairs = ()
        answer: Pairs | None = None
        for part in tree.children:
            if isinstance(part, Tree):
                pairs = self._pairs(part)
                if part.data == "request":
                    attrs = pairs
                else:
                    answer = pairs
        self._layout(_tokens(tree))
        return Reading(kind, attrs, answer, None, tuple(sorted(self.diagnostics)))

    def _name(self, token: Token, what: str) -> str:
        name = str(token)
        lower = name.lower()
        if name != lower:
            self.note(
                token.start_pos or 0,
                token.end_pos or 0,
                "upper-case-name",
                f'{what} "{name}" should be lower case; read as "{lower}"',
            )
        return lower

    def _pairs(self, part: Tree[Token]) -> Pairs:
        pairs: dict[str, str] = {}
        for attribute in part.children:
            if not isinstance(attribute, Tree):
                continue
            key_token, _, value_token = attribute.children
            assert isinstance(key_token, Token) and isinstance(value_token, Token)
            key = self._name(key_token, "attribute name")
            value = self._value(key, value_token)
            start, end = key_token.start_pos or 0, value_token.end_pos or 0
            if key in pairs:
                self.note(
                    start,
                    end,
                    "duplicate-attribute",
                    f'attribute "{key}" given twice; kept the first, {_show(pairs[key])}',
                )
            else:
                pairs[key] = value
        return tuple(pairs.items())

    def _value(self, key: str, token: Token) -> str:
        text = str(token)
        start, end = token.start_pos or 0, token.end_pos or 0
        if token.type == "BARE":
            value = text
        else:
            value = text[1:-1]
            if token.type == "DQ_STRING" and "\\" in value:
                value = self._unescape(key, value, start + 1)
        repair = _VALUE_REPAIRS.get(token.type)
        if repair is not None:
            code, words = repair
            self.note(start, end, code, f'attribute "{key}" {words}; read as {_show(value)}')
        return value

    def _unescape(self, key: str, value: str, offset: int) -> str:
        out: list[str] = []
        index = 0
        while index < len(value):
            char = value[index]
            if char != "\\":
                out.append(char)
                index += 1
                continue
            escaped = value[index + 1]
            known = UNESCAPES.get(escaped)
            if known is None:
                self.note(
                    offset + index,
                    offset + index + 2,
                    "unknown-escape",
                    f'attribute "{key}" has unknown escape "\\{escaped}"; read as {_show(escaped)}',
                )
                known = escaped
            out.append(known)
            index += 2
        return "".join(out)

    def _layout(self, tokens: list[Token]) -> None:
        """Report spacing, line breaks and commas that differ from the canonical form."""
        spaces: list[tuple[int, int]] = []
        breaks: list[tuple[int, int]] = []
        commas: list[tuple[int, int]] = []
        for before, after in itertools.pairwise(tokens):
            gap_start, gap_end = before.end_pos or 0, after.start_pos or 0
            gap = self.span[gap_start:gap_end]
            if "\n" in gap or "\r" in gap:
                breaks.append((gap_start, gap_end))
            elif gap != (" " if after.type in ("KEY", "BAR") else ""):
                spaces.append((gap_start, gap_end))
            if after.type == "COMMA":
                commas.append((after.start_pos or 0, after.end_pos or 0))
        if spaces:
            self.note(
                spaces[0][0],
                spaces[-1][1],
                "spaces",
                'stray or missing spaces in the tag; write [name: key="value" key="value"]',
            )
        if breaks:
            self.note(
                breaks[0][0],
                breaks[-1][1],
                "line-break",
                "tag is broken across lines; write it on one line",
            )
        if commas:
            self.note(
                commas[0][0],
                commas[-1][1],
                "commas",
                "commas between attributes; separate attributes with one space",
            )
