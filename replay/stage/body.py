"""Reading a chat request's body so that the part a recent request already sent is not parsed
again (the stage's cost per reply must not grow with the chat).

A chat's next request repeats the previous one's bytes up to its last messages. A body is read
with the byte offset where each message of its ``messages`` array ends; the next body that
starts with the same bytes up to the end of message ``j`` reuses the first ``j`` parsed messages
(the very same objects: bodies are read-only) and parses only what follows. The bytes are
compared with ``memcmp`` (``bytes.startswith``), a few microseconds per 100 kB.

The result is exactly ``json.loads(raw)``: anything this reader does not expect (another
encoding, duplicate keys, a body that is not an object with one ``messages`` array, bad JSON)
goes to ``json.loads``, whose errors are the ones raised.

The offsets also let the stage send the request on as the client's own bytes with one message
spliced in (:meth:`Body.spliced`), instead of writing the whole body again.
"""

from __future__ import annotations

import json
import re
import threading
import weakref
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from json.decoder import scanstring  # type: ignore[attr-defined]
from typing import Any, TypeVar, cast

from ..cache import OverBudget, SharedPrefixSequence

_SPACE = re.compile(r"[ \t\n\r]*")
_BYTE_SPACE = re.compile(rb"[ \t\n\r]*")
R = TypeVar("R")
_BYTE_COMMA = re.compile(rb"[ \t\n\r]*,[ \t\n\r]*")
_SCAN = json.scanner.make_scanner(json.JSONDecoder())  # type: ignore[attr-defined]
RECENT_BODIES = 64  # bodies kept to share their bytes with the next request of the same chat
RECENT_BYTES = 8 * 1024 * 1024  # and at most this many of their bytes: bounded in
# bytes, not only in bodies, as a body's parsed messages take 4-5 times its bytes
MAX_MESSAGES = 100_000  # messages read with their offsets; a longer array goes to json.loads
PROBES = 4  # the last messages of a recent body tried before a binary search


class _Unexpected(Exception):
    """A body the offset reader does not handle: ``json.loads`` reads it."""


@dataclass(frozen=True)
class Body:
    """A parsed request body, and where its messages lie in its bytes.

    ``ends[i]`` is the byte offset just past message ``i``; ``opened`` is just past the ``[``
    of the array. ``shared`` leading messages are the very objects of ``base``'s messages (the
    bytes up to their end are the same), so what was derived from them can be reused.
    """

    raw: bytes
    messages: SharedPrefixSequence[Any]
    opened: int
    ends: SharedPrefixSequence[int]
    head: dict[str, Any]  # the members before "messages", in order
    tail: dict[str, Any]  # and after it
    # the body this one was read on, while the reader still keeps it: a strong reference would
    # keep every earlier body of a chat alive through its successor, and memory would grow
    # with each request
    base_ref: weakref.ref[Body] | None = field(default=None, repr=False, compare=False)
    shared: int = 0

    @property
    def base(self) -> Body | None:
        return self.base_ref() if self.base_ref is not None else None

    @cached_property
    def document(self) -> dict[str, Any]:
        """The body's JSON value (built when asked: its messages list is a copy)."""
        return {**self.head, "messages": list(self.messages), **self.tail}

    def get(self, key: str) -> Any:
        """A member other than ``messages``, without building :attr:`document`."""
        return self.head[key] if key in self.head else self.tail.get(key)

    @cached_property
    def view(self) -> memoryview:
        """:attr:`raw` without copies, to compare a next body's bytes with pieces of it."""
        return memoryview(self.raw)

    @cached_property
    def probes(self) -> tuple[tuple[int, int, int], ...]:
        """(start, end, count) of each of the last :data:`PROBES` messages, last first: the
        counts :func:`_probed` tries for every recent body, worked out once per body."""
        ends, count = self.ends, len(self.ends)
        return tuple((ends[probe - 2] if probe > 1 else self.opened, ends[probe - 1], probe)
                     for probe in range(count, max(count - PROBES, 0), -1))

    def shared_bytes(self, messages: int) -> int:
        """The bytes up to the end of the first ``messages`` messages (the array's ``[``
        included): what a body that repeats them shares with this one."""
        return self.ends[messages - 1] if messages else self.opened

    def spliced(self, at: int, message: bytes) -> bytes:
        """The raw body with ``message`` (a JSON object's bytes) inserted as message ``at``."""
        return b"".join(self.pieces(at, message))  # one copy of the body, not three

    def pieces(self, at: int, message: bytes) -> tuple[bytes | memoryview, ...]:
        """:meth:`spliced`'s bytes as the pieces they are joined from, views of the body's
        own bytes around ``message``: what is sent on without copying the body again."""
        return self.edited(((at, message),), {})

    def edited(self, inserted: Sequence[tuple[int, bytes]],
               replaced: Mapping[int, bytes]) -> tuple[bytes | memoryview, ...]:
        """The raw body with each ``(index, message)`` of ``inserted`` put before message
        ``index`` (in the order given where several go before one; ``len(messages)``: at the
        end) and each message of ``replaced`` written as the bytes given: views of the body's
        own bytes between them, sent on without copying the body again."""
        raw = memoryview(self.raw)
        count = len(self.ends)
        before: dict[int, list[bytes]] = {}
        for index, message in inserted:
            before.setdefault(index, []).append(message)
        pieces: list[bytes | memoryview] = []
        at = 0  # the body's bytes are written up to here
        for index in sorted({*before, *(i for i in replaced if i < count)}):
            cut = self.opened if index == 0 else self.ends[index - 1]
            if index in before:
                group = b",".join(before[index])
                pieces.append(raw[at:cut])
                pieces += [group, b","] if index == 0 and count else \
                    [group] if index == 0 else [b",", group]
                at = cut
            if index in replaced:
                separator = _BYTE_SPACE if index == 0 else _BYTE_COMMA
                start = separator.match(self.raw, cut).end()  # type: ignore[union-attr]
                pieces += [raw[at:start], replaced[index]]
                at = self.ends[index]
        pieces.append(raw[at:])
        return tuple(pieces)

    def rewritten(self, rewrite: Callable[[Any], R | None]) -> Mapping[int, R]:
        """``rewrite(message)`` of each message where it gives a value, by index: the messages
        this body shares with its base (the very same objects) take the base's, so a chat's
        request rewrites only its new messages. ``rewrite`` must depend on the message alone."""
        memos = self.__dict__.setdefault("_rewritten", {})  # as functools.cached_property does
        if rewrite in memos:
            return cast(Mapping[int, R], memos[rewrite])
        found: dict[int, R] = {}
        start = 0
        base = self.base
        prior = base.__dict__.get("_rewritten", {}).get(rewrite) if base is not None and \
            self.shared else None
        if prior is not None:
            found = {index: value for index, value in prior.items() if index < self.shared}
            start = self.shared
        messages = self.messages
        for index in range(start, len(messages)):
            value = rewrite(messages[index])
            if value is not None:
                found[index] = value
        memos[rewrite] = found
        return found


def _opens_object(raw: bytes) -> bool:
    """Whether ``raw`` begins with ``{`` after JSON whitespace (without copying it, as
    ``lstrip`` would: a body may be megabytes)."""
    return raw.startswith(b"{", _BYTE_SPACE.match(raw).end())  # type: ignore[union-attr]


def _space(text: str, at: int) -> int:
    return _SPACE.match(text, at).end()  # type: ignore[union-attr]


def _value(text: str, at: int) -> tuple[Any, int]:
    try:
        value, end = _SCAN(text, at)
    except StopIteration:
        raise _Unexpected from None
    return value, end


def _members(text: str, at: int, members: dict[str, Any]) -> int:
    """Read ``, "key": value`` members from ``at`` into ``members`` up to the closing ``}``.
    Returns the offset past the ``}``."""
    while True:
        at = _space(text, at)
        if text.startswith("}", at):
            return at + 1
        if not text.startswith(",", at):
            raise _Unexpected
        at = _space(text, at + 1)
        if not text.startswith('"', at):
            raise _Unexpected
        key, at = scanstring(text, at + 1)
        at = _space(text, at)
        if not text.startswith(":", at) or key in members or key == "messages":
            raise _Unexpected  # "messages" is read by the caller; a key twice is left to json
        members[key], at = _value(text, _space(text, at + 1))


def _items(text: str, at: int, offset: int, messages: list[Any], ends: list[int],
           ascii_only: bool, first: bool) -> int:
    """Read array items after ``at`` up to the closing ``]``, each end's byte offset (``text``
    starts at byte ``offset`` of the body). Returns the offset past the ``]``.

    At most :data:`MAX_MESSAGES` items (a body of millions of tiny items goes to
    ``json.loads``, which reads them ~20x faster than this loop)."""
    space, scan, blank = _SPACE.match, _SCAN, " \t\n\r"
    append, append_end = messages.append, ends.append
    at = space(text, at).end()  # type: ignore[union-attr]
    byte_at, char_at = offset + at, at  # a char offset and its byte offset, walked together
    if first and text.startswith("]", at):
        return at + 1
    limit = MAX_MESSAGES - len(messages)
    try:
        while True:
            if not first:
                mark = text[at]
                if mark in blank:
                    at = space(text, at).end()  # type: ignore[union-attr]
                    mark = text[at]
                if mark == "]":
                    return at + 1
                if mark != ",":
                    raise _Unexpected
                at += 1
                if text[at] in blank:
                    at = space(text, at).end()  # type: ignore[union-attr]
            first = False
            value, at = scan(text, at)
            append(value)
            if ascii_only:
                append_end(offset + at)
            else:
                byte_at += len(text[char_at:at].encode("utf-8", "surrogatepass"))
                char_at = at
                append_end(byte_at)
            limit -= 1
            if limit < 0:
                raise _Unexpected
    except (StopIteration, IndexError):
        raise _Unexpected from None


def _read_fresh(raw: bytes) -> Body:
    text = raw.decode("utf-8", "surrogatepass")
    ascii_only = len(text) == len(raw)
    at = _space(text, 0)
    if not text.startswith("{", at):
        raise _Unexpected
    head: dict[str, Any] = {}
    at = _space(text, at + 1)
    if text.startswith("}", at):
        raise _Unexpected  # no messages
    while True:
        if not text.startswith('"', at):
            raise _Unexpected
        key, at = scanstring(text, at + 1)
        at = _space(text, at)
        if not text.startswith(":", at) or key in head:
            raise _Unexpected
        at = _space(text, at + 1)
        if key == "messages":
            break
        head[key], at = _value(text, at)
        at = _space(text, at)
        if not text.startswith(",", at):
            raise _Unexpected
        at = _space(text, at + 1)
    if not text.startswith("[", at):
        raise _Unexpected
    messages: list[Any] = []
    ends: list[int] = []
    if ascii_only:
        opened = at + 1
        at = _items(text, opened, 0, messages, ends, True, first=True)
    else:  # byte offsets counted from the array on
        opened = len(text[:at + 1].encode("utf-8", "surrogatepass"))
        at += 1 + _items(text[at + 1:], 0, opened, messages, ends, False, first=True)
    return _finish(raw, text, at, head, SharedPrefixSequence(messages), opened,
                   SharedPrefixSequence(ends))


def _finish(raw: bytes, text: str, at: int, head: dict[str, Any],
            messages: SharedPrefixSequence[Any], opened: int, ends: SharedPrefixSequence[int],
            base: Body | None = None, shared: int = 0) -> Body:
    """The members after the messages array (from ``at`` in ``text``), and the Body."""
    at = _space(text, at)
    tail: dict[str, Any] = {}
    if text.startswith(",", at):
        at = _members(text, at, tail)
        if any(key in head for key in tail):
            raise _Unexpected
    elif text.startswith("}", at):
        at += 1
    else:
        raise _Unexpected
    if _space(text, at) != len(text):
        raise _Unexpected
    return Body(raw, messages, opened, ends, head, tail,
                weakref.ref(base) if base is not None else None, shared)


def _probed(raw: bytes, old: Body) -> int:
    """How many leading messages of ``old`` ``raw`` repeats byte for byte, trying only its
    last :data:`PROBES` counts: -1 when not even the bytes before the array match, 0 when
    none of those counts does (a shorter shared prefix is :func:`_searched`'s to find)."""
    view = old.view
    if not raw.startswith(view[:old.opened]):
        return -1
    for start, end, count in old.probes:  # the usual case: only the end moved
        # The message itself first (a few bytes), then everything before it (one memcmp).
        if raw.startswith(view[start:end], start) and raw.startswith(view[:start]):
            return count
    return 0


def _searched(raw: bytes, old: Body) -> int:
    """The shared count below ``old``'s last :data:`PROBES` (where :func:`_probed` found
    none): a binary search, each try one ``memcmp``, which stops at a difference."""
    view = old.view
    low, high = 0, len(old.ends) - PROBES  # low is known to match; find the last that does
    while low < high:
        middle = (low + high + 1) // 2
        if raw.startswith(view[:old.ends[middle - 1]]):
            low = middle
        else:
            high = middle - 1
    return low


def _read_after(raw: bytes, old: Body, shared: int) -> Body:
    """``raw`` that repeats ``old``'s bytes up to the end of its message ``shared``."""
    cut = old.shared_bytes(shared)
    text = raw[cut:].decode("utf-8", "surrogatepass")
    messages: list[Any] = []
    ends: list[int] = []
    at = _items(text, 0, cut, messages, ends, len(text) == len(raw) - cut, first=not shared)
    return _finish(raw, text, at, old.head, old.messages.extended(shared, messages),
                   old.opened, old.ends.extended(shared, ends), old, shared)


class BodyReader:
    """Reads request bodies, reusing the messages of the recent body a new one repeats."""

    def __init__(self, recent: int = RECENT_BODIES, most_bytes: int = RECENT_BYTES) -> None:
        # Enough bodies that, with many chats at once (40 chats on one worker, say), a
        # chat's previous request is still here when its next one comes; bounded in bytes.
        self._recent: deque[Body] = deque(maxlen=recent)
        self._bytes = 0
        self._most_bytes = most_bytes
        self._lock = threading.Lock()

    def read(self, raw: bytes, most: int | None = None) -> Any:
        """``json.loads(raw)``'s value: a :class:`Body` when it is an object with a messages
        array, else the plain value. Raises what ``json.loads`` raises.

        ``most``: the most bytes to parse here; a body that needs more (what it does not
        share with a recent body) raises :class:`~replay.cache.OverBudget`, having read
        nothing (the stage reads it again in a worker thread)."""
        if not _opens_object(raw) or json.detect_encoding(raw) != "utf-8":
            if most is not None and len(raw) > most:
                raise OverBudget
            return json.loads(raw)
        with self._lock:
            recent = list(self._recent)
        body: Body | None = None
        best = -1
        # Newest first: the first whose last messages match is this chat's previous request;
        # only when none does (an edit deep in the chat, or a new chat) are the others
        # searched, those longer than the probes whose bytes before the array match.
        deeper: list[Body] = []
        for old in reversed(recent):
            shared = _probed(raw, old)
            if shared > best:
                body, best = old, shared
            if shared > 0:
                break
            if shared == 0 and len(old.ends) > PROBES:
                deeper.append(old)
        if best <= 0:
            for old in deeper:
                shared = _searched(raw, old)
                if shared > best:
                    body, best = old, shared
        if most is not None:
            shared = body.shared_bytes(best) if body is not None and best >= 0 else 0
            if len(raw) - shared > most:
                raise OverBudget
        try:
            body = _read_after(raw, body, best) if body is not None and best >= 0 else \
                _read_fresh(raw)
        except (_Unexpected, ValueError, IndexError):
            if most is not None and len(raw) > most:
                raise OverBudget from None
            return json.loads(raw)  # its value, or its error
        with self._lock:
            if len(self._recent) == self._recent.maxlen:
                self._bytes -= len(self._recent[0].raw)
            self._recent.append(body)
            self._bytes += len(body.raw)
            while self._bytes > self._most_bytes and len(self._recent) > 1:
                self._bytes -= len(self._recent.popleft().raw)
        return body


__all__ = ["Body", "BodyReader"]
