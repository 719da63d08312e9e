"""roll-against: roll at most (or at least) the sheet number
(docs/rules/checks.md#5-roll-against-rolling-at-most-or-at-least-the-sheet-number)."""

from __future__ import annotations

import math

from ...dice import Stream
from ...rules.checks.read import CheckRead, Critical, Rolled, clamp, ladder_step, whole
from ...ruleset.resolution import AgainstResolution, CriticalRule


def d100(units: int, tens: int) -> int:
    """OQ-CHK-36: a tens die and a units die (each 0..9) read 10·t + u, with 00 and 0 as 100."""
    value = 10 * tens + units
    return value if value else 100


def matches(rule: CriticalRule, roll: int, threshold: int, at_most: bool) -> bool:
    """CHK-RA-12..14, OQ-CHK-34: face bounds or pastTarget, limited by whenTarget."""
    when = rule.when_target
    if when is not None:
        if when.at_least is not None and threshold < when.at_least:
            return False
        if when.below is not None and threshold >= when.below:
            return False
    if rule.past_target is not None:
        missed = roll - threshold if at_most else threshold - roll
        return missed >= rule.past_target
    low = rule.from_ if rule.from_ is not None else -math.inf
    high = rule.to if rule.to is not None else math.inf
    return low <= roll <= high


def resolve(res: AgainstResolution, request: CheckRead, stream: Stream) -> Rolled:
    """CHK-RA-A1..A10."""
    attrs = request.attrs
    base = int(request.sheet) + request.flat  # CHK-RA-A1 (+ ITM-CHK-3 flat modifiers)
    step = ladder_step(res.difficulty_ladder, attrs.get("difficulty"))  # CHK-RA-A2
    threshold = base // step.divide if step is not None and step.divide else base  # OQ-CHK-32
    shift = whole(attrs.get("dc"))
    shift = clamp(shift, -100, 100) if shift is not None else (step.dc if step else 0)
    threshold += shift  # CHK-RA-A4, OQ-CHK-33
    at_most = res.against == "at-most"
    bonus = whole(attrs.get("bonus"))
    tens = 0 if res.tens is None or bonus is None else clamp(bonus, -res.tens.max, res.tens.max)
    if tens:  # CHK-RA-17, OQ-CHK-36: one shared units die, then 1 + N tens dice
        units = stream.below(10)
        tens_dice = [stream.below(10) for _ in range(1 + abs(tens))]
        candidates = [d100(units, t) for t in tens_dice]
        best = min if (tens > 0) == at_most else max
        roll = best(candidates)
        rolls = [units, *tens_dice]
    else:
        rolls = [stream.die(res.dice.sides) for _ in range(res.dice.count)]
        roll = sum(rolls)
    base_success = roll <= threshold if at_most else roll >= threshold  # CHK-RA-A6
    crit_success = any(matches(r, roll, threshold, at_most) for r in res.critical_success)
    crit_failure = any(matches(r, roll, threshold, at_most) for r in res.critical_failure)
    # OQ-CHK-35: a critical success wins over a critical failure matching the same roll.
    critical: Critical = "success" if crit_success else "failure" if crit_failure else None
    success = crit_success or (not crit_failure and base_success)
    margin = threshold - roll if at_most else roll - threshold  # OQ-CHK-37
    single = res.dice.count == 1 and not tens
    face_shift = 0
    if single:  # OQ-CHK-45: "up" is the succeeding direction
        best_face, worst_face = (1, res.dice.sides) if at_most else (res.dice.sides, 1)
        face_shift = 1 if roll == best_face else -1 if roll == worst_face else 0
    record: dict[str, object] = {"against": res.against}
    if tens:
        record["tens"] = tens
    word = "≤" if at_most else "≥"
    dice = f"{res.dice.count}d{res.dice.sides}" if not tens else "d100"
    shown = f"{dice} → {roll} {word} {threshold}"
    return Rolled(rolls=rolls, success=success, critical=critical, value=roll, margin=margin,
                  dc=threshold, shift=face_shift, fraction=(roll, threshold), record=record,
                  shown=shown)
