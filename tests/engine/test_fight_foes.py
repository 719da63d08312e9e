"""A foe's own abilities and its regeneration (spec/combat.md A.11: CMB-ABIL-4..8, CMB-TPL-8,
CMB-TYPE-1; engine/actions/fight/foes.py) on fixtures/rulesets/skirmish-foes.json: the skirmish
spells ruleset with a troll (a Claw attack, regenerate 2 + @tier stopped by fire and acid) and
a dragon (Fire Breath: a Reflex save, DC 12 + @tier, (@tier + 1)d6 fire, once a fight, up to 3
heroes; Frost Breath: Fortitude DC 14, 2d6 cold, nothing on a success; Bite)."""

from __future__ import annotations

import copy
import itertools
from collections import Counter

from helpers import answer, fixture_json, hero, one, problems_of
from scipy.stats import chisquare

from engine import load_ruleset, start_state
from engine.actions.examples import Party
from engine.rules import reasons
from engine.rules.context import TurnContext
from engine.rules.fight.formula import strike
from engine.rules.foe_abilities import damage_taken, regenerates
from engine.rules.formula import foe_reader
from engine.rules.state import FoeUse, plain_canonical
from engine.ruleset import Formula, parse_formula
from engine.text.prompt import instructions

DOCUMENT = fixture_json("rulesets/skirmish-foes.json")
PARTY = fixture_json("parties/skirmish-spells.json")
GAME = load_ruleset(DOCUMENT)
START = start_state(GAME, PARTY)
DRAGON = '[combat: op="start" foe="Smaug" role="dragon" tier="2"]'
TROLL = '[combat: op="start" foe="Troll" role="troll"]'
BREATH = '[attack: who="Smaug" use="Fire Breath" target="Ada, Brannoc"]'
CLAW = '[attack: who="Troll" use="claw" target="Brannoc"]'


def fighting(text: str, state=START, game=GAME):
    state, answers = answer(game, state, text)
    assert all(a.ok for a in answers), answers
    return state


def first(state, text, wanted, game=GAME):
    for turn in range(1, 400):
        after, answers = answer(game, state, text, (1, turn))
        if wanted(answers):
            return after, answers
    raise AssertionError(f"no reply of {text!r} gave what was wanted")


# --- CMB-ABIL-4, CMB-TPL-8: a template's own abilities, worked out when the foe joins ----------

def test_cmb_abil_4_a_foe_joins_with_its_templates_abilities_read_at_its_tier() -> None:
    smaug = one(fighting(DRAGON), "Smaug")
    assert smaug.abilities == (
        FoeUse(id="fire-breath", label="Fire Breath", save="reflex", dc=14, on_success="half",
               damage="3d6", damage_type="fire", targets=3, left=1),
        FoeUse(id="frost-breath", label="Frost Breath", save="fortitude", dc=14,
               on_success="none", damage="2d6", damage_type="cold", targets=3),
        # CMB-TYPE-1: without its own type, the foe's (the template's damageType)
        FoeUse(id="bite", label="Bite", to_hit=4, damage="1d10 + 2", damage_type="piercing"))
    troll = one(fighting(TROLL), "Troll")
    assert troll.abilities == (
        FoeUse(id="claw", label="Claw", to_hit=3, damage="1d6 + 1", damage_type="slashing"),
        FoeUse(id="hex-bolt", label="Hex Bolt", to_hit=5, damage="2d4",
               damage_type="necrotic", spell=True))
    assert troll.regenerate == 3 and troll.stopped_by == ("fire", "acid")


def test_cmb_tpl_8_a_template_change_leaves_a_joined_foes_abilities_alone() -> None:
    state = fighting(TROLL)
    changed = copy.deepcopy(DOCUMENT)
    changed["combat"]["templates"][2]["combat"]["abilities"][0]["damage"] = "9d6"
    _, answers = first(state, CLAW, lambda a: a[0].record["targets"][0]["result"] == "hit",
                       load_ruleset(changed))
    assert len(answers[0].record["targets"][0]["damageRolls"][0]) == 1  # still 1d6 + 1


def test_a_goblin_without_abilities_keeps_the_state_it_had() -> None:
    state = fighting('[combat: op="start" foe="Goblin"]')
    dumped = one(state, "Goblin").model_dump(mode="json")
    assert "abilities" not in dumped and "regenerate" not in dumped and \
        "stopped_by" not in dumped


# --- CMB-ABIL-4: an attack of its own -----------------------------------------------------------

def test_cmb_abil_4_an_attack_ability_rolls_its_to_hit_and_its_own_damage() -> None:
    state = fighting(TROLL)
    after, answers = first(state, CLAW, lambda a: a[0].record["targets"][0]["result"] == "hit")
    found = answers[0].record
    row = found["targets"][0]
    assert found["attacker"] == "Troll" and found["ability"] == "claw"
    assert row["modifier"] == 3 and row["total"] == row["rolls"][-1] + 3
    assert row["defence"] == 11 and row["total"] >= 11  # Brannoc: 10 + Dex 12's +1
    assert len(row["damageRolls"]) == 1 and 1 <= row["damageRolls"][0][0] <= 6
    assert row["damage"] == row["damageRolls"][0][0] + 1 and found["damageType"] == "slashing"
    assert hero(after, "Brannoc").pools["hp"] == 12 - row["damage"] == row["hp"]
    assert found["events"] == [f"damage:Brannoc:{row['damage']}"]  # CMB-CARD-1
    # CMB-TURN-12: the ability took the place of the troll's one attack this round
    _, more = answer(GAME, after, '[attack: who="Troll" target="Brannoc"]', (3, 1))
    assert more[0].ok  # a new reply is a new round
    _, late = answer(GAME, state, CLAW + ' [attack: who="Troll" target="Brannoc"]', (2, 1))
    assert late[1].reason == reasons.NO_TIME


def test_cmb_react_4_a_foes_spell_sets_off_a_reaction_on_spell_before_one_on_hit() -> None:
    """OQ-CMB-11's ``spell`` trigger: Brannoc's Deflect (+4) meets the troll's Hex Bolt; its
    Claw, no spell, sets off nothing of his."""
    state = fighting(TROLL, start_state(GAME, fixture_json("parties/skirmish-foes.json")))
    bolt = '[attack: who="Troll" use="Hex Bolt" target="Brannoc"]'
    after, answers = first(state, bolt, lambda a: "reaction" in a[0].record["targets"][0])
    row = answers[0].record["targets"][0]
    assert row["reaction"] == {"who": "Brannoc", "use": "Deflect", "ref": "spells/deflect",
                               "on": "spell", "defence": 15, "added": 4, "before": "hit"}
    assert row["defence"] == 15 and row["result"] == ("miss" if row["total"] < 15 else "hit")
    assert one(after, "Brannoc").reacted == answers[0].record["round"]
    for turn in range(1, 40):
        _, clawed = answer(GAME, state, CLAW, (1, turn))
        assert "reaction" not in clawed[0].record["targets"][0]


def test_cmb_react_1_a_heroes_reaction_to_being_hit_fires_on_a_foes_ability() -> None:
    state = fighting(TROLL)
    claw = '[attack: who="Troll" use="claw" target="Ada"]'
    after, answers = first(state, claw, lambda a: "reaction" in a[0].record["targets"][0])
    row = answers[0].record["targets"][0]
    assert row["reaction"]["use"] == "Shield" and row["reaction"]["added"] == 5
    assert row["defence"] == 12 + 5 and hero(after, "Ada").pools["slot_1"] == 1
    assert one(after, "Ada").reacted == answers[0].record["round"]


# --- CMB-ABIL-5, CMB-ABIL-3: a breath weapon is a save the player rolls -------------------------

def test_cmb_abil_5_a_breath_rolls_damage_once_and_each_hero_saves_on_its_sheet() -> None:
    state = fighting(DRAGON)
    seen = set()
    for turn in range(1, 40):
        after, answers = answer(GAME, state, BREATH, (1, turn))
        found = answers[0].record
        assert found["dc"] == 14 and found["save"] == "reflex" and found["left"] == 0
        assert len(found["damageRolls"]) == 1 and len(found["damageRolls"][0]) == 3  # once
        rolled = found["rolled"]
        assert rolled == sum(found["damageRolls"][0])
        modifiers = {"Ada": 2, "Brannoc": 1}  # Dex 14 and 12
        for row in found["targets"]:
            assert row["total"] == row["rolls"][-1] + modifiers[row["target"]]
            assert row["damage"] == (rolled // 2 if row["saved"] else rolled)  # half
            assert hero(after, row["target"]).pools["hp"] == max(12 - row["damage"], 0)
            seen.add(row["saved"])
    assert seen == {True, False}


def test_cmb_abil_5_on_success_none_takes_nothing() -> None:
    state = fighting(DRAGON)
    frost = '[attack: who="Smaug" use="frost breath" target="Brannoc"]'
    _, answers = first(state, frost, lambda a: a[0].record["targets"][0]["saved"])
    assert answers[0].record["targets"][0]["damage"] == 0
    assert "left" not in answers[0].record  # no uses limit


def test_cmb_abil_6_a_foes_damage_type_meets_the_heroes_typed_defences() -> None:
    party = copy.deepcopy(PARTY)
    party["characters"][0]["conditions"] = ["fireproof"]  # resists fire
    state = fighting(DRAGON, start_state(GAME, party))
    _, answers = first(state, BREATH, lambda a: not any(
        r["saved"] for r in a[0].record["targets"]))
    rolled = answers[0].record["rolled"]
    ada, brannoc = answers[0].record["targets"]
    assert ada["damage"] == rolled // 2 and ada["affectedBy"]
    assert brannoc["damage"] == rolled and "affectedBy" not in brannoc


def test_save_damage_of_a_breath_has_the_exact_distribution_of_3d6_halved() -> None:
    """CMB-ABIL-3/5: the damage rolled once is 3d6 (tier 2: (@tier + 1)d6), half of it
    rounded down on a success: drawn through the same strike the breath makes."""
    formula = parse_formula("3d6")
    assert isinstance(formula, Formula)
    reader = foe_reader(GAME.ruleset, 2, 2)
    ctx = TurnContext(START.seed, (1, 1))
    counts = Counter(strike(formula, reader, False, 0, ctx.stream("probe", str(n))).damage // 2
                     for n in range(20_000))
    exact = Counter(sum(f) // 2 for f in itertools.product(range(1, 7), repeat=3))
    keys = sorted(exact)
    assert chisquare([counts[k] for k in keys],
                     [20_000 * exact[k] / 216 for k in keys]).pvalue > 1e-4


# --- refusals: nothing changes ------------------------------------------------------------------

def _refused(state, text: str, reason: str) -> None:
    after, answers = answer(GAME, state, text, (5, 1))
    assert answers[-1].reason == reason, answers[-1]
    assert plain_canonical(after) == plain_canonical(state)


def test_refusals_of_a_foes_ability_leave_the_state_unchanged() -> None:
    state = fighting(DRAGON)
    _refused(state, '[attack: who="Smaug" use="tail sweep" target="Ada"]',
             reasons.UNKNOWN_ENTRY)
    _refused(state, '[attack: who="Smaug" use="bite" target="Ada, Brannoc"]',
             reasons.TOO_MANY_TARGETS)
    _refused(state, '[attack: who="Smaug" use="bite" target="Nobody"]',
             reasons.UNKNOWN_COMBATANT)
    _refused(state, '[attack: who="Smaug" use="bite"]', reasons.MISSING_ATTRIBUTE)
    held = fighting('[combat: op="condition" who="Smaug" add="paralyzed"]', state)
    _refused(held, '[attack: who="Smaug" use="bite" target="Ada"]', reasons.CANNOT_ACT)
    spent, _ = answer(GAME, state, BREATH, (1, 1))
    _refused(spent, BREATH, reasons.USED_UP)


def test_a_felled_foe_uses_no_ability() -> None:
    state = fighting('[combat: op="start" foe="Smaug" role="dragon"] '
                     '[combat: op="join" foe="Goblin"]')
    encounter = state.encounter
    assert encounter is not None
    at = encounter.find("Smaug")
    combatants = list(encounter.combatants)
    combatants[at] = combatants[at].model_copy(update={"hp": 0})
    down = state.model_copy(update={"encounter": encounter.model_copy(
        update={"combatants": tuple(combatants)})})
    _refused(down, '[attack: who="Smaug" use="bite" target="Ada"]', reasons.DOWNED)


def test_a_foes_ability_rolls_the_same_on_a_swipe() -> None:
    """DESIGN.md "Dice": keyed by the reply, the foe and its strike number, never by the
    tag's place in the reply."""
    state = fighting(DRAGON)
    _, first_try = answer(GAME, state, BREATH, (1, 7))
    _, swiped = answer(GAME, state, "Smaug rears up. " + BREATH, (1, 7))
    assert first_try[0].record == swiped[0].record


def test_load_checks_a_foe_abilitys_keys() -> None:
    assert problems_of(DOCUMENT) == []
    bad = copy.deepcopy(DOCUMENT)
    bad["combat"]["templates"][2]["combat"]["abilities"][0]["targets"] = 0
    assert problems_of(bad)


# --- CMB-ABIL-7: regeneration stopped by what stops it -----------------------------------------

HACK = '[attack: who="Brannoc" target="Troll"]'
BOLT = '[attack: who="Ada" use="Fire Bolt" target="Troll"]'


def test_cmb_abil_7_a_troll_regenerates_at_the_end_of_a_round_it_took_no_fire() -> None:
    state = fighting(TROLL)
    after, answers = first(state, HACK, lambda a: 0 < a[0].record["hp"] < 12)
    hp = answers[0].record["hp"]
    gained = min(3, 15 - hp)
    assert answers[0].record["regenerated"] == [{"who": "Troll", "amount": gained,
                                                  "hp": hp + gained}]
    assert one(after, "Troll").hp == hp + gained
    assert answers[0].text.endswith(f"Regeneration: Troll regenerates {gained} "
                                    f"({hp + gained}/15).")


def test_cmb_abil_7_fire_stops_the_regeneration_that_round() -> None:
    state = fighting(TROLL)
    after, answers = first(state, HACK + " " + BOLT,
                           lambda a: a[1].ok and a[1].record["targets"][0]["damage"] > 0
                           and one_hp(a) > 0)
    last = answers[1].record
    assert last["regenerated"] == [{"who": "Troll", "amount": 0, "hp": one(after, "Troll").hp,
                                    "stoppedBy": ["fire"]}]
    assert "regenerated" not in answers[0].record  # told on the round's last attack


def one_hp(answers) -> int:
    return answers[-1].record["targets"][0]["hp"]


def test_cmb_abil_7_no_regeneration_at_full_or_at_0() -> None:
    state = fighting(TROLL)
    _, answers = answer(GAME, state, '[attack: who="Troll" use="claw" target="Brannoc"]',
                        (1, 1))
    assert "regenerated" not in answers[0].record  # at its most
    troll = one(state, "Troll")
    assert regenerates(troll.model_copy(update={"hp": 0}), set()) == 0  # felled
    assert regenerates(troll.model_copy(update={"hp": 14}), set()) == 1  # up to its most
    assert regenerates(troll.model_copy(update={"hp": 5}), {"acid"}) == 0
    assert regenerates(troll.model_copy(update={"hp": 5}), {"cold"}) == 3


def test_damage_taken_reads_strikes_plus_components_and_ability_targets() -> None:
    records = [
        {"target": "Troll", "damage": 4, "damageType": "slashing",
         "plus": [{"damageType": "acid", "dealt": 2}, {"damageType": "fire", "dealt": 0}]},
        {"targets": [{"target": "Orc", "damage": 3}, {"target": "Troll", "damage": 0}],
         "damageType": "fire"},
        {"target": "Troll", "damage": 0, "damageType": "cold"}]
    assert damage_taken(records) == {"troll": {"slashing", "acid"}, "orc": {"fire"}}


def test_load_names_the_saves_words_and_conditions_these_keys_name() -> None:
    bad = copy.deepcopy(DOCUMENT)
    breath = bad["combat"]["templates"][3]["combat"]["abilities"]
    breath[0]["save"]["save"] = "luck"
    breath[1]["damage"] = "@hp + 1"
    breath[2]["id"] = "fire-breath"
    bad["combat"]["zeroHp"]["dead"] = "gone"
    found = "\n".join(problems_of(bad))
    assert 'unknown save "luck"' in found and 'unknown reference "@hp"' in found
    assert 'a second ability "fire-breath"' in found and 'unknown condition "gone"' in found


def test_the_gm_learns_the_foes_use_form_only_where_templates_have_abilities() -> None:
    """The example is the first template with abilities using its first one on the party
    (issue 39: a filled tag, no placeholders)."""
    told = instructions(GAME, party=Party(("Ada", "Brannoc")))
    assert '[attack: who="Troll" use="Claw" target="Ada, Brannoc"]' in told
    plain = load_ruleset(fixture_json("rulesets/skirmish-spells.json"))
    assert "A foe uses one of its own abilities" not in instructions(plain)
