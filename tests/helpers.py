"""Shared helpers for the tests: fixture paths, loading, answering one reply's tags."""

from __future__ import annotations

import copy
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import tagparse
from engine import Answer, Game, State, TurnContext, apply_reply, load_ruleset, start_state
from engine.rules.state import Character, Combatant
from engine.ruleset import validate

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "fixtures"


def fixture_json(relative: str) -> Any:
    return json.loads((FIXTURES / relative).read_text(encoding="utf-8"))


def harrow() -> Game:
    return load_ruleset(fixture_json("rulesets/harrow.json"))


def harrow_party(game: Game | None = None) -> State:
    return start_state(game or harrow(), fixture_json("parties/harrow.json"))


def answer(game: Game, state: State, text: str,
           turn: tuple[int, ...] = (0, 0)) -> tuple[State, list[Answer]]:
    """Apply the tags of one GM reply ``text`` to ``state``."""
    return apply_reply(game, state, tagparse.scan(text).tags, TurnContext(state.seed, turn))


def bag(state: State, who: str) -> list[tuple[str, int]]:
    character = next(c for c in state.characters if c.name == who)
    return [(s.name, s.count) for s in character.bag]


def system_program(program: str, why: str) -> str:
    """The path of a system program some tests need (``redis-server``, ``/usr/bin/chromium``).

    Missing, the test skips, saying so — except under CI (the ``CI`` environment variable
    set), where a missing program fails the test: a CI run must not pass by skipping what it
    was meant to check (scripts/test installs both with apt-get)."""
    found = program if os.path.isabs(program) and os.access(program, os.X_OK) \
        else shutil.which(program)
    if found:
        return found
    message = f"{program} is not installed ({why}; scripts/test installs it with apt-get)"
    if os.environ.get("CI"):
        pytest.fail(f"{message}; CI is set, so a missing program fails", pytrace=False)
    pytest.skip(message)


# Changing a ruleset document in one place and listing what is wrong with it then (the
# load-time rule tables of tests/engine/ruleset).

def problems_of(document: Any, *mutations: Any) -> list[str]:
    """The problems of a copy of ``document`` after each mutation, as ``pointer: message``."""
    document = copy.deepcopy(document)
    for mutate in mutations:
        mutate(document)
    return [str(p) for p in validate(document)[1]]


def at(document: Any, path: tuple[str | int, ...]) -> Any:
    node = document
    for step in path:
        node = node[step]
    return node


def put(path: tuple[str | int, ...], value: Any) -> Any:
    return lambda d: at(d, path[:-1]).__setitem__(path[-1], value)


def drop(path: tuple[str | int, ...]) -> Any:
    return lambda d: at(d, path[:-1]).pop(path[-1])


def push(path: tuple[str | int, ...], value: Any) -> Any:
    return lambda d: at(d, path).append(value)


def fell(record: dict[str, Any]) -> list[str]:
    """A strike record's events but its ``damage:`` one (CMB-CARD-1): who went down or was
    felled, and how the fight ended."""
    return [e for e in record.get("events", []) if not e.startswith("damage:")]


def one(state: State, name: str) -> Combatant:
    """The combatant of the fight on now called ``name``."""
    assert state.encounter is not None
    index = state.encounter.find(name)
    assert index is not None
    return state.encounter.combatants[index]


def hero(state: State, name: str) -> Character:
    """The party's character called ``name``."""
    return next(c for c in state.characters if c.name == name)


# Every key of the JSON gmtags writes is camelCase (README "The JSON gmtags writes") ...
SCHEMA_KEY = re.compile(r"^[a-z][A-Za-z0-9]*$")
# ... but for the maps whose keys are data, not schema: ids from the ruleset or the party
# (a character's abilities, skills, saves, fields, pools, tracks, lost maxima; an item's
# stats), the attributes of a tag as the model wrote them (an answer's ``attrs``, regress's
# ``recorded`` and ``now``), names (a strike's ``initiative`` by combatant, the panel's
# ``changes.characters``) and the report's per-character changes by character index (``b``,
# ``p``, ``l``, ``c``). A map is told by the key it stands under: these keys hold a map of
# data wherever their value is an object (``characters`` is a list everywhere else).
DATA_MAPS = frozenset({"abilities", "skills", "saves", "fields", "pools", "tracks", "lost",
                       "stats", "attrs", "recorded", "now", "initiative", "characters",
                       "b", "p", "l", "c"})
# The keys of a foe's numbers, which a hero never carries (engine.rules.state.FOE_ONLY)
FOE_KEYS = frozenset({"hp", "hpMax", "defence", "attack", "damage", "role", "tier", "modifier",
                      "attacks", "loot", "damageType", "types", "tags", "reduction", "abilities",
                      "regenerate", "stoppedBy"})


def key_problems(value: Any, path: str = "") -> list[str]:
    """Where a JSON document gmtags wrote breaks the one spelling: each schema key that is
    not camelCase (by its path), and each hero in a state's ``combatants`` with a foe's key."""
    problems: list[str] = []
    if isinstance(value, dict):
        for key, item in value.items():
            if not SCHEMA_KEY.match(key):
                problems.append(f"{path}/{key}")
            if key in DATA_MAPS and isinstance(item, dict):
                for name, entry in item.items():
                    problems += key_problems(entry, f"{path}/{key}/{name}")
                continue
            if key == "combatants" and isinstance(item, list):
                problems += [f"{path}/combatants/{i}: a hero with {sorted(FOE_KEYS & set(c))}"
                             for i, c in enumerate(item)
                             if isinstance(c, dict) and c.get("side") == "party"
                             and FOE_KEYS & set(c)]
            problems += key_problems(item, f"{path}/{key}")
    elif isinstance(value, list):
        for index, item in enumerate(value):
            problems += key_problems(item, f"{path}/{index}")
    return problems
