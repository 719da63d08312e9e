"""A strike's last steps when its target is a foe (CMB-CARD-1): the damage event, the foe
felled, and the last foe felled ending the fight in victory (docs/design.md#rounds-and-order;
ITM-LOOT-12: the felled drop). One piece for the strikes of every combat kind that ends so."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...rules.context import TurnContext
from ...rules.fight.conditions import fight_over
from ...rules.game import Game
from ...rules.state import Combatant, Encounter, State

Won = Callable[[Game, State, Encounter, TurnContext, dict[str, Any]], tuple[State, str]]


def struck_events(foe: Combatant, record: dict[str, Any]) -> list[str]:
    """CMB-CARD-1: the damage dealt to ``foe`` is an event of its own."""
    return [f"damage:{foe.name}:{record['damage']}"] if record["damage"] else []


def fell(game: Game, state: State, encounter: Encounter, foe: Combatant, ctx: TurnContext,
         record: dict[str, Any], events: list[str], won: Won) -> tuple[State, str]:
    """After a strike on ``foe`` (``encounter`` as it left it): ``felled:`` and, for the last
    foe, ``end:victory``, the spoils (``won``) and the fight over. Returns the state and the
    words to add to the answer; ``events`` gets the events."""
    if foe.hp:
        return state, ""
    events.append(f"felled:{foe.name}")
    text = f" {foe.name} is felled."
    if not any(c.side == "foes" and c.hp for c in encounter.combatants):
        events.append("end:victory")
        text += " The fight is won."
        state, words = won(game, state, encounter, ctx, record)
        text += words
        state = fight_over(state)
    return state, text
