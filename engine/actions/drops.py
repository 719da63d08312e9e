"""A loot table's drops arriving like adds: the ``[loot:]`` tag's and a won fight's
(ITM-LOOT-12/14/18)."""

from __future__ import annotations

from ..dice import Stream
from ..rules.carry import distribute
from ..rules.game import Game
from ..rules.loot import roll_table
from ..rules.state import State
from ..ruleset.loot import LootTable


def drop_table(game: Game, state: State, table: LootTable, stream: Stream,
               who: int | None) -> tuple[State, dict[str, object], list[str]]:
    """Roll ``table`` with ``stream``; each drop arrives like an add, into ``who``'s bag or,
    without one, the shared view (ITM-LOOT-14/18). The new state, the record (the table's
    dice and ``drops``: what dropped and to whom) and each drop in words. Also a won fight's
    drops (ITM-LOOT-12)."""
    drops, record = roll_table(game, state, table, stream)
    parts: list[str] = []
    dropped: list[dict[str, object]] = []
    for drop in drops:
        state, placements, left = distribute(game, state, drop.thing, drop.count, who)
        placed = [{"who": state.characters[i].name, "count": n} for i, n in placements]
        dropped.append({"name": drop.thing.name, "item": drop.thing.item,
                        "coin": drop.thing.coin, "count": drop.count, "to": placed,
                        "left": left})
        where = ", ".join(f"×{n} to {state.characters[i].name}'s bag" for i, n in placements)
        part = f"{drop.thing.name} {where}" if where else f"{drop.thing.name} ×{drop.count}"
        if left:
            part += f" (×{left} stays behind: nobody can carry more)"
        parts.append(part)
    record["drops"] = dropped
    return state, record, parts
