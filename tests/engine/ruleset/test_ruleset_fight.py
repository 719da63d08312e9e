"""The combat block (engine/ruleset/fight.py, fight_problems.py): which combat a ruleset fights
with (DESIGN.md "Which combat", CMB-GEN-3), and each load-time rule of the block refusing a
ruleset with its exact JSON pointer and message (DESIGN.md "Formula combat", spec/items.md
§8, §9, §11, §12). The base is Ember Roads with a whole formula-combat block."""

from __future__ import annotations

import copy

import pytest
from helpers import FIXTURES, fixture_json, problems_of, put

from engine import load_ruleset
from engine.ruleset import Formula, Ruleset, combat_kind, validate
from engine.ruleset.formula import Binary, Number, Reference
from replay.files import ruleset_document

EMBER = fixture_json("rulesets/ember-roads.json")
FIXTURE_RULESETS = sorted(p.stem for p in (FIXTURES / "rulesets").glob("*.json"))

BLOCK = {
    "economy": {"budgets": [{"id": "act", "label": "Action"}, {"id": "quick", "label": "Quick"}]},
    "distance": {"unit": "paces"},
    "turn": {"initiative": {"check": "initiative"},
             "actions": [{"id": "act", "name": "Action", "per": "1", "attacks": "@level.fighter"},
                         {"id": "quick", "name": "Quick action"}]},
    "attack": {"check": "attack", "defence": "@guard", "damage": "1d4 + @brawn.mod",
               "reads": {"second": "@wits"}},
    "templates": [{"role": "standard",
                   "defaults": {"attribute": "min(5, floor((@tier + 1) / 2))"},
                   "tracks": {"hp": "8 + 6 * @tier"},
                   "combat": {"defence": "12 + @tier", "attack": "@tier",
                              "damage": "(@tier)d6 + @brawn.mod"},
                   "loot": "bandit_purse"},
                  {"role": "boss", "tracks": {"hp": "20 * @tier"},
                   "combat": {"defence": "14 + @tier", "attack": "@tier + 2",
                              "damage": "2d8 + @tier", "attacks": "2"}}],
    "sustain": {"save": "steel", "dc": "max(10, floor(@damage / 2))"},
    "conditions": [{"condition": "rattled", "edge": "-1", "checks": ["attack"],
                    "against": [{"edge": "1", "reach": "near"}, {"edge": "-1", "reach": "far"}],
                    "resist": ["burn", {"type": "cut", "except": ["thrown"]}],
                    "vulnerable": ["pierce"], "conditionImmunities": ["rattled"]}],
    "damageTypes": ["cut", "pierce", "burn", {"id": "crush", "label": "Crushing"}],
    "narrative": {"base": {"party": 75, "foes": 60}, "damage": "10 + @brawn", "stamina": "resolve",
                  "ranks": {"D": "Bronze"}},
    "levels": [{"id": "hardened", "value": {"field": "level"}, "atLeast": 3, "resist": ["burn"]}],
    "sheetHides": [{"list": "traits", "column": "resistance", "kind": "resist"}],
}


def fighting(**changes) -> dict:
    """Ember Roads with attack and initiative skills and the whole block above."""
    document = copy.deepcopy(EMBER)
    document["sheet"]["skills"] += [{"id": "attack", "label": "Attack", "ability": "brawn"},
                                    {"id": "initiative", "label": "Initiative",
                                     "ability": "wits"}]
    document["combat"] = copy.deepcopy(BLOCK)
    document["combat"].update(changes)
    document["catalogs"].append(copy.deepcopy(TRAITS))
    return document


# ITM-HIDES-2: the sheet list sheetHides reads — a catalog of entries a character chooses.
TRAITS = {"id": "traits", "label": "Traits", "holds": "traits", "entries": [
    {"id": "stonehide", "label": "Stonehide", "filters": {"resistance": "burn, cut except thrown",
                                                         "calm": "rattled"}}]}


def test_the_whole_formula_block_loads_typed() -> None:
    ruleset, problems = validate(fighting())
    assert problems == []
    assert ruleset is not None and ruleset.combat is not None
    combat = ruleset.combat
    assert combat_kind(ruleset) == "formula"
    assert combat.attack is not None
    assert combat.attack.defence == Formula("@guard", Reference("guard"))
    assert combat.templates[0].tracks.hp.tree == Binary("+", Number(8), Binary(
        "*", Number(6), Reference("tier")))
    assert combat.turn is not None and combat.turn.actions[1].per.tree == Number(1)
    assert combat.conditions[0].name == "rattled" and combat.conditions[0].edge == -1
    assert combat.damage_words == frozenset({"cut", "pierce", "burn", "crush"})


def test_without_turn_actions_each_budget_is_an_action_with_one_attack() -> None:
    document = fighting()
    del document["combat"]["turn"]
    ruleset = Ruleset.model_validate(document)
    assert ruleset.combat is not None
    assert [(a.id, a.name, a.per.text, a.attacks and a.attacks.text)
            for a in ruleset.combat.turn_actions] == [("act", "Action", "1", "1"),
                                                      ("quick", "Quick", "1", "1")]
    declared = Ruleset.model_validate(fighting()).combat
    assert declared is not None
    assert [a.attacks and a.attacks.text for a in declared.turn_actions] == [
        "@level.fighter", None]


def test_the_block_dumps_back_as_written() -> None:
    ruleset = Ruleset.model_validate(fighting())
    dumped = ruleset.model_dump(by_alias=True, exclude_unset=True)["combat"]
    assert dumped["attack"] == BLOCK["attack"]
    assert dumped["templates"] == BLOCK["templates"]
    assert dumped["conditions"][0]["edge"] == -1


def test_the_seeds_id_form_names_a_condition() -> None:
    condition = {"id": "rattled", "noActions": True, "against": [{"edge": "1"},
                                                                 {"crit": True, "reach": "near"}]}
    ruleset, problems = validate(fighting(conditions=[condition]))
    assert problems == [] and ruleset is not None and ruleset.combat is not None
    assert ruleset.combat.conditions[0].name == "rattled"
    assert ruleset.combat.conditions[0].against[1].crit


def _kind_of(resolution: str | None, combat: dict | None) -> str:
    fixture = {"dice-sum": "harrow", "dice-highest": "highest-blades",
               "symbol-pool": "symbols-genesys", "dice-pool": "pool-d10"}
    document = copy.deepcopy(fixture_json(f"rulesets/{fixture[resolution or 'dice-sum']}.json"))
    document.pop("combat", None)
    if combat is not None:
        document["combat"] = combat
    ruleset = Ruleset.model_validate(document)
    return combat_kind(ruleset)


ATTACK = {"check": "sneak", "defence": "10", "damage": "1d6"}
KINDS = [
    ("dice-sum", None, "narrative"),  # the seeds' default combat
    ("dice-sum", {"economy": {"budgets": [{"id": "act", "label": "Act"}]}}, "narrative"),
    ("dice-sum", {"attack": ATTACK}, "formula"),
    ("dice-sum", {"kind": "narrative", "attack": ATTACK}, "narrative"),
    ("dice-sum", {"kind": "outcome"}, "outcome"),
    ("dice-sum", {"kind": "none"}, "none"),
    ("dice-pool", {"attack": ATTACK}, "formula"),
    ("dice-highest", None, "narrative"),  # CHK-HIGH-24: no combat block of its own
    ("symbol-pool", None, "symbol-pool"),  # CHK-SYM-35
    ("symbol-pool", {"kind": "symbol-pool"}, "symbol-pool"),
    ("symbol-pool", {"kind": "none"}, "none"),
]


@pytest.mark.parametrize(("resolution", "combat", "kind"), KINDS,
                         ids=[f"{r[0]}-{r[1]}" for r in KINDS])
def test_combat_kind_follows_designs_rule(resolution, combat, kind) -> None:
    assert _kind_of(resolution, combat) == kind


def test_cmb_gen_3_symbol_pool_with_another_kind_is_a_load_error() -> None:
    document = fixture_json("rulesets/symbols-genesys.json")
    document["capabilityApi"] = "1.382"
    document["combat"] = {"kind": "formula", "attack": {"check": "athletics", "defence": "10",
                                                        "damage": "1d6"}}
    assert '/combat/kind: a symbol-pool ruleset fights with symbol-pool combat, not "formula"' \
        in problems_of(document)


def test_cmb_gen_3_symbol_pool_combat_needs_a_symbol_pool_resolution() -> None:
    assert problems_of(fighting(kind="symbol-pool")) == [
        '/combat/kind: symbol-pool combat needs a "symbol-pool" resolution']


COMBAT = ("combat",)
REFUSED = [
    # DESIGN.md "Formula combat": formulas parse, references name what their place reads
    ("formula does not parse", put((*COMBAT, "attack", "damage"), "1d6 +"),
     '/combat/attack/damage: Value error, "1d6 +" is not a formula: it ends too early'),
    ("formula dice beyond the limits", put((*COMBAT, "templates", 0, "tracks", "hp"), "200d6"),
     "/combat/templates/0/tracks/hp: Value error, between 1 and 100 dice can be rolled at "
     "once, not 200"),
    ("formula is no string", put((*COMBAT, "attack", "defence"), ["10"]),
     '/combat/attack/defence: Value error, a formula is a string such as "1d8 + @str.mod"'),
    ("unknown reference", put((*COMBAT, "attack", "defence"), "10 + @dex.mod"),
     '/combat/attack/defence: unknown reference "@dex.mod"'),
    ("dotted field that is not there", put((*COMBAT, "turn", "actions", 0, "attacks"),
                                           "@class.attacks"),
     '/combat/turn/actions/0/attacks: unknown reference "@class.attacks"'),
    ("@roll.high only in damage", put((*COMBAT, "attack", "defence"), "@roll.high"),
     '/combat/attack/defence: unknown reference "@roll.high"'),
    ("@tier only in templates", put((*COMBAT, "narrative", "damage"), "@tier * 2"),
     '/combat/narrative/damage: unknown reference "@tier"'),
    ("@damage only in sustain", put((*COMBAT, "attack", "damage"), "@damage"),
     '/combat/attack/damage: unknown reference "@damage"'),
    ("a foe has no fields", put((*COMBAT, "templates", 0, "combat", "defence"), "@guard"),
     "/combat/templates/0/combat/defence: unknown reference \"@guard\" (a foe's formulas read "
     "@tier and abilities)"),
    ("a foe's modifier reads @tier alone", put((*COMBAT, "templates", 0, "defaults", "attribute"),
                                              "@brawn.mod"),
     "/combat/templates/0/defaults/attribute: unknown reference \"@brawn.mod\" (a foe's ability "
     "modifier reads @tier alone)"),
    # CMB-TURN-15, CMB-ATK-2: the checks are skills of sheet.skills
    ("initiative check", put((*COMBAT, "turn", "initiative", "check"), "speed"),
     '/combat/turn/initiative/check: unknown skill "speed"'),
    ("attack check", put((*COMBAT, "attack", "check"), "fight"),
     '/combat/attack/check: unknown skill "fight"'),
    # DESIGN.md: the budgets stay the action ids; ITM-OFF-2
    ("turn action that is no budget", put((*COMBAT, "turn", "actions", 1, "id"), "bonus"),
     '/combat/turn/actions/1/id: unknown budget "bonus"'),
    ("turn action twice", put((*COMBAT, "turn", "actions", 1, "id"), "act"),
     '/combat/turn/actions/1/id: duplicate id "act"'),
    ("budget twice", put((*COMBAT, "economy", "budgets"), [{"id": "act", "label": "A"}] * 2
                         + [{"id": "quick", "label": "Q"}]),
     '/combat/economy/budgets/1/id: duplicate id "act"'),
    ("off-hand budget", put((*COMBAT, "offHand"), {"budget": "bonus"}),
     '/combat/offHand/budget: unknown budget "bonus"'),
    ("formula kind needs its formulas", lambda d: (d["combat"].pop("attack"),
                                                   d["combat"].__setitem__("kind", "formula")),
     '/combat/kind: formula combat needs "combat.attack"'),
    # CMB-TPL-2, ITM-LOOT-14, CMB-SUS-4, DESIGN.md "Narrative combat"
    ("template loot table", put((*COMBAT, "templates", 0, "loot"), "grave_goods"),
     '/combat/templates/0/loot: unknown loot table "grave_goods"'),
    ("template role twice", put((*COMBAT, "templates", 1, "role"), "standard"),
     '/combat/templates/1/role: duplicate role "standard"'),
    ("sustain save", put((*COMBAT, "sustain", "save"), "nerve"),
     '/combat/sustain/save: unknown save "nerve"'),
    ("narrative pool", put((*COMBAT, "narrative", "mana"), "mana"),
     '/combat/narrative/mana: unknown pool "mana"'),
    ("narrative rank letter", put((*COMBAT, "narrative", "ranks"), {"E": "Tin"}),
     "/combat/narrative/ranks/E: Input should be 'D', 'C', 'B', 'A', 'S', 'SS', 'SSS', 'X' or "
     "'XX'"),
    # CMB-COND-1/2, ITM-DEF-1/3
    ("condition that does not exist", put((*COMBAT, "conditions", 0, "condition"), "prone"),
     '/combat/conditions/0/condition: unknown condition "prone"'),
    ("condition named twice", put((*COMBAT, "conditions", 0, "id"), "rattled"),
     '/combat/conditions/0: Value error, a combat condition names its condition by '
     '"condition" or "id"'),
    ("condition check", put((*COMBAT, "conditions", 0, "checks"), ["aim"]),
     '/combat/conditions/0/checks/0: unknown check "aim"'),
    ("condition reach", put((*COMBAT, "conditions", 0, "against", 0, "reach"), "adjacent"),
     "/combat/conditions/0/against/0/reach: Input should be 'near' or 'far'"),
    ("condition immunity", put((*COMBAT, "conditions", 0, "conditionImmunities"), ["frightened"]),
     '/combat/conditions/0/conditionImmunities/0: unknown condition "frightened"'),
    ("level value", put((*COMBAT, "levels", 0, "value"), {"field": "rank"}),
     '/combat/levels/0/value: unknown field "rank"'),
    ("unknown key in the block", put((*COMBAT, "reactions"), {}),
     '/combat/reactions: unknown key "reactions"'),
]


@pytest.mark.parametrize(("name", "mutate", "problem"), REFUSED, ids=[r[0] for r in REFUSED])
def test_a_combat_block_rule_refuses_the_ruleset(name, mutate, problem) -> None:
    assert problems_of(fighting(), mutate) == [problem]


CONDITION = (*COMBAT, "conditions", 0)
COAT = ("catalogs", 0, "entries", 4, "item")
AXE = ("catalogs", 0, "entries", 1, "item")
TRAIT = ("catalogs", 2, "entries", 0)
DEFENCES = [
    ("ITM-DEF-9 vulnerable takes plain words",
     put((*CONDITION, "vulnerable"), [{"type": "pierce", "except": ["thrown"]}]),
     ["/combat/conditions/0/vulnerable/0: vulnerable takes plain damage words, no except"]),
    ("ITM-DEF-11 except tags are item tags",
     put((*CONDITION, "resist", 1, "except"), ["silver"]),
     ['/combat/conditions/0/resist/1/except/0: unknown tag "silver"']),
    ("ITM-DEF-13 declared damage words", put((*CONDITION, "immune"), ["frost"]),
     ['/combat/conditions/0/immune/0: unknown damage type "frost"']),
    ("ITM-DEF-13 the except form's type", put((*CONDITION, "resist", 1, "type"), "slash"),
     ['/combat/conditions/0/resist/1/type: unknown damage type "slash"']),
    ("ITM-DEF-13 a level's words", put((*COMBAT, "levels", 0, "resist"), ["poison"]),
     ['/combat/levels/0/resist/0: unknown damage type "poison"']),
    ("ITM-DEF-13 a weapon's damage type", put((*AXE, "attack", "damage", "type"), "chop"),
     ['/catalogs/0/entries/1/item/attack/damage/type: unknown damage type "chop"']),
    ("ITM-ARM-4 a worn resist", put((*COAT, "worn", "resist"), ["frost"]),
     ['/catalogs/0/entries/4/item/worn/resist/0: unknown damage type "frost"']),
    ("ITM-DEF-10 a worn except", put((*COAT, "worn", "resist"),
                                      [{"type": "cut", "except": ["silver"]}]),
     ['/catalogs/0/entries/4/item/worn/resist/0/except/0: unknown tag "silver"']),
    ("ITM-ARM-4 a worn vulnerable", put((*COAT, "worn", "vulnerable"),
                                         [{"type": "cut", "except": ["thrown"]}]),
     ["/catalogs/0/entries/4/item/worn/vulnerable/0: vulnerable takes plain damage words, "
      "no except"]),
    ("ITM-ARM-4 a worn resist of another shape", put((*COAT, "worn", "resist"), "cut"),
     ['/catalogs/0/entries/4/item/worn/resist: 1 to 30 damage words or {"type", "except"} '
      "entries"]),
    ("ITM-DEF-1 at most 30 entries", put((*CONDITION, "resist"), ["burn"] * 31),
     ["/combat/conditions/0/resist: List should have at most 30 items after validation, "
      "not 31"]),
    ("ITM-DEF-1 at most 40 condition immunities",
     put((*CONDITION, "conditionImmunities"), ["rattled"] * 41),
     ["/combat/conditions/0/conditionImmunities: List should have at most 40 items after "
      "validation, not 41"]),
    ("ITM-HIDES-1 at most 8 sources", put((*COMBAT, "sheetHides"), [
        {"list": "traits", "column": "resistance", "kind": "resist"}] * 9),
     ["/combat/sheetHides: List should have at most 8 items after validation, not 9"]),
    ("ITM-HIDES-2 the four kinds (OQ-25)", put((*COMBAT, "sheetHides", 0, "kind"), "weak"),
     ["/combat/sheetHides/0/kind: Input should be 'resist', 'vulnerable', 'immune' or "
      "'conditionImmunities'"]),
    ("ITM-HIDES-2 a list that is no catalog", put((*COMBAT, "sheetHides", 0, "list"), "feats"),
     ['/combat/sheetHides/0/list: unknown list "feats" (a catalog that holds no items)']),
    ("ITM-HIDES-2 an item catalog is no sheet list",
     put((*COMBAT, "sheetHides", 0, "list"), "outfitter"),
     ['/combat/sheetHides/0/list: unknown list "outfitter" (a catalog that holds no items)']),
    ("ITM-HIDES-2 the column holds text", put((*TRAIT, "filters", "resistance"), 3),
     ["/catalogs/2/entries/0/filters/resistance: a sheetHides column holds text"]),
    ("ITM-HIDES-8 condition immunities name conditions",
     put((*COMBAT, "sheetHides"), [{"list": "traits", "column": "calm",
                                    "kind": "conditionImmunities"}]),
     []),
    ("ITM-HIDES-8 an unknown condition in the column",
     lambda d: (put((*COMBAT, "sheetHides"), [{"list": "traits", "column": "calm",
                                               "kind": "conditionImmunities"}])(d),
                put((*TRAIT, "filters", "calm"), "rattled, dazed")(d)),
     ['/catalogs/2/entries/0/filters/calm: unknown condition "dazed"']),
    ("ITM-ARM-5 a worn condition immunity", put((*COAT, "worn", "conditionImmunities"),
                                                ["rattled", "charmed"]),
     ['/catalogs/0/entries/4/item/worn/conditionImmunities/1: unknown condition "charmed"']),
    ("ITM-ARM-2 an effect an item cannot have", put((*COAT, "worn", "effects"),
                                                    ["resist-all", "ends-on-damage"]),
     ['/catalogs/0/entries/4/item/worn/effects/1: "ends-on-damage" is no effect of an item '
      "(nobody put it on its owner and it never ends by itself)"]),
]


@pytest.mark.parametrize(("name", "mutate", "problems"), DEFENCES, ids=[r[0] for r in DEFENCES])
def test_itm_def_a_defence_rule_refuses_the_ruleset(name, mutate, problems) -> None:
    assert problems_of(fighting(), mutate) == problems


def test_itm_def_13_without_damage_types_damage_words_are_free_text() -> None:
    document = fighting()
    del document["combat"]["damageTypes"]
    assert problems_of(document, put((*CONDITION, "immune"), ["frost"]),
                       put((*AXE, "attack", "damage", "type"), "chop"),
                       put((*COAT, "worn", "resist"), ["frost"])) == []


def test_itm_hides_1_an_empty_sheet_hides_is_allowed() -> None:
    assert problems_of(fighting(sheetHides=[])) == []


@pytest.mark.parametrize("name", FIXTURE_RULESETS)
def test_every_fixture_ruleset_still_loads_with_the_typed_block(name) -> None:
    document = ruleset_document(FIXTURES / "rulesets" / f"{name}.json")  # with catalogFiles
    game = load_ruleset(document)
    written = document.get("combat")
    if written is not None:
        assert game.ruleset.combat is not None
        assert game.ruleset.combat.model_dump(by_alias=True, exclude_unset=True) == written
    # skirmish*.json, srd5.json and ember-fights.json fight by formula (tests/engine/
    # test_fight*.py, test_weapons.py), gravewatch-fights.json too, in a dice-pool
    # (tests/engine/test_fight_pool.py, issue 25), and against-d100-fight.json over a
    # roll-against resolution (test_fight_against.py)
    expected = ("formula",) if name.startswith("skirmish") or name in (
        "srd5", "gravewatch-fights", "ember-fights", "against-d100-fight") else (
        "outcome",) if name.startswith("outcome") else ("narrative", "symbol-pool")
    assert combat_kind(game.ruleset) in expected
