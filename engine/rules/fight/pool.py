"""Pool fights: formula combat in a ``dice-pool`` ruleset counts successes instead of adding dice to
a number (docs/rules/items.md#1-glossary "sum fight, pool fight"; ITM-WPN-11/13, ITM-MODE-4/5,
ITM-FLOOR-2/3, ITM-ARM-3, ITM-HARD-1..4 of docs/rules/items.md#123-hardness;
docs/rules/combat.md#a2-the-three-formulas-attack-check-damage-defence read for pools). Pure
functions: how many dice a strike rolls, the per-die target, the exact distribution of its
successes, whether it hits, and what a hit deals. The ``[attack:]`` action
(engine/actions/fight/pool.py) rolls with them.

Readings where the spec points at the missing combat page (docs/rulesets.md "Pool fights"):

- a strike rolls its pool through the attack check, so the pool's own rules (explode, double,
  cancel, botch, exceptional) count its successes; it hits iff its successes reach the
  defence, at least 1 (OQ-CMB-2 ≥, the pool checks' ``dc`` rule, CHK-POOL-A19); a critical is
  the pool's ``exceptional`` and a botch misses;
- a hit deals all its successes (ITM-WPN-13 "a hit deals its successes", not only those beyond
  the defence) plus the successes of as many more dice of the pool's die as the damage dice
  expression has dice (OQ-26), counted at the strike's per-die target; a critical doubles
  those extra dice (OQ-CMB-3 read for pools); then the target's damage reduction, the floor
  (not in the spending style, ITM-FLOOR-3), then typed defences;
- ``combat.pool.style`` ``spending``: hardness applies (ITM-HARD-1..3); ``taking``: a hit takes
  initiative (its successes move from the target's number to the attacker's) instead of
  dealing damage (glossary "spending, taking style", ITM-ONHIT-4);
- the spending style's number, with ``combat.pool.gain``: each combatant's initiative is a
  number — it joins at its initiative roll (its *base*) and rises by ``gain`` at the start of
  every round after the first; a spending strike that lands *throws* its attacker's number:
  the hit deals that number (less the target's damage reduction, never raised by a floor,
  ITM-FLOOR-3; a critical deals it too, there are no dice to double) and the number falls
  back to the base — also when it does nothing against hardness (ITM-HARD-2). A miss throws
  nothing and keeps the number."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from ...ruleset.formula import Dice, Formula, Number, dice_terms
from ...ruleset.resolution import PoolResolution
from ..state import Combatant


def clamp(value: int, low: int, high: int) -> int:
    return max(low, min(value, high))


def variable_target(res: PoolResolution) -> bool:
    """CHK-POOL-11: the GM (and a weapon or a mode, ITM-WPN-11, ITM-MODE-5) may move the
    per-die target only where ``target.min`` < ``target.max``."""
    return res.target.min < res.target.max


def per_die_target(res: PoolResolution, weapon: int | None = None, shift: int = 0) -> int:
    """ITM-WPN-11, ITM-MODE-5: the face each die of a strike must reach — the weapon's own
    ``toHit.target``, else the pool's default, shifted by the mode's ``target`` (``+1`` is
    harder), held to ``target.min..target.max``; on a fixed target both are ignored."""
    if not variable_target(res):
        return res.target.default
    base = weapon if weapon is not None else res.target.default
    return clamp(base + shift, res.target.min, res.target.max)


def pool_size(res: PoolResolution, dice: int) -> int:
    """CHK-POOL-A4, ITM-MODE-4, ITM-ARM-3: the dice a strike rolls (what its attack and its
    mode, conditions and worn items add, in dice), held to ``pool.min..pool.max``."""
    return clamp(dice, res.pool.min, res.pool.max)


def damage_dice(formula: Formula | None) -> int:
    """OQ-26: how many dice the damage expression has (``2d6`` adds 2 dice of the pool's die;
    the faces written are ignored); a count that is not a written number counts 1 die."""
    if formula is None:
        return 0
    return sum(_count(term) for term in dice_terms(formula.tree))


def _count(term: Dice) -> int:
    written = term.count.value if isinstance(term.count, Number) else 1
    return max(written, 0) * term.times


def die_successes(face: int, target: int, double_from: int | None = None) -> int:
    """CHK-POOL-10/12: what one die counts — 0 below the target, 1 reaching it, 2 at or
    above ``double.from``."""
    if face < target:
        return 0
    return 2 if double_from is not None and face >= double_from else 1


def counted(faces: Iterable[int], target: int, double_from: int | None = None) -> int:
    """The successes of ``faces`` at ``target`` (extra damage dice, OQ-26)."""
    return sum(die_successes(f, target, double_from) for f in faces)


def successes_distribution(dice: int, target: int, sides: int,
                           double_from: int | None = None) -> dict[int, Fraction]:
    """The exact chance of every success count of ``dice`` dice of ``sides`` faces counted at
    ``target`` (no explode, cancel or botch), by enumerating one die and convolving."""
    one: dict[int, Fraction] = {}
    for face in range(1, sides + 1):
        got = die_successes(face, target, double_from)
        one[got] = one.get(got, Fraction(0)) + Fraction(1, sides)
    total: dict[int, Fraction] = {0: Fraction(1)}
    for _ in range(max(dice, 0)):
        step: dict[int, Fraction] = {}
        for have, chance in total.items():
            for got, p in one.items():
                step[have + got] = step.get(have + got, Fraction(0)) + chance * p
        total = step
    return total


def pool_result(successes: int, critical: str | None, defence: int) -> str:
    """CMB-ATK-A4 read for pools, OQ-CMB-2: ``critical`` on the pool's exceptional success,
    ``miss`` on a botch, else ``hit`` iff the successes reach the defence (at least one
    success, as a pool check's ``dc`` is at least 1)."""
    if critical == "failure":
        return "miss"
    if successes < max(defence, 1):
        return "miss"
    return "critical" if critical == "success" else "hit"


@dataclass(frozen=True, slots=True)
class PoolDamage:
    """What a pool hit deals before typed defences: its successes, the extra dice's faces and
    successes, the damage reduction taken off, the floor raised to and the total."""

    successes: int
    extra_faces: tuple[int, ...]
    extra: int
    reduction: int
    floor: int
    total: int

    @property
    def raised(self) -> bool:
        return self.floor > max(self.successes + self.extra - self.reduction, 0)


def pool_damage(successes: int, extra_faces: Iterable[int], target: int, reduction: int,
                floor: int = 0, double_from: int | None = None) -> PoolDamage:
    """ITM-WPN-13, OQ-26, ITM-FLOOR-2: a hit's successes plus the successes of its extra dice,
    less the target's damage reduction (never below 0), raised to ``floor``."""
    faces = tuple(extra_faces)
    extra = counted(faces, target, double_from)
    reduction = max(reduction, 0)
    total = max(max(successes + extra - reduction, 0), max(floor, 0))
    return PoolDamage(successes, faces, extra, reduction, max(floor, 0), total)


def below_hardness(dice: int, hardness: int) -> bool:
    """ITM-HARD-2: a spending-style strike whose dice are below the target's hardness hits
    and does nothing."""
    return dice < hardness


def hardness_line(striker: str, target: str, dice: int, hardness: int) -> str:
    """ITM-HARD-2's log string, ``striker`` the attacker's weapon (``Ada's Grave spade``) and
    ``target`` as the story names it (``the warden``): ``Ada's Grave spade lands on the warden
    with 5 dice, below a hardness of 6, and does nothing.``"""
    return (f"{striker} lands on {target} with {dice} {'die' if dice == 1 else 'dice'}, "
            f"below a hardness of {hardness}, and does nothing.")


def foe_called(name: str) -> str:
    """How ITM-HARD-2's line names a foe: ``the warden`` for ``Warden``."""
    return f"the {name[:1].lower()}{name[1:]}"


def taken(attacker: int, target: int, successes: int) -> tuple[int, int]:
    """Glossary "Spending / taking style": a taking strike's successes move from the target's
    initiative number (never below 0) to the attacker's; what the target did not have is not
    taken."""
    moved = min(max(successes, 0), max(target, 0))
    return attacker + moved, target - moved


def numbered(combatant: Combatant, gain: int | None) -> Combatant:
    """Glossary "Spending / taking style": with ``combat.pool.gain`` a combatant joins with
    its initiative as its base and the gain fixed (CMB-TPL-8: numbers fixed as it joins)."""
    if gain is None:
        return combatant
    return combatant.model_copy(update={"base": combatant.initiative, "gain": gain})


def risen(combatant: Combatant) -> Combatant:
    """A new round raises a numbered combatant's number by its gain."""
    if combatant.base is None or not combatant.gain:
        return combatant
    return combatant.model_copy(update={"initiative": combatant.initiative + combatant.gain})


def thrown(number: int, reduction: int) -> int:
    """ITM-FLOOR-3: what a spending strike deals — its attacker's number less the target's
    damage reduction, never below 0 and never raised to a floor."""
    return max(max(number, 0) - max(reduction, 0), 0)


def spent(combatant: Combatant) -> Combatant:
    """ITM-HARD-2: after a spending strike that lands the attacker's number falls back to its
    base (whether or not the strike did anything)."""
    if combatant.base is None:
        return combatant
    return combatant.model_copy(update={"initiative": combatant.base})


def thrown_line(number: int, reduction: int) -> str:
    """The answer's account of a thrown number: ``, throws 5 − 1 reduction = 4``."""
    text = f", throws {number}"
    if reduction:
        text += f" − {reduction} reduction"
    return text + f" = {thrown(number, reduction)}"


def pool_parts(combatant: Combatant) -> list[str]:
    """What the COMBAT block adds for a pool fight's combatant: the spending style's base and
    gain (its number is its initiative), its hardness (ITM-HARD-1) and a foe's damage
    reduction, where they are above 0."""
    parts = ([f"number {combatant.initiative} (base {combatant.base}, +{combatant.gain} a "
              "round)"] if combatant.base is not None else [])
    if combatant.hardness:
        parts.append(f"hardness {combatant.hardness}")
    if combatant.reduction:
        parts.append(f"reduction {combatant.reduction}")
    return parts
