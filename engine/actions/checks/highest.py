"""dice-highest: roll a handful of dice and read the highest
(docs/rules/checks.md#4-dice-highest-rolling-dice-and-keeping-the-highest)."""

from __future__ import annotations

from ...dice import Stream
from ...rules.checks.read import CheckRead, Rolled, clamp, dc_from, pool_dice, whole
from ...ruleset.resolution import HighestResolution


def resolve(res: HighestResolution, request: CheckRead, stream: Stream) -> Rolled | None:
    """CHK-HIGH-A1..A12; None when the check names no difficulty and no tiers read a total."""
    attrs = request.attrs
    sides = res.die.sides
    # CHK-HIGH-A1, OQ-CHK-28
    light, b = pool_dice(request, res.situational_dice, res.pool.min, res.pool.max)
    keep = res.keep
    dark_tag = whole(attrs.get("dark"))
    dark = clamp(dark_tag, 0, res.dark.max) if res.dark and dark_tag is not None else 0
    light_only = res.dark is not None and res.dark.outcome == "light"
    dc, _ = dc_from(attrs, res.difficulty_ladder)
    if dc is not None and attrs.get("dc") is not None:
        dc = clamp(dc, 1, keep * sides)  # CHK-HIGH-18
    if dc is None and res.outcomes is None:
        return None
    empty = light == 0 if light_only else light + dark == 0  # OQ-CHK-29
    zero = failed = False
    light_faces = [stream.die(sides) for _ in range(light)]  # CHK-HIGH-A4
    read_light = list(light_faces)
    if empty:
        zero = True
        if res.zero_dice == "lowest-of-two":
            light_faces = [stream.die(sides), stream.die(sides)]
            read_light = [min(light_faces)]
        else:
            failed = True
    dark_faces = [stream.die(sides) for _ in range(dark)]  # CHK-HIGH-A5/11
    read = read_light if light_only else read_light + dark_faces  # CHK-HIGH-A6
    kept = sorted(read, reverse=True)[:keep]  # CHK-HIGH-A7
    total = sum(kept)
    critical_face = (res.critical.face or sides) if res.critical else sides
    critical = (res.critical is not None and not zero and not failed
                and sum(1 for f in read if f >= critical_face) >= res.critical.count)
    success = not failed and (critical or (dc is not None and total >= dc))  # CHK-HIGH-A9
    dark_highest = dark >= 1 and (not light_faces or max(dark_faces) > max(light_faces))
    record: dict[str, object] = {"resolution": "sum", "modifier": 0, "highest": "1",
                                 "kept": kept}
    if b:
        record["bonus"] = b
    if zero:
        record["zeroDice"] = True
    if dark:
        record["dark"] = dark
    if dark_highest:  # CHK-HIGH-12/13
        record["darkHighest"] = True
    if light_only:
        record["darkOutcome"] = "light"
    notices = []
    if dark_highest and res.dark is not None:
        notices.append(f"A {res.dark.label.lower()} die rolled highest"
                       + (f": {res.dark.text}" if res.dark.text else "."))
    rolls = light_faces + dark_faces  # CHK-HIGH-22: dark dice last
    count = len(light_faces)
    shown = f"{count}d{sides}" + (f"+{dark} dark" if dark else "")
    shown += f" → {','.join(map(str, rolls))} keep {','.join(map(str, kept)) or 'nothing'}"
    shown += f" = {total}" + (f" vs {dc}" if dc is not None else "")
    return Rolled(rolls=rolls, success=success,
                  critical="success" if critical else None, value=total,
                  margin=total - dc if dc is not None else total, dc=dc, empty=failed,
                  record=record, shown=shown, notices=notices)
