"""Reading formulas (engine/ruleset/formula.py, grammars/formula.lark): one row per input, the
tree or the reason it is refused; the parser never raises and never accepts what the limits
refuse; a critical doubles the dice of each dice term (CMB-ATK-5, OQ-CMB-3)."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.ruleset import Formula, FormulaError, parse_formula
from engine.ruleset.formula import (
    MAX_DEPTH,
    MAX_DICE_TERMS,
    MAX_LENGTH,
    Binary,
    Call,
    Dice,
    Negate,
    Number,
    Reference,
    depth,
    dice_terms,
    double_dice,
    references,
)

N = Number
TIER = Reference("tier")


def ref(name: str, part: str | None = None) -> Reference:
    return Reference(name, part)


READS = [
    # spec/combat.md §0 and DESIGN.md "Combat": every construct of Part A
    ("3", N(3)),
    ("10 + @dex.mod", Binary("+", N(10), ref("dex", "mod"))),
    ("1d8 + max(@str.mod, @dex.mod)",
     Binary("+", Dice(N(1), N(8)), Call("max", (ref("str", "mod"), ref("dex", "mod"))))),
    ("min(5, floor((@tier + 1) / 2))",
     Call("min", (N(5), Call("floor", (Binary("/", Binary("+", TIER, N(1)), N(2)),))))),
    ("8 + 6 * @tier", Binary("+", N(8), Binary("*", N(6), TIER))),
    ("(@tier)d6 + @tier", Binary("+", Dice(TIER, N(6)), TIER)),
    ("@roll.high + 4", Binary("+", ref("roll", "high"), N(4))),
    ("@class.attacks", ref("class", "attacks")),
    ("d(@might) + d(@second)", Binary("+", Dice(N(1), ref("might")), Dice(N(1), ref("second")))),
    ("max(10, floor(@damage / 2))",
     Call("max", (N(10), Call("floor", (Binary("/", ref("damage"), N(2)),))))),
    ("d20", Dice(N(1), N(20))),
    ("2D6-1", Binary("-", Dice(N(2), N(6)), N(1))),
    ("2 d 6", Dice(N(2), N(6))),
    ("(1d4)d6", Dice(Dice(N(1), N(4)), N(6))),
    ("2d(3)", Dice(N(2), N(3))),
    ("-@str.mod", Negate(ref("str", "mod"))),
    ("+4", N(4)),
    ("1 - 2 - 3", Binary("-", Binary("-", N(1), N(2)), N(3))),
    ("2 * 3 + 4 * 5", Binary("+", Binary("*", N(2), N(3)), Binary("*", N(4), N(5)))),
    ("2 * (3 + 4)", Binary("*", N(2), Binary("+", N(3), N(4)))),
    ("12 / 4 / 3", Binary("/", Binary("/", N(12), N(4)), N(3))),
    ("max(1, 2, 3)", Call("max", (N(1), N(2), N(3)))),
    ("100d1000", Dice(N(100), N(1000))),
    ("1000000", N(1_000_000)),
]


@pytest.mark.parametrize(("text", "tree"), READS, ids=[row[0] for row in READS])
def test_a_formula_reads_as_its_tree(text: str, tree: object) -> None:
    found = parse_formula(text)
    assert found == Formula(text, tree)  # type: ignore[arg-type]


REFUSED = [
    ("", "a formula is empty"),
    ("   ", "a formula is empty"),
    ("1 +", '"1 +" is not a formula: it ends too early'),
    ("@", '"@" is not a formula: it ends too early'),
    ("1dd6", '"1dd6" is not a formula: "d" at character 3 is unexpected'),
    ("@a.b.c", '"@a.b.c" is not a formula: "." at character 5 is unexpected'),
    ("1e5", '"1e5" is not a formula: "e" at character 2 is unexpected'),
    ("2 ** 3", '"2 ** 3" is not a formula: "*" at character 4 is unexpected'),
    ("__import__('os')", "\"__import__('os')\" is not a formula: \"_\" at character 1 is unexpected"),
    ("1 $ 2", '"1 $ 2" is not a formula: "$" at character 3 is unexpected'),
    ("1\x002", '"1\x002" is not a formula: "U+0000" at character 2 is unexpected'),
    ("@hp-max", '"@hp-max" is not a formula: it ends too early'),  # ids with "-" are not read
    ("0d6", "between 1 and 100 dice can be rolled at once, not 0"),
    ("101d6", "between 1 and 100 dice can be rolled at once, not 101"),
    ("1d0", "a die has between 1 and 1000 sides, not 0"),
    ("1d1001", "a die has between 1 and 1000 sides, not 1001"),
    ("1000001", "a number in a formula is at most 1000000"),
    ("99999999999999999999", "a number in a formula is at most 1000000"),
    ("max(1)", "max takes 2 to 8 arguments, not 1"),
    ("min(1,2,3,4,5,6,7,8,9)", "min takes 2 to 8 arguments, not 9"),
    ("floor(1, 2)", "floor takes one argument, not 2"),
    ("floor()", '"floor()" is not a formula: ")" at character 7 is unexpected'),
    ("+".join(["1d6"] * (MAX_DICE_TERMS + 1)), f"a formula has at most {MAX_DICE_TERMS} dice terms"),
    ("1" + "+1" * MAX_DEPTH, f"a formula nests at most {MAX_DEPTH} levels deep"),
    ("1" * (MAX_LENGTH + 1), f"a formula is at most {MAX_LENGTH} characters long"),
]


@pytest.mark.parametrize(("text", "reason"), REFUSED, ids=[row[0][:30] for row in REFUSED])
def test_a_string_that_is_not_a_formula_is_refused_with_its_reason(text: str, reason: str) -> None:
    assert parse_formula(text) == FormulaError(reason)


def test_parentheses_alone_do_not_count_as_depth() -> None:
    text = "(" * 60 + "1" + ")" * 60
    assert parse_formula(text) == Formula(text, N(1))


def test_references_and_dice_terms_are_listed_in_the_order_written() -> None:
    found = parse_formula("d(@might) + (@tier)d6 + @str.mod")
    assert isinstance(found, Formula)
    assert references(found.tree) == (ref("might"), TIER, ref("str", "mod"))
    assert dice_terms(found.tree) == (Dice(N(1), ref("might")), Dice(TIER, N(6)))
    assert [str(r) for r in references(found.tree)] == ["@might", "@tier", "@str.mod"]


CRITICALS = [
    ("1d8 + 3", Binary("+", Dice(N(1), N(8), 2), N(3))),
    ("(@tier)d6 + @tier", Binary("+", Dice(TIER, N(6), 2), TIER)),
    ("max(1d4, 2d6) - 1", Binary("-", Call("max", (Dice(N(1), N(4), 2), Dice(N(2), N(6), 2))),
                                 N(1))),
    ("@str.mod + 2", Binary("+", ref("str", "mod"), N(2))),
]


@pytest.mark.parametrize(("text", "doubled"), CRITICALS, ids=[row[0] for row in CRITICALS])
def test_cmb_atk_5_a_critical_doubles_the_dice_of_each_dice_term(text: str, doubled: object) -> None:
    found = parse_formula(text)
    assert isinstance(found, Formula)
    assert double_dice(found.tree) == doubled


def test_cmb_atk_5_a_computed_count_of_dice_is_doubled_once() -> None:
    found = parse_formula("(1d4)d6")
    assert isinstance(found, Formula)
    assert double_dice(found.tree) == Dice(Dice(N(1), N(4), 2), N(6), 2)


FORMULA_ALPHABET = "0123456789+-*/() ,.@dDminaxflortehgsu_\x00é"


@given(st.text(alphabet=FORMULA_ALPHABET, max_size=80) | st.text(max_size=300))
def test_the_parser_never_raises_and_keeps_its_limits(text: str) -> None:
    found = parse_formula(text)
    assert isinstance(found, Formula | FormulaError)
    if isinstance(found, Formula):
        assert len(text) <= MAX_LENGTH
        assert depth(found.tree) <= MAX_DEPTH
        assert len(dice_terms(found.tree)) <= MAX_DICE_TERMS
        for term in dice_terms(found.tree):
            if isinstance(term.count, Number):
                assert 1 <= term.count.value <= 100
            if isinstance(term.sides, Number):
                assert 1 <= term.sides.value <= 1000
