"""A formula strike is a value (engine/actions/fight/strikes.py); its record and its sentence
are each written from that value alone, so what the answer says follows from what was rolled
(CMB-ATK-A1..A6, ITM-FLOOR-2, ITM-DEF-4..8, CMB-MOD-2)."""

from __future__ import annotations

from fractions import Fraction

from engine.actions.fight.strikes import (
    Damage,
    FoeStrike,
    HeroStrike,
    foe_record,
    foe_text,
    hero_record,
    hero_text,
)
from engine.rules.armour import Guard
from engine.rules.checks.read import Rolled
from engine.rules.fight.formula import Health, Struck
from engine.rules.formula import Evaluation

ROLLED = Rolled(rolls=[14], success=True, value=17, shown="d20 (14) + 3 = 17 vs 12")
STONESKIN = Guard("resist", "slashing", frozenset(), "Stoneskin")


def _hero(damage: Damage | None = None, result: str = "hit") -> HeroStrike:
    return HeroStrike(2, "Ada", "Goblin 1", "Sword", "action", "near", ROLLED, 3, 12, result,
                      7, 7, ("Prone (near): advantage",), None, {}, damage)


def test_a_miss_records_no_damage_and_says_the_foe_is_as_it_was() -> None:
    strike = _hero(result="miss")
    assert hero_text(strike) == ("Ada → Goblin 1 (Sword): d20 (14) + 3 = 17 vs 12 · miss · "
                                 "Goblin 1 7/7. Affected by: Prone (near): advantage.")
    assert hero_record(strike) == {
        "attacker": "Ada", "target": "Goblin 1", "weapon": "Sword", "budget": "action",
        "range": "near", "rolls": [14], "modifier": 3, "total": 17, "defence": 12,
        "result": "miss", "damage": 0, "hp": 7, "hpMax": 7, "round": 2,
        "affectedBy": ["Prone (near): advantage"]}


def test_itm_floor_2_and_itm_def_4_a_raised_and_resisted_hit_says_both() -> None:
    struck = Struck(1, Evaluation(Fraction(1)), 6)
    strike = _hero(Damage(struck, "1", 2, "slashing", floor=4, guards=(STONESKIN,)))
    assert hero_text(strike) == (
        "Ada → Goblin 1 (Sword): d20 (14) + 3 = 17 vs 12 · hit, 1 = 1 slashing, raised to 4 "
        "(at least 4 on a hit) (resists slashing (Stoneskin): 2) · Goblin 1 5/7. "
        "Affected by: Prone (near): advantage.")
    record = hero_record(strike)
    assert (record["damage"], record["hp"], record["floor"], record["damageType"]) == (
        2, 5, 4, "slashing")
    assert record["affectedBy"] == ["Prone (near): advantage",
                                    "resists slashing (Stoneskin)"]


def test_a_foes_hit_takes_temporary_points_first_and_says_what_is_left() -> None:
    struck = Struck(5, Evaluation(Fraction(5)), 7)
    strike = FoeStrike(1, "Goblin 1", "Ada", "near", ROLLED, 4, 12, "hit", Health(12, 12, 3),
                       Health(10, 12, 0), (), {}, None, Damage(struck, "5", 5, None))
    assert foe_text(strike) == ("Goblin 1 → Ada: d20 (14) + 3 = 17 vs 12 · hit, 5 = 5 · "
                                "Ada 10/12.")
    record = foe_record(strike)
    assert (record["damage"], record["hp"], record["temporary"]) == (5, 10, 0)
