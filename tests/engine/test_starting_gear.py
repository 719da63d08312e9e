"""Starting gear (spec/items.md §17), taken by an event in the transcript."""

from __future__ import annotations

import copy
import json

import pytest
from helpers import bag

from engine import TurnContext, load_ruleset, start_state
from engine.actions.events import apply_event
from engine.actions.starting_gear import starting_gear_for
from replay import parse_transcript, replay

# The spec's own 5e example (ITM-GEAR, §17.1), verbatim, in a small 5e-like ruleset.
SPEC_GEAR = json.loads("""[
{
"id": "fighter", "label": "Fighter", "group": "class",
"fits": { "value": { "field": "level_fighter" }, "atLeast": 1 },
"lines": [{ "item": "equipment/shield", "equip": true }],
"choices": [
{
"label": "Armor",
"options": [
{ "label": "Chain mail", "lines": [{ "item": "equipment/chain-mail", "equip": true }] },
{ "label": "Leather armor and a longbow", "lines": [
{ "item": "equipment/leather-armor", "equip": true },
{ "item": "equipment/longbow" }, { "item": "equipment/arrow", "count": 20 }
] }
]
},
{ "label": "A martial weapon", "options": [
{ "label": "Pick one", "lines": [{ "oneOf": ["equipment/longsword", "equipment/battleaxe"] }] },
{ "label": "A greataxe", "lines": [{ "item": "equipment/greataxe" }] }
] }
]
},
{ "id": "acolyte", "label": "Acolyte", "group": "background", "lines": [{ "coins": "gp", "count": 15 }, { "name": "Vestments" }] }
]""")


def _entry(ident, label, category, weight, slots=None, stack=None):
    item = {"category": category, "stats": {"weight": weight}}
    if slots:
        item["slots"] = slots
    if stack:
        item["stack"] = stack
    return {"id": ident, "label": label, "item": item}


RULESET = {
    "id": "five", "label": "Five-ish", "capabilityApi": "1.813",
    "sheet": {"abilities": [{"id": "str", "label": "Strength", "min": 1, "max": 30,
                             "default": 10}],
              "fields": [{"id": "level_fighter", "label": "Fighter level", "type": "number",
                          "default": 0}]},
    "items": {
        "categories": [{"id": "armor", "label": "Armor"}, {"id": "weapon", "label": "Weapon"},
                       {"id": "gear", "label": "Gear"}],
        "stats": [{"id": "weight", "label": "Weight", "type": "number", "min": 0, "max": 100,
                   "integer": False}],
        "slots": [{"id": "body", "label": "Body", "count": 1},
                  {"id": "hands", "label": "Hands", "count": 2}],
        "carry": {"stat": "weight", "encumberedAbove": {"const": 60}, "limit": {"const": 150},
                  "unit": "lb"},
        "currencies": [{"id": "coins", "label": "Coin", "perWeight": 50, "units": [
            {"id": "cp", "label": "copper pieces", "one": "copper piece", "value": 1},
            {"id": "sp", "label": "silver pieces", "one": "silver piece", "value": 10},
            {"id": "gp", "label": "gold pieces", "one": "gold piece", "value": 100},
            {"id": "pp", "label": "platinum pieces", "one": "platinum piece", "value": 1000}]}],
        "startingGear": SPEC_GEAR,
    },
    "catalogs": [{"id": "equipment", "label": "Equipment", "holds": "items", "entries": [
        _entry("shield", "Shield", "armor", 6, {"hands": 1}),
        _entry("chain-mail", "Chain mail", "armor", 55, {"body": 1}),
        _entry("leather-armor", "Leather armor", "armor", 10, {"body": 1}),
        _entry("longbow", "Longbow", "weapon", 2, {"hands": 2}),
        _entry("arrow", "Arrow", "weapon", 0.05, stack=20),
        _entry("longsword", "Longsword", "weapon", 3, {"hands": 1}),
        _entry("battleaxe", "Battleaxe", "weapon", 4, {"hands": 1}),
        _entry("greataxe", "Greataxe", "weapon", 7, {"hands": 2}),
    ]}],
    "layers": [{"id": "no-gold", "label": "No gold", "coins": ["gp"]},
               {"id": "no-axes", "label": "No axes",
                "hides": ["equipment/battleaxe", "equipment/longsword", "equipment/greataxe"]},
               {"id": "bare", "label": "Bare", "hides": ["equipment/shield"], "coins": []}],
}
GAME = load_ruleset(RULESET)


def party(*, layers=(), fighter_level=3, strength=None):
    document = {"seed": "gear", "player": "Ada", "layers": list(layers), "characters": [
        {"name": "Ada", "fields": {"level_fighter": fighter_level}},
        {"name": "Bram"}]}
    if strength is not None:
        document["characters"][0]["abilities"] = {"str": strength}
    return start_state(GAME, document)


def take(state, **event):
    return apply_event(GAME, state, {"action": "starting-gear", **event}, "Ada",
                       TurnContext(state.seed, (0, 0)))


def test_itm_gear_3_4_listing_puts_fitting_gear_first_and_offers_every_gear():
    state = party(fighter_level=1)
    assert [g.id for g in starting_gear_for(GAME, state.characters[0])] == ["fighter", "acolyte"]
    assert [g.id for g in starting_gear_for(GAME, state.characters[1])] == ["acolyte", "fighter"]


def test_itm_gear_5_the_spec_fighter_example_chain_mail_and_a_longsword():
    state = party()
    new, answer = take(state, gear="fighter", choices=["Chain mail", "Pick one"],
                       oneOf=["Longsword"])
    assert answer.ok, answer.text
    assert answer.text == ("Ada takes Fighter: Shield ×1 (equipped), Chain mail ×1 (equipped), "
                           "Longsword ×1.")
    equipped = [(s.name, s.equipped) for s in new.characters[0].bag]
    assert equipped == [("Shield", True), ("Chain mail", True), ("Longsword", False)]


def test_itm_gear_9_equip_only_where_slots_are_free():
    """Leather armour takes the body; the longbow needs two hands but the shield holds one."""
    new, answer = take(party(), gear="fighter", choices=[1, 1])
    assert answer.ok, answer.text
    assert [(s.name, s.count, s.equipped) for s in new.characters[0].bag] == [
        ("Shield", 1, True), ("Leather armor", 1, True), ("Longbow", 1, False),
        ("Arrow", 20, False), ("Greataxe", 1, False)]


def test_itm_gear_6_coins_and_plain_names():
    new, answer = take(party(), gear="acolyte")
    assert answer.ok
    assert bag(new, "Ada") == [("gold pieces", 15), ("Vestments", 1)]


def test_itm_gear_18_a_removed_coin_is_paid_in_the_largest_remaining_coin_of_equal_value():
    new, answer = take(party(layers=["no-gold"]), gear="acolyte")
    assert answer.ok
    assert bag(new, "Ada") == [("silver pieces", 150), ("Vestments", 1)]
    assert "15 gold pieces paid as 150 silver pieces" in answer.text


def test_itm_gear_17_items_a_layer_takes_out_are_left_out_and_named():
    new, answer = take(party(layers=["bare"]), gear="fighter", choices=[0, 1])
    assert answer.ok
    assert "Left out (not in this game): Shield." in answer.text
    assert [s.name for s in new.characters[0].bag] == ["Chain mail", "Greataxe"]


def test_itm_gear_17_a_one_of_list_emptied_by_a_layer_is_left_out():
    new, answer = take(party(layers=["no-axes"]), gear="fighter", choices=[0, 0])
    assert answer.ok
    assert "a choice of equipment/longsword, equipment/battleaxe" in answer.text
    assert [s.name for s in new.characters[0].bag] == ["Shield", "Chain mail"]


def test_itm_gear_11_12_a_group_is_taken_once_unless_again():
    state, first = take(party(), gear="acolyte")
    assert first.ok
    same, second = take(state, gear="acolyte")
    assert (second.ok, second.reason) == (False, "already-taken")
    assert same is state
    again, third = take(state, gear="acolyte", again=True)
    assert third.ok
    assert bag(again, "Ada") == [("gold pieces", 30), ("Vestments", 2)]


def test_itm_gear_13_gear_without_group_is_its_own_group():
    document = copy.deepcopy(RULESET)
    document["items"]["startingGear"].append(
        {"id": "class", "label": "Loose kit", "lines": [{"name": "Chalk"}]})
    game = load_ruleset(document)
    state = start_state(game, {"seed": "g", "characters": [{"name": "Ada"}]})
    ctx = TurnContext("g", (0, 0))
    state, answer = apply_event(game, state, {"action": "starting-gear", "gear": "fighter",
                                              "choices": [0, 1]}, "Ada", ctx)
    assert answer.ok
    _, answer = apply_event(game, state, {"action": "starting-gear", "gear": "class"}, "Ada",
                            ctx)
    assert answer.ok


def test_itm_gear_15_16_too_heavy_is_refused_whole_naming_the_weight_and_the_room():
    document = copy.deepcopy(RULESET)
    document["items"]["carry"]["limit"] = {"const": 60}
    game = load_ruleset(document)
    light = start_state(game, {"seed": "g", "characters": [{"name": "Ada"}]})
    new, answer = apply_event(game, light, {"action": "starting-gear", "gear": "fighter",
                                            "choices": [0, 1]}, "Ada", TurnContext("g", (0, 0)))
    assert (answer.ok, answer.reason) == (False, "too-heavy")
    assert answer.text == "Fighter weighs 68 lb; Ada can still carry 60 lb."
    assert new is light


def test_itm_gear_19_nothing_left_is_refused():
    document = copy.deepcopy(RULESET)
    document["layers"].append({"id": "none", "label": "None", "hides": ["equipment/shield",
                               "equipment/chain-mail", "equipment/greataxe"]})
    game = load_ruleset(document)
    state = start_state(game, {"seed": "g", "layers": ["none"],
                               "characters": [{"name": "Ada"}]})
    new, answer = apply_event(game, state, {"action": "starting-gear", "gear": "fighter",
                                            "choices": [0, 1]}, "Ada", TurnContext("g", (0, 0)))
    assert (answer.ok, answer.reason) == (False, "nothing-left")
    assert new is state


@pytest.mark.parametrize(("event", "reason"), [
    ({"gear": "wizard"}, "unknown-gear"),
    ({"gear": "fighter"}, "bad-selection"),
    ({"gear": "fighter", "choices": [0]}, "bad-selection"),
    ({"gear": "fighter", "choices": [0, 5]}, "bad-selection"),
    ({"gear": "fighter", "choices": ["Plate", 0]}, "bad-selection"),
    ({"gear": "fighter", "choices": [0, 0]}, "bad-selection"),
    ({"gear": "fighter", "choices": [0, 0], "oneOf": ["Club"]}, "bad-selection"),
    ({"gear": "fighter", "choices": "0,0"}, "bad-selection"),
    ({"gear": "acolyte", "who": "Nobody"}, "unknown-character"),
])
def test_itm_gear_15_every_refusal_changes_nothing(event, reason):
    state = party()
    new, answer = take(state, **event)
    assert (answer.ok, answer.reason) == (False, reason), answer.text
    assert new is state


def test_taking_gear_replays_from_the_transcript():
    lines = [
        {"role": "event", "name": "Ada", "event": {"action": "starting-gear", "gear": "acolyte"}},
        {"role": "gm", "text": "Welcome, acolyte."},
        {"role": "event", "name": "Bram", "event": {"action": "starting-gear", "gear": "fighter",
                                                     "choices": [0, 1]}},
    ]
    transcript = parse_transcript("\n".join(json.dumps(x) for x in lines), format="gmtags")
    first = replay(GAME, transcript, party())
    second = replay(GAME, transcript, party())
    assert [a.answer.ok for a in first.answers] == [True, True]
    assert first.answers[1].answer.tag.kind == "event"
    assert bag(first.state, "Bram")[0] == ("Shield", 1)
    assert json.dumps(first.to_json()) == json.dumps(second.to_json())


def test_itm_gear_2_starting_gear_is_never_handed_out_by_itself():
    """ITM-GEAR-2: a game of a ruleset with starting gear begins with the bags the party file
    gives (empty here), and a reply that only talks about gear hands nothing out."""
    from helpers import answer
    state = party()
    assert [c.bag for c in state.characters] == [(), ()]
    new, answers = answer(GAME, state, "You may take the fighter's kit: shield and chain mail.")
    assert answers == [] and new.characters == state.characters
