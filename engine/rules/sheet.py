"""Reading a character's sheet: value references, ability modifiers, derived values and the items a
character owns (``itemStat``, docs/rules/items.md#6-items-on-the-sheet-itemstat). Read at exactly
the moment asked (ITM-ISTAT-17): nothing here is cached on the state."""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from ..ruleset import Item, ValueRef
from .bags import BagIndex, bag_index
from .game import Game
from .items import can_be_worn, effect_part, item_is_worn, worn_while
from .memo import remembered
from .state import Character, InventedItem, Stack, State

MAX_DERIVED_DEPTH = 64  # derived values may read each other; cycles are refused at load
MAX_SHEET_NUMBER = 10**15  # what any value reference reads is kept within ±this


def bounded(number: float) -> float:
    """``number`` within ±``MAX_SHEET_NUMBER``; NaN (``inf - inf``) reads 0."""
    if -MAX_SHEET_NUMBER <= number <= MAX_SHEET_NUMBER:
        return number
    if number != number:
        return 0
    return MAX_SHEET_NUMBER if number > 0 else -MAX_SHEET_NUMBER


def ability_modifier(game: Game, score: float) -> float:
    """CHK-GEN-4..7: turn an ability score into the number a check uses."""
    resolution = game.ruleset.resolution
    if resolution is None:
        return score
    rule = resolution.ability_modifier
    if rule.op == "floorHalfMinusTen":  # CHK-GEN-6, OQ-CHK-1: the 5e rule, true floor
        return math.floor((score - 10) / 2)
    if rule.op == "stepTable":  # CHK-GEN-7, OQ-CHK-2: last row whose score <= the sheet score
        rows = sorted(rule.rows or [])
        result = rows[0][1] if rows else score
        for row_score, number in rows:
            if row_score <= score:
                result = number
        return result
    return score


@dataclass(frozen=True, slots=True)
class Owned:
    """One ruleset item a character owns, however many stacks of it (ITM-WORN-8): its
    reference, the name it applies under (the catalog label or the invented item's name) and whether
    any copy is worn, which then wins over merely carried ones (ITM-WORN-1)."""

    ref: str
    label: str
    item: Item
    worn: bool


def owned_items(game: Game, character: Character, state: State | None = None
                ) -> tuple[Owned, ...]:
    """Every ruleset item (catalog, or invented when ``state`` is given) the character owns,
    once each, in the bag order of its first stack."""
    return owned_in(game, bag_index(character.bag),
                    state.invented if state is not None else None)


@remembered(256)
def owned_in(game: Game, index: BagIndex,
             invented: tuple[InventedItem, ...] | None) -> tuple[Owned, ...]:
    """:func:`owned_items` read off a bag's index alone, which lists each kind's stacks and
    the equipped and bound ones. Remembered per index: checks ask this again and again, mostly
    of bags that differ from the last one in counts alone, which share its index (see
    ``engine.rules.bags.BagIndex``)."""
    # Only the stacks of items that can be worn are looked at (bags of hundreds of stacks hold a
    # few kinds of thing).
    firsts = sorted((positions[0], key[1]) for key, positions in index.items()
                    if key[0] == "item")
    equipped = frozenset(index.get(("equipped", ""), ()))
    bound = frozenset(index.get(("bound", ""), ()))
    owned: list[Owned] = []
    for _, ref in firsts:
        entry = game.items.get(ref)
        if entry is not None:
            label, item = entry.label, entry.item
        else:
            made = next((i for i in invented or () if i.ref == ref), None)
            if made is None:
                continue
            label, item = made.name, made.item
        worn = can_be_worn(item) and any(worn_while(item, i in equipped, i in bound)
                                         for i in index[("item", ref)])
        owned.append(Owned(ref, label, item, worn))
    return tuple(owned)


def _owned_items(game: Game, character: Character, invented: tuple[InventedItem, ...] | None
                 ) -> Iterator[tuple[str, Item, Stack]]:
    """Every stack of a ruleset item in the bag (catalog or invented), with its item."""
    items = {owned.ref: owned.item
             for owned in owned_in(game, bag_index(character.bag), invented)}
    for stack in character.bag:
        if stack.item is not None and stack.item in items:
            yield stack.item, items[stack.item], stack


def active_parts(game: Game, character: Character,
                 state: State | None = None) -> list[tuple[str, Item, Mapping[str, Any]]]:
    """The ``worn`` or ``carried`` part each owned item applies now (ITM-WORN-1), once per
    item however many stacks of it the character owns (ITM-WORN-8); a worn copy wins over a
    merely carried one. In bag order, as (reference, item, part)."""
    return [(owned.ref, owned.item, effect_part(owned.item, "worn" if owned.worn else "carried"))
            for owned in owned_items(game, character, state)]


def effective_abilities(game: Game, character: Character | None,
                        state: State | None = None) -> dict[str, float]:
    """ITM-ABIL-1..5: ability scores after what worn and carried items set and add.

    ``score = max(score + Σadd, max(set))``, then the ability's own ``min``/``max`` clamp it.
    """
    return _abilities_with(game, character, state.invented if state is not None else None)


def _abilities_with(game: Game, character: Character | None,
                    invented: tuple[InventedItem, ...] | None) -> dict[str, float]:
    """:func:`effective_abilities` with the items the GM invented given alone."""
    scores: dict[str, float] = {row.id: row.default for row in game.ruleset.sheet.abilities}
    if character is None:
        return scores
    scores.update(character.abilities)
    adds, sets = _changes_by(owned_in(game, bag_index(character.bag), invented))
    for row in game.ruleset.sheet.abilities:
        if row.id not in adds and row.id not in sets:
            continue
        score = scores[row.id] + adds.get(row.id, 0)
        if row.id in sets:
            score = max(score, sets[row.id])
        scores[row.id] = min(max(score, row.min), row.max)
    return scores


@remembered(256)
def _changes_by(owned: tuple[Owned, ...]) -> tuple[dict[str, float], dict[str, float]]:
    """ITM-ABIL-1..3: what the active parts of these owned items add to and set each ability
    to (Σadd, max(set)), remembered per owned items (the same answer for every bag that owns
    the same)."""
    adds: dict[str, float] = {}
    sets: dict[str, float] = {}
    for item in owned:
        part = effect_part(item.item, "worn" if item.worn else "carried")
        changes = part.get("abilities")
        if not isinstance(changes, Mapping):
            continue
        for ability, change in changes.items():
            if not isinstance(change, Mapping):
                continue
            add = change.get("add")
            if isinstance(add, int | float) and not isinstance(add, bool):
                adds[ability] = adds.get(ability, 0) + add
            floor = change.get("set")
            if isinstance(floor, int | float) and not isinstance(floor, bool):
                sets[ability] = max(sets.get(ability, floor), floor)
    return adds, sets


class SheetView:
    """One character's sheet as the ruleset declares it, with the character's own values."""

    def __init__(self, game: Game, character: Character | None, state: State | None = None,
                 items_apply: bool = True,
                 invented: tuple[InventedItem, ...] | None = None) -> None:
        self.game = game
        self.character = character  # None reads an empty sheet (ITM-BIND-2, ITM-ISTAT-18)
        self.state = state
        # The items the GM invented (ITM-PROP-22), all the sheet reads of the state: the
        # state's, or given alone by a caller whose answer is remembered without a state.
        self.invented = state.invented if state is not None else invented
        # ITM-ABIL-4: items change abilities before the sheet is computed; ITM-ABIL-6: pool and
        # track maxima (and binding.max, carry) read the sheet alone.
        self.items_apply = items_apply
        self._abilities: dict[str, float] | None = None

    def ability_score(self, ability: str) -> float:
        if self.items_apply and self.character is not None:
            if self._abilities is None:
                self._abilities = _abilities_with(self.game, self.character, self.invented)
            if ability in self._abilities:
                return self._abilities[ability]
        if self.character is not None and ability in self.character.abilities:
            return self.character.abilities[ability]
        for row in self.game.ruleset.sheet.abilities:
            if row.id == ability:
                return row.default
        return 0

    def unchanged(self) -> SheetView:
        """The same character's sheet without what items change (ITM-ABIL-6)."""
        return SheetView(self.game, self.character, self.state, False, self.invented)

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
            if row.id == pool:  # ITM-ABIL-6: a pool's max reads the unchanged sheet
                most = self.unchanged().value(row.max, depth + 1)
                return self.character.most(pool, most) if self.character else most
        return 0

    def derived(self, derived: str, depth: int = 0) -> float:
        return bounded(self._derived(derived, depth))

    def _derived(self, derived: str, depth: int) -> float:
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
                total = math.floor(bounded(total / divisor)) if divisor else 0
            return total
        return sum(values)

    def owned(self) -> Iterator[tuple[Item, Stack]]:
        """ITM-ISTAT-14/16: the ruleset items (catalog or invented) in the character's bag."""
        if self.character is None:
            return
        for _, item, stack in _owned_items(self.game, self.character, self.invented):
            yield item, stack

    def item_stat(self, spec: dict[str, Any]) -> float:
        """ITM-ISTAT-2..10: read a stat off the selected items."""
        source = spec.get("from", "all")
        pick = spec.get("pick", "sum")
        stat = spec.get("stat")
        default = spec.get("default", 0)
        stats = {s.id: s for s in (self.game.ruleset.items.stats if self.game.ruleset.items
                                   else [])}
        values: list[tuple[Any, int]] = []
        for item, stack in self.owned():
            worn = item_is_worn(item, stack)
            if (source == "worn" and not worn) or (source == "carried" and worn):
                continue
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
            values.append((value, stack.count))
        if pick == "count":  # ITM-ISTAT-8: any stat the item gives, number or not
            counted = [c for v, c in values if stat is None or v is not None]
            return sum(counted) if counted else default
        numbers = [(v, c) for v, c in values
                   if isinstance(v, int | float) and not isinstance(v, bool)]
        if not numbers:
            return float(default)
        if pick == "max":
            return max(v for v, _ in numbers)
        if pick == "min":
            return min(v for v, _ in numbers)
        return sum(v * c for v, c in numbers)

    def value(self, ref: ValueRef, depth: int = 0) -> float:
        """The number a value reference reads for this character, within
        ±``MAX_SHEET_NUMBER``: a sum or product of huge numbers (an invented item's stat
        times its count, a ruleset's big constants) never becomes infinite or NaN, which
        would crash the arithmetic that reads it."""
        return bounded(self._read(ref, depth))

    def _read(self, ref: ValueRef, depth: int) -> float:
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


def save_label(game: Game, ident: str) -> str:
    """The label the sheet gives a save or ability id, for a sentence; the id without one."""
    sheet = game.ruleset.sheet
    return next((r.label for r in (*sheet.saves, *sheet.abilities) if r.id == ident), ident)
