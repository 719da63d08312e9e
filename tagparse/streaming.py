"""Text that is still arriving: where the first tag that may be unfinished begins.

A reader of a streamed reply (the HTTP stage) can pass text on as it arrives up to that point
and hold back the rest until the tag is complete or provably not a tag.
"""

from __future__ import annotations

import re
from typing import Final

from tagparse.grammar import TAG_KINDS, patterns

MAX_HEAD: Final = 64  # characters of "[" + name that may still become a tag head
_HEAD_START: Final = re.compile(r"\[\s*([A-Za-z_]*)(\s*)")
_LINE_END: Final = re.compile(r"[\n\r]")


def _could_become_head(text: str, at: int) -> bool:
    """Whether ``text[at:]`` (starting with ``[``) is the start of a tag head still arriving."""
    match = _HEAD_START.match(text, at)
    if match is None or match.end() != len(text) or len(text) - at > MAX_HEAD:
        return False
    name = match.group(1).lower()
    if match.group(2) and name:
        return name in TAG_KINDS
    return any(kind.startswith(name) for kind in TAG_KINDS)


def unfinished_tag(text: str, start: int = 0) -> int:
    """Where the first tag of ``text`` from ``start`` on that more text could still change
    begins: a tag whose closing ``]`` has not arrived, a quoted value whose line has not ended,
    or a ``[`` that may yet become a tag head. ``len(text)`` when there is none: every tag
    before that point reads the same whatever follows.

    ``start`` must not be inside a tag (it is 0, or a point this function returned).
    """
    found = patterns()
    at = start
    while True:
        bracket = text.find("[", at)
        if bracket < 0:
            return len(text)
        head = found.head.match(text, bracket)
        if head is None:
            if _could_become_head(text, bracket):
                return bracket
            at = bracket + 1
            continue
        body = found.body.match(text, head.end())
        stop = body.end() if body is not None else head.end()
        if stop >= len(text):
            return bracket
        if text[stop] in "[]":
            at = stop + 1 if text[stop] == "]" else stop
            continue
        # A quote that does not close yet: settled once its line has ended.
        line_end = _LINE_END.search(text, stop)
        if line_end is None:
            return bracket
        at = line_end.start()
