"""Items used in a formula fight (spec/items.md §13: ITM-USE-1..26, ITM-CHG-*, ITM-RCHG-*,
ITM-BRK-*, ITM-GATE-*), on fixtures/rulesets/ember-fights.json — Ember Roads (2d6 dice-sum)
with a formula combat block, and Gravewatch's warming tonic, page of the vigil litany and Dawn
bell copied in — and its party: Ada (initiative 12, wits 3, the bell worn and bound, fire
flasks, pitch stones, blasting powder, tonics, pages, a whistle charm) and Juno (poultices)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable
from itertools import product
from typing import Any

from helpers import answer, fixture_json, hero, one
from scipy.stats import chisquare

from engine import Answer, Game, load_ruleset, start_state
from engine.actions.describe import use_text
from engine.actions.events import apply_event
from engine.actions.fight.arms import foe_save
from engine.actions.fight.use import gate_line
from engine.rules import reasons
from engine.rules.context import TurnContext
from engine.rules.state import State
from engine.text.prompt import stack_line

DOCUMENT = fixture_json("rulesets/ember-fights.json")
PARTY = fixture_json("parties/ember-fights.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
GOBLINS = '[combat: op="start" foe="Goblin" count="2"]'
FLASK = '[inventory: action="use" item="Fire flask" who="Ada" target="Goblin 1"]'
BELL = '[inventory: action="use" item="Dawn bell" who="Ada" target="Goblin 2"]'
POWDER = '[inventory: action="use" item="Blasting powder" who="Ada" target="Goblin 1, Goblin 2"]'
STONE = '[inventory: action="use" item="Pitch stone" who="Ada" target="Goblin 2"]'
TONIC = '[inventory: action="use" item="Warming tonic" who="Ada" target="Ada"]'
PAGE = '[inventory: action="use" item="Page of the vigil litany" who="Ada" target="Ada"]'
POULTICE = '[inventory: action="use" item="Poultice" who="Juno" target="Ada"]'
WHISTLE = '[inventory: action="use" item="Whistle charm" who="Ada" target="Ada"]'


def fighting(state: State = START, game: Game = GAME) -> State:
    """The party and two goblins (10 hit points, defence 8, Steel +1) in a fight, round 0."""
    state, answers = answer(game, state, GOBLINS)
    assert all(a.ok for a in answers), answers
    return state


FIGHT = fighting()


def first(state: State, text: str, wanted: Callable[[list[Answer]], bool],
          game: Game = GAME) -> tuple[State, list[Answer]]:
    """The first reply (turn keys (1, 1), (1, 2), …) whose answers ``wanted`` holds for."""
    for turn in range(1, 400):
        after, answers = answer(game, state, text, (1, turn))
        if wanted(answers):
            return after, answers
    raise AssertionError(f"no reply of {text!r} gave what was wanted")


def with_foe(state: State, name: str, **update: object) -> State:
    assert state.encounter is not None
    combatants = tuple(c.model_copy(update=update) if c.name == name else c
                       for c in state.encounter.combatants)
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": combatants})})


def with_hero(state: State, name: str, **update: Any) -> State:
    index = next(i for i, c in enumerate(state.characters) if c.name == name)
    return state.with_character(index, state.characters[index].model_copy(update=update))


def count_of(state: State, who: str, item: str) -> int:
    return sum(s.count for s in hero(state, who).bag if s.item == item)


def stack_of(state: State, who: str, item: str):
    return next(s for s in hero(state, who).bag if s.item == item)


def game_with(mutate: Callable[[dict[str, Any]], None]) -> Game:
    doc = copy.deepcopy(DOCUMENT)
    mutate(doc)
    return load_ruleset(doc)


def kit(doc: dict[str, Any], entry: str) -> dict[str, Any]:
    catalog = next(c for c in doc["catalogs"] if c["id"] == "kit")
    return next(e for e in catalog["entries"] if e["id"] == entry)["item"]


def _hit(answers: list[Answer]) -> bool:
    return answers[0].ok and answers[0].record["targets"][0]["result"] != "miss"


def _refused(state: State, text: str, reason: str, game: Game = GAME) -> Answer:
    after, answers = answer(game, state, text, (1, 1))
    assert answers[-1].reason == reason, answers[-1]
    assert after == state  # a refusal changes nothing
    return answers[-1]


# --- ITM-USE-1/2/5, ITM-USE-7/8: an attack roll in the round ----------------------------------

def test_itm_use_1_7_an_attack_use_rolls_to_hit_with_its_to_hit_against_the_foes_defence() \
        -> None:
    after, answers = first(FIGHT, FLASK, _hit)
    found = answers[0].record
    row = found["targets"][0]
    # ITM-USE-7: toHit {"abilities": ["wits"], "bonus": 1} on Ada (wits 3): +4 to the 2d6
    assert row["modifier"] == 4 and row["total"] == sum(row["rolls"]) + 4
    assert row["defence"] == 8 and (row["total"] >= 8 or row["result"] == "critical")
    # ITM-USE-2: amount 1d6 + 1 of fire, dice doubled on a critical (CMB-ATK-5)
    dice = row["damageRolls"][0]
    assert len(dice) == (2 if row["result"] == "critical" else 1)
    assert row["damage"] == sum(dice) + 1 and one(after, "Goblin 1").hp == 10 - row["damage"]
    assert f"fire · Goblin 1 {10 - row['damage']}/10. Fire flask: 1 of 2 left." in answers[0].text
    assert found["events"][0] == f"damage:Goblin 1:{row['damage']}"  # CMB-CARD-1
    assert found["budget"] == "act" and one(after, "Ada").spent == ("act",)  # ITM-USE-5
    assert after.encounter is not None and after.encounter.round == 1  # the use is a round


def test_itm_use_8_without_to_hit_the_attack_roll_adds_nothing() -> None:
    after, answers = first(FIGHT, STONE, lambda a: a[0].ok)
    row = answers[0].record["targets"][0]
    assert row["modifier"] == 0 and row["total"] == sum(row["rolls"])
    assert answers[0].record["budget"] == "quick" and one(after, "Ada").spent == ("quick",)


def test_itm_use_7_a_miss_deals_nothing_but_the_item_is_spent() -> None:
    after, answers = first(FIGHT, FLASK, lambda a: not _hit(a))
    assert answers[0].record["targets"][0]["damage"] == 0 and one(after, "Goblin 1").hp == 10
    assert count_of(after, "Ada", "kit/fire-flask") == 1


def test_itm_def_4_a_uses_damage_type_meets_the_foes_resistance() -> None:
    soaked, answers = answer(GAME, FIGHT, '[combat: op="condition" who="Goblin 1" add="soaked"]')
    assert answers[0].ok
    after, answers = first(soaked, FLASK, _hit)
    row = answers[0].record["targets"][0]
    rolled = sum(row["damageRolls"][0]) + 1
    assert row["damage"] == rolled // 2 and row["affectedBy"]  # fire resisted: halved
    assert one(after, "Goblin 1").hp == 10 - rolled // 2


def test_a_use_that_fells_the_last_foe_wins_the_fight() -> None:
    state = with_foe(with_foe(FIGHT, "Goblin 2", hp=0), "Goblin 1", hp=1)
    after, answers = first(state, FLASK, _hit)
    assert answers[0].record["events"][-2:] == ["felled:Goblin 1", "end:victory"]
    assert "Goblin 1 is felled. The fight is won." in answers[0].text
    assert after.encounter is None


# --- ITM-USE-5: the budget ---------------------------------------------------------------------

def test_itm_use_5_a_use_spends_one_whole_use_of_its_budget_and_past_it_is_no_time() -> None:
    after, answers = first(FIGHT, f"{FLASK} {FLASK}", lambda a: a[0].ok)
    assert answers[1].reason == reasons.NO_TIME and "NO TIME" in answers[1].text
    assert count_of(after, "Ada", "kit/fire-flask") == 1  # the second took nothing
    # the act an attack spent leaves no act for a use after it in the round
    struck, answers = answer(GAME, FIGHT, '[attack: who="Ada" target="Goblin 1"]', (1, 1))
    assert answers[0].ok
    _refused(struck, FLASK, reasons.NO_TIME)


def test_itm_use_5_a_quick_use_and_an_act_attack_share_a_round() -> None:
    text = f'{STONE} [attack: who="Ada" target="Goblin 1"]'
    after, answers = answer(GAME, FIGHT, text, (1, 1))
    assert all(a.ok for a in answers) and sorted(one(after, "Ada").spent) == ["act", "quick"]


def test_itm_use_5_a_free_use_spends_nothing_and_lets_no_round_begin() -> None:
    state = with_hero(FIGHT, "Ada", pools={"health": 10, "resolve": 2})
    after, answers = answer(GAME, state, WHISTLE, (1, 1))
    assert answers[0].ok and answers[0].record["budget"] is None
    assert after.encounter is not None and after.encounter.round == 0
    assert one(after, "Ada").spent == ()
    # ITM-USE-17, ITM-CHG-1, ITM-USE-22: its restore and its charge, in the log's words
    assert answers[0].text == ("Ada uses Whistle charm. Ada gets back 1 Resolve, and is on 3 "
                               "of 4. Whistle charm: 1 of 2 left.")


# --- ITM-USE-9/10: a save -----------------------------------------------------------------------

def test_itm_use_9_each_target_saves_against_the_uses_difficulty_and_negates_it() -> None:
    seen = set()
    for turn in range(1, 40):
        after, answers = answer(GAME, FIGHT, BELL, (1, turn))
        found = answers[0].record
        row = found["targets"][0]
        assert found["dc"] == 7 and found["save"] == "steel"  # ITM-USE-9: written out
        assert row["total"] == sum(row["rolls"]) + 1  # a tier-1 goblin's modifier (CMB-TPL-8)
        assert row["saved"] == (row["total"] >= 7)
        rattled = [c for c in one(after, "Goblin 2").conditions if c.name == "rattled"]
        if row["saved"]:  # onSuccess: negates
            assert not rattled and "applied" not in row
        else:  # ITM-USE-2: applies Rattled for duration.rounds 2 in the fight
            assert row["applied"] == [{"condition": "rattled", "rounds": 2}]
            assert "Rattled for 2 rounds" in answers[0].text
            assert rattled and rattled[0].rounds == 1  # the round's end counted one down
        seen.add(row["saved"])
    assert seen == {True, False}


def test_itm_use_9_a_save_read_from_a_stat_rolls_damage_once_and_halves_it_on_a_success() \
        -> None:
    seen = set()
    for turn in range(1, 40):
        after, answers = answer(GAME, FIGHT, POWDER, (1, turn))
        found = answers[0].record
        assert found["dc"] == 8  # ITM-USE-9/10: saveDifficulty {"stat": "potency"} of 8
        assert len(found["damageRolls"]) == 1 and len(found["damageRolls"][0]) == 2  # once
        for row in found["targets"]:
            assert row["saved"] == (row["total"] >= 8)
            assert row["damage"] == (found["rolled"] // 2 if row["saved"] else found["rolled"])
            assert row["hp"] == max(10 - row["damage"], 0)
            if after.encounter is not None:  # both felled: the fight is won and over
                assert one(after, row["target"]).hp == row["hp"]
            seen.add(row["saved"])
        assert not any(s.item == "kit/blasting-powder" for s in hero(after, "Ada").bag)
    assert seen == {True, False}


def test_itm_use_9_a_save_stat_the_item_does_not_give_is_refused() -> None:
    game = game_with(lambda d: kit(d, "blasting-powder").pop("stats"))
    state = fighting(start_state(game, PARTY), game)
    found = _refused(state, POWDER, reasons.NO_DIFFICULTY, game)
    assert "difficulty" in found.text


def test_itm_use_9_the_save_distribution_is_exact() -> None:
    """Steel +1 against 7: 2d6 + 1, enumerated, against 20,000 saves through the engine."""
    goblin = one(FIGHT, "Goblin 2")
    totals = Counter()
    for n in range(20_000):
        _, rolled = foe_save(GAME, FIGHT, goblin, "steel", 7, TurnContext("s", (1, n)), "use")
        totals[rolled["total"]] += 1
    exact = Counter(a + b + 1 for a, b in product(range(1, 7), repeat=2))
    faces = sorted(exact)
    observed = [totals[t] for t in faces]
    expected = [exact[t] / 36 * 20_000 for t in faces]
    assert sum(observed) == 20_000 and chisquare(observed, expected).pvalue > 1e-4


# --- targets ------------------------------------------------------------------------------------

def test_target_unknown_down_too_many_and_the_wrong_side_are_refused_unchanged() -> None:
    _refused(FIGHT, FLASK.replace("Goblin 1", "Goblin 9"), reasons.UNKNOWN_COMBATANT)
    _refused(with_foe(FIGHT, "Goblin 1", hp=0), FLASK, reasons.TARGET_DOWN)
    _refused(FIGHT, FLASK.replace("Goblin 1", "Goblin 1, Goblin 2"), reasons.TOO_MANY_TARGETS)
    _refused(FIGHT, FLASK.replace("Goblin 1", "Juno"), reasons.UNSUPPORTED)
    _refused(FIGHT, POULTICE.replace("Ada", "Goblin 1"), reasons.UNSUPPORTED)
    # without target= and two foes standing: name one
    _refused(FIGHT, FLASK.replace(' target="Goblin 1"', ""), reasons.MISSING_ATTRIBUTE)


def test_a_downed_user_or_one_out_of_the_fight_is_refused_unchanged() -> None:
    _refused(with_hero(FIGHT, "Ada", pools={"health": 0, "resolve": 3}), FLASK, reasons.DOWNED)
    assert FIGHT.encounter is not None
    alone = FIGHT.model_copy(update={"encounter": FIGHT.encounter.model_copy(update={
        "combatants": tuple(c for c in FIGHT.encounter.combatants if c.name != "Ada")})})
    _refused(alone, FLASK, reasons.UNKNOWN_COMBATANT)


# --- ITM-USE-4, ITM-OUT-9: worn and bound; no use left ------------------------------------------

def test_itm_use_4_the_bell_works_only_while_worn_and_bound() -> None:
    bag = tuple(s.model_copy(update={"equipped": False}) if s.item == "kit/dawn-bell" else s
                for s in hero(FIGHT, "Ada").bag)
    _refused(with_hero(FIGHT, "Ada", bag=bag), BELL, reasons.NOT_WORN)
    _, answers = answer(GAME, FIGHT, BELL, (1, 1))
    assert answers[0].ok


def test_itm_chg_1_4_the_bell_spends_a_charge_kept_on_its_stack_into_the_next_fight() -> None:
    assert stack_of(FIGHT, "Ada", "kit/dawn-bell").charges is None  # never rung: full
    once, answers = answer(GAME, FIGHT, BELL, (1, 1))
    assert answers[0].text.endswith("Dawn bell: 2 of 3 left.")  # ITM-USE-22
    twice, answers = answer(GAME, once, BELL, (1, 2))
    assert answers[0].text.endswith("Dawn bell: 1 of 3 left.")
    ended, _ = answer(GAME, twice, '[combat: op="end" outcome="fled"]', (1, 3))
    assert stack_of(ended, "Ada", "kit/dawn-bell").charges == 1  # ITM-CHG-4
    again = fighting(ended)
    _, answers = first(again, BELL, lambda a: a[0].ok and not a[0].record.get("broke"))
    assert answers[0].record["left"] == 0


def test_itm_out_9_a_bell_with_no_charge_left_is_refused_unchanged() -> None:
    bag = tuple(s.model_copy(update={"charges": 0}) if s.item == "kit/dawn-bell" else s
                for s in hero(FIGHT, "Ada").bag)
    _refused(with_hero(FIGHT, "Ada", bag=bag), BELL, reasons.NO_USE_LEFT)


# --- ITM-BRK-1/2/4 ------------------------------------------------------------------------------

def _last_charge() -> State:
    bag = tuple(s.model_copy(update={"charges": 1}) if s.item == "kit/dawn-bell" else s
                for s in hero(FIGHT, "Ada").bag)
    return with_hero(FIGHT, "Ada", bag=bag)


def test_itm_brk_1_2_4_the_last_charge_breaks_the_bell_on_a_1_on_its_d20() -> None:
    state = _last_charge()
    after, answers = first(state, BELL, lambda a: a[0].record.get("broke") is True)
    found = answers[0]
    assert found.record["breaksRoll"] == 1
    assert found.text.endswith("Dawn bell: 0 of 3 left. Dawn bell breaks (a 1 on its die).")
    assert not any(s.item == "kit/dawn-bell" for s in hero(after, "Ada").bag)
    assert after.journal[-1].text == "Ada lost Dawn bell: it broke."  # ITM-BRK-4
    kept, answers = first(state, BELL, lambda a: a[0].ok and not a[0].record.get("broke"))
    assert answers[0].record["breaksRoll"] > 1
    assert stack_of(kept, "Ada", "kit/dawn-bell").charges == 0


def test_itm_brk_1_the_break_die_falls_1_in_20() -> None:
    """The break die over 400 last charges rung in a fight (each a different reply)."""
    state = _last_charge()
    faces = Counter()
    for turn in range(400):
        _, answers = answer(GAME, state, BELL, (2, turn))
        faces[answers[0].record["breaksRoll"]] += 1
    observed = [faces[f] for f in range(1, 21)]
    assert sum(observed) == 400 and chisquare(observed, [20] * 20).pvalue > 1e-4


# --- ITM-USE-11/12/20/21/22: consumes ----------------------------------------------------------

def test_itm_use_11_12_20_a_consumed_use_takes_one_and_the_last_removes_the_stack() -> None:
    after, answers = answer(GAME, FIGHT, STONE, (1, 1))
    assert answers[0].text.endswith("Pitch stone: 2 of 3 left.")  # ITM-USE-22
    assert count_of(after, "Ada", "kit/pitch-stone") == 2
    _, answers = first(FIGHT, POWDER, lambda a: a[0].ok)
    assert answers[0].text.endswith("Blasting powder: 0 of 1 left.") or \
        "Blasting powder: 0 of 1 left." in answers[0].text
    after, _ = answer(GAME, FIGHT, POWDER, (1, 1))
    assert not any(s.item == "kit/blasting-powder" for s in hero(after, "Ada").bag)
    assert after.journal[-1].text == "Ada used up Blasting powder."  # ITM-USE-20


def test_itm_use_21_a_use_whose_stack_is_gone_is_refused() -> None:
    _, answers = answer(GAME, FIGHT, f"{POWDER} {POWDER}", (1, 1))
    assert answers[0].ok and answers[1].reason == reasons.NOT_HELD


# --- heal, restore, buff, gate ----------------------------------------------------------------

def test_itm_use_22_a_poultice_heals_the_ally_it_names_and_spends_its_users_budget() -> None:
    state = with_hero(FIGHT, "Ada", pools={"health": 3, "resolve": 3})
    after, answers = answer(GAME, state, POULTICE, (1, 1))
    row = answers[0].record["targets"][0]
    assert row["target"] == "Ada" and 2 <= row["healed"] <= 5  # 1d4 + 1
    assert hero(after, "Ada").pools["health"] == 3 + row["healed"]
    assert hero(after, "Juno").pools == hero(state, "Juno").pools
    assert answers[0].text == (f"Juno uses Poultice on Ada: heals {row['healed']} (Grit "
                               f"{3 + row['healed']}/10). Poultice: 1 of 2 left.")
    assert one(after, "Juno").spent == ("act",) and one(after, "Ada").spent == ()


def test_itm_use_13_17_19_the_warming_tonic_heals_and_restores_one_resolve() -> None:
    state = with_hero(FIGHT, "Ada", pools={"health": 6, "resolve": 2})
    after, answers = answer(GAME, state, TONIC, (1, 1))
    assert answers[0].text == ("Ada uses Warming tonic: heals 1 (Grit 7/10). Ada gets back 1 "
                               "Resolve, and is on 3 of 4. Warming tonic: 1 of 2 left.")
    assert hero(after, "Ada").pools == {"health": 7, "resolve": 3}
    assert one(after, "Ada").spent == ("quick",)


def test_itm_use_16_a_creature_gets_nothing_from_restore() -> None:
    def any_target(doc: dict[str, Any]) -> None:
        kit(doc, "warming-tonic")["use"]["targets"] = "any"
    game = game_with(any_target)
    state = fighting(start_state(game, PARTY), game)
    state = with_foe(state, "Goblin 1", hp=4)
    after, answers = answer(game, state, TONIC.replace('"Ada"]', '"Goblin 1"]'), (1, 1))
    row = answers[0].record["targets"][0]
    assert row["restored"] == 0 and row["healed"] == 1 and one(after, "Goblin 1").hp == 5
    assert "gets nothing back, as a creature has no pools" in answers[0].text
    assert hero(after, "Ada").pools == hero(state, "Ada").pools


def test_a_helping_use_without_target_is_answered_as_out_of_a_fight() -> None:
    """The recorded corpus pins it: a friend's potion poured into a downed hero, several
    potions a reply — no budget, §21's own line (ITM-OUT-13)."""
    state = with_hero(FIGHT, "Ada", pools={"health": 0, "resolve": 2})
    after, answers = answer(GAME, state, TONIC.replace(' target="Ada"', ""), (1, 1))
    assert answers[0].ok and answers[0].text.startswith("Ada uses Warming tonic: heals 1")
    assert answers[0].text.endswith(" 1 left.") and "budget" not in answers[0].record
    assert after.encounter == state.encounter


def test_itm_gate_1_7_9_the_page_is_rolled_as_it_is_spent_and_its_buff_lasts_its_round() -> None:
    after, answers = first(FIGHT, PAGE, lambda a: a[0].record.get("gate") == "passed")
    found = answers[0]
    rolls = found.record["gateRolls"]
    total = found.record["gateTotal"]
    assert found.text.startswith(f"Ada rolls Ward to use Page of the vigil litany: {total} "
                                 f"({', '.join(map(str, rolls))}), needing 2, a success. ")
    assert "Marked for 1 round" in found.text
    assert found.record["targets"][0]["applied"] == [{"condition": "marked", "rounds": 1}]
    # the round it was used in is its one round (CMB-COND-6): the round's end takes it off
    assert "End of round: Ada is no longer Marked." in found.text
    assert "marked" not in hero(after, "Ada").conditions


def test_itm_gate_6_a_failed_gate_uses_the_page_up_for_nothing() -> None:
    game = game_with(lambda d: kit(d, "litany-page")["use"]["gate"].update({"difficulty": 13}))
    state = fighting(start_state(game, PARTY), game)
    after, answers = answer(game, state, PAGE, (1, 1))
    found = answers[0]
    assert found.record["gate"] == "failed" and ", needing 13, a failure." in found.text
    assert "it is used up for nothing" in found.text and "marked" not in hero(after, "Ada").conditions
    assert count_of(after, "Ada", "kit/litany-page") == 1


def test_itm_gate_5_a_heart_of_3_skips_the_check() -> None:
    state = with_hero(FIGHT, "Ada", abilities={"brawn": 2, "wits": 3, "heart": 3})
    _, answers = answer(GAME, state, PAGE, (1, 1))
    assert answers[0].record["gate"] == "skipped" and " rolls " not in answers[0].text


def test_itm_gate_8_a_condition_on_the_check_counts() -> None:
    def ward_rattled(doc: dict[str, Any]) -> None:
        doc["conditions"][0]["modifiers"][0]["skills"] = ["ward"]
    game = game_with(ward_rattled)
    state = fighting(start_state(game, PARTY), game)
    _, plain = answer(game, state, PAGE, (1, 1))
    shaken = with_hero(state, "Ada", conditions=("rattled",))
    _, rattled = answer(game, shaken, PAGE, (1, 1))
    assert rattled[0].record["gateRolls"] == plain[0].record["gateRolls"]
    assert rattled[0].record["gateTotal"] == plain[0].record["gateTotal"] - 1


def test_itm_gate_9_the_pool_fight_line_is_the_specs() -> None:
    grave = load_ruleset(fixture_json("rulesets/gravewatch.json"))
    record = {"gate": "passed", "gateTotal": 2, "gateDc": 2, "gateRolls": [8, 9],
              "gateLabel": "Ward"}
    assert gate_line(grave, "Ada", "Page of the vigil litany", record) == (
        "Ada rolls Ward to use Page of the vigil litany: 2 successes from 2 dice at 7 or more "
        "(8, 9), needing 2 successes, a success.")


# --- the round: order, conditions, determinism ------------------------------------------------

def test_a_use_acts_in_its_users_initiative_order_among_the_attacks() -> None:
    """Ada (12) before Goblin 1 (10): her flask fells it, so its strike written first is
    refused downed."""
    state = with_foe(FIGHT, "Goblin 1", hp=1)
    text = f'[attack: who="Goblin 1" target="Ada"] {FLASK}'
    _, answers = first(state, text, lambda a: a[1].ok and a[1].record["targets"][0]["result"]
                       != "miss")
    assert answers[0].reason == reasons.DOWNED and "felled:Goblin 1" in answers[1].record["events"]


def test_a_use_only_round_counts_the_conditions_down() -> None:
    _, answers = first(FIGHT, BELL, lambda a: not a[0].record["targets"][0]["saved"])
    assert "End of round: Goblin 2 is Rattled 1 more round." in answers[0].text
    assert answers[0].record["roundEnd"][0]["rounds"] == 1


def test_a_swipe_or_a_reordered_reply_rolls_the_same() -> None:
    text = f'{FLASK} [attack: who="Juno" target="Goblin 2"]'
    swapped = f'[attack: who="Juno" target="Goblin 2"] {FLASK}'
    first_after, one_way = answer(GAME, FIGHT, text, (1, 5))
    again, same = answer(GAME, FIGHT, text, (1, 5))
    _, other_way = answer(GAME, FIGHT, swapped, (1, 5))
    assert one_way == same and first_after == again
    assert one_way[0].record == other_way[1].record


# --- ITM-USE-25, ITM-RCHG-2/3/6: what the item says; charges back after the fight ---------------

def test_itm_use_25_the_details_and_the_gm_line_name_what_the_use_does() -> None:
    grave = load_ruleset(fixture_json("rulesets/gravewatch.json"))
    assert "Use " + (use_text(GAME, GAME.items["outfitter/poultice"].item) or "") == \
        "Use (Action): heals 1d4 + 1, range 0 paces, used up"
    bell = next(s for s in hero(START, "Ada").bag if s.item == "kit/dawn-bell")
    grave_bell = bell.model_copy(update={"item": "kit/dawn-bell"})
    state = start_state(grave, fixture_json("parties/gravewatch.json"))
    assert "use (Act): Steel 7 save negates it, Rattled, 1 of 3 charges" in \
        stack_line(grave, state, grave_bell)
    rung, _ = answer(GAME, FIGHT, BELL, (1, 1))  # the details show the charges left
    assert "2 of 3 charges left" in stack_line(GAME, rung, stack_of(rung, "Ada", "kit/dawn-bell"))


def test_itm_rchg_2_3_6_a_vigil_after_the_fight_fills_the_bell() -> None:
    rung, _ = answer(GAME, FIGHT, BELL, (1, 1))
    ended, _ = answer(GAME, rung, '[combat: op="end" outcome="victory"]', (1, 2))
    rested, answers = answer(GAME, ended, '[sheet: op="rest" rest="vigil" who="Ada"]', (1, 3))
    assert answers[0].ok and "Dawn bell 3/3 charges" in answers[0].text
    assert stack_of(rested, "Ada", "kit/dawn-bell").charges == 3


# --- ITM-USE-26, the Use event, plus, target= out of a fight ------------------------------------

def test_itm_use_26_an_invented_item_like_a_ruleset_item_is_used_like_it_charges_included() \
        -> None:
    text = ('[inventory: action="add" item="Greek fire" like="Fire flask" who="Ada"] '
            '[inventory: action="add" item="Bone whistle" like="Whistle charm" who="Ada"]')
    state, answers = answer(GAME, START, text)
    assert all(a.ok for a in answers)
    state = fighting(state)
    _, answers = first(state, '[inventory: action="use" item="Greek fire" who="Ada" '
                           'target="Goblin 1"]', _hit)
    row = answers[0].record["targets"][0]
    assert row["modifier"] == 4 and row["damage"] == sum(row["damageRolls"][0]) + 1
    assert answers[0].text.endswith("Greek fire: 0 of 1 left.")
    _, answers = answer(GAME, state, WHISTLE.replace("Whistle charm", "Bone whistle"), (1, 1))
    assert answers[0].text.endswith("Bone whistle: 1 of 2 left.")


def test_the_use_event_in_a_fight_aims_at_the_only_foe_standing() -> None:
    state = with_foe(FIGHT, "Goblin 2", hp=0)
    after, found = apply_event(GAME, state, {"action": "use", "item": "Pitch stone"}, "Ada",
                               TurnContext(state.seed, (1, 1)))
    assert found.ok and found.record["targets"][0]["target"] == "Goblin 1"
    assert found.record["playerMessage"] == "I use my Pitch stone."
    assert found.record["itemUsed"] == found.text and one(after, "Ada").spent == ("quick",)


def test_itm_plus_1_a_uses_plus_deals_its_further_amount_on_a_hit() -> None:
    game = game_with(lambda d: kit(d, "fire-flask")["use"].update(
        {"plus": [{"flat": 2, "type": "cold"}]}))
    state = fighting(start_state(game, PARTY), game)
    after, answers = first(state, FLASK, _hit, game)
    row = answers[0].record["targets"][0]
    assert row["plus"][0]["dealt"] == 2 and row["plus"][0]["damageType"] == "cold"
    assert row["damage"] == sum(row["damageRolls"][0]) + 1 + 2
    assert one(after, "Goblin 1").hp == max(10 - row["damage"], 0)


def test_target_out_of_a_fight_is_noted_and_the_item_acts_on_its_user() -> None:
    state = with_hero(START, "Ada", pools={"health": 6, "resolve": 2})
    after, answers = answer(GAME, state, TONIC, (1, 1))
    assert answers[0].ok and answers[0].notes == (
        "ignored target=: no formula fight is on, so the item acts on its user",)
    assert hero(after, "Ada").pools == {"health": 7, "resolve": 3}
    _, answers = answer(GAME, START, FLASK, (1, 1))  # ITM-OUT-7: it hits nobody
    assert "hits nobody, as there is no fight" in answers[0].text
