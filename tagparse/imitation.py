"""Answer parts a model wrote: text shaped like what only gmtags writes, found by its shape.

gmtags writes the answer part of a tag (`` | ok="true" text="..."``, grammars/tags.lark). A
model that has read answered tags writes them too: in a tag it means to be answered, in a
bracket gmtags does not read (``[Battle: op="start" | ok="false" text="..."]``), or loose after
a tag (``[attack: who="Ada"] | ok="true" text="Ada hits."``), and often broken (a second
``|``, a quote left open), so the part is found by its shape, not by the grammar:

- **In a bracket with a head** (``[`` word ``:``, any word, any case): from the first ``|``
  outside the bracket's quoted values that an attribute (``key=``) follows, to the bracket's
  ``]``: the first one after an even number of quotes since the ``|``, else (the part's own
  quotes are broken) the last one before the line ends or the next head begins. Where no
  ``]`` comes, the part runs to that point and a ``]`` is put back, so the bracket stays
  closed. A ``|`` of prose (``[Choose: fight | flee]``) is no part.
- **Anywhere else**: ``|`` followed by ``ok=`` (every answer part gmtags writes begins so), or
  by another attribute only gmtags writes there (``answered=``, ``reason=``, ``text=``), with the
  attributes after it, quoted or not, up to the first text that is not an attribute (a ``]``
  stays).

Every part is taken with the white space before its ``|``. Nothing here spans a line end, so
text arriving in pieces is settled a line at a time at the latest (:attr:`Imitations.settled`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from tagparse.canonical import render
from tagparse.scanner import scan

_CANDIDATE: Final = re.compile(r"\[\s*[A-Za-z_][A-Za-z0-9_-]*\s*:|\|")
_HEAD: Final = re.compile(r"\[\s*[A-Za-z_][A-Za-z0-9_-]*\s*:")
_HEAD_OPENING: Final = re.compile(r"\[\s*(?:[A-Za-z_][A-Za-z0-9_-]*\s*)?\Z")
# What a bracket's request part holds before its answer: quoted values are skipped whole.
_REQUEST_STOP: Final = re.compile(r'["“|\]\[\n\r]')
_QUOTE_END: Final = {'"': re.compile(r'(?:[^"\\\n\r]|\\[^\n\r])*+\\?(["\n\r]|\Z)'),
                     "“": re.compile(r"[^”\n\r]*+([”\n\r]|\Z)")}
_BAR_ATTRIBUTE: Final = re.compile(r"\|[ \t]*[A-Za-z_][A-Za-z0-9_]*[ \t]*=")
_BAR_START: Final = re.compile(r"\|[ \t]*(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*)?\Z")
# The attributes gmtags writes first in an answer part, or alone after a "|" (the mark).
ANSWER_KEYS: Final = ("ok", "answered", "reason", "text")
_LOOSE: Final = re.compile(rf"\|[ \t]*(?:{'|'.join(ANSWER_KEYS)})[ \t]*=", re.IGNORECASE)
_LOOSE_START: Final = re.compile(r"\|[ \t]*(?:([A-Za-z]{1,8})([ \t]*))?\Z")
# One attribute of a loose part; a quote that does not close runs to the line's end.
_PAIR: Final = re.compile(
    r"""[ \t]*(?:\|[ \t]*)?[A-Za-z_][A-Za-z0-9_]*[ \t]*=[ \t]*"""
    r"""(?:"(?:[^"\\\n\r]|\\[^\n\r])*+\\?(?:"|(?=[\n\r])|\Z)|“[^”\n\r]*+(?:”|(?=[\n\r])|\Z)"""
    r"""|[^\s"“\]|\[]++(?:[ \t]++(?![A-Za-z_][A-Za-z0-9_]*+[ \t]*=)[^\s"“\]|\[]++)*+)""")
_PAIR_START: Final = re.compile(
    r"[ \t]*(?:\|[ \t]*)?(?:[A-Za-z_][A-Za-z0-9_]*[ \t]*(?:=[ \t]*)?)?\Z")
_LINE_END: Final = re.compile(r"[\n\r]")
_CLOSE_OR_QUOTE: Final = re.compile(r'\\.|["“”]|\]')  # an escaped character is neither


@dataclass(frozen=True, slots=True)
class Imitation:
    """One answer part found: ``text[start:end]`` is replaced by ``replacement``."""

    start: int
    end: int
    replacement: str = ""


@dataclass(frozen=True, slots=True)
class Imitations:
    """The answer parts in a text, and how far the text is settled: what follows
    ``settled`` may still become (part of) an answer part when more text arrives."""

    found: tuple[Imitation, ...]
    settled: int

    def apply(self, text: str, end: int | None = None) -> str:
        """``text[:end]`` (default: up to :attr:`settled`) with every part found in it taken
        out."""
        stop = self.settled if end is None else end
        pieces, at = [], 0
        for part in self.found:
            if part.start >= stop:
                break
            pieces += [text[at:part.start], part.replacement]
            at = part.end
        pieces.append(text[at:stop])
        return "".join(pieces)


def imitations(text: str, final: bool = True) -> Imitations:
    """The answer parts of ``text`` (see the module's doc). With ``final`` false the text may
    go on: a bracket or a loose part that more text could change is not settled yet."""
    found: list[Imitation] = []
    at = 0
    end = len(text)
    if not final:  # a "[" at the end may yet become a head, white space come before a "|"
        opening = _HEAD_OPENING.search(text)
        end = _space_start(text, opening.start() if opening is not None else end)
    while True:
        candidate = _CANDIDATE.search(text, at, end)
        if candidate is None:
            return Imitations(tuple(found), max(end, found[-1].end if found else 0))
        start = candidate.start()
        if text[start] == "[":
            part, at = _in_bracket(text, candidate.end(), final)
        else:
            part, at = _loose(text, start, final)
        if at < 0:  # more text may change it: settled before it (and its white space)
            done = found[-1].end if found else 0  # white space a part took stays taken
            return Imitations(tuple(found), max(done, _space_start(text, start)))
        if part is not None:
            found.append(part)


def _space_start(text: str, at: int) -> int:
    """Where the spaces and tabs just before ``at`` begin."""
    while at > 0 and text[at - 1] in " \t":
        at -= 1
    return at


def _in_bracket(text: str, at: int, final: bool) -> tuple[Imitation | None, int]:
    """The answer part of the bracket whose head ends at ``at``, and where to look on (-1:
    not settled)."""
    while True:
        stop = _REQUEST_STOP.search(text, at)
        if stop is None:
            return None, len(text) if final else -1
        mark = text[stop.start()]
        if mark in "\"“":
            quote = _QUOTE_END[mark].match(text, stop.end())
            assert quote is not None
            if quote.group(1) == "":  # the text ended inside the value
                return None, len(text) if final else -1
            if quote.group(1) in "\n\r":
                return None, quote.start(1)  # an unclosed quote ends the bracket
            at = quote.end()
            continue
        if mark == "|":
            if _BAR_ATTRIBUTE.match(text, stop.start()):
                return _bracket_part(text, stop.start(), final)
            if not final and _BAR_START.match(text, stop.start()):
                return None, -1  # an attribute may yet follow the "|"
            at = stop.end()  # a "|" of prose in the bracket ([Choose: fight | flee])
            continue
        # "]" closes it without a part; a line end or a "[" ends it unclosed
        return None, stop.end() if mark == "]" else stop.start()


def _bracket_part(text: str, bar: int, final: bool) -> tuple[Imitation | None, int]:
    """The part from the ``|`` at ``bar`` to the bracket's ``]``: the first one with its
    quotes closed since the ``|``, else the last before the line ends or the next head."""
    line_end = _LINE_END.search(text, bar)
    head = _HEAD.search(text, bar, line_end.start() if line_end else len(text))
    limit = head.start() if head else line_end.start() if line_end else len(text)
    quotes = 0
    last = -1
    for close in _CLOSE_OR_QUOTE.finditer(text, bar, limit):
        if close.group()[0] == "\\":
            continue
        if close.group() != "]":
            quotes += 1
        elif quotes % 2 == 0:
            return Imitation(_space_start(text, bar), close.start()), close.end()
        else:
            last = close.start()
    if head is None and line_end is None and not final:
        return None, -1  # the "]" that closes it may be still to come
    start = _space_start(text, bar)
    if last >= 0:
        return Imitation(start, last), last + 1
    return Imitation(start, limit, "]"), limit


def _may_open(text: str, bar: int) -> bool:
    """Whether the end of ``text`` from the ``|`` at ``bar`` may yet become a loose part's
    opening: ``|``, ``| o``, ``| answ``, ``| ok `` ..."""
    start = _LOOSE_START.match(text, bar)
    if start is None:
        return False
    word, space = (start.group(1) or "").lower(), start.group(2)
    return any(key == word if space else key.startswith(word) for key in ANSWER_KEYS)


def _loose(text: str, bar: int, final: bool) -> tuple[Imitation | None, int]:
    """A part that is not in a bracket: ``|`` then ``ok=`` and attributes."""
    opening = _LOOSE.match(text, bar)
    if opening is None:
        if not final and _may_open(text, bar):
            return None, -1  # "|" or "| o" at the end may yet become "| ok="
        return None, bar + 1
    end = bar if _PAIR.match(text, bar) else opening.end()  # "| ok=" with no value yet
    while (pair := _PAIR.match(text, end)) is not None and pair.end() > end:
        end = pair.end()
    if not final and (end == len(text) or _PAIR_START.match(text, end)):
        return None, -1  # another attribute may follow
    return Imitation(_space_start(text, bar), end), end


def requests_only(text: str) -> str:
    """``text`` with each answered tag written without its answer part (its request in
    canonical form); malformed tags and prose as they are. What a model reads of its past
    replies, so that it has no answer parts to imitate."""
    if "|" not in text:
        return text
    pieces, at = [], 0
    for tag in scan(text).tags:
        if tag.malformed is None and tag.answer is not None:
            pieces += [text[at:tag.start], render(tag.kind, tag.attrs)]
            at = tag.end
    if not pieces:
        return text
    pieces.append(text[at:])
    return "".join(pieces)


__all__ = ["ANSWER_KEYS", "Imitation", "Imitations", "imitations", "requests_only"]
