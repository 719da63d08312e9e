"""Combat II rules no earlier test cited (issue 25's table, docs/combat-ii-rules.md): the
charges' bounds and their one-item stacks (spec/items.md ITM-CHG-3, ITM-CHG-5, ITM-ENTRY-10,
OQ-5, OQ-33), a rest writing sheet and bag as one change (ITM-RCHG-4), the Use button's report
of a broken item (ITM-BRK-3), a shot reading the bag as it is now (ITM-AMMO-9), the off hand never striking a leaver (ITM-OFF-6), and an onHit
save counted as a save against its condition and against magic (ITM-ONHIT-7: a template's
``savesAgainst``, engine/rules/saves_against.py)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from helpers import answer, fixture_json, one, problems_of

from engine import Game, State, TurnContext, load_ruleset, start_state
from engine.actions.events import apply_event
from engine.rules import reasons
from engine.rules.bags import item_of
from engine.rules.items import charges_left, charges_max
from tests.engine.test_fight_ammo import GAME as ARMS
from tests.engine.test_fight_ammo import SHOOT, bag
from tests.engine.test_fight_ammo import fight as ammo_fight
from tests.engine.test_fight_modes import NAIL, WALL, attack_of, game_of, hit, target
from tests.engine.test_fight_modes import fight as arms_fight
from tests.engine.test_gear import gear_document
from tests.engine.test_use import bell, grave, grave_party, person

WAND = '[inventory: action="add" item="Wand" count="3"]'
USE_WAND = '[inventory: action="use" item="Wand"]'


def _wand(document: dict[str, Any]) -> dict[str, Any]:
    item: dict[str, Any] = next(e for e in document["catalogs"][0]["entries"]
                                if e["id"] == "wand")["item"]
    return item


def wand_game(change: Any = None) -> dict[str, Any]:
    """Harrow with gear_document()'s Wand (3 charges, a free heal of 1 spending one) and a
    number stat ``charge`` (0..500) its ``charges.max`` may read."""
    document = gear_document()
    document["items"]["stats"].append(
        {"id": "charge", "label": "Charge", "type": "number", "min": 0, "max": 500, "default": 0})
    if change is not None:
        change(_wand(document))
    return document


def _reads(value: int) -> Any:
    def change(item: dict[str, Any]) -> None:
        item.setdefault("stats", {})["charge"] = value
        item["charges"]["max"] = {"stat": "charge"}
    return change


def wand_item(game: Game) -> Any:
    item = item_of(game, None, "kit/wand")
    assert item is not None
    return item


def ada(state: State) -> Any:
    return next(c for c in state.characters if c.name == "Ada")


# --- ITM-CHG-3 (OQ-33): below 1 is rejected at import, above 100 holds 100 ------------------

def test_itm_chg_3_a_stat_giving_fewer_than_one_charge_is_rejected_at_import() -> None:
    document = wand_game(_reads(0))
    where = next(i for i, e in enumerate(document["catalogs"][0]["entries"]) if e["id"] == "wand")
    assert problems_of(document) == [
        f"/catalogs/0/entries/{where}/item/charges/max: the item holds 0 charges"]
    assert problems_of(wand_game(_reads(1))) == []


def test_itm_chg_3_a_stat_giving_more_than_100_holds_100() -> None:
    game = load_ruleset(wand_game(_reads(250)))
    state = start_state(game, fixture_json("parties/harrow.json"))
    added, [reply] = answer(game, state, '[inventory: action="add" item="Wand"]')
    assert reply.ok
    (stack,) = [s for s in ada(added).bag if s.item == "kit/wand"]
    assert charges_max(wand_item(game)) == 100
    used, [reply] = answer(game, added, USE_WAND, (0, 1))
    assert reply.ok and reply.record["left"] == 99 and "99 left." in reply.text
    (after,) = [s for s in ada(used).bag if s.item == "kit/wand"]
    assert (stack.charges, after.charges) == (None, 99)


# --- ITM-CHG-5, ITM-ENTRY-10 (OQ-5): one item per stack, whatever "stack" says --------------

def test_itm_chg_5_itm_entry_10_a_declared_stack_is_accepted_and_read_as_1() -> None:
    document = wand_game(lambda item: item.update({"stack": 5}))
    assert problems_of(document) == []  # OQ-5: accepted
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/harrow.json"))
    added, [reply] = answer(game, state, WAND)
    assert reply.ok
    wands = [s for s in ada(added).bag if s.item == "kit/wand"]
    assert [s.count for s in wands] == [1, 1, 1]
    used, [reply] = answer(game, added, USE_WAND, (0, 1))
    assert reply.ok and reply.record["left"] == 2
    item = wand_item(game)
    left = [charges_left(item, s) for s in ada(used).bag if s.item == "kit/wand"]
    assert sorted(left) == [2, 3, 3]  # the charges belong to one wand alone



# --- ITM-RCHG-4: the sheet and the bag are written together ---------------------------------

VIGIL = '[sheet: op="rest" rest="vigil"]'


def test_itm_rchg_4_a_rest_is_one_change_of_each_sheet_with_its_bag() -> None:
    """The whole party rests in one answer: Ada's sheet comes back with her bag recharged and
    nothing else changed; the Rest button (the event) writes exactly the same state."""
    game = grave()
    state = grave_party(game, [bell(charges=1), {"item": "kit/litany-page", "count": 1}])
    new, [reply] = answer(game, state, VIGIL)
    assert reply.ok and reply.record["recharged"][0]["gained"] == 2
    before = person(state, "Ada")
    recharged = before.bag[0].model_copy(update={"charges": 3})
    assert person(new, "Ada") == before.model_copy(update={"bag": (recharged, before.bag[1])})
    assert new.characters[1:] == state.characters[1:]
    assert new.model_copy(update={"characters": state.characters}) == state
    by_button, result = apply_event(game, state, {"action": "rest", "rest": "vigil"}, "Ada",
                                    TurnContext(state.seed, (0, 0)))
    assert result.ok and by_button.characters == new.characters
    refused, [no] = answer(game, state, '[sheet: op="rest" rest="nap"]')
    assert refused is state and no.reason == "unknown-rest"


# --- ITM-BRK-3: the Use button's report says the item broke --------------------------------

def test_itm_brk_3_the_use_buttons_report_says_the_last_charge_broke_it() -> None:
    game = grave()
    state = grave_party(game, [bell(charges=1)])
    seen = {True: 0, False: 0}
    for reply in range(100):
        new, result = apply_event(game, state, {"action": "use", "item": "Dawn bell"}, "Ada",
                                  TurnContext(state.seed, (0, reply)))
        assert result.ok
        broke = bool(result.record.get("broke"))
        seen[broke] += 1
        if broke:
            assert result.text.endswith(" 0 left. Its last charge spent, it breaks.")
            assert result.record["breaksRoll"] == 1 and person(new, "Ada").bag == ()
        else:
            assert result.text.endswith(" 0 left.")
            assert "breaks" not in result.text and person(new, "Ada").bag[0].charges == 0
    assert seen[True] and seen[False]


# --- ITM-OFF-6: an off-hand attack is never an attack on someone moving away ----------------

LEAVES = '[combat: op="leave" who="Goblin 2"]'
SWORD = '[attack: who="Brannoc" target="Goblin 1" with="Longsword"]'
DAGGER = '[attack: who="Brannoc" target="Goblin 1" with="Dagger" action="bonus"]'


def _two_handed_brannoc() -> tuple[Game, State]:
    """skirmish-foes with the off hand of skirmish-arms (bonus, ``penalty-only``), both of
    Brannoc's weapons marked ``offHand``; he wears the Dagger first, then the Longsword."""
    document = copy.deepcopy(fixture_json("rulesets/skirmish-foes.json"))
    document["combat"]["offHand"] = {"budget": "bonus", "ability": "penalty-only"}
    for entry in document["catalogs"][0]["entries"][:2]:
        entry["item"]["attack"]["offHand"] = True
    game = load_ruleset(document)
    party = copy.deepcopy(fixture_json("parties/skirmish-foes.json"))
    party["characters"][1]["bag"] = [{"item": "arms/dagger", "count": 1, "equipped": True},
                                     {"item": "arms/longsword", "count": 1, "equipped": True}]
    state = start_state(game, party)
    state, answers = answer(game, state, '[combat: op="start" foe="Goblin" count="2"]')
    assert all(a.ok for a in answers)
    return game, state


def test_itm_off_6_the_leave_reaction_is_a_plain_strike_never_the_off_hand() -> None:
    """In one round (initiative Ada, Goblin 1, Brannoc, Goblin 2) Brannoc strikes with his
    Longsword and then off hand with his Dagger; Goblin 2 leaves after him. The reaction is the
    first worn weapon as it is (ITM-MODE-9): "Dagger", not "Dagger, off hand", on the reaction
    and not the off hand's bonus action, and with the full Strength on its damage though the
    off hand is penalty-only (ITM-OFF-4)."""
    game, state = _two_handed_brannoc()
    hits = 0
    for reply in range(40):
        after, answers = answer(game, state, f"{SWORD} {DAGGER} {LEAVES}", (1, reply))
        sword, dagger, left = answers
        assert sword.ok and sword.record["weapon"] == "Longsword"
        assert dagger.ok and dagger.record["weapon"] == "Dagger, off hand"
        assert dagger.record["budget"] == "bonus"
        (row,) = left.record["reactions"]
        assert (row["who"], row["use"], row["weapon"]) == ("Brannoc", "Opportunity Attack",
                                                           "Dagger")
        assert "off hand" not in left.text and "budget" not in row
        assert one(after, "Brannoc").spent == ("action", "bonus", "reaction")
        if row["damage"]:
            hits += 1
            assert row["damage"] == sum(sum(f) for f in row["damageRolls"]) + 3
        if dagger.record["damage"]:
            assert dagger.record["damage"] == sum(sum(f) for f in dagger.record["damageRolls"])
    assert hits


def test_itm_off_6_a_reaction_takes_nothing_from_the_off_hand_strike() -> None:
    """Without his off-hand strike, the reaction leaves the bonus action unspent."""
    game, state = _two_handed_brannoc()
    after, (sword, left) = answer(game, state, f"{SWORD} {LEAVES}", (1, 0))
    assert sword.ok and left.record["reactions"][0]["weapon"] == "Dagger"
    assert one(after, "Brannoc").spent == ("action", "reaction")


# --- ITM-ONHIT-7: an onHit save is a save against that condition, and against magic ---------

def _arms(against: list[dict[str, Any]], magical: bool = False, save: bool = True) -> Game:
    """skirmish-arms (test_fight_modes' game): the coffin nail's onHit ``marked`` asks a reflex
    save against 12 (``save``); the wall's template adds ``savesAgainst`` (``against``); the
    nail is tagged ``magical`` when ``magical``."""
    def change(document: dict[str, Any]) -> None:
        document["combat"]["templates"][-1] = {**WALL, "savesAgainst": against}
        if save:
            attack_of(document, "nail")["onHit"][0]["save"] = {"save": "reflex", "difficulty": 12}
        if magical:
            document["items"]["tags"].append({"id": "magical", "label": "Magical"})
            nail = next(e for e in document["catalogs"][0]["entries"] if e["id"] == "nail")
            nail["item"]["tags"] = [*nail["item"]["tags"], "magical"]
    return game_of(change)


def _nail_saves(game: Game, turns: range) -> dict[int, dict[str, Any]]:
    """Per turn key whose nail strike hit: the onHit save's row (and whether marked stuck)."""
    rows: dict[int, dict[str, Any]] = {}
    for turn in turns:
        after, answers = answer(game, arms_fight(game), NAIL, (0, turn))
        if hit(answers):
            row = dict(answers[0].record["onHit"][0]["save"])
            row["marked"] = "marked" in [c.name for c in target(after).conditions]
            rows[turn] = row
    return rows


@pytest.mark.parametrize(("against", "magical", "bonus"), [
    ([{"condition": "marked", "bonus": 5}], False, 5),
    ([{"condition": "hardened", "bonus": 5}], False, 0),  # another condition adds nothing
    ([{"magic": True, "bonus": 3}], False, 0),  # the nail is not magical
    ([{"magic": True, "bonus": 3}], True, 3),
    ([{"condition": "marked", "bonus": 5}, {"magic": True, "bonus": -2}], True, 3),
])
def test_itm_onhit_7_the_templates_bonus_against_the_condition_or_magic(
        against: list[dict[str, Any]], magical: bool, bonus: int) -> None:
    """The same dice with and without the key: the save's total moves by exactly the bonus,
    and the condition stays off exactly when that total reaches 12 (ITM-ONHIT-5)."""
    turns = range(1, 40)
    plain = _nail_saves(_arms([], magical), turns)
    helped = _nail_saves(_arms(against, magical), turns)
    assert plain and list(plain) == list(helped)
    for turn, row in helped.items():
        assert row["rolls"] == plain[turn]["rolls"]
        assert row["total"] == plain[turn]["total"] + bonus
        assert row.get("bonus", 0) == bonus
        assert row["saved"] == (row["total"] >= 12) and row["marked"] != row["saved"]


def test_itm_onhit_7_the_save_ends_save_is_against_that_condition_too() -> None:
    """The sword of wounding's ``wounded`` (saveEnds reflex, DC 15) is saved at the round's
    end with the template's bonus against ``wounded``."""
    wounding = [{"item": "arms/wounding", "count": 1, "equipped": True}]
    totals = []
    for against in ([], [{"condition": "wounded", "bonus": 4}]):
        game = _arms(against, save=False)
        state = arms_fight(game, brannoc=wounding)
        row = None
        for turn in range(1, 40):
            _, answers = answer(game, state, '[attack: who="Brannoc" target="Target"]', (0, turn))
            if hit(answers):
                row = answers[0].record["roundEnd"][0]
                break
        assert row is not None and row["condition"] == "wounded"
        totals.append((turn, row["total"]))
    assert totals[1] == (totals[0][0], totals[0][1] + 4)


@pytest.mark.parametrize(("against", "problem"), [
    ({"condition": "nowhere", "bonus": 1}, '/savesAgainst/0/condition: unknown condition "nowhere"'),
    ({"bonus": 1}, 'a save bonus is against a "condition" or against "magic"'),
    ({"condition": "marked", "magic": True, "bonus": 1},
     'a save bonus is against a "condition" or against "magic"'),
])
def test_itm_onhit_7_a_save_bonus_names_a_known_condition_or_magic(against, problem) -> None:
    document = copy.deepcopy(fixture_json("rulesets/skirmish-arms.json"))
    document["combat"]["templates"][0]["savesAgainst"] = [against]
    assert any(problem in p for p in problems_of(document))


# --- ITM-AMMO-9: a shot from a stack that is gone, or holds less than before, is refused ----

def test_itm_ammo_9_the_shot_reads_the_bag_as_it_is_now_and_a_missing_stack_is_refused() -> None:
    """Ada's arrows (3, then 5 silver) are given away between two rounds of the fight: the next
    shot is refused ``no-ammo`` with nothing changed, never drawn from the stacks the fight
    began with; with 1 silver arrow left it is taken from that one."""
    state = ammo_fight()
    shot, [first] = answer(ARMS, state, SHOOT, (0, 1))
    assert first.ok and bag(shot, "Ada") == {"Hunting bow": 1, "Arrow": 2, "Silver arrow": 5}
    gone, answers = answer(ARMS, shot, '[inventory: action="give" item="Arrow" count="2" '
                           'to="Brannoc"] [inventory: action="give" item="Silver arrow" '
                           'count="4" to="Brannoc"]', (0, 2))
    assert all(a.ok for a in answers)
    assert bag(gone, "Ada") == {"Hunting bow": 1, "Silver arrow": 1}
    last, [taken] = answer(ARMS, gone, SHOOT, (0, 3))
    assert taken.ok and taken.record["ammo"]["left"] == 0
    assert bag(last, "Ada") == {"Hunting bow": 1}
    after, [refused] = answer(ARMS, last, SHOOT, (0, 4))
    assert refused.reason == reasons.NO_AMMO and after is last
