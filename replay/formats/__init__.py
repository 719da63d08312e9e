"""Read a recorded chat in any supported format into a `Transcript`.

Formats: gmtags' own JSONL (`gmtags_jsonl`), SillyTavern chat ``.jsonl`` (`sillytavern`) and
OpenAI messages JSON (`openai`); each module's docstring states its reading choices. Detection,
when no format is given: a JSON array, or an object with a ``messages`` key, is OpenAI; otherwise
the input is read as JSONL, and the first object that says so decides: ``mes`` or ``is_user``
(or a first-line header with ``user_name``, ``character_name``, ``create_date`` or
``chat_metadata``) means SillyTavern, ``role`` means gmtags.

Bytes are decoded as UTF-8 (a UTF-8 BOM is dropped, a UTF-16 BOM switches to UTF-16); bytes that
are not UTF-8 become U+FFFD with one ``bad-utf8`` diagnostic. Lines end at ``\\n`` only (a
trailing ``\\r`` is dropped), so U+2028 and friends inside JSON strings do not split a line.
Blank lines are skipped; a line that is not JSON is a ``bad-json`` diagnostic. Raw control
characters get one ``control-characters`` diagnostic and are kept. Diagnostics come sorted by
line, whole-input ones first. `TranscriptError` is raised only when the input cannot be read at
all: a missing file, or no known format in it.
"""

from __future__ import annotations

import codecs
import json
import os
import re
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NamedTuple

from replay.formats import gmtags_jsonl, openai, sillytavern
from replay.transcript import (
    BAD_JSON,
    BAD_UTF8,
    CONTROL_CHARACTERS,
    EMPTY_FILE,
    NO_MESSAGES,
    TRAILING_DATA,
    Message,
    ReadDiagnostic,
    Session,
    Transcript,
    TranscriptError,
    TranscriptFormat,
)

__all__ = ["FORMATS", "parse_transcript", "read_transcript", "sillytavern_entries",
           "sillytavern_transcript", "transcript_from_openai", "transcript_from_sillytavern"]

FORMATS: dict[str, TranscriptFormat] = {
    "gmtags": "gmtags",
    "sillytavern": "sillytavern",
    "openai": "openai",
}
LINE_READERS: dict[str, Callable[[Sequence[tuple[int, Any]]], Transcript]] = {
    "gmtags": gmtags_jsonl.read,
    "sillytavern": sillytavern.read,
}
# Raw C0 controls other than tab, newline and carriage return: JSON forbids them in strings.
# The raw control characters a transcript should not hold (tab, line feed and carriage return
# are fine). Found one at a time with str.find, which is twice as fast as a character-class
# regex over a whole chat.
CONTROL = "".join(chr(code) for code in range(32) if chr(code) not in "\t\n\r")
SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON escape of a UTF-16 surrogate; a lone one decodes to a str that cannot be written out.
ESCAPED_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")
DECODER = json.JSONDecoder(strict=False)
_SCAN_ONCE = DECODER.scan_once  # type: ignore[attr-defined]
UNKNOWN_FORMAT = (
    "not a known transcript format (gmtags JSONL, SillyTavern chat .jsonl or OpenAI messages JSON)"
)


class JsonDocument(NamedTuple):
    """A whole-input JSON value, the line where any text after it starts, and its repairs."""

    value: Any
    trailing_line: int | None
    had_lone_surrogates: bool


def read_transcript(path: str | os.PathLike[str]) -> Transcript:
    """Read the chat file at `path`, detecting its format."""
    try:
        data = Path(path).read_bytes()
    except OSError as error:
        raise TranscriptError(f"{os.fspath(path)}: {error.strerror or error}") from error
    return parse_transcript(data, name=os.fspath(path))


def parse_transcript(
    data: str | bytes, *, format: str | None = None, name: str = "<input>"
) -> Transcript:
    """Read a chat from text or bytes; `format` is one of FORMATS, or None to detect it."""
    if format is not None and format not in FORMATS:
        raise TranscriptError(f"{name}: unknown transcript format {format!r}")
    text, diagnostics = decode(data)
    if not text.strip():
        diagnostics.append(ReadDiagnostic(line=None, code=EMPTY_FILE, message="the input is empty"))
        return finish(Transcript(format=FORMATS[format or "gmtags"], sessions=()), diagnostics)
    try:
        transcript = read_text(text, format, diagnostics)
    except TranscriptError as error:
        raise TranscriptError(f"{name}: {error}") from None
    return finish(transcript, diagnostics)


def transcript_from_openai(messages: list[dict[str, Any]]) -> Transcript:
    """Read the `messages` of an OpenAI chat-completions request (the HTTP stage's input)."""
    if not isinstance(messages, list):
        raise TranscriptError("messages is not an array")
    return finish(openai.read(messages), [])


SillyTavernEntry = tuple[Message | None, tuple[ReadDiagnostic, ...]]


def transcript_from_sillytavern(chat: list[Any],
                                known: Sequence[SillyTavernEntry] = ()) -> Transcript:
    """Read SillyTavern's chat as its page holds it (``getContext().chat``, the state view's
    input): the messages of a chat file without its header line. Each message is read as the
    line it is in the saved file (its index + 2, after the header), so the transcript and
    every diagnostic are what reading that file gives.

    ``known``: :func:`sillytavern_entries` of messages this chat begins with (a caller that
    saw them in an earlier chat); only the messages after them are read."""
    return sillytavern_transcript(sillytavern_entries(chat, known))


def sillytavern_entries(chat: list[Any],
                        known: Sequence[SillyTavernEntry] = ()) -> list[SillyTavernEntry]:
    """Each message of SillyTavern's chat array read as its line of the file: the message
    (None for one that cannot be a message) and what reading it said; ``known`` are those of
    its first messages, already read."""
    if not isinstance(chat, list):
        raise TranscriptError("chat is not an array")
    entries = list(known)
    for line, value in enumerate(chat[len(entries):], start=len(entries) + 2):
        diagnostics: list[ReadDiagnostic] = []
        if scrub_surrogates(value):
            diagnostics.append(lone_surrogates(line))
        message = sillytavern.read_message(line, value, diagnostics)
        entries.append((message, tuple(diagnostics)))
    return entries


def sillytavern_transcript(entries: Sequence[SillyTavernEntry]) -> Transcript:
    """The transcript of a chat array's :func:`sillytavern_entries`: what
    :func:`sillytavern.read` gives for the same lines after a header that names nobody."""
    messages = tuple(message for message, _ in entries if message is not None)
    diagnostics = tuple(d for _, said in entries for d in said)
    return finish(Transcript(format="sillytavern",
                             sessions=(Session(messages=messages),) if messages else (),
                             diagnostics=diagnostics), [])


def decode(data: str | bytes) -> tuple[str, list[ReadDiagnostic]]:
    """The input as text without a BOM, and the diagnostics of any repair on the way."""
    diagnostics: list[ReadDiagnostic] = []
    if isinstance(data, bytes):
        utf16 = data.startswith((codecs.BOM_UTF16_LE, codecs.BOM_UTF16_BE))
        encoding = "utf-16" if utf16 else "utf-8"
        body = data if utf16 else data.removeprefix(codecs.BOM_UTF8)
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as error:
            text = body.decode(encoding, errors="replace")
            before = body[: error.start].decode(encoding, errors="replace")
            diagnostics.append(bad_utf8(before.count("\n") + 1))
    else:
        text = data
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:  # lone surrogates in a Python str
            text = SURROGATE.sub("\ufffd", text)
            diagnostics.append(bad_utf8(data.count("\n", 0, error.start) + 1))
    text = text.removeprefix("\ufeff")
    control = first_control(text)
    if control is not None:
        diagnostics.append(
            ReadDiagnostic(
                line=text.count("\n", 0, control) + 1,
                code=CONTROL_CHARACTERS,
                message="raw control characters in the input (first on this line); kept",
            )
        )
    return text, diagnostics


def first_control(text: str) -> int | None:
    """Where the first raw control character of :data:`CONTROL` is in ``text``, or None."""
    found = [at for character in CONTROL if (at := text.find(character)) >= 0]
    return min(found) if found else None


def bad_utf8(line: int) -> ReadDiagnostic:
    """The one diagnostic for input bytes that do not decode."""
    return ReadDiagnostic(
        line=line,
        code=BAD_UTF8,
        message="bytes that do not decode (first on this line) became U+FFFD",
    )


def read_text(text: str, format: str | None, diagnostics: list[ReadDiagnostic]) -> Transcript:
    """Read decoded, non-empty text in the given or detected format."""
    document = json_document(text)
    is_openai = document is not None and openai.is_document(document.value)
    complete = document is not None and document.trailing_line is None
    if document is not None and is_openai and (format == "openai" or (format is None and complete)):
        return read_openai(document, diagnostics)
    if format == "openai":
        raise TranscriptError("not an OpenAI messages array or a request body with messages")
    records, line_diagnostics = json_lines(text)
    chosen = format or detect_lines(records)
    if chosen is None and document is not None and is_openai:
        return read_openai(document, diagnostics)  # one JSON document, then trailing text
    if chosen is None or not records:
        raise TranscriptError(UNKNOWN_FORMAT)
    diagnostics.extend(line_diagnostics)
    return LINE_READERS[chosen](records)


def read_openai(document: JsonDocument, diagnostics: list[ReadDiagnostic]) -> Transcript:
    """Read a parsed OpenAI document, reporting its repairs and any text after it."""
    if document.had_lone_surrogates:
        diagnostics.append(lone_surrogates(None))
    if document.trailing_line is not None:
        diagnostics.append(
            ReadDiagnostic(
                line=document.trailing_line,
                code=TRAILING_DATA,
                message="text after the JSON document is ignored",
            )
        )
    return openai.read_document(document.value)


def json_document(text: str) -> JsonDocument | None:
    """The JSON array or object the whole text starts with, or None when it does not."""
    start = len(text) - len(text.lstrip())
    if text[start : start + 1] not in ("[", "{"):
        return None
    try:
        value, end = DECODER.raw_decode(text, start)
    except (ValueError, RecursionError):
        return None
    scrubbed = bool(ESCAPED_SURROGATE.search(text, start, end)) and scrub_surrogates(value)
    rest = text[end:]
    if not rest.strip():
        return JsonDocument(value, None, scrubbed)
    trailing_line = text.count("\n", 0, end + len(rest) - len(rest.lstrip())) + 1
    return JsonDocument(value, trailing_line, scrubbed)


def json_lines(text: str) -> tuple[list[tuple[int, Any]], list[ReadDiagnostic]]:
    """Each non-blank line's JSON value with its 1-based line number; bad lines as diagnostics."""
    records: list[tuple[int, Any]] = []
    diagnostics: list[ReadDiagnostic] = []
    escapes = ESCAPED_SURROGATE.search(text) is not None  # one search, not one a line
    for number, raw in enumerate(text.split("\n"), start=1):
        line = raw.strip().lstrip("\ufeff")  # a BOM here comes from files joined with cat
        if not line:
            continue
        try:
            # ``DECODER.decode(line)``, without its whitespace skipping for the common
            # stripped line that holds one value; anything else (an error, white space left
            # after a BOM) is decoded the full way, so values and errors are decode()'s.
            try:
                value, end = _SCAN_ONCE(line, 0)
            except (StopIteration, ValueError):
                end = -1
            if end != len(line):
                value = DECODER.decode(line)
        except RecursionError:
            diagnostics.append(
                ReadDiagnostic(line=number, code=BAD_JSON, message="JSON nested too deeply")
            )
        except ValueError as error:
            # The line is the file's; the decoder's own "line 1 column 70" would be a second,
            # different line number, so only its column is kept.
            reason = (f"{error.msg} at column {error.colno}"
                      if isinstance(error, json.JSONDecodeError) else one_line(error))
            diagnostics.append(
                ReadDiagnostic(line=number, code=BAD_JSON, message=f"not JSON: {reason}")
            )
        else:
            if escapes and ESCAPED_SURROGATE.search(line) and scrub_surrogates(value):
                diagnostics.append(lone_surrogates(number))
            records.append((number, value))
    return records, diagnostics


def scrub_surrogates(value: Any) -> bool:
    """Replace lone surrogates in every string of a parsed JSON value, in place; True if any."""
    if not isinstance(value, list | dict):
        return False
    changed = False
    pending: list[list[Any] | dict[str, Any]] = [value]
    while pending:  # a loop, not recursion: the value may be nested as deep as JSON allows
        container = pending.pop()
        if isinstance(container, dict):
            for key in [key for key in container if SURROGATE.search(key)]:
                container[SURROGATE.sub("\ufffd", key)] = container.pop(key)
                changed = True
            for key, item in container.items():
                if isinstance(item, str) and SURROGATE.search(item):
                    container[key] = SURROGATE.sub("\ufffd", item)
                    changed = True
            children = list(container.values())
        else:
            for position, item in enumerate(container):
                if isinstance(item, str) and SURROGATE.search(item):
                    container[position] = SURROGATE.sub("\ufffd", item)
                    changed = True
            children = container
        pending.extend(child for child in children if isinstance(child, list | dict))
    return changed


def lone_surrogates(line: int | None) -> ReadDiagnostic:
    """The diagnostic for JSON escapes of lone surrogates, which became U+FFFD."""
    return ReadDiagnostic(
        line=line, code=BAD_UTF8, message="escaped lone surrogates (\\ud800-\\udfff) became U+FFFD"
    )


def one_line(error: Exception) -> str:
    """An exception's message on one short line."""
    text = " ".join(str(error).split())
    return text if len(text) <= 100 else text[:99] + "…"


def detect_lines(records: Sequence[tuple[int, Any]]) -> TranscriptFormat | None:
    """The JSONL format the first decisive object shows, or None when none does."""
    for position, (_, value) in enumerate(records):
        if not isinstance(value, dict):
            continue
        if sillytavern.is_message(value):
            return "sillytavern"
        if "role" in value:
            return "gmtags"
        if position == 0 and sillytavern.HEADER_KEYS & value.keys():
            return "sillytavern"
    return None


def finish(transcript: Transcript, diagnostics: list[ReadDiagnostic]) -> Transcript:
    """The transcript with the input's diagnostics added and all of them sorted by line."""
    collected = [*diagnostics, *transcript.diagnostics]
    if not transcript.sessions and all(item.code != EMPTY_FILE for item in collected):
        collected.append(
            ReadDiagnostic(line=None, code=NO_MESSAGES, message="no messages could be read")
        )
    collected.sort(key=lambda item: (item.line is not None, item.line or 0))
    return transcript.model_copy(update={"diagnostics": tuple(collected)})
