"""``[attack:]`` reads one request per kind of combat (engine/actions/fight/requests.py, the
kinds table's ``strike``): an attribute the ruleset's kind does not read is ignored with the
note every tag gets for an attribute nobody reads, and changes nothing; the reference and the
request schema show each kind's attributes."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, answer

import replay
from engine import ACTIONS, Game, State
from engine.actions.fight.kinds import FIGHT_KINDS, STRIKES
from engine.actions.fight.requests import FormulaStrike, NarrativeStrike, OutcomeStrike, Strike
from engine.rules import reasons
from engine.text.reference import request_schema, tag_reference


def _loaded(name: str) -> tuple[Game, State]:
    game = replay.load_ruleset(FIXTURES / f"rulesets/{name}.json")  # srd5's packages
    return game, replay.load_party(game, FIXTURES / f"parties/{name}.json")


FORMULA = _loaded("srd5")
NARRATIVE = _loaded("harrow-narrative")
OUTCOME = _loaded("outcome-2d6")
START = {
    "formula": '[combat: op="start" foe="Goblin" role="standard" tier="1" count="2"]',
    "narrative": '[combat: op="start" foe="Wolf" role="beast" tier="2" count="2" rank="D"]',
    "outcome": '[combat: op="start" foe="Thug" role="standard"]',
}
HERO = {"formula": "Brannoc", "narrative": "Ada", "outcome": "Ada"}
FOE = {"formula": "Goblin 1", "narrative": "Wolf 1", "outcome": "Thug"}
GAMES = {"formula": FORMULA, "narrative": NARRATIVE, "outcome": OUTCOME}
REQUESTS = {"formula": FormulaStrike, "narrative": NarrativeStrike, "outcome": OutcomeStrike}
# A value each attribute could act on were it read: a grade that changes the dice, a weapon
# nobody holds (refused not-held), a reach an unarmed strike lacks (refused out-of-reach).
FOREIGN = {"with": "Nothing Held", "action": "Bonus", "range": "far", "mode": "burst",
           "tactics": "perfect", "risk": "reckless", "aim": "extreme", "purpose": "subdue",
           "effort": "huge", "push": "yes", "pool": "mana", "undodgeable": "yes",
           "technique": "Bite", "edge": "superior", "flair": "creative",
           "position": "desperate", "effect": "great"}


def _fighting(kind: str) -> State:
    game, state = GAMES[kind]
    state, answers = answer(game, state, START[kind])
    assert all(a.ok for a in answers), [a.text for a in answers]
    return state


def _foreign(kind: str) -> list[tuple[str, str]]:
    """Each attribute another kind's ``[attack:]`` reads that ``kind``'s does not."""
    mine = ACTIONS[("attack", None)].reads(REQUESTS[kind])
    return [(name, kind) for other, request in REQUESTS.items() if other != kind
            for name in sorted(ACTIONS[("attack", None)].reads(request) - mine)]


def test_every_kind_of_combat_reads_its_own_attack_request() -> None:
    assert set(STRIKES.requests) == set(FIGHT_KINDS)
    assert all(issubclass(kind.strike, Strike) for kind in FIGHT_KINDS.values())
    assert {name: kind.strike for name, kind in FIGHT_KINDS.items()} == dict(STRIKES.requests)
    for kind, (game, _) in GAMES.items():
        assert ACTIONS[("attack", None)].request_of(game) is REQUESTS[kind]
    assert set(FOREIGN) == {meta.name for request in REQUESTS.values()
                            for _, meta in request.declared} - {"who", "target"}


@pytest.mark.parametrize(("name", "kind"), [
    pair for kind in REQUESTS for pair in _foreign(kind)])
def test_an_attribute_of_another_kind_is_noted_ignored_and_changes_nothing(name, kind) -> None:
    game, _ = GAMES[kind]
    state = _fighting(kind)
    plain = f'[attack: who="{HERO[kind]}" target="{FOE[kind]}"]'
    written = plain[:-1] + f' {name}="{FOREIGN[name]}"]'
    before, [told] = answer(game, state, plain, (1, 0))
    after, [noted] = answer(game, state, written, (1, 0))
    assert after == before
    assert (noted.ok, noted.reason, noted.text, noted.record) == (
        told.ok, told.reason, told.text, told.record)
    assert noted.notes == (*told.notes, f'ignored unknown attribute "{name}"')


@pytest.mark.parametrize(("kind", "written", "reason"), [
    ("formula", 'who="Nobody Atall" target="Goblin 1"', reasons.UNKNOWN_COMBATANT),
    ("formula", 'who="Brannoc" target="Goblin 1" with="Nothing Held"', reasons.UNKNOWN_WEAPON),
    ("formula", 'who="Brannoc" target="Goblin 1" with="unarmed" range="far"',
     reasons.OUT_OF_REACH),
    ("formula", 'who="Brannoc" target="Quill"', reasons.UNSUPPORTED),
    ("narrative", 'who="Nobody Atall" target="Wolf 1"', reasons.UNKNOWN_COMBATANT),
    ("narrative", 'who="Wolf 1" target="Ada" technique="Fire Breath"', reasons.UNKNOWN_TECHNIQUE),
    ("outcome", 'who="Ada" target="Thug" with="Nothing Held"', reasons.UNKNOWN_WEAPON),
    ("outcome", 'who="Thug" target="Ada"', reasons.PLAYERS_ROLL),
])
def test_a_kinds_own_refusals_keep_their_reason_and_the_state(kind, written, reason) -> None:
    game, _ = GAMES[kind]
    state = _fighting(kind)
    after, [told] = answer(game, state, f"[attack: {written}]", (1, 0))
    assert (told.ok, told.reason) == (False, reason), told.text
    assert after == state


def test_out_of_a_fight_an_attack_is_refused_whatever_the_kind_reads() -> None:
    for kind, (game, state) in GAMES.items():
        written = " ".join(f'{name}="{FOREIGN[name]}"' for name, _ in _foreign(kind))
        after, [told] = answer(game, state, f'[attack: who="{HERO[kind]}" {written}]')
        assert (told.ok, told.reason) == (False, reasons.NO_ENCOUNTER), (kind, told.text)
        assert after is state


def test_the_reference_shows_each_kinds_attributes_under_its_own_heading() -> None:
    text = tag_reference()
    sections = text.split("#### `[attack:]` under `combat.kind` ")[1:]
    heads = [section.split("\n", 1)[0] for section in sections]
    assert heads == ["formula, symbol-pool or none", "outcome", "narrative"]
    tables = {head: section.split("\n\n### ", 1)[0] for head, section in zip(
        heads, sections, strict=True)}
    assert "`tactics=`" in tables["narrative"] and "`tactics=`" not in tables["outcome"]
    assert "`position=`" in tables["outcome"] and "`with=`" not in tables["narrative"]
    assert "`mode=`" in tables["formula, symbol-pool or none"]


def test_the_request_schema_gives_attack_a_choice_of_each_kinds_request() -> None:
    attack = request_schema()["$defs"]["attack"]
    assert attack["not"] == {"required": ["use"]}
    read = {choice["title"]: set(choice["properties"]) - {"kind"} for choice in attack["anyOf"]}
    assert read == {
        f"[attack:] (combat.kind {names})": ACTIONS[("attack", None)].reads(request)
        for names, request in (("formula, symbol-pool or none", FormulaStrike),
                               ("outcome", OutcomeStrike), ("narrative", NarrativeStrike))}
