"""Issue 25 across the combat kinds (engine/actions/fight/judge.py): a reaction's raised defence
re-judged by the kind's own hit rule (CMB-REACT-5, the Shield example; sum CMB-ATK-A4, pool
ITM-WPN-13 / OQ-CMB-2, roll-against CHK-RA-A4/A8, symbol-pool CHK-SYM-20/23/29/30); sheet
abilities and items used in a fight rolling the kind's attack (CMB-ABIL-2, ITM-USE-7/8); the
0-HP meaning wherever a hero is dropped (CMB-HP0-1..4, CMB-CARD-1: pool, outcome and narrative
fights); and regeneration seeing every damaging record (CMB-ABIL-7)."""

from __future__ import annotations

import copy
from collections import Counter
from itertools import product
from typing import Any

import pytest
from helpers import answer, fixture_json, hero
from scipy.stats import chisquare

from engine import TurnContext, load_ruleset, start_state
from engine.actions.checks.pipeline import resolve_request
from engine.actions.checks.symbols import tally
from engine.actions.fight.check_kinds import attack_read, attack_roll, read_result
from engine.actions.fight.formula import roll_attack
from engine.actions.fight.judge import REJUDGE, kind_attack, rejudge
from engine.actions.fight.pool import roll_pool
from engine.dice import Stream
from engine.rules.checks.read import Rolled
from engine.rules.fight.formula import hit_result
from engine.rules.fight.pool import pool_result
from engine.rules.foe_abilities import damage_taken
from engine.rules.sheet import SheetView
from engine.ruleset.resolution import AgainstResolution, SymbolResolution
from engine.ruleset.ruleset import AGAINST, POOL, SUM, SYMBOLS

SKIRMISH = load_ruleset(fixture_json("rulesets/skirmish.json"))
POOLS = load_ruleset(fixture_json("rulesets/gravewatch-fights.json"))
AGAINST_GAME = load_ruleset(fixture_json("rulesets/against-d100-fight.json"))
SYMBOL_GAME = load_ruleset(fixture_json("rulesets/symbols-genesys-fight.json"))
AGAINST_START = start_state(AGAINST_GAME, fixture_json("parties/against-d100-fight.json"))
SYMBOL_START = start_state(SYMBOL_GAME, fixture_json("parties/symbols-genesys-fight.json"))
POOL_START = start_state(POOLS, fixture_json("parties/gravewatch-fights.json"))
NOWHERE = Stream("seed", (0,), "unused")


def test_each_ruleset_is_read_by_its_own_kind_and_every_kind_has_one_rejudge() -> None:
    assert [g.fight.hit for g in (SKIRMISH, POOLS, AGAINST_GAME, SYMBOL_GAME)] == [
        SUM, POOL, AGAINST, SYMBOLS]
    assert set(REJUDGE) == {SUM, POOL, AGAINST, SYMBOLS}


# --- CMB-REACT-5 by kind: the hit read again against the raised defence -----------------------


@pytest.mark.parametrize(("total", "critical"), [
    (t, c) for t in range(5, 25) for c in (None, "success", "failure")])
def test_sum_a_raised_defence_misses_exactly_when_the_total_falls_below_it(
        total: int, critical: str | None) -> None:
    """CMB-ATK-A4, OQ-CMB-2: total ≥ defence; a natural critical hits, a natural 1 misses."""
    rolled = Rolled(rolls=[total], success=True, critical=critical, value=total)  # type: ignore[arg-type]
    before = hit_result(total, critical, 12)
    judged = rejudge(SKIRMISH, rolled, before, 12, 17, NOWHERE)
    if before == "miss":
        return  # a reaction fires only on a hit
    assert judged.result == hit_result(total, critical, 17)
    assert (judged.result == "miss") == (critical is None and total < 17)


@pytest.mark.parametrize(("successes", "critical"), [
    (s, c) for s in range(0, 8) for c in (None, "success", "failure")])
def test_pool_a_raised_defence_counts_the_same_successes_against_it(
        successes: int, critical: str | None) -> None:
    """ITM-WPN-13, OQ-CMB-2 for pools: successes ≥ defence (at least 1) — an exceptional
    success no longer enough is a miss too; the sum rule (a natural critical hits) is not
    the pool's."""
    rolled = Rolled(rolls=[], success=True, critical=critical, value=successes)  # type: ignore[arg-type]
    before = pool_result(successes, critical, 2)
    if before == "miss":
        return
    judged = rejudge(POOLS, rolled, before, 2, 4, NOWHERE)
    assert judged.result == ("miss" if successes < 4 else before)
    assert judged.rolled is rolled


def _against_roll(defence: int, key: str, state=AGAINST_START) -> tuple[Rolled, str]:
    view = SheetView(AGAINST_GAME, state.characters[0], state)
    built = attack_read(AGAINST_GAME, view, "Harvey", 0, defence)
    assert built is not None
    res, read = built
    rolled = resolve_request(AGAINST_GAME, res, read, TurnContext("s", (1, 1)), key)
    assert rolled is not None
    return rolled, read_result(res, rolled)


def test_roll_against_a_raised_defence_lowers_the_number_and_reads_the_same_roll() -> None:
    """CHK-RA-A4/A6/A8: re-judged at defence 5 → 25, every roll reads exactly as an attack
    rolled at 25 from the start (the d100 does not depend on the number): hit, miss and the
    criticals that move with the number (critical failure on 96+ below 50)."""
    seen: Counter[tuple[str, str]] = Counter()
    for n in range(400):
        key = f"attack/harvey/{n}"
        rolled, result = _against_roll(5, key)
        wanted, wanted_result = _against_roll(25, key)
        assert rolled.value == wanted.value
        if result == "miss":
            continue
        judged = rejudge(AGAINST_GAME, rolled, result, 5, 25, NOWHERE)
        assert judged.result == wanted_result
        assert judged.rolled.dc == wanted.dc == rolled.dc - 20
        assert judged.record == {"threshold": wanted.dc}
        assert (judged.rolled.success, judged.rolled.critical) == (wanted.success,
                                                                   wanted.critical)
        seen[(result, judged.result)] += 1
    assert seen[("hit", "miss")] and seen[("hit", "hit")]  # the Shield turned some hits


def test_roll_against_the_rejudged_chance_is_exact_over_every_face() -> None:
    """CHK-RA-A11 enumerated: of the 100 faces, those ≤ the lowered number still hit."""
    res = AGAINST_GAME.ruleset.resolution
    assert isinstance(res, AgainstResolution)
    for roll in range(1, 101):
        rolled = Rolled(rolls=[roll], success=roll <= 60, critical=None, value=roll, dc=60)
        judged = rejudge(AGAINST_GAME, rolled, "hit", 5, 15, NOWHERE)
        assert judged.rolled.dc == 50
        if roll == 1:
            assert judged.result == "critical"
        else:
            assert judged.result == ("hit" if roll <= 50 else "miss")


def _symbol_roll(defence: int, key: str, ctx: TurnContext) -> tuple[Any, Rolled, str]:
    view = SheetView(SYMBOL_GAME, SYMBOL_START.characters[0], SYMBOL_START)
    built = attack_read(SYMBOL_GAME, view, "Kira", 0, defence)
    assert built is not None
    res, read = built
    rolled = resolve_request(SYMBOL_GAME, res, read, ctx, key)
    assert rolled is not None
    return res, rolled, read_result(res, rolled)


def _sides(res: SymbolResolution, die: str) -> int:
    return len(next(d for d in res.dice if d.id == die).faces)


def test_symbol_a_raised_defence_adds_its_setback_dice_to_the_same_roll() -> None:
    """CHK-SYM-20/23/A7/A10: setback dice are drawn last, so a roll at defence 1 with the two
    setback dice a +2 reaction adds, drawn where the roll's dice left off, is exactly the roll
    at defence 3: the same faces, the same net successes, hit and critical (CHK-SYM-29/30)."""
    ctx = TurnContext("s", (1, 1))
    turned = 0
    for n in range(300):
        key = f"attack/kira/{n}"
        res, rolled, result = _symbol_roll(1, key, ctx)
        _, wanted, wanted_result = _symbol_roll(3, key, ctx)
        if result == "miss":
            continue
        stream = ctx.stream(key, "dice")
        for die in rolled.record["thrown"]:
            stream.die(_sides(res, die))  # where the roll's own dice left off
        judged = rejudge(SYMBOL_GAME, rolled, result, 1, 3, stream)
        assert judged.rolled.rolls == wanted.rolls
        assert judged.rolled.record["thrown"] == wanted.record["thrown"]
        assert judged.rolled.value == wanted.value and judged.result == wanted_result
        assert len(judged.record["setbackAdded"]) == 2
        turned += judged.result == "miss"
    assert turned  # some hits are cancelled by the added setback


def test_symbol_added_setback_is_held_to_setback_max_and_nothing_added_changes_nothing() -> None:
    res = SYMBOL_GAME.ruleset.resolution
    assert isinstance(res, SymbolResolution) and res.setback is not None
    ctx = TurnContext("s", (2, 1))
    for n in range(60):
        _, rolled, result = _symbol_roll(0, f"attack/kira/{n}", ctx)
        if result == "miss":
            continue
        same = rejudge(SYMBOL_GAME, rolled, result, 0, 0, ctx.stream("x", str(n)))
        assert (same.result, same.rolled.value, same.record) == (result, rolled.value, {})
        most = rejudge(SYMBOL_GAME, rolled, result, 0, 50, ctx.stream("x", str(n)))
        assert len(most.record["setbackAdded"]) == res.setback.max
        faces = list(zip(most.rolled.record["thrown"], most.rolled.rolls, strict=True))
        assert most.rolled.value == tally(res, faces)[1][res.success.symbol]


def test_a_critical_that_stays_a_hit_stays_critical_in_every_kind() -> None:
    """CMB-COND-2: a condition's automatic critical holds while the raised defence is met."""
    assert rejudge(SKIRMISH, Rolled(rolls=[15], success=True, value=18), "critical", 12, 17,
                   NOWHERE).result == "critical"
    assert rejudge(POOLS, Rolled(rolls=[], success=True, value=5), "critical", 2, 4,
                   NOWHERE).result == "critical"


WARD = {"id": "ward", "label": "Ward", "mechanics": {
    "kind": "Ability", "uses": "reaction", "react": {"on": "hit", "defence": "2"}}}
KINDS = {  # ruleset, party, the fight, the foe's strike on the first hero
    POOL: ("gravewatch-fights", '[combat: op="start" foe="Dead" role="standard"]',
           '[attack: who="Dead" target="Ada"]'),
    AGAINST: ("against-d100-fight", '[combat: op="start" foe="Cultist" role="thug"]',
              '[attack: who="Cultist" target="Harvey"]'),
    SYMBOLS: ("symbols-genesys-fight", '[combat: op="start" foe="Raider" role="minion"]',
              '[attack: who="Raider" target="Kira"]'),
}


def _warded(kind: str):
    """The kind's ruleset with Ward (a free reaction to being hit: +2 defence, the Shield
    example's shape) as the first hero's standing order, in a fight."""
    name, start, strike = KINDS[kind]
    document = copy.deepcopy(fixture_json(f"rulesets/{name}.json"))
    document.setdefault("catalogs", []).append(
        {"id": "spells", "label": "Spells", "holds": "spells", "entries": [WARD]})
    game = load_ruleset(document)
    party = copy.deepcopy(fixture_json(f"parties/{name}.json"))
    party["characters"][0]["entries"] = ["spells/ward"]
    party["characters"][0]["reactions"] = [{"on": "hit", "use": "spells/ward"}]
    state, answers = answer(game, start_state(game, party), start)
    assert all(a.ok for a in answers), answers
    return game, state, strike


@pytest.mark.parametrize("kind", [POOL, AGAINST, SYMBOLS])
def test_cmb_react_5_a_reaction_in_every_kind_is_judged_by_the_kinds_rule(kind: str) -> None:
    """End to end: the foe's strike hits, the hero reacts (+2 defence) before the hit is
    confirmed, and the strike is read again by the kind's rule — pool: the successes against
    the raised defence; roll-against: the roll against a number 2 lower; symbol-pool: two
    more setback dice in the roll. A swipe of the same reply rolls and reacts the same."""
    game, state, strike = _warded(kind)
    outcomes: Counter[str] = Counter()
    for turn in range(1, 120):
        after, told = answer(game, state, strike, (1, turn))
        record = told[0].record
        assert told[0].ok
        if "reaction" not in record:
            continue
        reaction = record["reaction"]
        assert reaction["before"] in ("hit", "critical") and reaction["added"] == 2
        assert record["defence"] == reaction["defence"]
        if kind == POOL:
            assert record["result"] == pool_result(record["successes"], None,
                                                   record["defence"]) or \
                (record["result"] == "critical" and record["successes"] >= record["defence"])
        elif kind == AGAINST:
            assert reaction["threshold"] == record["threshold"]
            roll = record["total"]
            if record["result"] != "critical" and roll != 100:
                assert (record["result"] == "hit") == (roll <= record["threshold"])
        else:
            added = reaction.get("setbackAdded", [])
            assert len(added) == 2 or record["setback"] == game.ruleset.resolution.setback.max
            assert (record["result"] == "miss") == (record["successes"] < 1)
        assert answer(game, state, strike, (1, turn))[1][0].record == record  # a swipe
        outcomes[f"{reaction['before']}→{record['result']}"] += 1
        assert one_reacted(after)
    assert outcomes["hit→miss"], outcomes  # the raised defence turned some hits


def one_reacted(state) -> bool:
    return state.encounter is None or any(c.reacted for c in state.encounter.combatants)


# --- CMB-ABIL-2, ITM-USE-7/8: abilities and items roll the kind's attack ----------------------


def test_kind_attack_is_the_kinds_own_attack_with_the_same_dice() -> None:
    """A use or an ability rolls what a strike of the kind rolls (same request, same key):
    sum — the total; pool — successes at the use's per-die target (ITM-USE-7); roll-against
    and symbol-pool — their own check (a swipe rolls the same)."""
    ctx = TurnContext("s", (1, 1))
    skirmish = start_state(SKIRMISH, fixture_json("parties/skirmish.json"))
    view = SheetView(SKIRMISH, skirmish.characters[0], skirmish)
    got = kind_attack(SKIRMISH, view, "Ada", 3, 12, ctx, "attack/ada/0")
    rolled, result, _ = roll_attack(SKIRMISH, view, "Ada", 3, 12, 0, ctx)
    assert (got[0].rolls, got[1]) == (rolled.rolls, result)

    view = SheetView(POOLS, POOL_START.characters[0], POOL_START)
    for target in (5, 7, 9):
        for n in range(30):
            got = kind_attack(POOLS, view, "Ada", 4, 2, ctx, f"attack/ada/{n}", target=target)
            rolled, result, _ = roll_pool(POOLS, view, "Ada", 4, target, 2, n, ctx)
            assert (got[0].rolls, got[0].value, got[1]) == (rolled.rolls, rolled.value, result)
            assert got[0].value == sum(1 for r in got[0].rolls if r >= target) or \
                got[0].record.get("threshold") is not None
            assert got[1] == pool_result(int(got[0].value), got[0].critical, 2)

    for game, start, name in ((AGAINST_GAME, AGAINST_START, "Harvey"),
                              (SYMBOL_GAME, SYMBOL_START, "Kira")):
        view = SheetView(game, start.characters[0], start)
        for n in range(20):
            got = kind_attack(game, view, name, 1, 2, ctx, f"attack/{name.casefold()}/{n}")
            other = attack_roll(game, view, name, 1, 2, n, ctx)
            assert other is not None
            assert (got[0].rolls, got[1]) == (other[0].rolls, other[1])


def test_a_pool_use_counts_its_successes_at_its_own_per_die_target_exactly() -> None:
    """ITM-USE-7 in a pool fight against enumeration: 3 dice at target 9 count 0..3
    successes with the chances of the 1000 face triples (chi-square over 20,000 draws)."""
    view = SheetView(POOLS, POOL_START.characters[0], POOL_START)
    ctx = TurnContext("s", (3, 3))
    draws = 20_000
    seen = Counter(int(kind_attack(POOLS, view, "Ada", 3, 1, ctx, f"use/{n}/attack",
                                   target=9)[0].value) for n in range(draws))
    exact = Counter(sum(1 for f in faces if f >= 9) for faces in product(range(1, 11), repeat=3))
    assert set(seen) <= set(exact)
    _, p = chisquare([seen[k] for k in sorted(exact)],
                     [exact[k] * draws / 1000 for k in sorted(exact)])
    assert p > 1e-4


# --- CMB-HP0-1..4: the 0-HP meaning wherever a hero drops ---------------------------------------


def _with_death(document: dict[str, Any]) -> dict[str, Any]:
    document = copy.deepcopy(document)
    document.setdefault("conditions", []).extend([
        {"id": "dying", "label": "Dying"}, {"id": "dead", "label": "Dead"},
        {"id": "stable", "label": "Stable"}])
    combat = document.setdefault("combat", {})
    combat.setdefault("conditions", []).append({"condition": "dying", "zeroHp": "death"})
    combat["zeroHp"] = {"death": True, "dead": "dead", "stable": "stable"}
    return document


def _dying(game, party: dict[str, Any], pool: str, start: str, conditions=("dying",)):
    party = copy.deepcopy(party)
    party["characters"][0].setdefault("pools", {})
    party["characters"][0]["pools"] = {**(party["characters"][0]["pools"] or {}), pool: 1}
    party["characters"][0]["conditions"] = list(conditions)
    state, answers = answer(game, start_state(game, party), start)
    assert all(a.ok for a in answers), answers
    return state


def _dropped(game, state, texts: list[str]):
    for turn in range(1, 300):
        after = state
        for step, text in enumerate(texts):
            after, answers = answer(game, after, text, (turn, step))
            for told in answers:
                if "dead:Ada" in told.record.get("events", []):
                    return after, told
    raise AssertionError("Ada never died")


def _assert_dead(after, told, record) -> None:
    events = record.get("events", told.record.get("events"))
    assert events.index("dead:Ada") == events.index("down:Ada") + 1  # CMB-CARD-1
    assert record["zeroHp"] == {"who": "Ada", "meaning": "death", "outcome": "dead",
                                "condition": "dead"}
    assert "dead" in hero(after, "Ada").conditions
    assert "Ada dies (Dead)." in told.text


def test_cmb_hp0_3_a_pool_foes_strike_kills_a_hero_marked_for_death() -> None:
    game = load_ruleset(_with_death(fixture_json("rulesets/gravewatch-fights.json")))
    state = _dying(game, fixture_json("parties/gravewatch-fights.json"), "health",
                   '[combat: op="start" foe="Dead" role="standard"]')
    after, told = _dropped(game, state, ['[attack: who="Dead" target="Ada"]'])
    _assert_dead(after, told, told.record)


def test_cmb_hp0_3_an_outcome_actions_harm_kills_a_hero_marked_for_death() -> None:
    game = load_ruleset(_with_death(fixture_json("rulesets/outcome-2d6.json")))
    state = _dying(game, fixture_json("parties/outcome-2d6.json"), "health",
                   '[combat: op="start" foe="Thug" role="standard"]')
    after, told = _dropped(game, state, [
        '[attack: who="Ada" target="Thug" position="desperate" effect="limited"]'])
    _assert_dead(after, told, told.record)


def test_cmb_hp0_3_a_narrative_landing_kills_a_hero_marked_for_death() -> None:
    game = load_ruleset(_with_death(fixture_json("rulesets/harrow.json")))
    state = _dying(game, fixture_json("parties/harrow.json"), "health",
                   '[combat: op="start" foe="Ogre" tier="6"]')
    after, told = _dropped(game, state, ['[attack: who="Ogre" target="Ada"]',
                                         '[attack: who="Bram the Quiet" target="Ogre"]'])
    landed = next(r for r in told.record["landed"] if r.get("zeroHp"))
    _assert_dead(after, told, {**landed, "events": told.record["events"]})


def test_without_a_meaning_a_pool_hero_is_only_down() -> None:
    state = _dying(POOLS, fixture_json("parties/gravewatch-fights.json"), "health",
                   '[combat: op="start" foe="Dead" role="standard"]', ())
    for turn in range(1, 300):
        _after, answers = answer(POOLS, state, '[attack: who="Dead" target="Ada"]', (1, turn))
        if "down:Ada" in answers[0].record.get("events", []):
            assert "zeroHp" not in answers[0].record
            assert not any(e.startswith("dead:") for e in answers[0].record["events"])
            return
    raise AssertionError("Ada never went down")


# --- CMB-ABIL-7: regeneration reads every damaging record --------------------------------------


def test_cmb_abil_7_damage_taken_sees_pool_strikes_item_uses_abilities_and_volleys() -> None:
    pool_strike = {"attacker": "Ada", "target": "Troll", "damage": 2, "damageType": "fire",
                   "successes": 2}
    item_use = {"item": "Fire flask", "targets": [
        {"target": "Troll", "damage": 4, "damageType": "acid"},
        {"target": "Orc", "damage": 0, "damageType": "fire"}]}
    ability = {"use": "Fire Bolt", "damageType": "fire", "targets": [
        {"target": "Ogre", "damage": 3}]}
    volley = {"target": "Orc", "damage": 1, "damageType": "piercing", "volley": [
        {"target": "Wolf", "damage": 2, "damageType": "piercing",
         "plus": [{"damage": 3, "dealt": 3, "damageType": "fire"},
                  {"damage": 2, "dealt": 0, "damageType": "cold"}]}]}
    assert damage_taken([pool_strike, item_use, ability, volley]) == {
        "troll": {"fire", "acid"}, "ogre": {"fire"}, "orc": {"piercing"},
        "wolf": {"piercing", "fire"}}
    assert damage_taken([{"target": "X", "damage": "9", "damageType": 3}, {"targets": "no"}]) \
        == {}


FLASK = {"id": "fire-flask", "label": "Fire flask", "item": {
    "category": "tonic", "rarity": "common", "stack": 5, "stats": {"weight": 0.5},
    "cost": {"amount": 8, "unit": "penny"},
    "use": {"kind": "attack", "budget": "act", "targets": "enemy", "attackRoll": True,
            "toHit": {"abilities": ["wits"], "target": 9}, "amount": {"flat": 1},
            "damageType": "fire", "consumes": True}}}
USE_FLASK = '[inventory: action="use" item="Fire flask" who="Ada" target="Dead"]'


def _graveyard(spade: str = "blunt"):
    """gravewatch-fights with a Fire flask in Ada's bag (its attack: her wits 2 in dice, each
    reaching 9), the Spade's damage of type ``spade`` and the restless dead regenerating 1 a
    round unless fire reached them."""
    document = copy.deepcopy(fixture_json("rulesets/gravewatch-fights.json"))
    kit = document["catalogs"][0]["entries"]
    kit.append(FLASK)
    next(e for e in kit if e["id"] == "spade")["item"]["attack"]["damage"]["type"] = spade
    document["combat"]["templates"][0]["regenerate"] = {"amount": "1", "stoppedBy": ["fire"]}
    game = load_ruleset(document)
    party = copy.deepcopy(fixture_json("parties/gravewatch-fights.json"))
    party["characters"][0]["bag"].append({"item": "kit/fire-flask", "count": 3})
    state, answers = answer(game, start_state(game, party),
                            '[combat: op="start" foe="Dead" role="standard" tier="3"]')
    assert all(a.ok for a in answers), answers
    return game, state


def test_itm_use_7_an_item_attack_in_a_pool_fight_counts_successes_at_its_target() -> None:
    """ITM-USE-7/8 in a pool fight: the flask's toHit (wits 2) is its dice, each reaching its
    own per-die target 9 is a success, and it hits when the successes reach the defence."""
    game, state = _graveyard()
    results: Counter[str] = Counter()
    for turn in range(1, 60):
        _, told = answer(game, state, USE_FLASK, (1, turn))
        assert told[0].ok, told[0].text
        row = told[0].record["targets"][0]
        assert len(row["rolls"]) == 2
        assert row["total"] == sum(1 for face in row["rolls"] if face >= 9)
        assert row["result"] == pool_result(row["total"], None, row["defence"]) or \
            row["result"] == "critical"
        results[row["result"]] += 1
        assert answer(game, state, USE_FLASK, (1, turn))[1][0].record == told[0].record
    assert results["miss"] and results["hit"]


def test_cmb_abil_7_fire_from_an_item_use_stops_regeneration_in_a_pool_fight() -> None:
    game, state = _graveyard()
    reply = USE_FLASK + ' [attack: who="Mira" target="Dead"]'
    for turn in range(1, 80):
        after, told = answer(game, state, reply, (1, turn))
        row = told[0].record["targets"][0]
        if not row["damage"] or not told[1].ok or "regenerated" not in told[1].record:
            continue
        assert row["damageType"] == "fire"
        assert told[1].record["regenerated"] == [{"who": "Dead", "amount": 0, "hp": next(
            c.hp for c in after.encounter.combatants if c.name == "Dead"),
            "stoppedBy": ["fire"]}]
        return
    raise AssertionError("the flask never burned the dead in a round it could regenerate")


@pytest.mark.parametrize(("spade", "stopped"), [("fire", True), ("blunt", False)])
def test_cmb_abil_7_a_pool_strikes_fire_stops_regeneration(spade: str, stopped: bool) -> None:
    game, state = _graveyard(spade)
    for turn in range(1, 80):
        after, told = answer(game, state, '[attack: who="Ada" target="Dead"]', (1, turn))
        record = told[0].record
        if not record["damage"] or not record["hp"]:
            continue
        regenerated = record["regenerated"][0]
        hp = next(c.hp for c in after.encounter.combatants if c.name == "Dead")
        if stopped:
            assert regenerated == {"who": "Dead", "amount": 0, "hp": hp, "stoppedBy": ["fire"]}
        else:
            assert regenerated == {"who": "Dead", "amount": 1, "hp": record["hp"] + 1}
            assert hp == record["hp"] + 1
        return
    raise AssertionError("the spade never hurt the dead")


SPARK = {"id": "spark", "label": "Spark", "mechanics": {
    "kind": "Spell", "level": 0, "attackRoll": True, "toHit": "@wits",
    "amount": {"flat": 1}, "damageType": "fire"}}


def test_cmb_abil_2_a_sheet_ability_attack_in_a_pool_fight_counts_successes() -> None:
    """CMB-ABIL-2 in a pool fight: the ability's toHit (wits 2) is its dice at the pool's
    default target, and it hits when its successes reach the defence — no total."""
    document = copy.deepcopy(fixture_json("rulesets/gravewatch-fights.json"))
    document.setdefault("catalogs", []).append(
        {"id": "spells", "label": "Spells", "holds": "spells", "entries": [SPARK]})
    game = load_ruleset(document)
    res = game.ruleset.resolution
    party = copy.deepcopy(fixture_json("parties/gravewatch-fights.json"))
    party["characters"][0]["entries"] = ["spells/spark"]
    state, answers = answer(game, start_state(game, party),
                            '[combat: op="start" foe="Dead" role="standard" tier="3"]')
    assert all(a.ok for a in answers)
    results: Counter[str] = Counter()
    for turn in range(1, 60):
        _, told = answer(game, state, '[attack: who="Ada" use="Spark" target="Dead"]',
                         (1, turn))
        assert told[0].ok, told[0].text
        row = told[0].record["targets"][0]
        assert len(row["rolls"]) == 2
        assert row["total"] == sum(1 for f in row["rolls"] if f >= res.target.default)
        assert row["result"] == pool_result(row["total"], None, row["defence"]) or \
            row["result"] == "critical"
        results[row["result"]] += 1
    assert results["miss"] and results["hit"]


@pytest.mark.parametrize("text", [
    '[inventory: action="use" item="Fire flask" who="Ada" target="Nobody"]',
    '[inventory: action="use" item="Fire flask" who="Ada" target="Mira"]',
    '[attack: who="Ada" use="Spark" target="Dead"]',  # she knows no Spark here
])
def test_refused_uses_in_a_pool_fight_leave_the_state_unchanged(text: str) -> None:
    game, state = _graveyard()
    after, told = answer(game, state, text, (1, 1))
    assert not told[0].ok and told[0].reason
    assert after == state


def test_cmb_abil_4_a_foes_ability_in_a_roll_against_fight_hits_by_the_kinds_rule() -> None:
    """CMB-ABIL-4 with CHK-RA-A1..A4: a foe's own attack ability rolls the fight's own check —
    d100 at most its toHit less the hero's defence — not the sum fight's total ≥ defence
    (which a d100 plus 60 would nearly always reach)."""
    document = copy.deepcopy(fixture_json("rulesets/against-d100-fight.json"))
    document["combat"]["templates"][0]["combat"]["abilities"] = [
        {"id": "claw", "label": "Claw", "toHit": "60", "damage": "1d6"}]
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/against-d100-fight.json"))
    state, _ = answer(game, state, '[combat: op="start" foe="Cultist" role="thug"]')
    seen = set()
    for turn in range(1, 40):
        _, answers = answer(game, state, '[attack: who="Cultist" use="Claw" target="Harvey"]',
                            (0, turn))
        row = answers[0].record["targets"][0] if "targets" in answers[0].record else \
            answers[0].record
        rolled, defence = row["total"], row["defence"]
        hit = row["result"] in ("hit", "critical")
        assert hit == (rolled <= 60 - defence) or row["result"] == "critical" or rolled >= 96
        seen.add(hit)
    assert seen == {True, False}  # both sides of the line, so the sum rule would fail it


def test_cmb_abil_7_a_round_of_only_an_item_use_that_spent_an_action_regenerates() -> None:
    """An item used in the fight that spent a turn action is the round's act (§13), as for
    conditions counting down: the foes regenerate at its end (or are stopped by its fire)."""
    game, state = _graveyard()
    for turn in range(1, 80):
        after, told = answer(game, state, USE_FLASK, (1, turn))
        record = told[0].record
        row = record["targets"][0]
        hp = next(c.hp for c in after.encounter.combatants if c.name == "Dead")
        if record.get("budget") is None or not row["damage"] or not hp:
            continue
        assert record["regenerated"] == [{"who": "Dead", "amount": 0, "hp": hp,
                                          "stoppedBy": ["fire"]}]
        return
    raise AssertionError("the flask never burned the dead and left them standing")
