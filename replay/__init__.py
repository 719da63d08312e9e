"""gmtags' I/O side: transcript formats, the fold, files, the CLI (and later the HTTP stage)."""

from .files import InputError, load_party, load_ruleset
from .fold import Diagnostic, MessageAnswer, ReplayResult, replay
from .formats import parse_transcript, read_transcript
from .transcript import Message, Session, Transcript, TranscriptError

__all__ = [
    "Diagnostic", "InputError", "Message", "MessageAnswer", "ReplayResult", "Session",
    "Transcript", "TranscriptError", "load_party", "load_ruleset", "parse_transcript",
    "read_transcript", "replay",
]
