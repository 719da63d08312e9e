"""Formulas: the strings a ruleset's combat block computes with (docs/design.md#formula-combat,
docs/rules/combat.md#formulas), read by grammars/formula.lark into a small typed tree.

Reading never raises and never evaluates: :func:`parse_formula` returns a :class:`Formula` or a
:class:`FormulaError` with a one-line reason. The limits here keep every formula small enough
that evaluating it (engine/rules/formula.py) is bounded: at most :data:`MAX_LENGTH`
characters, a tree at most :data:`MAX_DEPTH` deep, at most :data:`MAX_DICE_TERMS` dice terms,
written dice within engine/dice.py's :data:`~engine.dice.MAX_DICE` and
:data:`~engine.dice.MAX_SIDES`, and numbers up to :data:`~engine.dice.MAX_MODIFIER`."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from functools import cache, lru_cache
from importlib.resources import files
from typing import Annotated, Any, Final, Literal

from lark import Lark, Token, Transformer, v_args
from lark.exceptions import (
    LarkError,
    UnexpectedEOF,
    UnexpectedInput,
    VisitError,
)
from pydantic import PlainSerializer, PlainValidator, WithJsonSchema

from ..dice import MAX_DICE, MAX_MODIFIER, MAX_SIDES

GRAMMAR: Final[str] = files("grammars").joinpath("formula.lark").read_text(encoding="utf-8")

MAX_LENGTH = 200  # characters; the spec's longest example is 31
MAX_DEPTH = 24  # levels of the tree: parentheses, calls, dice and chains of operators
MAX_DICE_TERMS = 8  # so one formula rolls at most 8 × MAX_DICE dice (twice that on a critical)
MAX_ARGUMENTS = 8  # of min and max


@dataclass(frozen=True, slots=True)
class Number:
    """A whole number written in the formula."""

    value: int


@dataclass(frozen=True, slots=True)
class Reference:
    """``@name`` or ``@name.part``: a value the place of the formula gives it (an ability, a
    field, ``@tier``, ...); what it reads is decided where it is evaluated."""

    name: str
    part: str | None = None

    def __str__(self) -> str:
        return f"@{self.name}" if self.part is None else f"@{self.name}.{self.part}"


@dataclass(frozen=True, slots=True)
class Negate:
    operand: Node


@dataclass(frozen=True, slots=True)
class Binary:
    """``left op right``; ``/`` divides exactly (a fraction until ``floor`` or the end)."""

    op: Literal["+", "-", "*", "/"]
    left: Node
    right: Node


@dataclass(frozen=True, slots=True)
class Call:
    """``min(…)``, ``max(…)`` (two or more arguments) or ``floor(x)``."""

    function: Literal["min", "max", "floor"]
    arguments: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Dice:
    """A dice term: ``count`` dice of ``sides`` faces, each a whole number or a computed one
    (``(@tier)d6``, ``d(@might)``). ``times`` multiplies the count: 2 on a critical
    (CMB-ATK-5, OQ-CMB-3), see :func:`double_dice`."""

    count: Node
    sides: Node
    times: int = 1


Node = Number | Reference | Negate | Binary | Call | Dice


@dataclass(frozen=True, slots=True)
class Formula:
    """A formula as the ruleset wrote it, and its tree."""

    text: str
    tree: Node

    def __str__(self) -> str:
        return self.text


@dataclass(frozen=True, slots=True)
class FormulaError:
    """Why a string is not a formula gmtags computes."""

    message: str

    def __str__(self) -> str:
        return self.message


@cache
def _parser() -> Lark:
    return Lark(GRAMMAR, parser="lalr", lexer="contextual", cache=True)


class _Limit(Exception):
    """A written number or dice beyond the limits (caught inside :func:`parse_formula`)."""


@v_args(inline=True)
class _Build(Transformer[Token, Node]):
    """Lark's tree to :data:`Node` values."""

    def number(self, token: Token) -> Number:
        if len(token) > 7 or int(token) > MAX_MODIFIER:
            raise _Limit(f"a number in a formula is at most {MAX_MODIFIER}")
        return Number(int(token))

    def reference(self, name: Token, part: Token | None = None) -> Reference:
        return Reference(str(name), None if part is None else str(part))

    def neg(self, operand: Node) -> Node:
        return Negate(operand)

    def add(self, left: Node, right: Node) -> Node:
        return Binary("+", left, right)

    def sub(self, left: Node, right: Node) -> Node:
        return Binary("-", left, right)

    def mul(self, left: Node, right: Node) -> Node:
        return Binary("*", left, right)

    def div(self, left: Node, right: Node) -> Node:
        return Binary("/", left, right)

    def call(self, function: Token, *arguments: Node) -> Node:
        name = str(function)
        if name == "floor" and len(arguments) != 1:
            raise _Limit(f"floor takes one argument, not {len(arguments)}")
        if name in ("min", "max") and not 2 <= len(arguments) <= MAX_ARGUMENTS:
            raise _Limit(f"{name} takes 2 to {MAX_ARGUMENTS} arguments, not {len(arguments)}")
        kind: Literal["min", "max", "floor"] = "floor" if name == "floor" else \
            "min" if name == "min" else "max"
        return Call(kind, tuple(arguments))

    def dice(self, *parts: Node | Token) -> Node:
        nodes = [p for p in parts if not isinstance(p, Token)]
        count, sides = (Number(1), nodes[0]) if len(nodes) == 1 else (nodes[0], nodes[1])
        if isinstance(count, Number) and not 1 <= count.value <= MAX_DICE:
            raise _Limit(f"between 1 and {MAX_DICE} dice can be rolled at once, "
                         f"not {count.value}")
        if isinstance(sides, Number) and not 1 <= sides.value <= MAX_SIDES:
            raise _Limit(f"a die has between 1 and {MAX_SIDES} sides, not {sides.value}")
        return Dice(count, sides)


def _children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Negate):
        return (node.operand,)
    if isinstance(node, Binary):
        return (node.left, node.right)
    if isinstance(node, Call):
        return node.arguments
    if isinstance(node, Dice):
        return (node.count, node.sides)
    return ()


def depth(node: Node) -> int:
    """How many levels the tree has (a number or a reference is 1)."""
    deepest, pending = 0, [(node, 1)]
    while pending:
        current, level = pending.pop()
        deepest = max(deepest, level)
        pending.extend((child, level + 1) for child in _children(current))
    return deepest


def nodes(node: Node) -> Iterator[Node]:
    """Every node of the tree, parents before their children, left to right."""
    pending = [node]
    while pending:
        current = pending.pop()
        yield current
        pending.extend(reversed(_children(current)))


def references(node: Node) -> tuple[Reference, ...]:
    """The ``@`` references of the tree, in the order written."""
    return tuple(n for n in nodes(node) if isinstance(n, Reference))


def dice_terms(node: Node) -> tuple[Dice, ...]:
    """The dice terms of the tree, in the order written (the order they are rolled)."""
    return tuple(n for n in nodes(node) if isinstance(n, Dice))


def double_dice(node: Node) -> Node:
    """The same formula with the number of dice of each dice term doubled, flat terms and
    references unchanged (CMB-ATK-5, OQ-CMB-3: ``1d8 + 3`` deals ``2d8 + 3`` on a critical)."""
    if isinstance(node, Dice):
        return replace(node, count=double_dice(node.count), sides=double_dice(node.sides),
                       times=node.times * 2)
    if isinstance(node, Negate):
        return Negate(double_dice(node.operand))
    if isinstance(node, Binary):
        return Binary(node.op, double_dice(node.left), double_dice(node.right))
    if isinstance(node, Call):
        return Call(node.function, tuple(double_dice(a) for a in node.arguments))
    return node


def _where(error: UnexpectedInput, text: str) -> str:
    column = getattr(error, "column", None)
    token = getattr(error, "token", None)
    if (isinstance(error, UnexpectedEOF) or not isinstance(column, int) or column < 1
            or (isinstance(token, Token) and token.type == "$END")):
        return "it ends too early"
    found = text[column - 1:column]
    if not found.isprintable():
        found = f"U+{ord(found):04X}"
    return f'"{found}" at character {column} is unexpected'


PARSED = 4096  # formulas remembered by their text: a ruleset writes far fewer


def parse_formula(text: str) -> Formula | FormulaError:
    """Read a formula, or say in one line why it is not one. Never raises.

    The same text always reads the same (frozen) value, so the last :data:`PARSED` texts are
    remembered: a weapon's dice and a foe's damage are read on every strike (the Lark parse was a
    third of an attack)."""
    if not isinstance(text, str):
        return FormulaError("a formula is a string")
    if len(text) > MAX_LENGTH:
        return FormulaError(f"a formula is at most {MAX_LENGTH} characters long")
    return _parsed(text)


@lru_cache(maxsize=PARSED)
def _parsed(text: str) -> Formula | FormulaError:
    """:func:`parse_formula` of a string of at most :data:`MAX_LENGTH` characters."""
    if not text.strip():
        return FormulaError("a formula is empty")
    try:
        tree = _parser().parse(text)
    except UnexpectedInput as error:
        return FormulaError(f'"{text}" is not a formula: {_where(error, text)}')
    except LarkError:
        return FormulaError(f'"{text}" is not a formula')
    try:
        node = _Build().transform(tree)
    except VisitError as error:  # lark wraps what a callback raises
        if isinstance(error.orig_exc, _Limit):
            return FormulaError(str(error.orig_exc))
        raise
    if depth(node) > MAX_DEPTH:
        return FormulaError(f"a formula nests at most {MAX_DEPTH} levels deep")
    if len(dice_terms(node)) > MAX_DICE_TERMS:
        return FormulaError(f"a formula has at most {MAX_DICE_TERMS} dice terms")
    return Formula(text, node)


def _validate(value: Any) -> Formula:
    """A ruleset formula field: a string (or a whole number) that reads as a formula."""
    if isinstance(value, Formula):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    if not isinstance(value, str):
        raise ValueError("a formula is a string such as \"1d8 + @str.mod\"")
    found = parse_formula(value)
    if isinstance(found, FormulaError):
        raise ValueError(found.message)
    return found


FormulaText = Annotated[
    Formula,
    PlainValidator(_validate),
    PlainSerializer(lambda formula: formula.text, return_type=str),
    WithJsonSchema({"type": "string", "maxLength": MAX_LENGTH,
                    "description": "a formula (grammars/formula.lark)"}),
]
"""A formula field of a ruleset model: written as a string, held as a :class:`Formula`."""
