"""Symbol-pool combat's pure rules (CHK-SYM-35, CMB-GEN-3;
docs/rules/checks.md#6-symbol-pool-rolling-narrative-dice-and-reading-symbols). The page "Combat on
symbol dice" is not ours, so this is the best reading, in the terms of a symbol-pool check:

- the attack is a check of ``combat.attack.check`` built like any symbol-pool check — a hero's
  ability and rank in that skill (CHK-SYM-A1/A2), a foe's template ability modifier and
  template ``attack`` as its rank; the weapon's toHit adds boost dice through the signed
  bonus (CHK-SYM-A6);
- the opposing dice are ``combat.attack.difficulty`` difficulty dice (default 2, Genesys's
  Average combat check), and each point of the target's defence adds one setback die, held to
  ``setback.max`` (CHK-SYM-20/23);
- net successes (after cancelling, CHK-SYM-A10, OQ-CHK-39) reaching ``success.needed`` hit;
  the damage is the weapon's (or unarmed) damage plus the net successes;
- a triumph (the ``criticalSuccess`` mark, CHK-SYM-30) on a hit makes it critical (CMB-ATK-5:
  its damage dice doubled); a triumph on a miss is only recorded (CHK-SYM-31). Advantage,
  threat and despair are recorded, never read."""

from __future__ import annotations

DIFFICULTY = 2  # the opposing dice of an attack without combat.attack.difficulty


def opposing(difficulty: int | None, most: int) -> int:
    """CHK-SYM-17: the opposing dice of an attack, ``combat.attack.difficulty`` (else
    :data:`DIFFICULTY`) held to 0..``difficulty.max``."""
    wanted = DIFFICULTY if difficulty is None else difficulty
    return min(max(wanted, 0), most)


def setback_dice(defence: int) -> int:
    """The setback dice a target's defence adds (never below 0; the check holds them to
    ``setback.max``, CHK-SYM-23)."""
    return max(defence, 0)


def symbol_result(successes: int, needed: int, triumph: bool) -> str:
    """CHK-SYM-29/30/31: ``hit`` when the net successes reach ``needed``, ``critical`` when
    such a hit also shows the critical-success symbol, else ``miss``."""
    if successes < needed:
        return "miss"
    return "critical" if triumph else "hit"


def extra_damage(successes: int, result: str) -> int:
    """The damage a hit adds to its weapon's: one per net success; nothing on a miss."""
    return max(successes, 0) if result != "miss" else 0
