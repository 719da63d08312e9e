"""Shared pieces of the check tests: the five fixture rulesets, answering one check, drawing many
checks straight from a kind's algorithm, and a chi-square bound against exact distributions."""

from __future__ import annotations

import copy
from collections import Counter
from collections.abc import Callable, Mapping
from fractions import Fraction
from typing import Any

from scipy.stats import chisquare

import tagparse
from engine import Answer, Game, State, Stream, TurnContext, apply_reply, load_ruleset, start_state
from engine.rules.checks.read import CheckRead, Rolled
from engine.rules.sheet import SheetView
from tests.helpers import fixture_json

KINDS = {
    "sum-2d6": "dice-sum",
    "pool-d10": "dice-pool",
    "highest-blades": "dice-highest",
    "against-d100": "roll-against",
    "symbols-genesys": "symbol-pool",
}
DRAWS = 20_000
P_FLOOR = 1e-4  # fixed seeds make every p-value a constant; this bound only catches a wrong law


def document(name: str) -> dict[str, Any]:
    return copy.deepcopy(fixture_json(f"rulesets/{name}.json"))


def game(name: str, **resolution: Any) -> Game:
    """The fixture ruleset, with resolution keys replaced (``None`` removes one)."""
    doc = document(name)
    for key, value in resolution.items():
        if value is None:
            doc["resolution"].pop(key, None)
        else:
            doc["resolution"][key] = value
    return load_ruleset(doc)


def party(g: Game, name: str) -> State:
    return start_state(g, fixture_json(f"parties/{name}.json"))


def check(g: Game, state: State, text: str, turn: tuple[int, ...] = (0, 0)) -> tuple[State, Answer]:
    new, answers = apply_reply(g, state, tagparse.scan(text).tags, TurnContext(state.seed, turn))
    assert len(answers) == 1
    return new, answers[0]


def request(g: Game, *, sheet: float = 0, rank: float = 0, kind: str = "skill",
            ident: str = "x", attrs: Mapping[str, str] | None = None, **extra: Any) -> CheckRead:
    """A check whose sheet number is ``sheet`` (all in the ability part) and tier ``rank``."""
    return CheckRead(who="T", kind=kind, ident=ident, label="Test",  # type: ignore[arg-type]
                   attrs=dict(attrs or {}), view=SheetView(g, None), ability=None,
                   ability_part=sheet, rank=rank, own_bonus=0, **extra)


def draws(roll: Callable[[Stream], Rolled], read: Callable[[Rolled], Any],
          count: int = DRAWS, name: str = "law") -> Counter[Any]:
    """``count`` engine draws, each from its own fixed-seed stream."""
    return Counter(read(roll(Stream("chi", (index,), name))) for index in range(count))


def assert_law(observed: Counter[Any], exact: Mapping[Any, Fraction], floor: float = P_FLOOR) -> None:
    """Chi-square of the engine's draws against an exact law; rare cells are pooled (< 5)."""
    assert abs(sum(exact.values()) - 1) < Fraction(1, 10**9)
    total = sum(observed.values())
    unexpected = set(observed) - {k for k, p in exact.items() if p > 0}
    assert not unexpected, f"outcomes the law says are impossible: {sorted(map(str, unexpected))[:5]}"
    cells: list[tuple[float, int]] = []
    pooled_e, pooled_o = 0.0, 0
    for key, p in sorted(exact.items(), key=lambda kv: str(kv[0])):
        expected = float(p) * total
        if expected < 5:
            pooled_e += expected
            pooled_o += observed.get(key, 0)
        else:
            cells.append((expected, observed.get(key, 0)))
    if pooled_e > 0:
        cells.append((pooled_e, pooled_o))
    assert len(cells) >= 2
    result = chisquare([o for _, o in cells], [e for e, _ in cells])
    assert result.pvalue > floor, (result, cells)


def convolve(a: Mapping[Any, Fraction], b: Mapping[Any, Fraction],
             op: Callable[[Any, Any], Any] = lambda x, y: x + y) -> dict[Any, Fraction]:
    out: dict[Any, Fraction] = {}
    for x, p in a.items():
        for y, q in b.items():
            key = op(x, y)
            out[key] = out.get(key, Fraction(0)) + p * q
    return out


def uniform(values: Any) -> dict[Any, Fraction]:
    values = list(values)
    law: dict[Any, Fraction] = {}
    for v in values:
        law[v] = law.get(v, Fraction(0)) + Fraction(1, len(values))
    return law
