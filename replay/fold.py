"""The fold: a transcript, turn by turn, through the engine (DESIGN.md "Replay semantics").

Only what the player can see counts: GM replies that are not hidden, and of each reply only the
selected swipe. Player-typed tags never count. A swipe or regenerated answer replaces the reply,
so it starts from the same state and the replaced reply's effects are simply not in the fold.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import tagparse
from engine import Answer, Game, State, TurnContext, apply_reply, every_answer_attr
from engine.actions.events import apply_event
from engine.rules.session import start_session

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
        """The replay JSON of DESIGN.md "Interfaces": answers, final state, diagnostics."""
        return {
            "answers": [a.to_json() for a in self.answers],
            "state": self.state.to_json(),
            "diagnostics": [d.to_json() for d in self.diagnostics],
        }


def turn_key(state: State, session: int, reply: int, message: Message) -> tuple[int, ...]:
    """(session, GM-reply index), plus the swipe index under ``dice: per-swipe``."""
    if state.dice == "per-swipe":
        return (session, reply, message.swipe)
    return (session, reply)


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
    replies: dict[int, int] = {}
    events: dict[tuple[int, int], int] = {}
    last_session = -1
    for index, (session, _, message) in enumerate(flat):
        if session != last_session:
            last_session = session
            state = start_session(state)
        if message.role == "gm":
            # Every GM message, hidden or not, keeps its turn number, so hiding or showing an
            # earlier reply never changes the dice of a later one.
            reply = replies.get(session, 0)
            replies[session] = reply + 1
            if not message.hidden:
                state, _ = fold_reply(
                    game, state, index, message,
                    TurnContext(state.seed, turn_key(state, session, reply, message)),
                    answers, diagnostics)
        elif message.role == "event" and not message.hidden:
            # Host actions apply at their position; their dice are keyed by the turn they
            # follow and their order since it (stream kind "event", never a tag kind).
            reply = replies.get(session, 0)
            events[(session, reply)] = ordinal = events.get((session, reply), 0)
            events[(session, reply)] += 1
            ctx = TurnContext(state.seed, (session, reply), ordinal)
            state, answer = apply_event(game, state, message.event or {}, message.name, ctx)
            answers.append(MessageAnswer(index, answer))
        if on_message is not None:
            on_message(index, state)
        if progress is not None:
            progress(index + 1, total)
    return ReplayResult(answers, state, diagnostics)


def fold_reply(game: Game, state: State, index: int, message: Message, ctx: TurnContext,
               answers: list[MessageAnswer], diagnostics: list[Diagnostic]) -> tuple[State, bool]:
    """Apply one GM reply; its answers and diagnostics are appended to the lists given.

    Also says whether any of the reply's recorded answer parts (``Tag.answer``, written when
    the reply was first answered) differs from the answer given now: each attribute it holds
    must have the same value. A difference means the reply is folded from another state than
    it was answered from (a chat whose front is missing) or under other rules."""
    scanned = tagparse.scan(message.text)
    for diagnostic in scanned.diagnostics:
        diagnostics.append(Diagnostic(diagnostic.code, diagnostic.message, message=index,
                                      line=message.source_line,
                                      span=(diagnostic.start, diagnostic.end)))
    if not scanned.tags:
        return state, False
    state, replied = apply_reply(game, state, scanned.tags, ctx)
    answers.extend(MessageAnswer(index, answer) for answer in replied)
    differs = False
    for tag, answer in zip(scanned.tags, replied, strict=True):
        if tag.answer is not None and tag.malformed is None:
            now = dict(every_answer_attr(answer))
            differs = differs or any(now.get(key) != value for key, value in tag.answer)
    return state, differs
