"""Reading a character's sheet: value references, ability modifiers, derived values and the
items a character owns (``itemStat``, spec/items.md §6). Read at exactly the moment asked
(ITM-ISTAT-17): nothing here is cached on the state."""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

from .game import CatalogItem, Game
from .ruleset import ValueRef
from .state import Character, Stack

MAX_DERIVED_DEPTH = 64  # derived values may read each other; cycles are refused at load


def ability_modifier(game: Game, score: float) -> float:
    """CHK-GEN-4..7: turn an ability score into the number a check uses."""
    resolution = game.ruleset.resolution
    rule: Any = getattr(resolution, "ability_modifier", None) if resolution else None
    if rule is None and resolution is not None and resolution.model_extra:
        rule = resolution.model_extra.get("abilityModifier")
    op = rule.get("op", "identity") if isinstance(rule, dict) else getattr(rule, "op", "identity")
    if op == "floorHalfMinusTen":  # CHK-GEN-6, OQ-CHK-1: the 5e rule, true floor
        return math.floor((score - 10) / 2)
    if op == "stepTable":  # CHK-GEN-7, OQ-CHK-2: last row whose score <= the sheet score
        rows = rule.get("rows", []) if isinstance(rule, dict) else getattr(rule, "rows", [])
        result = rows[0][1] if rows else score
        for row_score, number in rows:
            if row_score <= score:
                result = number
        return float(result)
    return score


def is_worn(entry: CatalogItem, stack: Stack) -> bool:
    """ITM-ISTAT-3: slots while equipped, binds while bound, both while both; else never."""
    takes_slots = bool(entry.item.slots)
    binds = entry.item.binds is not None
    if not takes_slots and not binds:
        return False
    return (not takes_slots or stack.equipped) and (not binds or stack.bound)


class SheetView:
    """One character's sheet as the ruleset declares it, with the character's own values."""

    def __init__(self, game: Game, character: Character | None) -> None:
        self.game = game
        self.character = character  # None reads an empty sheet (ITM-BIND-2, ITM-ISTAT-18)

    def ability_score(self, ability: str) -> float:
        if self.character is not None and ability in self.character.abilities:
            return self.character.abilities[ability]
        for row in self.game.ruleset.sheet.abilities:
            if row.id == ability:
                return row.default
        return 0

    def field(self, field: str) -> float:
        value: Any = self.character.fields.get(field) if self.character else None
        if value is None:
            value = next((f.default for f in self.game.ruleset.sheet.fields if f.id == field), 0)
        if isinstance(value, bool):
            return int(value)
        return value if isinstance(value, int | float) else 0

    def pool(self, pool: str, depth: int = 0) -> float:
        """The pool's current value; a character who never set it is at its max."""
        if self.character is not None and pool in self.character.pools:
            return self.character.pools[pool]
        for row in self.game.ruleset.live.pools:
            if row.id == pool:
                return self.value(row.max, depth + 1)
        return 0

    def derived(self, derived: str, depth: int = 0) -> float:
        row = next((d for d in self.game.ruleset.sheet.derived if d.id == derived), None)
        if row is None or depth > MAX_DERIVED_DEPTH:
            return 0
        values = [self.value(ref, depth + 1) for ref in row.of]
        if row.op == "max":
            return max(values)
        if row.op == "min":
            return min(values)
        if row.op == "product":
            return math.prod(values)
        if row.op == "floorDiv":
            total = values[0]
            for divisor in values[1:]:
                total = math.floor(total / divisor) if divisor else 0
            return total
        return sum(values)

    def owned(self) -> Iterator[tuple[CatalogItem, Stack]]:
        """ITM-ISTAT-14/16: the ruleset items in the character's own bag."""
        if self.character is None:
            return
        for stack in self.character.bag:
            entry = self.game.items.get(stack.item) if stack.item else None
            if entry is not None:
                yield entry, stack

    def item_stat(self, spec: dict[str, Any]) -> float:
        """ITM-ISTAT-2..10: read a stat off the selected items."""
        source = spec.get("from", "all")
        pick = spec.get("pick", "sum")
        stat = spec.get("stat")
        default = spec.get("default", 0)
        stats = {s.id: s for s in (self.game.ruleset.items.stats if self.game.ruleset.items
                                   else [])}
        values: list[tuple[float | None, int]] = []
        for entry, stack in self.owned():
            worn = is_worn(entry, stack)
            if (source == "worn" and not worn) or (source == "carried" and worn):
                continue
            item = entry.item
            if "slot" in spec and spec["slot"] not in item.slots:
                continue
            if "category" in spec and spec["category"] != item.category:
                continue
            if "tag" in spec and spec["tag"] not in item.tags:
                continue
            value: Any = None
            if stat is not None:
                # OQ-3: the explicit value, else the stat's default.
                value = item.stats.get(stat, stats[stat].default if stat in stats else None)
            values.append((value if isinstance(value, int | float) else None, stack.count))
        if pick == "count":
            counted = [c for v, c in values if stat is None or v is not None]
            return sum(counted) if counted else default
        numbers = [(v, c) for v, c in values if v is not None and not isinstance(v, bool)]
        if not numbers:
            return float(default)
        if pick == "max":
            return max(v for v, _ in numbers)
        if pick == "min":
            return min(v for v, _ in numbers)
        return sum(v * c for v, c in numbers)

    def value(self, ref: ValueRef, depth: int = 0) -> float:
        """The number a value reference reads for this character."""
        if depth > MAX_DERIVED_DEPTH:
            return 0
        if ref.const is not None:
            return ref.const
        if ref.ability_score is not None:
            return self.ability_score(ref.ability_score)
        if ref.ability_mod is not None:
            return ability_modifier(self.game, self.ability_score(ref.ability_mod))
        if ref.field is not None:
            return self.field(ref.field)
        if ref.derived is not None:
            return self.derived(ref.derived, depth)
        if ref.pool is not None:
            return self.pool(ref.pool, depth)
        if ref.item_stat is not None:
            return self.item_stat(ref.item_stat)
        return 0
