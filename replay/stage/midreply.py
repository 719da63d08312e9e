"""Mid-reply answers: the model narrates the roll it really got
(docs/design.md#mid-reply-answers).

With the game option ``"resolve": "mid-reply"`` the stage stops the model at the end of each tag
it may answer there, answers it, and sends a continuation: the same request with the reply so
far — the answered tag included — as the final assistant message to continue. The narration
after the tag is written knowing the answer, and the client sees one reply.

Where it stops (:func:`stops_at`): where the replay answers the tag the same whatever the rest
of the reply says. The fold answers a reply's ``[place:]`` tags first, then its fight
(``[combat:]``, ``[attack:]`` in initiative order), then every other tag in text order
(docs/design.md#rounds-and-order), so: never at a fight tag, never after the reply's first fight
tag, and a ``[place:]`` only as the reply's first tag. At a stop the tags so far are answered
as :class:`~replay.stage.answering.LiveAnswers` answers them — what ``apply_reply`` gives them,
dice keyed as the fold keys them — so the answer the model reads is the one the replay gives.
The stop's answer part says ``answered="mid-reply"`` (``engine.MID_REPLY``), and the fold
answers the tags up to it before the tags after it: a ``[place:]`` or a fight the model writes
later does not move ahead of what it already read, so the reply replays to the answers returned.

How it stops: the model's stream is closed at the tag's ``]`` (whatever came after it in the
same chunk is dropped: the model writes it again, knowing the answer). No stop sequence is
sent: the only text that ends every tag is ``]``, which also ends brackets of prose and the tags
never stopped at, and llama.cpp's server and KoboldCpp leave the stop string out of the text
without saying which one matched.

How it continues (``"upstreamContinues"``): ``"as-is"`` sends the final assistant message as it
is (llama.cpp's server prefills it by default, KoboldCpp continues it); ``"vllm"`` adds
``continue_final_message: true, add_generation_prompt: false``. ``"no"`` never stops: the tags
are answered after the reply (:mod:`replay.stage.app` says so in the metadata).

The legs are written and read in a :class:`Shape`: a chat completion's (:class:`ChatShape`,
here), or a text completion backend's (:mod:`replay.stage.textcomp.backends`), whose prompt
simply grows by the reply so far. Where to stop, what is answered and what is sent on do not
depend on it.
"""

from __future__ import annotations

import bisect
import json
from collections.abc import AsyncGenerator, AsyncIterator, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field
from operator import attrgetter
from typing import Any, Literal, Protocol

from yarl import URL

import tagparse
from engine import Answer, every_answer_attr, may_stop, same_tag

from ..files import InputError
from .answering import ReplyStream, rewrite
from .client import Content, ModelClient, ModelReply, UpstreamFailure
from .reading import Deadline, DeadlinePassed, completion_of, read_body, within
from .upstream import SurrogateJoiner

Resolve = Literal["after", "mid-reply"]
Continues = Literal["as-is", "vllm", "no"]
MAX_STOPS = 64  # the most "maxStops" may be: each stop is one more request to the model
LATE_PLACE = ("name the place first: a [place:] written after a tag answered mid-reply holds "
              "only for the tags after that one")


# The request keys that bound a reply's length in tokens: OpenAI's (both spellings) and
# llama.cpp's own. A continuation asks for what the legs before it left.
TOKEN_LIMITS = ("max_tokens", "max_completion_tokens", "n_predict")


@dataclass(frozen=True)
class MidReplyOptions:
    """The game options of mid-reply answers (``options.json``)."""

    resolve: Resolve = "after"
    continues: Continues = "as-is"  # "upstreamContinues"
    max_stops: int = 8  # "maxStops": continuations of one reply at most

    @property
    def stops(self) -> bool:
        """Whether replies are stopped at their tags (mid-reply, and the upstream continues)."""
        return self.resolve == "mid-reply" and self.continues != "no"


def read_options(options: Mapping[str, Any], path: object) -> MidReplyOptions:
    """``resolve``, ``upstreamContinues`` and ``maxStops`` of a game's ``options.json``.

    Raises :class:`InputError` naming the option's JSON pointer in ``path``."""
    resolve = options.get("resolve", "after")
    if resolve not in ("after", "mid-reply"):
        raise InputError(f'{path}#/resolve: is "after" or "mid-reply", not {resolve!r}')
    continues = options.get("upstreamContinues", "as-is")
    if continues not in ("as-is", "vllm", "no"):
        raise InputError(f'{path}#/upstreamContinues: is "as-is", "vllm" or "no", not '
                         f"{continues!r}")
    max_stops = options.get("maxStops", 8)
    if isinstance(max_stops, bool) or not isinstance(max_stops, int) or \
            not 0 <= max_stops <= MAX_STOPS:
        raise InputError(f"{path}#/maxStops: is a whole number from 0 to {MAX_STOPS}, not "
                         f"{max_stops!r}")
    return MidReplyOptions(resolve, continues, max_stops)


def stops_at(tags: tuple[tagparse.Tag, ...], index: int) -> bool:
    """Whether the reply may be stopped right after ``tags[index]`` (the reply's tags so far):
    only where the replay answers it the same whatever follows (:func:`engine.may_stop`)."""
    return may_stop(tags, index)


def first_stop(text: str, since: int) -> int | None:
    """The end of the first tag of ``text`` closed after offset ``since`` that the reply may be
    stopped at, or None."""
    settled = tagparse.unfinished_tag(text)
    tags = tagparse.scan(text[:settled]).tags
    for index in range(bisect.bisect_right(tags, since, key=attrgetter("end")), len(tags)):
        if text[tags[index].end - 1] == "]" and stops_at(tags, index):
            return tags[index].end
    return None


# What one event of a leg says: its text, its finish reason, its token counts, the document.
Piece = tuple[str, str | None, dict[str, int] | None, dict[str, Any]]


class Shape(Protocol):
    """How the legs of one reply are asked for and read: one backend's request and response
    shapes (a chat completion's, a text completion's)."""

    @property
    def limits(self) -> tuple[str, ...]:
        """The request keys that bound a reply's length in tokens."""
        ...

    def streams(self, request: Mapping[str, Any]) -> bool:
        """Whether the client asked for the reply as a stream."""
        ...

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> dict[str, Any]:
        """The request for the model, asking for a stream (and its token counts)."""
        ...

    def continuation(self, request: Mapping[str, Any], prefix: str, before: str) -> dict[
            str, Any]:
        """The request that continues the reply: ``prefix`` is the reply so far (answers
        in), ``before`` the part of it the client's own request already ends with."""
        ...

    def pieces(self, reply: ModelReply, deadline: Deadline) -> AsyncGenerator[Piece, None]:
        """Each event of the model's answer (a stream, or a whole answer sent instead);
        raises :class:`LegFailed` for an answer that is neither."""
        ...


@dataclass(frozen=True)
class ChatShape:
    """A chat completion's legs: the reply so far is the final assistant message."""

    vllm: bool = False  # ``"upstreamContinues": "vllm"``
    limits: tuple[str, ...] = TOKEN_LIMITS

    def streams(self, request: Mapping[str, Any]) -> bool:
        return bool(request.get("stream"))

    def streaming(self, request: Mapping[str, Any], client_streams: bool) -> dict[str, Any]:
        upstream = {**request, "stream": True}
        if not client_streams:
            # the client wants one completion, usage included: ask for it on every leg
            upstream["stream_options"] = {"include_usage": True}
        return upstream

    def continuation(self, request: Mapping[str, Any], prefix: str, before: str) -> dict[
            str, Any]:
        """The same request with the reply so far as the final assistant message (the
        client's own last message, when it asked to Continue)."""
        messages = list(request["messages"])
        if before and messages and isinstance(messages[-1], dict):
            messages[-1] = {**messages[-1], "content": prefix}
        else:
            messages.append({"role": "assistant", "content": prefix})
        body = {**request, "messages": messages}
        if self.vllm:
            body.update(continue_final_message=True, add_generation_prompt=False)
        return body

    async def pieces(self, reply: ModelReply, deadline: Deadline) -> AsyncGenerator[Piece, None]:
        kind = reply.media_type
        if kind not in ("text/event-stream", ""):
            completion = completion_of(await read_body(reply, deadline))
            if completion is None:
                raise LegFailed("the model server answered with neither an event stream nor a "
                                "chat completion", "upstream_protocol")
            document, message = completion
            yield (message.get("content") or "", document["choices"][0].get("finish_reason"),
                   usage_of(document), document)
            return
        async for line in reply.lines():
            if not line.startswith("data:"):
                continue
            data = line[5:].strip()
            if data == "[DONE]":
                return
            for found in _chunk(data):
                yield found


class LegFailed(Exception):
    """A request of the reply failed after part of the reply was sent on (an OpenAI error
    event's message and code)."""

    def __init__(self, message: str, code: str) -> None:
        super().__init__(message)
        self.message = message
        self.code = code


@dataclass
class MidReply:
    """One reply written in legs: a request to the model, stopped after a tag, answered, and
    continued, until the model finishes (or :attr:`MidReplyOptions.max_stops` were made; the
    rest of the reply is then answered as it comes, as without stops).

    :meth:`run` yields the answered text to send on; afterwards :attr:`finish`, :attr:`usage`
    (summed over the legs that reported it) and :attr:`base` (id, created, model of the
    model's first chunk) describe the reply.
    """

    client: ModelClient
    url: URL
    headers: dict[str, str]
    request: dict[str, Any]  # the request for the model: the client's, GM section in
    stream: ReplyStream
    options: MidReplyOptions
    deadline: Deadline
    shape: Shape | None = None  # None: a chat completion's (ChatShape)
    stopped: list[int] = field(default_factory=list)  # the index of each tag stopped at
    shown: dict[int, Answer] = field(default_factory=dict)  # the answer the model read there
    usage: dict[str, int] | None = None
    finish: str = "stop"
    base: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.before = self.stream.before  # the client's Continue: its last message continues
        self.form: Shape = self.shape or ChatShape(vllm=self.options.continues == "vllm")
        # The client's bound on the reply's length holds for the whole reply, not each leg:
        # each continuation may write what the legs before it left (Shape.limits).
        self.limits = {key: value for key in self.form.limits
                       if isinstance(value := self.request.get(key), int)
                       and not isinstance(value, bool) and value > 0}
        self.spent = 0  # tokens written so far (legs' usage, else their content chunks)
        self.base = {"id": "gmtags", "created": 0, "model": self.request.get("model")}
        self._based = False
        self.client_streams = self.form.streams(self.request)
        self.request = self.form.streaming(self.request, self.client_streams)

    def first_content(self, client_bytes: Content) -> Content:
        """The first request's body: the client's own bytes when it streams (nothing to
        change), else the request with ``stream`` on."""
        return client_bytes if self.client_streams else json.dumps(self.request).encode()

    async def run(self, reply: ModelReply) -> AsyncIterator[str]:
        """The reply's answered text, as it comes; raises :class:`LegFailed` (what was
        yielded stays sent) or :class:`DeadlinePassed`."""
        while True:
            joiner = SurrogateJoiner()
            stopped = False
            chunks = written = 0
            usage: dict[str, int] | None = None
            try:
                async with aclosing(self._pieces(reply)) as pieces:
                    async for piece, finish, found in pieces:
                        chunks += 1
                        written += 1 if piece else 0
                        usage = found or usage
                        if self.deadline.passed:
                            raise DeadlinePassed
                        text = self.stream.clean(joiner.feed(piece))
                        end = first_stop(self.stream.full + text, len(self.stream.full)) \
                            if len(self.stopped) < self.options.max_stops else None
                        if end is not None:
                            text = text[:end - len(self.stream.full)]
                            self.stream.drop_held()  # the model stops at the tag's "]"
                            so_far = self.stream.full + text
                            tags = tagparse.scan(so_far).tags
                            if self._echoes(so_far, tags):
                                # what the model wrote before the copy stays (held back
                                # whole, the copy is never in what was added before)
                                before = text[:max(0, tags[-1].start - len(self.stream.full))]
                                out = self.stream.add(before.rstrip())
                                if out:
                                    yield out
                                self.stream.end_here("echo", tags[-1])
                                break
                            self._stop(len(tags) - 1)
                        out = self.stream.add(text)
                        if out:
                            yield out
                        if self.stream.cut is not None:
                            break  # a model in a loop: the reply ends here
                        if end is not None:
                            stopped = True
                            break
                        if finish is not None:
                            self.finish = finish
            except UpstreamFailure as failure:
                raise LegFailed(f"the model server failed mid-stream ({failure.name})",
                                "upstream_failed") from None
            finally:
                await reply.close()  # at a stop: the model stops writing
            self._add_usage(usage)
            if chunks == 0:
                raise LegFailed("the model server's stream held no chat completion chunk",
                                "upstream_protocol")
            completion = (usage or {}).get("completion_tokens")
            self.spent += completion if isinstance(completion, int) else written
            if stopped:
                self.shown[self.stopped[-1]] = self.stream.answers[self.stopped[-1]]
            if stopped and self.left() == 0:
                self.finish = "length"  # the client's max_tokens is written: the reply ends
                stopped = False
            if not stopped:
                rest = self.stream.feed(joiner.finish()) + self.stream.finish()
                if rest:
                    yield rest
                return
            reply = await self._continue()

    def _echoes(self, text: str, tags: tuple[tagparse.Tag, ...]) -> bool:
        """Whether the reply's last tag is a tag it was already stopped at, written again: a
        model that read its answer and went on by asking again (a small one does, with or
        without words between). The reply ends before it: it would loop, rolling the same
        table or check again, until the bound on repeats."""
        if len(tags) < 2 or not self.stopped:
            return False
        last = same_tag(tags[-1])
        return any(same_tag(tags[index]) == last for index in self.stopped
                   if index < len(tags) - 1)

    def _stop(self, index: int) -> None:
        """Stop after tag ``index`` of the reply (the last one so far): its answer is marked as
        given mid-reply, so the replay answers the tags up to it before those after it."""
        self.stopped.append(index)
        self.stream.stop_at(index)

    def prefix(self) -> str:
        """The reply so far as the model is to continue it: every tag answered inline."""
        full = self.stream.full
        tags = tagparse.scan(full).tags
        return self.before + rewrite(full, tags, self.stream.answers, len(self.before),
                                     len(full))

    def continuation(self) -> dict[str, Any]:
        """The request that continues the reply: the same, with the reply so far in it as
        its shape continues a reply, asking for what the legs before it left."""
        body = self.form.continuation(self.request, self.prefix(), self.before)
        left = self.left()
        if left is not None:
            body.update(dict.fromkeys(self.limits, left))
        return body

    def left(self) -> int | None:
        """How many tokens the reply may still have (None: the client set no bound)."""
        if not self.limits:
            return None
        return max(0, min(self.limits.values()) - self.spent)

    async def _continue(self) -> ModelReply:
        try:
            reply = await within(self.deadline, self.client.send(
                "POST", self.url, self.headers, json.dumps(self.continuation()).encode()))
        except UpstreamFailure as failure:
            if failure.timed_out:
                raise LegFailed("the model server did not answer a continuation in time",
                                "upstream_timeout") from None
            raise LegFailed("the model server cannot be reached for a continuation "
                            f"({failure.name})", "upstream_unreachable") from None
        if reply.status != 200:
            try:
                text = (await read_body(reply, self.deadline)).decode("utf-8", "replace")
            except UpstreamFailure:
                text = ""
            finally:
                await reply.close()
            raise LegFailed(f"the model server answered {reply.status} to a continuation: "
                            f"{_detail(text)[:500]}", "upstream_status")
        return reply

    async def _pieces(self, reply: ModelReply) -> AsyncGenerator[
            tuple[str, str | None, dict[str, int] | None], None]:
        """(text, finish reason, usage) of each event of the model's answer, in its shape."""
        async with aclosing(self.form.pieces(reply, self.deadline)) as pieces:
            async for piece, finish, usage, document in pieces:
                self._note_base(document)
                yield piece, finish, usage

    def _note_base(self, document: Mapping[str, Any]) -> None:
        if not self._based:
            self._based = True
            self.base = {"id": document.get("id", "gmtags"),
                         "created": document.get("created", 0),
                         "model": document.get("model", self.request.get("model"))}

    def _add_usage(self, usage: dict[str, int] | None) -> None:
        if usage is None:
            return
        total = dict(self.usage or {})
        for key, value in usage.items():
            total[key] = total.get(key, 0) + value
        self.usage = total

    def differs(self) -> list[int]:
        """The tags stopped at whose answer the whole reply answers otherwise (a later tag is
        resolved before them: a [place:] or a fight written after them)."""
        return [index for index in self.stopped
                if index >= len(self.stream.answers) or
                every_answer_attr(self.shown[index]) !=
                every_answer_attr(self.stream.answers[index])]


def _chunk(data: str) -> Iterator[Piece]:
    """The (content, finish_reason, usage, chunk) of one event's chunk, when it is one."""
    try:
        chunk = json.loads(data)
        if not isinstance(chunk, dict):
            return
        choices = chunk.get("choices") or []
        choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0),
                      None)
    except (ValueError, TypeError, AttributeError, RecursionError):
        return
    piece, finish = "", None
    if isinstance(choice, dict):
        delta = choice.get("delta") or {}
        content = delta.get("content") if isinstance(delta, dict) else None
        piece = content if isinstance(content, str) else ""
        reason = choice.get("finish_reason")
        finish = reason if isinstance(reason, str) else None
    elif not choices and usage_of(chunk) is None:
        return
    yield piece, finish, usage_of(chunk), chunk


def usage_of(document: Mapping[str, Any]) -> dict[str, int] | None:
    """The token counts of a completion or chunk (``usage``), when it has them."""
    usage = document.get("usage")
    if not isinstance(usage, dict):
        return None
    counts = {key: value for key, value in usage.items()
              if isinstance(value, int) and not isinstance(value, bool)}
    return counts or None


def _detail(text: str) -> str:
    try:
        document = json.loads(text)
        error = document.get("error")
        return str(error.get("message") if isinstance(error, dict) else error or document)
    except (ValueError, AttributeError, TypeError, RecursionError):
        return text


def late_places(answers: list[Answer], stopped: list[int]) -> list[dict[str, Any]]:
    """The answers' JSON, a [place:] written after a tag answered mid-reply with a note telling
    the GM to name the place first (it holds only for the tags after that one)."""
    out = []
    first = min(stopped, default=len(answers))
    for index, answer in enumerate(answers):
        document = answer.to_json()
        if index > first and answer.tag.kind == "place":
            document["notes"] = [*document.get("notes", []), LATE_PLACE]
        out.append(document)
    return out


__all__ = ["ChatShape", "Continues", "LegFailed", "MidReply", "MidReplyOptions", "Piece",
           "Resolve", "Shape", "first_stop", "read_options", "stops_at", "usage_of"]
