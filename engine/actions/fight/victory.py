"""A fight won or lost: the felled foes' loot, the ammunition picked up, the fight over."""

from __future__ import annotations

from typing import Any

from ...rules.context import TurnContext
from ...rules.fight.conditions import fight_over
from ...rules.game import Game
from ...rules.state import Encounter, JournalEntry, State
from ..drops import drop_table
from .arms import picked_up


def won(game: Game, state: State, encounter: Encounter, ctx: TurnContext,
         record: dict[str, Any]) -> tuple[State, str]:
    """A won fight (the last foe felled, or op="end" outcome="victory"): the felled foes'
    loot (ITM-LOOT-11..14) and the ammunition picked up (ITM-AMMO-5..7), in the record
    (``loot``, ``recovered``) and the words the answer adds."""
    state, spoils, dropped = felled_loot(game, state, encounter, ctx)
    if spoils:
        record["loot"] = spoils
    state, recovered, picked = picked_up(game, state, encounter)
    if recovered:
        record["recovered"] = recovered
    return state, dropped + picked


def felled_loot(game: Game, state: State, encounter: Encounter,
                ctx: TurnContext) -> tuple[State, list[dict[str, object]], str]:
    """ITM-LOOT-11..14: a won fight rolls the loot table of every felled foe (fixed when it
    joined; a foe without one drops nothing) into the shared view, like an add; the dice are
    keyed by the reply that won it and the foe's name. The new state (with a journal line per
    table, ITM-LOOT-15), the record of each table and the words."""
    tables = {t.id: t for t in (game.ruleset.items.loot_tables if game.ruleset.items else [])}
    spoils: list[dict[str, object]] = []
    words: list[str] = []
    for foe in encounter.combatants:
        table = tables.get(foe.loot) if foe.side == "foes" and not foe.hp and foe.loot else None
        if table is None:
            continue
        stream = ctx.for_tag(0).stream("loot", f"victory/{foe.name.casefold()}")
        state, record, parts = drop_table(game, state, table, stream, None)
        spoils.append({"foe": foe.name, **record})
        said = "; ".join(parts) if parts else "nothing"
        words.append(f"{foe.name} ({table.label}): {said}")
        journal = JournalEntry(turn=ctx.turn_label, text=f"Loot ({table.label}, {foe.name}): "
                               + said)
        state = state.model_copy(update={"journal": (*state.journal, journal)})
    return state, spoils, (" Loot: " + " · ".join(words) + ".") if words else ""


def ended(game: Game, state: State, ends: str | None, encounter: Encounter, ctx: TurnContext,
           record: dict[str, Any]) -> tuple[State, str]:
    """An outcome that ended the fight (``ends``: "victory", "defeat" or None): the words,
    the spoils of a victory, and the fight over."""
    if ends is None:
        return state, ""
    text = " The fight is lost."
    if ends == "victory":
        state, words = won(game, state, state.encounter or encounter, ctx, record)
        text = " The fight is won." + words
    return fight_over(state), text
