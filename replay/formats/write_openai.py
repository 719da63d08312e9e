"""Write an OpenAI messages document back with some messages' ``content`` changed.

The document is a bare array or a request body ``{"messages": [...], ...}``; changes are keyed
by array position + 1 (``Message.source_line``). A string ``content`` is spliced; a list of
content parts is spliced part by part (the reader joins text parts with a newline), and an edit
that would straddle two parts is left out. Everything else, including the indentation the file
was written with, stays byte-identical.
"""

from __future__ import annotations

from replay.formats.write_json import (
    Edit,
    MessageEdits,
    NotJson,
    Replacement,
    item,
    items,
    json_start,
    member,
    replace_spans,
    string_replacements,
    string_value,
)


def write(original: str, changes: dict[int, MessageEdits]) -> str:
    """``original`` with each changed message (keyed by array position + 1) rewritten."""
    start = json_start(original)
    replacements: list[Replacement] = []
    try:
        array = start
        if original[start:start + 1] == "{":
            found = member(original, start, "messages")
            if found is None:
                return original
            array = found[0]
        for position, change in changes.items():
            span = item(original, array, position - 1)
            if span is None:
                continue
            content = member(original, span[0], "content")
            if content is None:
                continue
            replacements += _content(original, content, change)
    except NotJson:
        return original
    return replace_spans(original, replacements)


def _content(source: str, span: tuple[int, int], change: MessageEdits) -> list[Replacement]:
    """The replacements in one message's content: a string, one part, or a list of parts."""
    if source[span[0]] == '"':
        return string_replacements(source, span, change.text, change.edits)
    parts = [span] if source[span[0]] == "{" else list(items(source, span[0]))
    replacements: list[Replacement] = []
    offset = 0
    texts: list[str] = []
    for part in parts:
        text_span = part if source[part[0]] == '"' else _text_part(source, part)
        if text_span is None:
            continue
        text = string_value(source, text_span)
        if text is None:
            continue
        if texts:
            offset += 1  # the newline the reader joins parts with
        inside = tuple(
            Edit(edit.start - offset, edit.end - offset, edit.replacement)
            for edit in change.edits
            if offset <= edit.start and edit.end <= offset + len(text)
        )
        if inside:
            replacements += string_replacements(source, text_span, text, inside)
        texts.append(text)
        offset += len(text)
    return replacements if "\n".join(texts) == change.text else []


def _text_part(source: str, span: tuple[int, int]) -> tuple[int, int] | None:
    """The ``text`` value span of a ``{"type": "text", "text": ...}`` part, else None."""
    if source[span[0]] != "{":
        return None
    kind = member(source, span[0], "type")
    if kind is None or string_value(source, kind) != "text":
        return None
    return member(source, span[0], "text")
