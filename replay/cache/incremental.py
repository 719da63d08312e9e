"""The incremental fold: a chat's turns folded from the longest cached prefix, from an earlier
chat of the same game it continues (re-anchoring), or from the party file (see
:mod:`replay.cache`)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from engine import Game, State

from ..fold import Diagnostic, MessageAnswer, Position, begin_session, fold_message
from ..transcript import Turn
from .positions import MAX_WINDOW, PositionKeys, game_scope, window_hash, window_length
from .snapshots import Row, Snapshot, SnapshotCache, window_key
from .stores import AMBIGUOUS

TAIL_TURNS = 2  # turns a re-anchored request may add to the earlier chat: the reply, the player


Anchor = Literal["cached", "start", "re-anchored"]
NOTES: dict[Anchor, str] = {
    "cached": "resumed from a cached snapshot of this chat",
    "start": "folded from the party file",
    "re-anchored": "the front of the chat is missing; it continues the one earlier chat of "
                   "this game that holds its first turns",
}


@dataclass
class FoldOutcome:
    """The fold of a chat's turns, and how it was reached."""

    snapshot: Snapshot
    anchor: Anchor
    reused: int  # turns covered by the snapshot the fold resumed from
    folded: int  # turns folded in this call
    answers: list[MessageAnswer] = field(default_factory=list)
    diagnostics: list[Diagnostic] = field(default_factory=list)
    # some first turns of the chat were seen in another chat, too weakly to continue from it
    weak_match: bool = False
    end: bytes = b""  # the key of the position after the last turn (see reply_position)

    @property
    def anchored(self) -> bool:
        """Whether every recorded answer of the chat is what its fold gives (docs/design.md
        "Interfaces"): read from the chat alone, so no other chat can change it."""
        return self.snapshot.doubts == 0

    def to_json(self) -> dict[str, Any]:
        note = NOTES[self.anchor]
        if self.weak_match and self.anchor != "re-anchored":
            note += ("; some of its first turns were also seen in another chat, too few or "
                     "not in one place, so nothing was taken from it")
        if not self.anchored:
            note += (f"; {self.snapshot.doubts} earlier GM "
                     f"{'reply was' if self.snapshot.doubts == 1 else 'replies were'} answered "
                     "differently than this fold answers them: the front of the chat is "
                     "probably missing (or the ruleset changed), so earlier effects are missing")
        return {"anchored": self.anchored, "anchor": self.anchor, "note": note,
                "reusedTurns": self.reused, "foldedTurns": self.folded,
                "replies": self.snapshot.replies}


class OverBudget(Exception):
    """The work asked for is more than the caller's :class:`Budget`: nothing was done, and it
    is to be done again where it may take long (the stage: in a worker thread)."""


@dataclass(frozen=True)
class Budget:
    """The most work a caller lets one call do where it runs (the stage: on its event loop)."""

    turns: int  # turns folded
    chars: int  # characters of their text

    def allows(self, turns: Sequence[Turn]) -> bool:
        return len(turns) <= self.turns and sum(len(t.text) for t in turns) <= self.chars


def fold_turns(game: Game, start: State, turns: Sequence[Turn],
               cache: SnapshotCache, pause: Callable[[], None] | None = None,
               budget: Budget | None = None, *, whole: bool = False,
               answer_from: int | None = None) -> FoldOutcome:
    """Fold the player and GM ``turns`` of one conversation (see :func:`read_turns`) through
    the fold of every transcript (:func:`replay.fold.fold_message`), around the cache.

    ``pause`` is called after each GM reply folded: the stage passes ``time.sleep(0)`` for a
    large fold in a worker thread, which lets the event loop take the GIL between replies.
    With a ``budget``, a fold of more turns (or text) than it allows raises
    :class:`OverBudget` before any turn is folded (the stage then folds in a worker thread).

    Resumes from the longest prefix already cached. A chat whose cached prefix is shorter than
    a window may have lost its front: it continues an earlier chat only on the evidence
    :func:`_re_anchor` asks for. Every position folded here is stored for the next call,
    with the windows it completes.

    ``whole``: the turns are a whole chat (the state view reads SillyTavern's own): it is
    never re-anchored, and it adds no windows (its hidden messages, which a prompt leaves
    out, would make the prompt's windows look seen at two places). ``answer_from``: resume
    no later than that turn, and fold every turn from it on (no reply snapshot is taken), so
    that the outcome holds their answers.
    """
    scope = game_scope(game, start)
    positions = cache.position_keys(scope, turns)
    found = cache.longest(positions, answer_from)
    anchor: Anchor = "cached"
    weak = False
    window = window_length(turns, 0)
    # a prefix as long as a window (or MAX_WINDOW turns) is the chat's own start
    enough = window if window is not None else min(len(turns), MAX_WINDOW)
    if turns and not whole and (found is None or found[0] < enough):
        anchored, weak = _re_anchor(cache, scope, turns, found[0] if found else 0)
        if anchored is not None:
            positions, found = anchored
            anchor = "re-anchored"
    if found is None:  # a game this server has not seen (or a cache that was emptied)
        cache.save_start(scope, start)
        found = (0, scope, Snapshot(start, 0))
    if anchor == "cached" and found[0] == 0:
        anchor = "start"
    begin, before, snapshot = found
    outcome = FoldOutcome(snapshot, anchor, reused=begin, folded=0, weak_match=weak)
    # A request is one session without events: a snapshot's replies are its whole position.
    position = Position(snapshot.state, 0, snapshot.replies)
    if begin == 0:
        position = begin_session(position, 0)
    last, doubts = snapshot.last_answers, snapshot.doubts
    rows: list[Row] = []
    if cache.replies and answer_from is None and begin < len(turns) and \
            turns[begin].role == "gm":
        # A reply the stage answered itself, sent back as the client got it: its state was
        # saved then (save_reply), and folding its text gives exactly that state.
        key = positions.keys(begin + 1, begin + 1)[0]
        answered = cache.reply(key)
        if answered is not None:
            rows.append((before, key, answered))
            before, begin = key, begin + 1
            position = Position(answered.state, 0, answered.replies)
            last, doubts = answered.last_answers, answered.doubts
            outcome.reused = begin
    todo = turns[begin:]
    if budget is not None and not budget.allows(todo):
        raise OverBudget
    keys = positions.keys(begin + 1, begin + len(todo)) if todo else []
    for turn, key in zip(todo, keys, strict=True):
        position, answers, differs = fold_message(game, position, turn.at, turn.message(),
                                                  outcome.diagnostics)
        if turn.role == "gm":
            outcome.answers.extend(answers)
            last = tuple(a.answer for a in answers)
            doubts += differs
            if pause is not None:
                pause()
        rows.append((before, key, Snapshot(position.state, position.replies, last, doubts)))
        before = key
    outcome.folded = len(todo)
    if rows:
        cache.save(rows, {} if whole else _windows(scope, positions, turns, found[0]))
    outcome.snapshot = Snapshot(position.state, position.replies, last, doubts)
    outcome.end = before
    return outcome


def _windows(scope: bytes, positions: PositionKeys, turns: Sequence[Turn],
             begin: int) -> dict[str, bytes]:
    """The windows of ``turns`` (the turns of ``positions``) that end after position
    ``begin``, each with the key of the position before it."""
    windows: dict[str, bytes] = {}
    first = max(0, begin - MAX_WINDOW + 1)
    for at in range(first, len(turns)):
        length = window_length(turns, at)
        if length is None or at + length <= begin:
            continue
        key = window_key(scope, window_hash(turns[at:at + length]))
        windows[key] = positions.keys(at, at)[0].hex().encode("ascii")
    return windows


def _re_anchor(cache: SnapshotCache, scope: bytes, turns: Sequence[Turn], covered: int,
               ) -> tuple[tuple[PositionKeys, tuple[int, bytes, Snapshot]] | None, bool]:
    """Where a chat whose front is missing continues, if the evidence is strong: ((position
    keys, snapshot found) or None, whether weaker evidence was seen).

    Strong means: the window the chat begins with was seen at exactly one place; the earlier
    chat holds every turn of this one from there on, or all but the last :data:`TAIL_TURNS`
    and then no turn followed (it ended where this one goes on); and that covers more than the
    ``covered`` turns already known from a chat's start. The window must be the chat's first
    turns: a chat with turns of its own before a run that another chat holds is another chat
    (a new chat that shares the run, or one edited near its start), whatever it shares.
    """
    length = window_length(turns, 0)
    if length is None:
        return None, False
    value = cache.windows([window_key(scope, window_hash(turns[:length]))])[0]
    if value is None:
        return None, False
    if value == AMBIGUOUS:
        return None, True
    try:
        before = bytes.fromhex(value.decode("ascii"))
    except (ValueError, UnicodeDecodeError):
        return None, False
    positions = PositionKeys(before, turns)
    found = cache.longest(positions)
    if found is None or found[0] < length:
        return None, True  # the window was seen, but its snapshots are gone
    rest = len(turns) - found[0]
    if rest and (rest > TAIL_TURNS or cache.continued(found[1])):
        return None, True  # the earlier chat went on otherwise: this one only shares turns
    if found[0] <= covered:
        return None, False
    return (positions, found), False
