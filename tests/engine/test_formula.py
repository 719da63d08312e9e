"""Evaluating formulas (engine/rules/formula.py): exact arithmetic with the rounding of the
module's docstring, dice from engine.dice streams (golden against ``roll`` itself, and one
formula against its exact distribution), the bounds, and the readers of a hero's sheet and of
a foe's template (CMB-TPL-4..6, CMB-SUS-4)."""

from __future__ import annotations

import copy
import itertools
from collections import Counter
from fractions import Fraction

import pytest
from helpers import fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.stats import chisquare

from engine import TurnContext, load_ruleset, start_state
from engine.dice import MAX_DICE, DiceExpr, Stream, roll
from engine.rules.fight.formula import attacks_allowed
from engine.rules.formula import (
    MAX_VALUE,
    Evaluation,
    TermRoll,
    evaluate,
    foe_modifier,
    foe_reader,
    sheet_reader,
)
from engine.rules.sheet import SheetView
from engine.ruleset import Formula, FormulaError, parse_formula
from engine.ruleset.formula import MAX_DICE_TERMS, double_dice

HARROW = fixture_json("rulesets/harrow.json")


def formula(text: str) -> Formula:
    found = parse_formula(text)
    assert isinstance(found, Formula), found
    return found


def reader(**values: int | float | Fraction):
    return lambda reference: values.get(str(reference)[1:].replace(".", "_"), 0)


def stream(name: str = "formula") -> Stream:
    return Stream("seed", ("test",), name)


EXACT = [
    # (formula, references, exact result, value rounded down)
    ("7 / 2", {}, Fraction(7, 2), 3),
    ("-7 / 2", {}, Fraction(-7, 2), -4),
    ("floor(-7 / 2)", {}, Fraction(-4), -4),
    ("floor(7 / 2) * 2", {}, Fraction(6), 6),
    ("1 / 3 + 1 / 3 + 1 / 3", {}, Fraction(1), 1),  # exact: no 0.999…
    ("(@a + @b) / 2", {"a": 3, "b": 4}, Fraction(7, 2), 3),
    ("10 - 2 * 3", {}, Fraction(4), 4),
    ("-(2 - 5)", {}, Fraction(3), 3),
    ("min(3, -2, 7)", {}, Fraction(-2), -2),
    ("max(@str_mod, @dex_mod)", {"str_mod": -1, "dex_mod": 2}, Fraction(2), 2),
    ("10 + @dex.mod", {"dex_mod": 3}, Fraction(13), 13),  # CMB-ATK-6
    ("5 / 0", {}, Fraction(0), 0),  # dividing by 0 gives 0, as a derived floorDiv does
    ("@half", {"half": 2.5}, Fraction(5, 2), 2),
    ("@missing + 1", {}, Fraction(1), 1),
    # CMB-SUS-4, OQ-CMB-12: a Constitution save against the larger of 10 and half the damage
    ("max(10, floor(@damage / 2))", {"damage": 7}, Fraction(10), 10),
    ("max(10, floor(@damage / 2))", {"damage": 25}, Fraction(12), 12),
    # Whole numbers and fractions mixed (issue 24: whole numbers are kept as ints inside)
    ("@half * 2", {"half": 2.5}, Fraction(5), 5),
    ("6 / 3 / 4", {}, Fraction(1, 2), 0),
    ("-6 / 3 + @third * 3", {"third": Fraction(1, 3)}, Fraction(-1), -1),
    ("min(7 / 2, 4) * 2", {}, Fraction(7), 7),
    ("floor(@half) + floor(-7 / 3)", {"half": 2.5}, Fraction(-1), -1),
]


@pytest.mark.parametrize(("text", "values", "exact", "value"), EXACT,
                         ids=[f"{row[0]} {row[1]}" for row in EXACT])
def test_a_formula_evaluates_exactly(text, values, exact, value) -> None:
    found = evaluate(formula(text), reader(**values), stream())
    assert found == Evaluation(exact, ())
    assert type(found.exact) is Fraction and type(found.value) is int
    assert found.value == value


def test_a_formula_text_is_read_once_and_its_answer_kept() -> None:
    """Issue 24: a weapon's dice and a foe's damage are read on every strike, so the same
    text gives the very same (frozen) value; so does a text that is no formula."""
    assert parse_formula("(@tier)d6 + @tier") is parse_formula("(@tier)d6 + @tier")
    wrong = parse_formula("2 +")
    assert isinstance(wrong, FormulaError) and parse_formula("2 +") is wrong
    assert isinstance(parse_formula("x" * 201), FormulaError)
    assert isinstance(parse_formula(7), FormulaError)  # a ruleset may write a number


def test_cmb_turn_9_11_a_heros_attacks_are_remembered_only_while_they_cannot_change() -> None:
    """The attacks an action allows are kept per sheet (character, invented items, game), so
    a changed sheet reads again, and a ``per`` that rolls dice is rolled every time."""
    document = fixture_json("rulesets/skirmish-round.json")
    game = load_ruleset(document)
    state = start_state(game, fixture_json("parties/skirmish-round.json"))
    action = game.ruleset.combat.turn_actions[0]
    brannoc = state.characters[0]
    at = TurnContext(state.seed, (0, 0)).stream
    assert attacks_allowed(action, SheetView(game, brannoc, state), at("a", "b")) == 3
    assert attacks_allowed(action, SheetView(game, brannoc, state), at("a", "b")) == 3
    fighter = brannoc.model_copy(update={"fields": {"level_fighter": 20}})  # 1 + 4, > ranger
    assert attacks_allowed(action, SheetView(game, fighter, state), at("a", "b")) == 5
    rolled = action.model_copy(update={"per": parse_formula("1d6")})
    got = {attacks_allowed(rolled, SheetView(game, brannoc, state), at("a", f"b{n}"))
           for n in range(40)}
    assert got == {3, 6, 9, 12, 15, 18}  # 1d6 uses × 3 attacks, a new roll each time


# spec/combat.md A.10, the worked values of the example template (CMB-TPL-5)
TEMPLATE = {"attribute": "min(5, floor((@tier + 1) / 2))", "hp": "8 + 6 * @tier",
            "defence": "12 + @tier", "attack": "@tier"}
WORKED = [(1, 1, 14, 13, 1), (2, 1, 20, 14, 2), (3, 2, 26, 15, 3), (4, 2, 32, 16, 4),
          (5, 3, 38, 17, 5), (6, 3, 44, 18, 6)]


@pytest.mark.parametrize(("tier", "attribute", "hp", "defence", "attack"), WORKED)
def test_cmb_tpl_5_the_example_template_gives_the_worked_values(tier, attribute, hp, defence,
                                                               attack) -> None:
    got = {key: evaluate(formula(text), reader(tier=tier), stream()).value
           for key, text in TEMPLATE.items()}
    assert got == {"attribute": attribute, "hp": hp, "defence": defence, "attack": attack}


def test_dice_are_rolled_from_the_stream_left_to_right() -> None:
    found = evaluate(formula("2d6 + 3 + 1d8"), reader(), stream())
    same = stream()
    first, second = roll(DiceExpr(2, 6), same), roll(DiceExpr(1, 8), same)
    assert found.rolls == (TermRoll(2, 6, first.faces), TermRoll(1, 8, second.faces))
    assert found.exact == first.total + 3 + second.total


def test_cmb_tpl_5_a_computed_count_rolls_that_many_dice() -> None:
    found = evaluate(formula("(@tier)d6 + @tier"), reader(tier=3), stream())
    assert [(r.count, r.sides) for r in found.rolls] == [(3, 6)]
    assert found.exact == sum(found.rolls[0].faces) + 3


def test_cmb_reads_8_a_die_sized_by_a_value() -> None:
    found = evaluate(formula("d(@might) + d(@second)"), reader(might=8, second=4), stream())
    assert [(r.count, r.sides) for r in found.rolls] == [(1, 8), (1, 4)]


@pytest.mark.parametrize(("text", "values", "count", "sides"), [
    ("(@n)d6", {"n": -3}, 0, 6),  # a count below 0 rolls nothing
    ("(@n)d6", {"n": 500}, MAX_DICE, 6),  # held to MAX_DICE
    ("(@n)d6", {"n": 2.9}, 2, 6),  # rounded down
    ("d(@s)", {"s": 0}, 0, 1),  # a die of no sides rolls nothing
    ("d(@s)", {"s": 10**9}, 1, 1000),  # held to MAX_SIDES
])
def test_computed_dice_are_held_to_the_dice_limits(text, values, count, sides) -> None:
    found = evaluate(formula(text), reader(**values), stream())
    assert [(r.count, r.sides) for r in found.rolls] == [(count, sides)]
    assert found.exact == sum(found.rolls[0].faces)


def test_cmb_atk_5_a_critical_rolls_twice_the_dice_and_the_same_flat_terms() -> None:
    damage = formula("1d8 + @str.mod")
    found = evaluate(double_dice(damage.tree), reader(str_mod=3), stream())
    faces = roll(DiceExpr(2, 8), stream()).faces
    assert found.rolls == (TermRoll(2, 8, faces),)
    assert found.exact == sum(faces) + 3


def test_numbers_are_held_within_max_value() -> None:
    assert evaluate(formula("1000000 * 1000000 * 1000000"), reader(), stream()).exact \
        == MAX_VALUE
    assert evaluate(formula("-@x"), reader(x=float("inf")), stream()).exact == -MAX_VALUE
    assert evaluate(formula("@x"), reader(x=float("nan")), stream()).exact == 0


def test_a_dice_formula_follows_its_exact_distribution_chi_square() -> None:
    """24,000 draws of ``max(1d6, 1d6) + 1d4 - 1`` against its enumerated distribution."""
    exact = Counter(max(a, b) + c - 1 for a, b, c in itertools.product(range(1, 7), range(1, 7),
                                                                        range(1, 5)))
    draws = 24_000
    dice = stream("chi-square")
    tree = formula("max(1d6, 1d6) + 1d4 - 1")
    counts = Counter(evaluate(tree, reader(), dice).value for _ in range(draws))
    totals = sorted(exact)
    assert set(counts) <= set(totals)
    observed = [counts[total] for total in totals]
    expected = [exact[total] * draws / 144 for total in totals]
    assert chisquare(observed, expected).pvalue > 1e-4


def _texts() -> st.SearchStrategy[str]:
    leaves = st.one_of(st.integers(0, 10**6).map(str), st.sampled_from(
        ["@a", "@b.mod", "@tier", "1d6", "100d1000", "(@a)d6", "d(@b)", "(@a)d(@b)"]))
    return st.recursive(leaves, lambda inner: st.one_of(
        st.tuples(inner, st.sampled_from("+-*/"), inner).map(lambda t: f"{t[0]} {t[1]} {t[2]}"),
        inner.map(lambda t: f"({t})"), inner.map(lambda t: f"-{t}"),
        inner.map(lambda t: f"floor({t})"),
        st.tuples(st.sampled_from(["min", "max"]), inner, inner).map(
            lambda t: f"{t[0]}({t[1]}, {t[2]})"),
    ), max_leaves=12)


NUMBERS = st.one_of(st.integers(-10**30, 10**30), st.floats(allow_nan=True, allow_infinity=True),
                    st.fractions())


@settings(max_examples=150, deadline=None)
@given(_texts(), NUMBERS, NUMBERS, st.booleans())
def test_evaluation_stays_within_its_bounds(text, a, b, critical) -> None:
    found = parse_formula(text)
    if not isinstance(found, Formula):
        return
    tree = double_dice(found.tree) if critical else found.tree
    result = evaluate(tree, lambda r: {"a": a, "b": b}.get(r.name, 3), stream())
    assert -MAX_VALUE <= result.exact <= MAX_VALUE
    assert len(result.rolls) <= MAX_DICE_TERMS
    assert all(r.count <= MAX_DICE * 2 and 1 <= r.sides <= 1000 for r in result.rolls)
    assert all(len(r.faces) == r.count for r in result.rolls)


def _harrow(**changes):
    document = copy.deepcopy(HARROW)
    document["sheet"]["fields"].append({"id": "class_attacks", "label": "Attacks", "default": 2})
    document.update(changes)
    game = load_ruleset(document)
    return game, start_state(game, fixture_json("parties/harrow.json"))


def test_a_heros_references_read_its_sheet() -> None:
    game, state = _harrow()
    ada = SheetView(game, state.characters[0])  # brawn 2, wits 3, level 1, guard 6 + wits
    read = sheet_reader(ada, {"damage": 9, "roll.high": 5})
    assert [evaluate(formula(text), read, stream()).value for text in (
        "@brawn", "@wits.mod", "@level", "@guard", "@class.attacks", "@damage", "@roll.high",
        "@nothing",
    )] == [2, 3, 1, 9, 2, 9, 5, 0]


def test_chk_gen_6_a_heros_mod_is_the_resolutions_ability_modifier() -> None:
    resolution = copy.deepcopy(HARROW["resolution"])
    resolution["abilityModifier"] = {"op": "floorHalfMinusTen"}
    game, state = _harrow(resolution=resolution)
    bram = SheetView(game, state.characters[1])  # brawn 3: floor((3 - 10) / 2) = -4
    assert evaluate(formula("@brawn.mod"), sheet_reader(bram), stream()).value == -4


def test_cmb_tpl_6_a_foe_reads_its_tier_and_its_template_modifier() -> None:
    template = {"role": "standard", "defaults": {"attribute": TEMPLATE["attribute"]},
                "tracks": {"hp": "8 + 6 * @tier"},
                "combat": {"defence": "12 + @tier", "attack": "@tier", "damage": "1d6"}}
    document = copy.deepcopy(HARROW)
    document["combat"] = {"templates": [template]}
    ruleset = load_ruleset(document).ruleset
    assert ruleset.combat is not None
    modifier = foe_modifier(ruleset, ruleset.combat.templates[0], 3, stream())
    assert modifier == 2
    read = foe_reader(ruleset, 3, modifier, {"damage": 4})
    assert [evaluate(formula(text), read, stream()).value for text in (
        "@tier", "@brawn.mod", "@brawn", "@damage", "@level", "@nothing.mod",
    )] == [3, 2, 14, 4, 0, 0]
