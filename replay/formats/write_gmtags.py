"""Write a gmtags JSONL transcript back with some messages' texts changed.

Only the ``text`` value and the shown swipe (``swipes[swipe]``) of a changed line are touched,
by splicing the tag spans (``write_json``); every other byte of the file is kept.
"""

from __future__ import annotations

from replay.formats.write_json import MessageEdits, rewrite_lines


def write(original: str, changes: dict[int, MessageEdits]) -> str:
    """``original`` with each changed message (keyed by its 1-based line) rewritten."""
    return rewrite_lines(original, changes, "text")
