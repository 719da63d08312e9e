"""The tag grammar: grammars/tags.lark, loaded once, and the scanner patterns built from it.

The prefilter (tag heads) and the extent scan (how far a tag reaches) are assembled from the
grammar's own terminals, so the quoting rules are written once, in tags.lark.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from typing import Final

from lark import Lark

GRAMMAR: Final[str] = files("grammars").joinpath("tags.lark").read_text(encoding="utf-8")


def _kinds(grammar: str) -> frozenset[str]:
    """The tag names listed on the grammar's ``KIND:`` line."""
    line = re.search(r"^KIND:(.*)$", grammar, re.MULTILINE)
    if line is None:
        raise RuntimeError("tags.lark has no KIND terminal")
    return frozenset(re.findall(r'"([a-z_]+)"i', line.group(1)))


TAG_KINDS: Final[frozenset[str]] = _kinds(GRAMMAR)


def _positional(grammar: str) -> dict[str, str]:
    """Per tag name, the key that words written without "key=" fill: the grammar's
    ``// POSITIONAL:`` line (tags.lark, TOLERATED)."""
    line = re.search(r"^// POSITIONAL:(.*)$", grammar, re.MULTILINE)
    if line is None:
        raise RuntimeError("tags.lark has no POSITIONAL line")
    keys = dict(re.findall(r"([a-z_]+)=([a-z_]+)", line.group(1)))
    assert set(keys) <= TAG_KINDS, keys
    return keys


POSITIONAL: Final[dict[str, str]] = _positional(GRAMMAR)


@cache
def parser() -> Lark:
    """The Lark parser for one tag span, built once per process (cached on disk by Lark)."""
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", cache=True)


@dataclass(frozen=True, slots=True)
class Patterns:
    """Compiled scanner patterns derived from the grammar's terminals."""

    head: re.Pattern[str]
    """A tag head ``[ kind :`` in any case; group ``name`` is the name as written."""
    body: re.Pattern[str]
    """Everything after a head up to (not including) the first ``]`` or ``[`` outside quotes."""
    extent: re.Pattern[str]
    """``body`` followed by the closing ``]``: a whole tag once matched after its head."""
    open_value: re.Pattern[str]
    """A double-quoted value (straight or curly) without its closing quote: matched at a quote
    that never closes, it ends where the value had to stop (tags.lark, EXTENT)."""


# An escape pair as DQ_STRING spells it once Lark has made it a regex (raw line breaks).
_ESCAPE_PAIR: Final = "\\\\[^\n\r]"
_HEAD_SHAPE: Final = r"\[\s*\w+\s*:"


def _without(failed: str, dq: str, cdq: str, other: str = "") -> str:
    """What the extent's body reads after a single-quoted value (terminal ``failed``) that
    does not close: the same, minus the attempts to read such a value, up to the end of the
    line or the first head-shaped "[" (escaped or not), and ``other``'s own failure likewise.

    Where such a value cannot close, none opened later before that point can (the value's
    pattern would walk in step with the first one to the same dead end), so the body reads as
    it would with every attempt, and each character is walked once: with the attempts, a line
    of ``a='x`` made each one walk to the line's end again, quadratic in the line's length.
    An "=" whose white space runs past the line end is left to the full body."""
    escape = _ESCAPE_PAIR
    assert escape in dq, dq
    dq_no_escaped_head = dq.replace(escape, rf"\\(?!{_HEAD_SHAPE})[^\n\r]")
    same_line_eq = r"=[^\S\n\r]*+(?![\n\r])"
    plain = r"[^\[\]\"“=\n\r]++"
    if other:
        opening = "'" if other.startswith("'") else "‘"
        value = rf"(?:{other}|(?={opening}){_without(other, dq, cdq)})?"
    else:
        value = ""
    return rf"(?:{dq_no_escaped_head}|{cdq}|{same_line_eq}{value}|{plain})*+"


@cache
def patterns() -> Patterns:
    """Build the head, body and extent patterns from the grammar's terminals."""
    lark = parser()

    def terminal(name: str) -> str:
        return lark.get_terminal(name).pattern.to_regexp()

    # EXTENT rules of tags.lark: no "[" outside quotes, the first "]" outside quotes closes,
    # single quotes open a value only right after "=". Possessive loops keep this linear.
    # Plain characters are taken a run at a time: every other branch starts with a character
    # the run excludes, so the reach is the same as one character per turn, only faster.
    dq, cdq = terminal("DQ_STRING"), terminal("CDQ_STRING")
    sq, csq = terminal("SQ_STRING"), terminal("CSQ_STRING")
    body = rf"(?:{dq}|{cdq}|=\s*+(?:{sq}|{csq}|(?='){_without(sq, dq, cdq, csq)}"
    body += rf"|(?=‘){_without(csq, dq, cdq, sq)})?|[^\[\]\"“=]++)*+"
    head = rf"\[\s*(?P<name>{terminal('KIND')})\s*:"
    unclosed = []
    for name, close in (("DQ_STRING", '"'), ("CDQ_STRING", "”")):
        value = terminal(name)
        assert value.endswith(close), (name, value)
        unclosed.append(value[: -len(close)])
    return Patterns(
        head=re.compile(head),
        body=re.compile(body),
        extent=re.compile(body + r"\]"),
        open_value=re.compile("|".join(unclosed)),
    )
