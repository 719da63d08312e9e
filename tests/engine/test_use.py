"""Using items outside a fight (spec/items.md §21, with §13's charges, breaksOn and gate)."""

from __future__ import annotations

import copy
import json
from math import comb
from typing import Any

import pytest
from scipy.stats import chisquare

from engine import Game, State, TurnContext, load_ruleset, start_state
from engine.actions.events import apply_event
from engine.actions.use import use_tag
from engine.dice import Stream
from engine.text.prompt import stack_line
from tagparse import Tag
from tests.helpers import answer, fixture_json

POULTICE = '[inventory: action="use" item="Poultice" who="Juno"]'
PAGE = '[inventory: action="use" item="Page of the vigil litany" who="Ada"]'
BELL = '[inventory: action="use" item="Dawn bell" who="Ada"]'


def ember(health_max: int = 11) -> Game:
    doc = fixture_json("rulesets/ember-roads.json")
    doc["live"]["pools"][0]["max"] = {"const": health_max}
    return load_ruleset(doc)


def ember_party(game: Game, juno_health: int = 2, **juno: Any) -> State:
    doc = fixture_json("parties/ember-roads.json")
    doc["characters"][1]["pools"]["health"] = juno_health
    doc["characters"][1].update(juno)
    return start_state(game, doc)


def grave(mutate: Any = None) -> Game:
    doc = fixture_json("rulesets/gravewatch.json")
    if mutate is not None:
        mutate(doc)
    return load_ruleset(doc)


def grave_party(game: Game, ada_bag: list[dict[str, Any]], **ada: Any) -> State:
    """Gravewatch's party with Ada's bag replaced (a party file has no charges: they are set
    on the state, as play would leave them)."""
    doc = fixture_json("parties/gravewatch.json")
    charges = [dict(s).pop("charges", None) for s in ada_bag]
    doc["characters"][0]["bag"] = [{k: v for k, v in s.items() if k != "charges"}
                                   for s in ada_bag]
    doc["characters"][0].update(ada)
    state = start_state(game, doc)
    ada_now = state.characters[0]
    bag = tuple(stack.model_copy(update={"charges": left}) if left is not None else stack
                for stack, left in zip(ada_now.bag, charges, strict=True))
    return state.with_character(0, ada_now.model_copy(update={"bag": bag}))


def kit_item(doc: dict[str, Any], entry: str) -> dict[str, Any]:
    kit = next(c for c in doc["catalogs"] if c["id"] == "kit")
    item: dict[str, Any] = next(e for e in kit["entries"] if e["id"] == entry)["item"]
    return item


def bell(charges: int | None = None, worn: bool = True) -> dict[str, Any]:
    stack: dict[str, Any] = {"item": "kit/dawn-bell", "count": 1, "equipped": worn, "bound": worn}
    if charges is not None:
        stack["charges"] = charges
    return stack


def turn_where(predicate: Any, limit: int = 400) -> tuple[int, int]:
    """The first turn key whose dice make ``predicate(turn)`` true (pins dice, not luck)."""
    for reply in range(limit):
        if predicate((0, reply)):
            return (0, reply)
    raise AssertionError("no such turn")


def person(state: State, name: str) -> Any:
    return next(c for c in state.characters if c.name == name)


# --- ITM-OUT-13, ITM-OUT-3, ITM-USE-11: the spec's one-line report ---------------------------

def test_itm_out_13_the_poultice_line_is_the_spec_string() -> None:
    game = ember()
    state = ember_party(game)
    # 1d4 + 1 heals 4 when the heal stream's die shows 3.
    turn = turn_where(lambda t: Stream(state.seed, t, "inventory/0/use/heal").die(4) == 3)
    new, answers = answer(game, state, POULTICE, turn)
    assert answers[0].ok
    assert answers[0].text == "Juno uses Poultice: heals 4 (Grit 6/11). 1 left."
    juno = person(new, "Juno")
    assert juno.pools["health"] == 6
    assert [(s.name, s.count) for s in juno.bag if s.item == "outfitter/poultice"] == [
        ("Poultice", 1)]
    assert answers[0].record["healed"] == 4 and answers[0].record["left"] == 1


def test_itm_out_3_heal_never_passes_the_pool_max() -> None:
    game = ember(health_max=11)
    state = ember_party(game, juno_health=10)
    new, answers = answer(game, state, POULTICE)
    assert person(new, "Juno").pools["health"] == 11
    assert answers[0].text.startswith("Juno uses Poultice: heals 1 (Grit 11/11).")


def test_itm_out_3_heal_amount_follows_1d4_plus_1_exactly() -> None:
    """The heal is 1d4 + 1 from the engine's dice: a chi-square against the exact 1/4 each."""
    game = ember(health_max=100)
    state = ember_party(game, juno_health=1)
    counts = dict.fromkeys(range(2, 6), 0)
    for reply in range(2000):
        _, answers = answer(game, state, POULTICE, (0, reply))
        counts[answers[0].record["healed"]] += 1
    assert chisquare(list(counts.values()), [500] * 4).pvalue > 0.001


def test_itm_use_12_using_the_last_one_removes_the_stack() -> None:
    game = ember()
    state = ember_party(game)
    once, _ = answer(game, state, POULTICE, (0, 0))
    twice, answers = answer(game, once, POULTICE, (0, 1))
    assert answers[0].text.endswith(" 0 left.")
    assert not any(s.item == "outfitter/poultice" for s in person(twice, "Juno").bag)
    _, answers = answer(game, twice, POULTICE, (0, 2))
    assert answers[0].reason == "not-held"


# --- ITM-OUT-5, ITM-USE-13/19: restore -----------------------------------------------------

def test_itm_out_1_5_warming_tonic_heals_and_restores_resolve() -> None:
    """ITM-OUT-1: the use the tonic has in a fight works outside one, its ``restore`` too."""
    game = grave()
    doc = fixture_json("parties/gravewatch.json")
    doc["characters"][1]["pools"] = {"health": 5, "resolve": 2}
    state = start_state(game, doc)
    new, answers = answer(game, state, '[inventory: action="use" item="Warming tonic" who="Mira"]')
    assert answers[0].text == ("Mira uses Warming tonic: heals 1 (Blood 6/8), "
                               "gets back 1 Resolve (Resolve 3/4). 1 left.")
    assert person(new, "Mira").pools == {"health": 6, "resolve": 3}


# --- ITM-OUT-4: temporary points -----------------------------------------------------------

def test_itm_out_4_temporary_points_go_onto_the_health_pool() -> None:
    def tonic_gives_temporary(doc: dict[str, Any]) -> None:
        kit_item(doc, "warming-tonic")["use"]["temporary"] = {"flat": 3}
    game = grave(tonic_gives_temporary)
    doc = fixture_json("parties/gravewatch.json")
    state = start_state(game, doc)
    new, answers = answer(game, state, '[inventory: action="use" item="Warming tonic" who="Mira"]')
    assert person(new, "Mira").pools["health:temporary"] == 3
    assert "3 temporary Blood" in answers[0].text
    assert answers[0].record["temporary"] == 3


# --- ITM-OUT-6: applies ---------------------------------------------------------------------

def test_itm_out_6_and_gate_5_unless_skips_the_gate_and_applies_until_removed() -> None:
    game = grave()
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}])  # Nerve 3: unless
    new, answers = answer(game, state, PAGE)
    assert answers[0].text == "Ada uses Page of the vigil litany: Marked until removed. 1 left."
    assert answers[0].record["gate"] == "skipped"
    assert person(new, "Ada").conditions == ("marked",)
    again, _ = answer(game, new, PAGE, (0, 1))
    assert person(again, "Ada").conditions == ("marked",)  # set once, kept until removed


# --- ITM-OUT-11/12, ITM-GATE-1..8: the gate --------------------------------------------------

def _gated(nerve: int = 2, **ada: Any) -> tuple[Game, State]:
    game = grave()
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}],
                        abilities={"sinew": 3, "wits": 2, "nerve": nerve}, **ada)
    return game, state


def test_itm_out_12_a_failed_gate_uses_the_page_up_for_nothing() -> None:
    game, state = _gated()
    found: list[Any] = []

    def fails_with_one(turn: tuple[int, int]) -> bool:
        new, answers = answer(game, state, PAGE, turn)
        found[:] = [new, answers[0]]
        return answers[0].record.get("gateTotal") == 1
    turn_where(fails_with_one)
    new, result = found
    assert result.ok
    assert result.text == ("Ada uses Page of the vigil litany: Ward check 1 against 2, failed; "
                           "it is used up for nothing. 1 left.")
    assert result.record["gate"] == "failed"
    assert person(new, "Ada").conditions == ()  # ITM-GATE-6: nothing else happens
    assert [(s.name, s.count) for s in person(new, "Ada").bag] == [
        ("Page of the vigil litany", 1)]


def test_itm_gate_1_a_passed_gate_lets_the_item_work() -> None:
    game, state = _gated()
    found: list[Any] = []

    def passes(turn: tuple[int, int]) -> bool:
        new, answers = answer(game, state, PAGE, turn)
        found[:] = [new, answers[0]]
        return answers[0].record.get("gate") == "passed"
    turn_where(passes)
    new, result = found
    assert result.text == "Ada uses Page of the vigil litany: Marked until removed. 1 left."
    assert person(new, "Ada").conditions == ("marked",)


def test_itm_out_11_the_gate_rolls_the_rulesets_pool_with_the_sheet_number() -> None:
    """Ward = Nerve 2 + Sworn 1 = 3 d10 at 7 or more, needing 2 successes: the pass rate is
    exactly P(Binomial(3, 0.4) >= 2) = 0.352 (chi-square over 3000 uses)."""
    game, state = _gated(skills={"ward": "sworn"})
    passed = 0
    draws = 3000
    for reply in range(draws):
        _, answers = answer(game, state, PAGE, (0, reply))
        assert len(answers[0].record["gateRolls"]) == 3
        passed += answers[0].record["gate"] == "passed"
    p = sum(comb(3, k) * 0.4 ** k * 0.6 ** (3 - k) for k in (2, 3))
    assert chisquare([passed, draws - passed], [p * draws, (1 - p) * draws]).pvalue > 0.001


def test_itm_gate_8_conditions_change_the_gate_check() -> None:
    """Rattled takes one die from Ward checks: the gate rolls 2 dice, not 3."""
    game, state = _gated(skills={"ward": "sworn"}, conditions=["rattled"])
    _, answers = answer(game, state, PAGE)
    assert len(answers[0].record["gateRolls"]) == 2


def test_itm_gate_dice_are_not_the_replys_own_skill_check_dice() -> None:
    game, state = _gated(skills={"ward": "sworn"})
    same = 0
    for reply in range(200):
        _, answers = answer(game, state, '[skill_check: skill="ward" dc="2" who="Ada"] ' + PAGE,
                            (0, reply))
        same += answers[0].record["rolls"] == answers[1].record["gateRolls"]
    assert same < 20  # 1000 possible triples: equal by chance about once in 200


def test_itm_gate_4_a_gate_without_its_difficulty_stat_is_refused() -> None:
    def stat_gate(doc: dict[str, Any]) -> None:
        doc["items"]["stats"].append({"id": "spell_level", "label": "Spell level",
                                      "type": "number"})
        kit_item(doc, "litany-page")["use"]["gate"]["difficulty"] = {"stat": "spell_level"}
    game = grave(stat_gate)
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}])
    new, answers = answer(game, state, PAGE)
    assert new is state
    assert answers[0].reason == "no-difficulty"


def test_itm_gate_3_difficulty_read_from_the_items_stat() -> None:
    def stat_gate(doc: dict[str, Any]) -> None:
        doc["items"]["stats"].append({"id": "spell_level", "label": "Spell level",
                                      "type": "number"})
        page = kit_item(doc, "litany-page")
        page["use"]["gate"]["difficulty"] = {"stat": "spell_level"}
        page["use"]["gate"].pop("unless")
        page["stats"] = {"spell_level": 3}
    game = grave(stat_gate)
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}])
    _, answers = answer(game, state, PAGE)
    assert answers[0].record["gateDc"] == 3


def test_itm_gate_2_a_gate_on_a_sheet_value() -> None:
    def value_gate(doc: dict[str, Any]) -> None:
        gate = kit_item(doc, "litany-page")["use"]["gate"]
        gate["check"] = {"value": {"abilityScore": "wits"}}
        gate.pop("unless")
    game = grave(value_gate)
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}])  # Wits 2: 2 dice
    _, answers = answer(game, state, PAGE)
    assert len(answers[0].record["gateRolls"]) == 2
    assert answers[0].record["gate"] in ("passed", "failed")


# --- ITM-OUT-7, ITM-CHG-1/4, ITM-OUT-8: the Dawn bell ------------------------------------------

def test_itm_out_7_a_debuff_hits_nobody_but_spends_a_charge() -> None:
    game = grave()
    state = grave_party(game, [bell()])
    new, answers = answer(game, state, BELL)
    assert answers[0].ok
    assert answers[0].text == ("Ada uses Dawn bell: hits nobody, as there is no fight; "
                               "debuff, Steel 7 save negates it, Rattled. 2 left.")
    ada = person(new, "Ada")
    assert ada.conditions == ()  # the user is never the target of its own debuff
    assert ada.bag[0].charges == 2
    assert answers[0].record["hits"] == "nobody"


def test_itm_rchg_7_the_gm_sees_the_charges_left() -> None:
    game = grave()
    state = grave_party(game, [bell()])
    new, _ = answer(game, state, BELL)
    assert "2 of 3 charges left" in stack_line(game, new, person(new, "Ada").bag[0])
    assert "3 of 3 charges left" in stack_line(game, state, person(state, "Ada").bag[0])


def test_itm_brk_1_the_last_charge_may_break_the_bell() -> None:
    game = grave()
    state = grave_party(game, [bell(charges=1)])
    breaks = turn_where(lambda t: Stream(state.seed, t, "inventory/0/use/breaks").die(20) == 1)
    holds = turn_where(lambda t: Stream(state.seed, t, "inventory/0/use/breaks").die(20) > 1)
    new, answers = answer(game, state, BELL, breaks)
    assert answers[0].text.endswith(" 0 left. Its last charge spent, it breaks.")
    assert person(new, "Ada").bag == ()
    assert new.journal[-1].text == "Ada lost Dawn bell: it broke."  # ITM-BRK-4
    kept, answers = answer(game, state, BELL, holds)
    assert answers[0].text.endswith(" 0 left.")
    assert person(kept, "Ada").bag[0].charges == 0


def test_itm_brk_1_breaks_on_a_1_in_20() -> None:
    game = grave()
    state = grave_party(game, [bell(charges=1)])
    draws = 4000
    broke = 0
    for reply in range(draws):
        _, answers = answer(game, state, BELL, (0, reply))
        broke += bool(answers[0].record.get("broke"))
    assert chisquare([broke, draws - broke], [draws / 20, draws * 19 / 20]).pvalue > 0.001


def test_itm_brk_1_only_the_last_charge_rolls() -> None:
    game = grave()
    state = grave_party(game, [bell()])
    for reply in range(50):
        _, answers = answer(game, state, BELL, (0, reply))
        assert "breaksRoll" not in answers[0].record


# --- ITM-OUT-9 and other refusals: nothing changes ------------------------------------------

@pytest.mark.parametrize(("bag", "tag", "reason"), [
    ([bell(worn=False)], BELL, "not-worn"),
    ([{"item": "kit/dawn-bell", "count": 1, "equipped": True}], BELL, "not-worn"),
    ([bell(charges=0)], BELL, "no-use-left"),
    ([], BELL, "not-held"),
    ([bell()], '[inventory: action="use" who="Ada"]', "missing-attribute"),
    ([bell()], '[inventory: action="use" item="Dawn bell" who="Nobody"]', "unknown-character"),
])
def test_itm_out_9_refusals_change_nothing(bag: list[dict[str, Any]], tag: str,
                                           reason: str) -> None:
    game = grave()
    state = grave_party(game, bag)
    new, answers = answer(game, state, tag)
    assert new is state
    assert not answers[0].ok and answers[0].reason == reason


def test_itm_out_9_a_worn_copy_is_used_before_an_unworn_one() -> None:
    def two_bells(doc: dict[str, Any]) -> None:
        for slot in doc["items"]["slots"]:
            if slot["id"] == "neck":
                slot["count"] = 2
    game = grave(two_bells)
    state = grave_party(game, [bell(worn=False), bell()])
    new, answers = answer(game, state, BELL)
    assert answers[0].ok
    assert [s.charges for s in person(new, "Ada").bag] == [None, 2]


def test_itm_out_9_no_resolution_refuses_a_gated_use() -> None:
    def no_unless(doc: dict[str, Any]) -> None:
        kit_item(doc, "litany-page")["use"]["gate"].pop("unless")
    full = grave(no_unless)
    game = Game.build(full.ruleset.model_copy(update={"resolution": None}))
    state = grave_party(game, [{"item": "kit/litany-page", "count": 2}])
    new, answers = answer(game, state, PAGE)
    assert new is state
    assert answers[0].reason == "no-resolution"


# --- ITM-OUT-16: plain items ----------------------------------------------------------------

def test_itm_out_16_a_plain_item_is_still_named() -> None:
    game = grave()
    state = grave_party(game, [{"name": "rope", "count": 1}])
    new, answers = answer(game, state, '[inventory: action="use" item="Rope" who="Ada"]')
    assert new is state
    assert answers[0].ok and answers[0].text == "Ada uses rope."
    new, event_answer = apply_event(game, state, {"action": "use", "item": "rope"}, "Ada",
                                    TurnContext(state.seed, (0, 0)))
    assert new is state
    assert event_answer.ok and event_answer.text == "I use my rope."
    assert event_answer.record["playerMessage"] == "I use my rope."
    assert "itemUsed" not in event_answer.record


def test_itm_out_16_an_item_without_use_is_still_named() -> None:
    game = grave()
    state = grave_party(game, [{"item": "kit/spade", "count": 1}])
    new, event_answer = apply_event(game, state, {"action": "use", "item": "Grave spade"},
                                    "Ada", TurnContext(state.seed, (0, 0)))
    assert new is state
    assert event_answer.text == "I use my Grave spade."
    assert "itemUsed" not in event_answer.record


# --- ITM-OUT-14: the Use event ----------------------------------------------------------------

def test_itm_out_14_the_use_event_gives_the_player_message_and_item_used_block() -> None:
    game = ember()
    state = ember_party(game)
    turn = turn_where(lambda t: Stream(state.seed, t, "event/0/use/heal").die(4) == 3)
    new, result = apply_event(game, state, {"action": "use", "item": "Poultice"}, "Juno",
                              TurnContext(state.seed, turn))
    assert result.ok
    assert result.text == "Juno uses Poultice: heals 4 (Grit 6/11). 1 left."
    assert result.record["playerMessage"] == "I use my Poultice."
    assert result.record["itemUsed"] == result.text
    assert person(new, "Juno").pools["health"] == 6


def test_itm_out_14_a_refused_use_event_changes_nothing() -> None:
    game = grave()
    state = grave_party(game, [bell(worn=False)])
    new, result = apply_event(game, state, {"action": "use", "item": "Dawn bell"}, "Ada",
                              TurnContext(state.seed, (0, 0)))
    assert new is state
    assert result.reason == "not-worn"
    assert "itemUsed" not in result.record


# --- ITM-OUT-10, determinism, bad input ------------------------------------------------------

def test_itm_out_10_sheet_and_bag_change_together_and_the_input_is_untouched() -> None:
    game = grave()
    doc = fixture_json("parties/gravewatch.json")
    doc["characters"][1]["pools"] = {"health": 5, "resolve": 2}
    state = start_state(game, doc)
    before = state.canonical()
    new, _ = answer(game, state, '[inventory: action="use" item="Warming tonic" who="Mira"]')
    assert state.canonical() == before
    mira = person(new, "Mira")
    assert mira.pools["resolve"] == 3
    assert [(s.name, s.count) for s in mira.bag if s.item == "kit/warming-tonic"] == [
        ("Warming tonic", 1)]


def test_use_is_deterministic() -> None:
    game, state = _gated(skills={"ward": "sworn"})
    runs = [json.dumps([a.to_json() for a in answer(game, copy.deepcopy(state), PAGE + POULTICE,
                                                   (1, 7))[1]], sort_keys=True)
            for _ in range(3)]
    assert runs[0] == runs[1] == runs[2]


@pytest.mark.parametrize("item", ["", " ", "x" * 5000, "[", '"', "Dawn bell\n"])
def test_bad_item_names_are_refused_not_raised(item: str) -> None:
    game = grave()
    state = grave_party(game, [bell()])
    tag = Tag("inventory", (("action", "use"), ("item", item), ("who", "Ada")), 0, 0, "", None)
    new, result = use_tag.answer(game, state, tag, TurnContext(state.seed, (0, 0)))
    if item.strip() == "Dawn bell":
        assert result.ok
    else:
        assert new is state and not result.ok


def test_itm_out_2_the_use_event_and_the_gms_use_tag_do_the_same() -> None:
    """ITM-OUT-2: the host's Use (an event) and the GM's ``[inventory: action="use"]`` both
    do what the poultice does to Juno, with the engine's dice: 1d4 + 1 healed, one used."""
    import re
    game = ember()
    state = ember_party(game)
    shape = re.compile(r"Juno uses Poultice: heals (\d) \(Grit (\d+)/11\)\. 1 left\.")
    for turn in range(8):
        ctx = TurnContext(state.seed, (3, turn))
        by_event, event_result = apply_event(game, state, {"action": "use", "item": "Poultice"},
                                             "Juno", ctx)
        by_tag, [tag_result] = answer(game, state, '[inventory: action="use" item="Poultice" '
                                                   'who="Juno"]', (3, turn))
        for new, result in ((by_event, event_result), (by_tag, tag_result)):
            found = shape.fullmatch(result.text)
            assert result.ok and found is not None, result.text
            healed = int(found.group(1))
            assert 2 <= healed <= 5
            assert person(new, "Juno").pools["health"] == person(state, "Juno").pools[
                "health"] + healed
            assert [s.count for s in person(new, "Juno").bag if s.name == "Poultice"] == [1]
