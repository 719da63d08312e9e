"""A hero's defence and typed defences (engine/rules/armour.py; spec/items.md §8, §12.1–12.2):
5e's AC from what is worn, worn modifiers to defence, resist/immune/vulnerable with the except
form from conditions, levels, items and sheet rows, and what they do to a strike's damage."""

from __future__ import annotations

import copy

import pytest
from helpers import FIXTURES, answer, fixture_json

import replay
from engine import load_ruleset, start_state
from engine.actions.describe import effect_text
from engine.rules.armour import (
    Guard,
    Typed,
    defence_of,
    defence_parts,
    defences_of,
    foe_defences,
    typed_damage,
)
from engine.rules.items import effect_part
from engine.rules.state import State
from engine.text.host import describe_bag

SRD5 = replay.load_ruleset(FIXTURES / "rulesets/srd5.json")


def srd5_hero(dex: int, bag: list[str], carried: tuple[str, ...] = ()) -> State:
    stacks = [{"item": ref, "count": 1, "equipped": True} for ref in bag]
    stacks += [{"item": ref, "count": 1} for ref in carried]
    return replay.load_party(SRD5, {"seed": "ac", "characters": [
        {"name": "Hero", "abilities": {"dex": dex, "str": 15}, "bag": stacks}]})


@pytest.mark.parametrize(("dex", "bag", "carried", "ac"), [
    (10, ["equipment/chain-mail", "equipment/shield"], (), 18),  # 16 + shield 2
    (16, ["equipment/leather-armor"], (), 14),  # 11 + Dex 3
    (14, [], (), 12),  # unarmoured: 10 + Dex
    (8, [], (), 9),
    (18, ["equipment/breastplate"], (), 16),  # medium: Dex up to +2
    (8, ["equipment/plate-armor"], (), 18),  # heavy: no Dexterity, not even a penalty
    (16, ["equipment/leather-armor"], ("equipment/shield",), 14),  # a carried shield: nothing
])
def test_cmb_atk_6_itm_arm_9_5e_armour_class_from_what_is_worn(dex, bag, carried, ac) -> None:
    assert defence_of(SRD5, srd5_hero(dex, bag, carried), 0) == ac


# --- a ruleset of its own: worn modifiers and typed defences ------------------------------

GUARD = fixture_json("rulesets/skirmish.json")
GUARD["conditions"] += [{"id": "stoneskin", "label": "Stoneskin"},
                        {"id": "rattled", "label": "Rattled"}]
GUARD["sheet"]["fields"] = [{"id": "level", "label": "Level", "type": "number", "default": 1}]
GUARD["items"]["slots"] = [{"id": "hands", "label": "Hands", "count": 2},
                           {"id": "finger", "label": "Finger", "count": 2}]
GUARD["items"]["tags"] = [{"id": "magical", "label": "Magical"},
                          {"id": "silver", "label": "Silver"}]
GUARD["catalogs"][0]["entries"] += [
    {"id": "ward-ring", "label": "Ward ring", "item": {
        "category": "gear", "slots": {"finger": 1},
        "worn": {"modifiers": [{"to": "defence", "flat": 1}], "resist": ["fire"],
                 "conditionImmunities": ["rattled"]},
        "carried": {"resist": [{"type": "cold", "except": ["silver"]}]}}},
    {"id": "heavy-ring", "label": "Heavy ring", "item": {
        "category": "gear", "slots": {"finger": 1},
        "requires": [{"value": {"abilityScore": "str"}, "atLeast": 18,
                      "otherwise": {"modifiers": [{"to": "defence", "flat": -2}],
                                    "vulnerable": ["fire"]}}]}},
    {"id": "silver-blade", "label": "Silver blade", "item": {
        "category": "weapon", "slots": {"hands": 1}, "tags": ["silver", "magical"],
        "attack": {"budget": "action", "toHit": {"abilities": "str", "bonus": 30},
                   "damage": {"dice": "1d4", "abilities": "str", "bonus": 20,
                              "type": "slashing"}}}},
]
GUARD["catalogs"].append({"id": "ancestry", "label": "Ancestry", "holds": "traits", "entries": [
    {"id": "dwarf", "label": "Dwarf", "filters": {
        "resistance": "poison, bludgeoning except magical silvered, frost", "calm": "Rattled"}},
    {"id": "elf", "label": "Elf", "filters": {"resistance": "charm"}}]})
GUARD["combat"].update({
    "damageTypes": ["slashing", "piercing", "bludgeoning", "fire", "cold", "poison"],
    "conditions": [{"condition": "paralyzed", "noActions": True},
                   {"condition": "stoneskin", "resist": [
                       {"type": "slashing", "except": ["magical"]}, "piercing"]}],
    "levels": [{"id": "hardened", "label": "Hardened", "value": {"field": "level"},
                "atLeast": 3, "immune": ["poison"]}],
    "sheetHides": [{"list": "ancestry", "column": "resistance", "kind": "resist"},
                   {"list": "ancestry", "column": "calm", "kind": "conditionImmunities"}]})
GAME = load_ruleset(GUARD)


def guarded(bag: list[dict], **character) -> State:
    stacks = [{"count": 1, "equipped": True, **s} for s in bag]
    return start_state(GAME, {"seed": "guard", "characters": [
        {"name": "Hero", "abilities": {"str": 16, "dex": 14}, "bag": stacks, **character}]})


def test_itm_arm_3_6_7_worn_modifiers_change_the_defence_named_after_the_item() -> None:
    """10 + Dex 2 from the formula; the worn ring +1 (named after its stack, ITM-ARM-6); the
    heavy ring's unmet Strength 18 costs 2 (ITM-ARM-7, the fight half of ITM-REQ-6); carried,
    neither counts."""
    assert defence_parts(GAME, guarded([]), 0) == (12, ())
    assert defence_parts(GAME, guarded([{"item": "arms/ward-ring"}]), 0) == (
        13, (("Ward ring", 1),))
    both = guarded([{"item": "arms/ward-ring"}, {"item": "arms/heavy-ring"}])
    assert defence_parts(GAME, both, 0) == (11, (("Ward ring", 1), ("Heavy ring", -2)))
    carried = guarded([{"item": "arms/ward-ring", "equipped": False},
                       {"item": "arms/heavy-ring", "equipped": False}])
    assert defence_of(GAME, carried, 0) == 12
    strong = guarded([{"item": "arms/heavy-ring"}], abilities={"str": 18, "dex": 14})
    assert defence_of(GAME, strong, 0) == 12


def g(kind, word, *tags, source="x") -> Guard:
    return Guard(kind, word, frozenset(tags), source)


@pytest.mark.parametrize(("damage", "kind", "tags", "guards", "dealt"), [
    (9, "fire", (), [], 9),
    (9, "fire", (), [g("resist", "fire")], 4),  # halved, rounded down
    (9, "Fire", (), [g("resist", "fire")], 4),  # damage words match ignoring case
    (9, "fire", (), [g("resist", "fire"), g("resist", "fire", source="y")], 4),  # ITM-DEF-6
    (9, "fire", (), [g("resist", "fire"), g("immune", "fire")], 0),  # ITM-DEF-4
    (9, "fire", (), [g("resist", "fire"), g("vulnerable", "fire")], 9),  # ITM-DEF-5
    (9, "fire", (), [g("vulnerable", "fire")], 18),
    (9, "cold", (), [g("resist", "fire"), g("immune", "poison")], 9),
    (9, "slashing", ("magical",), [g("resist", "slashing", "magical")], 9),  # ITM-DEF-8
    (9, "slashing", ("silver",), [g("resist", "slashing", "magical")], 4),
    (9, "slashing", ("silver",), [g("immune", "slashing", "magical", "silver")], 9),
    (9, None, (), [g("resist", "fire")], 9),  # untyped damage: no typed defence
    (9, None, (), [g("resist", "*")], 4),  # resist-all (ITM-ARM-2)
])
def test_itm_def_4_8_typed_damage(damage, kind, tags, guards, dealt) -> None:
    """ITM-DEF-4..8: the creature form of an entry, a word or a type with ``except`` tags
    (ITM-DEF-7), which any named tag on the strike gets through (ITM-DEF-8)."""
    found, applied = typed_damage(damage, kind, Typed(tuple(guards)), frozenset(tags))
    assert found == dealt
    assert set(applied) <= set(guards)
    assert bool(applied) == any(x.meets(kind, frozenset(tags)) for x in guards)


def test_itm_def_1_2_10_hides_defences_from_conditions_levels_items_and_sheet_rows() -> None:
    """ITM-ARM-1, ITM-DEF-12: what an item does worn or carried counts beside its owner's
    conditions and levels — the source's examples: a worn ``resist: ["fire"]``, a level
    granting poison at its threshold, a trait's condition immunity; ITM-HIDES-6: the
    condition-immunity column is read as plain words."""
    state = guarded([{"item": "arms/ward-ring"}, {"item": "arms/heavy-ring"}],
                    conditions=["stoneskin"], fields={"level": 3},
                    entries=["ancestry/dwarf"])
    typed = defences_of(GAME, state, 0)
    assert set(typed.guards) == {
        g("resist", "slashing", "magical", source="Stoneskin"),
        g("resist", "piercing", source="Stoneskin"),
        g("immune", "poison", source="Hardened"),  # ITM-DEF-2: level 3 reached
        g("resist", "fire", source="Ward ring"),  # worn, not its carried cold
        g("vulnerable", "fire", source="Heavy ring"),  # the unmet requirement's otherwise
        g("resist", "poison", source="Dwarf"),  # ITM-HIDES-3..5
        g("resist", "bludgeoning", "magical", "silvered", source="Dwarf"),
    }  # "frost" is no declared damage word: ignored (ITM-HIDES-7)
    assert typed.condition_immunities == (("rattled", "Ward ring"), ("rattled", "Dwarf"))
    assert typed.immune_to("Rattled") and not typed.immune_to("paralyzed")  # ITM-DEF-3
    assert typed_damage(10, "fire", typed) == (10, tuple(
        x for x in typed.guards if x.type == "fire"))  # ITM-DEF-5: they cancel
    low = guarded([{"item": "arms/ward-ring", "equipped": False}], fields={"level": 2})
    assert defences_of(GAME, low, 0).guards == (
        g("resist", "cold", "silver", source="Ward ring"),)  # carried part; no level yet


def test_itm_hides_4_removing_the_row_removes_its_defence() -> None:
    with_row = guarded([], entries=["ancestry/dwarf"])
    without = guarded([])
    assert any(x.source == "Dwarf" for x in defences_of(GAME, with_row, 0).guards)
    assert defences_of(GAME, without, 0) == Typed()


def test_itm_hides_9_the_summary_shows_defence_and_defences() -> None:
    state = guarded([{"item": "arms/ward-ring"}], entries=["ancestry/dwarf"])
    details = describe_bag(GAME, state, "Hero")
    assert details is not None and details.defence == 13
    assert details.defences == (
        "resists fire (Ward ring)", "resists poison (Dwarf)",
        "resists bludgeoning except magical, silvered (Dwarf)",
        "immune to Rattled (Ward ring)", "immune to Rattled (Dwarf)")


def test_itm_arm_8_the_items_gm_line_names_its_defences() -> None:
    ring = GAME.items["arms/ward-ring"].item
    assert effect_text(GAME, effect_part(ring, "worn")) == (
        "+1 on defence, resists fire, immune to Rattled")
    assert effect_text(GAME, effect_part(ring, "carried")) == "resists cold except silver"


def test_itm_wpn_27_28_a_foes_resistance_and_what_gets_through() -> None:
    """A foe under stoneskin halves slashing unless the weapon is tagged magical (ITM-WPN-30:
    5e's "from nonmagical attacks" written ``{"type": "slashing", "except": ["magical"]}``);
    the record names what applied (affectedBy)."""
    base = guarded([{"item": "arms/silver-blade"}])
    fight, answers = answer(GAME, base, '[combat: op="start" foe="Golem" role="standard" '
                                        'tier="6"]')
    assert answers[0].ok
    fight, answers = answer(GAME, fight, '[combat: op="condition" who="Golem" add="stoneskin"]')
    assert answers[0].ok, answers[0].text
    stone = fight.encounter
    index = stone.find("Golem")
    assert foe_defences(GAME, stone.combatants[index]).guards[0].type == "slashing"
    magic = answer(GAME, fight, '[attack: target="Golem"]', (1, 0))[1][0].record
    assert "affectedBy" not in magic and magic["damage"] >= 23  # the magical tag passes
    plain = copy.deepcopy(GUARD)
    plain["catalogs"][0]["entries"][-1]["item"]["tags"] = ["silver"]
    game = load_ruleset(plain)
    record = answer(game, fight, '[attack: target="Golem"]', (1, 0))[1][0].record
    rolled = sum(sum(faces) for faces in record["damageRolls"]) + 3 + 20
    assert record["damage"] == rolled // 2
    assert record["affectedBy"] == ["resists slashing except magical (Stoneskin)"]
    assert record["hp"] == record["hpMax"] - rolled // 2


# --- ITM-WPN-29: damage from no item weapon carries its qualities -----------------------------

def _qualities_game(qualities: list[str], api: str | None = None):
    """GUARD with a deva whose own attacks and whose mace (a creature action) deal 10
    slashing carrying ``qualities``, a stone amulet whose wearer resists slashing except
    magical, and a spell, Arcane Blade, dealing 10 slashing with the same ``qualities``."""
    document = copy.deepcopy(GUARD)
    if api is not None:
        document["capabilityApi"] = api
    written = {"qualities": qualities} if qualities else {}
    strike = {"damage": "10", "damageType": "slashing", **written}
    document["combat"]["templates"].append({"role": "deva", "tracks": {"hp": "1000"}, "combat": {
        "defence": "1", "attack": "40", **strike,
        "abilities": [{"id": "mace", "label": "Mace", "toHit": "40", **strike}]}})
    document["catalogs"][0]["entries"].append({"id": "stone-amulet", "label": "Stone amulet",
                                               "item": {"category": "gear",
                                                        "slots": {"finger": 1},
                                                        "worn": {"resist": [{
                                                            "type": "slashing",
                                                            "except": ["magical"]}]}}})
    document["catalogs"].append({"id": "spells", "label": "Spells", "holds": "spells",
                                 "entries": [{"id": "arcane-blade", "label": "Arcane Blade",
                                              "mechanics": {"kind": "Spell", "attackRoll": True,
                                                            "toHit": "40",
                                                            "amount": {"flat": 10},
                                                            "damageType": "slashing",
                                                            **written}}]})
    return document


def _hits(game, state, text: str) -> list[dict]:
    """The records of ``text``'s hits over fixed turns (a natural 1 still misses)."""
    records = []
    for turn in range(8):
        _, answers = answer(game, state, text, (1, turn))
        assert answers[0].ok, answers[0].text
        record = answers[0].record
        rows = record.get("targets", [record])
        records += [row for row in rows if row.get("result", "hit") != "miss"]
    assert records
    return records


@pytest.mark.parametrize(("qualities", "damage", "affected"), [
    pytest.param(["magical"], 10, None, id="magical-gets-through"),
    pytest.param([], 5, ["resists slashing except magical (Stone amulet)"], id="plain-halved"),
])
@pytest.mark.parametrize("text", ['[attack: who="Deva" target="Hero"]',
                                  '[attack: who="Deva" use="mace" target="Hero"]'])
def test_itm_wpn_29_a_creatures_attack_carries_its_qualities(qualities, damage, affected,
                                                             text) -> None:
    """ITM-WPN-29/30: a creature's own attack and its action (the deva's mace) name what their
    damage carries with ``qualities``; the hero's amulet resists slashing except magical
    (ITM-DEF-8/10), so magical damage is taken in full and the rest halved."""
    game = load_ruleset(_qualities_game(qualities))
    hero = start_state(game, {"seed": "guard", "characters": [
        {"name": "Hero", "abilities": {"str": 16, "dex": 14},
         "bag": [{"item": "arms/stone-amulet", "count": 1, "equipped": True}]}]})
    fight, answers = answer(game, hero, '[combat: op="start" foe="Deva" role="deva"]')
    assert answers[0].ok
    for record in _hits(game, fight, text):
        assert record["damage"] == damage and record.get("affectedBy") == affected


@pytest.mark.parametrize(("qualities", "damage"), [(["magical"], 10), ([], 5)])
def test_itm_wpn_29_a_spells_qualities_pass_a_foes_except(qualities, damage) -> None:
    """ITM-WPN-29: a spell's ``mechanics`` name its ``qualities``; the golem under stoneskin
    resists slashing except magical, so a magical Arcane Blade deals its 10 in full."""
    game = load_ruleset(_qualities_game(qualities))
    hero = start_state(game, {"seed": "guard", "characters": [
        {"name": "Hero", "abilities": {"str": 16, "dex": 14}, "entries": ["spells/arcane-blade"]}]})
    fight, answers = answer(game, hero, '[combat: op="start" foe="Golem" role="standard" '
                                        'tier="6"] [combat: op="condition" who="Golem" '
                                        'add="stoneskin"]')
    assert all(a.ok for a in answers), answers
    for record in _hits(game, fight, '[attack: who="Hero" use="Arcane Blade" target="Golem"]'):
        assert record["damage"] == damage


@pytest.mark.parametrize(("where", "pointer"), [
    (("combat", "templates", 2, "combat", "qualities"), "/combat/templates/2/combat/qualities/0"),
    (("combat", "templates", 2, "combat", "abilities", 0, "qualities"),
     "/combat/templates/2/combat/abilities/0/qualities/0"),
    (("catalogs", 2, "entries", 0, "mechanics", "qualities"),
     "/catalogs/2/entries/0/mechanics/qualities/0"),
])
def test_itm_wpn_29_itm_def_11_qualities_are_item_tags(where, pointer) -> None:
    """ITM-WPN-29, ITM-DEF-11: a quality is one of ``items.tags``, refused with its pointer."""
    from helpers import problems_of, put
    document = _qualities_game(["magical"])
    assert f'{pointer}: unknown tag "holy"' in problems_of(document, put(where, ["holy"]))


@pytest.mark.parametrize(("where", "pointer"), [
    (("combat", "templates", 2, "combat", "qualities"), "/combat/templates/2/combat/qualities"),
    (("combat", "templates", 2, "combat", "abilities", 0, "qualities"),
     "/combat/templates/2/combat/abilities/0/qualities"),
    (("catalogs", 2, "entries", 0, "mechanics", "qualities"), "/catalogs/2/entries/0/mechanics"),
])
def test_itm_wpn_29_qualities_need_1_101(where, pointer) -> None:
    """ITM-WPN-29 [v1.101] with ITM-GEN-3: ``qualities`` needs capabilityApi 1.101, wherever
    it is first written."""
    from helpers import problems_of, put
    found = problems_of(_qualities_game([], api="1.100"), put(where, ["magical"]))
    assert found == [f"{pointer}: qualities needs capabilityApi 1.101 or later (the ruleset "
                     "declares 1.100)"]
