"""A party file (or an exported state) is checked against the ruleset it is played with
(DESIGN.md "Party", "Sheet model"; issue 29): every name it uses is the ruleset's, every
number within the ruleset's range, each problem with its JSON pointer and, for a typo, the
name it most likely meant."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

from engine import PartyError, load_ruleset, start_state
from engine.ruleset import RulesetError, validate
from engine.ruleset.pointers import nearest

GAME = harrow()
PARTY = fixture_json("parties/harrow.json")


def problems(document: dict[str, Any]) -> list[str]:
    with pytest.raises(PartyError) as error:
        start_state(GAME, document)
    return [str(problem) for problem in error.value.problems]


def ada(**changes: Any) -> dict[str, Any]:
    """The harrow party with Ada's entry changed."""
    document = copy.deepcopy(PARTY)
    document["characters"][0].update(changes)
    return document


@pytest.mark.parametrize(("changes", "message"), [
    ({"skills": {"sneek": "trained"}},
     '/characters/0/skills/sneek: no skill "sneek" in the ruleset (did you mean "sneak"?)'),
    ({"skills": {"sneak": "traned"}},
     '/characters/0/skills/sneak: no tier "traned" in the ruleset (did you mean "trained"?)'),
    ({"skills": {"sneak": {"tier": "Trained"}}},
     '/characters/0/skills/sneak/tier: no tier "Trained" in the ruleset '
     '(did you mean "trained"?)'),
    ({"skills": {"sneak": 3}},
     '/characters/0/skills/sneak: Sneak is a tier id or {"tier": ..., "bonus": ...}'),
    ({"skills": {"sneak": {"tier": "trained", "bonus": 5}}},
     "/characters/0/skills/sneak/bonus: Sneak takes no bonus (the ruleset gives it no "
     "bonusRange)"),
    ({"skills": {"sneak": {"teir": "trained"}}},
     '/characters/0/skills/sneak/teir: unknown key "teir" (did you mean "tier"?)'),
    ({"saves": {"stel": "trained"}},
     '/characters/0/saves/stel: no save "stel" in the ruleset (did you mean "steel"?)'),
    ({"abilities": {"strength": 3}},
     '/characters/0/abilities/strength: no ability "strength" in the ruleset'),
    ({"abilities": {"brawn": 9}}, "/characters/0/abilities/brawn: 9 is outside Brawn's 0..5"),
    ({"abilities": {"brawn": -1}}, "/characters/0/abilities/brawn: -1 is outside Brawn's 0..5"),
    ({"fields": {"levle": 1}},
     '/characters/0/fields/levle: no field "levle" in the ruleset (did you mean "level"?)'),
    ({"fields": {"level": "one"}}, "/characters/0/fields/level: Level is a number"),
    ({"pools": {"grit": 3}}, '/characters/0/pools/grit: no pool "grit" in the ruleset'),
    ({"pools": {"health": 11}}, "/characters/0/pools/health: 11 is outside Grit's 0..10"),
    ({"pools": {"resolve": -1}}, "/characters/0/pools/resolve: -1 is outside Resolve's 0..4"),
    ({"conditions": ["rattle"]},
     '/characters/0/conditions/0: no condition "rattle" in the ruleset '
     '(did you mean "rattled"?)'),
    ({"bag": [{"item": "kit/hand-ax"}]},
     '/characters/0/bag/0/item: no item "kit/hand-ax" in the ruleset '
     '(did you mean "kit/hand-axe"?)'),
    ({"bag": [{"coin": "crwn"}]},
     '/characters/0/bag/0/coin: no coin "crwn" in the ruleset (did you mean "crown"?)'),
    ({"skils": {}}, '/characters/0/skils: unknown key "skils" (did you mean "skills"?)'),
])
def test_a_party_is_checked_against_the_ruleset(changes: dict[str, Any], message: str) -> None:
    assert problems(ada(**changes)) == [message]


def test_every_problem_is_listed_not_only_the_first() -> None:
    found = problems(ada(skills={"sneek": "trained", "sneak": "traned"},
                         abilities={"brawn": 9, "strength": 1}))
    assert len(found) == 4


def test_an_unknown_tier_never_counts_as_the_first_tier() -> None:
    """Before issue 29, ``traned`` quietly rolled Sneak as untrained; now it is refused, and
    the right tier is what the check adds."""
    state = start_state(GAME, ada(skills={"sneak": "trained"}))
    _, [reply] = answer(GAME, state, '[skill_check: skill="sneak" dc="9"]')
    untrained = start_state(GAME, ada(skills={}))
    _, [plain] = answer(GAME, untrained, '[skill_check: skill="sneak" dc="9"]')
    assert reply.record["total"] == plain.record["total"] + 1  # the trained tier's flat 1


def test_a_skill_bonus_within_its_range_is_kept_outside_it_refused() -> None:
    game_document = fixture_json("rulesets/against-d100.json")
    party = fixture_json("parties/against-d100.json")
    game = load_ruleset(game_document)
    start_state(game, party)  # the fixture's bonuses are in range
    skill, entry = next((k, v) for k, v in party["characters"][0]["skills"].items()
                        if isinstance(v, dict) and "bonus" in v)
    row = next(s for s in game.ruleset.sheet.skills if s.id == skill)
    assert row.bonus_range is not None
    entry["bonus"] = row.bonus_range[1] + 1
    with pytest.raises(PartyError) as error:
        start_state(game, party)
    assert [p.pointer for p in error.value.problems] == [f"/characters/0/skills/{skill}/bonus"]
    assert "outside" in error.value.problems[0].message


def test_two_characters_of_one_name_name_the_name() -> None:
    document = copy.deepcopy(PARTY)
    document["characters"][1]["name"] = "ada"
    assert problems(document) == [
        '/characters/1/name: two characters are named "ada" (names are told apart without case)']


def test_a_player_who_is_no_character_gets_the_nearest_name() -> None:
    document = copy.deepcopy(PARTY)
    document["player"] = "Adda"
    assert problems(document) == [
        '/player: "Adda" is not one of the characters (did you mean "Ada"?)']


def test_an_exported_state_is_checked_the_same_way() -> None:
    exported = harrow_party(GAME).to_json()
    exported["characters"][0]["skills"] = {"sneak": "traned"}
    exported["characters"][0]["abilities"]["brawn"] = 9
    assert problems(exported) == [
        '/characters/0/abilities/brawn: 9 is outside Brawn\'s 0..5',
        '/characters/0/skills/sneak: no tier "traned" in the ruleset (did you mean "trained"?)',
    ]


def test_an_exported_state_keeps_its_temporary_points() -> None:
    """ITM-OUT-4: temporary points live beside the health pool, as "<health>:temporary"."""
    exported = harrow_party(GAME).to_json()
    exported["characters"][0]["pools"]["health:temporary"] = 3
    assert start_state(GAME, exported).characters[0].pools["health:temporary"] == 3


def test_an_unknown_key_of_an_exported_state_suggests_the_known_one() -> None:
    exported = harrow_party(GAME).to_json()
    exported["charcters"] = exported.pop("characters")
    found = problems(exported)
    assert '/charcters: unknown key "charcters" (did you mean "characters"?)' in found


def test_a_ruleset_key_typo_suggests_the_known_key() -> None:
    document = fixture_json("rulesets/harrow.json")
    document["sheet"]["skills"][0]["abilty"] = "wits"
    document["resolution"]["proficiencyTier"] = []
    document["lable"] = "Harrow"
    _, found = validate(document)
    assert sorted(str(p) for p in found) == [
        '/lable: unknown key "lable" (did you mean "label"?)',
        '/resolution/proficiencyTier: unknown key "proficiencyTier" '
        '(did you mean "proficiencyTiers"?)',
        '/sheet/skills/0/abilty: unknown key "abilty" (did you mean "ability"?)',
    ]


@pytest.mark.parametrize(("word", "known", "found"), [
    ("sneek", ["sneak", "climb"], "sneak"),
    ("SNEAK", ["sneak"], "sneak"),
    ("strength", ["brawn", "wits", "heart"], None),
    ("catalogs", ["tags", "slots"], None),  # alike in letters, not a typo of either
    ("kit/hand-ax", ["kit/hand-axe", "kit/torch"], "kit/hand-axe"),
    ("disciplines/celerity", ["disciplines/potence", "disciplines/fortitude"], None),
])
def test_the_nearest_name_is_a_likely_typo_or_nothing(word: str, known: list[str],
                                                      found: str | None) -> None:
    assert nearest(word, known) == found


def test_a_party_error_is_a_ruleset_error_with_pointers() -> None:
    with pytest.raises(RulesetError):
        start_state(GAME, ada(skills={"sneek": "trained"}))
