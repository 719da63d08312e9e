"""Items in a narrative fight (spec/items.md §14, the ITM-CLS rules; DESIGN.md "Narrative combat",
issue 26) on Harrow Vale with items that have a ``use`` (Ada's Grit 10; an Ogre of 70 hit
points). A heal or attack moves clamp(average / 32, 1/20, 1) of the target's maximum health."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from helpers import answer, bag, fixture_json, hero

from engine import load_ruleset, start_state
from engine.actions.events import apply_event
from engine.actions.fight.narrative.use import average, share
from engine.rules import reasons
from engine.rules.context import TurnContext
from engine.rules.state import Stack, State
from engine.ruleset.combat import Amount


def _entry(ident: str, label: str, use: dict, **item: object) -> dict:
    return {"id": ident, "label": label, "item": {"category": "gear", "rarity": "common",
                                                  "stack": 5, "use": {"free": True, **use},
                                                  **item}}


ENTRIES = [
    _entry("salve", "Salve", {"kind": "heal", "targets": "ally", "amount": {"dice": "2d6"},
                              "consumes": True}),
    _entry("firepot", "Firepot", {"kind": "attack", "amount": {"flat": 64},
                                  "damageType": "fire", "consumes": True, "area": 10}),
    _entry("pebble", "Pebble", {"kind": "attack", "amount": {"flat": 1}}),
    _entry("pepper", "Pepper", {"kind": "debuff", "consumes": True, "applies": [
        {"condition": "rattled", "duration": {"rounds": 3}}]}),
    _entry("charm", "Charm", {"kind": "buff", "charges": 1, "applies": [
        {"condition": "rattled"}], "temporary": {"flat": 3}},
        charges={"max": 2, "breaksOn": {"die": 2, "atMost": 2}}),
    _entry("ring", "Ring", {"kind": "heal", "amount": {"flat": 32}}, slots={"hands": 1}),
    _entry("note", "Note", {"kind": "heal"}),
    _entry("token", "Token", {"kind": "buff", "consumes": True, "applies": [
        {"condition": "rattled"}], "gate": {"check": {"skill": "barter"}, "difficulty": 100}}),
    _entry("relic", "Relic", {"kind": "buff", "applies": [{"condition": "rattled"}],
                              "gate": {"check": {"skill": "barter"}, "difficulty": 100,
                                       "unless": {"value": {"abilityScore": "brawn"},
                                                  "atLeast": 2}}}),
]


def _game():
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["catalogs"][0]["entries"] += copy.deepcopy(ENTRIES)
    return load_ruleset(document)


GAME = _game()


def _start() -> State:
    party = fixture_json("parties/harrow.json")
    state = start_state(GAME, party)
    ada = state.characters[0]
    extra = tuple(Stack(name=e["label"], item=f"kit/{e['id']}", count=2) for e in ENTRIES)
    state = state.with_bag(0, (*ada.bag, *extra))
    state, answers = answer(GAME, state, '[combat: op="start" foe="Ogre" tier="6"]')
    assert answers[0].ok
    return state


START = _start()


def use(text: str, state: State = START, turn: int = 1):
    after, answers = answer(GAME, state, text, (0, turn))
    return after, answers[0]


def ogre(state: State) -> int:
    return state.encounter.combatants[state.encounter.find("Ogre")].hp


def count(state: State, name: str) -> int:
    return dict(bag(state, "Ada")).get(name, 0)


# --- ITM-CLS-4: the share of the target's maximum health ------------------------------------

@pytest.mark.parametrize(("amount", "mean", "part"), [
    ({"dice": "2d6"}, 7, Fraction(7, 32)),  # ITM-CLS-4: "a little more than a fifth"
    ({"dice": "1d8", "flat": 3}, Fraction(15, 2), Fraction(15, 64)),
    ({"flat": 1}, 1, Fraction(1, 20)),  # never less than a twentieth
    ({"flat": 64}, 64, Fraction(1)),  # at most all of it
])
def test_itm_cls_4_the_share_from_the_average(amount, mean, part) -> None:
    parsed = Amount.model_validate(amount)
    assert average(parsed) == mean and share(parsed) == part


def test_itm_cls_2_4_8_an_attack_item_hurts_the_only_foe_by_its_share() -> None:
    """ITM-SHOW-8 (with ITM-CLS-18 below): in a narrative fight an item with ``use`` does what
    its ``use`` says (the pebble's attack)."""
    after, done = use('[inventory: action="use" item="Pebble"]')
    # 1/20 of 70 = 3.5, rounded half up
    assert done.ok and (done.record["damage"], done.record["share"]) == (4, {"num": 1, "den": 20})
    assert ogre(after) == 66 and "4 damage (1/20 of 70) · Ogre 66/70" in done.text
    assert count(after, "Pebble") == 2  # ITM-CLS-9: without consumes it stays


def test_itm_cls_4_5_9_10_a_firepot_takes_it_all_by_fire_and_its_area_has_no_place() -> None:
    after, done = use('[inventory: action="use" item="Firepot" target="Ogre"]')
    record = done.record
    assert (record["damage"], record["element"], record["ignored"]) == (70, "fire", ["area"])
    assert record["events"] == ["damage:Ogre:70", "felled:Ogre", "end:victory"]
    assert after.encounter is None and "The fight is won." in done.text
    assert count(after, "Firepot") == 1  # ITM-CLS-9: consumes takes one


def test_itm_cls_4_8_d100_party_7_a_heal_brings_a_downed_ally_back() -> None:
    bram = hero(START, "Bram the Quiet")
    state = START.with_character(1, bram.model_copy(update={"pools": {**bram.pools,
                                                                      "health": 0}}))
    after, done = use('[inventory: action="use" item="Salve" target="Bram the Quiet"]', state)
    # 7/32 of 10 = 2.1875 → 2
    assert done.ok and (done.record["healed"], done.record["hp"]) == (2, 2)
    assert hero(after, "Bram the Quiet").pools["health"] == 2
    _, again = use('[attack: who="Bram the Quiet" target="Ogre"]', after, 2)
    assert again.ok  # standing again: he acts next round


def test_itm_cls_8_without_a_target_a_heal_goes_to_the_user_and_never_to_a_foe() -> None:
    ada = hero(START, "Ada")
    state = START.with_character(0, ada.model_copy(update={"pools": {**ada.pools,
                                                                     "health": 5}}))
    after, _ = use('[inventory: action="use" item="Salve"]', state)
    assert hero(after, "Ada").pools["health"] == 7
    same, refusal = use('[inventory: action="use" item="Salve" target="Ogre"]', state)
    assert refusal.reason == reasons.UNSUPPORTED and same is state


def test_itm_cls_6_7_a_debuff_is_its_status_for_its_rounds_and_a_buff_two() -> None:
    after, done = use('[inventory: action="use" item="Pepper"]')
    assert done.record["status"] == {"name": "rattled", "rounds": 3}
    assert "damage" not in done.record and ogre(after) == 70  # the status alone
    foe = after.encounter.combatants[after.encounter.find("Ogre")]
    assert [(c.name, c.rounds) for c in foe.conditions] == [("rattled", 3)]
    after, done = use('[inventory: action="use" item="Charm"]')
    assert done.record["status"] == {"name": "rattled", "rounds": 2}  # the default
    assert "rattled" in hero(after, "Ada").conditions
    assert done.record["ignored"] == ["temporary points"]  # ITM-CLS-10
    assert "Ada:temporary" not in str(hero(after, "Ada").pools)


def test_itm_cls_13_14_charges_are_spent_and_the_last_rolls_its_break() -> None:
    after, done = use('[inventory: action="use" item="Charm"]')
    assert done.record["left"] == 1
    later, done = use('[inventory: action="use" item="Charm"]', after, 2)
    assert done.record["left"] == 0 and done.record["breaksRoll"] in (1, 2)
    assert done.record["broke"] is True and count(later, "Charm") == 0  # d2 ≤ 2 always breaks
    _, refusal = use('[inventory: action="use" item="Charm"]', START.with_bag(
        0, tuple(s.model_copy(update={"charges": 0}) if s.name == "Charm" else s
                 for s in hero(START, "Ada").bag)))
    assert refusal.reason == reasons.NO_USE_LEFT


def test_itm_cls_11_12_a_slotted_item_works_only_while_worn_and_the_worn_one_is_used() -> None:
    _, refusal = use('[inventory: action="use" item="Ring"]')
    assert refusal.reason == reasons.NOT_WORN
    ada = hero(START, "Ada")
    rings = (Stack(name="Ring", item="kit/ring", count=1),
             Stack(name="Ring", item="kit/ring", count=1, equipped=True))
    state = START.with_bag(0, (*(s for s in ada.bag if s.name != "Ring"), *rings))
    state = state.with_character(0, state.characters[0].model_copy(update={
        "pools": {**state.characters[0].pools, "health": 1}}))
    after, done = use('[inventory: action="use" item="Ring"]', state)
    assert done.ok and hero(after, "Ada").pools["health"] == 10


def test_itm_cls_15_17_a_failed_gate_uses_it_up_for_nothing() -> None:
    after, done = use('[inventory: action="use" item="Token"]')
    assert done.record["gate"] == "failed" and "status" not in done.record
    total = done.record["gateTotal"]
    assert done.text == (f"Ada rolls Barter to use Token: {total} against 100, failed, and it "
                         "is used up for nothing. 1 left.")
    assert count(after, "Token") == 1 and "rattled" not in hero(after, "Ada").conditions


def test_itm_cls_18_no_use_or_a_heal_without_amount_does_nothing() -> None:
    """ITM-CLS-18, ITM-SHOW-8: an item without ``use`` does nothing in the fight."""
    for name in ("Note", "Rope"):
        state = START.with_bag(0, (*hero(START, "Ada").bag, Stack(name="Rope",
                                                                  item="kit/rope", count=1)))
        after, done = use(f'[inventory: action="use" item="{name}"]', state)
        assert done.ok and done.record["used"] is False and after is state
        assert "has no use in a fight (ITM-CLS-18)" in done.text


def test_itm_cls_1_3_19_a_plain_item_does_nothing_and_nobody_is_asked() -> None:
    state = START.with_bag(0, (*hero(START, "Ada").bag, Stack(name="Lucky bone", count=1)))
    after, done = use('[inventory: action="use" item="Lucky bone" amount="99" kind="attack"]',
                      state)
    assert done.ok and done.record["used"] is False and after is state
    assert "is not a ruleset item, so it does nothing in this fight" in done.text
    assert "like= a ruleset item" in done.text


def test_itm_cls_19_what_the_tag_says_never_decides_the_effect() -> None:
    _, plain = use('[inventory: action="use" item="Pebble"]')
    _, loud = use('[inventory: action="use" item="Pebble" damage="70" amount="99"]')
    assert plain.record == loud.record


def test_using_an_item_is_the_heros_action_of_the_round() -> None:
    _, answers = answer(GAME, START, '[inventory: action="use" item="Pebble"] '
                        '[attack: who="Ada" target="Ogre"]', (0, 1))
    assert answers[0].reason == reasons.NO_TIME  # the attack acts first, then no time
    assert answers[1].ok


def test_an_announced_strike_lands_in_a_round_of_item_use() -> None:
    state, _ = use('[attack: who="Ogre" target="Ada"]')
    _, done = use('[inventory: action="use" item="Pebble"]', state, 2)
    assert [r["landed"] for r in done.record["landed"]] == [True]


def test_the_host_use_button_in_a_fight_and_a_swipe_rolls_the_same() -> None:
    ctx = TurnContext(START.seed, (0, 1))
    _, done = apply_event(GAME, START, {"action": "use", "item": "Pebble"}, "Ada", ctx)
    assert done.ok and done.record["damage"] == 4 and done.record["playerMessage"] == (
        "I use my Pebble.")
    one, first = use('[inventory: action="use" item="Token"]')
    two, second = use('[inventory: action="use" item="Token"]')
    assert first.record == second.record and one.to_json() == two.to_json()


@pytest.mark.parametrize(("text", "reason"), [
    ('[inventory: action="use" item="Lantern"]', reasons.NOT_HELD),
    ('[inventory: action="use" item="Pebble" target="Nobody"]', reasons.UNKNOWN_COMBATANT),
])
def test_refusals_change_nothing(text, reason) -> None:
    after, done = use(text)
    assert done.reason == reason and after is START


def test_itm_cls_1_3_an_item_the_gm_invented_like_a_ruleset_item_does_what_that_does() -> None:
    state, answers = answer(GAME, START, '[inventory: action="add" item="Hot coal" '
                            'like="Pebble" who="Ada"]', (0, 1))
    assert answers[0].ok, answers[0]
    after, done = use('[inventory: action="use" item="Hot coal"]', state, 2)
    assert done.ok and done.record.get("used") is True, done
    assert done.record["damage"] == 4 and ogre(after) == 66


def test_itm_cls_15_the_gate_is_skipped_when_unless_holds() -> None:
    _, done = use('[inventory: action="use" item="Relic"]')  # Ada's Brawn 2
    assert done.record["gate"] == "skipped" and done.record["status"]["name"] == "rattled"
    _, bram = use('[inventory: action="use" item="Relic" who="Bram the Quiet"]')
    # Bram carries none: he draws on Ada's (ITM-CLS-14), the gate read on his own sheet
    assert bram.ok and bram.record["from"] == "Ada" and bram.record["gate"] == "skipped"
