"""Outcome tiers: more than success or failure
(docs/rules/checks.md#8-outcome-tiers-more-than-success-or-failure)."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.checks.read import Critical, Rolled
from ...ruleset.resolution import Outcomes, OutcomeTier


@dataclass(frozen=True)
class Landed:
    tier: OutcomeTier
    success: bool
    critical: Critical


def _numeric_index(outcomes: Outcomes, rolled: Rolled) -> int:
    numeric = [t for t in outcomes.tiers if t.on is None]
    for index, tier in enumerate(numeric):  # CHK-OUT-A4
        if tier.at_least is None:
            return index
        if outcomes.by == "fraction" and rolled.fraction is not None:
            roll, threshold = rolled.fraction  # CHK-RA-A9, OQ-CHK-32: floor
            if roll <= threshold // tier.at_least:
                return index
            continue
        value = rolled.value if outcomes.by == "total" else rolled.margin
        if value >= tier.at_least:
            return index
    return len(numeric) - 1


def pick(outcomes: Outcomes, rolled: Rolled, shift: bool) -> Landed:
    """CHK-OUT-A1..A6: the tier a check lands in, which then decides success and criticals."""
    tiers = outcomes.tiers
    numeric = [t for t in tiers if t.on is None]
    critical = rolled.critical if rolled.tiers_read_criticals else None  # OQ-CHK-40
    if critical is not None:
        wanted = "critical-success" if critical == "success" else "critical-failure"
        on_tier = next((t for t in tiers if t.on == wanted), None)
        if on_tier is not None:  # CHK-OUT-A1/A2
            return Landed(on_tier, on_tier.success, critical)
        edge = numeric[0] if critical == "success" else numeric[-1]  # CHK-OUT-A3
        return Landed(edge, critical == "success", critical)
    index = _numeric_index(outcomes, rolled)
    if shift and outcomes.naturals == "shift":  # CHK-OUT-A5, OQ-CHK-45
        index = min(max(index - rolled.shift, 0), len(numeric) - 1)
    if rolled.empty and numeric[index].success:  # OQ-CHK-26
        index = next((i for i, t in enumerate(numeric) if not t.success), index)
    tier = numeric[index]
    kind: Critical = None
    if tier.critical:  # CHK-OUT-8
        kind = "success" if tier.success else "failure"
    return Landed(tier, tier.success, kind)
