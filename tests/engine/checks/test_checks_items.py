"""What items and conditions do to a check outside a fight (spec/items.md §7), end to end
through ``[skill_check:]``: modifier dice and ``minus`` in sum and pool checks (ITM-CHK-3/11),
the parts a check reads and the ones it ignores (ITM-WORN-2..7/9), requirements (ITM-REQ-2..6),
and what the record and the GM's instructions say about them (ITM-CHK-1/2/9/10)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from check_support import check

from engine import Game, State, load_ruleset, start_state
from engine.actions.answers import Answer
from engine.ruleset import RulesetError
from engine.text.prompt import instructions
from tests.helpers import fixture_json

Doc = dict[str, Any]


def _game(name: str, edit: Callable[[Doc], None] | None = None) -> Game:
    doc = copy.deepcopy(fixture_json(f"rulesets/{name}.json"))
    if edit is not None:
        edit(doc)
    return load_ruleset(doc)


def _state(g: Game, name: str, who: int = 0, **character: Any) -> State:
    people = copy.deepcopy(fixture_json(f"parties/{name}.json"))
    people["characters"][who].update(character)
    return start_state(g, people)


def _check(g: Game, state: State, tag: str, turn: tuple[int, ...] = (0, 0)) -> Answer:
    new, answer = check(g, state, f"[skill_check: {tag}]", turn)
    assert answer.ok, answer.text
    assert new is state  # a check pays nothing here
    return answer


def _conditions(*rows: Doc) -> Callable[[Doc], None]:
    """Add conditions to the ruleset."""
    return lambda doc: doc["conditions"].extend(rows)


# --- ITM-CHK-3: every modifier adds its number and has its dice rolled ---------------------------

BLESSED = {"id": "blessed", "label": "Blessed",
           "modifiers": [{"to": "checks", "dice": "1d4", "flat": 1}]}
BANE = {"id": "bane", "label": "Bane", "modifiers": [{"to": "checks", "dice": "1d6",
                                                      "minus": True}]}


@pytest.mark.parametrize("turn", [(0, 0), (0, 1), (4, 2)])
def test_itm_chk_3_a_sum_check_adds_flat_rolls_dice_and_minus_subtracts(
        turn: tuple[int, ...]) -> None:
    """ITM-CHK-3: Blessed adds 1 and 1d4, Bane subtracts 1d6; the main dice stay the same,
    the total is the dice + the sheet number + 1 + d4 − d6, and the record's ``effects`` is that
    net number (ITM-CHK-8) with the modifier dice in ``effectDice``."""
    g = _game("sum-2d6", _conditions(BLESSED, BANE))
    bare = _check(g, _state(g, "sum-2d6", conditions=[], bag=[]),
                  'skill="climb" dc="9"', turn).record
    answer = _check(g, _state(g, "sum-2d6", conditions=["blessed", "bane"], bag=[]),
                    'skill="climb" dc="9"', turn)
    record = answer.record
    d4, d6 = record["effectDice"]
    assert 1 <= d4 <= 4 and 1 <= d6 <= 6
    assert record["rolls"] == bare["rolls"]
    assert record["modifier"] == bare["modifier"] + 1 + d4 - d6
    assert record["total"] == sum(bare["rolls"]) + bare["modifier"] + 1 + d4 - d6
    assert record["effects"] == f"{1 + d4 - d6:+d}" and record["from"] == "Blessed, Bane"
    assert f"= {record['total']} vs 9" in answer.text  # the sentence adds up


def test_itm_chk_3_modifier_dice_are_their_own_stream() -> None:
    """ITM-CHK-3: the modifier dice are drawn apart from the check's own dice, so a modifier
    never shifts the check's dice (same turn, same rolls), and they vary over turns."""
    g = _game("sum-2d6", _conditions(BLESSED))
    state = _state(g, "sum-2d6", conditions=["blessed"], bag=[])
    faces = {_check(g, state, 'skill="climb" dc="9"', (2, n)).record["effectDice"][0]
             for n in range(30)}
    assert faces == {1, 2, 3, 4}


def test_itm_chk_3_11_a_pool_check_adds_the_number_as_dice() -> None:
    """ITM-CHK-3/11: in a pool the number is dice: Inspired's 1d3 is rolled and that many
    dice join the pool; Weary's flat -1 takes one away (the pool neither explodes nor
    rerolls here, so every die rolled is one of the pool)."""
    inspired = {"id": "inspired", "label": "Inspired", "modifiers": [{"to": "checks", "dice": "1d3"}]}
    weary = {"id": "weary", "label": "Weary", "modifiers": [{"to": "checks", "flat": -1}]}

    def edit(doc: Doc) -> None:
        doc["conditions"] += [inspired, weary]
        doc["resolution"].pop("explode")

    g = _game("pool-d10", edit)
    for index in range(6):
        turn = (5, index)
        bare = _check(g, _state(g, "pool-d10", bag=[]), 'skill="ward" dc="1"', turn).record
        record = _check(g, _state(g, "pool-d10", bag=[], conditions=["inspired", "weary"]),
                        'skill="ward" dc="1"', turn).record
        (face,) = record["effectDice"]
        assert len(record["rolls"]) == len(bare["rolls"]) + face - 1
        assert record["effects"] == f"{face - 1:+d}" and record["from"] == "Inspired, Weary"


# --- ITM-CHK-11: the Gravewatch example -----------------------------------------------------------

def _gravewatch_example(doc: Doc) -> None:
    """The spec's example on the Gravewatch fixture: the bound Dawn bell adds one die to Ward,
    Rattled takes one die each from Soothe and Barter."""
    doc["sheet"]["skills"] += [{"id": "soothe", "label": "Soothe", "ability": "nerve"},
                               {"id": "barter", "label": "Barter", "ability": "wits"}]
    bell = next(e for e in doc["catalogs"][0]["entries"] if e["id"] == "dawn-bell")
    bell["item"]["worn"] = {"modifiers": [{"to": "checks", "skills": ["ward"], "flat": 1}]}
    rattled = next(c for c in doc["conditions"] if c["id"] == "rattled")
    rattled["modifiers"] = [{"to": "checks", "skills": ["soothe", "barter"], "flat": -1}]


BELL = {"item": "kit/dawn-bell", "count": 1, "equipped": True, "bound": True}


@pytest.mark.parametrize(("bag", "conditions", "skill", "dice", "effects", "source"), [
    pytest.param([], [], "ward", 4, None, None, id="ward-bare"),
    pytest.param([BELL], [], "ward", 5, "+1", "Dawn bell", id="ward-bell"),
    pytest.param([{**BELL, "bound": False}], [], "ward", 4, None, None, id="ward-bell-unbound"),
    pytest.param([], [], "soothe", 3, None, None, id="soothe-bare"),
    pytest.param([], ["rattled"], "soothe", 2, "-1", "Rattled", id="soothe-rattled"),
    pytest.param([], [], "barter", 2, None, None, id="barter-bare"),
    pytest.param([], ["rattled"], "barter", 1, "-1", "Rattled", id="barter-rattled"),
    pytest.param([BELL], ["rattled"], "ward", 5, "+1", "Dawn bell", id="ward-bell-rattled"),
])
def test_itm_chk_11_the_bell_adds_a_die_and_rattled_takes_one(
        bag: list[Doc], conditions: list[str], skill: str, dice: int, effects: str | None,
        source: str | None) -> None:
    """ITM-CHK-11 (and ITM-ENTRY-15: a binding item does nothing worn until bound): Ada's
    Ward is Nerve 3 + Sworn 1 = 4 dice, Soothe Nerve 3, Barter Wits 2."""
    g = _game("gravewatch", _gravewatch_example)
    state = _state(g, "gravewatch", bag=bag, conditions=conditions)
    record = _check(g, state, f'skill="{skill}" dc="1"').record
    assert len(record["rolls"]) == dice
    assert (record.get("effects"), record.get("from")) == (effects, source)


# --- ITM-WORN-2..7/9: what a check reads of ``worn`` and ``carried`` ------------------------------

def _kit_item(ident: str, **item: Any) -> Callable[[Doc], None]:
    """Give the sum fixture's kit item ``ident`` these keys."""
    def edit(doc: Doc) -> None:
        entry = next(e for e in doc["catalogs"][0]["entries"] if e["id"] == ident)
        entry["item"].update(item)
    return edit


def _worn_coat(worn: Doc) -> tuple[Game, State]:
    """The sum fixture with Ada wearing a leather coat whose ``worn`` is ``worn``."""
    g = _game("sum-2d6", _kit_item("leather-coat", worn=worn))
    coat = {"item": "kit/leather-coat", "count": 1, "equipped": True}
    return g, _state(g, "sum-2d6", conditions=[], bag=[coat])


def test_itm_worn_2_3_a_worn_effect_gives_advantage_to_the_owners_checks() -> None:
    """ITM-WORN-2/3: ``effects`` ``own-checks-advantage`` rolls a check twice (this ruleset
    rolls twice, ITM-CHK-6); ``own-saves-advantage`` does the same for saves only."""
    g, state = _worn_coat({"effects": ["own-checks-advantage"]})
    assert len(_check(g, state, 'skill="climb" dc="9"').record["rolls"]) == 4
    assert len(_check(g, state, 'save="steel" dc="9"').record["rolls"]) == 2
    g, state = _worn_coat({"effects": ["own-saves-disadvantage"]})
    assert len(_check(g, state, 'skill="climb" dc="9"').record["rolls"]) == 2
    saved = _check(g, state, 'save="steel" dc="9"').record
    assert len(saved["rolls"]) == 4 and saved["from"] == "Leather coat"


def test_itm_worn_5_a_worn_item_fails_a_save_without_a_roll() -> None:
    """ITM-WORN-5: ``failsSaves`` fails that save without dice (ITM-CHK-7), and no other."""
    g, state = _worn_coat({"failsSaves": ["steel"]})
    record = _check(g, state, 'save="steel" dc="2"').record
    assert (record["automatic"], record["success"], record["rolls"]) == (True, False, [])
    assert len(_check(g, state, 'skill="climb" dc="2"').record["rolls"]) == 2


@pytest.mark.parametrize(("tag", "effects", "dice"), [
    pytest.param('skill="sneak" dc="9"', "+2", 4, id="scoped-skill"),  # item +1, own-less +1
    pytest.param('skill="climb" dc="9"', "+3", 2, id="own-scope-only"),  # not the sneak parts
    pytest.param('ability="brawn" dc="9"', None, 2, id="ability-check"),  # ITM-CHK-4
    pytest.param('save="steel" dc="9"', "-2", 2, id="a-save-modifier-unscoped-by-skills"),
])
def test_itm_worn_6_item_level_skills_scope_effects_and_unscoped_modifiers(
        tag: str, effects: str | None, dice: int) -> None:
    """ITM-WORN-6: the coat's item-level ``skills: ["sneak"]`` says which checks its
    ``effects`` (advantage) and its modifiers that name no skills of their own concern; a
    modifier with its own ``skills`` keeps them; a save modifier is not scoped by ``skills``."""
    g, state = _worn_coat({"skills": ["sneak"], "effects": ["own-checks-advantage"],
                           "modifiers": [{"to": "checks", "flat": 1},
                                         {"to": "checks", "flat": 1},
                                         {"to": "checks", "skills": ["climb"], "flat": 3},
                                         {"to": "saves", "flat": -2}]})
    record = _check(g, state, tag).record
    assert record.get("effects") == effects and len(record["rolls"]) == dice


def test_itm_worn_6_item_level_saves_scope_the_save_parts() -> None:
    """ITM-WORN-6: item-level ``saves`` scope save effects and unscoped save modifiers."""
    doc_saves = [{"id": "steel", "label": "Steel", "ability": "brawn"},
                 {"id": "nerve", "label": "Nerve", "ability": "wits"}]
    g = _game("sum-2d6", lambda doc: (
        doc["sheet"].update(saves=doc_saves),
        _kit_item("leather-coat", worn={"saves": ["nerve"], "effects": ["own-saves-advantage"],
                                        "modifiers": [{"to": "saves", "flat": 2}]})(doc)))
    state = _state(g, "sum-2d6", conditions=[],
                   bag=[{"item": "kit/leather-coat", "count": 1, "equipped": True}])
    nerve = _check(g, state, 'save="nerve" dc="9"').record
    steel = _check(g, state, 'save="steel" dc="9"').record
    assert (nerve["effects"], len(nerve["rolls"])) == ("+2", 4)
    assert ("effects" not in steel, len(steel["rolls"])) == (True, 2)


COMBAT_PARTS: Doc = {  # the fight's vocabulary of worn (ITM-ARM-2..5)
    "effects": ["own-attacks-advantage", "attacks-against-disadvantage", "resist-all"],
    "modifiers": [{"to": "attacks", "flat": 3}, {"to": "defence", "flat": 2},
                  {"to": "speed", "flat": -10}],
    "resist": ["fire"], "immune": ["cold"], "conditionImmunities": ["shaken"],
}


def test_itm_worn_7_9_a_check_ignores_the_combat_parts() -> None:
    """ITM-WORN-7/9: a check outside a fight reads only the check parts (ITM-WORN-2): the
    coat's defence, attack and damage modifiers, speed, resistances and combat effects change
    no check or save, and name nothing in the record."""
    g, state = _worn_coat(COMBAT_PARTS)
    g0, bare = _worn_coat({})
    for tag in ('skill="climb" dc="9"', 'save="steel" dc="9"', 'ability="wits" dc="9"'):
        record = _check(g, state, tag).record
        assert "effects" not in record and "from" not in record
        assert record == _check(g0, bare, tag).record


# --- ITM-REQ-2..6: requirements -------------------------------------------------------------------

def test_itm_req_2_a_requirement_reads_any_value_with_its_minimum() -> None:
    """ITM-REQ-2: ``value`` is any value reference (here a derived value), ``atLeast`` its
    minimum; while short, ``otherwise`` applies — with dice too (ITM-CHK-3)."""
    def edit(doc: Doc) -> None:
        doc["sheet"].setdefault("derived", []).append(
            {"id": "grip", "label": "Grip", "op": "sum",
             "of": [{"abilityScore": "brawn"}, {"abilityScore": "wits"}]})
        _kit_item("grave-spade", requires=[{
            "value": {"derived": "grip"}, "atLeast": 5,
            "otherwise": {"modifiers": [{"to": "checks", "skills": ["climb"], "dice": "1d4",
                                         "minus": True}]}}])(doc)

    g = _game("sum-2d6", edit)
    spade = {"item": "kit/grave-spade", "count": 1, "equipped": True}
    weak = _state(g, "sum-2d6", conditions=[], bag=[spade], abilities={"brawn": 2, "wits": 2})
    strong = _state(g, "sum-2d6", conditions=[], bag=[spade], abilities={"brawn": 2, "wits": 3})
    short = _check(g, weak, 'skill="climb" dc="9"').record
    (face,) = short["effectDice"]
    assert (short["effects"], short["from"]) == (f"{-face:+d}", "Grave spade")
    assert "from" not in _check(g, strong, 'skill="climb" dc="9"').record


def test_itm_req_3_otherwise_cannot_change_an_ability() -> None:
    """ITM-REQ-3: ``otherwise`` uses the worn vocabulary but ``abilities`` is refused at
    import, with its pointer."""
    g_doc = copy.deepcopy(fixture_json("rulesets/sum-2d6.json"))
    _kit_item("grave-spade", requires=[{
        "value": {"abilityScore": "brawn"}, "atLeast": 3,
        "otherwise": {"abilities": {"brawn": {"add": -1}}}}])(g_doc)
    with pytest.raises(RulesetError) as caught:
        load_ruleset(g_doc)
    assert [str(p) for p in caught.value.problems] == [
        "/catalogs/0/entries/3/item/requires/0: Value error, a requirement's otherwise cannot "
        "change an ability"]


def test_itm_req_6_an_unmet_requirement_counts_in_checks() -> None:
    """ITM-REQ-6 (checks; the fight half is in tests/engine/test_armour.py): Ada's Brawn 2
    falls short of the spade's 3, so Climb is one lower, named after the spade; unequipped,
    the spade demands nothing (ITM-REQ-5)."""
    g = _game("sum-2d6")
    spade = {"item": "kit/grave-spade", "count": 1}
    worn = _check(g, _state(g, "sum-2d6", conditions=[], bag=[{**spade, "equipped": True}]),
                  'skill="climb" dc="9"').record
    carried = _check(g, _state(g, "sum-2d6", conditions=[], bag=[spade]),
                     'skill="climb" dc="9"').record
    assert (worn["effects"], worn["from"]) == ("-1", "Grave spade")
    assert worn["modifier"] == carried["modifier"] - 1 and "from" not in carried


# --- ITM-CHK-1/2/9/10: what a check reads, and what the GM is told -------------------------------

def test_itm_chk_1_a_check_reads_conditions_items_and_requirements_together() -> None:
    """ITM-CHK-1, ITM-SHOW-5: besides the sheet, a check reads the roller's conditions, what its items do
    worn and carried, and the ``otherwise`` of an unmet requirement — all at once, each named
    in ``from`` in the order read (ITM-CHK-8, OQ-24)."""
    g = _game("sum-2d6")
    bag = [{"item": "kit/leather-coat", "count": 1, "equipped": True},
           {"item": "kit/waystone", "count": 1},
           {"item": "kit/grave-spade", "count": 1, "equipped": True}]
    state = _state(g, "sum-2d6", conditions=["shaken"], bag=bag)
    climb = _check(g, state, 'skill="climb" dc="9"').record
    assert (climb["effects"], climb["from"]) == ("-1", "Leather coat, Waystone, Grave spade")
    steel = _check(g, state, 'save="steel" dc="9"').record
    assert (steel["effects"], steel["from"]) == ("-1", "Shaken")


def test_itm_chk_2_items_and_conditions_share_one_vocabulary() -> None:
    """ITM-CHK-2: an item's ``worn`` and a condition written with the same modifiers (a flat
    number and a ``mode``) change a check the same way."""
    part = {"modifiers": [{"to": "checks", "skills": ["climb"], "flat": 2},
                          {"to": "checks", "mode": "disadvantage"}]}
    g = _game("sum-2d6", lambda doc: (
        doc["conditions"].append({"id": "braced", "label": "Braced", **part}),
        _kit_item("leather-coat", worn=part)(doc)))
    by_item = _check(g, _state(g, "sum-2d6", conditions=[], bag=[
        {"item": "kit/leather-coat", "count": 1, "equipped": True}]), 'skill="climb" dc="9"')
    by_condition = _check(g, _state(g, "sum-2d6", conditions=["braced"], bag=[]),
                          'skill="climb" dc="9"')
    for key in ("rolls", "total", "modifier", "effects", "success"):
        assert by_item.record[key] == by_condition.record[key]


def test_itm_chk_9_the_record_names_what_changed_the_check_for_the_next_turn() -> None:
    """ITM-CHK-9: the answered tag carries ``effects`` and ``from`` (what the GM reads in the
    next turn), and its sentence gives the total those changes made."""
    g = _game("sum-2d6")
    state = _state(g, "sum-2d6", conditions=["rattled"], bag=[])
    answer = _check(g, state, 'skill="sneak" dc="9"')
    written = answer.to_json()
    assert (written["record"]["effects"], written["record"]["from"]) == ("-1", "Rattled")
    assert f"= {answer.record['total']}" in answer.text


def test_itm_chk_10_the_gm_is_told_the_engine_applies_these_changes() -> None:
    """ITM-CHK-10: the instructions say the engine applies conditions and items itself, so
    the GM must not add them again."""
    text = instructions(_game("sum-2d6"))
    assert "gmtags rolls the dice and applies conditions and items itself: add no modifiers" \
        in text
