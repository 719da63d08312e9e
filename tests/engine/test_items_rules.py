"""Rules of spec/items.md §2–§6 and §15 not pinned elsewhere (issue 44): the item block's keys
and their defaults, item catalogs and entries, what reads items whatever ``native`` says, when
items are read, and the loot tables' shape and instructions."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import answer, bag, fixture_json, problems_of, put

from engine import Game, State, load_ruleset, start_state
from engine.rules.game import DEFAULT_STACK
from engine.rules.sheet import SheetView
from engine.text.host import describe_stack, ruleset_items
from engine.text.prompt import instructions, inventory_block

EMBER = fixture_json("rulesets/ember-roads.json")
GRAVE = fixture_json("rulesets/gravewatch.json")


def ember(document: dict[str, Any] | None = None) -> tuple[Game, State]:
    game = load_ruleset(document if document is not None else EMBER)
    return game, start_state(game, fixture_json("parties/ember-roads.json"))


def without(*keys: str) -> dict[str, Any]:
    """Ember Roads with these keys of the item block left out."""
    document = copy.deepcopy(EMBER)
    for key in keys:
        document["items"].pop(key, None)
    return document


# --- §2-§3: the block ---------------------------------------------------------------------------

def test_itm_gen_1_itm_block_1_the_block_is_the_optional_top_level_items() -> None:
    """ITM-BLOCK-1: ``items`` is a top-level key and optional — a ruleset without it and
    without item catalogs loads (it has no items); ITM-GEN-1: with it, armour, weapons,
    potions, gear, ammunition and money are all written in its one vocabulary (Ember Roads'
    weapon, armour, remedy and ammunition catalog entries and its coins)."""
    document = fixture_json("rulesets/sum-2d6.json")
    document.pop("items")
    document["catalogs"] = []
    assert problems_of(document) == []
    assert load_ruleset(document).items == {}
    game, _ = ember()
    categories = {entry.item.category for entry in game.items.values()}
    assert {"weapon", "armor", "remedy", "ammunition"} <= categories
    assert [f.id for f in game.ruleset.items.currencies] == ["coin", "salt", "gold"]


@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["catalogs"][0]["entries"][1]["item"].pop("category"),
     '/catalogs/0/entries/1/item: missing required key "category"'),
    (put(("catalogs", 0, "entries", 1, "item", "category"), ["weapon", "armor"]),
     "/catalogs/0/entries/1/item/category: Input should be a valid string"),
    (put(("catalogs", 0, "entries", 1, "item", "category"), "sword"),
     '/catalogs/0/entries/1/item/category: unknown category "sword"'),
])
def test_itm_block_3_every_item_has_exactly_one_category(change: Any, problem: str) -> None:
    """ITM-BLOCK-3 (with ITM-ENTRY-3): one category, a block category, for every item."""
    assert problems_of(EMBER, change) == [problem]


@pytest.mark.parametrize(("change", "problem"), [
    (put(("items", "stats", 0, "type"), "colour"),
     "/items/stats/0/type: Input should be 'number', 'text', 'boolean', 'enum' or 'dice'"),
    (lambda d: d["items"]["stats"][3].pop("label"),
     '/items/stats/3: missing required key "label"'),
    (put(("items", "stats", 3, "values"), []),
     "/items/stats/3/values: List should have at least 1 item after validation, not 0"),
    (put(("items", "stats", 3, "default"), "grace"),
     '/items/stats/3/default: "grace" is not one of the values of "swing"'),
])
def test_itm_block_8_a_stat_is_declared_like_a_list_column(change: Any, problem: str) -> None:
    """ITM-BLOCK-8: an ``id``, a ``label`` and a ``type`` of number, text, boolean, enum or
    dice, with its range, ``values`` (an enum's) and a ``default`` the stat can take."""
    assert problems_of(EMBER, change) == [problem]


def test_itm_block_10_prompt_visible_defaults_to_true() -> None:
    """ITM-BLOCK-10: a stat without ``promptVisible`` is shown to the GM next to the item;
    with ``false`` it is the player's only (the details panel, ITM-BLOCK-11)."""
    game, state = ember()
    assert "Bulk" in inventory_block(game, state)
    document = copy.deepcopy(EMBER)
    document["items"]["stats"][0]["promptVisible"] = False
    game, state = ember(document)
    assert "Bulk" not in inventory_block(game, state)
    juno = next(i for i, s in enumerate(state.characters[1].bag) if s.item is not None)
    details = describe_stack(game, state, "Juno", juno)
    assert details is not None and "Bulk" in details.stats


@pytest.mark.parametrize(("change", "problem"), [
    (put(("items", "carry", "stat"), "damage"),
     '/items/carry/stat: carry.stat "damage" is not a number stat of the block'),
    (put(("items", "stats", 0, "min"), -1),
     '/items/carry/stat: the weight stat "bulk" needs a min of 0 or more'),
])
def test_itm_block_17_the_weight_is_a_number_stat_from_0(change: Any, problem: str) -> None:
    """ITM-BLOCK-17: ``carry.stat`` names a number stat whose ``min`` is 0 or more."""
    assert problems_of(EMBER, change) == [problem]


def test_itm_block_16_without_carry_nobody_is_ever_encumbered() -> None:
    """ITM-BLOCK-16 (with ITM-BLOCK-19): ``carry`` is optional; without it weight means
    nothing, so a thousand sacks of ore go into one bag and the GM sees no load."""
    document = without("carry")
    for family in document["items"]["currencies"]:
        family.pop("perWeight", None)
    game, state = ember(document)
    new, [reply] = answer(game, state, '[inventory: action="add" item="Rope" count="1000" '
                                       'who="Ada"]')
    assert reply.ok and ("Rope", 1000) in bag(new, "Ada")
    assert "encumbered" not in inventory_block(game, new)


def test_itm_block_21_propose_defaults_to_true() -> None:
    """ITM-BLOCK-21: without ``propose`` the GM may invent (``false``: ITM-PROP-2)."""
    game, state = ember(without("propose"))
    _new, [reply] = answer(game, state, '[inventory: action="add" item="Ember brooch" '
                                       'category="gear" who="Juno"]')
    assert reply.ok and reply.record["invented"] == "Ember brooch"


def test_itm_block_22_native_defaults_to_true_and_false_still_lets_the_gm_invent() -> None:
    """ITM-BLOCK-22: without ``native`` a name that is no item becomes a plain item; with
    ``native: false`` it is refused (ITM-FREE-4), but the GM can still invent an item in the
    ruleset's terms."""
    game, state = ember(without("native"))
    new, [reply] = answer(game, state, '[inventory: action="add" item="Old boot" who="Ada"]')
    assert reply.ok and ("Old boot", 1) in bag(new, "Ada")
    document = without("native")
    document["items"]["native"] = False
    game, state = ember(document)
    same, [reply] = answer(game, state, '[inventory: action="add" item="Old boot" who="Ada"]')
    assert (reply.ok, reply.reason, same is state) == (False, "not-ruleset-item", True)
    new, [reply] = answer(game, state, '[inventory: action="add" item="Ember brooch" '
                                       'category="gear" who="Juno"]')
    assert reply.ok and reply.record["invented"] == "Ember brooch"


def test_itm_block_23_freeform_defaults_to_plain() -> None:
    """ITM-BLOCK-23: without ``freeform`` what the player types that is no item is kept as a
    plain item (``refuse``: ITM-FREE-2)."""
    from engine import TurnContext
    from engine.actions.events import apply_event
    game, state = ember(without("freeform"))
    new, result = apply_event(game, state, {"action": "add", "item": "Lucky pebble"}, "Ada",
                              TurnContext(state.seed, (0, 0)))
    assert result.ok and new.characters[0].bag[-1].plain


def test_itm_block_25_the_block_holds_only_its_own_keys() -> None:
    """ITM-BLOCK-25: the block's later keys (startingGear, market, namesItAt, passiveBase,
    warnBy, revealsFakes) load where §17, §18 and §20 define them (the fixtures hold each);
    any other key is refused with its pointer."""
    written = set(GRAVE["items"]) | set(EMBER["items"])
    assert {"startingGear", "market", "namesItAt", "passiveBase", "warnBy",
            "revealsFakes"} <= written
    assert problems_of(GRAVE) == [] and problems_of(EMBER) == []
    assert problems_of(GRAVE, put(("items", "shop"), {})) == ['/items/shop: unknown key "shop"']


# --- §4: item catalogs and entries ---------------------------------------------------------------

@pytest.mark.parametrize(("change", "problem"), [
    (put(("catalogs", 0, "feeds"), "sheet"), "/catalogs/0/feeds: an item catalog declares no feeds"),
    (put(("catalogs", 0, "entries", 1, "mechanics"), {"kind": "Spell"}),
     '/catalogs/0/entries/1/mechanics: an item entry carries no "mechanics"'),
])
def test_itm_cat_1_3_an_item_catalog_feeds_nothing_and_an_item_has_no_mechanics(
        change: Any, problem: str) -> None:
    """ITM-CAT-1: an item catalog declares no ``feeds``; ITM-CAT-3: an item carries no
    ``mechanics`` (what it does is in its ``item``)."""
    assert problems_of(EMBER, change) == [problem]


def test_itm_entry_1_2_the_label_is_the_items_name_and_the_summary_its_words() -> None:
    """ITM-ENTRY-1/2: an entry's ``label`` is the item's name — what an add finds and the
    stack is called — and its ``summary`` and ``filters`` work as for any entry (shown in the
    details and the picker; the picker filters by them, tests/engine/test_host.py)."""
    game, state = ember()
    entry = game.items["outfitter/hunting-bow"]
    new, [reply] = answer(game, state, '[inventory: action="add" item="hunting BOW" who="Ada"]')
    assert reply.ok and reply.record["name"] == entry.label == "Hunting bow"
    index = next(i for i, s in enumerate(new.characters[0].bag) if s.item == entry.ref)
    details = describe_stack(game, new, "Ada", index)
    assert details is not None and details.name == "Hunting bow"
    assert details.summary == entry.entry.summary
    row = next(r for r in ruleset_items(game, state) if r.ref == entry.ref)
    assert (row.name, row.summary) == ("Hunting bow", entry.entry.summary)


def test_itm_entry_9_without_stack_a_stack_holds_as_many_as_any() -> None:
    """ITM-ENTRY-9, OQ-4: without ``stack`` an item stacks up to the engine's one constant
    (999,999): a thousand arrows more go into the one stack."""
    document = without("carry")
    for family in document["items"]["currencies"]:
        family.pop("perWeight", None)
    game, state = ember(document)
    axe = game.items["outfitter/hand-axe"]
    assert axe.item.stack is None and axe.stack_limit == DEFAULT_STACK == 999_999
    new, [reply] = answer(game, state, '[inventory: action="add" item="Hand axe" count="1000" '
                                       'who="Juno"]')
    assert reply.ok
    assert [s.count for s in new.characters[1].bag if s.item == axe.ref] == [1000]


def test_itm_entry_12_the_cost_is_listed_and_shown_to_the_gm() -> None:
    """ITM-ENTRY-12: the picker lists an item's cost and the GM sees it next to the item."""
    game = load_ruleset(GRAVE)
    state = start_state(game, fixture_json("parties/gravewatch.json"))
    pistol = next(r for r in ruleset_items(game, state) if r.name == "Watch pistol")
    assert pistol.cost == "costs 2 crowns"
    assert "Watch pistol [Arm, Common; Weight 3] ×1 (equipped; attack (Act): " in \
        inventory_block(game, state)
    assert "costs 2 crowns)" in inventory_block(game, state)


def test_itm_entry_15_16_a_restriction_is_shown_and_not_enforced() -> None:
    """ITM-ENTRY-16: ``binds.restriction`` says who may bind the Dawn bell (a sworn warden) in
    the details; anybody binds it all the same (Mira has sworn nothing)."""
    game = load_ruleset(GRAVE)
    state = start_state(game, fixture_json("parties/gravewatch.json"))
    state, [reply] = answer(game, state, '[inventory: action="add" item="Dawn bell" who="Mira"]')
    assert reply.ok
    index = next(i for i, s in enumerate(state.characters[1].bag) if s.item == "kit/dawn-bell")
    details = describe_stack(game, state, "Mira", index)
    assert details is not None and details.restriction == "a sworn warden"
    new, replies = answer(game, state, '[inventory: action="equip" item="Dawn bell" who="Mira"] '
                                       '[inventory: action="bind" item="Dawn bell" who="Mira"]')
    assert [r.ok for r in replies] == [True, True]
    assert any(s.item == "kit/dawn-bell" and s.bound for s in new.characters[1].bag)


def test_itm_tog_4_a_switch_stays_where_it_was_left_and_a_new_item_starts_off() -> None:
    """ITM-TOG-4: the switch is on the stack — flipped on, it stays on from one reply (and
    fight) to the next until flipped again; the same item newly added starts off."""
    from engine import TurnContext
    from engine.actions.events import apply_event
    game = load_ruleset(GRAVE)
    state = start_state(game, fixture_json("parties/gravewatch.json"))
    state, _ = answer(game, state, '[inventory: action="add" item="Grave lamp" who="Ada"]')
    on, result = apply_event(game, state, {"action": "toggle", "item": "Grave lamp", "on": True},
                             "Ada", TurnContext(state.seed, (0, 1)))
    assert result.ok
    later, _ = answer(game, on, "The night wears on.", (0, 2))
    later, _ = answer(game, later, '[inventory: action="add" item="Grave lamp" who="Ada"]',
                      (0, 3))
    lamps = [(s.count, s.toggled) for s in later.characters[0].bag
             if s.item == "kit/grave-lamp"]
    assert lamps == [(1, True), (1, False)]


# --- §5: what reads items ------------------------------------------------------------------------

def test_itm_inv_2_the_catalogs_ship_with_the_ruleset_and_play_reads_them() -> None:
    """ITM-INV-2: a ruleset's item catalogs — also those in its ``catalogFiles`` (the 5e
    ruleset keeps them in three files) — are its items in play: an add finds them by name."""
    from helpers import FIXTURES

    import replay
    game = replay.load_ruleset(FIXTURES / "rulesets/srd5.json")
    assert "catalogs" not in fixture_json("rulesets/srd5.json") or all(
        c["id"] != "equipment" for c in fixture_json("rulesets/srd5.json")["catalogs"])
    state = replay.load_party(game, FIXTURES / "parties/srd5.json")
    _new, [reply] = answer(game, state, '[inventory: action="add" item="Longsword" '
                                       'who="Brannoc"]')
    assert reply.ok and reply.record["item"] == "equipment/longsword"


def test_itm_free_6_only_ruleset_items_fight() -> None:
    """ITM-FREE-6: a plain item is no weapon — an attack with it is refused, nothing asks
    what it does — while a ruleset weapon strikes."""
    from tests.engine.test_fight_pool import DEAD, GAME, START, fighting, strike_until
    state = fighting(DEAD)
    ada = state.characters[0]
    stick = ada.bag[0].model_copy(update={"name": "Stick", "item": None, "equipped": True})
    armed = state.with_character(0, ada.model_copy(update={"bag": (*ada.bag, stick)}))
    new, [reply] = answer(GAME, armed, '[attack: who="Ada" target="Dead" with="Stick"]', (1, 0))
    assert (reply.ok, reply.reason, new is armed) == (False, "unknown-weapon", True)
    _, record, _ = strike_until(GAME, state, '[attack: who="Ada" target="Dead"]',
                                lambda r: True)
    assert record["weapon"] == "Grave spade"
    assert START.characters[0].bag[0].item == "kit/spade"


def test_itm_free_9_items_work_whatever_native_says() -> None:
    """ITM-FREE-9 under Gravewatch's ``native: false``: the sheet reads worn items (Armour,
    the coat's cover), a held weapon shoots what it takes from the bag, an item with ``use`` is
    used by its own rules, and the coins are money."""
    from tests.engine.test_fight_pool import DEAD, GAME, START, fighting, strike_until
    assert GAME.ruleset.items.native is False
    assert SheetView(GAME, START.characters[0], START).derived("armour") == 1
    state = fighting(DEAD)
    shots = sum(s.count for s in state.characters[1].bag if s.item == "kit/shot-and-powder")
    fired, record, _ = strike_until(GAME, state, '[attack: who="Mira" target="Dead"]',
                                    lambda r: True)
    assert record["weapon"] == "Watch pistol"
    reloaded, [reply] = answer(GAME, fired, '[combat: op="reload" who="Mira"]', (2, 0))
    assert reply.ok, reply.text
    assert sum(s.count for s in reloaded.characters[1].bag
               if s.item == "kit/shot-and-powder") == shots - 1
    _, [added, used] = answer(GAME, START, '[inventory: action="add" item="Warming tonic" '
                                           'who="Mira"] [inventory: action="use" '
                                           'item="Warming tonic" who="Mira"]')
    assert added.ok and used.ok, used.text
    _, [paid] = answer(GAME, START, '[inventory: action="pay" amount="1 shilling" who="Ada"]')
    assert paid.ok and paid.text == "Paid with shillings ×1."


def test_itm_free_8_what_the_party_carried_returns_in_a_new_session() -> None:
    """ITM-FREE-8: under ``native: false`` and ``freeform: refuse`` (Gravewatch) as under the
    defaults (Ember Roads), a new session starts with the bags the last one ended with."""
    from replay import replay as replay_chat
    from replay.transcript import Message, Session, Transcript
    for document, party, text in (
            (GRAVE, "gravewatch", '[inventory: action="add" item="Grave lamp" who="Ada"]'),
            (EMBER, "ember-roads", '[inventory: action="add" item="Old boot" who="Ada"]')):
        game = load_ruleset(document)
        state = start_state(game, fixture_json(f"parties/{party}.json"))
        chat = Transcript(format="gmtags", sessions=(
            Session(messages=(Message(role="gm", text=text),)),
            Session(messages=(Message(role="gm", text="We meet again."),))))
        result = replay_chat(game, chat, state)
        ended, _ = answer(game, state, text)
        assert result.state.characters == ended.characters


def test_itm_istat_17_items_are_read_as_owned_at_that_moment() -> None:
    """ITM-ISTAT-17: a check reads what its roller owns when it is rolled — the same check
    before and after the lucky charm is added in one reply reads it only after — and the
    sheet reads the worn mail as soon as it is worn (Ember Roads' Guard)."""
    game, state = ember()
    _, replies = answer(game, state, '[skill_check: skill="sway" dc="5" who="Ada"] '
                                     '[inventory: action="add" item="Lucky charm" who="Ada"] '
                                     '[skill_check: skill="sway" dc="5" who="Ada"]')
    assert [r.ok for r in replies] == [True, True, True]
    assert "from" not in replies[0].record and replies[2].record["from"] == "Lucky charm"
    before = SheetView(game, state.characters[1], state).derived("guard")
    new, replies = answer(game, state, '[inventory: action="add" item="Storied mail" who="Juno"] '
                                       '[inventory: action="equip" item="Storied mail" '
                                       'who="Juno"]')
    assert [r.ok for r in replies] == [True, True]
    assert SheetView(game, new.characters[1], new).derived("guard") == before + 3


# --- §15: loot tables ----------------------------------------------------------------------------

@pytest.mark.parametrize(("change", "problem"), [
    (lambda d: d["items"]["lootTables"][0].pop("id"),
     '/items/lootTables/0: missing required key "id"'),
    (lambda d: d["items"]["lootTables"][0].pop("label"),
     '/items/lootTables/0: missing required key "label"'),
    (lambda d: d["items"]["lootTables"][0].pop("entries"),
     '/items/lootTables/0: missing required key "entries"'),
])
def test_itm_loot_5_a_table_has_an_id_a_label_rolls_and_rows(change: Any, problem: str) -> None:
    """ITM-LOOT-5: each table has ``id``, ``label`` and ``entries`` (its rows); ``rolls``
    defaults to 1 (ITM-LOOT-6)."""
    assert problems_of(GRAVE, change) == [problem]
    document = copy.deepcopy(GRAVE)
    document["items"]["lootTables"][0].pop("rolls", None)
    assert load_ruleset(document).ruleset.items.loot_tables[0].rolls == 1


def test_itm_loot_19_the_instructions_list_the_tables() -> None:
    """ITM-LOOT-19: the GM's instructions name every loot table (id and label)."""
    game = load_ruleset(GRAVE)
    taught = instructions(game)
    tables = ", ".join(f"{t.id} ({t.label})" for t in game.ruleset.items.loot_tables)
    assert f"  Tables: {tables}." in taught
    assert '[loot: table="grave_goods"]' in taught
