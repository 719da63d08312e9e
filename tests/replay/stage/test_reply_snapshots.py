"""The state after a reply the stage answered is saved with the reply (issue 22, the overhead
goal): the chat's next request holds the reply as the client got it, and takes its state
from there instead of answering its tags again. Whatever the stage saved, every request must
be answered exactly as a server that never saw the chat answers it (DESIGN.md "Determinism").
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from stage_servers import FakeModel, Stage, start_stage

from replay.stage.app import SECTION_BEGIN

# Replies that change the state in each way a reply can: a check, items and coin, a refusal,
# a malformed tag, a place, and prose.
REPLIES = [
    'Ada listens. [skill_check: skill="sneak" dc="10" who="Ada"] Rain falls.',
    'You find a torch. [inventory: action="add" item="Torch" who="Ada"]',
    'Ada pays. [inventory: action="pay" amount="1 penny" who="Ada"] '
    '[inventory: action="remove" item="Dragon" who="Ada"]',
    'A broken tag [inventory: action="add" item=] and a good one '
    '[inventory: action="give" item="Torch" who="Ada" to="Bram the Quiet"]',
    '[place: name="The Mill"] The miller nods.',
    "The road winds on past the old mill.",
]


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def section_of(body: dict[str, Any]) -> str:
    return next(m["content"] for m in body["messages"]
                if m["role"] == "system" and m["content"].startswith(SECTION_BEGIN))


def _play(stage: Stage, model: FakeModel, game: str, stream: bool
          ) -> list[tuple[list[dict[str, Any]], dict[str, Any], str]]:
    """A chat of every reply, each sent back as the client got it: (request, metadata,
    GM section the model read) per request."""
    messages: list[dict[str, Any]] = []
    seen = []
    for number, reply in enumerate(REPLIES):
        model.script[f"turn {number}"] = reply
        messages.append(user(f"turn {number}"))
        response = stage.chat(messages, game=game, stream=stream)
        assert response.status_code == 200
        if stream:
            content, metadata = _streamed(response.text)
        else:
            content = response.json()["choices"][0]["message"]["content"]
            metadata = response.json()["gmtags"]
        seen.append((list(messages), metadata, section_of(model.requests[-1])))
        messages.append({"role": "assistant", "content": content})
    return seen


def _streamed(text: str) -> tuple[str, dict[str, Any]]:
    content, metadata = "", {}
    for line in text.splitlines():
        if line.startswith("data: {"):
            event = json.loads(line[6:])
            for choice in event.get("choices", []):
                content += choice.get("delta", {}).get("content") or ""
            metadata = event.get("gmtags", metadata)
    return content, metadata


@pytest.mark.parametrize("game", ["harrow", "harrow-block"])
@pytest.mark.parametrize("stream", [False, True])
def test_a_reply_sent_back_is_taken_from_its_saved_state_and_answers_the_same(
        model: FakeModel, games_dir: Any, game: str, stream: bool) -> None:
    """Each next request reuses the reply it holds (one turn folded: the player's), and its
    GM section and answers are byte for byte what a fresh server gives the same request."""
    warm = start_stage(model, games_dir)
    try:
        played = _play(warm, model, game, stream)
    finally:
        warm.server.stop()
    for request, metadata, section in played[1:]:
        assert (metadata["foldedTurns"], metadata["reusedTurns"]) == (1, len(request) - 1)
        cold = start_stage(model, games_dir)
        try:
            response = cold.chat(request, game=game)
            assert section_of(model.requests[-1]) == section
            fresh = response.json()["gmtags"]
            assert fresh["answers"] == metadata["answers"]
            assert (fresh["anchored"], fresh["replies"]) == (metadata["anchored"],
                                                             metadata["replies"])
        finally:
            cold.server.stop()


def test_an_edited_reply_is_folded_again_not_taken_from_the_saved_one(
        stage: Stage, model: FakeModel) -> None:
    """A reply the client changed is another turn: its own text is folded."""
    model.script["go"] = 'You find a torch. [inventory: action="add" item="Torch" who="Ada"]'
    first = stage.chat([user("go")]).json()
    content = first["choices"][0]["message"]["content"]
    edited = content.replace("You find", "Ada finds")
    assert edited != content
    again = stage.chat([user("go"), {"role": "assistant", "content": edited}, user("on")])
    metadata = again.json()["gmtags"]
    assert (metadata["foldedTurns"], metadata["reusedTurns"]) == (2, 1)
    assert "Torch" in section_of(model.requests[-1])
