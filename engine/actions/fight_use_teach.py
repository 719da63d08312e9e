"""The GM's line for items used in a formula fight (spec/items.md §13, ITM-USE-5..9, 13..17;
DESIGN.md "Combat" → "Prompt"): shown with the COMBAT block's lines
(:func:`engine.actions.fight.teach_fight`), so only while a fight is on, and only where the
ruleset has an item with a ``use``."""

from __future__ import annotations

from ..rules.game import Game

USE_LINE = ('- A hero uses an item in the fight: [inventory: action="use" item="<item>" '
            'who="<hero>" target="<foe>, <foe>"]; target= names the foes it is aimed at, or '
            "the hero a heal or buff is for (default: the only foe standing, or the user). It "
            "spends the use's budget like an attack; the engine rolls its attack or each "
            "target's save and what it deals or heals.")


def teach_use_in_fight(game: Game) -> list[str]:
    """The line teaching ``target=`` on ``[inventory: action="use"]`` in a fight, or none."""
    if not any(entry.item.use is not None for entry in game.items.values()):
        return []
    return [USE_LINE]
