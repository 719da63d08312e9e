"""dice-sum: roll the dice, add the sheet number, reach the difficulty
(docs/rules/checks.md#2-dice-sum-adding-dice)."""

from __future__ import annotations

from ...dice import Stream
from ...rules.checks.read import CheckRead, Critical, Rolled, dc_from
from ...ruleset.resolution import SumResolution

MAX_CHAIN = 20  # CHK-SUM-14: one roll uses at most 20 dice, the first included


def one_roll(res: SumResolution, stream: Stream) -> tuple[int, list[int]]:
    """CHK-SUM-A2: one ROLL — (signed dice total, the faces in the order drawn)."""
    dice = res.dice
    faces = [stream.die(dice.sides) for _ in range(dice.count)]

    def value(face: int) -> int:
        return dice.faces[face - 1] if dice.faces is not None else face

    total = sum(value(face) for face in faces)
    chain = res.open_ended
    if chain is not None and dice.count == 1:
        first = faces[0]
        sign = 1 if first >= chain.high else -1 if first <= chain.low else 0
        last = first if sign > 0 else chain.high  # CHK-SUM-12: a low roll always draws once
        while sign and last >= chain.high and len(faces) < MAX_CHAIN:
            last = stream.die(dice.sides)
            faces.append(last)
            total += sign * value(last)
    return total, faces


def resolve(res: SumResolution, request: CheckRead, stream: Stream) -> Rolled | None:
    """CHK-SUM-A1..A9; None when the check names no difficulty (OQ-CHK-10)."""
    dc, _ = dc_from(request.attrs, res.difficulty_ladder)
    by_total = res.outcomes is not None and res.outcomes.by == "total"
    if dc is None and not by_total:
        return None
    total, faces = one_roll(res, stream)
    rolls = list(faces)
    if request.lean and res.advantage:  # CHK-SUM-A3, OQ-CHK-7, ITM-CHK-5/6
        other, other_faces = one_roll(res, stream)
        rolls += other_faces
        if (other > total) if request.lean > 0 else (other < total):
            total, faces = other, other_faces
    modifier = int(request.sheet) + request.flat  # ITM-CHK-3: with the modifiers' dice
    total += modifier
    first = faces[0]
    naturals = res.naturals
    if not isinstance(naturals, str):  # OQ-CHK-8
        naturals = naturals.saves if request.kind == "save" else naturals.checks
    one = res.dice.count == 1
    natural_max = one and naturals in ("both", "max-only") and first == res.dice.sides
    natural_min = one and naturals in ("both", "min-only") and first == 1
    critical: Critical = "success" if natural_max else "failure" if natural_min else None
    success = natural_max or (not natural_min and dc is not None and total >= dc)
    record: dict[str, object] = {"resolution": "sum", "modifier": modifier}
    if len(rolls) != len(faces):
        record["kept"] = faces
    notices = []
    if first in res.unmodified:  # CHK-SUM-16/17, OQ-CHK-9
        record["unmodified"] = str(first)
        notices.append(f"Apply what your rules say about an unmodified {first}.")
    shown_faces = "+".join(str(f) for f in faces)
    plus = "+" if modifier >= 0 else "-"
    shown = f"{res.dice.count}d{res.dice.sides}{plus}{abs(modifier)} → {shown_faces}"
    shown += f"{plus}{abs(modifier)} = {total}"
    if dc is not None:
        shown += f" vs {dc}"
    single = res.dice.count == 1  # CHK-SUM-15: the shift reads the first die
    return Rolled(
        rolls=rolls, success=success, critical=critical, value=total,
        margin=total - dc if dc is not None else total, dc=dc,
        shift=(1 if first == res.dice.sides else -1 if first == 1 else 0) if single else 0,
        record=record, shown=shown, notices=notices)
