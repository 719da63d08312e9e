"""The transcript model: what every reader produces and what the fold consumes.

A transcript is a list of sessions (conversations of one game); each session is a list of
messages with the selected swipe's text. Readers never raise on bad content: a line they cannot
use becomes a `ReadDiagnostic`. Only input that cannot be read at all raises `TranscriptError`.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict

Role = Literal["player", "gm", "system", "event"]
TranscriptFormat = Literal["gmtags", "sillytavern", "openai"]


class Message(BaseModel):
    """One chat message as the player saw it (the selected swipe), plus its alternatives."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    name: str | None = None
    text: str = ""
    swipes: tuple[str, ...] | None = None
    swipe: int = 0
    hidden: bool = False
    new_session: bool = False
    event: dict[str, Any] | None = None
    source_line: int | None = None


class Turn(NamedTuple):
    """A player or GM message of a request to the HTTP stage: its position in the request's
    ``messages`` array, its role and its text. The stage's light form of a :class:`Message`
    (:func:`replay.formats.openai.read_turns`): a chat's next request repeats every turn of the
    last one, and the turns a cached snapshot covers are compared and hashed, never folded.

    A chat the state view reads whole (SillyTavern's, :mod:`replay.stage.state_view`) also
    has hidden messages and swipes, which the fold counts (a hidden reply keeps its number;
    ``dice: per-swipe`` keys the dice by the swipe), and its own line numbers; a prompt has
    neither, so the stage's turns keep the defaults."""

    at: int
    role: Role
    text: str
    hidden: bool = False
    swipe: int = 0
    line: int | None = None  # the chat file's line; None: the 1-based entry ``at + 1``

    def message(self) -> Message:
        """The message the fold steps over, as the OpenAI reader reads it (1-based entry)."""
        return Message(role=self.role, text=self.text, swipe=self.swipe, hidden=self.hidden,
                       source_line=self.at + 1 if self.line is None else self.line)


class Session(BaseModel):
    """One conversation of the game; state carries over to the next, the place does not."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    messages: tuple[Message, ...]


class ReadDiagnostic(BaseModel):
    """Something a reader skipped, repaired or chose while reading a transcript."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    line: int | None
    code: str
    message: str


class Transcript(BaseModel):
    """A whole recorded game: its sessions in order and what the reader had to say about it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    format: TranscriptFormat
    sessions: tuple[Session, ...]
    player_name: str | None = None
    gm_name: str | None = None
    diagnostics: tuple[ReadDiagnostic, ...] = ()

    def messages(self) -> list[tuple[int, int, Message]]:
        """Flatten to (session index, index in session, message); list position = message index."""
        return [
            (session_index, index, message)
            for session_index, session in enumerate(self.sessions)
            for index, message in enumerate(session.messages)
        ]


def place(message: int | None, line: int | None, format: TranscriptFormat) -> str:
    """How every output names a place in a chat: ``message 3 (line 4)`` — the message's
    number in the flattened transcript (0-based, as in the replay JSON) and the file's
    1-based line; in an OpenAI messages array, the 1-based entry of the array instead of
    the line. A line that holds no message (it was skipped) is ``line 4`` alone."""
    unit = "entry" if format == "openai" else "line"
    if message is None:
        return f"{unit} {line}" if line is not None else "the chat"
    return f"message {message} ({unit} {line})" if line is not None else f"message {message}"


class TranscriptError(Exception):
    """The input cannot be read as a transcript at all (missing, undecodable, unknown format)."""


# Diagnostic codes the readers emit (ReadDiagnostic.code), defined once.
EMPTY_FILE = "empty-file"  # nothing but whitespace (or a BOM)
NO_MESSAGES = "no-messages"  # readable, but not one message in it
BAD_UTF8 = "bad-utf8"  # undecodable bytes or lone surrogates, replaced by U+FFFD
CONTROL_CHARACTERS = "control-characters"  # raw C0 control characters, kept as they are
TRAILING_DATA = "trailing-data"  # text after the JSON document, ignored
BAD_JSON = "bad-json"  # a line that is not JSON; skipped
BAD_MESSAGE = "bad-message"  # JSON that cannot be a message (not an object, no text); skipped
UNKNOWN_ROLE = "unknown-role"  # a role the format does not have; skipped
UNKNOWN_KEY = "unknown-key"  # gmtags keys we do not know; ignored, message kept
BAD_FIELD = "bad-field"  # a field of the wrong type; ignored, message kept
SWIPE_OUT_OF_RANGE = "swipe-out-of-range"  # the swipe index points past the swipes
TEXT_DIFFERS_FROM_SWIPE = "text-differs-from-swipe"  # gmtags: the swipe wins
MES_DIFFERS_FROM_SWIPE = "mes-differs-from-swipe"  # SillyTavern: mes wins
