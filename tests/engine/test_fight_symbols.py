"""Symbol-pool fights (issue 25; CHK-SYM-35, CMB-GEN-3; engine/rules/fight/symbols.py,
engine/actions/fight/check_kinds.py) on fixtures/rulesets/symbols-genesys-fight.json: Genesys dice,
``combat.attack`` rolling Melee against ``difficulty`` 2 opposing dice, a target's defence as
setback dice, a weapon's toHit as boost dice; net successes hit and add to the damage; a
triumph makes a hit critical (CMB-ATK-5: its damage dice doubled)."""

from __future__ import annotations

import copy
from collections import Counter
from typing import Any

import pytest
from helpers import answer, drop, fixture_json, hero, one, problems_of, put
from scipy.stats import chisquare

from engine import TurnContext, load_ruleset, start_state
from engine.actions.checks import symbols
from engine.actions.fight.check_kinds import attack_read, attack_roll, read_result
from engine.dice import Stream
from engine.rules import reasons
from engine.rules.fight.symbols import extra_damage, opposing, setback_dice, symbol_result
from engine.rules.sheet import SheetView
from engine.rules.state import State
from engine.ruleset import combat_kind
from engine.ruleset.resolution import SymbolResolution

DOCUMENT = fixture_json("rulesets/symbols-genesys-fight.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, fixture_json("parties/symbols-genesys-fight.json"))
FIGHT = '[combat: op="start" foe="Raider" role="minion"]'  # tier 1: ability 2, rank 1, def 1
DRAWS = 20_000
DICE = {d["id"]: d["faces"] for d in DOCUMENT["resolution"]["dice"]}


def fighting(state: State = START, text: str = FIGHT) -> State:
    after, answers = answer(GAME, state, text)
    assert answers[0].ok, answers
    return after


# --- the exact distribution of a small pool (chi-square against enumeration) -----------------

Vector = tuple[int, int, int, int, int, int]  # raw s, f, a, h, t, d
ORDER = ("s", "f", "a", "h", "t", "d")


def convolve(dice: list[str]) -> Counter[Vector]:
    """CHK-SYM-A15: the raw symbol counts of ``dice``, convolved die by die."""
    total: Counter[Vector] = Counter({(0, 0, 0, 0, 0, 0): 1})
    for die in dice:
        step: Counter[Vector] = Counter()
        for vector, weight in total.items():
            for face in DICE[die]:
                added = list(vector)
                for mark in face:
                    added[ORDER.index(mark)] += 1
                step[tuple(added)] += weight  # type: ignore[index]
        total = step
    return total


def read(vector: Vector) -> tuple[str, int]:
    """CHK-SYM-A9..A12 by hand: a triumph counts a success, a despair a failure, then s/f and
    a/h cancel; (result, net successes)."""
    s, f, _a, _h, t, d = vector
    s, f = s + t, f + d
    net = max(s - f, 0)
    if net < 1:
        return "miss", 0
    return ("critical" if t else "hit"), net


def read_vector(res: SymbolResolution, record: dict[str, Any]) -> str:
    """The result of one recorded check, by hand from its dice and faces."""
    vector = [0] * 6
    for row in record["symbolDetails"]["dice"]:
        for mark in row["symbols"]:
            vector[ORDER.index(mark)] += 1
    return read(tuple(vector))[0]  # type: ignore[arg-type]


def category(result: str, net: int) -> str:
    return result if result != "hit" else f"hit {min(net, 3)}"


@pytest.mark.parametrize(("who", "modifier", "defence", "dice"), [
    # Kira: Agility 3, Melee rank 1 → 2 ability + 1 proficiency; 2 difficulty; defence 1
    ("Kira", 0, 1, ["ability", "ability", "proficiency", "difficulty", "difficulty",
                    "setback"]),
    # Osk: Agility 1, Melee rank 2 → 1 ability + 1 proficiency; the axe's toHit 1: 1 boost
    ("Osk", 1, 0, ["ability", "proficiency", "boost", "difficulty", "difficulty"]),
])
def test_chk_sym_35_an_attack_follows_the_enumerated_pool(who, modifier, defence, dice) -> None:
    """CHK-SYM-A1..A12, A15: the attack's pool as the engine builds it (one check of it), then
    20,000 pools of those dice drawn with the engine's dice and read with its tally and
    result, against the convolution."""
    state = fighting()
    view = SheetView(GAME, hero(state, who), state)
    built = attack_read(GAME, view, who, modifier, defence)
    assert built is not None
    res, request = built
    assert isinstance(res, SymbolResolution)
    stream = Stream(state.seed, (0,), "chi-square")
    once = symbols.resolve(res, request, stream, True)
    plan = list(once.record["thrown"])
    assert sorted(plan) == sorted(dice)
    assert read_result(res, once) == read_vector(res, once.record)
    sides = {d.id: len(d.faces) for d in res.dice}
    needed, critical = res.success.needed, res.critical_success
    seen: Counter[str] = Counter()
    for _ in range(DRAWS):
        raw, net = symbols.tally(res, [(die, stream.die(sides[die])) for die in plan])
        result = symbol_result(net["s"], needed, bool(critical and raw[critical]))
        seen[category(result, net["s"])] += 1
    weights: Counter[str] = Counter()
    for vector, weight in convolve(dice).items():
        weights[category(*read(vector))] += weight
    total = sum(weights.values())
    kinds = sorted(weights)
    assert sum(seen.values()) == DRAWS and set(seen) <= set(kinds)
    assert chisquare([seen[k] for k in kinds],
                     [DRAWS * weights[k] / total for k in kinds]).pvalue > 1e-4


def test_chk_sym_a15_the_enumeration_reads_the_worked_example() -> None:
    """checks.md §6.3 worked example: a triumph against a failure leaves 1t, a failed check."""
    assert read((0, 1, 0, 0, 1, 0)) == ("miss", 0)
    assert read((2, 1, 1, 0, 1, 0)) == ("critical", 2)
    assert sum(convolve(["ability", "difficulty"]).values()) == 64


# --- the pure rules ---------------------------------------------------------------------------

def test_the_pure_rules() -> None:
    assert opposing(None, 5) == 2 and opposing(9, 5) == 5 and opposing(-1, 5) == 0
    assert setback_dice(2) == 2 and setback_dice(-3) == 0
    assert symbol_result(0, 1, True) == "miss"  # CHK-SYM-31: a triumph never makes a hit
    assert symbol_result(2, 1, False) == "hit" and symbol_result(1, 1, True) == "critical"
    assert symbol_result(1, 2, False) == "miss"  # success.needed
    assert extra_damage(3, "hit") == 3 and extra_damage(3, "miss") == 0


# --- a fight ----------------------------------------------------------------------------------

def test_cmb_gen_3_a_symbol_pool_ruleset_fights_with_symbol_pool_combat() -> None:
    assert combat_kind(GAME.ruleset) == "symbol-pool"
    state = fighting()
    raider = one(state, "Raider")
    assert (raider.hp, raider.defence, raider.attack, raider.modifier) == (6, 1, 1, 2)
    # CMB-TURN-15: initiative is a Vigilance check; its net successes order the fight
    assert {c.name for c in state.encounter.combatants} == {"Kira", "Osk", "Raider"}


def _turn(state: State, who: str, wanted: Any, defence: int = 1) -> int:
    """The first reply (0, n) whose attack by ``who`` satisfies ``wanted`` (the engine's own
    attack, with the dice key a fight uses)."""
    index = state.character_index(who)
    view = SheetView(GAME, state.characters[index] if index is not None else None, state)
    modifier = 0 if who == "Kira" else 1 if who == "Osk" else one(state, who).attack or 0
    for n in range(1, 5000):
        rolled = attack_roll(GAME, view, who, modifier, defence, 0,
                             TurnContext(state.seed, (0, n)))
        assert rolled is not None
        if wanted(rolled):
            return n
    raise AssertionError("not found")


def test_a_hit_deals_the_weapons_damage_plus_the_net_successes() -> None:
    state = fighting()
    turn = _turn(state, "Kira", lambda r: r[1] == "hit")
    after, answers = answer(GAME, state, '[attack: who="Kira" target="Raider"]', (0, turn))
    record = answers[0].record
    assert record["result"] == "hit" and record["successes"] >= 1
    assert record["total"] == record["successes"]
    # the Short blade: 1d2 + 2, and one more per net success
    assert record["damage"] == sum(record["damageRolls"][0]) + 2 + record["successes"]
    assert one(after, "Raider").hp == max(6 - record["damage"], 0)
    assert record["difficulty"] == 2 and record["setback"] == 1  # the raider's defence 1
    assert record["thrown"] == ["ability", "ability", "proficiency", "difficulty",
                                "difficulty", "setback"]
    assert record["symbols"].startswith(f"{record['successes']}s")


def test_cmb_atk_5_a_triumph_on_a_hit_is_critical_and_doubles_the_dice() -> None:
    state = fighting()
    turn = _turn(state, "Kira", lambda r: r[1] == "critical")
    _, answers = answer(GAME, state, '[attack: who="Kira" target="Raider"]', (0, turn))
    record = answers[0].record
    assert record["result"] == "critical" and record["criticalSuccess"] is True
    assert len(record["damageRolls"][0]) == 2  # 1d2 → 2d2
    assert record["damage"] == sum(record["damageRolls"][0]) + 2 + record["successes"]


def test_chk_sym_31_a_triumph_on_a_miss_is_recorded_and_misses() -> None:
    state = fighting()
    turn = _turn(state, "Kira", lambda r: r[1] == "miss"
                 and r[0].record["symbolDetails"]["criticalSuccess"])
    after, answers = answer(GAME, state, '[attack: who="Kira" target="Raider"]', (0, turn))
    record = answers[0].record
    assert (record["result"], record["criticalSuccess"], record["damage"]) == ("miss", True, 0)
    assert one(after, "Raider").hp == 6


def test_no_despair_without_upgraded_opposing_dice() -> None:
    """An attack rolls plain difficulty dice (no upgrade to Challenge), so the despair mark
    (CHK-SYM-30) is recorded False: the only die with a despair face is never thrown."""
    state = fighting()
    for n in range(1, 200):
        _, answers = answer(GAME, state, '[attack: who="Raider" target="Kira"]', (0, n))
        assert answers[0].record["criticalFailure"] is False
        assert "challenge" not in answers[0].record["thrown"]


def test_a_foes_pool_is_its_template_ability_and_attack_against_the_heros_defence() -> None:
    """CMB-TPL-5/7: a minion of tier 1 has ability modifier 2 and attack (rank) 1 → one
    ability and one proficiency die; Kira's defence floor(Agility 3 / 3) = 1 setback die, Osk's
    floor(1 / 3) = 0."""
    state = fighting()
    turn = _turn(state, "Raider", lambda r: r[1] != "miss")
    after, answers = answer(GAME, state, '[attack: who="Raider" target="Kira"]', (0, turn))
    record = answers[0].record
    assert record["thrown"] == ["ability", "proficiency", "difficulty", "difficulty",
                                "setback"]
    assert record["defence"] == 1 and record["modifier"] == 1
    # the minion's 1d2 + 1, and its net successes
    assert record["damage"] == sum(record["damageRolls"][0]) + 1 + record["successes"]
    assert hero(after, "Kira").pools.get("health", 10) == max(10 - record["damage"], 0)
    _, answers = answer(GAME, state, '[attack: who="Raider" target="Osk"]', (0, turn))
    assert "setback" not in answers[0].record["thrown"] and answers[0].record["setback"] == 0


def test_a_weapons_to_hit_adds_boost_dice() -> None:
    state = fighting()
    _, answers = answer(GAME, state, '[attack: who="Osk" target="Raider"]', (0, 1))
    assert answers[0].record["thrown"].count("boost") == 1  # the Hand axe's toHit 1


def test_cmb_mod_1_an_edge_is_one_boost_or_setback_die() -> None:
    """CMB-MOD-1 read as CHK-SYM-16/A6: a condition's advantage adds one to the signed bonus
    (a boost die), a disadvantage takes one off (a setback die)."""
    state = fighting()
    view = SheetView(GAME, hero(state, "Kira"), state)
    for lean, die in ((1, "boost"), (-1, "setback")):
        rolled = attack_roll(GAME, view, "Kira", 0, 0, 0, TurnContext(state.seed, (0, 1)), lean)
        assert rolled is not None and rolled[0].record["thrown"].count(die) == 1
    plain = attack_roll(GAME, view, "Kira", 0, 0, 0, TurnContext(state.seed, (0, 1)))
    assert plain is not None
    assert not {"boost", "setback"} & set(plain[0].record["thrown"])


def test_a_swipe_or_a_reordered_reply_rolls_the_same() -> None:
    """DESIGN.md "Dice": the strike's key is the reply, the attacker and its strike number."""
    state = fighting()
    reply = '[attack: who="Kira" target="Raider"] [attack: who="Raider" target="Osk"]'
    swapped = 'Steel rings. [attack: who="Raider" target="Osk"] [attack: who="Kira"]'
    first, one_way = answer(GAME, state, reply, (0, 2))
    again, same = answer(GAME, state, reply, (0, 2))
    _, other_way = answer(GAME, state, swapped, (0, 2))
    assert first == again and [a.record for a in one_way] == [a.record for a in same]
    rolls = {a.record["attacker"]: a.record["rolls"] for a in one_way}
    assert rolls == {a.record["attacker"]: a.record["rolls"] for a in other_way}


# --- refusals (the state unchanged) -------------------------------------------------------------

@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Kira" target="Raider" with="Rifle"]', reasons.UNKNOWN_WEAPON),
    ('[attack: who="Kira" target="Nobody"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Kira" target="Raider" action="dance"]', reasons.UNKNOWN_BUDGET),
])
def test_a_refused_attack_changes_nothing(text, reason) -> None:
    state = fighting()
    after, answers = answer(GAME, state, text, (0, 1))
    assert answers[0].reason == reason and after == state


def test_the_attack_skill_is_combat_only() -> None:
    """CMB-ATK-2: now that symbol-pool rulesets fight, their attack check is a fight's."""
    after, answers = answer(GAME, START, '[skill_check: skill="melee" dc="2"]')
    assert answers[0].reason == reasons.COMBAT_ONLY and after == START


@pytest.mark.parametrize("block", [None, {"kind": "symbol-pool"}])
def test_a_symbol_pool_ruleset_without_combat_attack_refuses_fights(block) -> None:
    """symbols-genesys.json has no combat block; a block without ``attack`` loads (CHK-SYM-35)
    but gives nothing to attack with: start and attack are refused, nothing changes."""
    document = fixture_json("rulesets/symbols-genesys.json")
    if block is not None:
        document = {**document, "capabilityApi": "1.382", "combat": block}
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/symbols-genesys.json"))
    for text in (FIGHT, '[attack: who="Kira" target="Raider"]'):
        after, answers = answer(game, state, text)
        assert answers[0].reason == reasons.UNSUPPORTED and after == state
        assert 'gives no "combat.attack"' in answers[0].text


# --- the load rules ---------------------------------------------------------------------------

ATTACK = ("combat", "attack")


@pytest.mark.parametrize(("mutation", "expected"), [
    (put((*ATTACK, "difficulty"), 6),
     "/combat/attack/difficulty: 6 opposing dice is more than difficulty.max (5)"),
    (drop(("resolution", "setback")),
     "/combat/attack/defence: symbol-pool combat reads a target's defence as setback dice: "
     'declare "resolution.setback"'),
    (put(("capabilityApi",), "1.381"),
     "/combat: combat in a symbol-pool ruleset needs capabilityApi 1.382 or later (the "
     "ruleset declares 1.381)"),
    (put(("combat", "kind"), "formula"),
     '/combat/kind: a symbol-pool ruleset fights with symbol-pool combat, not "formula"'),
])
def test_chk_sym_35_the_combat_block_of_a_symbol_pool_ruleset(mutation, expected) -> None:
    found = problems_of(copy.deepcopy(DOCUMENT), mutation)
    assert expected in found, found


def test_the_fight_fixture_loads_clean() -> None:
    assert problems_of(DOCUMENT) == []
    assert problems_of(DOCUMENT, put(("combat", "kind"), "none"),
                       drop(("combat", "attack"))) == []
