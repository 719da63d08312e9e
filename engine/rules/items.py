"""What an item is when worn: whether it can be worn, whether a stack of it is, and its
``worn``/``carried``/``binds`` parts as plain keys (ITM-ISTAT-3)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from pydantic import BaseModel

from ..dice import Stream, parse_dice, roll
from ..ruleset import Item
from ..ruleset.combat import Amount, StatRead
from .game import CatalogItem, Game
from .memo import remembered
from .state import Stack


def can_be_worn(item: Item) -> bool:
    """ITM-ISTAT-3: only an item that takes slots or binds is ever worn."""
    return bool(item.slots) or item.binds is not None


def item_is_worn(item: Item, stack: Stack) -> bool:
    """ITM-ISTAT-3: slots while equipped, binds while bound, both while both; else never."""
    return worn_while(item, stack.equipped, stack.bound)


def worn_while(item: Item, equipped: bool, bound: bool) -> bool:
    """ITM-ISTAT-3 for a stack of ``item`` that is ``equipped`` and ``bound`` or not."""
    if not can_be_worn(item):
        return False
    return (not item.slots or equipped) and (item.binds is None or bound)


def is_worn(entry: CatalogItem, stack: Stack) -> bool:
    """ITM-ISTAT-3 for a catalog item (see :func:`item_is_worn`)."""
    return item_is_worn(entry.item, stack)


@remembered(4096)
def effect_part(item: Item, which: str) -> Mapping[str, Any]:
    """An item's ``worn``/``carried``/``binds`` value as plain JSON keys, whatever model type
    the ruleset package gives it (one place to change when those keys get their own types).
    Read once per item and remembered (items are immutable); the mapping is read-only."""
    return MappingProxyType(_dumped(getattr(item, which, None)))


def _dumped(value: Any) -> dict[str, Any]:
    if isinstance(value, BaseModel):
        dumped: dict[str, Any] = value.model_dump(mode="json", by_alias=True, exclude_none=True)
        return dumped
    return dict(value) if isinstance(value, Mapping) else {}


def charges_max(item: Item) -> int | None:
    """ITM-CHG-2/3: how many charges the item holds (above 100 holds 100); None without
    ``charges`` or when its stat gives no number of at least 1."""
    if item.charges is None:
        return None
    most = stat_number(item, item.charges.max)
    if most is None or most < 1:
        return None
    return min(math.floor(most), MAX_CHARGES)


def charges_left(item: Item, stack: Stack) -> int | None:
    """ITM-CHG-4: the charges on the stack; a stack nobody has spent from is full."""
    most = charges_max(item)
    if most is None:
        return None
    return min(stack.charges, most) if stack.charges is not None else most


MAX_CHARGES = 100  # ITM-CHG-2/3: an item holds 1 to 100 charges


def stat_number(item: Item, value: float | StatRead) -> float | None:
    """A number written out, or read from one of the item's number stats (ITM-CHG-2,
    ITM-GATE-3); None when the item does not give that stat (ITM-GATE-4)."""
    if not isinstance(value, StatRead):
        return value
    read = item.stats.get(value.stat)
    if isinstance(read, bool) or not isinstance(read, int | float):
        return None
    return read


def roll_amount(amount: Amount, stream: Stream) -> int:
    """ITM-USE-13, ITM-RCHG-2: ``dice`` (rolled with the engine's dice) plus ``flat``."""
    total = amount.flat or 0
    if amount.dice is not None:
        expr = parse_dice(amount.dice)
        if not isinstance(expr, str):  # the ruleset loader already refused bad notation
            total += roll(expr, stream).total
    return total


def stat_value(game: Game, item: Item, stat_id: str) -> Any:
    """OQ-3: an item's effective value for a stat: its own, else the stat's ``default``."""
    if stat_id in item.stats:
        return item.stats[stat_id]
    block = game.ruleset.items
    declared = next((s for s in block.stats if s.id == stat_id), None) if block else None
    return declared.default if declared is not None else None


def read_stat(game: Game, item: Item, value: Any) -> Any:
    """ITM-WPN-21: a value written out, or one of the item's own stats (OQ-3)."""
    return stat_value(game, item, value.stat) if isinstance(value, StatRead) else value
