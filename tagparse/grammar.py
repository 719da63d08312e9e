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
    double = f"{terminal('DQ_STRING')}|{terminal('CDQ_STRING')}"
    single = f"{terminal('SQ_STRING')}|{terminal('CSQ_STRING')}"
    body = rf"(?:{double}|=\s*+(?:{single})?|[^\[\]\"“=]++)*+"
    head = rf"\[\s*(?P<name>{terminal('KIND')})\s*:"
    return Patterns(
        head=re.compile(head),
        body=re.compile(body),
        extent=re.compile(body + r"\]"),
    )
