"""The reading of one tag span: attributes, answer, and a diagnostic for every repair.

Two readers turn a span into the same tokens, and one function (:class:`_Reader`) turns tokens
into a :class:`Reading`, so the two agree by construction wherever the first one reads at all:

- the regex reader (:func:`tokenize`) lexes the span as Lark's contextual lexer does, with the
  grammar's own terminal patterns (one compiled pattern per parser state, built from tags.lark),
  and gives up wherever the grammar could refuse the span;
- the grammar (:func:`read_with_grammar`) parses the span with Lark. It reads every span the
  regex reader gives up on, so every malformed-tag message comes from Lark.

tests/tagparse/test_tag_properties.py checks the agreement differentially: ``scan(fast=False)``
reads every span with the grammar only.
"""

from __future__ import annotations

import itertools
import re
from functools import cache, lru_cache
from json.encoder import encode_basestring
from typing import Final, NamedTuple

from lark import Token, Tree
from lark.exceptions import LarkError, UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from tagparse.canonical import UNESCAPES, Pairs
from tagparse.grammar import POSITIONAL, parser

Span = tuple[int, int, str, str]
"""A diagnostic relative to the start of the tag: (start, end, code, message)."""

Lexeme = tuple[str, str, int, int]
"""One token of a span: (terminal name, text, start, end); ignored white space is not one."""

_VALUES: Final = frozenset({
    "DQ_STRING", "CDQ_STRING", "SQ_STRING", "CSQ_STRING", "SQ_OPEN", "CSQ_OPEN", "BARE",
    "NUMBER_BARE",
})
_KEYS: Final = frozenset({"KEY", "NUMBER_KEY"})
# The tokens a canonical tag has one space before.
_SPACED: Final = frozenset({"KEY", "NUMBER_KEY", "WORDS", "BAR"})
_QUOTES: Final = "\"“'‘"
_WANTED: Final[dict[str, str]] = {
    "KIND": "a tag name",
    "COLON": '":"',
    "KEY": "an attribute name",
    "NUMBER_KEY": "an attribute name",
    "WORDS": "an attribute name",
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
    "SQ_OPEN": ("unclosed-quote", 'has a quote that never closes before "]"'),
    "CSQ_OPEN": ("unclosed-quote", 'has a quote that never closes before "]"'),
    "BARE": ("bare-value", "was not quoted"),
    "NUMBER_BARE": ("bare-value", "was not quoted"),
}
# The value spellings whose text has an opening quote and no closing one.
_OPEN_VALUES: Final = frozenset({"SQ_OPEN", "CSQ_OPEN"})


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
    return encode_basestring(text)  # json.dumps(text, ensure_ascii=False), without its set-up


def _found(text: str) -> str:
    """What the reader tripped over, quoted for a message without doubled escapes."""
    if '"' in text and "'" not in text and "\n" not in text and len(text) <= 24:
        return f"'{text}'"
    return _show(text)


@lru_cache(maxsize=4096)
def read_span(span: str) -> Reading:
    """Read one tag span (head to closing "]"): the regex reader, else the grammar.

    Never raises. The same reading as :func:`read_with_grammar`, only faster.
    """
    tokens = tokenize(span)
    if tokens is None:
        return read_with_grammar(span)
    return _Reader(span).read(tokens)


@lru_cache(maxsize=1024)
def read_with_grammar(span: str) -> Reading:
    """Parse one tag span (head to closing "]") with the Lark grammar; never raises."""
    try:
        tree = parser().parse(span)
    except LarkError as error:
        return Reading(None, (), None, _failure(span, error), ())
    return _Reader(span).read(_tokens(tree))


# --- the regex reader ------------------------------------------------------------------------

# The parser states of one tag (tags.lark ``start``) and the terminals each one accepts; ignored
# white space (WS) may come before any of them. Where two terminals could match the same text
# (KEY, NUMBER_KEY and WORDS; SQ_STRING and SQ_OPEN; BARE and NUMBER_BARE) they are written
# so that no text matches two of them, or they are never accepted in the same state, so the
# order of the alternatives does not matter, as in Lark's contextual lexer.
(_OPEN, _KIND, _COLON, _REQUEST, _EQ, _NUMBER_EQ, _VALUE, _NUMBER_VALUE, _AFTER_VALUE,
 _AFTER_COMMA, _ANSWER) = range(11)
_QUOTED: Final = ("DQ_STRING", "CDQ_STRING", "SQ_STRING", "CSQ_STRING", "SQ_OPEN", "CSQ_OPEN")
_ACCEPTS: Final[dict[int, tuple[str, ...]]] = {
    _OPEN: ("OPEN",),
    _KIND: ("KIND",),
    _COLON: ("COLON",),
    _REQUEST: ("KEY", "NUMBER_KEY", "WORDS", "BAR", "CLOSE"),
    _EQ: ("EQ",),
    _NUMBER_EQ: ("EQ",),
    _VALUE: (*_QUOTED, "BARE"),
    _NUMBER_VALUE: (*_QUOTED, "NUMBER_BARE"),
    _AFTER_VALUE: ("COMMA", "KEY", "NUMBER_KEY", "WORDS", "BAR", "CLOSE"),
    _AFTER_COMMA: ("KEY", "NUMBER_KEY", "WORDS"),
    _ANSWER: ("KEY", "NUMBER_KEY", "WORDS", "CLOSE"),
}
_NEXT: Final[dict[str, int]] = {
    "OPEN": _KIND, "KIND": _COLON, "COLON": _REQUEST, "KEY": _EQ, "NUMBER_KEY": _NUMBER_EQ,
    "COMMA": _AFTER_COMMA, "BAR": _ANSWER, "WORDS": _AFTER_VALUE,
    **{name: _AFTER_VALUE for name in _VALUES},
}  # fmt: skip
# "=" is followed by the kind of value its key takes.
_VALUE_AFTER: Final[dict[int, int]] = {_EQ: _VALUE, _NUMBER_EQ: _NUMBER_VALUE}


@cache
def _lexers() -> dict[int, tuple[re.Pattern[str], tuple[str, ...]]]:
    """Per parser state: white space then one accepted terminal, a group each (from the
    grammar's own terminal patterns), and the terminal name of each group number."""
    lark = parser()
    built: dict[int, tuple[re.Pattern[str], tuple[str, ...]]] = {}
    for state, names in _ACCEPTS.items():
        pattern = "|".join(f"({lark.get_terminal(name).pattern.to_regexp()})" for name in names)
        built[state] = (re.compile(rf"\s*+(?:{pattern})"), ("", *names))
    return built


def tokenize(span: str) -> list[Lexeme] | None:
    """The tokens the grammar reads ``span`` as, or None wherever the grammar could refuse it.

    Linear in the span: each token's pattern runs once, from the end of the previous token.
    """
    lexers = _lexers()
    tokens: list[Lexeme] = []
    state = _OPEN
    position = 0
    answered = False
    while True:
        pattern, names = lexers[state]
        match = pattern.match(span, position)
        if match is None:
            return None
        group = match.lastindex or 0
        name = names[group]
        start, position = match.span(group)
        tokens.append((name, match.group(group), start, position))
        if name == "CLOSE":
            return tokens if position == len(span) else None
        if name == "BAR":
            if answered:
                return None  # a second "|": the grammar refuses the span
            answered = True
        state = _VALUE_AFTER[state] if name == "EQ" else _NEXT[name]


# --- errors from the grammar ------------------------------------------------------------------


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


def _tokens(tree: Tree[Token]) -> list[Lexeme]:
    """The tokens of a parse tree in text order."""
    return [
        (token.type, str(token), token.start_pos or 0, token.end_pos or 0)
        for token in tree.scan_values(lambda value: isinstance(value, Token))
    ]


# --- tokens to a reading ----------------------------------------------------------------------


class _Reader:
    """Turns the tokens of a well-formed span into attributes and repair diagnostics."""

    def __init__(self, span: str) -> None:
        self.span = span
        self.diagnostics: list[Span] = []

    def note(self, start: int, end: int, code: str, message: str) -> None:
        self.diagnostics.append((start, end, code, message))

    def read(self, tokens: list[Lexeme]) -> Reading:
        """``tokens``: OPEN KIND COLON, ((KEY EQ value | WORDS) COMMA?)*, (BAR (the same)*)?,
        CLOSE, as tags.lark ``start`` spells them."""
        kind = self._name(tokens[1], "tag name")
        sections: list[Pairs] = []
        pairs: dict[str, str] = {}
        words: list[tuple[int, Lexeme]] = []  # words without a key, and where they stood
        index = 3
        while index < len(tokens):
            token = tokens[index]
            name = token[0]
            if name in _KEYS:
                self._attribute(pairs, token, tokens[index + 2])
                index += 3
                continue
            if name == "WORDS":
                words.append((len(pairs), token))
            elif name in ("BAR", "CLOSE"):
                sections.append(self._with_words(kind, pairs, words))
                pairs, words = {}, []
                if token[1] != "]" and name == "CLOSE":
                    self.note(token[2], token[3], "markdown-escape",
                              'tag closed with "\\]" (a markdown escape); read as "]"')
            index += 1
        self._layout(tokens)
        answer = sections[1] if len(sections) > 1 else None
        return Reading(kind, sections[0], answer, None, tuple(sorted(self.diagnostics)))

    def _name(self, token: Lexeme, what: str) -> str:
        _, name, start, end = token
        lower = name.lower()
        if name != lower:
            message = f'{what} "{name}" should be lower case; read as "{lower}"'
            self.note(start, end, "upper-case-name", message)
        return lower

    def _attribute(self, pairs: dict[str, str], key_token: Lexeme, value_token: Lexeme) -> None:
        key = self._name(key_token, "attribute name")
        value = self._value(key, value_token)
        if key in pairs:
            self.note(
                key_token[2],
                value_token[3],
                "duplicate-attribute",
                f'attribute "{key}" given twice; kept the first, {_show(pairs[key])}',
            )
        else:
            pairs[key] = value

    def _with_words(self, kind: str, pairs: dict[str, str],
                    words: list[tuple[int, Lexeme]]) -> Pairs:
        """A section's attributes with its words without a key: the first run of them is the
        value of the tag name's positional key, where it stood, unless the section gives that
        key itself (tags.lark, TOLERATED); the others are reported and ignored."""
        key = POSITIONAL.get(kind)
        attrs = tuple(pairs.items())
        for at, (_, text, start, end) in words:
            if key is None:
                message = f"{_show(text)} has no key and [{kind}:] reads none; ignored"
            elif key in pairs:
                message = f"{_show(text)} has no key; ignored, as {key}= is given"
            else:
                pairs[key] = text
                attrs = (*attrs[:at], (key, text), *attrs[at:])
                message = f"{_show(text)} has no key; read as {key}={_show(text)}"
            self.note(start, end, "bare-word", message)
        return attrs

    def _value(self, key: str, token: Lexeme) -> str:
        kind, text, start, end = token
        if kind in ("BARE", "NUMBER_BARE"):
            value = text
        elif kind in _OPEN_VALUES:  # up to the tag's "]", trailing white space left out
            value = text[1:].rstrip()
        else:
            value = text[1:-1]
            if kind == "DQ_STRING" and "\\" in value:
                value = self._unescape(key, value, start + 1)
        repair = _VALUE_REPAIRS.get(kind)
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

    def _layout(self, tokens: list[Lexeme]) -> None:
        """Report spacing, line breaks and commas that differ from the canonical form."""
        spaces: list[tuple[int, int]] = []
        breaks: list[tuple[int, int]] = []
        commas: list[tuple[int, int]] = []
        span = self.span
        for (_, _, _, gap_start), (kind, _, gap_end, after_end) in itertools.pairwise(tokens):
            gap = span[gap_start:gap_end]
            if "\n" in gap or "\r" in gap:
                breaks.append((gap_start, gap_end))
            elif gap != (" " if kind in _SPACED else ""):
                spaces.append((gap_start, gap_end))
            if kind == "COMMA":
                commas.append((gap_end, after_end))
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
