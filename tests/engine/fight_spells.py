"""Shared set-up of the Combat II ability tests: fixtures/rulesets/skirmish-spells.json (the
skirmish ruleset with spell slots as pools, a spells catalog — Shield, Fire Bolt, Burning
Hands, Hold Person, Faerie Fire, Action Surge — and ``combat.sustain``) and its party: Ada
(Int 16, Con 12; Shield as her standing reaction to being hit) and Brannoc (Action Surge)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from helpers import answer, fixture_json

from engine import Answer, load_ruleset, start_state
from engine.rules.state import State

DOCUMENT = fixture_json("rulesets/skirmish-spells.json")
PARTY = fixture_json("parties/skirmish-spells.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
TWO_GOBLINS = '[combat: op="start" foe="Goblin" count="2"]'


def fighting(state: State = START, text: str = TWO_GOBLINS, game=GAME) -> State:
    """The party and two goblins in a fight (no round fought yet)."""
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def first(state: State, text: str, wanted: Callable[[list[Answer]], bool], game=GAME,
          session: int = 1) -> tuple[State, list[Answer]]:
    """The first reply (turn keys (session, 1), (session, 2), …) whose answers ``wanted``
    holds for: the dice are the engine's, so the tests look for the rolls they need."""
    for turn in range(1, 400):
        after, answers = answer(game, state, text, (session, turn))
        if wanted(answers):
            return after, answers
    raise AssertionError(f"no reply of {text!r} gave what was wanted")


def record(answers: list[Answer], index: int = 0) -> dict[str, Any]:
    return answers[index].record
