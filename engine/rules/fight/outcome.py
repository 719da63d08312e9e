"""Outcome-based combat's pure rules
(docs/rules/combat.md#a4-outcome-based-combat-position-and-effect, CMB-OUTC-1..4, OQ-CMB-6): the
GM's grades of an action (position and effect), how the outcome tier a hero's roll landed in is read
both ways — the foe harm levels it achieves and the harm level that comes back — and what one harm
of a level takes of a hero's maximum health. No tags and no sentences:
engine/actions/fight/outcome/combat.py answers the tags with these."""

from __future__ import annotations

import math
from dataclasses import dataclass
from fractions import Fraction
from typing import Literal

from ...dice import Stream
from ...ruleset import Template
from ...ruleset.fight import EFFECTS, POSITIONS, OutcomeRule, TierReading
from ...ruleset.resolution import Outcomes, OutcomeTier
from ..checks.read import Critical
from ..formula import evaluate, foe_reader
from ..game import Game

Kind = Literal["critical", "full", "partial", "failure", "critical-failure"]
"""What a tier is, read for a fight: a critical success, the best plain success (full), a
lesser success (partial: done, at a cost), a failure, a critical failure."""

READINGS: dict[Kind, TierReading] = {
    # Forged in the Dark: a critical is done with increased effect and nothing comes back; a
    # full success is done as graded; a partial is done with reduced effect and the position's
    # harm comes back; a failure achieves nothing and the harm comes back; a critical failure
    # brings back one level worse.
    "critical": TierReading(effect=1, harm=None),
    "full": TierReading(effect=0, harm=None),
    "partial": TierReading(effect=-1, harm=0),
    "failure": TierReading(effect=None, harm=0),
    "critical-failure": TierReading(effect=None, harm=1),
}
"""CMB-OUTC-1, OQ-CMB-6: how each kind of tier is read when ``combat.outcome.tiers`` gives
no reading for it."""

EFFECT_LEVELS = {"limited": 1, "standard": 2, "great": 3}
"""The foe harm levels an effect deals on a full success, where ``combat.outcome.effect``
leaves the word out."""
POSITION_LEVELS = {"controlled": 1, "risky": 2, "desperate": 3}
"""The harm level a position brings back, where ``combat.outcome.position`` leaves it out."""
DEFAULT_POSITION = "risky"  # Forged in the Dark: an action is risky unless the GM says so
DEFAULT_EFFECT = "standard"
MOST_HARM_LEVELS = 99  # a foe's harm levels are held to 1..99


def grade(written: str, words: tuple[str, ...], default: str, what: str,
          notes: list[str]) -> str:
    """CMB-OUTC-2: the GM's ``position=`` or ``effect=`` word (any case); none written is
    ``default``, and an unknown word is ``default`` too, with a note saying so."""
    word = written.strip().casefold()
    if not word:
        return default
    if word in words:
        return word
    notes.append(f'{what}="{written.strip()[:30]}" is not one of {", ".join(words)}: '
                 f"{default} was used")
    return default


def grade_position(written: str, notes: list[str]) -> str:
    """``position=``: controlled, risky or desperate; risky without one."""
    return grade(written, POSITIONS, DEFAULT_POSITION, "position", notes)


def grade_effect(written: str, notes: list[str]) -> str:
    """``effect=``: limited, standard or great; standard without one."""
    return grade(written, EFFECTS, DEFAULT_EFFECT, "effect", notes)


def tier_kind(outcomes: Outcomes, tier: OutcomeTier, critical: Critical) -> Kind:
    """What the tier a roll landed in (with its critical, CHK-OUT-A6) is for a fight: a
    critical of either kind first (the roll's, an ``on:`` tier, a tier marked critical);
    else the first plain success tier is the full success and every lower success tier a
    partial one; else a failure."""
    if critical == "success" or tier.on == "critical-success" or (tier.critical
                                                                 and tier.success):
        return "critical"
    if critical == "failure" or tier.on == "critical-failure" or tier.critical:
        return "critical-failure"
    if not tier.success:
        return "failure"
    plain = next((t for t in outcomes.tiers if t.success and not t.critical and t.on is None),
                 None)
    return "full" if plain is None or plain.id == tier.id else "partial"


def reading(rule: OutcomeRule, tier: OutcomeTier, kind: Kind) -> TierReading:
    """CMB-OUTC-1: the ruleset's reading of ``tier`` (``combat.outcome.tiers``), else the
    reading of its kind (:data:`READINGS`)."""
    return rule.tiers.get(tier.id) or READINGS[kind]


@dataclass(frozen=True, slots=True)
class Exchange:
    """One outcome action read both ways (CMB-OUTC-1): the foe harm levels it deals and the
    harm level that comes back to the hero (0: none)."""

    dealt: int
    level: int


def exchange(rule: OutcomeRule, read: TierReading, position: str, effect: str,
             shift: int = 0) -> Exchange:
    """CMB-OUTC-1/2: the effect's harm levels moved by the tier's reading and by ``shift``
    (a weapon's ``attack.effect``; never below 0; nothing when the tier achieves nothing), and
    the position's harm level moved by the reading, held to the levels ``combat.outcome.harm``
    gives (0 when nothing comes back)."""
    dealt = 0
    if read.effect is not None:
        levels = next((n for word, n in rule.effect.items() if word == effect),
                      EFFECT_LEVELS[effect])
        dealt = max(levels + read.effect + shift, 0)
    level = 0
    if read.harm is not None:
        base = next((n for word, n in rule.position.items() if word == position),
                    POSITION_LEVELS[position])
        level = min(max(base + read.harm, 0), len(rule.harm))
    return Exchange(dealt, level)


def harm_share(rule: OutcomeRule, level: int) -> Fraction:
    """CMB-OUTC-3, OQ-CMB-6: the share of maximum health one harm of ``level`` (1-based)
    takes — f_k itself, not a running total; 0 for level 0. The shares are read from their
    decimal text, so 0.8 is exactly four-fifths."""
    if level <= 0:
        return Fraction(0)
    return Fraction(str(rule.harm[min(level, len(rule.harm)) - 1]))


def harm_points(rule: OutcomeRule, level: int, hp_max: int) -> int:
    """CMB-OUTC-3: the hit points one harm of ``level`` takes from a hero of ``hp_max``:
    its share of the maximum, rounded up (OQ-CMB-6 leaves rounding open: up, so every harm
    costs a hero with any health at least one point, and level "all" takes everything)."""
    return math.ceil(harm_share(rule, level) * max(hp_max, 0))


def foe_harm(game: Game, template: Template, tier: int, modifier: int, stream: Stream) -> int:
    """CMB-OUTC-4: a foe's harm levels, its template's ``combat.harm`` at ``tier``, held to
    1..99 (a foe always takes at least one harm to fell)."""
    formula = template.combat.harm
    levels = evaluate(formula, foe_reader(game.ruleset, tier, modifier), stream).value \
        if formula is not None else 1
    return min(max(levels, 1), MOST_HARM_LEVELS)
