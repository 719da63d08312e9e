"""Formula combat, rule by rule where the other fight tests leave a gap (issue 24 "Combat I";
docs/combat-rules.md lists where every rule of the scope is tested): exact distributions of
the attack check, the damage and the initiative tie, the legacy start form, range and reach,
invented weapons, the system's reads, the damage type of a foe, the order of a reply, and
determinism across processes and swipes — on fixtures/rulesets/skirmish.json and srd5.json."""

from __future__ import annotations

import contextlib
import copy
import io
import json
import os
import subprocess
import sys
from collections import Counter
from fractions import Fraction
from itertools import product
from pathlib import Path

import pytest
from helpers import FIXTURES, ROOT, answer, fixture_json
from scipy.stats import chisquare

import replay
from engine import TurnContext, load_ruleset, start_state
from engine.actions.fight.formula import _initiative, roll_attack
from engine.dice import Stream
from engine.rules import reasons
from engine.rules.fight.formula import hit_result, in_order, strike
from engine.rules.formula import sheet_reader
from engine.rules.sheet import SheetView
from engine.rules.state import Combatant, State
from engine.rules.weapons import numbers
from engine.ruleset import combat_kind

DOCUMENT = fixture_json("rulesets/skirmish.json")
PARTY = fixture_json("parties/skirmish.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
BRANNOC, ADA = 0, 1  # Strength 16 (+3), Dexterity 12 (+1); Dexterity 14 (+2)
SRD5 = replay.load_ruleset(FIXTURES / "rulesets/srd5.json")
SRD5_PARTY = replay.load_party(SRD5, FIXTURES / "parties/srd5.json")
P_VALUE = 1e-4  # a true distribution fails this about once in 10,000 runs


def game_with(**combat: object):
    document = copy.deepcopy(DOCUMENT)
    document["combat"].update(combat)
    return load_ruleset(document)


def fighting(text: str, game=GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def close_to(seen: Counter, exact: dict[object, Fraction], draws: int) -> bool:
    """Chi-square of ``seen`` against the exact ``exact`` (kinds of probability 0 must not
    be seen at all)."""
    assert sum(exact.values()) == 1
    assert all(seen[k] == 0 for k, p in exact.items() if p == 0), seen
    assert set(seen) <= set(exact), seen
    kinds = [k for k, p in exact.items() if p]
    return bool(chisquare([seen[k] for k in kinds],
                          [float(exact[k] * draws) for k in kinds]).pvalue > P_VALUE)


# --- exact distributions ------------------------------------------------------------------------

def enumerated_results(modifier: int, defence: int) -> dict[object, Fraction]:
    """CMB-ATK-3, CMB-ATK-A4, OQ-CMB-2/3: the exact result of d20 + ``modifier`` against
    ``defence`` — a natural 20 a critical, a natural 1 a miss, else a hit iff it reaches."""
    exact: Counter = Counter({"critical": Fraction(0), "hit": Fraction(0), "miss": Fraction(0)})
    for natural in range(1, 21):
        total = natural + modifier
        exact[hit_result(total, "success" if natural == 20 else
                         "failure" if natural == 1 else None, defence)] += Fraction(1, 20)
    return dict(exact)


@pytest.mark.parametrize(("modifier", "defence", "exact"), [
    # a natural 20 is a critical hit even against a defence no total reaches
    (0, 25, {"critical": Fraction(1, 20), "hit": Fraction(0), "miss": Fraction(19, 20)}),
    # a natural 1 misses even where its total (9) reaches the defence
    (8, 5, {"critical": Fraction(1, 20), "hit": Fraction(18, 20), "miss": Fraction(1, 20)}),
    # the edge: naturals 11..19 reach 14 exactly or better
    (3, 14, {"critical": Fraction(1, 20), "hit": Fraction(9, 20), "miss": Fraction(10, 20)}),
    # Brannoc's longsword, +5 against 15: naturals 10..19 hit
    (5, 15, {"critical": Fraction(1, 20), "hit": Fraction(10, 20), "miss": Fraction(9, 20)}),
])
def test_cmb_atk_3_a3_a4_exact_hit_and_critical_rates(modifier, defence, exact) -> None:
    """CMB-ATK-3, CMB-ATK-A3/A4: 20,000 attack checks through ``roll_attack`` (the skill's
    dice and naturals, the modifier added) against the exact enumeration. (A foe's +3 vs 11
    is in test_fight_round.py, advantage in test_fight_conditions.py.)"""
    assert enumerated_results(modifier, defence) == exact
    view = SheetView(GAME, None, START)
    ctx = TurnContext("distributions", (3, 0))
    draws = 20_000
    seen = Counter(roll_attack(GAME, view, "Dummy", modifier, defence, n, ctx)[1]
                   for n in range(draws))
    assert close_to(seen, exact, draws), seen


def damage_distribution(dice: int, sides: int, flat: int) -> dict[object, Fraction]:
    exact: Counter = Counter()
    for faces in product(range(1, sides + 1), repeat=dice):
        exact[sum(faces) + flat] += Fraction(1, sides ** dice)
    return dict(exact)


@pytest.mark.parametrize(("critical", "dice"), [(False, 1), (True, 2)])
def test_cmb_atk_4_5_a5_longsword_damage_1d8_plus_3_and_2d8_plus_3_on_a_critical(
        critical, dice) -> None:
    """CMB-ATK-4/5, CMB-ATK-A5, OQ-CMB-3, ITM-WPN-12: Brannoc's longsword deals 1d8 + 3 (its
    dice plus his Strength modifier) — on a critical the dice are doubled, the + 3 is not:
    2d8 + 3 — each against its exact enumeration over 20,000 strikes."""
    hero = START.characters[BRANNOC]
    view = SheetView(GAME, hero, START)
    stack = next(s for s in hero.bag if s.name == "Longsword")
    item = GAME.items[stack.item].item
    assert item.attack is not None
    weapon = numbers(GAME, view, item, item.attack)
    assert weapon.damage is not None and (weapon.damage.text, weapon.flat) == ("1d8", 3)
    reader = sheet_reader(view)
    draws = 20_000
    seen = Counter(strike(weapon.damage, reader, critical, 1000,
                          Stream("damage", (n,), "attack/damage"), weapon.flat).damage
                   for n in range(draws))
    assert close_to(seen, damage_distribution(dice, 8, 3), draws), seen


def test_cmb_turn_2_4_a1_equal_modifiers_the_hero_wins_the_tie_exactly_21_in_40() -> None:
    """CMB-TURN-2/4, CMB-TURN-A1: a hero (Ada, Dexterity 14: +2) and a foe whose template
    gives +2 each roll d20 + 2 once; the hero goes first when its roll is higher or equal:
    P = (1 + 2 + … + 20) / 400 = 210/400 = 21/40, over 10,000 pairs (20,000 engine rolls:
    the hero's through the check pipeline, as a fight rolls it)."""
    template = {"role": "rival", "defaults": {"attribute": "2"}, "tracks": {"hp": "10"},
                "combat": {"defence": "10", "attack": "0", "damage": "1"}}
    game = game_with(templates=[template])
    state = start_state(game, PARTY)
    exact = {"hero": Fraction(sum(range(1, 21)), 400), "foe": Fraction(190, 400)}
    assert exact["hero"] == Fraction(21, 40)
    draws = 10_000
    seen: Counter = Counter()
    for n in range(draws):
        ctx = TurnContext("initiative", (n, 0))
        hero, _ = _initiative(game, state, ctx, "Ada", ADA, 0)
        foe, _ = _initiative(game, state, ctx, "Rival", None, 2)
        order = in_order([Combatant(name="Rival", side="foes", initiative=foe, joined=0),
                          Combatant(name="Ada", side="party", initiative=hero, joined=1)])
        seen["hero" if order[0].name == "Ada" else "foe"] += 1
    assert close_to(seen, exact, draws), seen


# --- the legacy start form (issue 24) ----------------------------------------------------------

def test_legacy_enemies_starts_a_fight_with_one_foe_of_each_name_and_a_note() -> None:
    """``[combat: enemies="Goblin, Skeleton"]``, no op=: one foe of each name, of the first
    template's role at tier 1 (CMB-TPL-1..5), the heroes rolling initiative too (CMB-TURN-2);
    the answer says op="start" foe= is the form to write."""
    state, answers = answer(GAME, START, '[combat: enemies="Goblin, Skeleton"]')
    assert answers[0].ok and answers[0].record["round"] == 0
    assert any('write [combat: op="start" foe="<name>"' in n for n in answers[0].notes)
    assert state.encounter is not None
    foes = [c for c in state.encounter.combatants if c.side == "foes"]
    assert sorted(c.name for c in foes) == ["Goblin", "Skeleton"]
    assert {(c.role, c.tier, c.hp, c.defence) for c in foes} == {("standard", 1, 14, 13)}
    assert {c.name for c in state.encounter.combatants if c.side == "party"} == {"Ada",
                                                                                  "Brannoc"}


@pytest.mark.parametrize("attribute", ["foes", "enemy"])
def test_legacy_foes_and_enemy_read_alike(attribute) -> None:
    state, answers = answer(GAME, START, f'[combat: {attribute}="Goblin, Skeleton"]')
    reference, _ = answer(GAME, START, '[combat: enemies="Goblin, Skeleton"]')
    assert answers[0].ok and state == reference


def test_the_legacy_form_is_the_start_op_with_its_dice() -> None:
    """One name in the legacy form is exactly ``op="start" foe=`` (same dice, same foe); the
    same names written twice are numbered (DESIGN.md "Tags")."""
    legacy, answers = answer(GAME, START, '[combat: enemies="Goblin" tier="2"]')
    written, _ = answer(GAME, START, '[combat: op="start" foe="Goblin" tier="2"]')
    assert legacy == written and answers[0].ok
    twice, answers = answer(GAME, START, '[combat: enemies="Rat, Rat" count="3"]')
    assert sorted(c.name for c in twice.encounter.combatants if c.side == "foes") == [
        "Rat", "Rat 2"]
    assert "ignored count=: enemies= brings one foe of each name" in answers[0].notes


def test_legacy_names_are_held_to_twelve_and_foe_wins_over_enemies() -> None:
    many = ", ".join(f"Imp{n}" for n in range(15))
    state, answers = answer(GAME, START, f'[combat: enemies="{many}"]')
    assert answers[0].ok and "enemies= names 15 foes: the first 12 joined" in answers[0].notes
    assert len([c for c in state.encounter.combatants if c.side == "foes"]) == 12
    state, answers = answer(GAME, START, '[combat: op="start" foe="Orc" enemies="Imp"]')
    assert [c.name for c in state.encounter.combatants if c.side == "foes"] == ["Orc"]
    assert "ignored enemies=: foe= names the foes" in answers[0].notes


def test_legacy_start_comes_before_the_replys_attacks() -> None:
    """DESIGN.md "Rounds and order": the legacy start is a start, applied before the attacks
    of its reply, wherever it is written."""
    _, answers = answer(GAME, START, '[attack: target="Goblin"] [combat: enemies="Goblin"]')
    assert answers[1].ok and answers[0].ok and answers[0].record["round"] == 1


@pytest.mark.parametrize(("text", "reason"), [
    ("[combat:]", reasons.UNKNOWN_ACTION),  # neither op= nor enemies=: refused as before
    ('[combat: enemies=""]', reasons.UNKNOWN_ACTION),
    ('[combat: enemies=" , "]', reasons.MISSING_ATTRIBUTE),
    ('[combat: op="start"]', reasons.MISSING_ATTRIBUTE),
])
def test_a_combat_tag_naming_no_foe_is_refused_and_changes_nothing(text, reason) -> None:
    after, answers = answer(GAME, START, text)
    assert (answers[0].ok, answers[0].reason) == (False, reason)
    assert after is START


def test_the_legacy_form_is_refused_where_fights_are_off() -> None:
    after, answers = answer(game_with(kind="none"), START, '[combat: enemies="Goblin"]')
    assert answers[0].reason == reasons.NO_COMBAT and after is START


# --- range and reach ----------------------------------------------------------------------------

GOBLIN = fighting('[combat: op="start" foe="Goblin"]')


@pytest.mark.parametrize("text", [
    '[attack: with="Longsword" range="far"]',  # neither reach nor range: one cell
    '[attack: with="unarmed" range="FAR"]',
])
def test_itm_wpn_18_cmb_grid_3_a_weapon_without_range_cannot_strike_far(text) -> None:
    """CMB-GRID-1/3/4: no grid — the GM's near or far is the distance, nothing is read from a
    map; a weapon with neither reach nor range reaches one cell, so near only (ITM-WPN-18)."""
    after, answers = answer(GAME, GOBLIN, text, (1, 0))
    assert (answers[0].ok, answers[0].reason) == (False, reasons.OUT_OF_REACH)
    assert "has no range" in answers[0].text and after is GOBLIN
    _, answers = answer(GAME, GOBLIN, text.replace("far", "near").replace("FAR", "near"), (1, 0))
    assert answers[0].ok and answers[0].record["range"] == "near"


def test_cmb_grid_3_a_word_that_is_not_near_or_far_falls_back_with_a_note() -> None:
    _, answers = answer(GAME, GOBLIN, '[attack: range="melee"]', (1, 0))
    assert answers[0].ok and answers[0].record["range"] == "near"
    assert 'range="melee" is not near or far: the default was used' in answers[0].notes


def srd5_fight(bag: list[dict]) -> State:
    state = replay.load_party(SRD5, {"seed": "range", "characters": [
        {"name": "Hero", "abilities": {"str": 14, "dex": 16},
         "fields": {"level": 1, "level_fighter": 1},
         "bag": [{"count": 1, "equipped": True, **s} for s in bag]}]})
    return fighting('[combat: op="start" foe="Dummy" role="boss" tier="6"]', SRD5, state)


@pytest.mark.parametrize(("item", "near", "far"), [
    ("equipment/longbow", True, True),  # a range only: near too, no penalty (ITM-WPN-16)
    ("equipment/handaxe", True, True),  # reach and range: thrown beyond (ITM-WPN-17)
    ("equipment/pike", True, False),  # a reach only (10 feet): near
    ("equipment/longsword", True, False),
])
def test_itm_wpn_16_17_what_reaches_near_and_far(item, near, far) -> None:
    """items.md §9 names no penalty for a ranged weapon up close (5e's disadvantage within 5
    feet is not in the spec): it shoots at near as at far, with the same numbers."""
    state = srd5_fight([{"item": item}])
    records = {}
    for distance, allowed in (("near", near), ("far", far)):
        after, answers = answer(SRD5, state, f'[attack: range="{distance}"]', (1, 0))
        assert answers[0].ok is allowed, answers[0].text
        if allowed:
            records[distance] = answers[0].record
            assert "affectedBy" not in answers[0].record
        else:
            assert answers[0].reason == reasons.OUT_OF_REACH and after is state
    if near and far:
        same = ("rolls", "modifier", "total", "result", "damage")
        assert {k: records["near"][k] for k in same} == {k: records["far"][k] for k in same}


# --- invented weapons (items.md §5.10) ---------------------------------------------------------

def test_itm_wpn_25_an_invented_weapon_fights_as_its_most_similar_catalog_weapon() -> None:
    """A "Bone longsword" invented in the weapon category without like= fights as the
    Longsword (a shared word, OQ-27): wielded the same way, its strike rolls and deals what
    the Longsword's would — the same dice (keyed by the attacker), modifier, damage, type."""
    state, answers = answer(SRD5, SRD5_PARTY, '[inventory: action="add" item="Bone longsword" '
                            'category="weapon" slots="hands=1" who="Brannoc"]')
    assert answers[0].ok and "It fights as Longsword does." in answers[0].text
    state, answers = answer(SRD5, state, '[inventory: action="unequip" item="Longsword" '
                            'who="Brannoc"] [inventory: action="equip" item="Bone longsword" '
                            'who="Brannoc"]', (0, 1))
    assert all(a.ok for a in answers), answers
    start = '[combat: op="start" foe="Dummy" role="boss" tier="6"]'
    bone = fighting(start, SRD5, state)
    steel = fighting(start, SRD5, SRD5_PARTY)
    fields = ("rolls", "modifier", "total", "result", "damage", "damageRolls", "damageType")
    for turn in range(40):
        _, invented = answer(SRD5, bone, '[attack: who="Brannoc" with="Bone longsword"]',
                             (1, turn))
        _, catalog = answer(SRD5, steel, '[attack: who="Brannoc" with="Longsword"]', (1, turn))
        assert invented[0].ok and invented[0].record["weapon"] == "Bone longsword"
        assert {k: invented[0].record.get(k) for k in fields} == {
            k: catalog[0].record.get(k) for k in fields}


# --- the system's reads -------------------------------------------------------------------------

def test_cmb_reads_3_4_5_the_damage_reads_a_value_computed_for_the_attacker() -> None:
    """CMB-READS-1/2, CMB-ATK-A2: ``reads: {"might": "@str"}`` and the system damage
    ``@might - 10 + @roll.high``: an unarmed strike (the system's values, CMB-READS-7) deals
    Brannoc's Strength 16 - 10 plus the attack's higher die (CMB-READS-9, OQ-CMB-5 b)."""
    game = game_with(attack={"check": "attack", "defence": "10 + @dex.mod",
                             "damage": "@might - 10 + @roll.high",
                             "reads": {"might": "@str"}})
    state = fighting('[combat: op="start" foe="Goblin" tier="6"]', game)
    seen = 0
    for turn in range(30):
        _, answers = answer(game, state, '[attack: with="unarmed"]', (1, turn))
        record = answers[0].record
        if record["result"] != "miss":
            assert record["damage"] == 6 + max(record["rolls"])
            seen += 1
    assert seen


# --- which combat, formulas, templates, damage types ---------------------------------------------

@pytest.mark.parametrize(("change", "kind"), [
    ({}, "formula"),  # skirmish says "kind": "formula"
    ({"kind": None}, "formula"),  # left out: combat.attack means formula combat (CMB-GEN-2)
    ({"kind": None, "attack": None}, "narrative"),
    ({"kind": "none"}, "none"),
])
def test_cmb_gen_1_2_atk_1_a_system_with_the_three_formulas_fights_by_formula(change,
                                                                              kind) -> None:
    document = copy.deepcopy(DOCUMENT)
    for key, value in change.items():
        if value is None:
            document["combat"].pop(key)
        else:
            document["combat"][key] = value
    game = load_ruleset(document)
    assert combat_kind(game.ruleset) == kind
    if kind == "formula":  # CMB-ATK-1: the attack check, damage and defence, all formulas
        rule = game.ruleset.combat.attack
        assert (rule.check, rule.damage.text, rule.defence.text) == (
            "attack", "1 + @str.mod", "10 + @dex.mod")


def test_cmb_tpl_3_a_tier_outside_1_to_6_is_held_with_a_note() -> None:
    """CMB-TPL-3: tier 1 to 6 (test_fight.py pins the notes; here the numbers at the ends)."""
    _, answers = answer(GAME, START, '[combat: op="start" foe="Orc" tier="60"]')
    held = answers[0].record["foes"][0]
    assert (held["tier"], held["hp"], held["defence"]) == (6, 44, 18)


def test_cmb_type_1_a_foes_strike_has_its_templates_type_else_the_systems_default() -> None:
    """CMB-TYPE-1, OQ-CMB-9: a template's ``damageType``; else the system default
    ``combat.attack.damageType``; a foe's strike record carries it."""
    typed = {"role": "wolf", "tracks": {"hp": "10"},
             "combat": {"defence": "10", "attack": "20", "damage": "2",
                        "damageType": "piercing"}}
    plain = {"role": "blob", "tracks": {"hp": "10"},
             "combat": {"defence": "10", "attack": "20", "damage": "2"}}
    game = game_with(templates=[typed, plain],
                     attack={**DOCUMENT["combat"]["attack"], "damageType": "bludgeoning"},
                     damageTypes=["slashing", "piercing", "bludgeoning"])
    state = fighting('[combat: op="start" foe="Wolf" role="wolf"] '
                     '[combat: op="start" foe="Blob" role="blob"]', game)
    _, answers = answer(game, state, '[attack: who="Wolf" target="Ada"] '
                        '[attack: who="Blob" target="Brannoc"]', (1, 0))
    kinds = {a.record["attacker"]: a.record.get("damageType") for a in answers
             if a.record["result"] != "miss"}
    assert kinds and set(kinds.items()) <= {("Wolf", "piercing"), ("Blob", "bludgeoning")}


# --- a round and its record ------------------------------------------------------------------

def test_cmb_turn_a2_a7_foes_ahead_strike_first_and_foes_after_strike_after() -> None:
    """CMB-TURN-A2/A7, OQ-CMB-7 b: in one reply a foe ahead of the hero lands before the
    hero's attack, a foe behind after it, whatever the text order."""
    state = fighting('[combat: op="start" foe="Goblin" count="2"]')
    encounter = state.encounter
    initiative = {"Goblin 1": 30, "Brannoc": 20, "Goblin 2": 10, "Ada": 0}
    combatants = in_order(c.model_copy(update={"initiative": initiative[c.name]})
                          for c in encounter.combatants)
    state = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": combatants})})
    _, answers = answer(GAME, state, '[attack: who="Goblin 2" target="Brannoc"] '
                        '[attack: target="Goblin 1"] [attack: who="Goblin 1" target="Brannoc"]',
                        (1, 0))
    slots = {a.record["attacker"]: a.record["slot"] for a in answers if a.ok}
    assert slots == {"Goblin 1": 1, "Brannoc": 2, "Goblin 2": 3}


def test_cmb_atk_a7_cmb_atk_8_the_record_is_the_chip() -> None:
    """CMB-ATK-8, OQ-CMB-4, CMB-ATK-A7: the record holds the die faces, the modifier, the
    total, the defence and the result, and the text shows the chip, as the source's
    ``d20 (14) + 3 힘 + 2 = 19 vs 13 · 적중`` in the check's own words (``1d20+5 → 14+5 = 19 vs
    13 · hit``)."""
    _, answers = answer(GAME, GOBLIN, '[attack: with="Longsword"]', (1, 0))
    record = answers[0].record
    assert record["total"] == sum(record["rolls"]) + record["modifier"] and record["defence"] == 13
    chip = f"1d20+5 → {record['rolls'][0]}+5 = {record['total']} vs 13 · {record['result']}"
    assert chip in answers[0].text


def test_cmb_card_1_combat_fires_its_events_start_damage_felled_and_end() -> None:
    """CMB-CARD-1: combat start (the first engagement's record: ``start``), each strike's
    damage dealt and taken (``damage:<target>:<points>``), each foe felled
    (``felled:<foe>``) and combat end (``end:victory`` on the felling strike, ``end:<outcome>``
    on an ``op="end"``)."""
    state, answers = answer(GAME, START, '[combat: op="start" foe="Rat" role="minion" count="2"]')
    assert answers[0].record["events"] == ["start"]
    _, more = answer(GAME, state, '[combat: op="start" foe="Goblin"]')
    assert "events" not in more[0].record  # more foes join: no second start
    events = []
    for turn in range(40):
        encounter = state.encounter
        assert encounter is not None
        first = encounter.combatants[encounter.find("Rat 1")]
        target = "Rat 1" if first.hp else "Rat 2"
        state, answers = answer(GAME, state, f'[attack: target="{target}"]', (1, turn))
        record = answers[0].record
        events += record.get("events", [])
        if record["damage"]:
            assert record["events"][0] == f"damage:{target}:{record['damage']}"
        else:
            assert not any(e.startswith("damage:") for e in record.get("events", []))
        if state.encounter is None:
            break
    assert [e for e in events if not e.startswith("damage:")] == [
        "felled:Rat 1", "felled:Rat 2", "end:victory"]
    fighting_on = fighting('[combat: op="start" foe="Rat" role="minion"]')
    _, ended = answer(GAME, fighting_on, '[combat: op="end" outcome="fled"]')
    assert ended[0].record["events"] == ["end:fled"]


# --- determinism (DESIGN.md "Dice", "Determinism") -----------------------------------------------

FIGHT = FIXTURES / "chats/skirmish-fight.jsonl"
REPLAY = """
import json, replay
from pathlib import Path
fixtures = Path("fixtures")
game = replay.load_ruleset(fixtures / "rulesets/skirmish.json")
transcript = replay.read_transcript(fixtures / "chats/skirmish-fight.jsonl")
party = replay.load_party(game, fixtures / "parties/skirmish.json", transcript.player_name)
result = replay.replay(game, transcript, party)
print(result.state.canonical())
print(json.dumps([a.answer.record for a in result.answers], sort_keys=True))
"""


def test_a_recorded_fight_replays_byte_identical_in_two_processes() -> None:
    """A fresh interpreter (its own hash seed, so no set or dict order can leak into the dice)
    replays the recorded fight to the very bytes this process does."""
    child = subprocess.run([sys.executable, "-c", REPLAY], cwd=ROOT, capture_output=True,
                           env={**os.environ, "PYTHONHASHSEED": "1"}, timeout=60)
    assert child.returncode == 0, child.stderr.decode()
    here = io.StringIO()
    cwd = os.getcwd()
    try:
        os.chdir(ROOT)
        with contextlib.redirect_stdout(here):
            exec(REPLAY, {})  # the same program, in this process
    finally:
        os.chdir(cwd)
    assert child.stdout == here.getvalue().encode()
    state = json.loads(child.stdout.splitlines()[0])
    assert state["encounter"]["round"] == 4  # the fight as tests/replay pins it


def test_a_swipe_of_an_attack_reply_never_rerolls(tmp_path: Path) -> None:
    """DESIGN.md "Dice", default dice: regenerating the attack reply — reworded, reordered —
    rolls the same attack and damage dice, so a swipe cannot fish for a hit."""
    lines = [json.loads(line) for line in FIGHT.read_text(encoding="utf-8").splitlines()]
    original = lines[4]["text"]
    reworded = ("Ada is first. [attack: who=\"Ada\" target=\"Rat 1\"] And then the steel. "
                "[attack: target=\"Goblin\" with=\"Longsword\"]")
    records = []
    for swipe in (0, 1):
        chat = [*lines[:4], {"role": "gm", "swipes": [original, reworded], "swipe": swipe}]
        path = tmp_path / f"swipe{swipe}.jsonl"
        path.write_text("\n".join(json.dumps(m) for m in chat) + "\n", encoding="utf-8")
        transcript = replay.read_transcript(path)
        party = replay.load_party(GAME, FIXTURES / "parties/skirmish.json",
                                  transcript.player_name)
        result = replay.replay(GAME, transcript, party)
        attacks = {a.answer.record["attacker"]: a.answer.record for a in result.answers
                   if a.answer.ok and "attacker" in a.answer.record}
        records.append((attacks, result.state.canonical()))
    assert records[0][0] and records[0] == records[1]


# --- rules no other test named ------------------------------------------------------------------

def test_cmb_turn_1_a_ruleset_without_turn_rules_still_fights() -> None:
    """CMB-TURN-1: who acts when is the ruleset's to add. Without ``turn`` everyone has
    initiative 0 (heroes first, then the order they joined, OQ-CMB-7 a) and each budget is an
    action of one attack (DESIGN.md "Formula combat")."""
    document = copy.deepcopy(DOCUMENT)
    document["combat"].pop("turn")
    game = load_ruleset(document)
    state = fighting('[combat: op="start" foe="Goblin" count="2"]', game, start_state(game, PARTY))
    assert [(c.name, c.initiative) for c in state.encounter.combatants] == [
        ("Brannoc", 0), ("Ada", 0), ("Goblin 1", 0), ("Goblin 2", 0)]
    once, answers = answer(game, state, '[attack: target="Goblin 1"]', (1, 0))
    assert answers[0].ok and answers[0].record["budget"] == "action"
    _, again = answer(game, once, '[attack: target="Goblin 2"]', (1, 0))
    assert again[0].reason == reasons.NO_TIME


def test_cmb_tpl_7_a_changed_template_is_ruleset_data_new_foes_get() -> None:
    """CMB-TPL-7: a template is ruleset data — change the document and the next foe has the
    new numbers (and one already in the fight keeps its own, CMB-TPL-8)."""
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["templates"][0]["tracks"]["hp"] = "20 + 10 * @tier"
    stronger = load_ruleset(document)
    _, answers = answer(stronger, START, '[combat: op="start" foe="Orc" tier="3"]')
    assert answers[0].record["foes"][0]["hp"] == 50


def test_cmb_atk_a1_what_affects_an_attack_is_read_before_its_dice() -> None:
    """CMB-ATK-A1, CMB-MOD-1/2: a prone target (near) gives advantage: two dice are rolled
    and the better kept — read before rolling, not added after — and the record lists it."""
    prone = fighting('[combat: op="condition" who="Goblin" add="prone"]', state=GOBLIN)
    for turn in range(20):
        _, answers = answer(GAME, prone, '[attack: target="Goblin"]', (1, turn))
        record = answers[0].record
        assert record["affectedBy"] == ["Prone (near): advantage"]
        assert len(record["rolls"]) == 2
        assert record["total"] == max(record["rolls"]) + record["modifier"]


def test_itm_wpn_1_2_3_a_weapon_is_an_item_with_an_attack_offered_while_worn() -> None:
    """ITM-WPN-1: the Longsword has an ``attack``; ITM-WPN-2: worn, it is the attack offered
    (the default with=); ITM-WPN-3: the Dagger, carried, offers nothing (not-worn), and the
    Torch, with no attack, is no weapon at all (unknown-weapon)."""
    _, answers = answer(GAME, GOBLIN, "[attack:]", (1, 0))
    assert answers[0].record["weapon"] == "Longsword"
    for weapon, reason in (("Dagger", reasons.NOT_WORN), ("Torch", reasons.UNKNOWN_WEAPON)):
        after, answers = answer(GAME, GOBLIN, f'[attack: with="{weapon}"]', (1, 0))
        assert answers[0].reason == reason and after is GOBLIN


def test_itm_wpn_10_to_hit_sheet_bonus_is_what_the_wearer_brings() -> None:
    """ITM-WPN-10: ``toHit.sheetBonus`` reads the wearer's sheet and adds it as it is: an
    archer's Archery 2 on the bow; without the style 0."""
    document = copy.deepcopy(DOCUMENT)
    document["sheet"]["fields"] = [{"id": "archery", "label": "Archery", "type": "number",
                                    "default": 0}]
    document["combat"]["distance"] = {"unit": "paces"}
    document["catalogs"][0]["entries"].append(
        {"id": "bow", "label": "Bow", "item": {"category": "weapon", "attack": {
            "budget": "action", "range": {"normal": 30},
            "toHit": {"abilities": "dex", "sheetBonus": {"field": "archery"}},
            "damage": {"dice": "1d6", "abilities": "dex", "type": "piercing"}}}})
    game = load_ruleset(document)
    for archery, modifier in ((2, 1 + 2), (0, 1)):  # Brannoc's Dexterity 12: +1
        party = copy.deepcopy(PARTY)
        party["characters"][0]["fields"] = {"archery": archery}
        party["characters"][0]["bag"] = [{"item": "arms/bow", "count": 1, "equipped": True}]
        state = fighting('[combat: op="start" foe="Goblin"]', game, start_state(game, party))
        _, answers = answer(game, state, "[attack:]", (1, 0))
        assert (answers[0].record["weapon"], answers[0].record["modifier"]) == ("Bow", modifier)
        assert answers[0].record["range"] == "far"
