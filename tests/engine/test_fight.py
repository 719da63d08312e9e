"""Formula combat's core loop (DESIGN.md "Combat"; spec/combat.md A.2, A.5, A.10, A.13):
``[combat: op="start"|"join"|"end"]`` and a hero's ``[attack:]`` on a foe, on the
fixtures/rulesets/skirmish.json ruleset (d20, naturals on both ends)."""

from __future__ import annotations

import copy
import json
from collections import Counter

import pytest
from helpers import answer, fell, fixture_json

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.formula import foe_names, in_order
from engine.rules.state import Combatant, Encounter, State, plain_canonical

DOCUMENT = fixture_json("rulesets/skirmish.json")
PARTY = fixture_json("parties/skirmish.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
TWO_GOBLINS = '[combat: op="start" foe="Goblin" role="standard" tier="1" count="2"]'


def game_with(**combat: object):
    document = copy.deepcopy(DOCUMENT)
    document["combat"].update(combat)
    return load_ruleset(document)


def fighting(text: str = TWO_GOBLINS, game=GAME, state: State = START) -> State:
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    assert state.encounter is not None
    return state


def names(state: State) -> list[str]:
    assert state.encounter is not None
    return [c.name for c in state.encounter.combatants]


def foe(state: State, name: str) -> Combatant:
    assert state.encounter is not None
    index = state.encounter.find(name)
    assert index is not None
    return state.encounter.combatants[index]


# --- start and join: names, clamps, templates ------------------------------------------------

def test_cmb_tpl_1_start_brings_the_party_and_numbered_foes_in() -> None:
    state = fighting()
    assert sorted(names(state)) == ["Ada", "Brannoc", "Goblin 1", "Goblin 2"]
    assert {c.side for c in state.encounter.combatants if c.name.startswith("Goblin")} == {"foes"}
    assert foe(state, "Ada").hp is None  # a hero's hit points stay in its own pool
    assert state.encounter.round == 0


def test_a_single_foe_keeps_its_name_and_later_ones_are_numbered_on() -> None:
    state = fighting('[combat: op="start" foe="Goblin"]')
    assert "Goblin" in names(state)
    state, answers = answer(GAME, state, '[combat: op="join" foe="goblin" count="2"]', (0, 1))
    assert answers[0].ok
    assert {"Goblin", "goblin 2", "goblin 3"} <= set(names(state))
    state, _ = answer(GAME, state, '[combat: op="start" foe="Goblin"]', (0, 2))
    assert "Goblin 4" in names(state)  # start while a fight is on: more foes join


@pytest.mark.parametrize(("on", "existing", "count", "expected"), [
    ("Goblin", [], 1, ["Goblin"]),
    ("Goblin", [], 3, ["Goblin 1", "Goblin 2", "Goblin 3"]),
    ("Goblin", ["Goblin"], 1, ["Goblin 2"]),
    ("Goblin", ["Goblin 1", "Goblin 2"], 2, ["Goblin 3", "Goblin 4"]),
    ("Goblin", ["Orc 7"], 1, ["Goblin"]),
])
def test_foe_names_number_on_from_the_highest(on, existing, count, expected) -> None:
    encounter = Encounter(combatants=tuple(
        Combatant(name=n, side="foes", initiative=0, joined=i) for i, n in enumerate(existing)))
    assert foe_names(encounter, on, count) == expected


@pytest.mark.parametrize(("attrs", "count", "tier", "note"), [
    ('count="40"', 12, 1, 'count="40" was held to 12 (1 to 12)'),
    ('count="0"', 1, 1, 'count="0" was held to 1 (1 to 12)'),
    ('count="two"', 1, 1, 'count="two" is not a whole number: 1 was used'),
    ('tier="9"', 1, 6, 'tier="9" was held to 6 (1 to 6)'),
    ('tier="0"', 1, 1, 'tier="0" was held to 1 (1 to 6)'),
    ('role="boss"', 1, 1, 'role="boss" is no template\'s role: "standard" was used'),
])
def test_count_tier_and_role_are_repaired_with_a_note(attrs, count, tier, note) -> None:
    state, answers = answer(GAME, START, f'[combat: op="start" foe="Orc" {attrs}]')
    assert answers[0].ok and note in answers[0].notes
    foes = [c for c in state.encounter.combatants if c.side == "foes"]
    assert len(foes) == count and {f.tier for f in foes} == {tier}
    assert {f.role for f in foes} == {"standard"}


@pytest.mark.parametrize(("tier", "hp", "defence", "attack"), [
    (1, 14, 13, 1), (2, 20, 14, 2), (3, 26, 15, 3), (4, 32, 16, 4), (5, 38, 17, 5),
    (6, 44, 18, 6)])
def test_cmb_tpl_5_a_foe_gets_the_worked_values_of_its_template(tier, hp, defence,
                                                                attack) -> None:
    state, answers = answer(GAME, START, f'[combat: op="start" foe="Orc" tier="{tier}"]')
    orc = foe(state, "Orc")
    assert (orc.hp, orc.hp_max, orc.defence, orc.attack) == (hp, hp, defence, attack)
    # CMB-TPL-8, DESIGN.md "State": the damage as it stands at this tier, dice left to roll
    assert orc.damage == f"{tier}d6 + {tier}"
    assert answers[0].record["foes"][0]["hpMax"] == hp


def test_cmb_tpl_8_a_foe_keeps_its_numbers_when_the_template_changes() -> None:
    state = fighting()
    changed = copy.deepcopy(DOCUMENT)
    changed["combat"]["templates"][0]["combat"]["defence"] = "30"
    later, _ = answer(load_ruleset(changed), state, '[combat: op="join" foe="Orc"]', (0, 1))
    assert foe(later, "Goblin 1").defence == 13 and foe(later, "Orc").defence == 30


def test_a_hero_joins_late_with_its_own_initiative() -> None:
    state, _ = answer(GAME, START, TWO_GOBLINS)
    encounter = state.encounter.model_copy(update={"combatants": tuple(
        c for c in state.encounter.combatants if c.name != "Ada")})
    state = state.model_copy(update={"encounter": encounter})
    state, answers = answer(GAME, state, '[combat: op="join" foe="Ada"]', (0, 1))
    assert answers[0].ok and foe(state, "Ada").side == "party"
    _, again = answer(GAME, state, '[combat: op="join" foe="ada"]', (0, 2))
    assert again[0].reason == reasons.UNKNOWN_COMBATANT


# --- initiative ------------------------------------------------------------------------------

def test_cmb_turn_2_initiative_is_rolled_once_and_a_swipe_rolls_the_same() -> None:
    one = fighting()
    two = fighting()
    assert one.canonical() == two.canonical()  # same turn key, same dice
    before = {c.name: c.initiative for c in one.encounter.combatants}
    later, _ = answer(GAME, one, '[combat: op="join" foe="Orc"] [attack: target="Goblin 1"]',
                      (0, 1))
    after = {c.name: c.initiative for c in later.encounter.combatants}
    assert {n: after[n] for n in before} == before  # nobody re-rolls (CMB-TURN-5)


def test_cmb_turn_2_heroes_roll_the_initiative_check_and_foes_their_modifier() -> None:
    """d20 + Dexterity modifier for a hero; d20 + the template's attribute for a foe."""
    seen_hero, seen_foe = set(), set()
    for turn in range(300):
        _, answers = answer(GAME, START, '[combat: op="start" foe="Orc"]', (turn, 0))
        for row in answers[0].record["order"]:
            if row["name"] == "Brannoc":  # dex 12: +1
                seen_hero.add(row["initiative"])
            if row["name"] == "Orc":  # tier 1: min(5, floor(2 / 2)) = 1
                seen_foe.add(row["initiative"])
    assert seen_hero == set(range(2, 22)) and seen_foe == set(range(2, 22))


def test_cmb_turn_3_4_highest_first_a_hero_before_a_foe_then_join_order() -> None:
    def one(name, side, initiative, joined):
        return Combatant(name=name, side=side, initiative=initiative, joined=joined)

    rows = [one("G1", "foes", 12, 2), one("Ada", "party", 12, 1), one("G2", "foes", 12, 3),
            one("Brannoc", "party", 12, 0), one("G3", "foes", 15, 4)]
    assert [c.name for c in in_order(rows)] == ["G3", "Brannoc", "Ada", "G1", "G2"]


def test_the_start_record_lists_the_order_by_initiative() -> None:
    state, answers = answer(GAME, START, TWO_GOBLINS)
    order = answers[0].record["order"]
    assert [r["name"] for r in order] == names(state)
    assert [r["initiative"] for r in order] == sorted((r["initiative"] for r in order),
                                                      reverse=True)
    modifiers = {"Brannoc": 1, "Ada": 2, "Goblin 1": 1, "Goblin 2": 1}  # dex 12, 14; tier 1
    assert all(r["initiative"] == r["rolls"][0] + modifiers[r["name"]] for r in order)


# --- attacks ---------------------------------------------------------------------------------

def attacks(text: str, turns: range, game=GAME, start: str = TWO_GOBLINS):
    """The answer of ``text`` in a fight, once per turn key of ``turns``."""
    state = fighting(start, game)
    for turn in turns:
        yield answer(game, state, text, (1, turn))


def test_cmb_atk_a4_hit_iff_total_reaches_defence_naturals_decide_first() -> None:
    """Brannoc's longsword: d20 + 5 (Strength 16: +3, bonus 2; ITM-WPN-6/9) vs Goblin 2's 13."""
    boundary = Counter()
    for _, answers in attacks('[attack: target="Goblin 2" with="Longsword"]', range(600)):
        record = answers[0].record
        natural = record["rolls"][0]
        assert record["modifier"] == 5 and record["total"] == natural + 5
        assert record["defence"] == 13
        if natural == 20:
            expected = "critical"
        elif natural == 1:
            expected = "miss"
        else:
            expected = "hit" if record["total"] >= 13 else "miss"
        assert record["result"] == expected
        boundary[record["total"] - 13] += 1
    assert boundary[0] and boundary[-1]  # the edge itself was rolled both ways


def test_cmb_atk_5_a_critical_doubles_the_damage_dice() -> None:
    seen = Counter()
    for _, answers in attacks('[attack: target="Goblin 2"]', range(400)):
        record = answers[0].record
        if record["result"] == "miss":
            assert record["damage"] == 0 and "damageRolls" not in record
            continue
        faces = record["damageRolls"]
        dice = 2 if record["result"] == "critical" else 1
        assert len(faces) == 1 and len(faces[0]) == dice  # 1d8, 2d8 on a critical
        assert all(1 <= f <= 8 for f in faces[0])
        assert record["damage"] == sum(faces[0]) + 3  # ITM-WPN-12: + the Strength modifier
        assert record["damageType"] == "slashing"
        seen[record["result"]] += 1
    assert seen["critical"] and seen["hit"]


def test_unarmed_adds_nothing_to_hit_and_deals_the_systems_damage() -> None:
    """DESIGN.md: unarmed, the number added is 0 and the damage is combat.attack.damage
    (``1 + @str.mod``: 4 for Brannoc's Strength 16, doubled dice of none on a critical)."""
    for _, answers in attacks('[attack: target="Goblin 2" with="unarmed"]', range(200)):
        record = answers[0].record
        assert record["weapon"] == "unarmed" and record["modifier"] == 0
        assert record["damage"] == (0 if record["result"] == "miss" else 4)


def test_hit_points_never_go_below_0_and_the_last_foe_felled_wins_the_fight() -> None:
    start = '[combat: op="start" foe="Rat" role="minion"]'
    won = 0
    for state, answers in attacks('[attack: target="Rat"]', range(60), start=start):
        record = answers[0].record
        if record["result"] == "miss":
            assert state.encounter is not None and foe(state, "Rat").hp == 1
            continue
        assert record["damage"] >= 4 and record["hp"] == 0 and record["hpMax"] == 1
        assert fell(record) == ["felled:Rat", "end:victory"]
        assert state.encounter is None
        won += 1
    assert won


def test_a_felled_foe_stays_down_while_others_stand() -> None:
    state = fighting('[combat: op="start" foe="Rat" role="minion" count="2"]')
    for turn in range(40):
        felled, answers = answer(GAME, state, '[attack: target="Rat 1"]', (1, turn))
        if answers[0].record["result"] != "miss":
            break
    assert fell(answers[0].record) == ["felled:Rat 1"]
    assert foe(felled, "Rat 1").hp == 0 and felled.encounter is not None
    again, refused = answer(GAME, felled, '[attack: target="Rat 1"]', (2, 0))
    assert refused[0].reason == reasons.TARGET_DOWN and again is felled
    _, alone = answer(GAME, felled, "[attack:]", (2, 1))
    assert alone[0].ok and alone[0].record["target"] == "Rat 2"  # the only one standing


def test_a_reply_with_attacks_is_one_round() -> None:
    state = fighting()
    state, answers = answer(GAME, state, '[attack: target="Goblin 1"] '
                            '[attack: who="Ada" target="Goblin 2"]', (1, 0))
    assert [a.record["round"] for a in answers] == [1, 1] and state.encounter.round == 1
    state, answers = answer(GAME, state, '[attack: target="Goblin 1"]', (1, 1))
    assert answers[0].record["round"] == 2
    _, ended = answer(GAME, state, '[combat: op="end" outcome="fled"]', (1, 2))
    assert ended[0].record == {"outcome": "fled", "rounds": 2, "events": ["end:fled"]}
    assert ended[0].notes == ()


def test_end_clears_the_encounter_and_the_state_reads_as_before_the_fight() -> None:
    state = fighting()
    assert '"encounter":{' in state.canonical()
    assert state.canonical() == plain_canonical(state)
    assert State.model_validate(json.loads(state.canonical())) == state
    ended, answers = answer(GAME, state, '[combat: op="end" outcome="Victory"]', (0, 1))
    assert answers[0].ok and ended.encounter is None
    assert ended.canonical() == START.canonical() and '"encounter":null' in START.canonical()


def test_result_attributes_the_model_writes_are_ignored_with_a_note() -> None:
    _, answers = answer(GAME, fighting(), '[attack: target="Goblin 1" hit="true" damage="99"]',
                        (1, 0))
    assert answers[0].notes == ('ignored "hit": the engine works that out itself',
                                'ignored "damage": the engine works that out itself')
    assert answers[0].record["damage"] != 99


# --- refusals: each leaves the state unchanged -----------------------------------------------

IN_A_FIGHT = fighting()
PARALYZED = IN_A_FIGHT.with_character(0, IN_A_FIGHT.characters[0].model_copy(
    update={"conditions": ("paralyzed",)}))
OUT_OF_A_FIGHT = START


@pytest.mark.parametrize(("state", "text", "reason"), [
    (OUT_OF_A_FIGHT, '[attack: target="Goblin 1"]', reasons.NO_ENCOUNTER),
    (OUT_OF_A_FIGHT, '[combat: op="join" foe="Orc"]', reasons.NO_ENCOUNTER),
    (OUT_OF_A_FIGHT, '[combat: op="end" outcome="fled"]', reasons.NO_ENCOUNTER),
    (IN_A_FIGHT, '[combat: op="end" outcome="won"]', reasons.UNKNOWN_OUTCOME),
    (IN_A_FIGHT, '[combat: op="end"]', reasons.MISSING_ATTRIBUTE),
    (IN_A_FIGHT, '[combat: op="start"]', reasons.MISSING_ATTRIBUTE),
    (IN_A_FIGHT, '[combat: op="retreat"]', reasons.UNKNOWN_ACTION),
    (IN_A_FIGHT, "[attack:]", reasons.MISSING_ATTRIBUTE),  # two foes stand: name one
    (IN_A_FIGHT, '[attack: target="Orc"]', reasons.UNKNOWN_COMBATANT),
    (IN_A_FIGHT, '[attack: target="Ada"]', reasons.UNSUPPORTED),  # heroes: not yet
    (IN_A_FIGHT, '[attack: target="Goblin 1" who="Nobody"]', reasons.UNKNOWN_COMBATANT),
    (IN_A_FIGHT, '[attack: target="Goblin 1" with="Axe"]', reasons.UNKNOWN_WEAPON),
    (IN_A_FIGHT, '[attack: target="Goblin 1" with="Torch"]', reasons.UNKNOWN_WEAPON),
    (IN_A_FIGHT, '[attack: target="Goblin 1" with="Dagger"]', reasons.NOT_WORN),
    (IN_A_FIGHT, '[attack: target="Goblin 1" action="dance"]', reasons.UNKNOWN_BUDGET),
    (PARALYZED, '[attack: target="Goblin 1"]', reasons.CANNOT_ACT),
])
def test_every_refusal_leaves_the_state_unchanged(state, text, reason) -> None:
    after, answers = answer(GAME, state, text, (1, 0))
    assert (answers[0].ok, answers[0].reason) == (False, reason), answers[0].text
    assert after is state


def test_a_hero_not_in_the_fight_cannot_attack_until_it_joins() -> None:
    encounter = IN_A_FIGHT.encounter.model_copy(update={"combatants": tuple(
        c for c in IN_A_FIGHT.encounter.combatants if c.name != "Ada")})
    state = IN_A_FIGHT.model_copy(update={"encounter": encounter})
    after, answers = answer(GAME, state, '[attack: who="Ada" target="Goblin 1"]', (1, 0))
    assert answers[0].reason == reasons.UNKNOWN_COMBATANT and after is state


@pytest.mark.parametrize("text", [TWO_GOBLINS, '[attack: target="Goblin 1"]',
                                  '[combat: op="end" outcome="fled"]'])
def test_no_combat_where_the_ruleset_turns_fights_off(text) -> None:
    game = game_with(kind="none")
    after, answers = answer(game, START, text)
    assert answers[0].reason == reasons.NO_COMBAT and after is START


def test_no_combat_to_start_without_templates() -> None:
    after, answers = answer(game_with(templates=[]), START, TWO_GOBLINS)
    assert answers[0].reason == reasons.NO_COMBAT and after is START


@pytest.mark.parametrize("fixture", ["symbols-genesys"])
def test_a_symbol_pool_ruleset_without_combat_attack_does_not_fight(fixture) -> None:
    """Narrative fights are answered since issue 26 (tests/engine/test_narrative*.py), symbol-pool
    fights since issue 25 where the ruleset gives combat.attack (test_fight_symbols.py)."""
    game = load_ruleset(fixture_json(f"rulesets/{fixture}.json"))
    state = start_state(game, fixture_json(f"parties/{fixture}.json"))
    for text in (TWO_GOBLINS, '[attack: target="Goblin 1"]'):
        after, answers = answer(game, state, text)
        assert answers[0].reason == reasons.UNSUPPORTED
        assert 'gives no "combat.attack"' in answers[0].text
        assert after is state


# --- the budget and the dice of each strike --------------------------------------------------

def test_cmb_turn_12_an_attack_past_the_budget_is_no_time_and_changes_nothing() -> None:
    """CMB-TURN-A4: skirmish's Action allows 1 × 1 attack a round; its Bonus action none
    (OQ-CMB-7 c)."""
    state = fighting()
    once, answers = answer(GAME, state, '[attack: target="Goblin 1"]', (1, 0))
    assert answers[0].ok
    twice, answers = answer(GAME, once, '[attack: target="Goblin 2"]', (1, 0))  # same reply
    assert answers[0].reason == reasons.NO_TIME and answers[0].text.startswith("NO TIME")
    assert twice is once
    _, answers = answer(GAME, state, '[attack: target="Goblin 1" action="bonus"]', (1, 0))
    assert answers[0].reason == reasons.NO_TIME
    _, answers = answer(GAME, once, '[attack: target="Goblin 2"]', (1, 1))  # the next round
    assert answers[0].ok and answers[0].record["round"] == 2


def test_dice_follow_the_attacker_not_the_tags_place_in_the_reply() -> None:
    """DESIGN.md "Dice": a swipe that reorders the reply's attacks rolls each the same."""
    state = fighting()
    brannoc = '[attack: target="Goblin 1"]'
    ada = '[attack: who="Ada" target="Goblin 2"]'
    _, first = answer(GAME, state, f"{brannoc} {ada}", (1, 0))
    _, swapped = answer(GAME, state, f"Ada first. {ada} Then Brannoc. {brannoc}", (1, 0))
    assert first[0].record == swapped[1].record and first[1].record == swapped[0].record


@pytest.mark.parametrize("skill", ["attack", "Initiative"])
def test_cmb_atk_2_the_attack_and_initiative_checks_are_combat_only(skill) -> None:
    after, answers = answer(GAME, START, f'[skill_check: skill="{skill}" dc="10"]')
    assert answers[0].reason == reasons.COMBAT_ONLY and after is START
    _, other = answer(GAME, START, '[skill_check: skill="athletics" dc="10"]')
    assert other[0].ok
