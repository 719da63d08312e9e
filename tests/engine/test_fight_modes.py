"""Modes, the off-hand strike, floor, onHit and plus in a formula fight (spec/items.md §11:
ITM-MODE-1..4/10, ITM-OFF-1..7, ITM-FLOOR-1/2, ITM-ONHIT-1..6, ITM-PLUS-1..6/8; ITM-AMMO-11),
on fixtures/rulesets/skirmish-arms.json."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest
from helpers import answer, fixture_json
from scipy.stats import chisquare

from engine import Answer, TurnContext, load_ruleset, start_state
from engine.actions.describe import attack_line
from engine.actions.fight.arms import extra_damage
from engine.rules import reasons
from engine.rules.fight.formula import strike
from engine.rules.state import Combatant, State
from engine.ruleset import Formula, parse_formula

DOCUMENT = fixture_json("rulesets/skirmish-arms.json")
PARTY = fixture_json("parties/skirmish-arms.json")
WALL = {"role": "wall", "tracks": {"hp": "500"},
        "combat": {"defence": "5", "attack": "0", "damage": "1"}}
ENTRIES = {e["id"]: i for i, e in enumerate(DOCUMENT["catalogs"][0]["entries"])}


def game_of(change: Callable[[Any], None] | None = None):
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["templates"].append(WALL)
    document["conditions"].append({"id": "hardened", "label": "Hardened"})
    document["combat"]["conditions"].append(
        {"condition": "hardened", "resist": ["piercing"], "conditionImmunities": ["marked"]})
    if change is not None:
        change(document)
    return load_ruleset(document)


def attack_of(document: Any, entry: str) -> dict[str, Any]:
    return document["catalogs"][0]["entries"][ENTRIES[entry]]["item"]["attack"]


GAME = game_of()


def fight(game=GAME, foe: str = "wall", fields: dict[str, Any] | None = None,
          brannoc: list[dict[str, Any]] | None = None) -> State:
    party = copy.deepcopy(PARTY)
    if fields:
        party["characters"][1]["fields"] = fields
    if brannoc is not None:
        party["characters"][1]["bag"] = brannoc
    state = start_state(game, party)
    state, answers = answer(game, state, f'[combat: op="start" foe="Target" role="{foe}"]')
    assert answers[0].ok
    return state


def first(game, state: State, reply: str, wanted: Callable[[list[Answer]], bool],
          tries: int = 200) -> tuple[State, list[Answer]]:
    """The first round (turn key) whose answers are as ``wanted``."""
    for turn in range(1, tries):
        after, answers = answer(game, state, reply, (0, turn))
        if wanted(answers):
            return after, answers
    raise AssertionError(f"no round of {tries} gave what was wanted for {reply}")


def hit(answers: list[Answer]) -> bool:
    return answers[-1].ok and answers[-1].record["result"] == "hit"


def target(state: State) -> Combatant:
    assert state.encounter is not None
    found = state.encounter.find("Target")
    assert found is not None
    return state.encounter.combatants[found]


# --- ITM-MODE-2..4: modes -------------------------------------------------------------------

BOW = '[attack: who="Ada" target="Target"'


def test_itm_mode_4_a_modes_to_hit_is_added_and_the_record_names_it() -> None:
    state = fight()
    _, plain = answer(GAME, state, f"{BOW}]", (0, 1))
    _, aimed = answer(GAME, state, f'{BOW} mode="Aimed"]', (0, 1))  # by label, any case
    assert aimed[0].record["modifier"] == plain[0].record["modifier"] + 2
    assert aimed[0].record["mode"] == "aimed" and "mode" not in plain[0].record
    assert aimed[0].record["rolls"] == plain[0].record["rolls"]  # same strike, same dice


def test_itm_mode_3_a_mode_shoots_its_own_ammo() -> None:
    _, answers = answer(GAME, fight(), f'{BOW} mode="volley"]', (0, 1))
    assert answers[0].record["ammo"] == {"shot": 2, "left": 3}
    assert answers[0].record["modifier"] == 3 - 2


@pytest.mark.parametrize(("reply", "text"), [
    (f'{BOW} mode="rapid"]', 'Hunting bow has no mode "rapid" (modes: volley, aimed)'),
    ('[attack: who="Brannoc" target="Target" mode="volley"]',
     'Silver coffin nail has no mode "volley" (it has none)'),
    ('[attack: who="Brannoc" target="Target" with="unarmed" mode="volley"]',
     'An unarmed strike has no mode "volley"'),
])
def test_itm_mode_2_an_unknown_mode_is_refused_and_nothing_changes(reply, text) -> None:
    state = fight()
    after, answers = answer(GAME, state, reply, (0, 1))
    assert answers[0].reason == reasons.UNKNOWN_MODE and after is state
    assert answers[0].text.startswith(text)


# --- ITM-OFF-1..7: the second weapon --------------------------------------------------------

NAIL = '[attack: who="Brannoc" target="Target" with="Silver coffin nail"]'
KNIFE = '[attack: who="Brannoc" target="Target" with="Knife" action="bonus"]'


def damage_parts(record: dict[str, Any]) -> int:
    return sum(sum(faces) for faces in record["damageRolls"])


def test_itm_off_3_4_the_off_hand_strike_spends_its_budget_without_a_positive_ability() -> None:
    _, answers = first(GAME, fight(), f"{NAIL} {KNIFE}", hit)
    record = answers[1].record
    assert record["weapon"] == "Knife, off hand" and record["budget"] == "bonus"
    assert record["damage"] == damage_parts(record)  # penalty-only: +3 Strength is left out
    assert answers[1].text.startswith("Brannoc → Target (Knife, off hand):")


def test_itm_off_7_full_when_keeps_the_ability() -> None:
    _, answers = first(GAME, fight(fields={"twf": 1}), f"{NAIL} {KNIFE}", hit)
    assert answers[1].record["damage"] == damage_parts(answers[1].record) + 3


def test_itm_off_4_full_ability_by_default() -> None:
    game = game_of(lambda d: d["combat"]["offHand"].update({"ability": "full"}))
    _, answers = first(game, fight(game), f"{NAIL} {KNIFE}", hit)
    assert answers[1].record["damage"] == damage_parts(answers[1].record) + 3


def test_itm_off_4_a_penalty_is_kept() -> None:
    weak = copy.deepcopy(PARTY)
    weak["characters"][1]["abilities"] = {"str": 6, "dex": 6}
    state = start_state(GAME, weak)
    state, _ = answer(GAME, state, '[combat: op="start" foe="Target" role="wall"]')
    _, answers = first(GAME, state, f"{NAIL} {KNIFE}", hit)
    assert answers[1].record["damage"] == max(damage_parts(answers[1].record) - 2, 0)


@pytest.mark.parametrize(("reply", "refused"), [
    (KNIFE, 0),  # no strike this round with another weapon marked offHand
    (f"{NAIL} {KNIFE.replace('Knife', 'Silver coffin nail')}", 1),  # not "another" weapon
    (f"{NAIL} {KNIFE} {KNIFE}", 2),  # ITM-OFF-5: one off-hand strike on its budget
])
def test_itm_off_3_5_no_off_hand_strike_without_its_conditions(reply, refused) -> None:
    """ITM-OFF-1/3/5: only a weapon marked ``offHand`` strikes on the off-hand budget, once,
    after a strike this round with another weapon."""
    state = fight()
    after, answers = answer(GAME, state, reply, (0, 1))
    assert answers[refused].reason == reasons.NO_TIME
    assert all(a.ok for i, a in enumerate(answers) if i != refused)
    if len(answers) == 1:
        assert after is state


# --- ITM-FLOOR-1/2 ---------------------------------------------------------------------------

def floor_game(least: int):
    return game_of(lambda d: attack_of(d, "nail").update({"floor": least}))


def test_itm_floor_2_a_hit_is_raised_to_the_floor_and_the_log_says_so() -> None:
    _, answers = first(floor_game(10), fight(floor_game(10)), NAIL, hit)
    record = answers[0].record
    assert record["damage"] == 10 and record["floor"] == 10
    assert "raised to 10 (at least 10 on a hit)" in answers[0].text


def test_itm_floor_2_raised_before_a_resistance_halves_it() -> None:
    game = floor_game(10)
    state, _ = answer(game, fight(game), '[combat: op="condition" who="Target" add="hardened"]',
                      (0, 1))
    _, answers = first(game, state, NAIL, hit)
    assert answers[0].record["damage"] == 5 and answers[0].record["floor"] == 10


def test_itm_floor_1_a_hit_above_the_floor_is_not_changed() -> None:
    _, answers = first(GAME, fight(), NAIL, hit)  # 1d4 + 3 is always above the floor of 2
    assert "floor" not in answers[0].record
    assert answers[0].record["damage"] == damage_parts(answers[0].record) + 3


# --- ITM-ONHIT-1..6 ---------------------------------------------------------------------------

def test_itm_onhit_1_2_a_hit_that_deals_at_least_puts_the_condition_on() -> None:
    state, answers = first(GAME, fight(), NAIL, hit)
    assert answers[0].record["onHit"] == [{"condition": "marked", "rounds": 2}]
    assert "Target is Marked for 2 rounds." in answers[0].text
    marked = next(c for c in target(state).conditions if c.name == "marked")
    assert marked.rounds == 1  # CMB-COND-6: the round this reply was has ended


def test_itm_onhit_1_a_miss_puts_nothing_on() -> None:
    state, answers = first(GAME, fight(), NAIL, lambda a: a[0].record["result"] == "miss")
    assert "onHit" not in answers[0].record and not target(state).conditions


def test_itm_onhit_3_not_when_the_damage_that_arrived_is_below_at_least() -> None:
    game = game_of(lambda d: attack_of(d, "nail")["onHit"][0].update({"atLeast": 8}))
    state, answers = first(game, fight(game), NAIL, lambda a: hit(a) and a[0].record["damage"] < 8)
    assert "onHit" not in answers[0].record and not target(state).conditions


def test_itm_def_3_an_immune_target_never_gets_it() -> None:
    state, _ = answer(GAME, fight(), '[combat: op="condition" who="Target" add="hardened"]')
    _, answers = first(GAME, state, NAIL, hit)
    assert answers[0].record["onHit"] == [{"condition": "marked", "immune": True}]


def test_itm_onhit_6_save_ends_lasts_until_the_save_is_made() -> None:
    wounding = [{"item": "arms/wounding", "count": 1, "equipped": True}]
    state, answers = first(GAME, fight(brannoc=wounding),
                           '[attack: who="Brannoc" target="Target"]', hit)
    assert answers[0].record["onHit"] == [{"condition": "wounded", "saveEnds": "reflex"}]
    ends = answers[0].record.get("roundEnd", [])
    assert [row["condition"] for row in ends] == ["wounded"] and ends[0]["dc"] == 15
    assert ("wounded" in [c.name for c in target(state).conditions]) != ends[0]["saved"]


def test_itm_onhit_5_a_save_when_applied_keeps_it_off() -> None:
    game = game_of(lambda d: attack_of(d, "nail")["onHit"][0].update(
        {"save": {"save": "reflex", "difficulty": 12}}))
    outcomes = set()
    for turn in range(1, 60):
        after, answers = answer(game, fight(game), NAIL, (0, turn))
        if not hit(answers):
            continue
        row = answers[0].record["onHit"][0]
        saved = row["save"]["saved"]
        assert saved == (row["save"]["total"] >= 12)
        assert ("marked" in [c.name for c in target(after).conditions]) != saved
        outcomes.add(saved)
    assert outcomes == {True, False}


# --- ITM-PLUS-1..8 ---------------------------------------------------------------------------

SLAYER = [{"item": "arms/slayer", "count": 1, "equipped": True}]
SLAY = '[attack: who="Brannoc" target="Target"]'


def test_itm_plus_4_target_is_deals_only_to_those_types() -> None:
    _, dragon = first(GAME, fight(foe="dragon", brannoc=SLAYER), SLAY, hit)
    rows = dragon[0].record["plus"]
    assert len(rows) == 1 and rows[0]["damageType"] == "slashing"
    assert len(rows[0]["damageRolls"][0]) == 3
    record = dragon[0].record  # weapon dice + Strength, then 3d6 on their own
    assert record["damage"] == damage_parts(record) + 3 + sum(rows[0]["damageRolls"][0])
    _, wall = first(GAME, fight(brannoc=SLAYER), SLAY, hit)
    assert "plus" not in wall[0].record


def test_itm_plus_5_6_a_critical_adds_critical_components_and_doubles_every_dice() -> None:
    _, answers = first(GAME, fight(foe="dragon", brannoc=SLAYER), SLAY,
                       lambda a: a[0].record["result"] == "critical", tries=400)
    rows = answers[0].record["plus"]
    assert len(rows[0]["damageRolls"][0]) == 6  # 3d6 doubled
    assert rows[1] == {"damage": 14, "damageRolls": [], "damageType": "slashing", "dealt": 14}


def switched_on(state: State) -> State:
    """Brannoc's dragon slayer with its switch on (ITM-TOG-6)."""
    brannoc = state.characters[1]
    on = brannoc.bag[0].model_copy(update={"toggled": True})
    return state.with_bag(1, (on, *brannoc.bag[1:]))


def test_itm_plus_8_toggled_only_while_switched_on() -> None:
    _, answers = first(GAME, switched_on(fight(brannoc=SLAYER)), SLAY, hit)
    assert [r["damageType"] for r in answers[0].record["plus"]] == ["fire"]


def test_itm_plus_2_each_component_meets_resistances_on_its_own() -> None:
    game = game_of(lambda d: d["combat"]["conditions"][-1].update({"resist": ["fire"]}))
    state, _ = answer(game, switched_on(fight(game, brannoc=SLAYER)),
                      '[combat: op="condition" who="Target" add="hardened"]')
    _, answers = first(game, state, SLAY, hit)
    record = answers[0].record
    fire = record["plus"][0]
    assert fire["dealt"] == fire["damage"] // 2
    assert record["damage"] == sum(record["damageRolls"][0]) + 3 + fire["dealt"]


def test_itm_plus_3_a_save_halves_it() -> None:
    game = game_of(lambda d: attack_of(d, "slayer")["plus"][2].update(
        {"save": {"save": "reflex", "difficulty": 12, "onSuccess": "half"}}))
    seen = set()
    for turn in range(1, 80):
        _, answers = answer(game, switched_on(fight(game, brannoc=SLAYER)), SLAY, (0, turn))
        if not hit(answers):
            continue
        fire = answers[0].record["plus"][0]
        rolled = sum(fire["damageRolls"][0])
        assert fire["dealt"] == (rolled // 2 if fire["save"]["saved"] else rolled)
        seen.add(fire["save"]["saved"])
    assert seen == {True, False}


def test_itm_plus_6_critical_plus_dice_follow_the_exact_distribution() -> None:
    """3d6 doubled on a critical is 6d6: 20,000 draws of the plus roll the strike makes
    (engine.rules.fight.strike, as :func:`extra_damage` calls it, whose first draw is
    checked against it) against the enumerated distribution (chi-square)."""
    state = fight(foe="dragon", brannoc=SLAYER)
    item = GAME.items["arms/slayer"].item
    armed = (state.characters[1].bag[0], item, item.attack)
    ctx = TurnContext(state.seed, (0, 1))
    extra = extra_damage(GAME, state, armed, target(state), True, lambda _: 0, ctx, "k")
    formula = parse_formula("3d6")
    assert isinstance(formula, Formula)
    first_draw = strike(formula, lambda _: 0, True, 40, ctx.stream("k", "plus/0"))
    assert extra.rows[0]["damage"] == first_draw.damage
    draws = 20_000
    seen: Counter[int] = Counter(
        strike(formula, lambda _: 0, True, 40, ctx.stream("k", f"plus/{n}")).damage
        for n in range(draws))
    exact = Counter(sum(faces) for faces in itertools.product(range(1, 7), repeat=6))
    sums = sorted(exact)
    expected = [exact[s] / 6 ** 6 * draws for s in sums]
    # pool the thin tails so every expected count is at least 5
    low = [i for i, e in enumerate(expected) if e < 5]
    keep = [s for i, s in enumerate(sums) if i not in low]
    observed = [seen[s] for s in keep] + [sum(seen[sums[i]] for i in low)]
    wanted = [expected[i] for i in range(len(sums)) if i not in low] + [
        sum(expected[i] for i in low)]
    assert sum(seen.values()) == draws and set(seen) <= set(sums)
    assert chisquare(observed, wanted).pvalue > 1e-4


# --- ITM-AMMO-11, ITM-MODE-10: descriptions --------------------------------------------------

@pytest.mark.parametrize(("entry", "parts"), [
    ("bow", ["ammunition Arrow (1 an attack, 50% picked up after a won fight)",
             "modes Volley (2 shots, -2 to hit, up to 2 targets), Aimed (+2 to hit)"]),
    ("pistol", ["ammunition Shot (1 an attack)", "holds 1, reload (Action)"]),
    ("nail", ["off hand (Bonus action)", "at least 2 on a hit before resistance",
              "Marked for 2 rounds when a hit deals 2 or more"]),
    ("slayer", ["+3d6 slashing against Dragon", "+14 slashing on a critical hit",
                "+1d6 fire while switched on"]),
    ("wounding", ["Wounded until a Reflex save (DC 15) when a hit deals 1 or more"]),
])
def test_itm_ammo_11_itm_mode_10_the_gm_line_names_it_all(entry, parts) -> None:
    line = attack_line(GAME, GAME.items[f"arms/{entry}"].item)
    assert line is not None
    for part in parts:
        assert f", {part}" in line


def test_the_gm_is_taught_reload_modes_and_the_off_hand_only_where_weapons_have_them() -> None:
    from engine.actions.examples import Party
    from engine.actions.fight.weapons import reload
    assert reload.teach is not None
    lines = reload.teach(GAME, Party(("Ada",)))
    assert len(lines) == 3
    assert '[combat: op="reload" who="Ada" with="Watch pistol"]' in lines[0]  # issue 39
    assert 'with="Hunting bow" mode="Volley"]' in lines[1]
    assert 'with="Silver coffin nail" action="bonus"]' in lines[2]
    plain = load_ruleset(fixture_json("rulesets/skirmish.json"))
    assert list(reload.teach(plain, Party(("Ada",)))) == []


def test_itm_off_1_a_weapon_not_marked_off_hand_gets_no_off_hand_strike() -> None:
    """ITM-OFF-1: ``offHand: true`` marks the knife for the off hand; unmarked, the same knife
    after the nail's strike is no off-hand strike (its bonus action allows no attack)."""
    def unmarked(document: dict[str, Any]) -> None:
        document["catalogs"][0]["entries"][9]["item"]["attack"].pop("offHand")
    game = game_of(unmarked)
    state = fight(game)
    _, answers = answer(game, state, f"{NAIL} {KNIFE}", (0, 1))
    assert answers[0].ok and answers[1].reason == reasons.NO_TIME
