"""Answering the tags of the reply the model is writing, whole or as it streams.

A reply's tags are answered against the state at the start of the turn, exactly as the fold
will answer them when the saved chat is replayed. In the returned text each well-formed tag is
rewritten in canonical answered form (DESIGN.md "Answered tags"); a malformed tag keeps its raw
text (its refusal is in the response metadata and the next prompt's LAST ANSWERS block).

Streaming: text passes through as it arrives, except from a ``[`` that may open a tag, which is
held back until the tag is complete or provably not a tag. A continued reply (SillyTavern's
Continue) is one reply: the old text is the start of ``full`` and is not sent again; a tag that
straddles it gets its answer part inserted before its closing ``]``. Each tag is answered once,
as it completes (:class:`LiveAnswers`), not again with every chunk that follows it.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Literal

import tagparse
from engine import (
    MAX_TAGS_PER_REPLY,
    Answer,
    Game,
    State,
    answer_attrs,
    answer_tag,
    apply_reply,
    mark_mid_reply,
)

from ..fold import Position, turn_context
from ..transcript import Message

AnswerMode = Literal["inline", "block", "none"]
MAX_HOLD = 4096  # characters held back for one unfinished tag before it is let through raw


class LiveAnswers:
    """The answers to the tags of a reply that is still being written, each tag answered
    once, as it completes, from the state after the tags before it.

    Always what :func:`engine.apply_reply` gives the tags so far: tags are applied in text
    order, each with its ordinal among the reply's tags of its kind (the dice of the k-th
    check of a turn), as ``apply_reply`` applies them while every ``[place:]`` comes before
    the reply's other tags.
    """

    def __init__(self, game: Game, state: State, replies: int) -> None:
        self.game = game
        self.start = state
        # a request is one session without events (see replay.cache.fold_turns)
        self.ctx = turn_context(Position(state, 0, replies), Message(role="gm"))
        self.state = state  # after the tags answered so far
        self.tags: tuple[tagparse.Tag, ...] = ()
        self.answers: list[Answer] = []
        self._ordinals: dict[str, int] = {}
        self._others = False  # a tag other than [place:] is among those answered
        self._whole = False  # the tags are answered as a whole reply, not one by one
        self.stops: list[int] = []  # the tags answered mid-reply (engine.apply_reply's stops)

    def update(self, tags: tuple[tagparse.Tag, ...]) -> list[Answer]:
        """The answers to ``tags``: the reply's tags up to where it has settled, which begin
        with the tags answered before (text that has settled reads the same whatever follows:
        :func:`tagparse.unfinished_tag`)."""
        if self._whole:
            if tags != self.tags:
                self.state, self.answers = apply_reply(self.game, self.start, tags, self.ctx,
                                                       self.stops)
                self.tags = tags
            return self.answers
        known = len(self.tags)
        if known and (len(tags) < known or tags[known - 1] != self.tags[-1]):
            # The last tag answered reads otherwise now: a tag left unclosed at the end of the
            # settled text is "never closed" until the text after it shows the next "[". Only
            # the last one can: every tag before it is followed by the next tag's "[". Answer
            # again from the start of the turn.
            self._restart()
        if len(tags) > MAX_TAGS_PER_REPLY:
            return self.unsettle(tags)
        for tag in tags[len(self.tags):]:
            if tag.kind == "place" and self._others:
                # A [place:] after another tag is resolved before it (buy and sell price at
                # the place that holds at the end of the reply), so the tags answered already
                # were answered at the wrong place: the reply is answered whole from now on.
                return self.unsettle(tags)
            self._others = self._others or tag.kind != "place"
            self.state, answer = answer_tag(self.game, self.state, tag,
                                            self.ctx.for_tag(self._ordinal(tag.kind)))
            if len(self.answers) in self.stops:
                answer = mark_mid_reply(answer)
            self.answers.append(answer)
        self.tags = tags
        return self.answers

    def unsettle(self, tags: tuple[tagparse.Tag, ...]) -> list[Answer]:
        """Answer ``tags`` as a whole reply, now and at every update after: for when the tags
        answered one by one are not answered as the whole reply answers them, or may yet read
        otherwise (text let through before it settled)."""
        self._whole = True
        self._restart()
        return self.update(tags)

    def _restart(self) -> None:
        """Forget the tags answered: the next update answers from the start of the turn."""
        self.state, self.tags, self.answers = self.start, (), []
        self._ordinals = {}
        self._others = False

    def _ordinal(self, kind: str) -> int:
        ordinal = self._ordinals.get(kind, 0)
        self._ordinals[kind] = ordinal + 1
        return ordinal


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
    first = bisect.bisect_right(tags, start, key=attrgetter("end"))  # tags end in text order
    for tag, answer in zip(tags[first:], answers[first:], strict=True):
        if tag.start >= end:
            break
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
    finished: bool = field(init=False, default=False)

    def __post_init__(self) -> None:
        self.full = self.before
        self.sent = len(self.before)
        self._shown: list[str] = [self.before]  # the reply's text as the client has it
        self._live = LiveAnswers(self.game, self.state, self.replies)
        # A tag of the old text that is not finished yet straddles into the continuation.
        self._open = tagparse.unfinished_tag(self.before)

    def stop_at(self, index: int) -> None:
        """Tag ``index`` of the reply is answered mid-reply: the model reads its answer and
        writes on from it (its answer carries the mark the replay reads, engine.MID_REPLY)."""
        self._live.stops.append(index)

    def feed(self, delta: str) -> str:
        """Add model text; return what can be sent now."""
        self.full += delta
        out = self._advance(final=False)
        self._shown.append(out)
        return out

    def finish(self) -> str:
        """The reply is complete: send everything that is left (and the block, in that mode)."""
        text = self._advance(final=True)
        if self.mode == "block":
            text += answers_block(self.answers)
        self._shown.append(text)
        self.finished = True
        return text

    @property
    def shown(self) -> str:
        """The whole reply as the client has it once it is finished (a continued reply's old
        text included): the text of the GM turn its next request holds."""
        return "".join(self._shown)

    @property
    def after(self) -> State:
        """The state after the tags answered so far."""
        return self._live.state

    def _advance(self, final: bool) -> str:
        settled_to = len(self.full) if final else \
            tagparse.unfinished_tag(self.full, min(self._open, self.sent))
        forced = not final and len(self.full) - settled_to > MAX_HOLD
        if forced:
            settled_to = len(self.full)  # an unfinished tag this long is prose after all
        if settled_to <= self.sent:
            self._open = min(self._open, settled_to)
            return ""
        scanned = tagparse.scan(self.full[:settled_to])
        self.answers = self._live.unsettle(scanned.tags) if forced else \
            self._live.update(scanned.tags)
        if self.mode == "inline":
            out = rewrite(self.full, scanned.tags, self.answers, self.sent, settled_to)
        else:
            out = self.full[self.sent:settled_to]
        self.sent = self._open = settled_to
        return out
