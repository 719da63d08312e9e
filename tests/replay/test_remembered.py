"""What the engine remembers across states (issues 12 and 13) never changes what it gives:
over every state of recorded chats (invented items, fakes, markets, bound and cursed items),
the canonical JSON built from remembered fragments is the whole state's ``json.dumps``, and
GM sections written with remembered stack lines are the ones written from scratch."""

from __future__ import annotations

import pytest
from helpers import FIXTURES

import replay
from engine import State
from engine.rules.state import plain_canonical
from engine.text.prompt import StackLines, inventory_block

CHATS = [("bags-200.jsonl", "bags.json", "bags.json"),
         ("markets.jsonl", "gravewatch.json", "markets.json"),
         ("demo.jsonl", "harrow.json", "harrow.json"),
         ("corpus/harrow-long-road.jsonl", "harrow.json", "harrow.json")]


@pytest.mark.parametrize(("chat", "ruleset", "party"), CHATS)
def test_every_state_of_a_chat_serialises_and_renders_as_from_scratch(
        chat: str, ruleset: str, party: str) -> None:
    game = replay.load_ruleset(FIXTURES / "rulesets" / ruleset)
    start = replay.load_party(game, FIXTURES / "parties" / party)
    lines = StackLines()
    seen: list[State] = []

    def check(index: int, state: State) -> None:
        assert state.canonical() == plain_canonical(state), index
        assert inventory_block(game, state, lines) == inventory_block(game, state), index
        seen.append(state)

    replay.replay(game, replay.read_transcript(FIXTURES / "chats" / chat), start,
                  on_message=check)
    assert len({id(s) for s in seen}) > 5  # many states, most sharing parts
    for state in seen[::7]:  # asked again, out of order: still the same
        assert state.canonical() == plain_canonical(state)
