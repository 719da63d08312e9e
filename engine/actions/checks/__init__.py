"""Skill checks and saves: ``[skill_check: ...]`` answered with the ruleset's own dice
(docs/rules/checks.md; modifiers from docs/rules/items.md#7-checks-outside-combat). One module per
resolution kind."""

from .pipeline import skill_check

__all__ = ["skill_check"]
