"""ITM-ONHIT-7 (docs/rules/items.md#114-onhit): a foe's save against a weapon's ``onHit`` condition
counts as a save against that condition, and against magic when the weapon is magical (tagged
``magical``); a foe's template says what it adds to such saves (``savesAgainst``)."""

from __future__ import annotations

from .game import Game
from .state import Combatant

MAGICAL = "magical"  # the item tag of a magical weapon (as ITM-DEF-7/8's exceptions read it)


def save_bonus(game: Game, foe: Combatant, condition: str, magical: bool) -> int:
    """What ``foe`` adds to a save against ``condition`` (and against magic, when
    ``magical``): the sum of its template's matching ``savesAgainst`` entries; 0 for a hero
    or a foe without a template."""
    combat = game.ruleset.combat
    if combat is None or foe.side != "foes" or foe.role is None:
        return 0
    template = next((t for t in combat.templates if t.role == foe.role), None)
    if template is None:
        return 0
    return sum(entry.bonus for entry in template.saves_against
               if entry.condition == condition or (entry.magic and magical))
