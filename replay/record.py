"""Record a chat: answer every tag of its visible GM replies and write the answers inline.

Each tag of a GM reply the player sees (not hidden, the shown swipe) is rewritten in place as
an answered tag (docs/design.md#answered-tags): the request attributes as the model wrote them (its
order, canonical quoting), then ``|`` and the engine's answer attributes. An answer part already
there (an older recording, or one the model wrote itself) is replaced. A malformed tag has no
request to write back and keeps its raw text. The file is written back in the format it came in,
with every byte outside the answered tags kept (``replay/formats/write_*``).
"""

from __future__ import annotations

import codecs
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import tagparse
from engine import Answer, Game, State, answer_attrs

from .fold import ReplayResult, replay
from .formats import decode, parse_transcript, write_gmtags, write_openai, write_sillytavern
from .formats.write_json import Edit, MessageEdits
from .transcript import Message, Transcript

WRITERS: dict[str, Callable[[str, dict[int, MessageEdits]], str]] = {
    "gmtags": write_gmtags.write,
    "sillytavern": write_sillytavern.write,
    "openai": write_openai.write,
}


@dataclass(frozen=True, slots=True)
class AnsweredTag:
    """One tag of a visible GM reply and the engine's answer to it now."""

    message: int  # index in the flattened transcript
    line: int | None  # the message's source line (or array position + 1)
    tag: tagparse.Tag
    answer: Answer


@dataclass(frozen=True)
class Source:
    """A chat file as read: its text (BOM removed), the BOM, and the transcript in it."""

    text: str
    bom: bytes
    transcript: Transcript


@dataclass(frozen=True)
class Recording:
    """A recorded chat: the new file bytes, the replay behind them, and what changed."""

    data: bytes
    result: ReplayResult
    answered: int  # tags answered inline
    messages: int  # messages rewritten


def read_source(data: bytes, name: str = "<input>") -> Source:
    """Read chat bytes once for both the transcript and the writer (TranscriptError if not)."""
    transcript = parse_transcript(data, name=name)
    text, _ = decode(data)
    bom = codecs.BOM_UTF8 if data.startswith(codecs.BOM_UTF8) else b""
    return Source(text, bom, transcript)


def answered_tags(transcript: Transcript, result: ReplayResult) -> Iterator[AnsweredTag]:
    """Every answered tag of the replay with the tag it answers (spans in the message text)."""
    flat = transcript.messages()
    by_message: dict[int, list[Answer]] = {}
    for item in result.answers:
        by_message.setdefault(item.message, []).append(item.answer)
    for index, answers in by_message.items():
        message = flat[index][2]
        if message.role != "gm":  # host events are answered too, but carry no tags
            continue
        tags = tagparse.scan(message.text).tags
        if len(tags) != len(answers):  # the fold answers each scanned tag once, in text order
            continue
        for tag, answer in zip(tags, answers, strict=True):
            yield AnsweredTag(index, message.source_line, tag, answer)


def answered_form(tag: tagparse.Tag, answer: Answer) -> str | None:
    """The answered tag ``[kind: request | answer]`` with the compact answer part of
    ``engine.answer_attrs`` (the whole record stays in the replay JSON), or None for a
    malformed tag."""
    if tag.malformed is not None:
        return None
    return tagparse.render(tag.kind, tag.attrs, answer_attrs(answer))


def message_edits(transcript: Transcript,
                  answered_list: list[AnsweredTag]) -> dict[int, MessageEdits]:
    """The edits of each message that changes, keyed by its source line."""
    flat = transcript.messages()
    grouped: dict[int, list[Edit]] = {}
    for answered in answered_list:
        form = answered_form(answered.tag, answered.answer)
        if form is not None and form != answered.tag.raw:
            grouped.setdefault(answered.message, []).append(
                Edit(answered.tag.start, answered.tag.end, form))
    changes: dict[int, MessageEdits] = {}
    for index, edits in grouped.items():
        message: Message = flat[index][2]
        if message.source_line is not None:
            swipe = message.swipe if message.swipes is not None else None
            changes[message.source_line] = MessageEdits(message.text, tuple(edits), swipe)
    return changes


def record(game: Game, source: Source, state: State) -> Recording:
    """Replay ``source`` from ``state`` and write every answer inline."""
    transcript = source.transcript
    result = replay(game, transcript, state)
    answered = list(answered_tags(transcript, result))
    changes = message_edits(transcript, answered)
    text = WRITERS[transcript.format](source.text, changes) if changes else source.text
    return Recording(
        data=source.bom + text.encode("utf-8", errors="surrogatepass"),
        result=result,
        answered=sum(1 for item in answered if item.tag.malformed is None),
        messages=len(changes),
    )
