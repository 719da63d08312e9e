"""One place that knows each combat kind's hit rule, for what is not a weapon strike —
an attack roll of a sheet ability or of an item used in a fight (CMB-ABIL-2, ITM-USE-7/8) and
a hit judged again after a reaction raised the defence (CMB-REACT-5, the Shield example).

The hit rules (:attr:`engine.rules.game.Game.fight`, ``hit``):

- ``sum``: the total against the defence (CMB-ATK-A4, :func:`engine.rules.fight.hit_result`);
- ``pool``: the successes against the defence, at least 1 (ITM-WPN-11/13,
  :func:`engine.rules.fight_pool.pool_result`); the per-die target is the use's ``toHit.target``
  (ITM-USE-7), else the pool's default;
- ``roll-against``: the roll against the attacker's number less the defence (CHK-RA-A4,
  :mod:`engine.rules.fight_against`); a raised defence lowers that number by as much;
- ``symbol-pool``: net successes with a setback die per point of defence (CHK-SYM-35,
  :mod:`engine.rules.fight_symbols`); a raised defence adds its setback dice to the same roll.

:func:`kind_attack` rolls the attack, :func:`rejudge` reads one again; both dispatch through
:data:`REJUDGE` only, so a new kind is one function more."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

from ...dice import Stream
from ...rules.checks.read import CheckRead, Critical, Rolled
from ...rules.context import TurnContext
from ...rules.fight.against import against_result, defence_shift
from ...rules.fight.formula import hit_result
from ...rules.fight.pool import per_die_target, pool_result
from ...rules.fight.symbols import setback_dice, symbol_result
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...ruleset.resolution import AgainstResolution, PoolResolution, SymbolResolution
from ...ruleset.ruleset import AGAINST, POOL, SUM, SYMBOLS
from ..checks.against import matches
from ..checks.pipeline import effective_resolution, resolve_request
from ..checks.symbols import symbols_text, tally
from .check_kinds import attack_read, read_result


def kind_attack(game: Game, view: SheetView, name: str, modifier: int, defence: int,
                ctx: TurnContext, key: str, lean: int = 0,
                target: int | None = None) -> tuple[Rolled, str]:
    """The attack roll of an ability or an item use (CMB-ABIL-2, ITM-USE-7/8) by the fight's
    own kind, keyed ``key`` (a swipe rolls the same): ``modifier`` is what its ``toHit`` adds
    (a pool: dice; roll-against: the number; symbol-pool: boost dice), ``target`` a pool's
    per-die target from the use's ``toHit``. Returns the roll and hit/miss/critical."""
    kind = game.fight.hit
    rule = game.ruleset.combat.attack if game.ruleset.combat is not None else None
    res = game.ruleset.resolution
    assert rule is not None and res is not None
    if kind in (AGAINST, SYMBOLS):
        built = attack_read(game, view, name, modifier, defence, lean)
        if built is not None:
            own, read = built
            rolled = resolve_request(game, own, read, ctx.for_tag(0), key)
            assert rolled is not None  # dc= is always given
            return rolled, read_result(own, rolled)
    effective, _ = effective_resolution(res, "skill", rule.check, view)
    attrs = {"dc": str(defence)}
    if kind == POOL and isinstance(effective, PoolResolution):
        attrs = {"dc": str(max(defence, 1)),
                 "threshold": str(per_die_target(effective, target))}
    read = CheckRead(who=name, kind="skill", ident=rule.check, label="Attack", attrs=attrs,
                     view=view, ability=None, ability_part=modifier, rank=0, own_bonus=0,
                     lean=lean)
    rolled = resolve_request(game, effective, read, ctx.for_tag(0), key)
    assert rolled is not None  # a difficulty is always given
    if kind == POOL:
        return rolled, pool_result(int(rolled.value), rolled.critical, defence)
    return rolled, hit_result(int(rolled.value), rolled.critical, defence)


@dataclass(frozen=True, slots=True)
class Judged:
    """A hit read again against a raised defence: the roll as it now reads (a symbol roll
    with its added setback dice), the result, what the record gains and the words."""

    rolled: Rolled
    result: str
    record: dict[str, Any] = field(default_factory=dict)
    text: str = ""


Rejudge = Callable[[Game, Rolled, int, int, Stream], Judged]


def _sum(game: Game, rolled: Rolled, defence: int, raised: int, stream: Stream) -> Judged:
    """CMB-ATK-A4: the same total against the raised defence."""
    return Judged(rolled, hit_result(int(rolled.value), rolled.critical, raised))


def _pool(game: Game, rolled: Rolled, defence: int, raised: int, stream: Stream) -> Judged:
    """ITM-WPN-13 read for pools: the same successes against the raised defence."""
    return Judged(rolled, pool_result(int(rolled.value), rolled.critical, raised))


def _against(game: Game, rolled: Rolled, defence: int, raised: int, stream: Stream) -> Judged:
    """CHK-RA-A4/A6/A8: the same roll against the attacker's number less the raised defence
    (the number the roll was read against lowered by what the reaction added); the criticals
    read again, as those with ``pastTarget`` or ``whenTarget`` move with the number."""
    res = game.ruleset.resolution
    if not isinstance(res, AgainstResolution) or rolled.dc is None:
        return _sum(game, rolled, defence, raised, stream)
    threshold = rolled.dc - defence_shift(defence) + defence_shift(raised)
    roll = int(rolled.value)
    at_most = res.against == "at-most"
    won = any(matches(r, roll, threshold, at_most) for r in res.critical_success)
    lost = any(matches(r, roll, threshold, at_most) for r in res.critical_failure)
    critical: Critical = "success" if won else "failure" if lost else None
    success = won or (not lost and (roll <= threshold if at_most else roll >= threshold))
    margin = threshold - roll if at_most else roll - threshold
    again = replace(rolled, success=success, critical=critical, dc=threshold, margin=margin,
                    fraction=(roll, threshold))
    return Judged(again, against_result(success, critical), {"threshold": threshold},
                  f", the roll now against {threshold}")


def _symbols(game: Game, rolled: Rolled, defence: int, raised: int, stream: Stream) -> Judged:
    """CHK-SYM-20/23/A10: each point the reaction added is one more setback die thrown into
    the same roll (held to ``setback.max`` with those it had), then the symbols cancel
    again; the net successes and the triumph mark decide (CHK-SYM-29/30)."""
    res = game.ruleset.resolution
    record = rolled.record
    details = record.get("symbolDetails")
    thrown = list(record.get("thrown", []))
    if not isinstance(res, SymbolResolution) or res.setback is None \
            or not isinstance(details, dict) or len(thrown) != len(rolled.rolls):
        return Judged(rolled, read_result(res, rolled) if isinstance(res, SymbolResolution)
                      else "miss")
    die = res.setback.die
    had = sum(1 for d in thrown if d == die)
    more = min(max(setback_dice(raised) - setback_dice(defence), 0), max(res.setback.max - had, 0))
    sides = len(next(d for d in res.dice if d.id == die).faces)
    faces = list(zip(thrown, rolled.rolls, strict=True))
    added = [stream.die(sides) for _ in range(more)]
    faces += [(die, f) for f in added]
    raw, net = tally(res, faces)
    successes = net[res.success.symbol]
    triumph = bool(res.critical_success and raw[res.critical_success])
    despair = bool(res.critical_failure and raw[res.critical_failure])
    labels = {d.id: d for d in res.dice}
    shown = [{"die": labels[d].label, "face": f, "symbols": list(labels[d].faces[f - 1])}
             for d, f in faces]
    again = replace(rolled, rolls=[f for _, f in faces], value=successes,
                    success=successes >= res.success.needed,
                    margin=successes - res.success.needed + 1,
                    record={**record, "thrown": [d for d, _ in faces],
                            "symbols": symbols_text(res, net),
                            "symbolDetails": {**details, "dice": shown,
                                              "criticalSuccess": triumph,
                                              "criticalFailure": despair}})
    words = (f", {more} more setback {'die' if more == 1 else 'dice'} "
             f"({','.join(map(str, added))}): {successes} net" if more else "")
    return Judged(again, symbol_result(successes, res.success.needed, triumph),
                  {"setbackAdded": added} if more else {}, words)


REJUDGE: dict[str, Rejudge] = {SUM: _sum, POOL: _pool, AGAINST: _against, SYMBOLS: _symbols}
"""Each kind's reading of a hit against a raised defence (CMB-REACT-5)."""


def rejudge(game: Game, rolled: Rolled, result: str, defence: int, raised: int,
            stream: Stream) -> Judged:
    """CMB-REACT-5: a hit of ``rolled`` (read ``result`` against ``defence``) read again by the
    fight's own rule against ``raised``. A critical that is still a hit stays critical (a
    condition's automatic critical, CMB-COND-2, holds); ``stream`` gives a symbol roll's added
    setback dice."""
    judged = REJUDGE[game.fight.hit](game, rolled, defence, raised, stream)
    if judged.result == "hit" and result == "critical":
        return replace(judged, result="critical")
    return judged
