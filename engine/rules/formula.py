"""Evaluating a ruleset formula (engine/ruleset/formula.py's tree) for one combatant: exact
arithmetic on fractions, dice from an :mod:`engine.dice` stream, and ``@`` references read
through a function the caller passes, so evaluating knows nothing of sheets. The readers
for a hero (:func:`sheet_reader`) and for a foe of a template (:func:`foe_reader`) follow.

Rounding: ``/`` divides exactly and ``floor`` is the one rounding inside a formula; a result
that is not whole is rounded down when a whole number is needed (:attr:`Evaluation.value`;
OQ-CMB-12 and Classic d20 round down), and :attr:`Evaluation.exact` keeps the fraction for a
caller that rounds otherwise (narrative damage: half up after the grade's multiplier).
Dividing by 0 gives 0, as a derived ``floorDiv`` does.

Bounds: every number is held to ±:data:`MAX_VALUE`; a computed dice count is floored and held
to 0..:data:`~engine.dice.MAX_DICE` (times 2 on a critical), a computed die size to
..:data:`~engine.dice.MAX_SIDES`, a size below 1 rolls nothing; with the parser's limits one
evaluation draws at most 8 × 2 × MAX_DICE dice."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from fractions import Fraction

from ..dice import MAX_DICE, MAX_SIDES, DiceExpr, Stream, roll
from ..ruleset import Formula, Ruleset, Template, reference_read
from ..ruleset.fight import TIER
from ..ruleset.formula import (
    Binary,
    Call,
    Dice,
    Negate,
    Node,
    Number,
    Reference,
    dice_terms,
    references,
)
from .memo import remembered
from .sheet import MAX_SHEET_NUMBER, SheetView, ability_modifier

MAX_VALUE = MAX_SHEET_NUMBER  # what a formula computes is kept within ±this, as sheet values
Resolve = Callable[[Reference], int | float | Fraction]
"""What an ``@`` reference reads for the combatant the formula is evaluated for."""


@dataclass(frozen=True, slots=True)
class TermRoll:
    """One dice term as rolled: ``count`` dice of ``sides`` faces and the faces drawn."""

    count: int
    sides: int
    faces: tuple[int, ...]

    @property
    def total(self) -> int:
        return sum(self.faces)

    def __str__(self) -> str:
        return f"{self.count}d{self.sides}"


@dataclass(frozen=True, slots=True)
class Evaluation:
    """A formula's result: the exact number and every dice term rolled, in rolling order."""

    exact: Fraction
    rolls: tuple[TermRoll, ...] = ()

    @property
    def value(self) -> int:
        """The result as a whole number, rounded down."""
        return math.floor(self.exact)


Exact = int | Fraction
"""A value inside an evaluation: a whole number stays an ``int`` (exact and several times
faster than a :class:`~fractions.Fraction`); a fraction only where ``/`` leaves one."""


def _held(number: int | float | Fraction) -> Exact:
    """``number`` exactly, within ±MAX_VALUE; NaN reads 0."""
    if type(number) is int:  # the usual case: numbers written and sheet values
        return number if -MAX_VALUE <= number <= MAX_VALUE else (
            MAX_VALUE if number > 0 else -MAX_VALUE)
    if isinstance(number, float):
        if number != number:
            return 0
        if math.isinf(number):
            number = MAX_VALUE if number > 0 else -MAX_VALUE
    value = Fraction(number)
    if value > MAX_VALUE:
        return MAX_VALUE
    if value < -MAX_VALUE:
        return -MAX_VALUE
    return value.numerator if value.denominator == 1 else value


class _Evaluator:
    def __init__(self, resolve: Resolve, stream: Stream, reroll_up_to: int = 0) -> None:
        self.resolve = resolve
        self.stream = stream
        self.reroll_up_to = reroll_up_to
        self.rolls: list[TermRoll] = []

    def value(self, node: Node) -> Exact:
        if type(node) is Number:  # exact types first: the commonest nodes, cheapest tests
            return _held(node.value)
        if type(node) is Reference:
            return _held(self.resolve(node))
        if isinstance(node, Binary):
            left, right = self.value(node.left), self.value(node.right)
            if node.op == "+":
                return _held(left + right)
            if node.op == "-":
                return _held(left - right)
            if node.op == "*":
                return _held(left * right)
            if not right:
                return 0
            if type(left) is int and type(right) is int:  # within ±|left|: no need to hold
                return left // right if left % right == 0 else Fraction(left, right)
            return _held(left / right)
        if isinstance(node, Negate):
            return -self.value(node.operand)
        if isinstance(node, Call):
            arguments = [self.value(a) for a in node.arguments]
            if node.function == "floor":
                return math.floor(arguments[0])
            return min(arguments) if node.function == "min" else max(arguments)
        assert isinstance(node, Dice)
        return self.dice(node)

    def dice(self, node: Dice) -> int:
        count = min(max(math.floor(self.value(node.count)), 0), MAX_DICE) * node.times
        sides = min(math.floor(self.value(node.sides)), MAX_SIDES)
        if sides < 1:
            count = 0
        faces = roll(DiceExpr(count, max(sides, 1)), self.stream).faces
        if self.reroll_up_to > 0:  # ITM-WPN-15: each low die rerolled once, the new one stands
            faces = tuple(self.stream.die(sides) if face <= self.reroll_up_to else face
                          for face in faces)
        self.rolls.append(TermRoll(count, max(sides, 1), faces))
        return sum(faces)


def evaluate(formula: Formula | Node, resolve: Resolve, stream: Stream,
             reroll_up_to: int = 0) -> Evaluation:
    """Compute ``formula`` (or a tree, such as :func:`~engine.ruleset.formula.double_dice`'s
    for a critical) with ``resolve`` reading its references and ``stream`` its dice, left
    to right; with ``reroll_up_to`` above 0 every die showing that or less is rerolled once
    (ITM-WPN-15), which draws at most twice the dice."""
    tree = formula.tree if isinstance(formula, Formula) else formula
    evaluator = _Evaluator(resolve, stream, reroll_up_to)
    exact = evaluator.value(tree)
    return Evaluation(Fraction(exact), tuple(evaluator.rolls))


@remembered(1024)
def references_of(formula: Formula) -> tuple[Reference, ...]:
    """The ``@`` references of ``formula``, in the order written (remembered per formula: a
    turn action's ``attacks`` is asked on every attack, CMB-TURN-11)."""
    return references(formula.tree)


@remembered(1024)
def rolls_dice(formula: Formula) -> bool:
    """Whether ``formula`` has a dice term (remembered per formula)."""
    return bool(dice_terms(formula.tree))


def sheet_reader(view: SheetView, given: Mapping[str, int | Fraction] | None = None) -> Resolve:
    """A hero's references: ``@x`` its ability score, ``@x.mod`` the resolution's modifier of
    it (CHK-GEN-4..7), ``@a``/``@a.b`` its field or derived value ``a``/``a_b``, and the
    names in ``given`` (``{"damage": 7}``, ``{"roll.high": 5}``). Anything else reads 0."""
    values = dict(given or {})
    names = frozenset(values)
    sheet = view.game.ruleset.sheet

    def resolve(reference: Reference) -> int | float | Fraction:
        read = reference_read(sheet, reference, names)
        if read is None:
            return 0
        if read.kind == "given":
            return values[read.name]
        if read.kind == "score":
            return view.ability_score(read.name)
        if read.kind == "modifier":
            return ability_modifier(view.game, view.ability_score(read.name))
        if read.kind == "field":
            return view.field(read.name)
        return view.derived(read.name)

    return resolve


def foe_reader(ruleset: Ruleset, tier: int, modifier: int,
               given: Mapping[str, int | Fraction] | None = None) -> Resolve:
    """A foe's references (CMB-TPL-4): ``@tier``, every ability's modifier ``modifier`` (its
    template's ``defaults.attribute``) and score ``10 + 2 × modifier``, and the names in
    ``given``. A foe has no fields or derived values: anything else reads 0."""
    values: dict[str, int | Fraction] = {TIER: tier, **(given or {})}
    names = frozenset(values)

    def resolve(reference: Reference) -> int | float | Fraction:
        read = reference_read(ruleset.sheet, reference, names, sheet_values=False)
        if read is None:
            return 0
        if read.kind == "given":
            return values[read.name]
        return modifier if read.kind == "modifier" else 10 + 2 * modifier

    return resolve


def foe_modifier(ruleset: Ruleset, template: Template, tier: int, stream: Stream) -> int:
    """A foe's ability modifier: its template's ``defaults.attribute`` at ``tier`` (0 without
    one), rounded down."""
    if template.defaults is None:
        return 0
    reader = foe_reader(ruleset, tier, 0)
    return evaluate(template.defaults.attribute, reader, stream).value
