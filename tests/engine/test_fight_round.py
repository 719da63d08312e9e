"""A formula-combat round (DESIGN.md "Combat": "Rounds and order", "Records", "Dice";
spec/combat.md A.2, A.5, A.10, A.12..A.14; spec/items.md ITM-LOOT-11..14): foes strike heroes,
heroes fall and the fight is lost, a reply's attacks land in initiative order, a multiclass
hero's attacks, and a won fight's loot — on fixtures/rulesets/skirmish-round.json (skirmish.json
with two classes, a loot table on the standard template and a two-strike brute)."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Iterator
from fractions import Fraction

import pytest
from helpers import answer, bag, fell, fixture_json
from scipy.stats import chisquare

from engine import Answer, TurnContext, load_ruleset, start_state
from engine.actions.fight.formula import roll_attack
from engine.rules import reasons
from engine.rules.fight.formula import (
    classes,
    hero_defence,
    hero_health,
    hurt,
    in_order,
    largest_per_class,
)
from engine.rules.sheet import SheetView
from engine.rules.state import Combatant, State
from engine.ruleset import parse_formula

DOCUMENT = fixture_json("rulesets/skirmish-round.json")
PARTY = fixture_json("parties/skirmish-round.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
BRANNOC, ADA = 0, 1  # dex 12 and 14: defence 10 + @dex.mod = 11 and 12; hp 12/12 and 9/12


def game_with(**combat: object):
    document = copy.deepcopy(DOCUMENT)
    document["combat"].update(combat)
    return load_ruleset(document)


def fighting(text: str, game=GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def ordered(state: State, **initiative: int) -> State:
    """The fight with the initiatives given (the order a test needs, rather than fishing)."""
    assert state.encounter is not None
    combatants = in_order(c.model_copy(update={"initiative": initiative.get(c.name,
                                                                            c.initiative)})
                          for c in state.encounter.combatants)
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": combatants})})


def with_foe(state: State, name: str, **update: object) -> State:
    assert state.encounter is not None
    combatants = tuple(c.model_copy(update=update) if c.name == name else c
                       for c in state.encounter.combatants)
    return state.model_copy(update={"encounter": state.encounter.model_copy(
        update={"combatants": combatants})})


def with_pools(state: State, who: int, **pools: int) -> State:
    character = state.characters[who]
    return state.with_character(who, character.model_copy(update={
        "pools": {k.replace("_temporary", ":temporary"): v for k, v in pools.items()}}))


def combatant(state: State, name: str) -> Combatant:
    assert state.encounter is not None
    index = state.encounter.find(name)
    assert index is not None
    return state.encounter.combatants[index]


def hp(state: State, who: int) -> int:
    health = hero_health(GAME, state, who)
    assert health is not None
    return health.hp


def replies(state: State, text: str, turns: range, game=GAME
            ) -> Iterator[tuple[State, list[Answer]]]:
    for turn in turns:
        yield answer(game, state, text, (1, turn))


def first(state: State, text: str, wanted: Callable[[list[Answer]], bool], game=GAME,
          turns: range = range(400)) -> tuple[int, State, list[Answer]]:
    """The first turn key ``(1, n)`` whose answers are ``wanted`` (a deterministic search)."""
    for turn in turns:
        after, answers = answer(game, state, text, (1, turn))
        if wanted(answers):
            return turn, after, answers
    raise AssertionError(f"no turn of {turns} gives that")


GOBLINS = fighting('[combat: op="start" foe="Goblin" count="2"]')
BRUTE = fighting('[combat: op="start" foe="Brute" role="brute"]')


# --- a foe strikes a hero (CMB-ATK-7, CMB-ATK-A3..A6) ---------------------------------------

def test_cmb_atk_6_a_heros_defence_is_the_defence_formula_read_on_its_sheet() -> None:
    assert hero_defence(GAME, START, BRANNOC) == 11 and hero_defence(GAME, START, ADA) == 12


def test_cmb_atk_7_a_foe_adds_its_template_attack_and_deals_its_template_damage() -> None:
    """Goblin 1 (tier 1: attack 1, damage ``(@tier)d6 + @tier``) on Ada (defence 12, 9 hp)."""
    seen = Counter()
    for after, answers in replies(GOBLINS, '[attack: who="Goblin 1" target="Ada"]', range(300)):
        record = answers[0].record
        natural = record["rolls"][0]
        assert (record["attacker"], record["target"]) == ("Goblin 1", "Ada")
        assert record["modifier"] == 1 and record["total"] == natural + 1
        assert record["defence"] == 12 and record["hpMax"] == 12
        expected = ("critical" if natural == 20 else "miss" if natural == 1
                    else "hit" if natural + 1 >= 12 else "miss")
        assert record["result"] == expected
        seen[expected] += 1
        if expected == "miss":
            assert record["damage"] == 0 and record["hp"] == 9 and after.characters[ADA] \
                == START.characters[ADA]
            continue
        faces = record["damageRolls"]
        assert len(faces) == 1 and len(faces[0]) == (2 if expected == "critical" else 1)
        assert record["damage"] == sum(faces[0]) + 1  # CMB-ATK-5: the dice doubled, not the +1
        assert record["hp"] == max(9 - record["damage"], 0) == hp(after, ADA)
        assert after.characters[ADA].pools["hp"] == record["hp"]
    assert seen["critical"] and seen["hit"] and seen["miss"]


def test_a_foes_strike_spends_temporary_points_first() -> None:
    """ITM-OUT-4: temporary points sit beside the health pool as "hp:temporary"; a strike takes
    them first, and spent ones are gone."""
    state = with_pools(GOBLINS, ADA, hp=9, hp_temporary=3)
    hits = 0
    for after, answers in replies(state, '[attack: who="Goblin 1" target="Ada"]', range(200)):
        record = answers[0].record
        if record["result"] == "miss":
            assert record["temporary"] == 3
            continue
        hits += 1
        damage = record["damage"]
        left = 3 - min(3, damage)
        assert record["temporary"] == left and record["hp"] == 9 - max(damage - 3, 0)
        pools = after.characters[ADA].pools
        assert pools.get("hp:temporary") == (left or None) and pools["hp"] == record["hp"]
    assert hits


@pytest.mark.parametrize(("damage", "temporary", "points"), [
    (0, 3, 9), (2, 1, 9), (3, 0, 9), (5, 0, 7), (100, 0, 0)])
def test_hurt_takes_temporary_points_then_the_pool_never_below_0(damage, temporary,
                                                                   points) -> None:
    state = with_pools(START, ADA, hp=9, hp_temporary=3)
    after, health = hurt(GAME, state, ADA, damage)
    assert (health.hp, health.hp_max, health.temporary) == (points, 12, temporary)
    assert after.characters[ADA].pools.get("hp:temporary") == (temporary or None)
    assert after.characters[BRANNOC] is state.characters[BRANNOC]


def test_a_hero_on_a_health_track_takes_the_strike_on_the_track() -> None:
    """DESIGN.md "State": without a health pool a hero's hit points are its health track."""
    document = copy.deepcopy(DOCUMENT)
    document["live"] = {"tracks": [{"id": "vigour", "label": "Vigour", "kind": "health",
                                    "max": {"const": 10}}]}
    game = load_ruleset(document)
    party = copy.deepcopy(PARTY)
    for character in party["characters"]:
        character.pop("pools")
    state = fighting('[combat: op="start" foe="Brute" role="brute"]', game,
                     start_state(game, party))
    _, after, answers = first(state, '[attack: who="Brute" target="Ada"]',
                              lambda a: a[0].record["result"] != "miss", game)
    assert answers[0].record["hpMax"] == 10 and answers[0].record["hp"] == 0
    assert after.characters[ADA].tracks == {"vigour": 0}
    assert fell(answers[0].record) == ["down:Ada"]


# --- down, defeat, and acting again (CMB-TURN-8, A.12) ------------------------------------

def test_a_hero_at_0_is_down_and_the_last_hero_down_loses_the_fight() -> None:
    """Brute: 1d4 + 20 a strike, two a round: Ada (9) then Brannoc (12) go down; the second
    strike's record carries end:defeat, the encounter is over, and a later attack of the
    reply finds no fight."""
    hit = lambda a: all(x.ok and x.record["result"] != "miss" for x in a[:2])  # noqa: E731
    text = ('[attack: who="Brute" target="Ada"] [attack: who="Brute" target="Brannoc"] '
            '[attack: who="Brute" target="Ada"]')
    _, after, answers = first(BRUTE, text, hit)
    assert fell(answers[0].record) == ["down:Ada"] and answers[0].record["hp"] == 0
    assert fell(answers[1].record) == ["down:Brannoc", "end:defeat"]
    assert "The fight is lost." in answers[1].text
    assert answers[2].reason == reasons.NO_ENCOUNTER
    assert after.encounter is None and hp(after, ADA) == hp(after, BRANNOC) == 0


def test_cmb_turn_8_a_downed_hero_does_not_act_and_nothing_changes() -> None:
    state = with_pools(BRUTE, ADA, hp=0)
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Brute"]', (1, 0))
    assert answers[0].reason == reasons.DOWNED and after is state


def test_a_felled_foes_later_attack_is_downed_and_changes_nothing() -> None:
    state = with_foe(GOBLINS, "Goblin 1", hp=0)
    after, answers = answer(GAME, state, '[attack: who="Goblin 1" target="Ada"]', (1, 0))
    assert answers[0].reason == reasons.DOWNED and after is state


def test_a_hero_healed_above_0_acts_again_in_a_later_reply() -> None:
    state = with_pools(BRUTE, ADA, hp=0)
    healed, answers = answer(GAME, state, '[inventory: action="use" item="Tonic" who="Ada"]',
                             (1, 0))
    assert answers[0].ok and hp(healed, ADA) == 5
    _, answers = answer(GAME, healed, '[attack: who="Ada" target="Brute"]', (1, 1))
    assert answers[0].ok and answers[0].record["attacker"] == "Ada"


def test_in_one_reply_the_attacks_come_before_a_heal() -> None:
    """DESIGN.md "Rounds and order": attacks, then every other tag; so the tonic written first
    still comes after Ada's attack, which is refused ``downed``."""
    state = with_pools(BRUTE, ADA, hp=0)
    after, answers = answer(GAME, state, '[inventory: action="use" item="Tonic" who="Ada"] '
                            '[attack: who="Ada" target="Brute"]', (1, 0))
    assert answers[0].ok and answers[1].reason == reasons.DOWNED
    assert hp(after, ADA) == 5


# --- the order within a reply (CMB-TURN-6..8, 14; OQ-CMB-7 b) -------------------------------

def test_cmb_turn_6_8_a_faster_foe_downs_the_hero_before_its_attack() -> None:
    """CMB-TURN-A2/A3: the faster foe's strike resolves first and downs Ada, whose action is
    skipped."""
    state = ordered(BRUTE, Brute=30, Ada=1, Brannoc=0)
    text = '[attack: who="Ada" target="Brute"] [attack: who="Brute" target="Ada"]'
    _, after, answers = first(state, text, lambda a: a[1].record.get("result") != "miss")
    assert answers[1].record["slot"] == 1 and fell(answers[1].record) == ["down:Ada"]
    assert answers[0].reason == reasons.DOWNED and after.encounter is not None
    assert combatant(after, "Brute").hp == 30  # Ada's strike never happened


def test_cmb_turn_7_a_foe_felled_later_in_the_round_still_landed_its_strike() -> None:
    rat = fighting('[combat: op="start" foe="Rat" role="minion"]')
    state = ordered(rat, Rat=30, Brannoc=1)
    text = '[attack: who="Brannoc" target="Rat"] [attack: who="Rat" target="Brannoc"]'
    _, after, answers = first(state, text, lambda a: all(x.record["result"] != "miss" for x in a))
    struck, felled = answers[1].record, answers[0].record
    assert (struck["slot"], felled["slot"]) == (1, 2)
    assert fell(felled) == ["felled:Rat", "end:victory"] and after.encounter is None
    assert hp(after, BRANNOC) == 12 - struck["damage"] == struck["hp"]


def test_a_slower_foe_strikes_after_the_hero_and_a_hero_wins_a_tie() -> None:
    """CMB-TURN-4 (a hero first on a tie), OQ-CMB-7 b (foes after the hero act after it)."""
    state = ordered(GOBLINS, **{"Goblin 1": 9, "Goblin 2": 5, "Brannoc": 9, "Ada": 2})
    text = ('[attack: who="Goblin 2" target="Ada"] [attack: who="Ada" target="Goblin 2"] '
            '[attack: who="Goblin 1" target="Ada"] [attack: target="Goblin 1"]')
    _, answers = answer(GAME, state, text, (1, 0))
    assert [a.record["slot"] for a in answers] == [3, 4, 2, 1]


def test_several_attacks_of_one_attacker_keep_their_text_order() -> None:
    state = ordered(BRUTE, Brute=30)
    text = ('[attack: target="Brute"] [attack: who="Brute" target="Brannoc"] '
            '[attack: who="Brute" target="Ada"]')
    _, answers = answer(GAME, state, text, (1, 3))
    assert [a.record.get("slot") for a in answers[1:]] == [1, 2]
    assert [a.record["target"] for a in answers[1:]] == ["Brannoc", "Ada"]


def test_a_reordered_or_reworded_swipe_rolls_the_same_and_ends_in_the_same_state() -> None:
    """DESIGN.md "Dice": keyed by the round, the attacker and its strike number."""
    parts = ['[attack: target="Goblin 1"]', '[attack: who="Goblin 2" target="Ada"]',
             '[attack: who="Ada" target="Goblin 2"]', '[attack: who="Goblin 1" target="Brannoc"]']
    one, first_answers = answer(GAME, GOBLINS, " ".join(parts), (1, 0))
    swiped = f"The goblins close in. {parts[3]} Ada ducks. {parts[2]} {parts[1]} {parts[0]}"
    two, second_answers = answer(GAME, GOBLINS, swiped, (1, 0))
    assert one.canonical() == two.canonical()
    by_attacker = {a.record["attacker"]: a.record for a in first_answers}
    assert all(by_attacker[a.record["attacker"]] == a.record for a in second_answers)
    # each on its own, in the order of initiative, rolls the same too (slots aside)
    state = GOBLINS
    for name in [c.name for c in GOBLINS.encounter.combatants]:
        tag = next(p for p in parts if (f'who="{name}"' in p) or (
            name == "Brannoc" and "who=" not in p))
        state, alone = answer(GAME, state, tag, (1, 0))
        assert {**alone[0].record, "slot": 0} == {**by_attacker[name], "slot": 0}
    assert state.canonical() == one.canonical()


def test_start_comes_before_the_attacks_and_end_after_everything() -> None:
    """DESIGN.md "Rounds and order": out of a fight, an attack written before the start still
    finds the fight; an end written first still comes last."""
    after, answers = answer(GAME, START, '[attack: target="Goblin"] '
                            '[combat: op="start" foe="Goblin"]', (1, 0))
    assert answers[0].ok and answers[1].ok and after.encounter is not None
    after, answers = answer(GAME, GOBLINS, '[combat: op="end" outcome="fled"] '
                            '[attack: target="Goblin 1"]', (1, 0))
    assert answers[1].ok and answers[0].record == {"outcome": "fled", "rounds": 1, "events": ["end:fled"]}
    assert after.encounter is None


# --- the budget: foes and multiclass heroes (CMB-TURN-9..12) -------------------------------

def test_a_foe_attacks_once_a_round_and_a_second_is_no_time() -> None:
    once, answers = answer(GAME, GOBLINS, '[attack: who="Goblin 1" target="Ada"]', (1, 0))
    assert answers[0].ok
    twice, answers = answer(GAME, once, '[attack: who="Goblin 1" target="Brannoc"]', (1, 0))
    assert answers[0].reason == reasons.NO_TIME and answers[0].text.startswith("NO TIME")
    assert twice is once
    _, answers = answer(GAME, once, '[attack: who="Goblin 1" target="Brannoc"]', (1, 1))
    assert answers[0].ok and answers[0].record["round"] == 2


def test_a_template_with_combat_attacks_strikes_that_many_times_a_round() -> None:
    """The brute's template gives ``"attacks": "2"``, read when it joined."""
    assert combatant(BRUTE, "Brute").attacks == 2 and combatant(GOBLINS, "Goblin 1").attacks \
        is None
    state = with_pools(with_pools(BRUTE, ADA, hp=1000), BRANNOC, hp=1000)
    text = ('[attack: who="Brute" target="Ada"] [attack: who="Brute" target="Brannoc"] '
            '[attack: who="Brute" target="Ada"]')
    _, answers = answer(GAME, state, text, (1, 0))
    assert [a.ok for a in answers] == [True, True, False]
    assert answers[2].reason == reasons.NO_TIME


DUMMY = {"role": "dummy", "tracks": {"hp": "1000"},
         "combat": {"defence": "1", "attack": "0", "damage": "1"}}


@pytest.mark.parametrize(("who", "allowed"), [("Brannoc", 3), ("Ada", 1)])
def test_cmb_turn_11_a_multiclass_hero_has_the_largest_attacks_of_one_class(who,
                                                                            allowed) -> None:
    """``"attacks": "@class.attacks"``: Brannoc is a level 2 fighter (1 attack) and a level 10
    ranger (1 + floor(10 / 5) = 3): 3 attacks an Action, never the sum 4; Ada, ranger 2: 1."""
    game = game_with(templates=[DUMMY])
    state = fighting('[combat: op="start" foe="Dummy"]', game)
    text = " ".join([f'[attack: who="{who}" target="Dummy"]'] * (allowed + 1))
    _, answers = answer(game, state, text, (1, 0))
    assert [a.ok for a in answers] == [True] * allowed + [False]
    assert answers[-1].reason == reasons.NO_TIME



def _sword_game(strikes: object = None, budget: str = "action"):
    """skirmish-round with the longsword on ``budget`` and, where given, ``strikes``."""
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["templates"].append(DUMMY)
    sword = next(e for c in document["catalogs"] for e in c["entries"] if e["id"] == "longsword")
    sword["item"]["attack"]["budget"] = budget
    if strikes is not None:
        sword["item"]["attack"]["strikes"] = strikes
    return load_ruleset(document)


def _swords(game) -> State:
    """Both heroes with a worn longsword, in a fight with the dummy."""
    sword = {"item": "arms/longsword", "count": 1, "equipped": True}
    people = copy.deepcopy(PARTY)
    for character in people["characters"]:
        character["bag"] = [sword]
    return fighting('[combat: op="start" foe="Dummy" role="dummy"]', game,
                    start_state(game, people))


@pytest.mark.parametrize(("strikes", "budget", "who", "allowed"), [
    pytest.param(None, "action", "Brannoc", 3, id="no-strikes-extra-attack-stands"),
    pytest.param(None, "action", "Ada", 1, id="no-strikes-one-attack"),
    pytest.param({"const": 2}, "action", "Brannoc", 2, id="strikes-in-place-of-three"),
    pytest.param({"const": 2}, "action", "Ada", 2, id="strikes-in-place-of-one"),
    pytest.param({"field": "level_fighter"}, "action", "Brannoc", 2, id="read-on-the-sheet"),
    pytest.param({"field": "level_fighter"}, "action", "Ada", 0, id="none-on-her-sheet"),
    pytest.param(None, "bonus", "Brannoc", 0, id="an-action-without-attacks"),
    pytest.param({"const": 1}, "bonus", "Brannoc", 1, id="strikes-on-an-action-without"),
])
def test_itm_wpn_20_strikes_is_the_attacks_one_spend_of_the_weapon_buys(
        strikes, budget, who, allowed) -> None:
    """ITM-WPN-20 as issue 44 reads it (docs/items-rules.md): a weapon's ``strikes``, read on
    the wearer's sheet, is how many attacks one spend of its budget buys, in place of the
    action's ``attacks``; without ``strikes`` the action's ``attacks`` governs (CMB-TURN-10/16:
    Brannoc's 3 from ``@class.attacks`` stand with any weapon; an action without ``attacks``
    allows none). One past that is NO TIME, and changes nothing."""
    game = _sword_game(strikes, budget)
    state = _swords(game)
    text = " ".join([f'[attack: who="{who}" target="Dummy"]'] * (allowed + 1))
    after, answers = answer(game, state, text, (1, 0))
    assert [a.ok for a in answers] == [True] * allowed + [False]
    assert answers[-1].reason == reasons.NO_TIME
    if allowed == 0:
        assert after is state


def test_itm_wpn_20_the_combat_block_counts_the_worn_weapons_strikes() -> None:
    """ITM-WPN-20: the COMBAT block shows the attacks the first worn weapon's budget buys."""
    from engine.text.fight.block import combat_block

    def lines(game) -> dict[str, str]:
        block = combat_block(game, _swords(game))
        return {line.split(". ", 1)[1].split(" (")[0]: line for line in block.splitlines()
                if line[:1].isdigit()}

    strikes = lines(_sword_game({"const": 2}))
    assert "attacks: 2 (Action)" in strikes["Brannoc"] and "attacks: 2 (Action)" in strikes["Ada"]
    plain = lines(_sword_game())
    assert "attacks: 3 (Action)" in plain["Brannoc"] and "attacks: 1 (Action)" in plain["Ada"]


def _heft_document(weapon_reads: dict | None) -> dict:
    """skirmish-round whose damage is ``@heft + 1`` with ``heft`` read as the attacker's
    ``@str.mod``, and a longsword whose dice read a stat it gives no value for (so it deals
    the system's damage, ITM-WPN-21) with, where given, reads of its own."""
    document = copy.deepcopy(DOCUMENT)
    document["combat"]["templates"].append(DUMMY)
    document["combat"]["attack"].update(reads={"heft": "@str.mod"}, damage="@heft + 1")
    document["items"]["stats"] = [{"id": "heft_dice", "label": "Heft dice", "type": "dice"}]
    sword = document["catalogs"][0]["entries"][0]
    sword["item"]["attack"]["damage"]["dice"] = {"stat": "heft_dice"}
    if weapon_reads is not None:
        sword["item"]["attack"]["reads"] = weapon_reads
    return document


@pytest.mark.parametrize(("weapon_reads", "with_", "damage"), [
    pytest.param(None, "Longsword", 3 + 1, id="no-reads-the-systems"),
    pytest.param({"heft": "@dex.mod + 10"}, "Longsword", 1 + 10 + 1, id="the-weapons-own"),
    pytest.param({"heft": "@dex.mod + 10"}, "unarmed", 3 + 1, id="unarmed-the-systems"),
])
def test_cmb_reads_6_a_weapons_own_read_takes_precedence(weapon_reads, with_, damage) -> None:
    """CMB-READS-6, CMB-ATK-A2 (the attacker's reads, each name overridden by the weapon's
    own): a weapon naming a value of ``combat.attack.reads`` gives it its own value,
    computed for the wearer (Brannoc: Str 16, +3; Dex 12, +1), in place of the system's;
    CMB-READS-7: an unarmed strike reads the system's. (Without dice of its own the longsword
    deals the system's damage as it is, its own Str not added.)"""
    game = load_ruleset(_heft_document(weapon_reads))
    state = _swords(game)
    hits = []
    for turn in range(12):
        _, answers = answer(game, state, f'[attack: who="Brannoc" target="Dummy" with="{with_}"]',
                            (1, turn))
        assert answers[0].ok, answers[0].text
        if answers[0].record["result"] != "miss":
            hits.append(answers[0].record["damage"])
    assert hits and set(hits) == {damage}


@pytest.mark.parametrize(("reads", "problem"), [
    pytest.param({"reach": "2"}, '/catalogs/0/entries/0/item/attack/reads/reach: "reach" is '
                 "not a value of combat.attack.reads (it has: heft)", id="an-unknown-read"),
    pytest.param({"heft": "@luck"}, '/catalogs/0/entries/0/item/attack/reads/heft: unknown '
                 'reference "@luck"', id="an-unknown-reference"),
])
def test_cmb_reads_6_a_weapons_reads_are_checked_at_load(reads, problem) -> None:
    """CMB-READS-6: a weapon's read names one of the system's, and reads the wearer's sheet."""
    from helpers import problems_of
    assert problem in problems_of(_heft_document(reads))

def test_largest_per_class_reads_each_class_once_and_takes_the_largest() -> None:
    formula = parse_formula("@class.attacks")
    brannoc = SheetView(GAME, START.characters[BRANNOC], START)
    assert classes(brannoc) == ["fighter", "ranger"]
    stream = TurnContext(START.seed, (0,)).stream("attack", "budget")
    assert largest_per_class(brannoc, formula, stream) == 3
    assert largest_per_class(brannoc, parse_formula("@class.attacks + 1"), stream) == 4
    nobody = START.characters[ADA].model_copy(update={"fields": {}})
    view = SheetView(GAME, nobody, START)
    assert classes(view) == [] and largest_per_class(view, formula, stream) == 1  # class_attacks


# --- victory loot (ITM-LOOT-11..14) ----------------------------------------------------------

def test_itm_loot_12_14_a_won_fight_drops_each_felled_foes_table_into_the_shared_view() -> None:
    """ITM-LOOT-1/3: a won fight drops loot once, straight into the bags, from the ruleset's
    own table, the one the foe's template names with ``loot`` (ITM-LOOT-11). The last goblin felled: Goblin 1 (felled before) and Goblin 2 each drop
    "goblin_pockets" (a Torch, 1d3) into the shared view — Brannoc, the player, first; keyed by the reply and
    the foe, so a swipe drops the same."""
    state = with_foe(with_foe(GOBLINS, "Goblin 1", hp=0), "Goblin 2", hp=1)
    turn, after, answers = first(state, '[attack: target="Goblin 2"]',
                                 lambda a: a[0].record["result"] != "miss")
    record = answers[0].record
    assert fell(record) == ["felled:Goblin 2", "end:victory"] and after.encounter is None
    foes = [c.name for c in state.encounter.combatants if c.side == "foes"]
    assert [drop["foe"] for drop in record["loot"]] == foes  # in the order of initiative
    total = 0
    for dropped in record["loot"]:
        assert dropped["table"] == "goblin_pockets" and dropped["rolls"] == 1
        (drop,) = dropped["drops"]
        assert drop["name"] == "Torch" and 1 <= drop["count"] <= 3
        assert drop["to"] == [{"who": "Brannoc", "count": drop["count"]}]
        total += drop["count"]
    assert dict(bag(after, "Brannoc"))["Torch"] == 1 + total
    assert f"Loot: {foes[0]} (Goblin pockets): Torch" in answers[0].text
    assert [j.text.split(":")[0] for j in after.journal[-2:]] == [
        f"Loot (Goblin pockets, {foe})" for foe in foes]
    again, _ = answer(GAME, state, '[attack: target="Goblin 2"]', (1, turn))
    assert again.canonical() == after.canonical()


def test_a_felled_foe_without_a_loot_table_drops_nothing() -> None:
    rat = with_foe(fighting('[combat: op="start" foe="Rat" role="minion"]'), "Rat", hp=1)
    _, after, answers = first(rat, '[attack: target="Rat"]',
                           lambda a: a[0].record["result"] != "miss")
    assert fell(answers[0].record) == ["felled:Rat", "end:victory"]
    assert "loot" not in answers[0].record and after.journal == rat.journal


@pytest.mark.parametrize(("outcome", "drops"), [("victory", True), ("fled", False),
                                                ("truce", False), ("defeat", False)])
def test_ending_a_fight_drops_the_felled_foes_loot_on_victory_only(outcome, drops) -> None:
    """ITM-LOOT-12: a won fight rolls the tables of the defeated (felled) foes; a standing foe
    drops nothing, and a fight fled, settled or lost drops nothing at all."""
    state = with_foe(GOBLINS, "Goblin 1", hp=0)
    after, answers = answer(GAME, state, f'[combat: op="end" outcome="{outcome}"]', (1, 0))
    assert answers[0].ok and after.encounter is None
    if not drops:
        assert "loot" not in answers[0].record and after.characters == state.characters
        return
    assert [d["foe"] for d in answers[0].record["loot"]] == ["Goblin 1"]
    assert dict(bag(after, "Brannoc"))["Torch"] > 1


# --- refusals: each leaves the state unchanged -----------------------------------------------

NO_HEALTH = copy.deepcopy(DOCUMENT)
NO_HEALTH["live"] = {"pools": []}
NO_HEALTH_GAME = load_ruleset(NO_HEALTH)
NO_HEALTH_PARTY = copy.deepcopy(PARTY)
for _character in NO_HEALTH_PARTY["characters"]:
    _character.pop("pools")
NO_HEALTH_FIGHT = fighting('[combat: op="start" foe="Goblin"]', NO_HEALTH_GAME,
                           start_state(NO_HEALTH_GAME, NO_HEALTH_PARTY))


@pytest.mark.parametrize(("game", "state", "text", "reason"), [
    (GAME, GOBLINS, '[attack: who="Goblin 1" target="Goblin 2"]', reasons.UNSUPPORTED),
    (GAME, GOBLINS, '[attack: who="Ada" target="Brannoc"]', reasons.UNSUPPORTED),
    (GAME, GOBLINS, '[attack: who="Goblin 1"]', reasons.MISSING_ATTRIBUTE),  # two heroes
    (GAME, GOBLINS, '[attack: who="Goblin 9" target="Ada"]', reasons.UNKNOWN_COMBATANT),
    (GAME, with_pools(GOBLINS, ADA, hp=0), '[attack: who="Goblin 1" target="Ada"]',
     reasons.TARGET_DOWN),
    (GAME, with_pools(GOBLINS, ADA, hp=0), '[attack: who="Ada" target="Goblin 1"]',
     reasons.DOWNED),
    (GAME, with_foe(GOBLINS, "Goblin 2", hp=0), '[attack: who="Goblin 2" target="Ada"]',
     reasons.DOWNED),
    (GAME, START, '[attack: who="Goblin 1" target="Ada"]', reasons.NO_ENCOUNTER),
    (NO_HEALTH_GAME, NO_HEALTH_FIGHT, '[attack: who="Goblin" target="Ada"]',
     reasons.UNSUPPORTED),
])
def test_every_refusal_of_a_round_leaves_the_state_unchanged(game, state, text,
                                                              reason) -> None:
    after, answers = answer(game, state, text, (1, 0))
    assert (answers[0].ok, answers[0].reason) == (False, reason), answers[0].text
    assert after is state


def test_a_foe_attacks_the_only_hero_standing_without_a_target() -> None:
    state = with_pools(GOBLINS, ADA, hp=0)
    _, answers = answer(GAME, state, '[attack: who="Goblin 1"]', (1, 0))
    assert answers[0].ok and answers[0].record["target"] == "Brannoc"


# --- the exact hit rate of a foe (CMB-ATK-A3/A4) ---------------------------------------------

def test_cmb_atk_a4_exact_hit_rate_of_d20_plus_3_against_a_heros_defence_11() -> None:
    """A tier 3 foe (attack 3) against Brannoc's defence 11: natural 20 critical (1/20),
    naturals 8..19 hit (12/20), 1..7 miss (7/20) — ≥ 20,000 strikes through the attack check,
    chi-square against the enumeration."""
    enumerated = Counter()
    for natural in range(1, 21):
        enumerated["critical" if natural == 20 else "miss" if natural == 1
                   else "hit" if natural + 3 >= 11 else "miss"] += Fraction(1, 20)
    assert enumerated == {"critical": Fraction(1, 20), "hit": Fraction(12, 20),
                          "miss": Fraction(7, 20)}
    defence = hero_defence(GAME, START, BRANNOC)
    view = SheetView(GAME, None, START)
    draws = 20_000
    seen = Counter(roll_attack(GAME, view, "Orc", 3, defence, 0,
                               TurnContext(START.seed, (2, n)))[1] for n in range(draws))
    kinds = ["critical", "hit", "miss"]
    expected = [float(enumerated[k] * draws) for k in kinds]
    assert chisquare([seen[k] for k in kinds], expected).pvalue > 1e-4


def test_itm_wpn_4_weapons_add_to_the_systems_attack_and_a_foes_own() -> None:
    """ITM-WPN-4: a hero with a worn longsword still has the system's attack (unarmed:
    ``1 + @str.mod``, Brannoc's 1 + 3) beside the weapon's (1d8 + 3 slashing), and a foe still
    strikes with its template's own attack (the dummy's 1)."""
    game = _sword_game()
    state = _swords(game)
    seen: dict[str, set[int]] = {"unarmed": set(), "Longsword": set()}
    for turn in range(12):
        for weapon in seen:
            _, answers = answer(game, state, f'[attack: who="Brannoc" target="Dummy" '
                                             f'with="{weapon}"]', (1, turn))
            record = answers[0].record
            assert answers[0].ok and record["weapon"] == weapon
            if record["result"] == "hit":
                seen[weapon].add(record["damage"])
    assert seen["unarmed"] == {4}
    assert seen["Longsword"] and seen["Longsword"] <= set(range(4, 12))
    _, answers = answer(game, state, '[attack: who="Dummy" target="Ada"]', (1, 0))
    assert answers[0].ok and answers[0].record["damage"] in (0, 1)
