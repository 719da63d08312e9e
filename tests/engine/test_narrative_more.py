"""Narrative combat's leftovers (issue 26; spec/combat.md B.4, B.7, B.9, B.10, spec/items.md
§14; DESIGN.md "Narrative combat", docs/rulesets.md ``combat.narrative``) on Harrow Vale
(no combat block: base 80/65, damage 10, Grit 10): the weapon-against-armour term
(D100-DMG-3, ``edge=``), momentum for creative or cooperative play (D100-MOM-5, ``flair=``),
the bleeding-out clock and bare hands stopping it (D100-PARTY-7, B.7 "far over"), and a
status changing the defence roll (ITM-CLS-7)."""

from __future__ import annotations

import copy
from fractions import Fraction

import pytest
from helpers import answer, fixture_json

from engine import load_ruleset, start_state
from engine.rules import reasons
from engine.rules.fight.narrative import (
    EDGES,
    MOMENTUM,
    MULTIPLIERS,
    bleeds_out,
    edge_factor,
    edge_word,
    half_up,
)
from engine.rules.state import State

OGRE = '[combat: op="start" foe="Ogre" tier="6"]'  # 70 hit points: no blow is capped
HIT = '[attack: who="Ada" target="Ogre"{}]'


def harrow_with(narrative: dict | None = None, conditions: list | None = None):
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    if narrative is not None or conditions is not None:
        document["combat"] = {"narrative": narrative or {}}
        if conditions is not None:
            document["combat"]["conditions"] = conditions
    return load_ruleset(document)


GAME = harrow_with()


def fighting(game=GAME) -> State:
    state = start_state(game, fixture_json("parties/harrow.json"))
    state, answers = answer(game, state, OGRE)
    assert answers[0].ok
    return state


START = fighting()


def strike(extra: str, turn: int, game=GAME, state: State = START):
    after, answers = answer(game, state, HIT.format(extra), (0, turn))
    assert answers[0].ok, answers[0]
    return after, answers[0]


def hitting_turn(game=GAME) -> int:
    """The first turn whose plain strike lands (a grade with a multiplier)."""
    return next(t for t in range(1, 40)
                if MULTIPLIERS[strike("", t, game, fighting(game))[1].record["grade"]])


# --- D100-DMG-3: a better weapon against worse armour --------------------------------------

def test_d100_dmg_3_edge_words_and_their_factor() -> None:
    assert EDGES == {"even": 0, "better": 1, "superior": 2}
    assert edge_word(" Better ") == ("better", True)
    assert edge_word("") == ("even", True)
    assert edge_word("mythic") == ("even", False)
    third = Fraction(1, 3)
    assert edge_factor(0, third) == 1
    assert edge_factor(1, third) == Fraction(4, 3)
    assert edge_factor(2, third) == Fraction(5, 3)  # more than the reckless target's third
    assert edge_factor(-1, third) == 1


@pytest.mark.parametrize(("edge", "factor"), [("better", Fraction(4, 3)),
                                              ("superior", Fraction(5, 3))])
def test_d100_dmg_3_a_better_weapon_hits_harder_on_the_same_roll(edge, factor) -> None:
    turn = hitting_turn()
    _, plain = strike("", turn)
    after, edged = strike(f' edge="{edge}"', turn)
    assert edged.record["roll"] == plain.record["roll"]  # the same dice
    grade = plain.record["grade"]
    assert edged.record["grade"] == grade
    assert plain.record["damage"] == half_up(10 * MULTIPLIERS[grade])
    assert edged.record["damage"] == half_up(10 * MULTIPLIERS[grade] * factor)
    assert edged.record["edge"] == edge and "edge" not in plain.record
    assert after.encounter.combatants[after.encounter.find("Ogre")].hp == \
        70 - edged.record["damage"]


def test_d100_dmg_3_weapon_armour_key_sets_the_share_per_step() -> None:
    game = harrow_with({"weaponArmour": 0.5})
    turn = hitting_turn(game)
    _, edged = strike(' edge="superior"', turn, game, fighting(game))
    grade = edged.record["grade"]
    assert edged.record["damage"] == half_up(10 * MULTIPLIERS[grade] * 2)


def test_d100_dmg_3_an_unknown_edge_is_even_with_a_note_and_a_miss_stays_0() -> None:
    turn = hitting_turn()
    _, plain = strike("", turn)
    _, odd = strike(' edge="mythic"', turn)
    assert odd.record["damage"] == plain.record["damage"] and "edge" not in odd.record
    assert 'edge="mythic" is not one of even, better, superior: even was used' in odd.notes
    hard = ' tactics="poor" risk="reckless" aim="extreme"'  # 40 %: misses come often
    missing = next(t for t in range(1, 60)
                   if not MULTIPLIERS[strike(hard, t)[1].record["grade"]])
    assert strike(hard + ' edge="superior"', missing)[1].record["damage"] == 0


# --- D100-MOM-5: creative or cooperative play ---------------------------------------------

@pytest.mark.parametrize("flair", ["creative", "cooperative", "Creative"])
def test_d100_mom_5_flair_adds_one_momentum_on_the_same_roll(flair) -> None:
    _, plain = strike("", 3)
    after, flaired = strike(f' flair="{flair}"', 3)
    assert flaired.record["roll"] == plain.record["roll"]
    grade = plain.record["grade"]
    assert plain.record["momentum"] == MOMENTUM[grade]
    assert flaired.record["momentum"] == MOMENTUM[grade] + 1
    assert flaired.record["momentumChange"] == plain.record["momentumChange"] + 1
    assert flaired.record["flair"] == flair.casefold()
    assert after.encounter.momentum["party"] == MOMENTUM[grade] + 1


def test_d100_mom_5_flair_key_counts_from_the_next_attack_on() -> None:
    game = harrow_with({"flair": 2})
    state = fighting(game)
    state, answers = answer(game, state, '[attack: who="Ada" target="Ogre" flair="cooperative"]'
                            ' [attack: who="Bram the Quiet" target="Ogre"]', (0, 5))
    first, second = answers[0].record, answers[1].record
    assert first["momentum"] == MOMENTUM[first["grade"]] + 2
    momentum = next(p["value"] for p in second["parts"] if p["term"] == "momentum")
    assert momentum == first["momentum"]  # B.9: it counts toward the next hit chance


def test_d100_mom_5_an_unknown_flair_and_a_foes_flair_add_nothing() -> None:
    _, plain = strike("", 3)
    _, odd = strike(' flair="dazzling"', 3)
    assert odd.record["momentum"] == plain.record["momentum"] and "flair" not in odd.record
    assert any('flair="dazzling" is not one of creative, cooperative' in n for n in odd.notes)
    after, answers = answer(GAME, START, '[attack: who="Ogre" target="Ada" flair="creative" '
                            'edge="superior"]', (0, 1))
    assert answers[0].ok and any("count on a hero's strike only" in n
                                 for n in answers[0].notes)
    assert after.encounter.momentum == {"party": 0, "foes": 0}


# --- D100-PARTY-7: the bleeding-out clock, bare hands ------------------------------------

def downed(state: State, who: int = 0) -> State:
    character = state.characters[who]
    return state.with_character(who, character.model_copy(update={
        "pools": {**character.pools, "health": 0}}))


BRAM = '[attack: who="Bram the Quiet" target="Ogre" purpose="incapacitate"]'  # no damage


def rounds(game, state: State, replies: list[str], first: int = 1):
    told = []
    for number, text in enumerate(replies, start=first):
        state, answers = answer(game, state, text, (0, number))
        told.append(answers)
    return state, told


def test_d100_party_7_clock_rule() -> None:
    assert not bleeds_out(3, 1, 3) and bleeds_out(4, 1, 3) and bleeds_out(2, 1, 1)


def test_d100_party_7_a_downed_hero_bleeds_out_after_three_rounds() -> None:
    state, told = rounds(GAME, downed(START), [BRAM] * 4)
    for answers in told[:3]:
        assert "bleeds out" not in answers[-1].text
    assert state.encounter.bleeding[0].who == "Ada" and state.encounter.bleeding[0].since == 1
    last = told[3][-1]
    assert last.text.endswith("Ada bleeds out and dies.")
    assert last.record["bled"] == [{"who": "Ada", "since": 1}]
    assert "dead:Ada" in last.record["events"]
    assert "dead" in state.characters[0].conditions
    assert state.encounter.bleeding[0].died
    _, again = rounds(GAME, state, [BRAM], 5)
    assert "bleeds out" not in again[0][-1].text  # it dies once


def test_d100_over_1_pushed_far_over_the_hero_collapses_and_bleeds_out() -> None:
    game = harrow_with({"stamina": "resolve", "bleedRounds": 1})
    state, answers = answer(game, fighting(game), HIT.format(' effort="calamity" push="yes"'),
                            (0, 1))
    assert answers[0].record["overexertion"] == "far" and answers[0].record["collapsed"]
    assert state.encounter.bleeding[0].who == "Ada"
    state, told = rounds(game, state, [BRAM], 2)
    assert told[0][-1].text.endswith("Ada bleeds out and dies.")


def test_d100_party_7_bleed_rounds_key_and_null_turns_it_off() -> None:
    quick = harrow_with({"bleedRounds": 1})
    state, told = rounds(quick, downed(fighting(quick)), [BRAM] * 2)
    assert "bleeds out" not in told[0][-1].text and "Ada bleeds out" in told[1][-1].text
    never = harrow_with({"bleedRounds": None})
    state, told = rounds(never, downed(fighting(never)), [BRAM] * 6)
    assert not state.encounter.bleeding and "dead" not in state.characters[0].conditions


def test_d100_party_7_a_world_death_condition_is_the_one_given() -> None:
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["conditions"].append({"id": "slain", "label": "Slain"})
    document["combat"] = {"narrative": {"bleedRounds": 1}, "zeroHp": {"dead": "slain"}}
    game = load_ruleset(document)
    state, _ = rounds(game, downed(fighting(game)), [BRAM] * 2)
    assert "slain" in state.characters[0].conditions
    assert "dead" not in state.characters[0].conditions


def test_d100_party_7_bare_hands_stop_the_bleeding() -> None:
    state, _ = rounds(GAME, downed(START), [BRAM])
    tend = '[combat: op="defend" who="Bram the Quiet" how="tend" for="Ada"] ' + BRAM
    state, answers = answer(GAME, state, tend, (0, 2))
    assert answers[0].ok and answers[0].record["for"] == "Ada"
    assert answers[0].text.endswith("and stops Ada's bleeding with bare hands.")
    assert state.encounter.bleeding[0].stanched
    state, told = rounds(GAME, state, [BRAM] * 5, 3)
    assert all("bleeds out" not in a[-1].text for a in told)
    assert "dead" not in state.characters[0].conditions
    assert state.characters[0].pools["health"] == 0  # bare hands do not heal: still down
    again = '[combat: op="defend" who="Bram the Quiet" how="tend" for="Ada"]'
    after, refused = answer(GAME, state, again, (0, 9))
    assert refused[0].reason == reasons.NOT_BLEEDING and after == state


def test_d100_party_7_tend_refusals_leave_the_state_unchanged() -> None:
    state, _ = rounds(GAME, downed(START), [BRAM])
    for text, reason in [
            ('[combat: op="defend" who="Ada" how="tend" for="Bram the Quiet"]', reasons.DOWNED),
            ('[combat: op="defend" who="Bram the Quiet" how="tend" for="Nobody"]',
             reasons.UNKNOWN_COMBATANT),
            ('[combat: op="defend" who="Bram the Quiet" how="tend" for="Ogre"]',
             reasons.UNKNOWN_COMBATANT),
            ('[combat: op="defend" who="Bram the Quiet" how="tend" for="Bram the Quiet"]',
             reasons.UNKNOWN_COMBATANT)]:
        after, answers = answer(GAME, state, text, (0, 2))
        assert answers[0].reason == reason, text
        assert after == state
    standing = '[combat: op="defend" who="Ada" how="tend" for="Bram the Quiet"]'
    after, answers = answer(GAME, START, standing, (0, 2))
    assert answers[0].reason == reasons.NOT_BLEEDING and after == START


def test_d100_party_7_healing_stops_the_clock_and_a_fresh_fall_starts_a_new_one() -> None:
    state, _ = rounds(GAME, downed(START), [BRAM])
    ada = state.characters[0]
    state = state.with_character(0, ada.model_copy(update={"pools": {**ada.pools,
                                                                     "health": 4}}))
    state, _ = rounds(GAME, state, [BRAM], 2)
    assert not state.encounter.bleeding
    state, _ = rounds(GAME, downed(state), [BRAM], 3)
    assert state.encounter.bleeding[0].since == 3


def test_d100_party_7_the_dead_take_no_heal() -> None:
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    document["catalogs"][0]["entries"].append(
        {"id": "salve", "label": "Salve", "item": {"category": "gear", "rarity": "common",
         "stack": 5, "use": {"free": True, "kind": "heal", "targets": "ally",
                             "amount": {"flat": 32}, "consumes": True}}})
    document["combat"] = {"narrative": {"bleedRounds": 1}}
    game = load_ruleset(document)
    state = downed(fighting(game))
    from engine.rules.state import Stack
    bram = state.characters[1]
    state = state.with_bag(1, (*bram.bag, Stack(name="Salve", item="kit/salve", count=1)))
    state, _ = rounds(game, state, [BRAM] * 2)
    assert "dead" in state.characters[0].conditions
    after, answers = answer(game, state, '[inventory: action="use" item="Salve" '
                            'who="Bram the Quiet" target="Ada"]', (0, 5))
    assert answers[0].reason == reasons.TARGET_DOWN and "bled out" in answers[0].text
    assert after == state


def test_d100_party_7_swipes_bleed_the_same() -> None:
    one, a = rounds(GAME, downed(START), [BRAM] * 4)
    two, b = rounds(GAME, downed(START), [BRAM] * 4)
    assert one == two and [x[-1].text for x in a] == [x[-1].text for x in b]


# --- ITM-CLS-7: a status changes the defence roll ----------------------------------------

def landing(game, conditions: tuple[str, ...] = ()):
    state = fighting(game)
    ada = state.characters[0]
    state = state.with_character(0, ada.model_copy(update={"conditions": conditions}))
    state, first = answer(game, state, '[attack: who="Ogre" target="Ada"]', (0, 1))
    assert first[0].ok
    state, answers = answer(game, state, '[combat: op="defend" who="Ada" how="dodge"] '
                            + BRAM, (0, 2))
    return answers[-1].record["landed"][0]["defence"]


@pytest.mark.parametrize(("edge", "term"), [(1, -10), (-1, 10)])
def test_itm_cls_7_a_status_raises_or_lowers_the_defence_chance(edge, term) -> None:
    game = harrow_with({}, [{"condition": "rattled", "against": [{"edge": edge}]}])
    plain, marked = landing(game), landing(game, ("rattled",))
    assert marked["roll"] == plain["roll"]
    assert marked["chance"] == plain["chance"] + term and marked["status"] == term
    assert "status" not in plain


def test_itm_cls_7_a_status_held_only_at_a_reach_or_without_keys_does_nothing() -> None:
    game = harrow_with({}, [{"condition": "rattled", "against": [{"edge": 1,
                                                                  "reach": "near"}]}])
    assert landing(game, ("rattled",))["chance"] == landing(game)["chance"]
    assert landing(GAME, ("rattled",))["chance"] == landing(GAME)["chance"]


# --- ITM-CLS-14: a companion's stack drawn on -------------------------------------------

def _kit_game():
    document = copy.deepcopy(fixture_json("rulesets/harrow.json"))
    item = {"category": "gear", "rarity": "common", "stack": 5}
    document["catalogs"][0]["entries"] += [
        {"id": "salve", "label": "Salve", "item": {**item, "use": {
            "free": True, "kind": "heal", "targets": "ally", "amount": {"flat": 32},
            "consumes": True}}},
        {"id": "ring", "label": "Ring", "item": {**item, "slots": {"hands": 1}, "use": {
            "free": True, "kind": "heal", "amount": {"flat": 32}}}}]
    return load_ruleset(document)


KIT = _kit_game()


def kit_fight(ada: dict[str, int], bram: dict[str, int]) -> State:
    from engine.rules.state import Stack
    state = fighting(KIT)
    for who, kit in ((0, ada), (1, bram)):
        character = state.characters[who]
        state = state.with_bag(who, (*character.bag, *(
            Stack(name=name.title(), item=f"kit/{name}", count=n) for name, n in kit.items())))
    return state


def counts(state: State, who: int, name: str) -> int:
    return sum(s.count for s in state.characters[who].bag if s.name == name)


SALVE = '[inventory: action="use" item="Salve" who="Bram the Quiet" target="Ada"]'


def test_itm_cls_14_a_user_without_the_item_draws_on_a_companions_stack() -> None:
    state = downed(kit_fight({"salve": 2}, {}))
    after, answers = answer(KIT, state, SALVE, (0, 1))
    done = answers[0]
    assert done.ok and done.record["from"] == "Ada" and done.record["left"] == 1
    assert "Bram the Quiet uses Salve from Ada's stack on Ada: heals 10" in done.text
    assert counts(after, 0, "Salve") == 1 and after.characters[0].pools["health"] == 10


def test_itm_cls_14_the_users_own_stack_first() -> None:
    state = kit_fight({"salve": 2}, {"salve": 1})
    after, answers = answer(KIT, state, SALVE, (0, 1))
    assert answers[0].ok and "from" not in answers[0].record
    assert counts(after, 0, "Salve") == 2 and counts(after, 1, "Salve") == 0


def test_itm_cls_14_an_item_worn_by_its_wearer_is_never_drawn_on() -> None:
    state = kit_fight({"ring": 1}, {})
    after, answers = answer(KIT, state, '[inventory: action="use" item="Ring" '
                            'who="Bram the Quiet"]', (0, 1))
    assert answers[0].reason == reasons.NOT_HELD and after == state


def test_d100_role_1_3_the_instructions_teach_edge_flair_and_tend() -> None:
    """D100-DMG-3, D100-MOM-5, D100-PARTY-7: the GM is taught the grades it may write for
    them (the words the engine reads), in the fight's lines of the instructions."""
    from engine.actions.examples import Party
    from engine.actions.fight.narrative.combat import teach_fight

    taught = "\n".join(teach_fight(GAME, Party(("Ada", "Bram the Quiet"))))
    assert "edge= (better, superior)" in taught  # issue 39: listed, never inside a tag
    assert "flair= (creative, cooperative)" in taught
    assert "tend with for= a downed ally" in taught


def test_cmb_hp0_3_a_hero_dead_without_a_zero_hp_rule_stays_down_when_healed() -> None:
    """D100-PARTY-7 with CMB-HP0-3: a hero that bled out bears ``dead`` where the ruleset
    names no ``combat.zeroHp.dead``; every fight rule reads that as dead, so hit points given
    back (here: a full health pool) do not stand it up again."""
    from engine.rules.fight.formula import standing
    from engine.rules.fight.zero_hp import dead_condition, is_dead

    assert GAME.ruleset.combat is None or GAME.ruleset.combat.zero_hp is None
    assert dead_condition(GAME) == "dead" and is_dead(GAME, ("dead",))
    ada = next(i for i, c in enumerate(START.characters) if c.name == "Ada")
    assert START.encounter is not None
    me = next(c for c in START.encounter.combatants if c.name == "Ada")
    assert standing(GAME, START, me)
    buried = START.characters[ada].model_copy(update={"conditions": ("dead",)})
    state = START.model_copy(update={"characters": (
        *START.characters[:ada], buried, *START.characters[ada + 1:])})
    assert not standing(GAME, state, me)
