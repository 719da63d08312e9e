"""Load-time rules of outcome-based combat
(docs/rules/combat.md#a4-outcome-based-combat-position-and-effect, OQ-CMB-6): an
``"kind": "outcome"`` block needs ``combat.outcome``, whose ``check`` is a skill of the sheet read
through the resolution's outcome tiers
(docs/rules/checks.md#8-outcome-tiers-more-than-success-or-failure), whose ``tiers`` readings name
those tiers, and templates that give their foes harm levels (CMB-OUTC-4)."""

from __future__ import annotations

from .fight import Combat
from .pointers import Problem, pointer
from .ruleset import Ruleset


def outcome_problems(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """What is wrong with the outcome keys of ``combat``; nothing for another kind."""
    if combat.kind != "outcome":
        if combat.outcome is not None:
            return [Problem(pointer("combat", "outcome"),
                            '"combat.outcome" is read only with "kind": "outcome"')]
        return []
    rule = combat.outcome
    if rule is None:
        return [Problem(pointer("combat", "kind"), 'outcome combat needs "combat.outcome"')]
    problems: list[Problem] = []
    if rule.check not in {s.id for s in ruleset.sheet.skills}:
        problems.append(Problem(pointer("combat", "outcome", "check"),
                                f'unknown skill "{rule.check}"'))
    res = ruleset.resolution
    tiers = {t.id for t in res.outcomes.tiers} if res is not None and res.outcomes else None
    if tiers is None:  # CMB-OUTC-1: the roll is read through the outcome tiers
        problems.append(Problem(pointer("combat", "kind"),
                                'outcome combat needs "resolution.outcomes" '
                                '(the tiers its roll is read through)'))
    else:
        problems += [Problem(pointer("combat", "outcome", "tiers", ident),
                             f'unknown outcome tier "{ident}"')
                     for ident in rule.tiers if ident not in tiers]
    problems += [Problem(pointer("combat", "templates", index, "combat", "harm"),
                         "an outcome fight's template gives its foes harm levels (CMB-OUTC-4)")
                 for index, template in enumerate(combat.templates)
                 if template.combat.harm is None]
    return problems
