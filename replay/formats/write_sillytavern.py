"""Write a SillyTavern chat ``.jsonl`` back with some messages' texts changed.

The header line and every untouched message are copied verbatim. In a changed message only the
``mes`` value and the shown swipe (``swipes[swipe_id]``, when it held the same text) change, by
splicing the tag spans (``write_json``): ``extra``, ``send_date``, ``swipe_info``, the other
swipes, the key order and SillyTavern's compact ``JSON.stringify`` layout stay byte-identical.
"""

from __future__ import annotations

from replay.formats.write_json import MessageEdits, rewrite_lines


def write(original: str, changes: dict[int, MessageEdits]) -> str:
    """``original`` with each changed message (keyed by its 1-based line) rewritten."""
    return rewrite_lines(original, changes, "mes")
