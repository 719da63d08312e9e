"""The attack of the resolution kinds that are not a dice sum — roll-against fights
(engine/rules/fight/against.py) and symbol-pool fights (engine/rules/fight/symbols.py,
CHK-SYM-35). :func:`attack_roll` is what ``roll_attack`` (engine/actions/fight/formula.py)
asks first; None leaves the attack to formula combat. Everything else of a fight — the
encounter, start, join and end, initiative, conditions, foes from templates, the heroes'
health, damage — is formula combat's own."""

from __future__ import annotations

from typing import Any

from ...rules import reasons
from ...rules.checks.read import CheckRead, Rolled
from ...rules.context import TurnContext
from ...rules.fight.against import against_result, defence_shift, edge_bonus
from ...rules.fight.symbols import extra_damage, opposing, setback_dice, symbol_result
from ...rules.game import Game
from ...rules.sheet import SheetView
from ...ruleset.resolution import AgainstResolution, SymbolResolution
from ...ruleset.ruleset import AGAINST, SYMBOLS
from ..checks.pipeline import effective_resolution, resolve_request, sheet_parts
from ..declare import Refusal

Kind = AgainstResolution | SymbolResolution


def initiative(game: Game, total: object, threshold: object) -> int:
    """CMB-TURN-2/15: the number an initiative check puts a combatant at in the order — its
    total, except in a roll-against fight, where a lower roll is the better one: there it is
    the margin (OQ-CHK-37: the number less the roll at-most, the roll less the number
    at-least), so the best roll goes first."""
    rolled = int(total) if isinstance(total, int | float) else 0
    res = game.ruleset.resolution
    if game.fight.hit != AGAINST or not isinstance(res, AgainstResolution) \
            or not isinstance(threshold, int):
        return rolled
    return threshold - rolled if res.against == "at-most" else rolled - threshold


def no_attack(game: Game) -> Refusal | None:
    """Why a symbol-pool ruleset that does not fight refuses a fight's tags (CHK-SYM-35: it
    gives no ``combat.attack``, the check its attacks roll), or None for other kinds."""
    if game.fight.hit != SYMBOLS or game.fight.armed:
        return None
    return Refusal(reasons.UNSUPPORTED, 'This symbol-pool ruleset gives no "combat.attack" '
                   "(the check its attacks roll), so it does not fight; nothing was done.")


def attack_roll(game: Game, view: SheetView, name: str, modifier: int, defence: int,
                strikes: int, ctx: TurnContext, lean: int = 0) -> tuple[Rolled, str, str] | None:
    """The attack of ``name``'s strike number ``strikes`` this round in a roll-against or a
    symbol-pool fight, as ``roll_attack`` returns it (the roll, hit/miss/critical, the dice
    key); None in every other fight. ``modifier``: a hero's weapon toHit, a foe's template
    attack; ``view`` has no character for a foe. The dice key is formula combat's
    (docs/design.md#combat-dice), so a swipe rolls the same."""
    built = attack_read(game, view, name, modifier, defence, lean)
    if built is None:
        return None
    res, read = built
    key = f"attack/{name.casefold()}/{strikes}"
    rolled = resolve_request(game, res, read, ctx.for_tag(0), key)
    assert rolled is not None  # dc= is always given
    return rolled, read_result(res, rolled), key


def attack_read(game: Game, view: SheetView, name: str, modifier: int, defence: int,
                lean: int = 0) -> tuple[Kind, CheckRead] | None:
    """The check an attack of these kinds rolls (the resolution after overrides, and the
    request), before any dice; None where formula combat attacks. roll-against (CHK-RA-A1..A4):
    the attacker's number, the defence as a ``dc=`` shift taken off it, an edge as a bonus or
    penalty tens die. symbol-pool (CHK-SYM-A1..A7): the attacker's pool, ``attack.difficulty``
    opposing dice, the defence as ``setback=`` dice, a hero's toHit and an edge in the signed
    bonus (boost or setback dice)."""
    kind = game.fight.hit
    combat = game.ruleset.combat
    res = game.ruleset.resolution
    if kind is None or combat is None or combat.attack is None or res is None:
        return None
    rule = combat.attack
    effective, _ = effective_resolution(res, "skill", rule.check, view)
    if not isinstance(effective, AgainstResolution | SymbolResolution):
        return None  # an override gave another kind: formula combat's attack
    ability, part, rank, own = _attacker(game, effective, view, name, rule.check, modifier)
    attrs: dict[str, str]
    flat = 0
    if isinstance(effective, AgainstResolution):
        attrs = {"dc": str(defence_shift(defence))}
        bonus = edge_bonus(effective, lean)
        if bonus:
            attrs["bonus"] = f"{bonus:+d}"
    else:
        dice = opposing(rule.difficulty, effective.difficulty.max)
        attrs = {"dc": str(dice), "setback": str(setback_dice(defence))}
        flat = lean + (modifier if view.character is not None else 0)
    return effective, CheckRead(
        who=name, kind="skill", ident=rule.check, label="Attack", attrs=attrs, view=view,
        ability=ability, ability_part=part, rank=rank, own_bonus=own, flat=flat)


def read_result(res: Kind, rolled: Rolled) -> str:
    """hit, miss or critical: a roll-against check's success and criticals (CHK-RA-A8), a
    symbol pool's net successes and triumph mark (CHK-SYM-A11/A12)."""
    if isinstance(res, AgainstResolution):
        return against_result(rolled.success, rolled.critical)
    return symbol_result(int(rolled.value), res.success.needed, _marks(rolled)[0])


def _attacker(game: Game, res: Any, view: SheetView, name: str, skill: str,
              modifier: int) -> tuple[str | None, float, float, float]:
    """(ability, ability part, rank, own bonus) of the attacker's check. A hero's are its
    attack skill's (CHK-GEN-A3/A4), with a roll-against weapon's toHit added to the number
    rolled against (a symbol pool takes the toHit as boost dice instead); a foe rolls against
    its template ``attack`` (roll-against), or builds its pool from its template ability
    modifier and its ``attack`` as the rank (symbol-pool)."""
    character = view.character
    if character is not None:
        row = next(s for s in game.ruleset.sheet.skills if s.id == skill)
        ability, part, rank, own, _ = sheet_parts(game, res, character, view, "skill", skill,
                                                  row.ability, {})
        if isinstance(res, AgainstResolution):
            part += modifier
        return ability, part, rank, own
    if isinstance(res, AgainstResolution):
        return None, float(modifier), 0.0, 0.0
    state = view.state
    encounter = state.encounter if state is not None else None
    found = encounter.find(name) if encounter is not None else None
    ability_part = 0
    if encounter is not None and found is not None:
        ability_part = encounter.combatants[found].modifier or 0
    return None, float(ability_part), float(modifier), 0.0


def _marks(rolled: Rolled) -> tuple[bool, bool]:
    """CHK-SYM-30/A12: the critical-success and critical-failure marks of a symbol roll."""
    details = rolled.record.get("symbolDetails")
    if not isinstance(details, dict):
        return False, False
    return bool(details.get("criticalSuccess")), bool(details.get("criticalFailure"))


def hit_damage(game: Game, rolled: Rolled, result: str) -> int:
    """The damage a symbol-pool hit adds to its weapon's: its net successes; 0 otherwise."""
    if game.fight.hit != SYMBOLS:
        return 0
    return extra_damage(int(rolled.value), result)


def recorded(game: Game, rolled: Rolled) -> dict[str, Any]:
    """What an attack of these kinds adds to the attack's record (formula combat: nothing).
    roll-against: ``threshold`` (the number read against: the attacker's number less the
    defence, CHK-RA-9), ``against``, ``tens`` (the bonus or penalty dice of an edge).
    symbol-pool: ``symbols`` (the net symbols, OQ-CHK-43), ``thrown`` (each die's id),
    ``successes`` (net), ``difficulty`` (the opposing dice), ``setback`` (the defence's setback
    dice rolled), ``criticalSuccess`` / ``criticalFailure`` (the marks, CHK-SYM-30/31)."""
    kind = game.fight.hit
    record = rolled.record
    if kind == AGAINST:
        found: dict[str, Any] = {"threshold": rolled.dc, "against": record.get("against")}
        if "tens" in record:
            found["tens"] = record["tens"]
        return found
    if kind == SYMBOLS:
        triumph, despair = _marks(rolled)
        thrown = list(record.get("thrown", []))
        res = game.ruleset.resolution
        setback = res.setback.die if isinstance(res, SymbolResolution) and res.setback else None
        return {"symbols": record.get("symbols", ""), "thrown": thrown,
                "successes": int(rolled.value), "difficulty": rolled.dc,
                "setback": sum(1 for d in thrown if d == setback) if setback else 0,
                "criticalSuccess": triumph, "criticalFailure": despair}
    return {}


RECORD = {
    "threshold": "roll-against: the number the attack's roll was read against (the attacker's "
                 "number less the target's defence, CHK-RA-9)",
    "against": "roll-against: at-most or at-least (CHK-RA-10)",
    "tens": "roll-against: the bonus (+) or penalty (-) tens dice an edge rolled (CHK-RA-17)",
    "symbols": "symbol-pool: the net symbols, as 2s 1a 1t (OQ-CHK-43)",
    "thrown": "symbol-pool: which die each roll was (CHK-SYM-40)",
    "successes": "symbol-pool: the net successes (each adds 1 to a hit's damage)",
    "difficulty": "symbol-pool: the opposing difficulty dice (combat.attack.difficulty)",
    "setback": "symbol-pool: the setback dice rolled (the target's defence)",
    "criticalSuccess": "symbol-pool: a triumph showed (a hit with it is critical, CHK-SYM-30)",
    "criticalFailure": "symbol-pool: a despair showed (recorded only, CHK-SYM-31)",
}
"""What :func:`recorded` adds to an attack's record (the attack's record keys, docs/tags.md)."""
