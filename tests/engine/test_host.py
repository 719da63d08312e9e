"""The host's operations on items (spec/items.md §0.6): the picker, the coins list, the stack
and bag panels, and the player's inventory events."""

from __future__ import annotations

import json
from typing import Any

import pytest

import replay
from engine import (
    Game,
    State,
    TurnContext,
    describe_bag,
    describe_stack,
    load_ruleset,
    ruleset_coins,
    ruleset_items,
    start_state,
)
from engine.actions.events import apply_event
from engine.rules.state import Stack
from engine.text.prompt import stack_line
from tests.helpers import answer, fixture_json

CTX = TurnContext("seed", (0, 0))


def grave(mutate: Any = None) -> Game:
    doc = fixture_json("rulesets/gravewatch.json")
    if mutate is not None:
        mutate(doc)
    return load_ruleset(doc)


def grave_party(game: Game, layers: list[str] | None = None) -> State:
    doc = fixture_json("parties/gravewatch.json")
    if layers is not None:
        doc["layers"] = layers
    return start_state(game, doc)


def ember() -> Game:
    return load_ruleset(fixture_json("rulesets/ember-roads.json"))


def ember_party(game: Game, layers: list[str] | None = None) -> State:
    doc = fixture_json("parties/ember-roads.json")
    if layers is not None:
        doc["layers"] = layers
    return start_state(game, doc)


def event(game: Game, state: State, payload: dict[str, Any],
          name: str | None = "Ada") -> tuple[State, Any]:
    return apply_event(game, state, payload, name, CTX)


def bag_of(state: State, who: str) -> list[tuple[str, int]]:
    character = next(c for c in state.characters if c.name == who)
    return [(s.name, s.count) for s in character.bag if s.coin is None]


def stacks(state: State, who: str) -> tuple[Stack, ...]:
    return next(c for c in state.characters if c.name == who).bag


def cursed_bell(doc: dict[str, Any]) -> None:
    for catalog in doc["catalogs"]:
        for entry in catalog.get("entries", []):
            if entry["id"] == "dawn-bell":
                entry["item"]["binds"]["cursed"] = True


# --- ruleset_items, ruleset_coins ----------------------------------------------------------


def test_itm_inv_4_every_catalog_item_searchable_by_name() -> None:
    game = ember()
    rows = ruleset_items(game, ember_party(game))
    assert [r.name for r in rows][:4] == ["Hunting bow", "Hand axe", "Boar spear", "Arrow"]
    assert [r.name for r in ruleset_items(game, None, "AXE")] == ["Hand axe", "Battleaxe",
                                                                 "Greataxe"]
    assert ruleset_items(game, None, "no such thing") == []


@pytest.mark.parametrize(("filters", "names"), [
    ({"category": "Armor", "catalog": "outfitter"}, ["Leather coat", "Storied mail"]),
    ({"category": "armor", "rarity": "storied"}, ["Storied mail"]),
    ({"tag": "thrown"}, ["Hand axe"]),
    ({"tag": ["Ranged", "thrown"], "catalog": "Outfitter"}, ["Hunting bow", "Hand axe"]),
    ({"catalog": "nowhere"}, []),
])
def test_itm_inv_4_filters(filters: dict[str, Any], names: list[str]) -> None:
    assert [r.name for r in ruleset_items(ember(), None, "", filters)] == names


def test_itm_inv_4_entry_filters() -> None:
    def mutate(doc: dict[str, Any]) -> None:
        doc["catalogs"][0]["entries"][1]["filters"] = {"era": ["old", "new"]}

    game = load_ruleset(_mutated(fixture_json("rulesets/ember-roads.json"), mutate))
    assert [r.name for r in ruleset_items(game, None, "", {"era": "OLD"})] == ["Hand axe"]


def _mutated(doc: dict[str, Any], mutate: Any) -> dict[str, Any]:
    mutate(doc)
    return doc


def test_itm_inv_5_layers_hide_entries() -> None:
    game = grave()
    names = [r.name for r in ruleset_items(game, grave_party(game))]
    assert "Bag of Holding" in names
    hidden = [r.name for r in ruleset_items(game, grave_party(game, ["low-magic"]))]
    assert "Bag of Holding" not in hidden and len(hidden) == len(names) - 1


def test_itm_inv_6_itm_svc_4_itm_show_2_no_services_and_costs() -> None:
    game = grave()
    rows = {r.name: r for r in ruleset_items(game, None)}
    assert "Passage on the ferry" not in rows
    assert rows["Grave spade"].cost == "costs 5 shillings"
    assert rows["Dawn bell"].cost == "costs 3 crowns"
    assert rows["Grave spade"].category == "Arm"


def test_itm_show_4_6_7_what_the_picker_says_items_do() -> None:
    game = ember()
    rows = {r.name: r for r in ruleset_items(game, None)}
    assert rows["Leather coat"].does == ("While worn: -1 on checks (Sneak)",)
    assert rows["Hand axe"].does == ("Attack (Action): Brawn to hit, 1d6 + Brawn cut damage",)
    assert rows["Poultice"].does == ("Use (Action): heals 1d4 + 1, range 0 paces, used up",)
    assert rows["Poultice"].stack == 10


def test_itm_money_4_coins_in_play() -> None:
    game = ember()
    coins = [c.id for c in ruleset_coins(game, ember_party(game))]
    assert coins == ["bit", "mark", "sovereign", "pinch", "cake", "gp"]
    closed = [c.id for c in ruleset_coins(game, ember_party(game, ["no-salt"]))]
    assert "cake" not in closed and len(closed) == 5
    gold = ruleset_coins(game, None)[-1]
    assert (gold.label, gold.one, gold.family, gold.value) == ("gold pieces", "gold piece",
                                                               "Old gold", 1)


# --- describe_stack, describe_bag, the GM line ----------------------------------------------


def test_itm_show_1_details_of_a_stack() -> None:
    game = ember()
    state = ember_party(game)
    details = describe_stack(game, state, "Ada", 0)
    assert details is not None
    assert (details.name, details.category, details.rarity, details.tags) == (
        "Hunting bow", "Weapon", "Common", ("Ranged", "Two-handed"))
    # OQ-3: explicit values, else the stat's default (guard 0)
    assert details.stats == {"Bulk": "2", "Guard": "0", "Damage": "1d8", "Rolls with": "wits",
                             "Reach": "far"}
    assert details.summary is not None and details.summary.startswith("Yew, waxed string")
    assert (details.stack, details.count, details.equipped) == (999_999, 1, True)
    assert describe_stack(game, state, "Nobody", 0) is None
    assert describe_stack(game, state, "Ada", 99) is None
    coin = describe_stack(game, state, "Ada", 3)
    assert coin is not None and (coin.coin, coin.category) == ("sovereign", None)


def test_itm_show_1_hidden_stats_are_shown_to_the_player_not_the_gm() -> None:
    def circle(doc: dict[str, Any]) -> None:
        doc["catalogs"][0]["entries"][8]["item"]["stats"]["circle"] = 3  # Grave lamp

    game = grave(circle)
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Grave lamp"})
    index = len(stacks(state, "Ada")) - 1
    details = describe_stack(game, state, "Ada", index)
    assert details is not None and details.stats["Circle"] == "3"
    assert details.toggle == "Lit"
    assert "Circle" not in stack_line(game, state, stacks(state, "Ada")[index])


@pytest.mark.parametrize(("item", "line"), [
    ("Hand axe", "attack (Action): Brawn to hit, 1d6 + Brawn cut, reach 2 paces, "
                 "range 10 to 20 paces"),
    ("Boar spear", "attack (Action): Brawn to hit, 1d6 + Brawn pierce, reach 2 paces, "
                   "1d8 with a hand free"),
])
def test_itm_wpn_31_weapon_details_and_gm_line(item: str, line: str) -> None:
    game = ember()
    state, _ = event(game, ember_party(game), {"action": "add", "item": item, "to": "Ada"})
    index = len(stacks(state, "Ada")) - 1
    details = describe_stack(game, state, "Ada", index)
    assert details is not None and details.attack == line
    assert f"({line}; costs" in stack_line(game, state, stacks(state, "Ada")[index])


def test_itm_wpn_31_own_target_and_itm_use_25_gm_lines() -> None:
    game = grave()
    state = grave_party(game)
    spade = stack_line(game, state, stacks(state, "Mira")[0])
    assert "attack (Act): Sinew to hit, 1d6 blunt, reach 1 paces, at 6" in spade
    state, _ = event(game, state, {"action": "add", "item": "Dawn bell", "to": "Ada"})
    bell = stacks(state, "Ada")[-1]
    assert "use (Act): Steel 7 save negates it, Rattled, 1 of 3 charges; 3 of 3 charges left" \
        in stack_line(game, state, bell)
    details = describe_stack(game, state, "Ada", len(stacks(state, "Ada")) - 1)
    assert details is not None and details.charges == "3 of 3 charges left"
    assert details.does == ("Use (Act): Steel 7 save negates it, Rattled, 1 of 3 charges",)


def test_itm_show_7_use_line_in_details() -> None:
    game = ember()
    details = describe_stack(game, ember_party(game), "Juno", 0)
    assert details is not None
    assert details.does == ("Use (Action): heals 1d4 + 1, range 0 paces, used up",)


def test_itm_prop_19_details_show_every_change_of_an_invented_item() -> None:
    game = ember()
    state, answers = answer(game, ember_party(game),
                            '[inventory: action="add" item="Warden coat" like="Leather coat" '
                            'rarity="common" stats="guard=3" who="Ada"]')
    assert answers[0].ok
    details = describe_stack(game, state, "Ada", len(stacks(state, "Ada")) - 1)
    assert details is not None and details.changes
    assert details.changes == tuple(answers[0].record["changes"])
    assert any("guard" in c.casefold() for c in details.changes)


def test_itm_slot_3_itm_bind_1_describe_bag() -> None:
    game = grave()
    state = grave_party(game)
    bag = describe_bag(game, state, "Mira")
    assert bag is not None
    assert [(s.label, s.used, s.count) for s in bag.slots] == [
        ("Body", 0, 1), ("Hands", 2, 2), ("Neck", 0, 1)]
    assert (bag.binding, bag.bound, bag.binding_max) == ("Vow", 0, 2)
    assert (bag.limit, bag.purse) == ("16 lb", "Coin worth 9 pennies")
    assert (bag.load, bag.encumbered_above, bag.encumbered) == ("7.18 lb", "6 lb", True)
    assert describe_bag(game, state, "Nobody") is None


# --- events: add, add-coins ----------------------------------------------------------------


def test_itm_name_1_itm_free_3_player_adds_by_label_or_plain() -> None:
    game = ember()
    state = ember_party(game)
    new, result = event(game, state, {"action": "add", "item": "hand AXE", "count": 2,
                                      "to": "Juno"})
    assert result.ok and result.text == "Added Hand axe ×2 to Juno's bag."
    assert stacks(new, "Juno")[-1].item == "outfitter/hand-axe"
    new, result = event(game, state, {"action": "add", "item": "Lucky pebble"})
    assert result.ok and stacks(new, "Ada")[-1].plain  # ITM-FREE-3, ITM-CARRY-5


def test_itm_free_2_7_itm_block_23_refuse_rejects_names_whatever_native_says() -> None:
    game = grave()  # freeform "refuse", native false
    state = grave_party(game)
    new, result = event(game, state, {"action": "add", "item": "Lucky pebble"})
    assert (result.ok, result.reason, new is state) == (False, "not-ruleset-item", True)
    new, result = event(game, state, {"action": "add", "item": "Grave lamp"})
    assert result.ok  # ITM-FREE-1


def test_itm_free_7_plain_freeform_ignores_native_false() -> None:
    def no_native(doc: dict[str, Any]) -> None:
        doc["items"]["native"] = False

    game = load_ruleset(_mutated(fixture_json("rulesets/ember-roads.json"), no_native))
    new, result = event(game, ember_party(game), {"action": "add", "item": "Lucky pebble"})
    assert result.ok and stacks(new, "Ada")[-1].name == "Lucky pebble"


def test_itm_inv_5_a_hidden_entry_is_no_item_of_the_game() -> None:
    game = grave()
    state = grave_party(game, ["low-magic"])
    new, result = event(game, state, {"action": "add", "item": "Bag of Holding"})
    assert (result.reason, new is state) == ("not-ruleset-item", True)


@pytest.mark.parametrize(("payload", "reason"), [
    ({"action": "add", "item": "Passage on the ferry"}, "service"),  # ITM-SVC-3
    ({"action": "add", "item": ""}, "missing-attribute"),
    ({"action": "add", "item": "Grave lamp", "count": 0}, "bad-count"),
    ({"action": "add", "item": "Grave lamp", "count": "lots"}, "bad-count"),
    ({"action": "add", "item": "Grave lamp", "to": "Nobody"}, "unknown-character"),
    ({"action": "add-coins", "coin": "doubloon", "count": 2}, "unknown-coin"),
    ({"action": "add-coins", "coin": "penny", "count": -1}, "bad-count"),
    ({"action": "add-coins", "coin": "penny", "to": "Nobody"}, "unknown-character"),
    ({"action": "split", "stack": 1, "count": 12}, "bad-count"),
    ({"action": "split", "stack": 42, "count": 1}, "unknown-stack"),
    ({"action": "split", "stack": True, "count": 1}, "unknown-stack"),
    ({"action": "split", "item": "Grave lamp", "count": 1}, "not-held"),
    ({"action": "split"}, "missing-attribute"),
    ({"action": "merge", "stack": 1, "into": 2}, "not-same-kind"),
    ({"action": "merge", "stack": 1, "into": 1}, "already"),
    ({"action": "merge", "stack": 1, "into": 99}, "unknown-stack"),
    ({"action": "set", "item": "Lucky pebble", "count": 2}, "not-ruleset-item"),
    ({"action": "give", "item": "Shot and powder", "count": 2, "to": "Nobody"},
     "unknown-character"),
    ({"action": "give", "item": "Shot and powder", "count": 99, "to": "Mira"}, "not-enough"),
    ({"action": "toggle", "item": "Shot and powder"}, "no-toggle"),
    ({"action": "toggle", "stack": 0, "on": "yes"}, "malformed"),
    ({"action": "equip", "item": "Watch pistol"}, "already"),
    ({"action": "equip", "item": "Shot and powder"}, "not-equippable"),
    ({"action": "bind", "item": "Watch pistol"}, "not-bindable"),
    ({"action": "unbind", "item": "Watch pistol"}, "already"),
    ({"action": "remove", "item": "Grave lamp"}, "not-held"),
    ({"action": "juggle"}, "unsupported"),
])
def test_refusals_change_nothing(payload: dict[str, Any], reason: str) -> None:
    game = grave()
    state = grave_party(game)
    new, result = event(game, state, payload)
    assert (result.ok, result.reason) == (False, reason), result.text
    assert new is state


def test_itm_money_4_add_coins_by_the_carry_rule() -> None:
    game = grave()
    state = grave_party(game)
    new, result = event(game, state, {"action": "add-coins", "coin": "shilling", "count": 5})
    assert result.ok and result.text == "Added shillings ×5 to Ada's bag."
    assert next(s for s in stacks(new, "Ada") if s.coin == "shilling").count == 8
    new, result = event(game, state, {"action": "add-coins", "coin": "penny", "to": "Mira"})
    assert result.ok and next(s for s in stacks(new, "Mira") if s.coin == "penny").count == 10


def test_itm_money_4_a_coin_out_of_play_is_refused() -> None:
    game = ember()
    state = ember_party(game, ["no-salt"])
    new, result = event(game, state, {"action": "add-coins", "coin": "cake", "count": 1})
    assert (result.reason, new is state) == ("unknown-coin", True)


# --- events: stacks ------------------------------------------------------------------------


def test_itm_stack_2_split_and_itm_stack_1_merge_back() -> None:
    game = grave()
    state = grave_party(game)
    split, result = event(game, state, {"action": "split", "item": "Shot and powder",
                                        "count": 5})
    assert result.ok and result.record["stack"] == 2
    assert bag_of(split, "Ada")[1:3] == [("Shot and powder", 7), ("Shot and powder", 5)]
    merged, result = event(game, split, {"action": "merge", "stack": 2, "into": 1})
    assert result.ok and bag_of(merged, "Ada") == bag_of(state, "Ada")


def test_itm_stack_1_merge_stops_at_the_stack_limit() -> None:
    game = grave()  # Shot and powder stacks to 40
    state = grave_party(game)
    state, _ = event(game, state, {"action": "split", "stack": 1, "count": 2})
    ada = state.characters[0]
    bag = list(ada.bag)
    bag[1] = bag[1].model_copy(update={"count": 39})
    state = state.with_character(0, ada.model_copy(update={"bag": tuple(bag)}))
    new, result = event(game, state, {"action": "merge", "stack": 2, "into": 1})
    assert result.ok and result.text.endswith("Shot and powder ×1 stays apart.")
    assert bag_of(new, "Ada")[1:3] == [("Shot and powder", 40), ("Shot and powder", 1)]
    full, result = event(game, new, {"action": "merge", "stack": 2, "into": 1})
    assert (result.reason, full is new) == ("stack-full", True)


def test_itm_stack_3_equipped_or_charged_stacks_never_merge() -> None:
    game = grave()
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Watch pistol",
                                               "to": "Ada"})
    new, result = event(game, state, {"action": "merge", "stack": 5, "into": 0})
    assert (result.reason, new is state) == ("not-loose", True)


def test_itm_stack_1_player_sets_a_count() -> None:
    game = grave()
    state = grave_party(game)
    new, result = event(game, state, {"action": "set", "item": "Shot and powder", "count": 3})
    assert result.ok and bag_of(new, "Ada")[1] == ("Shot and powder", 3)


def test_itm_carry_4_player_gives() -> None:
    game = grave()
    state = grave_party(game)
    new, result = event(game, state, {"action": "give", "item": "Shot and powder", "count": 2,
                                      "to": "Mira"})
    assert result.ok and result.text == "Ada gives Shot and powder ×2 to Mira."
    assert ("Shot and powder", 2) in bag_of(new, "Mira")


# --- events: toggle, equip, bind, curses ---------------------------------------------------


def test_itm_tog_3_5_switching_on_splits_one_off_and_off_joins_again() -> None:
    game = grave()
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Grave lamp",
                                               "count": 3, "to": "Ada"})
    on, result = event(game, state, {"action": "toggle", "item": "Grave lamp"})
    assert result.ok and result.text == "Ada turns Grave lamp on: Lit on."
    lamps = [s for s in stacks(on, "Ada") if s.name == "Grave lamp"]
    assert [(s.count, s.toggled) for s in lamps] == [(2, False), (1, True)]  # ITM-TOG-5
    again, result = event(game, on, {"action": "toggle", "item": "Grave lamp", "on": True})
    assert result.ok and [s.toggled for s in stacks(again, "Ada")].count(True) == 2
    off, result = event(game, on, {"action": "toggle", "item": "Grave lamp", "on": False})
    assert result.ok and bag_of(off, "Ada") == bag_of(state, "Ada")
    assert not any(s.toggled for s in stacks(off, "Ada"))
    index = len(stacks(on, "Ada")) - 1
    same, result = event(game, on, {"action": "toggle", "stack": index, "on": True})
    assert (result.reason, same is on) == ("already", True)


def test_itm_slot_1_2_player_equips_one_from_a_stack() -> None:
    game = grave()
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Silver coffin nail",
                                               "count": 2, "to": "Ada"})
    new, result = event(game, state, {"action": "unequip", "item": "Watch pistol"})
    assert result.ok
    new, result = event(game, new, {"action": "equip", "item": "Silver coffin nail"})
    assert result.ok
    nails = [(s.count, s.equipped) for s in stacks(new, "Ada") if s.name == "Silver coffin nail"]
    assert nails == [(1, False), (1, True)]


def test_itm_bind_3_4_the_player_cannot_undo_a_curse() -> None:
    game = grave(cursed_bell)
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Dawn bell",
                                               "to": "Ada"})
    state, result = event(game, state, {"action": "equip", "item": "Dawn bell"})
    assert result.ok
    state, result = event(game, state, {"action": "bind", "item": "Dawn bell"})
    assert result.ok and result.text.endswith("It is cursed: it will not let go.")
    for payload in ({"action": "unbind", "item": "Dawn bell"},
                    {"action": "unequip", "item": "Dawn bell"},
                    {"action": "give", "item": "Dawn bell", "to": "Mira"},
                    {"action": "remove", "item": "Dawn bell"}):
        new, result = event(game, state, payload)
        assert (result.ok, result.reason, new is state) == (False, "cursed", True), payload
    # ITM-BIND-4, OQ-11: the GM's unbind ends it
    ended, answers = answer(game, state, '[inventory: action="unbind" item="Dawn bell" '
                                         'who="Ada"]')
    assert answers[0].ok and answers[0].record["curseEnded"] is True
    assert not stacks(ended, "Ada")[-1].bound


def test_itm_bind_1_player_binds_up_to_the_max() -> None:
    game = grave()
    state, _ = event(game, grave_party(game), {"action": "add", "item": "Dawn bell",
                                               "to": "Ada"})
    new, result = event(game, state, {"action": "bind", "item": "Dawn bell"})
    assert result.ok and stacks(new, "Ada")[-1].bound
    new, result = event(game, new, {"action": "unbind", "item": "Dawn bell"})
    assert result.ok and not stacks(new, "Ada")[-1].bound


# --- replay ---------------------------------------------------------------------------------


def _chat(*lines: dict[str, Any]) -> replay.Transcript:
    return replay.parse_transcript("\n".join(json.dumps(line) for line in lines) + "\n",
                                   format="gmtags")


GIVE = 'Ada hands it over. [inventory: action="give" item="Grave lamp" who="Ada" to="Mira"]'


def test_replay_host_events_apply_once_and_the_same_every_time() -> None:
    game = grave()
    state = grave_party(game)
    chat = _chat(
        {"role": "event", "name": "Ada", "event": {"action": "add", "item": "Grave lamp",
                                                   "count": 2}},
        {"role": "event", "name": "Ada", "event": {"action": "toggle", "item": "Grave lamp"}},
        {"role": "event", "name": "Ada", "event": {"action": "split", "item": "Shot and powder",
                                                   "count": 4}},
        {"role": "player", "name": "Ada", "text": "Here, Mira."},
        {"role": "gm", "text": GIVE, "swipes": [GIVE, "No.", GIVE], "swipe": 2},
        {"role": "event", "name": "Ada", "event": {"action": "add-coins", "coin": "penny",
                                                   "count": 3}},
        {"role": "event", "name": "Ada", "event": {"action": "merge", "stack": 2, "into": 1}},
    )
    result = replay.replay(game, chat, state)
    assert [a.answer.ok for a in result.answers] == [True] * 6
    assert bag_of(result.state, "Ada").count(("Grave lamp", 1)) == 1
    assert ("Shot and powder", 12) in bag_of(result.state, "Ada")
    assert ("Grave lamp", 1) in bag_of(result.state, "Mira")
    first = json.dumps(result.to_json(), sort_keys=True)
    assert first == json.dumps(replay.replay(game, chat, state).to_json(), sort_keys=True)


def test_itm_money_5_purse_summary_of_a_bag_and_of_the_shared_view():
    """Each family's visible coins, largest first, and their worth in the smallest coin."""
    from helpers import harrow, harrow_party

    from engine.text.host import purse_summary

    game = harrow()
    state = harrow_party(game)
    [ada] = purse_summary(game, state, "Ada")
    assert (ada.family, ada.coins, ada.worth, ada.worth_text) == (
        "Coin", (("crowns", 1), ("pennies", 7)), 67, "67 pennies")
    [shared] = purse_summary(game, state)
    assert shared.coins == (("crowns", 1), ("shillings", 4), ("pennies", 7))
    assert shared.worth == 115
    low_magic = state.model_copy(update={"layers": ("low-magic",)})  # takes crowns out
    [shown] = purse_summary(game, low_magic, "Ada")
    assert shown.coins == (("pennies", 7),) and shown.worth_text == "7 pennies"
    assert purse_summary(game, state, "Nobody") == []
