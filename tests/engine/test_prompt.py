"""The GM's INVENTORY block and instructions (ITM-SHOW-3/4, ITM-MONEY-6/7, ITM-RCHG-7,
ITM-BLOCK-11, ITM-CMD-3/4)."""

from __future__ import annotations

from helpers import answer, fixture_json, harrow, harrow_party
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_ruleset, start_state
from engine.actions.describe import effect_text, item_line
from engine.rules.state import Stack
from engine.text.prompt import StackLines, instructions, inventory_block, stack_line

GAME = harrow()


def document_with(**entries):
    document = fixture_json("rulesets/harrow.json")
    document["capabilityApi"] = "1.813"
    for entry_id, item in entries.items():
        document["catalogs"][0]["entries"].append({"id": entry_id, "label": item.pop("label"),
                                                   "item": item})
    return document


def test_itm_show_3_the_spec_example_exactly():
    game = load_ruleset(document_with(axe={"label": "Hand axe", "category": "weapon",
                                           "rarity": "common", "tags": ["thrown"],
                                           "stats": {"damage": "1d6", "reach": "close"}}))
    assert item_line(game, "Hand axe", game.items["kit/axe"].item) == \
        "Hand axe [Weapon, Common, Thrown; Damage 1d6, Reach close]"


def test_itm_block_11_a_hidden_stat_never_reaches_the_gm():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["stats"][0]["promptVisible"] = False  # bulk
    game = load_ruleset(document)
    line = item_line(game, "Hand axe", game.items["kit/hand-axe"].item)
    assert line == "Hand axe [Weapon, Common, Thrown; Damage 1d6, Reach close]"
    assert "Bulk" not in inventory_block(game, start_state(game, fixture_json("parties/harrow.json")))


def test_itm_show_4_worn_effect_next_to_the_item():
    game = load_ruleset(document_with(coat={
        "label": "Creaky coat", "category": "armor", "slots": {"body": 1},
        "worn": {"modifiers": [{"to": "checks", "skills": ["sneak"], "flat": -1}]}}))
    assert effect_text(game, {"modifiers": [{"to": "checks", "skills": ["sneak"], "flat": -1}]}) \
        == "-1 on checks (Sneak)"
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, _ = answer(game, state, '[inventory: action="add" item="Creaky coat"]')
    assert stack_line(game, new, new.characters[0].bag[-1]) == \
        "- Creaky coat [Armor] ×1 (worn: -1 on checks (Sneak))"


def test_itm_money_6_7_purse_and_costs_in_the_block():
    block = inventory_block(GAME, harrow_party(GAME))
    assert "Ada (Coin worth 67 pennies):" in block
    assert "- Rope [Gear, Common; Bulk 1] ×1 (costs 4 pennies)" in block
    empty = harrow_party(GAME)
    empty = empty.with_character(1, empty.characters[1].model_copy(update={"bag": ()}))
    assert "Bram the Quiet (no coins):\n  slots: Body 0/1, Hands 0/2\n- nothing" in \
        inventory_block(GAME, empty)


def test_itm_rchg_7_charges_left():
    game = load_ruleset(document_with(wand={
        "label": "Wand", "category": "gear", "charges": {"max": 3},
        "use": {"kind": "heal", "free": True, "amount": {"flat": 1}, "charges": 1}}))
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, _ = answer(game, state, '[inventory: action="add" item="Wand"]')
    spent = new.characters[0].bag[-1].model_copy(update={"charges": 2})
    assert stack_line(game, new, spent) == \
        "- Wand [Gear] ×1 (use (Free): heals 1, 1 of 3 charges; 2 of 3 charges left)"  # USE-25


def test_itm_cmd_4_load_slots_and_bound_items():
    document = document_with(amulet={"label": "Amulet", "category": "gear", "binds": {}})
    document["items"]["binding"] = {"label": "Attunement", "max": {"abilityScore": "heart"}}
    document["items"]["carry"] = {"stat": "bulk", "encumberedAbove": {"const": 1},
                                  "limit": {"const": 6}, "unit": "lb"}
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, _ = answer(game, state, '[inventory: action="add" item="Amulet" who="Ada"] '
                                 '[inventory: action="bind" item="Amulet"]')
    block = inventory_block(game, new)
    assert ("Ada (Coin worth 67 pennies):\n"
            "  load 2 lb, encumbered above 1 lb, limit 6 lb (encumbered)\n"
            "  slots: Body 0/1, Hands 1/2\n"
            "  Attunement: 1 of 1 (Amulet)\n") in block
    assert "- Amulet [Gear] ×1 (bound)" in block


def test_itm_cmd_3_instructions_name_only_the_commands_the_ruleset_has():
    text = instructions(GAME)
    assert 'action="equip"' in text and 'action="unequip"' in text
    assert 'action="bind"' not in text
    document = fixture_json("rulesets/harrow.json")
    document["items"]["binding"] = {"label": "Attunement", "max": {"const": 1}}
    assert 'action="bind"' in instructions(load_ruleset(document))
    bare = fixture_json("rulesets/harrow.json")
    bare["items"]["slots"] = []
    for entry in bare["catalogs"][0]["entries"]:
        entry["item"].pop("slots", None)
    assert 'action="equip"' not in instructions(load_ruleset(bare))


def test_the_block_is_deterministic():
    assert inventory_block(GAME, harrow_party(GAME)) == inventory_block(GAME, harrow_party(GAME))


HARROW = harrow()
ROWS = st.tuples(st.sampled_from([*sorted(HARROW.items), None]),
                 st.sampled_from([None, None, "penny", "crown"]), st.integers(1, 9),
                 st.booleans())


def stack_of(row: tuple[str | None, str | None, int, bool]) -> Stack:
    ref, coin, count, equipped = row
    return Stack(name=coin or ref or "Pebble", item=None if coin else ref, coin=coin,
                 count=count, equipped=equipped and not coin)


@settings(max_examples=100, deadline=None)
@given(st.lists(ROWS, max_size=15),
       st.lists(st.tuples(st.sampled_from(["append", "count", "drop", "front"]), ROWS,
                          st.integers(0, 100)), max_size=20))
def test_remembered_bag_lines_are_the_stack_lines_after_any_changes(start, steps) -> None:
    """ITM-SHOW-3: a bag's lines reused from the last bag rendered are the lines written
    from scratch, wherever the bag changed."""
    state = harrow_party(HARROW)
    lines = StackLines()
    bag = tuple(stack_of(row) for row in start)
    for action, row, pick in steps:
        if action == "append":
            bag = (*bag, stack_of(row))
        elif action == "front":
            bag = (stack_of(row), *bag)
        elif bag and action == "count":
            at = pick % len(bag)
            bag = (*bag[:at], bag[at].model_copy(update={"count": pick % 9 + 1}), *bag[at + 1:])
        elif bag:
            at = pick % len(bag)
            bag = bag[:at] + bag[at + 1:]
        assert lines.bag_lines(HARROW, state, bag) == [
            stack_line(HARROW, state, s) for s in bag if s.coin is None]
