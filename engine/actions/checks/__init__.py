"""Skill checks and saves: ``[skill_check: ...]`` answered with the ruleset's own dice
(spec/checks.md; modifiers from spec/items.md §7). One module per resolution kind."""

from .pipeline import skill_check

__all__ = ["skill_check"]
