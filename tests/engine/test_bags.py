"""``[inventory: action="add"/"remove"]`` on bags and stacks (spec/items.md §5.2–5.5)."""

from __future__ import annotations

import copy

import pytest
from helpers import answer, bag, fixture_json, harrow, harrow_party

from engine import load_ruleset, start_state
from engine.rules.game import MAX_STACKS_PER_BAG

GAME = harrow()


@pytest.fixture()
def state():
    return harrow_party(GAME)


def test_itm_name_1_label_ignoring_case_adds_the_catalog_item(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="HAND AXE" who="Bram the Quiet"]')
    assert reply.ok and reply.reason is None
    stack = new.characters[1].bag[-1]
    assert (stack.name, stack.item, stack.count) == ("Hand axe", "kit/hand-axe", 1)
    assert reply.text == "Added Hand axe ×1 to Bram the Quiet's bag."


def test_itm_name_2_first_listed_label_wins():
    document = fixture_json("rulesets/harrow.json")
    twin = copy.deepcopy(document["catalogs"][0]["entries"][4])
    twin["id"] = "rope-2"
    document["catalogs"][0]["entries"].append(twin)
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [_reply] = answer(game, state, '[inventory: action="add" item="rope" who="Bram the Quiet"]')
    assert new.characters[1].bag[-1].item == "kit/rope"


def test_add_without_who_goes_to_the_players_bag_without_carry(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Poultice" count="2"]')
    assert reply.ok
    assert ("Poultice", 2) in bag(new, "Ada")


def test_itm_stack_1_overflow_fills_the_stack_then_starts_new_ones(state):
    """Torch stacks hold 5: Bram has 3; adding 9 gives 5, 5, 2."""
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Torch" count="9" who="Bram the Quiet"]')
    assert reply.ok
    assert [c for n, c in bag(new, "Bram the Quiet") if n == "Torch"] == [5, 5, 2]


def test_itm_inv_3_same_item_merges_into_the_existing_stack(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="rope"]')
    assert bag(new, "Ada").count(("Rope", 2)) == 1


def test_equipped_stack_is_not_merged_into(state):
    new, _ = answer(GAME, state, '[inventory: action="add" item="Hand axe"]')
    axes = [s for s in new.characters[0].bag if s.item == "kit/hand-axe"]
    assert [(s.count, s.equipped) for s in axes] == [(1, True), (1, False)]


def test_itm_free_3_unknown_name_becomes_a_plain_item(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Old boot" count="2"]')
    assert reply.ok
    stack = new.characters[0].bag[-1]
    assert (stack.name, stack.item, stack.coin, stack.count) == ("Old boot", None, None, 2)


def test_itm_free_4_native_false_refuses_a_plain_name_and_changes_nothing():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["native"] = False
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    new, [reply] = answer(game, state, '[inventory: action="add" item="Old boot"]')
    assert (reply.ok, reply.reason) == (False, "not-ruleset-item")
    assert new is state


def test_itm_free_5_native_false_still_adds_more_of_something_held():
    document = fixture_json("rulesets/harrow.json")
    document["items"]["native"] = False
    game = load_ruleset(document)
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["bag"].append({"name": "Lucky stone", "count": 1})
    state = start_state(game, party)
    new, [reply] = answer(game, state, '[inventory: action="add" item="lucky stone"]')
    assert reply.ok
    assert ("Lucky stone", 2) in bag(new, "Ada")


def test_itm_svc_3_a_service_is_never_added_and_changes_nothing(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Room at the inn"]')
    assert (reply.ok, reply.reason) == (False, "service")
    assert new is state


def test_coins_by_name_are_coin_stacks(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="shilling" count="2" who="Ada"]')
    assert reply.ok
    stack = new.characters[0].bag[-1]
    assert (stack.coin, stack.name, stack.count) == ("shilling", "shillings", 2)


@pytest.mark.parametrize(("tag", "reason"), [
    ('[inventory: action="add"]', "missing-attribute"),
    ('[inventory: action="add" item="Rope" count="0"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="-3"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="two"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="99999999999"]', "bad-count"),
    ('[inventory: action="add" item="Rope" count="1e400"]', "bad-count"),
    ('[inventory: action="add" item="Rope" who="Nobody"]', "unknown-character"),
    ('[inventory: action="remove"]', "missing-attribute"),
    ('[inventory: action="remove" item="Longbow"]', "not-held"),
    ('[inventory: action="remove" item="Rope" count="2"]', "not-enough"),
    ('[inventory: action="remove" item="Rope" who="Nobody"]', "unknown-character"),
    ('[inventory: action="remove" item="Rope" count="x"]', "bad-count"),
    ('[inventory: action="dance" item="Rope"]', "unknown-action"),
    ('[inventory: item="Rope"]', "unknown-action"),
    ('[inventory: action="add" item=]', "malformed"),
])
def test_every_refusal_reason_leaves_the_state_unchanged(state, tag, reason):
    new, [reply] = answer(GAME, state, tag)
    assert (reply.ok, reply.reason) == (False, reason)
    assert reply.text
    assert new is state


def test_oq_4_a_bag_takes_what_its_stacks_allow_and_the_rest_stays_behind(state):
    """OQ-4 with OQ-13: a bag takes at most MAX_STACKS_PER_BAG stacks; arrows stack 20."""
    count = 20 * (MAX_STACKS_PER_BAG + 1)
    new, [reply] = answer(GAME, state, f'[inventory: action="add" item="Arrow" count="{count}" who="Ada"]')
    assert reply.ok
    assert len(new.characters[0].bag) == MAX_STACKS_PER_BAG
    placed = 20 * (MAX_STACKS_PER_BAG - len(state.characters[0].bag))
    assert reply.record["left"] == count - placed
    assert reply.text == (f"Added Arrow ×{placed} to Ada's bag. "
                          f"Arrow ×{count - placed} stays behind: nobody can carry more.")


def test_oq_4_a_full_bag_is_refused_and_changes_nothing(state):
    count = 20 * MAX_STACKS_PER_BAG
    full, _ = answer(GAME, state, f'[inventory: action="add" item="Arrow" count="{count}" who="Ada"]')
    new, [reply] = answer(GAME, full, '[inventory: action="add" item="Longbow" who="Ada"]')
    assert (reply.ok, reply.reason) == (False, "too-many-stacks")
    assert new is full


def test_remove_takes_loose_stacks_before_the_equipped_one(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Hand axe"]')
    new, [reply] = answer(GAME, added, '[inventory: action="remove" item="hand axe"]')
    assert reply.ok
    axes = [s for s in new.characters[0].bag if s.item == "kit/hand-axe"]
    assert [(s.count, s.equipped) for s in axes] == [(1, True)]


def test_remove_across_stacks_takes_from_the_last_stack_first(state):
    added, _ = answer(GAME, state, '[inventory: action="add" item="Torch" count="9" who="Bram the Quiet"]')
    new, [reply] = answer(GAME, added, '[inventory: action="remove" item="Torch" count="4" who="Bram the Quiet"]')
    assert reply.ok
    assert [c for n, c in bag(new, "Bram the Quiet") if n == "Torch"] == [5, 3]
    assert reply.text == "Removed Torch ×4 from Bram the Quiet's bag."


def test_remove_finds_a_catalog_item_by_identity_not_display_name(state):
    renamed = state.with_character(0, state.characters[0].model_copy(update={"bag": tuple(
        s.model_copy(update={"name": "Grandpa's axe"}) if s.item == "kit/hand-axe" else s
        for s in state.characters[0].bag)}))
    new, [reply] = answer(GAME, renamed, '[inventory: action="remove" item="Hand axe"]')
    assert reply.ok
    assert all(s.item != "kit/hand-axe" for s in new.characters[0].bag)


def test_engine_only_and_unknown_attributes_are_ignored_and_reported(state):
    _new, [reply] = answer(GAME, state,
                          '[inventory: action="add" item="Rope" ok="false" colour="red"]')
    assert reply.ok
    assert reply.notes == ('ignored "ok": the engine works that out itself',
                           'ignored unknown attribute "colour"')


def test_apply_reply_never_mutates_its_input(state):
    before = state.canonical()
    answer(GAME, state, '[inventory: action="add" item="Torch" count="9" who="Bram the Quiet"] '
                        '[inventory: action="remove" item="Rope"]')
    assert state.canonical() == before


def test_place_tags_are_answered_first_but_answers_keep_text_order(state):
    _, replies = answer(GAME, state, '[inventory: action="add" item="Rope"] '
                                     '[place: name="Millbrook" size="market town"]')
    assert [r.tag.kind for r in replies] == ["inventory", "place"]


# --- comma lists in item= and items= (issue 28; ITM-NAME-1 for each name) -------------------


def _with_hooded_lantern(native: bool = True):
    """Harrow with an item whose label holds a comma, and optionally ``native: false``."""
    document = fixture_json("rulesets/harrow.json")
    entries = document["catalogs"][0]["entries"]
    hooded = copy.deepcopy(next(e for e in entries if e["id"] == "silver-lantern"))
    hooded.update({"id": "hooded-lantern", "label": "Lantern, hooded"})
    entries.append(hooded)
    document["items"]["native"] = native
    game = load_ruleset(document)
    return game, start_state(game, fixture_json("parties/harrow.json"))


def test_itm_name_1_a_comma_list_adds_each_thing_in_one_answer(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Bronze Key, Health Potion"]')
    assert reply.ok
    assert reply.text == "Added Bronze Key ×1 to Ada's bag. Added Health Potion ×1 to Ada's bag."
    assert [r["name"] for r in reply.record["items"]] == ["Bronze Key", "Health Potion"]
    assert ("Bronze Key", 1) in bag(new, "Ada") and ("Health Potion", 1) in bag(new, "Ada")


def test_itm_name_1_items_without_an_action_adds_each_thing(state):
    new, [reply] = answer(GAME, state, '[inventory: items="Bronze Key, Map"]')
    assert reply.ok and reply.reason is None and reply.notes == ()
    assert ("Bronze Key", 1) in bag(new, "Ada") and ("Map", 1) in bag(new, "Ada")


def test_itm_name_1_a_list_count_is_each_things_count(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" items="Torch, Poultice" count="2"'
                                       ' who="Bram the Quiet"]')
    assert reply.ok
    assert ("Torch", 5) in bag(new, "Bram the Quiet") and ("Poultice", 2) in bag(new, "Bram the Quiet")


def test_itm_name_1_a_ruleset_label_with_a_comma_stays_one_item():
    game, state = _with_hooded_lantern()
    _, [reply] = answer(game, state, '[inventory: action="add" item="lantern, Hooded"]')
    assert reply.ok and reply.record["item"] == "kit/hooded-lantern"
    _, [reply] = answer(game, state, '[inventory: action="add" item="Lantern, hooded, Rope"]')
    assert reply.ok and [r["item"] for r in reply.record["items"]] == ["kit/hooded-lantern",
                                                                        "kit/rope"]


def test_itm_name_1_a_plain_item_in_the_bag_with_a_comma_stays_one_item():
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["bag"].append({"name": "Cloak, patched", "count": 1})
    held = start_state(GAME, party)
    new, [reply] = answer(GAME, held, '[inventory: action="remove" item="Cloak, patched"]')
    assert reply.ok and reply.text == "Removed Cloak, patched ×1 from Ada's bag."
    assert ("Cloak, patched", 1) not in bag(new, "Ada")
    new, [reply] = answer(GAME, held, '[inventory: action="add" item="Cloak, patched, Map"]')
    assert reply.ok and ("Cloak, patched", 2) in bag(new, "Ada") and ("Map", 1) in bag(new, "Ada")


def test_itm_name_1_a_list_remove_is_all_or_nothing(state):
    new, [reply] = answer(GAME, state, '[inventory: action="remove" item="Rope, Map"]')
    assert not reply.ok and reply.reason == "not-held"
    assert reply.text == "Ada has no Map. Nothing in the list was removed."
    assert new is state
    held, _ = answer(GAME, state, '[inventory: action="add" item="Map"]')
    new, [reply] = answer(GAME, held, '[inventory: action="remove" items="Rope, Map"]')
    assert reply.ok and reply.text == ("Removed Rope ×1 from Ada's bag. "
                                       "Removed Map ×1 from Ada's bag.")
    assert ("Rope", 1) not in bag(new, "Ada") and ("Map", 1) not in bag(new, "Ada")


def test_itm_name_1_a_list_remove_of_one_thing_twice_needs_two(state):
    new, [reply] = answer(GAME, state, '[inventory: action="remove" item="Rope, Rope"]')
    assert (reply.ok, reply.reason, new is state) == (False, "not-held", True)


def test_itm_free_4_a_list_add_is_all_or_nothing():
    game, state = _with_hooded_lantern(native=False)
    new, [reply] = answer(game, state, '[inventory: action="add" item="Rope, Bronze Key"]')
    assert (reply.ok, reply.reason) == (False, "not-ruleset-item")
    assert reply.text == '"Bronze Key" is not an item of this ruleset. Nothing in the list was added.'
    assert new is state


def test_itm_svc_3_a_service_in_a_list_refuses_the_whole_list(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Rope, Room at the inn"]')
    assert (reply.ok, reply.reason, new is state) == (False, "service", True)


def test_a_list_of_too_many_things_is_refused_unchanged(state):
    names = ", ".join(f"Pebble {n}" for n in range(21))
    new, [reply] = answer(GAME, state, f'[inventory: action="add" item="{names}"]')
    assert (reply.ok, reply.reason, new is state) == (False, "too-many-things", True)
    names = ", ".join(f"Pebble {n}" for n in range(20))
    new, [reply] = answer(GAME, state, f'[inventory: action="add" item="{names}"]')
    assert reply.ok and len(reply.record["items"]) == 20


def test_a_huge_comma_list_is_refused_without_looking_up_every_part(state):
    """Nothing a model writes makes the engine loop without bound: a list is cut off by its
    length before any name is looked up."""
    text = '[inventory: action="add" item="' + "a," * 100_000 + '"]'
    new, [reply] = answer(GAME, state, text)
    assert (reply.reason, new is state) == ("too-many-things", True)


def test_empty_parts_of_a_list_are_skipped(state):
    _, [reply] = answer(GAME, state, '[inventory: action="add" item=", Map, ,"]')
    assert reply.ok and reply.text == "Added Map ×1 to Ada's bag."


def test_itm_prop_a_proposal_is_one_item_whatever_its_name_holds(state):
    new, [reply] = answer(GAME, state, '[inventory: action="add" item="Coat, warden\'s" '
                                       'like="Leather coat"]')
    assert reply.ok and "items" not in reply.record
    assert any(i.name == "Coat, warden's" for i in new.invented)
