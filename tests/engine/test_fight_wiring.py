"""Where the fight's pieces meet (issue 24): a foe's strike is rolled against the hero's
defence with what it wears (CMB-ATK-6, ITM-ARM-3..9), carries a damage type (CMB-TYPE-1) that
meets the hero's typed defences (ITM-DEF-4..8), a hero's strike rolls its weapon's rerolled
low dice (ITM-WPN-15, in test_weapons.py), and ``affectedBy`` lists the conditions' edges and the typed defences
alike (CMB-MOD-2)."""

from __future__ import annotations

import pytest
from helpers import FIXTURES, answer, fixture_json, problems_of, put

import replay
from engine import load_ruleset
from engine.rules.sheet import SheetView, ability_modifier
from replay.files import ruleset_document

SRD5 = replay.load_ruleset(FIXTURES / "rulesets/srd5.json")
PARTY = replay.load_party(SRD5, FIXTURES / "parties/srd5.json")
GOBLINS = '[combat: op="start" foe="Goblin" role="standard" tier="1" count="2"]'


def fight(game=SRD5, state=PARTY, text=GOBLINS):
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), [a.text for a in answers]
    return state


def first_hit(game, state, text: str, turns=range(1, 400)):
    """The record of the first turn at which ``text``'s only tag hits (dice by turn)."""
    for turn in turns:
        after, answers = answer(game, state, text, (turn, 0))
        record = answers[0].record
        assert answers[0].ok, answers[0].text
        if record["result"] != "miss":
            return after, answers[0]
    raise AssertionError("no hit in 400 turns")


@pytest.mark.parametrize(("hero", "defence"), [
    ("Brannoc", 18),  # chain mail 16 + shield 2, heavy armour: no Dex (the figure)
    ("Quill", 14),  # leather 11 + Dex 17 (+3)
])
def test_cmb_atk_6_a_foes_strike_is_rolled_against_the_heros_worn_defence(hero, defence) -> None:
    state = fight()
    _, answers = answer(SRD5, state, f'[attack: who="Goblin 1" target="{hero}"]', (1, 0))
    assert answers[0].record["defence"] == defence
    assert f" vs {defence} " in answers[0].text


def test_cmb_type_1_a_foes_strike_has_its_templates_damage_type() -> None:
    state = fight()
    _, hit = first_hit(SRD5, state, '[attack: who="Goblin 1" target="Quill"]')
    assert hit.record["damageType"] == "slashing"  # srd5's standard template
    assert " = " in hit.text and hit.text.split(" · ")[1].endswith(" slashing")


def test_cmb_type_1_an_unarmed_strike_has_the_systems_default_type() -> None:
    state = fight()
    _, hit = first_hit(SRD5, state, '[attack: who="Brannoc" target="Goblin 1" with="unarmed"]')
    assert hit.record["damageType"] == "bludgeoning"


def test_cmb_type_1_without_a_template_type_the_system_default_counts() -> None:
    document = ruleset_document(FIXTURES / "rulesets/srd5.json")
    del document["combat"]["templates"][0]["combat"]["damageType"]
    game = load_ruleset(document)
    state = fight(game, replay.load_party(game, FIXTURES / "parties/srd5.json"))
    _, hit = first_hit(game, state, '[attack: who="Goblin 1" target="Quill"]')
    assert hit.record["damageType"] == "bludgeoning"


def test_itm_def_4_a_heros_resistance_halves_a_foes_typed_strike() -> None:
    """Petrified (SRD): resistance to all damage; attacks against it have advantage. The
    record lists the edge first, then the resistance (CMB-MOD-2)."""
    state = fight()
    state, answers = answer(SRD5, state, '[combat: op="condition" who="Quill" add="petrified"]')
    assert answers[0].ok, answers[0].text
    before = state.characters[state.character_index("Quill")].pools["hp"]
    _, hit = first_hit(SRD5, state, '[attack: who="Goblin 1" target="Quill"]')
    record = hit.record
    # (1)d6 + 1 at tier 1; a critical's doubled dice are in damageRolls already
    rolled = sum(sum(faces) for faces in record["damageRolls"]) + 1
    assert record["damage"] == rolled // 2
    assert record["hp"] == before - rolled // 2
    assert record["affectedBy"][0].startswith("Petrified")
    assert any("resist" in entry for entry in record["affectedBy"][1:])


@pytest.mark.parametrize(("path", "pointer"), [
    (("combat", "templates", 0, "combat", "damageType"), "/combat/templates/0/combat/damageType"),
    (("combat", "attack", "damageType"), "/combat/attack/damageType"),
])
def test_itm_def_13_an_undeclared_damage_word_is_a_load_error(path, pointer) -> None:
    document = ruleset_document(FIXTURES / "rulesets/srd5.json")
    found = problems_of(document, put(path, "sonic boom"))
    assert any(pointer in p and 'unknown damage type "sonic boom"' in p for p in found), found


def test_cmb_reads_1_to_5_the_damage_reads_the_systems_values_for_the_attacker() -> None:
    """``combat.attack.reads`` gives ``@knack`` = Strength modifier + 2, computed for the
    attacker (CMB-READS-3); the unarmed damage ``@knack`` reads it (CMB-READS-4, 7)."""
    document = fixture_json("rulesets/skirmish.json")
    document["combat"]["attack"]["reads"] = {"knack": "@str.mod + 2"}
    document["combat"]["attack"]["damage"] = "@knack"
    game = load_ruleset(document)
    party = replay.load_party(game, FIXTURES / "parties/skirmish.json")
    state = fight(game, party, '[combat: op="start" foe="Goblin"]')
    for who in ("Brannoc", "Ada"):
        view = SheetView(game, state.characters[state.character_index(who)], state)
        expected = int(ability_modifier(game, view.ability_score("str"))) + 2
        _, hit = first_hit(game, state, f'[attack: who="{who}" target="Goblin" with="unarmed"]')
        assert hit.record["damage"] == max(expected, 0)  # no dice: a critical doubles none


@pytest.mark.parametrize(("written", "tier", "shown"), [
    ("(@tier)d6 + @tier", 1, "1d6 + 1"),
    ("(@tier + 1)d10 + @tier + 3", 2, "3d10 + 2 + 3"),
    ("2 * (1d4 + @tier) - (3 - @tier)", 2, "2 * (1d4 + 2) - 1"),
    ("max(1d6, @tier) + d(@tier + 4)", 2, "max(1d6, 2) + 1d6"),
])
def test_cmb_tpl_8_a_foes_damage_is_kept_as_it_stands_at_its_tier(written, tier, shown) -> None:
    """DESIGN.md "State": a foe's damage formula with its references read when it joins —
    the dice left to roll — and the text rolls exactly what the template's formula rolls."""
    from engine.dice import Stream
    from engine.rules.fight.formula import worked
    from engine.rules.formula import evaluate
    from engine.ruleset import parse_formula
    formula = parse_formula(written)

    def tier_of(reference) -> int:
        return tier if reference.name == "tier" else 0
    assert worked(formula.tree, tier_of, Stream("w", (), "x")) == shown
    again = parse_formula(shown)
    for n in range(50):
        assert evaluate(again, tier_of, Stream("w", (n,), "d")).value == evaluate(
            formula, tier_of, Stream("w", (n,), "d")).value
