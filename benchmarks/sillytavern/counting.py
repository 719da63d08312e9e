"""Counting the answer parts a player sees that gmtags did not write (pure; unit-tested).

An answer part is what follows a tag's ``|``: ``ok="true" text="…"``, and in mid-reply mode an
``answered="mid-reply"`` mark. gmtags writes exactly one per tag it reads. Anything else that
looks like one — in a bracket gmtags does not read, loose after a tag, in a tag left malformed,
or an answer part on a tag gmtags reads that differs from the engine's answer — was written by
the model and shown as if it had happened.

The saved chat is the exact text: its tags gmtags read come from ``gmtags replay --format json``
(the tags of each message, as raw text) and ``gmtags regress --format json`` (answer parts that
differ from the engine's). The page's rendered text has gone through markdown, so there the
count is simpler: every answer-like fragment shown, less the parts gmtags wrote in that message.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

#: A key of an answer part: ``ok=`` or the mid-reply mark ``answered=``.
_KEY = re.compile(r"\b(?:ok|answered)\s*=", re.IGNORECASE)


def answer_fragments(text: str) -> list[tuple[int, str]]:
    """The answer-like fragments of ``text``: (offset, a short excerpt) for each.

    One fragment is one answer part: it starts at an ``ok=`` or ``answered=`` key (or the ``|``
    before it) and runs to the next ``]``, ``|`` or line end, so ``| ok="true" text="x"
    answered="mid-reply"`` is one fragment, and two ``| ok=…`` parts in one bracket are two.
    """
    found: list[tuple[int, str]] = []
    end_of_last = -1
    for match in _KEY.finditer(text):
        start = match.start()
        if start < end_of_last:
            continue  # inside the fragment already counted
        stop = len(text)
        for mark in ("]", "|", "\n"):
            at = text.find(mark, match.end())
            if at != -1:
                stop = min(stop, at)
        end_of_last = stop
        bar = text.rfind("|", 0, start)
        head = bar if bar != -1 and not text[bar + 1:start].strip() else start
        found.append((head, text[head:min(stop, head + 80)]))
    return found


#: The head of a bracket tag: ``[`` a name ``:`` (``[Give:``, ``[Add: inventory:``).
_HEAD = re.compile(r"\[\s*([A-Za-z_][\w \-]{0,30}?)\s*:")


def unread_heads(text: str) -> list[str]:
    """The tag-like heads in ``text`` (with the tags gmtags reads already blanked out): brackets
    that look like a game action to a player, which gmtags neither answered nor refused."""
    return [match.group(1) for match in _HEAD.finditer(text)]


def blank_spans(text: str, raws: list[str]) -> str:
    """``text`` with each of ``raws`` (found in order, each once) replaced by spaces."""
    out = text
    position = 0
    for raw in raws:
        at = out.find(raw, position)
        if at == -1:
            continue
        out = out[:at] + " " * len(raw) + out[at + len(raw):]
        position = at + len(raw)
    return out


def has_answer_part(raw: str) -> bool:
    """Whether a tag's raw text carries an answer part (a ``|`` outside quoted values)."""
    quoted = False
    escaped = False
    for char in raw:
        if escaped:
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == '"':
            quoted = not quoted
        elif char == "|" and not quoted:
            return True
    return False


@dataclass
class Reply:
    """One visible GM reply and what was counted in it."""

    mesid: int
    saved_text: str
    shown_text: str
    tags_read: int = 0  # tags gmtags reads in it
    written: int = 0  # answer parts gmtags wrote (well-formed, equal to the engine's answer)
    differing: int = 0  # answer parts on tags gmtags reads that differ from the engine's
    refused: Counter[str] = field(default_factory=Counter)  # the engine's refusals by reason
    foreign_saved: list[str] = field(default_factory=list)  # fragments outside gmtags' parts
    unread: list[str] = field(default_factory=list)  # tag-like heads gmtags does not read
    shown_fragments: int = 0  # answer-like fragments on the page

    @property
    def foreign_shown(self) -> int:
        """Answer-like fragments on the page beyond those gmtags wrote."""
        return max(0, self.shown_fragments - self.written)

    @property
    def foreign(self) -> int:
        """Answer parts in the saved reply that gmtags did not write."""
        return len(self.foreign_saved) + self.differing


def count_replies(saved: list[dict[str, Any]], shown: list[dict[str, Any]],
                  replay_json: dict[str, Any], regress_json: dict[str, Any],
                  message_offset: int = 0) -> list[Reply]:
    """Count every visible GM reply.

    ``saved``: the saved chat's messages (SillyTavern's ``.jsonl`` lines after its header:
    ``mes``, ``is_user``, ``is_system``), index = the page's ``mesid``. ``shown``: the page's
    messages (``mesid``, ``is_user``, ``text``). ``replay_json`` and ``regress_json``: what
    ``gmtags replay/regress --format json`` print for the saved chat; their ``message`` is
    ``mesid + message_offset``.
    """
    tags: dict[int, list[dict[str, Any]]] = {}
    for answer in replay_json.get("answers", []):
        tags.setdefault(answer["message"] - message_offset, []).append(answer)
    differing: Counter[int] = Counter()
    for chat in regress_json.get("chats", []):
        for difference in chat.get("differences", []):
            differing[difference["message"] - message_offset] += 1
    by_id = {int(m["mesid"]): m for m in shown}
    replies: list[Reply] = []
    for mesid, message in enumerate(saved):
        if message.get("is_user") or message.get("is_system"):
            continue
        page = by_id.get(mesid)
        if page is None:
            continue  # not shown (hidden or scrolled out): nothing a player sees
        text = str(message.get("mes", ""))
        reply = Reply(mesid, text, str(page.get("text", "")))
        read = tags.get(mesid, [])
        reply.tags_read = len(read)
        reply.differing = differing[mesid]
        own = []
        every = []
        for answer in read:
            if not answer.get("ok", True):
                reply.refused[str(answer.get("reason"))] += 1
            raw = str(answer["tag"]["raw"])
            every.append(raw)
            if answer.get("reason") != "malformed" and has_answer_part(raw):
                own.append(raw)
        reply.written = max(0, len(own) - reply.differing)
        rest = blank_spans(text, own)
        reply.foreign_saved = [excerpt for _, excerpt in answer_fragments(rest)]
        reply.unread = unread_heads(blank_spans(text, every))
        reply.shown_fragments = len(answer_fragments(reply.shown_text))
        replies.append(reply)
    return replies


def read_sillytavern_chat(lines: list[str]) -> list[dict[str, Any]]:
    """The messages of a SillyTavern ``.jsonl`` chat (its first line is the chat's header)."""
    import json

    rows = [json.loads(line) for line in lines if line.strip()]
    if rows and "mes" not in rows[0]:  # the header: user_name, character_name, chat_metadata
        rows = rows[1:]
    return rows
