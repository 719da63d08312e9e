"""Loot tables and the ``[loot:]`` tag (docs/rules/items.md#15-loot).

:func:`roll_table` is the reusable roller (the GM's tag now; a creature's ``loot`` after a won
fight and a seller's ``stock`` later); :func:`roll_tag` answers ``[loot: table=... who=...]``.
Every die comes from the turn's stream, so a regenerated answer drops once and a swipe of the
same turn drops the same (ITM-LOOT-17).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..dice import DiceExpr, Stream, parse_dice, roll
from ..ruleset.items import Item
from ..ruleset.loot import ItemFilter, LootRow, LootTable
from .bags import Thing
from .game import DEFAULT_STACK, Game
from .layers import hidden_items, removed_coins
from .state import State

MAX_ROLLS = 20  # ITM-LOOT-6: a table draws 0 to 20 times


@dataclass(frozen=True, slots=True)
class Drop:
    """One thing a draw dropped: a catalog item or a coin, and how many."""

    thing: Thing
    count: int


def _amount(value: int | str, stream: Stream) -> tuple[int, list[int]]:
    """A count written out or as dice: the number and the faces rolled (none for a number)."""
    if isinstance(value, int):
        return value, []
    expr = parse_dice(value)
    if isinstance(expr, str):  # validated at load; a bad value drops nothing
        return 0, []
    rolled = roll(expr if isinstance(expr, DiceExpr) else DiceExpr(0, 1, 0), stream)
    return max(0, rolled.total), list(rolled.faces)


def _matches(item: Item, wanted: ItemFilter) -> bool:
    """ITM-LOOT-8: an item must have every named rarity, category and tag."""
    return ((wanted.rarity is None or item.rarity == wanted.rarity)
            and (wanted.category is None or item.category == wanted.category)
            and (wanted.tag is None or wanted.tag in item.tags))


def _row_thing(game: Game, state: State, row: LootRow, stream: Stream) -> Thing | None:
    """What a row drops, or None (ITM-LOOT-10: hidden, removed, or a filter finding nothing)."""
    hidden = hidden_items(game, state)
    if row.item is not None:
        found = game.items.get(row.item)
        if found is None or found.ref in hidden or found.item.service:
            return None
        return Thing(found.label, found.ref, None, found.stack_limit)
    if row.coins is not None:
        info = game.coins.get(row.coins)
        if info is None or row.coins in removed_coins(game, state):
            return None
        return Thing(info.coin.label, None, row.coins, DEFAULT_STACK)
    assert row.filter is not None
    # OQ-37: services are never candidates; ITM-LOOT-8: uniform among the matches.
    candidates = [c for c in game.items.values()
                  if c.ref not in hidden and not c.item.service and _matches(c.item, row.filter)]
    if not candidates:
        return None
    chosen = candidates[stream.below(len(candidates))]
    return Thing(chosen.label, chosen.ref, None, chosen.stack_limit)


def roll_table(game: Game, state: State, table: LootTable,
               stream: Stream) -> tuple[list[Drop], dict[str, object]]:
    """Draw a table: ``rolls`` draws, each a row by weight, then what it drops and how many.

    Dice are drawn in this order from ``stream``: the ``rolls`` dice, then per draw the row,
    the filter's choice (filter rows), and the ``count`` dice. A draw on a row that drops
    nothing is spent (OQ-36). Returns the drops (same things merged, in first-drop order) and
    a record of the dice.
    """
    rolls, rolls_faces = _amount(table.rolls, stream)
    rolls = min(rolls, MAX_ROLLS)
    weights = [row.weight for row in table.entries]
    drops: dict[tuple[str | None, str | None], Drop] = {}
    draws: list[dict[str, object]] = []
    for _ in range(rolls):
        index = stream.pick(weights)
        row = table.entries[index]
        thing = _row_thing(game, state, row, stream)
        count, count_faces = _amount(row.count, stream)
        draw: dict[str, object] = {"row": index, "name": thing.name if thing else None,
                                   "count": count if thing else 0}
        if count_faces:
            draw["dice"] = count_faces
        draws.append(draw)
        if thing is None or count < 1:
            continue
        key = (thing.item, thing.coin)
        before = drops.get(key)
        drops[key] = Drop(thing, count + (before.count if before else 0))
    record: dict[str, object] = {"table": table.id, "rolls": rolls, "draws": draws}
    if rolls_faces:
        record["rollsDice"] = rolls_faces
    return list(drops.values()), record


def find_table(game: Game, name: str | None) -> LootTable | None:
    """A table by id or label, ignoring case; without a name, the only table if there is one."""
    tables = game.ruleset.items.loot_tables if game.ruleset.items else []
    if not name or not name.strip():
        return tables[0] if len(tables) == 1 else None
    wanted = name.strip().casefold()
    return next((t for t in tables if wanted in (t.id.casefold(), t.label.casefold())), None)
