"""Load-time checks of health and wound tracks (``live.tracks``; items.md glossary "Track",
ITM-ISTAT-12, ITM-OUT-3, ITM-OUT-11)."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from engine.ruleset.problems import validate
from tests.helpers import fixture_json

BASE = fixture_json("rulesets/wounds.json")


def problems_of(mutate: Any) -> list[str]:
    document = copy.deepcopy(BASE)
    mutate(document)
    _, problems = validate(document)
    return [str(p) for p in problems]


def track(doc: dict[str, Any]) -> dict[str, Any]:
    found: dict[str, Any] = doc["live"]["tracks"][0]
    return found


def penalty(doc: dict[str, Any], index: int = 0) -> dict[str, Any]:
    found: dict[str, Any] = track(doc)["penalties"][index]["modifiers"][0]
    return found


def test_the_fixture_is_clean() -> None:
    assert problems_of(lambda doc: None) == []


def _health_next_to_pool(doc: dict[str, Any]) -> None:
    doc["live"]["pools"].append({"id": "grit", "label": "Grit", "health": True,
                                 "max": {"const": 8}})
    doc["live"]["tracks"].append({"id": "blood", "label": "Blood", "kind": "health",
                                  "max": {"const": 8}})


def _item_stat_max(doc: dict[str, Any]) -> None:
    doc["items"]["stats"] = [{"id": "cover", "label": "Cover", "type": "number"}]
    track(doc)["max"] = {"itemStat": {"stat": "cover", "from": "worn", "pick": "max"}}


CASES = [
    (lambda d: d["live"]["tracks"].append(copy.deepcopy(track(d))),
     '/live/tracks/1/id: duplicate id "wounds"'),
    (lambda d: track(d).update(id="resolve"),
     '/live/tracks/0/id: "resolve" is already the id of a pool'),
    (_health_next_to_pool, "/live/tracks/1/kind: a second health pool or health track"),
    (_item_stat_max, "/live/tracks/0/max: reads items (itemStat, or a derived value that does)"),
    (lambda d: track(d).update(max={"derived": "nope"}), '/live/tracks/0/max: unknown derived "nope"'),
    (lambda d: track(d).update(max={"const": 0}), "/live/tracks/0/max: a track holds at least 1"),
    (lambda d: track(d).update(kind="health"),
     "/live/tracks/0/penalties: only a wound track has penalties"),
    (lambda d: track(d)["penalties"][1].update(atLeast=2),
     "/live/tracks/0/penalties/1/atLeast: penalties rise: atLeast 2 is not above 2"),
    (lambda d: track(d).update(max={"const": 3}),
     "/live/tracks/0/penalties/1/atLeast: atLeast 4 is above the track's max 3"),
    (lambda d: penalty(d).update(to="defence"),
     '/live/tracks/0/penalties/0/modifiers/0/to: a wound penalty changes "checks" or "saves", '
     'not "defence"'),
    (lambda d: penalty(d).update(dice="2q6"),
     '/live/tracks/0/penalties/0/modifiers/0/dice: "2q6" is not dice notation (write e.g. 2d6, '
     '1d8+1 or 3)'),
    (lambda d: penalty(d).update(skills=["swim"]),
     '/live/tracks/0/penalties/0/modifiers/0/skills/0: unknown skill "swim"'),
    (lambda d: penalty(d).update(saves=["luck"]),
     '/live/tracks/0/penalties/0/modifiers/0/saves/0: unknown save "luck"'),
    (lambda d: penalty(d).pop("flat"),
     "/live/tracks/0/penalties/0/modifiers/0: a wound penalty has a flat, dice or mode"),
]


@pytest.mark.parametrize(("mutate", "expected"), CASES)
def test_a_bad_track_is_refused_at_load(mutate: Any, expected: str) -> None:
    assert expected in problems_of(mutate)


@pytest.mark.parametrize(("mutate", "pointer"), [
    (lambda d: track(d).update(kind="stress"), "/live/tracks/0/kind"),
    (lambda d: track(d)["penalties"][0].update(atLeast=0), "/live/tracks/0/penalties/0/atLeast"),
    (lambda d: track(d)["penalties"][0].update(modifiers=[]),
     "/live/tracks/0/penalties/0/modifiers"),
    (lambda d: track(d).update(colour="red"), "/live/tracks/0/colour"),
    (lambda d: track(d).pop("max"), "/live/tracks/0"),
])
def test_a_malformed_track_names_its_pointer(mutate: Any, pointer: str) -> None:
    assert any(p.startswith(pointer + ":") for p in problems_of(mutate))


def test_a_wound_track_next_to_a_health_pool_is_allowed() -> None:
    def pool(doc: dict[str, Any]) -> None:
        doc["live"]["pools"].append({"id": "grit", "label": "Grit", "health": True,
                                     "max": {"const": 8}})
    assert problems_of(pool) == []


def test_the_schema_describes_tracks() -> None:
    from replay.cli import ruleset_schema
    schema = ruleset_schema()
    properties = schema["$defs"]["Track"]["properties"]
    assert set(properties) >= {"id", "label", "kind", "max", "penalties"}
    assert "marks" in properties["kind"]["description"]
    assert "atLeast" in schema["$defs"]["WoundPenalty"]["properties"]
    assert "tracks" in schema["$defs"]["Live"]["properties"]
