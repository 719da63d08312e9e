"""Answering the tags of the reply the model is writing, whole or as it streams.

A reply's tags are answered against the state at the start of the turn, exactly as the fold
will answer them when the saved chat is replayed. In the returned text each well-formed tag is
rewritten in canonical answered form (docs/design.md#answered-tags); a malformed tag keeps its raw
text (its refusal is in the response metadata and the next prompt's LAST ANSWERS block).

The model never supplies an answer: every answer part it writes (in a tag, in a bracket gmtags
does not read, loose after a tag: :mod:`tagparse.imitation`) is taken out before its tags are
read (:class:`TakeOut`), so each tag the client gets carries the answer gmtags wrote and nothing
else does. A reply that writes the same tag more than :data:`engine.MAX_REPEATS` times is a
model in a loop: it ends before the first copy too many (:attr:`ReplyStream.cut`).

Streaming: text passes through as it arrives, except from a ``[`` that may open a tag, which is
held back until the tag is complete or provably not a tag, and from a ``|`` or a bracket that
may hold an answer part, until its line shows whether it does. A continued reply (SillyTavern's
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
    MAX_REPEATS,
    MAX_TAGS_PER_REPLY,
    VOCABULARY,
    Answer,
    Game,
    State,
    answer_attrs,
    answer_tag,
    apply_reply,
    mark_mid_reply,
    repeat_refusal,
    repeats,
)
from tagparse.heads import Vocabulary, mend
from tagparse.imitation import imitations

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
            index = len(self.answers)
            if index >= MAX_REPEATS and index in repeats(tags[:index + 1]):
                self.answers.append(repeat_refusal(tag))  # as apply_reply: no dice spent
                continue
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


TAKEN_SHOWN = 200  # characters of a part taken out that the metadata shows


class TakeOut:
    """The model's text as it arrives, with every answer part it wrote taken out
    (:func:`tagparse.imitation.imitations`) and, given a ``vocabulary``, each tag it wrote
    under a wrong head read as that tag (:func:`tagparse.heads.mend`): what may still become
    either is held back until it is settled, at most :data:`MAX_HOLD` characters. ``context``
    is the end of text already sent that the next text continues (a bracket left open), read
    but not sent again."""

    def __init__(self, context: str = "", vocabulary: Vocabulary | None = None) -> None:
        self.pending = context
        self.floor = len(context)  # pending[:floor] was sent already
        self.taken: list[str] = []  # each part taken out, as the model wrote it
        self.vocabulary = vocabulary
        self.mended: list[dict[str, str]] = []  # {"wrote", "read"} of each tag read so

    def feed(self, delta: str, final: bool = False) -> str:
        """Add model text; return what is settled of it, parts taken out."""
        self.pending += delta
        found = imitations(self.pending, final)
        if not final and len(self.pending) - found.settled > MAX_HOLD:
            found = imitations(self.pending, True)  # a bracket this long is prose after all
        settled = found.settled
        pieces, at = [], 0
        for part in found.found:
            start = max(part.start, self.floor)  # what was sent stays sent
            if start >= settled or part.end <= start:
                continue
            pieces += [self.pending[at:start], part.replacement]
            self.taken.append(self.pending[start:part.end][:TAKEN_SHOWN])
            at = part.end
        if settled < self.floor:
            return ""  # the text already sent is not settled yet: nothing new is
        pieces.append(self.pending[at:settled])
        sent = self.floor  # the output begins with it as it was (no part starts before it)
        self.pending = self.pending[settled:]
        self.floor = 0
        return self._mended("".join(pieces)[sent:])

    def _mended(self, text: str) -> str:
        """``text`` with its tags under a wrong head read as the tags they are. A bracket
        with a head is settled whole (it may still become an answer part until it closes), so
        none is split between two pieces of output."""
        if self.vocabulary is None or "[" not in text:
            return text
        text, mends = mend(text, self.vocabulary)
        self.mended += [{"wrote": m.wrote[:TAKEN_SHOWN], "read": m.read[:TAKEN_SHOWN]}
                        for m in mends]
        return text

    def drop(self) -> None:
        """Forget what is held: the model stopped writing here."""
        self.pending, self.floor = "", 0


@dataclass
class ReplyStream:
    """Turns the model's reply, chunk by chunk, into the answered text to send on."""

    game: Game
    state: State
    replies: int
    mode: AnswerMode = "inline"
    before: str = ""  # the reply's text already sent (a continued reply)
    full: str = field(init=False)  # the reply so far, answer parts the model wrote taken out
    sent: int = field(init=False)
    answers: list[Answer] = field(default_factory=list)
    finished: bool = field(init=False, default=False)
    # Where the reply was ended because the model wrote one tag too often (engine.MAX_REPEATS):
    # {"reason": "repeated-tag", "tag": the copy's text}. Nothing the model writes after counts.
    cut: dict[str, str] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.full = self.before
        self.sent = len(self.before)
        self._shown: list[str] = [self.before]  # the reply's text as the client has it
        self._live = LiveAnswers(self.game, self.state, self.replies)
        # A tag of the old text that is not finished yet straddles into the continuation.
        self._open = tagparse.unfinished_tag(self.before)
        # The old text's last line: a bracket open there may get an answer part written into it.
        line = max(self.before.rfind("\n"), self.before.rfind("\r")) + 1
        self._take = TakeOut(self.before[max(line, len(self.before) - MAX_HOLD):], VOCABULARY)

    def stop_at(self, index: int) -> None:
        """Tag ``index`` of the reply is answered mid-reply: the model reads its answer and
        writes on from it (its answer carries the mark the replay reads, engine.MID_REPLY)."""
        self._live.stops.append(index)

    def clean(self, delta: str, final: bool = False) -> str:
        """Add model text; return what is settled of it with the answer parts the model wrote
        taken out (:meth:`add` it next)."""
        return "" if self.cut is not None else self._take.feed(delta, final)

    def end_here(self, reason: str, tag: tagparse.Tag) -> None:
        """End the reply where it is, before ``tag``: nothing the model writes after counts."""
        self.cut = {"reason": reason, "tag": tag.raw[:TAKEN_SHOWN]}
        self._take.drop()

    def drop_held(self) -> None:
        """The model stopped writing: what :meth:`clean` holds back is dropped."""
        self._take.drop()

    def add(self, text: str) -> str:
        """Add cleaned text (:meth:`clean`); return what can be sent now."""
        if self.cut is not None:
            return ""
        self.full += text
        out = self._advance(final=False)
        self._shown.append(out)
        return out

    def feed(self, delta: str) -> str:
        """Add model text; return what can be sent now."""
        return self.add(self.clean(delta))

    def finish(self) -> str:
        """The reply is complete: send everything that is left (and the block, in that mode)."""
        text = self.add(self.clean("", final=True))
        text += self._advance(final=True)
        if self.mode == "block":
            text += answers_block(self.answers)
        self._shown.append(text)
        self.finished = True
        return text

    @property
    def taken(self) -> list[str]:
        """The answer parts the model wrote that were taken out, as it wrote them (at most
        :data:`TAKEN_SHOWN` characters each)."""
        return self._take.taken

    @property
    def mended(self) -> list[dict[str, str]]:
        """Each tag the model wrote under a wrong head, as it wrote it and as it was read
        (at most :data:`TAKEN_SHOWN` characters each)."""
        return self._take.mended

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
        over = repeats(scanned.tags)
        if over:
            copy = scanned.tags[min(over)]
            self.end_here("repeated-tag", copy)
            self.full = self.full[:max(self.sent, len(self.full[:copy.start].rstrip()))]
            settled_to = len(self.full)
            scanned = tagparse.scan(self.full)
            if settled_to <= self.sent:
                return ""
        self.answers = self._live.unsettle(scanned.tags) if forced else \
            self._live.update(scanned.tags)
        if self.mode == "inline":
            out = rewrite(self.full, scanned.tags, self.answers, self.sent, settled_to)
        else:
            out = self.full[self.sent:settled_to]
        self.sent = self._open = settled_to
        return out
