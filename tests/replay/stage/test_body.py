"""Reading chat request bodies by their bytes (issue 12: a reply's cost must not grow with the
chat). The reader must give exactly ``json.loads``'s value or error, whatever it reuses from a
recent body, and the spliced body it sends on must be the client's body with the GM section
added as one message."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from replay.cache import MemoryStore, SnapshotCache
from replay.formats.openai import read_turns
from replay.stage.body import MAX_MESSAGES, Body, BodyReader

SECTION = b'{"role":"system","content":"gmtags section"}'
ODD = [
    b'{"messages":[1,2', b'{"messages":[1,2]}x', b'{"messages":[1,2],"messages":[3]}', b"[]",
    b"{}", b'{"a":1,"a":2,"messages":[]}', b'{"messages":[]}', b'{"messages":[], }',
    b'{"messages":[1,]}', b'\xef\xbb\xbf{"messages":[]}', b'{"messages":[NaN, -Infinity]}',
    b' {"messages" : [ {"a":1} , {"b":2} ] , "z" : 1 } ', b'{"messages":"no"}',
    b'{"messages":[{"a":1}],"z":[1,{"q":2}],"z":3}', b'{"messages":[{"a":1}],"messages":2}',
    b'{"model":"m","messages":[{"role":"user","content":"caf\xc3\xa9 \xf0\x9f\x8e\xb2"}]}',
    b'{"messages":[{"content":"\xff"}]}', '{"messages":[]}'.encode("utf-16"), b"",
    b'{"messages":[' + b"[" * 100_000 + b"]" * 100_000 + b"]}", b"nul\x00l",
]


def _outcome(read: Any, raw: bytes) -> tuple[str, Any]:
    try:
        value = read(raw)
    except RecursionError:
        return ("RecursionError", None)
    except ValueError as failure:
        return (type(failure).__name__, str(failure))
    return ("value", value.document if isinstance(value, Body) else value)


def _same_as_json(reader: BodyReader, raw: bytes) -> Any:
    assert _outcome(reader.read, raw) == _outcome(json.loads, raw)
    return reader.read(raw) if _outcome(json.loads, raw)[0] == "value" else None


@pytest.mark.parametrize("raw", ODD)
def test_a_body_reads_as_json_loads_reads_it(raw: bytes) -> None:
    """Any body, first or after one it shares bytes with: json.loads's value or error."""
    reader = BodyReader()
    _same_as_json(reader, raw)
    _same_as_json(reader, raw)
    _same_as_json(reader, raw[:len(raw) // 2])


def _message(draw: Any) -> dict[str, Any]:
    return {"role": draw(st.sampled_from(["system", "user", "assistant"])),
            "content": draw(st.text(max_size=12))}


@st.composite
def chats(draw: Any) -> list[tuple[bytes, dict[str, Any]]]:
    """Successive requests of one chat: grown, edited anywhere, regenerated, re-spaced."""
    messages = [_message(draw) for _ in range(draw(st.integers(0, 6)))]
    requests = []
    for _ in range(draw(st.integers(1, 6))):
        move = draw(st.sampled_from(["grow", "edit", "same", "drop-front"]))
        if move == "grow":
            messages = [*messages, *(_message(draw) for _ in range(draw(st.integers(1, 3))))]
        elif move == "edit" and messages:
            at = draw(st.integers(0, len(messages) - 1))
            messages = [*messages[:at], _message(draw), *messages[at + 1:]]
        elif move == "drop-front":
            messages = messages[1:]
        body = {"model": "m", "messages": messages, **draw(st.sampled_from(
            [{}, {"stream": True}, {"stop": ["\n"], "temperature": 0.5}]))}
        raw = json.dumps(body, ensure_ascii=draw(st.booleans()),
                         indent=draw(st.sampled_from([None, None, 1]))).encode()
        requests.append((raw, body))
    return requests


@given(chats())
@settings(max_examples=150, deadline=None)
def test_successive_requests_read_as_json_loads_and_splice_anywhere(
        requests: list[tuple[bytes, dict[str, Any]]]) -> None:
    """Each request of a chat reads to its JSON value, shares the leading messages it repeats
    with the request before (the same objects), and splices the section in at any place."""
    reader = BodyReader()
    for raw, body in requests:
        read = reader.read(raw)
        assert isinstance(read, Body)
        assert read.document == body
        if read.base is not None:
            for index in range(read.shared):
                assert read.messages[index] is read.base.messages[index]
        for at in range(len(body["messages"]) + 1):
            sent = json.loads(read.spliced(at, SECTION))
            assert sent == {**body, "messages": [*body["messages"][:at], json.loads(SECTION),
                                                 *body["messages"][at:]]}
            # what is sent on: the same bytes, as pieces that view the client's own
            pieces = read.pieces(at, SECTION)
            assert b"".join(pieces) == read.spliced(at, SECTION)
            assert all(piece.obj is raw for piece in pieces if isinstance(piece, memoryview))


def test_a_grown_request_parses_only_its_new_messages() -> None:
    """The next request of a chat repeats the last one's bytes but for its last message: all
    the others are reused."""
    reader = BodyReader()
    messages = [{"role": "user", "content": f"turn {i} — on"} for i in range(200)]
    first = reader.read(json.dumps({"messages": [*messages, {"role": "user", "content": "go"}]},
                                   ensure_ascii=False).encode())
    messages.append({"role": "assistant", "content": "reply"})
    second = reader.read(json.dumps({"messages": [*messages, {"role": "user", "content": "go"}]},
                                    ensure_ascii=False).encode())
    assert second.base is first and second.shared == 200


def test_turns_read_with_a_known_shared_prefix_are_the_full_reading() -> None:
    """SnapshotCache.turns told how many messages a body shares with a recent one gives
    exactly read_turns."""
    cache = SnapshotCache(MemoryStore())
    reader = BodyReader()
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM."}]
    for round_ in range(5):
        messages = [*messages, {"role": "user", "content": f"turn {round_}"},
                    {"role": "assistant", "content": f"reply {round_}"}]
        read = reader.read(json.dumps({"messages": messages}).encode())
        like = (read.base.messages, read.shared) if read.base is not None else None
        assert cache.turns(read.messages, like) == read_turns(messages)


def test_a_body_of_more_messages_than_the_reader_tracks_is_read_by_json_loads() -> None:
    """Millions of tiny items would take the offset reader seconds: past MAX_MESSAGES the body
    is json.loads's, read plainly (its value is the same, nothing is reused from it)."""
    raw = b'{"messages":[' + b",".join([b"{}"] * (MAX_MESSAGES + 1)) + b"]}"
    read = BodyReader().read(raw)
    assert not isinstance(read, Body) and read == json.loads(raw)


def test_a_body_does_not_keep_the_bodies_it_was_read_on_alive() -> None:
    """Issue 22, finding 6: each body kept its base alive, and so every earlier body of a
    chat: memory grew with every request. Only the reader's recent bodies stay."""
    import gc
    import weakref

    reader = BodyReader(recent=2)
    messages: list[dict[str, str]] = []
    kept = []
    for turn in range(12):
        messages.append({"role": "user", "content": f"turn {turn}"})
        body = reader.read(json.dumps({"messages": messages}).encode())
        kept.append(weakref.ref(body))
        assert turn == 0 or body.base is not None  # the last body is still there to share
    gc.collect()
    assert [ref() is None for ref in kept] == [True] * 10 + [False] * 2


def test_forty_chats_at_once_each_find_their_previous_request() -> None:
    """Issue 30: with 40 chats interleaved on one worker, each request still shares the bytes
    of its own chat's previous one (a reader that kept 8 bodies had lost it: every request
    was read whole)."""
    reader = BodyReader()
    chats: list[list[dict[str, str]]] = [[] for _ in range(40)]
    for turn in range(3):
        for number, chat in enumerate(chats):
            chat.append({"role": "user", "content": f"chat {number} turn {turn}"})
            body = reader.read(json.dumps({"messages": chat}).encode())
            assert body.shared == (turn and len(chat) - 1), (number, turn)


def test_the_recent_bodies_are_bounded_in_bytes() -> None:
    """Issue 22 (bounded memory): however large the bodies, the reader keeps at most its byte
    bound of them (always the newest one)."""
    reader = BodyReader(most_bytes=50_000)
    for number in range(30):
        big = [{"role": "user", "content": f"{number} " + "x" * 20_000}]
        reader.read(json.dumps({"messages": big}).encode())
        assert reader._bytes <= 50_000 or len(reader._recent) == 1
        assert reader._bytes == sum(len(b.raw) for b in reader._recent)


def test_an_edit_deep_in_a_chat_shares_the_longest_prefix_of_any_recent_body() -> None:
    """Where no recent body's last messages match (an edit deep in the chat, a new chat), each
    body longer than the probes is searched, and the longest shared prefix wins whichever body
    holds it; a new chat shares nothing and still reads as json.loads reads it."""
    def raw(messages: list[dict[str, str]]) -> bytes:
        return json.dumps({"model": "m", "messages": messages}).encode()

    reader = BodyReader()
    chat = [{"role": "system", "content": "GM."}] + [
        {"role": "user" if i % 2 else "assistant", "content": f"line {i}"} for i in range(30)]
    whole = reader.read(raw(chat))
    branch = [{"role": "user", "content": f"another way {i}"} for i in range(6)]
    reader.read(raw([*chat[:5], *branch]))  # shares 5, and none of its last messages
    reader.read(raw([{"role": "user", "content": "a chat of its own"}]))  # newest, shares 0
    edited = [*chat[:20], {"role": "user", "content": "edited"}, *chat[21:]]
    read = reader.read(raw(edited))
    assert read.base is whole and read.shared == 20
    assert read.document == {"model": "m", "messages": edited}
    fresh = reader.read(raw([{"role": "user", "content": "hello"}]))
    assert fresh.shared == 0 and fresh.document == {"model": "m", "messages": [
        {"role": "user", "content": "hello"}]}
