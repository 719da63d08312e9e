"""The regression harness: replay recorded chats and diff their answers against today's engine.

For every tag of a visible GM reply, each attribute of the recorded answer part (``Tag.answer``,
written by ``record``) is compared with the same attribute of the answer computed now
(``engine.every_answer_attr``: ok, reason, text and the whole record). So a compact answer part
(ok, text and a few results) is checked on what it carries, and an older recording, whose
answer parts carry the whole record, is still checked on all of it. A
difference names the chat, the message, the tag and each attribute that changed. A tag without
an answer part is "unanswered" (a difference only with ``strict``); a malformed tag has none to
compare.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from fractions import Fraction
from typing import Any

import tagparse
from engine import Game, State, every_answer_attr

from .fold import replay
from .record import AnsweredTag, Source, answered_tags
from .transcript import TranscriptFormat

Pairs = tuple[tuple[str, str], ...]


@dataclass(frozen=True, slots=True)
class Difference:
    """A recorded answer that today's engine answers differently."""

    message: int
    line: int | None
    tag: str  # the request part, in canonical form
    recorded: Pairs
    now: Pairs  # the recorded attributes' values now (an attribute gone now is left out)

    def changes(self) -> list[tuple[str, str | None, str | None]]:
        """(attribute, recorded value, value now) for each attribute that differs, in order."""
        before, after = dict(self.recorded), dict(self.now)
        keys = list(dict.fromkeys([*before, *after]))
        return [(key, before.get(key), after.get(key)) for key in keys
                if before.get(key) != after.get(key)]

    def diff_lines(self) -> list[str]:
        """A readable diff: ``- key: recorded`` and ``+ key: now`` for each changed attribute."""
        lines: list[str] = []
        for key, before, after in self.changes():
            if before is not None:
                lines.append(f"- {key}: {before}")
            if after is not None:
                lines.append(f"+ {key}: {after}")
        return lines

    def to_json(self) -> dict[str, Any]:
        return {
            "message": self.message,
            "line": self.line,
            "tag": self.tag,
            "recorded": dict(self.recorded),
            "now": dict(self.now),
            "changed": [key for key, _, _ in self.changes()],
        }


@dataclass(frozen=True, slots=True)
class Unanswered:
    """A tag of a visible GM reply with no recorded answer part."""

    message: int
    line: int | None
    tag: str

    def to_json(self) -> dict[str, Any]:
        return {"message": self.message, "line": self.line, "tag": self.tag}


@dataclass
class ChatReport:
    """What regress found in one chat."""

    chat: str
    answers: int = 0  # recorded answers compared
    differences: list[Difference] = field(default_factory=list)
    unanswered: list[Unanswered] = field(default_factory=list)
    error: str | None = None  # the chat could not be read or replayed
    format: TranscriptFormat = "gmtags"  # how its places are named (replay.transcript.place)

    def failed(self, strict: bool = False) -> bool:
        return bool(self.differences or self.error or (strict and self.unanswered))

    def to_json(self) -> dict[str, Any]:
        return {
            "chat": self.chat,
            "answers": self.answers,
            "differences": [d.to_json() for d in self.differences],
            "unanswered": [u.to_json() for u in self.unanswered],
            "error": self.error,
        }


def request_form(tag: tagparse.Tag) -> str:
    """The request part of a tag in canonical form (its raw text when malformed)."""
    if tag.malformed is not None:
        return tag.raw
    return tagparse.render(tag.kind, tag.attrs)


# Record keys as recordings that carry the whole record wrote them before every key was
# camelCase (answer attribute names are lower case): such a recording still regresses.
RENAMED_RECORD_KEYS = {old.replace("_", ""): new.lower() for old, new in (
    ("breaks_roll", "breaksRoll"), ("curse_ended", "curseEnded"), ("gate_dc", "gateDc"),
    ("gate_label", "gateLabel"), ("gate_rolls", "gateRolls"), ("gate_total", "gateTotal"),
    ("item_used", "itemUsed"), ("player_message", "playerMessage"))}
# ... and the record keys whose exact fraction was text then (``"7/5"``).
FRACTION_KEYS = frozenset({"multiplier", "harmshare", "share", "blow"})
_FRACTION_TEXT = re.compile(r"(-?\d+)(?:/(\d+))?")


def today_form(pairs: Pairs) -> Pairs:
    """A recorded answer part in today's attribute names and value forms: a renamed record
    key by its name now, and a fraction recorded as text (``"7/5"``) in the form a record
    writes it now (``{"den":5,"num":7}``)."""
    found = []
    for key, value in pairs:
        match = _FRACTION_TEXT.fullmatch(value) if key in FRACTION_KEYS else None
        if match is not None:
            fraction = Fraction(int(match[1]), int(match[2] or 1))
            value = json.dumps({"den": fraction.denominator, "num": fraction.numerator},
                               separators=(",", ":"))
        found.append((RENAMED_RECORD_KEYS.get(key.replace("_", ""), key), value))
    return tuple(found)


def compare(chat: str, answered: list[AnsweredTag]) -> ChatReport:
    """Compare every attribute of each recorded answer part with its value now."""
    report = ChatReport(chat)
    for item in answered:
        tag = item.tag
        if tag.malformed is not None:
            continue
        if tag.answer is None:
            report.unanswered.append(Unanswered(item.message, item.line, request_form(tag)))
            continue
        report.answers += 1
        now = dict(every_answer_attr(item.answer))
        recorded = today_form(tag.answer)
        if any(now.get(key) != value for key, value in recorded):
            seen = tuple((key, now[key]) for key, _ in recorded if key in now)
            report.differences.append(
                Difference(item.message, item.line, request_form(tag), recorded, seen))
    return report


def regress(chat: str, game: Game, source: Source, state: State) -> ChatReport:
    """Replay one recorded chat and compare every recorded answer with today's."""
    result = replay(game, source.transcript, state)
    report = compare(chat, list(answered_tags(source.transcript, result)))
    report.format = source.transcript.format
    return report
