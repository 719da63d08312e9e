"""The fold: a transcript, turn by turn, through the engine (docs/design.md#replay-semantics).

Only what the player can see counts: GM replies that are not hidden, and of each reply only the
selected swipe. Player-typed tags never count. A swipe or regenerated answer replaces the reply,
so it starts from the same state and the replaced reply's effects are simply not in the fold.

This is the one fold (docs/design.md#data-flow): :func:`replay` (the replay
tool, the harness, the report) and the HTTP stage's cached fold
(:func:`replay.cache.fold_turns`) both step message by message with :func:`fold_message`
from a :class:`Position` (a state and the counters that key the dice), and every dice context
is made by :func:`turn_context`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import tagparse
from engine import (
    Answer,
    Game,
    State,
    TurnContext,
    apply_event,
    apply_reply,
    every_answer_attr,
    start_session,
)

from .transcript import Message, Transcript


@dataclass(frozen=True, slots=True)
class MessageAnswer:
    """An engine answer and the flattened index of the message whose tag it answers."""

    message: int
    answer: Answer

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, **self.answer.to_json()}


@dataclass(frozen=True, slots=True)
class Diagnostic:
    """Something worth knowing about the input: a repaired tag, a skipped line, an event."""

    code: str
    text: str
    message: int | None = None
    line: int | None = None
    span: tuple[int, int] | None = None

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "line": self.line, "code": self.code,
                "text": self.text, "span": list(self.span) if self.span else None}


@dataclass(frozen=True)
class ReplayResult:
    answers: list[MessageAnswer]
    state: State
    diagnostics: list[Diagnostic] = field(default_factory=list)

    def to_json(self) -> dict[str, Any]:
        """The replay JSON of docs/design.md#interfaces: answers, final state, diagnostics."""
        return {
            "answers": [a.to_json() for a in self.answers],
            "state": self.state.to_json(),
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


@dataclass(frozen=True, slots=True)
class Position:
    """Where a fold stands between two messages: the state after the messages so far, and the
    counters that key the dice of the next GM reply or event (docs/design.md#determinism)."""

    state: State
    session: int = 0
    # GM messages of this session so far, hidden ones too, so hiding or showing an earlier
    # reply never changes the dice of a later one: the number of the next reply
    replies: int = 0
    events: int = 0  # visible events since this session's latest GM message


class Step(NamedTuple):
    """What folding one message did."""

    position: Position  # the position after the message
    answers: list[MessageAnswer]  # the answers to its tags (or to the event)
    # whether a recorded answer part of the reply is not what the fold answers now
    differs: bool


def begin_session(position: Position, session: int) -> Position:
    """The position at the start of session number ``session``: its counters at zero and the
    state as a new conversation inherits it (no place holds; docs/design.md#replay-semantics)."""
    return Position(start_session(position.state), session)


def turn_context(position: Position, message: Message) -> TurnContext:
    """The dice context of GM reply or event ``message`` folded at ``position``.

    A reply's turn key is (session, GM-reply index), plus the swipe index under ``dice:
    per-swipe``. An event's dice are keyed by the turn it follows and its order since it
    (stream kind "event", never a tag kind)."""
    seed = position.state.seed
    if message.role == "event":
        return TurnContext(seed, (position.session, position.replies), position.events)
    if position.state.dice == "per-swipe":
        return TurnContext(seed, (position.session, position.replies, message.swipe))
    return TurnContext(seed, (position.session, position.replies))


def fold_message(game: Game, position: Position, index: int, message: Message,
                 diagnostics: list[Diagnostic]) -> Step:
    """Fold one message of the session ``position`` is in: a visible GM reply answers its
    tags, a visible event applies; anything else leaves the state as it is. ``index`` is the
    message's number in the answers; the reply's diagnostics are appended to ``diagnostics``.
    """
    if message.role == "gm":
        after = position.replies + 1
        if message.hidden:
            return Step(Position(position.state, position.session, after), [], False)
        state, answers, differs = _answer_reply(game, position, index, message, diagnostics)
        return Step(Position(state, position.session, after), answers, differs)
    if message.role == "event" and not message.hidden:
        state, answer = apply_event(game, position.state, message.event or {}, message.name,
                                    turn_context(position, message))
        return Step(Position(state, position.session, position.replies, position.events + 1),
                    [MessageAnswer(index, answer)], False)
    return Step(position, [], False)


def replay(game: Game, transcript: Transcript, state: State,
           progress: Callable[[int, int], None] | None = None,
           on_message: Callable[[int, State], None] | None = None) -> ReplayResult:
    """Fold every visible GM reply of ``transcript`` into ``state``; answer every tag.

    ``progress(done, total)`` is called after each message when given; ``on_message(index,
    state)`` gets the state after each message (for reports that show every turn).
    """
    answers: list[MessageAnswer] = []
    diagnostics = [Diagnostic(d.code, d.message, line=d.line) for d in transcript.diagnostics]
    flat = transcript.messages()
    total = len(flat)
    position = Position(state)
    for index, (session, _, message) in enumerate(flat):
        if index == 0 or session != position.session:
            position = begin_session(position, session)
        position, replied, _ = fold_message(game, position, index, message, diagnostics)
        answers.extend(replied)
        if on_message is not None:
            on_message(index, position.state)
        if progress is not None:
            progress(index + 1, total)
    return ReplayResult(answers, position.state, diagnostics)


def _answer_reply(game: Game, position: Position, index: int, message: Message,
                  diagnostics: list[Diagnostic]) -> tuple[State, list[MessageAnswer], bool]:
    """Answer one visible GM reply: the state after it, its answers, and whether any of its
    recorded answer parts (``Tag.answer``, written when the reply was first answered) differs
    from the answer given now: each attribute it holds must have the same value. A difference
    means the reply is folded from another state than it was answered from (a chat whose front
    is missing) or under other rules."""
    scanned = tagparse.scan(message.text)
    for diagnostic in scanned.diagnostics:
        diagnostics.append(Diagnostic(diagnostic.code, diagnostic.message, message=index,
                                      line=message.source_line,
                                      span=(diagnostic.start, diagnostic.end)))
    if not scanned.tags:
        return position.state, [], False
    state, replied = apply_reply(game, position.state, scanned.tags,
                                 turn_context(position, message))
    differs = any(recorded_differs(tag, answer)
                  for tag, answer in zip(scanned.tags, replied, strict=True))
    return state, [MessageAnswer(index, answer) for answer in replied], differs


def recorded_differs(tag: tagparse.Tag, answer: Answer) -> bool:
    """Whether the answer part recorded in ``tag`` (written when its reply was first
    answered) says other than ``answer``, the fold's answer now: each attribute it holds
    must have the same value."""
    if tag.answer is None or tag.malformed is not None:
        return False
    now = dict(every_answer_attr(answer))
    return any(now.get(key) != value for key, value in tag.answer)
