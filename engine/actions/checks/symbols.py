"""symbol-pool: narrative dice whose faces carry symbols that count and cancel
(docs/rules/checks.md#6-symbol-pool-rolling-narrative-dice-and-reading-symbols)."""

from __future__ import annotations

import math
from collections.abc import Mapping

from ...dice import Stream
from ...rules.checks.read import CheckRead, Rolled, clamp, ladder_step, whole
from ...ruleset.resolution import SymbolResolution


def tally(res: SymbolResolution, faces: list[tuple[str, int]]) -> tuple[dict[str, int],
                                                                        dict[str, int]]:
    """CHK-SYM-A8..A10: (raw symbols, net symbols after counts and cancels)."""
    dice = {d.id: d for d in res.dice}
    raw = {s.id: 0 for s in res.symbols}
    for die, face in faces:
        for mark in dice[die].faces[face - 1]:
            raw[mark] += 1
    net = dict(raw)
    for symbol in res.symbols:  # CHK-SYM-3/A9: counts add before cancelling
        if symbol.counts is not None:
            net[symbol.counts] += raw[symbol.id]
    done: set[str] = set()
    for symbol in res.symbols:  # CHK-SYM-5/A10: disjoint pairs cancel one for one
        partner = symbol.cancels
        if partner is None or symbol.id in done:
            continue
        done |= {symbol.id, partner}
        least = min(net[symbol.id], net[partner])
        net[symbol.id] -= least
        net[partner] -= least
    return raw, net


def symbols_text(res: SymbolResolution, net: Mapping[str, int]) -> str:
    """OQ-CHK-43: ``<count><id>`` per symbol left, in declaration order."""
    return " ".join(f"{net[s.id]}{s.id}" for s in res.symbols if net[s.id] > 0)


def resolve(res: SymbolResolution, request: CheckRead, stream: Stream,
            separate_setback: bool = True) -> Rolled:
    """CHK-SYM-A1..A14; ``separate_setback``: whether ``setback=`` is read (CHK-SYM-22)."""
    attrs = request.attrs
    ability = max(0, int(request.ability_part))  # CHK-SYM-A1
    rank = max(0, int(request.rank)) if request.kind != "ability" else 0  # CHK-SYM-14
    pool = res.pool
    if pool.build == "sum":  # CHK-SYM-A2
        total, up = ability + rank, 0
    else:
        total = max(ability, rank)
        up = min(ability, rank) if pool.upgrade is not None else 0
    total = min(total, pool.max)
    up = min(up, total)
    for _ in range(request.bought_dice):  # CHK-SYM-A3
        if total < pool.max:
            total += 1
    own = whole(attrs.get("upgradeown"))
    applied = 0
    if res.allow_own_upgrade and own is not None and own > 0:  # CHK-SYM-A4, CHK-SYM-25
        for _ in range(min(own, 2 * pool.max)):
            if up < total:
                up += 1
            elif total < pool.max:
                total += 1
                up += 1
            else:
                break
            applied += 1
    step = ladder_step(res.difficulty_ladder, attrs.get("difficulty"))
    dc = whole(attrs.get("dc"))
    opposing = clamp(dc, 0, res.difficulty.max) if dc is not None else (
        clamp(step.dc, 0, res.difficulty.max) if step is not None else 0)  # CHK-SYM-A5
    upgrade_tag = whole(attrs.get("upgrade"))
    upgraded = (clamp(upgrade_tag, 0, opposing)
                if res.difficulty.upgrade is not None and upgrade_tag is not None else 0)
    bonus = whole(attrs.get("bonus")) or 0
    # CHK-SYM-16/A6, CHK-SYM-21: the skill's own sheet bonus, modifiers and bonus= add up first
    signed = math.floor(request.own_bonus) + request.flat + bonus
    boost = min(max(signed, 0), res.boost.max) if res.boost else 0
    separate = max(0, whole(attrs.get("setback")) or 0) if separate_setback else 0  # CHK-SYM-22/28
    setback = kept_separate = 0
    if res.setback is not None:  # OQ-CHK-41: the bonus's setback dice fill the limit first
        from_bonus = min(max(-signed, 0), res.setback.max)
        kept_separate = min(separate, res.setback.max - from_bonus)
        setback = from_bonus + kept_separate
    plan: list[tuple[str | None, int]] = [  # CHK-SYM-A7: the draw order
        (pool.die, total - up), (pool.upgrade, up), (res.boost.die if res.boost else None, boost),
        (res.difficulty.die, opposing - upgraded), (res.difficulty.upgrade, upgraded),
        (res.setback.die if res.setback else None, setback)]
    dice = {d.id: d for d in res.dice}
    thrown: list[str] = []
    faces: list[tuple[str, int]] = []
    for die, count in plan:
        for _ in range(count if die is not None else 0):
            assert die is not None
            face = stream.die(len(dice[die].faces))
            thrown.append(die)
            faces.append((die, face))
    raw, net = tally(res, faces)
    successes = net[res.success.symbol]
    success = successes >= res.success.needed  # CHK-SYM-A11
    marks = {"criticalSuccess": bool(res.critical_success and raw[res.critical_success]),
             "criticalFailure": bool(res.critical_failure and raw[res.critical_failure])}
    labels = {s.id: s.label for s in res.symbols}
    record: dict[str, object] = {
        "resolution": "sum", "dc": opposing, "symbols": symbols_text(res, net), "thrown": thrown,
        "symbolDetails": {
            "dice": [{"die": dice[d].label, "face": f, "symbols": list(dice[d].faces[f - 1])}
                     for d, f in faces],
            "labels": labels, **marks},
    }
    if kept_separate:
        record["setback"] = kept_separate
    if applied:
        record["upgradeOwn"] = applied
    if upgraded:
        record["upgrade"] = upgraded
    summary = ", ".join(f"{net[s.id]} {s.label.lower()}" for s in res.symbols if net[s.id] > 0)
    shown = f"{len(faces)} dice vs {opposing} → {summary or 'nothing'}"
    notices = [f"{s.label}: {s.text}" for s in res.symbols if s.text and net[s.id] > 0]
    return Rolled(rolls=[f for _, f in faces], success=success, value=successes,
                  margin=successes - res.success.needed + 1, dc=opposing,
                  tiers_read_criticals=False, record=record, shown=shown, notices=notices)


MAX_NAMED_DICE = 40  # bounds a roll text: a model may write any count


def roll_by_name(res: SymbolResolution, text: str,
                 stream: Stream) -> tuple[list[tuple[str, int]], dict[str, int],
                                          dict[str, int]] | None:
    """CHK-SYM-36..39, OQ-CHK-42: roll ``2 ability 1 proficiency vs 2 difficulty`` — groups of
    ``<count> <die id or label>`` (any case), ``vs`` only separating the sides — with no sheet,
    upgrades or ladder; all dice are counted and cancelled together. Returns (die and face
    drawn, raw symbols, net symbols), or None when the text names no die of this ruleset or
    asks for more than ``MAX_NAMED_DICE`` dice."""
    names: dict[str, str] = {}
    for die in res.dice:
        names.setdefault(die.label.casefold(), die.id)
        names.setdefault(die.id.casefold(), die.id)
    words = [w for w in text.replace(",", " ").split() if w.casefold() != "vs"]
    plan: list[tuple[str, int]] = []
    index = 0
    while index < len(words):
        count = whole(words[index])
        if count is None or count < 0:
            return None
        index += 1
        # OQ-CHK-42: a label may have several words; take the longest that names a die.
        for end in range(len(words), index, -1):
            die_id = names.get(" ".join(words[index:end]).casefold())
            if die_id is not None:
                plan.append((die_id, count))
                index = end
                break
        else:
            return None
    if not plan or sum(count for _, count in plan) > MAX_NAMED_DICE:
        return None
    dice = {d.id: d for d in res.dice}
    faces = [(die, stream.die(len(dice[die].faces))) for die, count in plan for _ in range(count)]
    raw, net = tally(res, faces)
    return faces, raw, net
