"""The GM's line for items used in a formula fight (docs/rules/items.md#13-using-items-in-combat,
ITM-USE-5..9, 13..17; docs/design.md#combat-prompt): shown with the COMBAT block's lines
(:func:`engine.actions.fight.formula.teach_fight`), so only while a fight is on, and only where the
ruleset has an item with a ``use`` — the first such item, aimed as its use is."""

from __future__ import annotations

from ...rules.game import Game
from ..examples import FOE_NAMES, Party, example, item_where

USE_TAIL = ("; target= names the foes it is aimed at, or the hero a heal or buff is for "
            "(default: the only foe standing, or the user). It spends the use's budget like an "
            "attack; the engine rolls its attack or each target's save and what it deals or "
            "heals.")


def teach_use_in_fight(game: Game, party: Party) -> list[str]:
    """The line teaching ``target=`` on ``[inventory: action="use"]`` in a fight, or none."""
    used = item_where(game, lambda c: c.item.use is not None)
    if used is None or used.item.use is None:
        return []
    aim = used.item.use.targets
    target = (None if aim == "self" else party.other if aim == "ally"
              else FOE_NAMES[0] if used.item.use.kind in ("attack", "debuff") else None)
    return ["- A hero uses an item in the fight: " + example(
        "inventory", action="use", item=used.label, who=party.hero, target=target) + USE_TAIL]
