"""dice-pool: roll a pool of dice and count successes
(docs/rules/checks.md#3-dice-pool-rolling-dice-and-counting-successes)."""

from __future__ import annotations

from ...dice import Stream
from ...rules.checks.read import CheckRead, Critical, Rolled, clamp, ladder_step, pool_dice, whole
from ...ruleset.resolution import FaceRule, PoolResolution, RerollRule

MAX_REROLLS = 100  # CHK-POOL-29


def dc_max(res: PoolResolution) -> int:
    """CHK-TAG-2, OQ-CHK-15: the most successes one roll can count."""
    return max(1, res.pool.max * (2 if res.explode else 1) * (2 if res.double else 1))


def _face(rule: FaceRule | None, entry_value: int | None, tag_value: int | None,
          sides: int) -> tuple[int | None, bool]:
    """CHK-POOL-A10: (the face the rule fires at or None, whether the check moved it); an
    entry's face beats the tag's (CHK-TAL-5/6), and both need the rule's ``min``."""
    if rule is None:
        return None, False
    for value in (entry_value, tag_value):
        if rule.min is not None and value is not None:  # CHK-TAG-10, OQ-CHK-17
            return clamp(value, rule.min, sides), True
    return rule.from_, False


def pick_reroll(candidates: list[tuple[RerollRule, bool]]) -> tuple[RerollRule | None, bool]:
    """CHK-POOL-31: the reroll covering more faces; on a tie ``until`` beats ``once``."""
    best: tuple[RerollRule, bool] | None = None
    for rule, named in candidates:
        key = (rule.up_to, rule.mode == "until")
        if best is None or key > (best[0].up_to, best[0].mode == "until"):
            best = (rule, named)
    return best if best is not None else (None, False)


def resolve(res: PoolResolution, request: CheckRead, stream: Stream) -> Rolled:
    """CHK-POOL-A1..A21."""
    attrs = request.attrs
    sides = res.die.sides
    # CHK-POOL-A4, OQ-CHK-19
    size, b = pool_dice(request, res.situational_dice, res.pool.min, res.pool.max)
    top = dc_max(res)
    step = ladder_step(res.difficulty_ladder, attrs.get("difficulty"))  # CHK-POOL-A6
    dc = whole(attrs.get("dc"))
    if dc is not None:
        dc = clamp(dc, 1, top)
        if step is None:
            same = [s for s in res.difficulty_ladder if s.successes == dc]
            step = same[0] if len(same) == 1 else None  # CHK-POOL-34/35
    target = res.target
    adjustable = target.min < target.max
    threshold_tag = whole(attrs.get("threshold"))
    entry = request.entry
    if entry is not None and entry.threshold is not None:  # CHK-POOL-39, CHK-TAL-4/6
        threshold = clamp(entry.threshold, target.min, target.max)
    elif target.from_ is not None:  # CHK-POOL-36..38, OQ-CHK-20: floor, clamp, tag ignored
        threshold = clamp(int(request.view.value(target.from_) // 1), target.min, target.max)
    elif adjustable and threshold_tag is not None:  # CHK-TAG-3
        threshold = clamp(threshold_tag, target.min, target.max)
    elif step is not None and step.target is not None:
        threshold = step.target
    else:
        threshold = target.default
    needed = dc if dc is not None else step.successes if step is not None else 1  # OQ-CHK-21
    stance = next((s for s in res.stances if request.kind == "skill"
                   and request.ident in s.skills), None)  # CHK-POOL-A9
    explode_at, explode_moved = _face(res.explode, entry.explode if entry else None,
                                      whole(attrs.get("explode")), sides)
    double_at, double_moved = _face(res.double, entry.double if entry else None,
                                    whole(attrs.get("double")), sides)
    if stance is not None:  # CHK-POOL-44, OQ-CHK-12
        explode_at = double_at = None
        explode_moved = double_moved = False
    named = next((r for r in res.reroll if r.id is not None and r.id == attrs.get("reroll")), None)
    candidates = [(named, True)] if named is not None else []
    if request.bought_reroll is not None:
        candidates.append((request.bought_reroll, False))
    if entry is not None and entry.reroll is not None:  # CHK-TAL-2, OQ-CHK-51(c): once
        candidates.append((entry.reroll, False))
    reroll, reroll_named = pick_reroll(candidates)  # CHK-POOL-A11

    record: dict[str, object] = {"dc": needed, "threshold": threshold}
    if b:
        record["bonus"] = b
    if explode_moved:
        record["explode"] = explode_at
    if double_moved:
        record["double"] = double_at
    if dc is None and step is None:
        record["missingDifficulty"] = True
    if size == 0:  # CHK-POOL-6, CHK-POOL-A5
        net = request.bought_successes
        return Rolled(rolls=[], success=False, value=net, margin=net - needed, dc=needed,
                      empty=True, record=record, shown=f"no dice vs {needed}")
    faces = [stream.die(sides) for _ in range(size)]  # CHK-POOL-A12
    rerolled = 0
    if reroll is not None:  # CHK-POOL-A13, OQ-CHK-22
        for index in range(size):
            if reroll.mode == "once":
                if faces[index] <= reroll.up_to and rerolled < MAX_REROLLS:
                    faces[index] = stream.die(sides)
                    rerolled += 1
            else:
                while faces[index] <= reroll.up_to and rerolled < MAX_REROLLS:
                    faces[index] = stream.die(sides)
                    rerolled += 1
    if explode_at is not None:  # CHK-POOL-A14
        budget = res.pool.max
        index = 0
        while index < len(faces):
            if faces[index] >= explode_at and budget > 0:
                faces.append(stream.die(sides))
                budget -= 1
            index += 1
    raw = 0
    exact = sum(1 for f in faces if f == threshold)
    if stance is None:  # CHK-POOL-A15, OQ-CHK-13/23
        for face in faces:
            if face >= threshold:
                raw += 2 if double_at is not None and face >= double_at else 1
    else:
        raw = sum(1 for f in faces if (f < threshold if stance.count == "below" else f > threshold))
        if res.exact is not None and res.exact.counts:
            raw += exact
    net = raw
    if stance is None and res.cancel is not None:  # CHK-POOL-A16, OQ-CHK-24
        net = max(0, raw - sum(1 for f in faces if f <= res.cancel.up_to))
    net += request.bought_successes  # CHK-POOL-A17, CHK-SPEND-5
    botch = complication = False
    if stance is None and res.botch is not None:  # CHK-POOL-A18, OQ-CHK-25
        any_success = any(f >= threshold for f in faces)
        if res.botch.rule == "noSuccesses":
            botch = not any_success and any(f <= res.botch.up_to for f in faces)
        else:
            low = sum(1 for f in faces[:size] if f <= res.botch.up_to)
            if 2 * low >= size:
                botch, complication = not any_success, any_success
    success = not botch and net >= needed  # CHK-POOL-A19
    critical: Critical = "failure" if botch else None
    if success and res.exceptional is not None and net >= res.exceptional.successes:
        critical = "success"
    if res.outcomes is not None and not botch:  # CHK-OUT-18: tiers do without exceptional
        critical = None
    if reroll_named and rerolled and reroll is not None:  # CHK-TAG-18
        record["reroll"] = reroll.id
    if rerolled:
        record["rerolled"] = rerolled
    if complication:
        record["complication"] = True
    notices = []
    if res.exact is not None and exact:  # CHK-POOL-46
        record["exact"] = exact
        notices.append(f"{res.exact.label} ×{exact}" + (f": {res.exact.text}"
                                                        if res.exact.text else ""))
    counted = f"<{threshold}" if stance and stance.count == "below" else (
        f">{threshold}" if stance else f"≥{threshold}")
    shown = (f"{size}d{sides} {counted} → {','.join(map(str, faces))} = {net} "
             f"success{'es' if net != 1 else ''} vs {needed}")
    return Rolled(rolls=faces, success=success, critical=critical, value=net,
                  margin=net - needed, dc=needed, record=record, shown=shown, notices=notices)
