"""Weapons in outcome fights (issue 25; spec/combat.md A.4 CMB-OUTC-1/2, OQ-CMB-6 read for
arms; docs/rulesets.md "Outcome-based combat"): a hero's weapon (``with=``, else its first worn
one, as in a formula fight) adds its ``toHit`` to the outcome check as the check's bonus, and
its ``attack.effect`` (a shift of -3..3 harm levels) to what the action's effect deals whenever
the tier achieves something.

On fixtures/rulesets/outcome-2d6.json (Fight: 2d6 + 3 for Ada; 13+ Critical hit, 10+ Strong
hit, 7+ Weak hit, else Miss) with a budget and two weapons added: a worn Cudgel (toHit +2,
effect +1) and a carried Dagger (toHit +1)."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from typing import Any

import pytest
from helpers import answer, fixture_json, problems_of

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.outcome import READINGS, Exchange, exchange
from engine.rules.state import State, plain_canonical

ADA = 3  # what Ada adds to the 2d6 of Fight
CUDGEL = {"id": "cudgel", "label": "Cudgel", "item": {
    "category": "gear", "slots": {"hands": 1},
    "attack": {"budget": "act", "toHit": {"bonus": 2}, "damage": {"dice": "1d6"}, "effect": 1}}}
DAGGER = {"id": "dagger", "label": "Dagger", "item": {
    "category": "gear", "slots": {"hands": 1},
    "attack": {"budget": "act", "toHit": {"bonus": 1}, "damage": {"dice": "1d4"}}}}


def armed_document(**attack: Any) -> dict[str, Any]:
    document = copy.deepcopy(fixture_json("rulesets/outcome-2d6.json"))
    document["combat"]["economy"] = {"budgets": [{"id": "act", "label": "Act"}]}
    cudgel = copy.deepcopy(CUDGEL)
    cudgel["item"]["attack"].update(attack)
    document["catalogs"][0]["entries"] += [cudgel, copy.deepcopy(DAGGER)]
    return document


DOCUMENT = armed_document()
GAME = load_ruleset(DOCUMENT)


def party() -> dict[str, Any]:
    found = copy.deepcopy(fixture_json("parties/outcome-2d6.json"))
    found["characters"][0]["bag"] += [{"item": "kit/cudgel", "count": 1, "equipped": True},
                                      {"item": "kit/dagger", "count": 1}]
    return found


START = start_state(GAME, party())
BOSS = '[combat: op="start" foe="Ogre" role="boss"]'  # 6 harm levels: never capped here


def fighting(game: Any = GAME) -> State:
    state, answers = answer(game, start_state(game, party()), BOSS)
    assert all(a.ok for a in answers), [a.text for a in answers]
    return state


def tier_of(total: int) -> str:
    return "critical" if total >= 13 else "strong" if total >= 10 else "weak" if total >= 7 \
        else "miss"


KINDS = {"critical": "critical", "strong": "full", "weak": "partial", "miss": "failure"}
# risky / standard: what each tier deals (before the weapon) and the harm level back
RISKY_STANDARD = {"critical": (3, 0), "strong": (2, 0), "weak": (1, 2), "miss": (0, 2)}


def test_the_arms_key_loads_and_is_held_to_three_levels() -> None:
    assert problems_of(DOCUMENT) == []
    assert any("effect" in p for p in problems_of(armed_document(effect=4)))
    assert any("effect" in p for p in problems_of(armed_document(effect=-4)))


@pytest.mark.parametrize("turn", range(1, 13))
def test_cmb_outc_1_the_worn_weapon_adds_its_to_hit_and_its_effect(turn: int) -> None:
    """Without with= the first worn weapon, the Cudgel: 2d6 + 3 + 2, and on every tier that
    achieves something one harm level more; the harm back is the tier's, untouched."""
    state = fighting()
    _, [hit] = answer(GAME, state, '[attack: who="Ada" target="Ogre"]', turn=(turn, 0))
    assert hit.ok, hit.text
    record = hit.record
    assert record["weapon"] == "Cudgel" and record["toHit"] == 2
    assert record["weaponEffect"] == 1
    total = sum(record["rolls"]) + ADA + 2
    assert record["total"] == total
    tier = tier_of(total)
    dealt, level = RISKY_STANDARD[tier]
    assert record["harmDealt"] == (dealt + 1 if tier != "miss" else 0)
    assert record["harmLevel"] == level and record["reading"] == KINDS[tier]
    assert "(Cudgel, risky, standard)" in hit.text


def test_with_names_the_weapon_and_unarmed_rolls_bare() -> None:
    state = fighting()
    _, [stab] = answer(GAME, state, '[attack: who="Ada" target="Ogre" with="Dagger"]',
                       turn=(1, 0))
    assert not stab.ok and stab.reason == reasons.NOT_WORN  # carried, not worn
    _, [bare] = answer(GAME, state, '[attack: who="Ada" target="Ogre" with="unarmed"]',
                       turn=(1, 0))
    assert bare.ok and "weapon" not in bare.record and "toHit" not in bare.record
    assert bare.record["total"] == sum(bare.record["rolls"]) + ADA
    _, [bram] = answer(GAME, state, '[attack: who="Bram the Quiet" target="Ogre"]',
                       turn=(1, 0))
    assert bram.ok and "weapon" not in bram.record  # no weapon worn


@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Ada" target="Ogre" with="Sword"]', reasons.UNKNOWN_WEAPON),
    ('[attack: who="Ada" target="Ogre" with="Dagger"]', reasons.NOT_WORN),
])
def test_a_refused_weapon_changes_nothing(text: str, reason: str) -> None:
    state = fighting()
    after, [refused] = answer(GAME, state, text, turn=(1, 0))
    assert not refused.ok and refused.reason == reason
    assert plain_canonical(after) == plain_canonical(state)


def test_a_weapon_without_effect_adds_only_its_to_hit() -> None:
    document = armed_document()
    document["catalogs"][0]["entries"][-2]["item"]["attack"].pop("effect")
    game = load_ruleset(document)
    _, [hit] = answer(game, fighting(game), '[attack: who="Ada" target="Ogre"]', turn=(2, 0))
    assert hit.ok and hit.record["toHit"] == 2 and "weaponEffect" not in hit.record
    assert hit.record["harmDealt"] == RISKY_STANDARD[tier_of(hit.record["total"])][0]


def test_a_negative_effect_takes_levels_off_never_below_zero() -> None:
    rule = GAME.ruleset.combat.outcome if GAME.ruleset.combat is not None else None
    assert rule is not None
    assert exchange(rule, READINGS["partial"], "risky", "limited", -3).dealt == 0
    assert exchange(rule, READINGS["full"], "risky", "great", -1).dealt == 2
    assert exchange(rule, READINGS["failure"], "risky", "great", 3).dealt == 0
    assert exchange(rule, READINGS["critical"], "desperate", "standard", 2) == Exchange(5, 0)


def test_cmb_outc_1_the_exact_harm_distribution_with_the_cudgel() -> None:
    """Enumerating 2d6: with the Cudgel (2d6 + 3 + 2, one level more) risky/standard never
    misses, deals 2 on a weak hit (7..9: 6 of 36), 3 on a strong hit (10..12: 15) and 4 on a
    critical (13+: 15); bare-handed (2d6 + 3) 0, 1, 2, 3 in 3, 12, 15, 6."""
    rule = GAME.ruleset.combat.outcome if GAME.ruleset.combat is not None else None
    assert rule is not None
    dealt: Counter[int] = Counter()
    for a, b in itertools.product(range(1, 7), repeat=2):
        kind = KINDS[tier_of(a + b + ADA + 2)]
        dealt[exchange(rule, READINGS[kind], "risky", "standard", 1).dealt] += 1  # type: ignore[index]
    assert dealt == Counter({2: 6, 3: 15, 4: 15})
    bare: Counter[int] = Counter()
    for a, b in itertools.product(range(1, 7), repeat=2):
        kind = KINDS[tier_of(a + b + ADA)]
        bare[exchange(rule, READINGS[kind], "risky", "standard").dealt] += 1  # type: ignore[index]
    assert bare == Counter({0: 3, 1: 12, 2: 15, 3: 6})


def test_a_swipe_rolls_the_same_with_the_weapon() -> None:
    state = fighting()
    tag = '[attack: who="Ada" target="Ogre" with="Cudgel" effect="great"]'
    first, one_way = answer(GAME, state, "Ada swings. " + tag, turn=(3, 0))
    second, other = answer(GAME, state, tag + " The ogre roars.", turn=(3, 0))
    assert [a.record for a in one_way] == [a.record for a in other]
    assert plain_canonical(first) == plain_canonical(second)


# --- a sheet ability as an outcome action (CMB-OUTC-1..3 with CMB-ABIL-1) -------------------

SPELLS = {"id": "spells", "label": "Spells", "holds": "spells", "entries": [
    {"id": "hex", "label": "Hex", "mechanics": {
        "kind": "Spell", "cost": [{"pool": "focus", "amount": 1}], "attackRoll": True,
        "amount": {"dice": "1d10"}, "effect": "great"}},
    {"id": "jolt", "label": "Jolt", "mechanics": {"kind": "Spell", "attackRoll": True}},
    {"id": "mend", "label": "Mend", "mechanics": {
        "kind": "Spell", "targets": "ally", "amount": {"dice": "1d4"}}},
    {"id": "parry", "label": "Parry", "mechanics": {
        "kind": "Spell", "uses": "reaction", "react": {"on": "hit", "defence": "2"}}},
]}


def spell_game(**hex_keys: Any) -> Any:
    document = armed_document()
    document["live"]["pools"].append({"id": "focus", "label": "Focus", "max": {"const": 1}})
    spells = copy.deepcopy(SPELLS)
    spells["entries"][0]["mechanics"].update(hex_keys)
    document["catalogs"].append(spells)
    return load_ruleset(document)


SPELL_GAME = spell_game()


def casting(game: Any = SPELL_GAME) -> State:
    found = party()
    found["characters"][0]["entries"] = ["spells/hex", "spells/jolt", "spells/mend",
                                         "spells/parry"]
    state, answers = answer(game, start_state(game, found), BOSS)
    assert all(a.ok for a in answers), [a.text for a in answers]
    return state


HEX = '[attack: who="Ada" use="Hex" target="Ogre" position="desperate"]'


def focus(state: State) -> int:
    return int(state.characters[0].pools.get("focus", 1))


@pytest.mark.parametrize("turn", range(1, 9))
def test_cmb_outc_1_an_ability_rolls_the_outcome_check_with_its_own_effect(turn: int) -> None:
    """Hex: its cost paid (focus 1 → 0), the same Fight check bare-handed (2d6 + 3), the
    GM's position (desperate: level 3 back) and Hex's own effect (great: 3 levels)."""
    state = casting()
    after, [cast] = answer(SPELL_GAME, state, HEX, turn=(turn, 0))
    assert cast.ok, cast.text
    record = cast.record
    assert (record["use"], record["ref"], record["paid"]) == ("Hex", "spells/hex", "focus:1")
    assert focus(state) == 1 and focus(after) == 0
    assert (record["position"], record["effect"]) == ("desperate", "great")
    assert "weapon" not in record and record["total"] == sum(record["rolls"]) + ADA
    tier = tier_of(record["total"])
    dealt = {"critical": 4, "strong": 3, "weak": 2, "miss": 0}[tier]
    back = {"critical": 0, "strong": 0, "weak": 3, "miss": 3}[tier]
    assert (record["harmDealt"], record["harmLevel"]) == (dealt, back)
    assert cast.text.startswith("Ada uses Hex (focus:1): Ada → Ogre (desperate, great): ")


def test_an_ability_without_effect_is_standard_and_free_without_cost() -> None:
    _, [jolt] = answer(SPELL_GAME, casting(), '[attack: who="Ada" use="Jolt" target="Ogre"]',
                       turn=(1, 0))
    assert jolt.ok and (jolt.record["position"], jolt.record["effect"]) == ("risky",
                                                                             "standard")
    assert "paid" not in jolt.record


def test_an_ability_is_the_heros_one_action_of_the_round() -> None:
    state = casting()
    after, answers = answer(SPELL_GAME, state, f'{HEX} [attack: who="Ada" target="Ogre"]',
                            turn=(1, 0))
    assert answers[0].ok and not answers[1].ok and answers[1].reason == reasons.NO_TIME
    again, [late] = answer(SPELL_GAME, after, HEX.replace("Hex", "Jolt"), turn=(1, 0))
    assert not late.ok and late.reason == reasons.NO_TIME
    assert plain_canonical(again) == plain_canonical(after)


@pytest.mark.parametrize(("text", "reason"), [
    ('[attack: who="Ada" use="Fireball" target="Ogre"]', reasons.UNKNOWN_ENTRY),
    ('[attack: who="Ada" use="Mend" target="Ogre"]', reasons.UNSUPPORTED),
    ('[attack: who="Ada" use="Parry" target="Ogre"]', reasons.REACTION_ONLY),
    ('[attack: who="Ada" use="Hex" target="Ogre, Imp"]', reasons.TOO_MANY_TARGETS),
    ('[attack: who="Ada" use="Hex" target="Imp"]', reasons.UNKNOWN_COMBATANT),
    ('[attack: who="Ogre" use="Hex" target="Ada"]', reasons.PLAYERS_ROLL),
    ('[attack: who="Zed" use="Hex" target="Ogre"]', reasons.UNKNOWN_COMBATANT),
])
def test_a_refused_ability_changes_nothing(text: str, reason: str) -> None:
    state = casting()
    after, [refused] = answer(SPELL_GAME, state, text, turn=(1, 0))
    assert not refused.ok and refused.reason == reason, refused.text
    assert plain_canonical(after) == plain_canonical(state)


def test_an_ability_that_cannot_be_paid_is_refused_and_changes_nothing() -> None:
    state, [first] = answer(SPELL_GAME, casting(), HEX, turn=(1, 0))
    assert first.ok and focus(state) == 0 and state.encounter is not None  # both stand
    after, [broke] = answer(SPELL_GAME, state, HEX, turn=(2, 0))
    assert not broke.ok and broke.reason == reasons.CANNOT_PAY
    assert "no focus left to pay for Hex" in broke.text
    assert plain_canonical(after) == plain_canonical(state)


def test_the_ability_effect_must_be_an_effect_word() -> None:
    document = armed_document()
    document["live"]["pools"].append({"id": "focus", "label": "Focus", "max": {"const": 1}})
    spells = copy.deepcopy(SPELLS)
    spells["entries"][0]["mechanics"]["effect"] = "huge"
    document["catalogs"].append(spells)
    assert any("effect" in p for p in problems_of(document))


def test_a_swipe_casts_the_same() -> None:
    state = casting()
    first, one_way = answer(SPELL_GAME, state, "Ada mutters. " + HEX, turn=(4, 0))
    second, other = answer(SPELL_GAME, state, HEX + " Sparks fly.", turn=(4, 0))
    assert [a.record for a in one_way] == [a.record for a in other]
    assert plain_canonical(first) == plain_canonical(second)


def test_cmb_outc_2_the_instructions_teach_with_and_use() -> None:
    """CMB-OUTC-2: the GM is taught that an outcome action may name its weapon or a sheet
    ability, which the engine reads."""
    from engine.actions.examples import Party
    from engine.actions.fight.outcome.combat import teach_fight

    taught = "\n".join(teach_fight(GAME, Party()))
    assert "with= a weapon other than the first worn one" in taught
    assert "use= a sheet ability instead of a weapon" in taught
