"""set, give, equip, unequip, bind, unbind; slots, binding and curses
(spec/items.md §5.4, §5.7, §5.8, §5.11)."""

from __future__ import annotations

import pytest
from helpers import answer, bag, fixture_json, harrow

from engine import load_ruleset, start_state

HARROW = harrow()


def gear_document():
    """Harrow with attunement up to Heart (Ada 1, Bram 2) and a few binding items."""
    document = fixture_json("rulesets/harrow.json")
    document["capabilityApi"] = "1.813"
    document["items"]["binding"] = {"label": "Attunement", "max": {"abilityScore": "heart"}}
    document["catalogs"][0]["entries"] += [
        {"id": "amulet", "label": "Amulet", "item": {"category": "gear", "binds": {}}},
        {"id": "charm", "label": "Charm", "item": {"category": "gear", "binds": {}}},
        {"id": "thorn-ring", "label": "Ring of thorns",
         "item": {"category": "gear", "slots": {"hands": 1}, "binds": {"cursed": True}}},
        {"id": "wand", "label": "Wand", "item": {"category": "gear", "charges": {"max": 3},
                                                  "use": {"kind": "heal", "free": True, "amount": {"flat": 1}, "charges": 1}}},
    ]
    return document


GAME = load_ruleset(gear_document())


@pytest.fixture()
def state():
    return start_state(GAME, fixture_json("parties/harrow.json"))


def stacks(state, who="Ada", item=None):
    character = next(c for c in state.characters if c.name == who)
    return [(s.count, s.equipped, s.bound) for s in character.bag if item is None or s.item == item]


def test_itm_slot_1_2_equip_splits_one_off_a_larger_stack(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Hand axe" count="2" who="Bram the Quiet"]')
    new, [reply] = answer(GAME, added, '[inventory: action="equip" item="hand axe" who="Bram the Quiet"]')
    assert reply.ok and reply.text == "Bram the Quiet equips Hand axe."
    assert stacks(new, "Bram the Quiet", "kit/hand-axe") == [(1, False, False), (1, True, False)]


def test_itm_slot_1_equip_needs_free_slots_refused_and_unchanged(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Longbow" who="Ada"]')
    new, [reply] = answer(GAME, added, '[inventory: action="equip" item="Longbow"]')
    assert (reply.ok, reply.reason) == (False, "slots-full")
    assert reply.text == "Ada has no free Hands slot for Longbow; unequip something first."
    assert new is added


def test_unequip_frees_the_slot_and_merges_back(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Hand axe"]')
    new, [reply] = answer(GAME, added, '[inventory: action="unequip" item="Hand axe"]')
    assert reply.ok and reply.text == "Ada unequips Hand axe."
    assert stacks(new, item="kit/hand-axe") == [(2, False, False)]
    bow, _ = answer(GAME, new, '[inventory: action="add" item="Longbow"] '
                               '[inventory: action="equip" item="Longbow"]')
    assert stacks(bow, item="kit/longbow") == [(1, True, False)]


def test_itm_bind_1_itm_block_13_14_itm_cmd_2_binding_up_to_max_from_the_bearers_own_sheet(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Amulet" who="Ada"] '
                                   '[inventory: action="add" item="Charm" who="Ada"] '
                                   '[inventory: action="add" item="Amulet" who="Bram the Quiet"] '
                                   '[inventory: action="add" item="Charm" who="Bram the Quiet"]')
    ada, [one, two] = answer(GAME, added, '[inventory: action="bind" item="Amulet"] '
                                          '[inventory: action="bind" item="Charm"]')
    assert one.ok and one.text == "Ada binds Amulet (Attunement)."
    assert (two.ok, two.reason) == (False, "binding-full")
    assert two.text == "Ada already has 1 of 1 items bound (Attunement); unbind one first."
    _bram, replies = answer(GAME, ada, '[inventory: action="bind" item="Amulet" who="Bram the Quiet"] '
                                      '[inventory: action="bind" item="Charm" who="Bram the Quiet"]')
    assert [r.ok for r in replies] == [True, True]  # Heart 2


def test_itm_bind_2_a_character_without_a_sheet_reads_an_empty_sheet():
    from engine.rules.gear import binding_max
    assert binding_max(GAME, None) == 1  # Heart's default


def test_itm_bind_3_4_itm_entry_17_oq_11_cursed_item_holds_until_the_gm_unbinds_it(state):
    ring, _ = answer(GAME, state, '[inventory: action="add" item="Ring of thorns"] '
                                  '[inventory: action="equip" item="Ring of thorns"] '
                                  '[inventory: action="bind" item="Ring of thorns"]')
    assert stacks(ring, item="kit/thorn-ring") == [(1, True, True)]
    for tag in ('[inventory: action="remove" item="Ring of thorns"]',
                '[inventory: action="give" item="Ring of thorns" to="Bram the Quiet"]',
                '[inventory: action="unequip" item="Ring of thorns"]',
                '[inventory: action="set" item="Ring of thorns" count="0"]'):
        new, [reply] = answer(GAME, ring, tag)
        assert (reply.ok, reply.reason) == (False, "cursed"), tag
        assert new is ring
    freed, [reply] = answer(GAME, ring, '[inventory: action="unbind" item="Ring of thorns"]')
    assert reply.ok and reply.text == "The curse on Ring of thorns ends; Ada unbinds it."
    gone, replies = answer(GAME, freed, '[inventory: action="unequip" item="Ring of thorns"] '
                                        '[inventory: action="remove" item="Ring of thorns"]')
    assert [r.ok for r in replies] == [True, True]
    assert stacks(gone, item="kit/thorn-ring") == []


def test_itm_entry_10_itm_stack_3_charges_stack_alone(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Wand" count="3"]')
    assert reply.ok
    assert stacks(new, item="kit/wand") == [(1, False, False)] * 3


def test_give_moves_from_one_bag_to_another(state):
    new, [reply] = answer(GAME, state, '[inventory: action="give" item="Rope" to="Bram the Quiet"]')
    assert reply.ok and reply.text == "Ada gives Rope ×1 to Bram the Quiet."
    assert ("Rope", 1) in bag(new, "Bram the Quiet")
    assert all(name != "Rope" for name, _ in bag(new, "Ada"))


def test_give_respects_stack_limits(state):
    more, _ = answer(GAME, state, '[inventory: action="add" item="Torch" count="4" who="Ada"]')
    new, [reply] = answer(GAME, more, '[inventory: action="give" item="Torch" count="4" to="Bram the Quiet"]')
    assert reply.ok
    assert [c for n, c in bag(new, "Bram the Quiet") if n == "Torch"] == [5, 2]


def test_set_adds_or_removes_the_difference(state):
    up, [reply] = answer(GAME, state, '[inventory: action="set" item="Torch" count="7" who="Bram the Quiet"]')
    assert reply.ok
    assert [c for n, c in bag(up, "Bram the Quiet") if n == "Torch"] == [5, 2]
    down, [reply] = answer(GAME, up, '[inventory: action="set" item="Torch" count="0" who="Bram the Quiet"]')
    assert reply.ok and reply.text == "Bram the Quiet now has Torch ×0."
    assert all(n != "Torch" for n, _ in bag(down, "Bram the Quiet"))


@pytest.mark.parametrize(("game", "tag", "reason"), [
    (HARROW, '[inventory: action="bind" item="Rope"]', "no-binding"),
    (HARROW, '[inventory: action="unbind" item="Rope"]', "no-binding"),
    (GAME, '[inventory: action="equip"]', "missing-attribute"),
    (GAME, '[inventory: action="equip" item="Rope"]', "not-equippable"),
    (GAME, '[inventory: action="equip" item="Hand axe"]', "already"),
    (GAME, '[inventory: action="equip" item="Longbow"]', "not-held"),
    (GAME, '[inventory: action="equip" item="Rope" who="Nobody"]', "unknown-character"),
    (GAME, '[inventory: action="unequip" item="Rope"]', "already"),
    (GAME, '[inventory: action="bind" item="Rope"]', "not-bindable"),
    (GAME, '[inventory: action="unbind" item="Rope"]', "already"),
    (GAME, '[inventory: action="give" item="Rope"]', "unknown-character"),
    (GAME, '[inventory: action="give" item="Rope" to="Nobody"]', "unknown-character"),
    (GAME, '[inventory: action="give" item="Rope" to="Ada"]', "already"),
    (GAME, '[inventory: action="give" item="Rope" count="2" to="Bram the Quiet"]', "not-enough"),
    (GAME, '[inventory: action="give" item="Longbow" to="Bram the Quiet"]', "not-held"),
    (GAME, '[inventory: action="give" item="Rope" count="x" to="Bram the Quiet"]', "bad-count"),
    (GAME, '[inventory: action="give" to="Bram the Quiet"]', "missing-attribute"),
    (GAME, '[inventory: action="set" item="Rope"]', "bad-count"),
    (GAME, '[inventory: action="set" item="Rope" count="-1"]', "bad-count"),
    (GAME, '[inventory: action="set" item="Room at the inn" count="1"]', "service"),
    (GAME, '[inventory: action="set" item="Rope" count="1" who="Nobody"]', "unknown-character"),
])
def test_every_gear_refusal_leaves_the_state_unchanged(game, tag, reason):
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, state, tag)
    assert (reply.ok, reply.reason) == (False, reason), reply.text
    assert reply.text
    assert new is state


def test_itm_cmd_1_no_slots_refuses_equip():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["slots"] = []
    for entry in document["catalogs"][0]["entries"]:
        entry["item"].pop("slots", None)
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["bag"][0]["equipped"] = False
    state = start_state(game, party)
    for action in ("equip", "unequip"):
        new, [reply] = answer(game, state, f'[inventory: action="{action}" item="Hand axe"]')
        assert (reply.ok, reply.reason) == (False, "no-slots")
        assert new is state


def test_set_under_native_false_refuses_a_new_plain_name():
    document = gear_document()
    document["items"]["native"] = False
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, state, '[inventory: action="set" item="Old boot" count="2"]')
    assert (reply.ok, reply.reason) == (False, "not-ruleset-item")
    assert new is state
