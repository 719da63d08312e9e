"""What 0 hit points means for a hero, and the rule-card events of a fight (spec/combat.md
A.12: CMB-HP0-1..4, OQ-CMB-15, CMB-CARD-1, CMB-WIN-1; engine/rules/fight/zero_hp.py,
engine/actions/fight/hp0.py) on fixtures/rulesets/skirmish-foes.json: conditions ``dying``
(``zeroHp: "death"``) and ``steady`` (``zeroHp: "stable"``), and the world's death rule
``combat.zeroHp`` ``{"death": true, "dead": "dead", "stable": "stable"}``."""

from __future__ import annotations

import copy

from helpers import answer, fixture_json, hero, problems_of

from engine import load_ruleset, start_state
from engine.rules.fight.zero_hp import at_zero, is_dead, zero_meaning
from engine.rules.state import plain_canonical

DOCUMENT = fixture_json("rulesets/skirmish-foes.json")
PARTY = fixture_json("parties/skirmish-spells.json")
GAME = load_ruleset(DOCUMENT)
GOBLIN = '[combat: op="start" foe="Goblin"]'
STRIKE = '[attack: who="Goblin" target="Brannoc"]'


def _game(**zero_hp):
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["zeroHp"] = zero_hp
    return load_ruleset(document)


def _party(game, *conditions: str):
    """The party with Brannoc at 1 hit point bearing ``conditions``."""
    party = copy.deepcopy(PARTY)
    party["characters"][1]["pools"]["hp"] = 1
    party["characters"][1]["conditions"] = list(conditions)
    state, answers = answer(game, start_state(game, party), GOBLIN)
    assert all(a.ok for a in answers)
    return state


def _dropped(game, state, text: str = STRIKE):
    for turn in range(1, 200):
        after, answers = answer(game, state, text, (1, turn))
        if answers[0].ok and "down:Brannoc" in answers[0].record.get("events", []):
            return after, answers[0]
    raise AssertionError("Brannoc never went down")


def test_cmb_hp0_3_in_a_world_with_death_a_hero_marked_for_death_dies_on_the_spot() -> None:
    state = _party(GAME, "dying")
    after, told = _dropped(GAME, state)
    damage = told.record["damage"]
    assert told.record["events"] == [f"damage:Brannoc:{damage}", "down:Brannoc",
                                     "dead:Brannoc"]  # CMB-CARD-1
    assert told.record["zeroHp"] == {"who": "Brannoc", "meaning": "death", "outcome": "dead",
                                     "condition": "dead"}
    assert hero(after, "Brannoc").conditions == ("dying", "dead")
    assert "Brannoc dies (Dead)." in told.text
    assert is_dead(GAME, hero(after, "Brannoc").conditions)


def test_cmb_hp0_4_in_a_world_without_death_the_bleeding_stops() -> None:
    game = _game(death=False, dead="dead", stable="stable")
    after, told = _dropped(game, _party(game, "dying"))
    assert told.record["events"][-1] == "stable:Brannoc"
    assert told.record["zeroHp"] == {"who": "Brannoc", "meaning": "death",
                                     "outcome": "stable", "condition": "stable"}
    assert hero(after, "Brannoc").conditions == ("dying", "stable")
    assert "the bleeding stops, and Brannoc wakes up later" in told.text


def test_cmb_hp0_4_a_stable_condition_wins_over_one_marked_for_death() -> None:
    after, told = _dropped(GAME, _party(GAME, "dying", "steady"))
    assert told.record["zeroHp"]["meaning"] == "stable"
    assert told.record["zeroHp"]["outcome"] == "stable"
    assert "stable" in hero(after, "Brannoc").conditions
    assert "dead" not in hero(after, "Brannoc").conditions


def test_cmb_hp0_1_without_a_meaning_a_hero_is_only_down_as_before() -> None:
    after, told = _dropped(GAME, _party(GAME))
    assert told.record["events"][-1] == "down:Brannoc" and "zeroHp" not in told.record
    assert told.text.endswith("Brannoc is down.")
    assert hero(after, "Brannoc").conditions == ()


def test_cmb_hp0_2_the_rulesets_meaning_holds_where_no_condition_says() -> None:
    game = _game(death=True, meaning="death", dead="dead")
    after, told = _dropped(game, _party(game))
    assert told.record["zeroHp"]["outcome"] == "dead"
    assert hero(after, "Brannoc").conditions == ("dead",)
    bare = _game(meaning="stable")  # no conditions named: the outcome is recorded alone
    _, told = _dropped(bare, _party(bare))
    assert told.record["zeroHp"] == {"who": "Brannoc", "meaning": "stable",
                                     "outcome": "stable"}


def test_zero_meaning_reads_the_conditions_first() -> None:
    assert zero_meaning(GAME, ("dying",)) == "death"
    assert zero_meaning(GAME, ("steady", "dying")) == "stable"
    assert zero_meaning(GAME, ("prone",)) is None
    state = _party(GAME)
    assert at_zero(GAME, state, 1) == (state, None)


def test_cmb_hp0_a_foes_ability_that_drops_a_hero_reads_the_same_rule() -> None:
    party = copy.deepcopy(PARTY)
    party["characters"][1]["pools"]["hp"] = 1
    party["characters"][1]["conditions"] = ["dying"]
    state, _ = answer(GAME, start_state(GAME, party),
                      '[combat: op="start" foe="Smaug" role="dragon"]')
    after, told = _dropped(GAME, state, '[attack: who="Smaug" use="bite" target="Brannoc"]')
    row = told.record["targets"][0]
    assert row["zeroHp"]["outcome"] == "dead"
    assert told.record["events"][-2:] == ["down:Brannoc", "dead:Brannoc"]
    assert "dead" in hero(after, "Brannoc").conditions


def test_cmb_card_1_start_damage_felled_and_end_are_events_of_their_records() -> None:
    party = copy.deepcopy(PARTY)
    state = start_state(GAME, party)
    started, answers = answer(GAME, state, GOBLIN)
    assert answers[0].record["events"] == ["start"]
    for turn in range(1, 200):
        _, answers = answer(GAME, started, '[attack: who="Brannoc" target="Goblin"]',
                                (1, turn))
        if "felled:Goblin" in answers[0].record.get("events", []):
            break
    events = answers[0].record["events"]
    assert events[0].startswith("damage:Goblin:") and events[1:] == ["felled:Goblin",
                                                                      "end:victory"]
    _, ended = answer(GAME, started, '[combat: op="end" outcome="fled"]', (2, 1))
    assert ended[0].record["events"] == ["end:fled"]


def test_cmb_win_1_the_last_hero_down_ends_the_fight_in_defeat() -> None:
    party = copy.deepcopy(PARTY)
    party["characters"] = party["characters"][1:]  # Brannoc alone
    party["characters"][0]["pools"]["hp"] = 1
    party["player"] = "Brannoc"
    game = GAME
    state, _ = answer(game, start_state(game, party), GOBLIN)
    after, told = _dropped(game, state)
    assert told.record["events"][-1] == "end:defeat" and after.encounter is None


def test_load_checks_the_zero_hp_keys() -> None:
    assert problems_of(DOCUMENT) == []
    bad = copy.deepcopy(DOCUMENT)
    bad["combat"]["zeroHp"]["death"] = "sometimes"
    assert problems_of(bad)
    bad = copy.deepcopy(DOCUMENT)
    bad["combat"]["conditions"][-1]["zeroHp"] = "undead"
    assert problems_of(bad)


def test_a_hero_who_is_only_hit_is_unchanged_by_the_rule() -> None:
    state = _party(GAME, "dying")
    for turn in range(1, 200):
        after, answers = answer(GAME, state, STRIKE, (1, turn))
        if answers[0].ok and answers[0].record["result"] == "miss":
            assert plain_canonical(after.model_copy(update={"encounter": None})) == \
                plain_canonical(state.model_copy(update={"encounter": None}))
            return
    raise AssertionError("the goblin never missed")
