"""``POST /games/<game>/v1/state``: the game as the player sees it, for the SillyTavern panel
(``sillytavern-extension/gmtags/``; README "See the game in SillyTavern").

The body is SillyTavern's chat as its page holds it, ``{"chat": getContext().chat}`` (each
message's ``name``, ``is_user``, ``is_system``, ``mes``, ``swipe_id``, ``swipes`` and
``extra.type`` are read; anything else is ignored), and optionally ``"after": N``: answers
and diagnostics only from chat message N on (the messages on screen), and optionally
``"base": {"view": B, "keep": K}``: the chat is the first K messages of the chat whose reply
said ``"base": B``, then ``chat`` (so the page sends only what changed; 409 ``base_unknown``
when this process no longer knows B: send the whole chat). It is read by the
SillyTavern reader ``gmtags replay`` uses (:func:`replay.formats.transcript_from_sillytavern`:
hidden messages, swipes, per-swipe dice, each message numbered by its line in the saved file)
and folded through the stage's snapshot cache, with the game folder's ruleset and party, as a
whole chat (never re-anchored). The reply::

    {"view": 2, "gmtags": "0.1.0", "game": "harrow",
     "answers": [...], "state": {...}, "diagnostics": [...],
     "party": {"characters": [...], "place": {...} | null, "encounter": {...} | null},
     "refused": [2, 7], "differs": [], "lastReply": 40, "changes": {...},
     "cache": {"reusedTurns": 80, "foldedTurns": 2}, "base": "6c1f…"}

``answers``, ``state`` and ``diagnostics`` are exactly ``gmtags replay --format json`` of the
same chat saved as ``.jsonl``. ``party`` is what the panel draws (:mod:`replay.view`);
``refused`` and ``differs`` index ``answers`` (refused tags; tags whose recorded answer part
is not what the rules answer now); ``lastReply`` is the last visible GM reply (a message
index, as in ``answers``) and ``changes`` what it changed (:func:`replay.view.changes_view`);
``cache`` how many turns the fold took from the snapshot cache and how many it folded;
``base`` names this chat for the next request's ``"base"``.
``chatIndex`` (each message's index in the chat array) is there only when the reader skipped
a message, so that message numbers and chat indexes differ.

The answers of each GM reply folded are remembered by the key of the position after it
(:class:`TurnMemo`): the snapshot cache keeps states, and the panel wants every reply's
answers, so after a new reply only the new turns are folded.
"""

from __future__ import annotations

import secrets
import threading
from collections import OrderedDict, deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache
from importlib import metadata
from typing import TYPE_CHECKING, Any

import tagparse
from engine import Answer, State

from ..cache import SnapshotCache, common_prefix, fold_turns, game_scope
from ..fold import Diagnostic, Position, begin_session, recorded_differs
from ..formats import SillyTavernEntry, sillytavern_entries, sillytavern_transcript
from ..transcript import Transcript, TranscriptError, Turn
from ..view import changes_view, party_view

if TYPE_CHECKING:
    from .app import GameFolder

VIEW = 2  # the reply's "view": its version, raised when a key changes meaning (2: the state
# in it is written camelCase, README "The JSON gmtags writes")
MEMO_TURNS = 100_000  # GM replies whose answers are remembered, newest used
RECENT_CHATS = 8  # chats whose read messages a next request of the same chat reuses
BODY = 'the body is {"chat": [...]} (SillyTavern\'s getContext().chat) and optionally ' \
       '"after": a message index'


@cache
def gmtags_version() -> str:
    """The installed gmtags' version (``/healthz`` says it; the extension matches it)."""
    try:
        return metadata.version("gmtags")
    except metadata.PackageNotFoundError:
        return "unknown"


class ViewError(Exception):
    """A body the state view cannot answer: ``status`` (400) with this message."""

    def __init__(self, message: str, status: int = 400, code: str | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.code = code


BASE_UNKNOWN = "base_unknown"  # 409: the base chat is not known here; send the whole chat


@dataclass(frozen=True, slots=True)
class Base:
    """A request that sends only the end of its chat: the chat is the first ``keep`` messages
    of the chat an earlier reply of this process named ``view`` (its ``"base"``), then
    ``chat``."""

    view: str
    keep: int


@dataclass(frozen=True, slots=True)
class Folded:
    """What folding one visible GM reply gave: its answers (and their JSON, without the
    message index), whether each differs from the answer part recorded in the reply, and the
    diagnostics of its tags (code, text, span)."""

    answers: tuple[Answer, ...]
    answer_json: tuple[dict[str, Any], ...]
    differs: tuple[bool, ...]
    diagnostics: tuple[tuple[str, str, tuple[int, int] | None], ...]


NOTHING = Folded((), (), (), ())


class TurnMemo:
    """The :class:`Folded` of GM replies by the key of the position after them (the snapshot
    cache's keys: a position's key names the whole chat up to it, so what is remembered for
    it never changes). An LRU of :data:`MEMO_TURNS` replies, shared by the threads."""

    def __init__(self, size: int = MEMO_TURNS) -> None:
        self.size = size
        self._items: OrderedDict[bytes, Folded] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[bytes]) -> list[Folded | None]:
        with self._lock:
            found = [self._items.get(key) for key in keys]
            for key, folded in zip(keys, found, strict=True):
                if folded is not None:
                    self._items.move_to_end(key)
        return found

    def put_many(self, items: Sequence[tuple[bytes, Folded]]) -> None:
        with self._lock:
            for key, folded in items:
                self._items[key] = folded
                self._items.move_to_end(key)
            while len(self._items) > self.size:
                self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


def whole_number(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def read_body(body: Any) -> tuple[list[Any], int, Base | None]:
    """The chat array, ``after`` and ``base`` of a state request; :class:`ViewError` if it
    is not one."""
    if not isinstance(body, dict) or not isinstance(body.get("chat"), list):
        raise ViewError(BODY)
    after = body.get("after") or 0
    if not whole_number(after):
        raise ViewError('"after" is a message index: a whole number, 0 or more')
    base = body.get("base")
    if base is None:
        return body["chat"], after, None
    if not isinstance(base, dict) or not isinstance(base.get("view"), str) or \
            not whole_number(base.get("keep")):
        raise ViewError('"base" is {"view": the "base" of an earlier reply, "keep": how many '
                        'of its messages the chat begins with}')
    return body["chat"], after, Base(base["view"], base["keep"])


def chat_turns(transcript: Transcript) -> list[Turn]:
    """The player and GM messages of a chat read whole, as the cached fold steps over them:
    hidden ones too (a hidden reply keeps its number), with their swipes and lines."""
    return [Turn(index, message.role, message.text, message.hidden, message.swipe,
                 message.source_line)
            for index, (_, _, message) in enumerate(transcript.messages())
            if message.role in ("player", "gm")]


class ChatReader:
    """Reads chat arrays as :func:`replay.formats.transcript_from_sillytavern` does, reusing
    what it read of a recent chat this one begins with: a chat's next request repeats every
    message of the last one (reading 4,000 messages again took most of a request's time).

    Each chat read is named (a random token, the reply's ``"base"``), so that the page's next
    request may send only what changed (:class:`Base`): a 2,000-turn chat is a megabyte to
    serialise, send and parse, and most of the time the page took before."""

    def __init__(self, recent: int = RECENT_CHATS) -> None:
        self._recent: deque[tuple[str, list[Any], list[SillyTavernEntry]]] = deque(
            maxlen=recent)
        self._lock = threading.Lock()

    def read(self, chat: list[Any], base: Base | None = None) -> tuple[str, Transcript]:
        """The token naming ``chat`` (after ``base``'s messages, when given) and its
        transcript; :class:`ViewError` 409 when ``base`` names no chat known here."""
        with self._lock:
            recent = list(self._recent)
        if base is not None:
            older = next((c for token, c, _ in recent if token == base.view), None)
            if older is None or base.keep > len(older):
                raise ViewError("the base chat is not known here (a restarted gmtags, another "
                                "worker): send the whole chat", 409, BASE_UNKNOWN)
            chat = older[:base.keep] + chat
        known: list[SillyTavernEntry] = []
        for _, old_chat, old_entries in reversed(recent):  # newest first
            if min(len(old_chat), len(chat)) <= len(known):
                continue
            shared = common_prefix(old_chat, chat)  # the messages as parsed: equal values
            if shared > len(known):
                known = old_entries[:shared]
        entries = sillytavern_entries(chat, known)
        token = secrets.token_hex(12)
        with self._lock:
            self._recent.append((token, chat, entries))
        return token, sillytavern_transcript(entries)


class StateViews:
    """The state view of the stage's games, over the stage's snapshot cache."""

    def __init__(self, cache: SnapshotCache, memo: TurnMemo | None = None) -> None:
        self.cache = cache
        self.memo = memo if memo is not None else TurnMemo()
        self.reader = ChatReader()

    def view(self, folder: GameFolder, body: Any,
             pause: Callable[[], None] | None = None) -> dict[str, Any]:
        """The reply to one state request (see the module's docstring); a big fold calls
        ``pause`` between replies (the stage passes a :class:`~.courtesy.LoopFirst`)."""
        chat, after, base = read_body(body)
        try:
            token, transcript = self.reader.read(chat, base)
        except TranscriptError as failure:
            raise ViewError(str(failure)) from None
        game, start = folder.game, folder.start
        turns = chat_turns(transcript)
        shown = [at for at, turn in enumerate(turns) if turn.role == "gm" and not turn.hidden]
        positions = self.cache.position_keys(game_scope(game, start), turns)
        keys = positions.keys(1, len(turns)) if turns else []
        found = self.memo.get_many([keys[at] for at in shown])
        missing = next((at for at, folded in zip(shown, found, strict=True) if folded is None),
                       None)
        outcome = fold_turns(game, start, turns, self.cache, pause, whole=True,
                             answer_from=missing)
        fresh = self._folded(turns, shown, outcome.reused, outcome.answers,
                             outcome.diagnostics)
        self.memo.put_many([(keys[at], folded) for at, folded in fresh.items()])
        # the fold resumed no later than the first reply not remembered: every reply before
        # it was, every one from it on was folded now
        results: dict[int, Folded] = {}
        for at, remembered in zip(shown, found, strict=True):
            folded = fresh.get(at, remembered)
            if folded is None:
                raise AssertionError(f"turn {at}: neither remembered nor folded")
            results[at] = folded
        state = outcome.snapshot.state
        before = self._before_last_reply(folder, turns, shown, pause)
        self.cache.flush()  # a view's snapshots are stored now: the next request may be
        # another worker's (a stage with --redis), and nothing here waits on a model
        reply = self._reply(folder, transcript, turns, shown, results, state, before, after)
        reply["cache"] = {"reusedTurns": outcome.reused, "foldedTurns": outcome.folded}
        reply["base"] = token
        return reply

    def _folded(self, turns: Sequence[Turn], shown: Sequence[int], begin: int,
                answers: Sequence[Any], diagnostics: Sequence[Diagnostic]) -> dict[int, Folded]:
        """The :class:`Folded` of each visible GM reply from turn ``begin`` on, out of what
        the fold answered and diagnosed (by message index)."""
        by_message: dict[int, list[Answer]] = {}
        for item in answers:
            by_message.setdefault(item.message, []).append(item.answer)
        notes: dict[int, list[tuple[str, str, tuple[int, int] | None]]] = {}
        for diagnostic in diagnostics:
            if diagnostic.message is not None:
                notes.setdefault(diagnostic.message, []).append(
                    (diagnostic.code, diagnostic.text, diagnostic.span))
        fresh: dict[int, Folded] = {}
        for at in shown:
            if at < begin:
                continue
            turn = turns[at]
            replied = tuple(by_message.get(turn.at, ()))
            noted = tuple(notes.get(turn.at, ()))
            if not replied and not noted:
                fresh[at] = NOTHING
                continue
            tags = tagparse.scan(turn.text).tags if replied else []
            differs = tuple(recorded_differs(tag, answer)
                            for tag, answer in zip(tags, replied, strict=True)) \
                if len(tags) == len(replied) else tuple(False for _ in replied)
            fresh[at] = Folded(replied, tuple(a.to_json() for a in replied), differs, noted)
        return fresh

    def _before_last_reply(self, folder: GameFolder, turns: Sequence[Turn],
                           shown: Sequence[int],
                           pause: Callable[[], None] | None) -> State | None:
        """The state the last visible GM reply was answered from (None: no reply yet): its
        position was just folded, so the cache has it."""
        if not shown:
            return None
        last = shown[-1]
        if last == 0:
            return begin_session(Position(folder.start), 0).state
        return fold_turns(folder.game, folder.start, turns[:last], self.cache, pause,
                          whole=True).snapshot.state

    def _reply(self, folder: GameFolder, transcript: Transcript, turns: Sequence[Turn],
               shown: Sequence[int], results: dict[int, Folded], state: State,
               before: State | None, after: int) -> dict[str, Any]:
        flat = transcript.messages()
        # each message's index in SillyTavern's chat array: its line in the file, less two
        chat_index = [(m.source_line or 2) - 2 for _, _, m in flat]
        answers: list[dict[str, Any]] = []
        refused: list[int] = []
        differs: list[int] = []
        diagnostics = [Diagnostic(d.code, d.message, line=d.line).to_json()
                       for d in transcript.diagnostics
                       if d.line is None or d.line - 2 >= after]
        last_attacks: tuple[Answer, ...] = ()
        for at in shown:
            turn, folded = turns[at], results[at]
            if any(a.tag.kind == "attack" for a in folded.answers):
                last_attacks = tuple(a for a in folded.answers if a.tag.kind == "attack")
            if chat_index[turn.at] < after:
                continue
            for answer, answer_json, differ in zip(folded.answers, folded.answer_json,
                                                   folded.differs, strict=True):
                if not answer.ok:
                    refused.append(len(answers))
                if differ:
                    differs.append(len(answers))
                answers.append({"message": turn.at, **answer_json})
            diagnostics += [Diagnostic(code, text, turn.at, turn.line, span).to_json()
                            for code, text, span in folded.diagnostics]
        encounter = state.encounter
        if encounter is None or encounter.round == 0:
            last_attacks = ()
        reply: dict[str, Any] = {
            "view": VIEW, "gmtags": gmtags_version(), "game": folder.name,
            "answers": answers, "state": state.to_json(), "diagnostics": diagnostics,
            "party": party_view(folder.game, state, last_attacks),
            "refused": refused, "differs": differs,
            "lastReply": turns[shown[-1]].at if shown else None,
            "changes": changes_view(folder.game, before, state) if before is not None
            else {"characters": {}, "place": False},
        }
        if after:
            reply["after"] = after
        if chat_index != list(range(len(flat))):
            reply["chatIndex"] = chat_index
        return reply


__all__ = ["BASE_UNKNOWN", "VIEW", "Base", "StateViews", "TurnMemo", "ViewError",
           "gmtags_version", "read_body"]
