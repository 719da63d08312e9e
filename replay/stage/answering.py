"""Answering the tags of the reply the model is writing, whole or as it streams.

A reply's tags are answered against the state at the start of the turn, exactly as the fold
will answer them when the saved chat is replayed. In the returned text each well-formed tag is
rewritten in canonical answered form (DESIGN.md "Answered tags"); a malformed tag keeps its raw
text (its refusal is in the response metadata and the next prompt's LAST ANSWERS block).

Streaming: text passes through as it arrives, except from a ``[`` that may open a tag, which is
held back until the tag is complete or provably not a tag. A continued reply (SillyTavern's
Continue) is one reply: the old text is the start of ``full`` and is not sent again; a tag that
straddles it gets its answer part inserted before its closing ``]``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

import tagparse
from engine import Answer, Game, State, answer_attrs, apply_reply
from tagparse.grammar import TAG_KINDS, patterns

from ..fold import Position, turn_context
from ..transcript import Message

AnswerMode = Literal["inline", "block", "none"]
MAX_HOLD = 4096  # characters held back for one unfinished tag before it is let through raw
_HEAD_START = re.compile(r"\[\s*([A-Za-z_]*)(\s*)")
_LINE_END = re.compile(r"[\n\r]")


def answer_part(tag: tagparse.Tag, answer: Answer) -> str:
    """`` | ok="true" text="..."``: the answer attributes as written inside a tag."""
    rendered = tagparse.render(tag.kind, (), answer_attrs(answer))
    return rendered[len(tag.kind) + 2:-1]


def rewrite(text: str, tags: tuple[tagparse.Tag, ...], answers: list[Answer], start: int,
            end: int) -> str:
    """``text[start:end]`` with each tag in it answered inline.

    A tag that begins before ``start`` (it straddles text already sent) keeps the part after
    ``start`` as written, with its answer part inserted before its closing ``]``.
    """
    pieces: list[str] = []
    at = start
    for tag, answer in zip(tags, answers, strict=True):
        if tag.end <= start or tag.start >= end:
            continue
        if tag.malformed is not None:
            continue  # kept as written
        if tag.start < start:
            if tag.answer is None and text[tag.end - 1] == "]":
                # before the closing "]", or before "\]" (a markdown-escaped close)
                close = tag.end - 2 if text[tag.end - 2:tag.end] == "\\]" else tag.end - 1
                pieces.append(text[at:close] + answer_part(tag, answer) + text[close:tag.end])
                at = tag.end
            continue
        pieces.append(text[at:tag.start])
        pieces.append(tagparse.render(tag.kind, tag.attrs, answer_attrs(answer)))
        at = tag.end
    pieces.append(text[at:end])
    return "".join(pieces)


def answers_block(answers: list[Answer]) -> str:
    """The trailing block of the ``block`` answer mode (plain lines, no tags)."""
    if not answers:
        return ""
    lines = ["", "", "— gmtags —"]
    for answer in answers:
        status = "ok" if answer.ok else f"refused ({answer.reason})"
        lines.append(f"{answer.tag.kind}: {status}: {answer.text}")
    return "\n".join(lines)


def _could_become_head(text: str, at: int) -> bool:
    """Whether ``text[at:]`` (starting with ``[``) is the start of a tag head still arriving."""
    match = _HEAD_START.match(text, at)
    if match is None or match.end() != len(text) or len(text) - at > 64:
        return False
    name = match.group(1).lower()
    if match.group(2) and name:
        return name in TAG_KINDS
    return any(kind.startswith(name) for kind in TAG_KINDS)


def settled(text: str, start: int, final: bool) -> int:
    """How far ``text`` is settled from ``start``: no tag that begins before it is unfinished."""
    found = patterns()
    at = start
    while True:
        bracket = text.find("[", at)
        if bracket < 0:
            return len(text)
        head = found.head.match(text, bracket)
        if head is None:
            if not final and _could_become_head(text, bracket):
                return bracket
            at = bracket + 1
            continue
        body = found.body.match(text, head.end())
        stop = body.end() if body is not None else head.end()
        if stop >= len(text):
            return len(text) if final else bracket
        if text[stop] in "[]":
            at = stop + 1 if text[stop] == "]" else stop
            continue
        # A quote that does not close yet: settled once its line has ended.
        line_end = _LINE_END.search(text, stop)
        if line_end is None:
            return len(text) if final else bracket
        at = line_end.start()


@dataclass
class ReplyStream:
    """Turns the model's reply, chunk by chunk, into the answered text to send on."""

    game: Game
    state: State
    replies: int
    mode: AnswerMode = "inline"
    before: str = ""  # the reply's text already sent (a continued reply)
    full: str = field(init=False)
    sent: int = field(init=False)
    answers: list[Answer] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.full = self.before
        self.sent = len(self.before)
        # A tag of the old text that is not finished yet straddles into the continuation.
        self._open = settled(self.before, 0, final=False)

    def feed(self, delta: str) -> str:
        """Add model text; return what can be sent now."""
        self.full += delta
        return self._advance(final=False)

    def finish(self) -> str:
        """The reply is complete: send everything that is left (and the block, in that mode)."""
        text = self._advance(final=True)
        if self.mode == "block":
            text += answers_block(self.answers)
        return text

    def _advance(self, final: bool) -> str:
        settled_to = settled(self.full, min(self._open, self.sent), final)
        if not final and len(self.full) - settled_to > MAX_HOLD:
            settled_to = len(self.full)  # an unfinished tag this long is prose after all
        if settled_to <= self.sent:
            self._open = min(self._open, settled_to)
            return ""
        scanned = tagparse.scan(self.full[:settled_to])
        self.answers = self._answer(scanned.tags)
        if self.mode == "inline":
            out = rewrite(self.full, scanned.tags, self.answers, self.sent, settled_to)
        else:
            out = self.full[self.sent:settled_to]
        self.sent = self._open = settled_to
        return out

    def _answer(self, tags: tuple[tagparse.Tag, ...]) -> list[Answer]:
        if not tags:
            return []
        # a request is one session without events (see replay.cache.fold_turns)
        ctx = turn_context(Position(self.state, 0, self.replies), Message(role="gm"))
        return apply_reply(self.game, self.state, tags, ctx)[1]
