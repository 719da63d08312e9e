"""Roll-against combat's pure rules
(docs/rules/checks.md#5-roll-against-rolling-at-most-or-at-least-the-sheet-number,
docs/rules/combat.md#a2-the-three-formulas-attack-check-damage-defence): a ruleset whose resolution
is ``roll-against`` and whose ``combat`` block gives ``combat.attack`` fights with its own kind of
attack. The attacker rolls against its own target number — a hero's attack skill (its sheet number,
CHK-RA-2/3) plus the weapon's toHit, a foe's template ``attack`` — and the target's defence
**subtracts from that number**, the way a ``dc=`` shift moves a check's threshold (CHK-RA-8,
CHK-RA-A4). One roll decides: the check's own success is a hit, its critical success a critical hit
(CMB-ATK-5 doubles the damage dice), its critical failure always a miss (CHK-RA-15, OQ-CHK-35).

Chosen reading (the combat page names no roll-against attack): the defence is a number taken
off the target number, not a second roll, so an attack is one roll of the ruleset's dice and
its distribution is the check's own (CHK-RA-A11)."""

from __future__ import annotations

from ...ruleset.resolution import AgainstResolution

SHIFT = 100  # CHK-RA-8: a dc= shift is held to -100..100


def defence_shift(defence: int) -> int:
    """The ``dc=`` shift of an attack on a target of ``defence``: the defence taken off the
    target number (CHK-RA-A4), held to ±100 as the check holds it (CHK-RA-8)."""
    return min(max(-defence, -SHIFT), SHIFT)


def target_number(number: int, defence: int) -> int:
    """The number the attack's roll is read against: the attacker's own ``number`` less the
    target's ``defence`` (the shift held as :func:`defence_shift` holds it)."""
    return number + defence_shift(defence)


def against_result(success: bool, critical: str | None) -> str:
    """CHK-RA-15, CHK-RA-A8, CMB-ATK-5: ``critical`` on the check's critical success, ``miss``
    on its critical failure, else ``hit`` iff the check succeeded."""
    if critical == "success":
        return "critical"
    if critical == "failure" or not success:
        return "miss"
    return "hit"


def edge_bonus(res: AgainstResolution, lean: int) -> int:
    """CMB-MOD-1 in a roll-against fight: an attack with an edge (advantage +1, disadvantage
    -1) rolls one bonus or penalty tens die (CHK-RA-17) where the ruleset has ``tens``;
    without ``tens`` the edge changes nothing (a single roll has no second die to keep)."""
    if res.tens is None or not lean:
        return 0
    return max(min(lean, res.tens.max), -res.tens.max)
