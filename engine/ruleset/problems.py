"""Everything wrong with a ruleset, each as ``JSON-pointer: message`` (ITM-INV-1: checked at
import, so an impossible rule is refused at load and never discovered in play)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from ..dice import parse_dice
from .items import Item, ItemBlock, Stat
from .ruleset import Ruleset
from .values import LIVE_KINDS, ValueRef


@dataclass(frozen=True, slots=True, order=True)
class Problem:
    """One thing wrong with a ruleset, at a JSON pointer into the file."""

    pointer: str
    message: str

    def __str__(self) -> str:
        return f"{self.pointer or '/'}: {self.message}"


class RulesetError(Exception):
    """A ruleset that cannot be loaded; ``problems`` lists every reason, not just the first."""

    def __init__(self, problems: Sequence[Problem]) -> None:
        self.problems = tuple(problems)
        super().__init__("\n".join(str(p) for p in self.problems))


def _escape(part: str | int) -> str:
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer(*parts: str | int) -> str:
    """The RFC 6901 JSON pointer of a path into the ruleset document."""
    return "".join("/" + _escape(part) for part in parts)


def from_validation_error(error: ValidationError, document: Any) -> list[Problem]:
    """Turn pydantic's errors into pointers that exist in the author's document.

    pydantic's ``loc`` also names union members and validator functions; walking the document
    along the ``loc`` and stopping at the first step that is not in it gives the place the
    author has to look at.
    """
    seen: dict[str, list[str]] = {}
    for item in error.errors(include_url=False):
        node = document
        parts: list[str | int] = []
        for step in item["loc"]:
            in_mapping = isinstance(node, Mapping) and isinstance(step, str) and step in node
            in_list = isinstance(node, list) and isinstance(step, int) and 0 <= step < len(node)
            if in_mapping or in_list:
                node = node[step]
            else:
                continue
            parts.append(step)
        message = str(item["msg"])
        if item["type"] == "extra_forbidden":
            message = f'unknown key "{parts[-1]}"' if parts else "unknown key"
        elif item["type"] == "missing":
            message = f'missing required key "{item["loc"][-1]}"'
        messages = seen.setdefault(pointer(*parts), [])
        if message not in messages:
            messages.append(message)
    return [Problem(where, "; ".join(messages)) for where, messages in seen.items()]


def _duplicates(ids: Iterable[str]) -> Iterator[tuple[int, str]]:
    seen: set[str] = set()
    for index, ident in enumerate(ids):
        if ident in seen:
            yield index, ident
        seen.add(ident)


def version_tuple(version: str) -> tuple[int, ...]:
    """ITM-GEN-4: versions compare component-wise as dot-separated integers."""
    return tuple(int(part) for part in version.split("."))


def _refs_live(ref: ValueRef, derived_live: Mapping[str, bool]) -> bool:
    if ref.kind in LIVE_KINDS:
        return True
    return ref.derived is not None and derived_live.get(ref.derived, False)


def cross_references(ruleset: Ruleset) -> list[Problem]:
    """The rules pydantic's field types cannot say: unique ids, references that must exist,
    limits across keys, and the Capability API version of what is used."""
    problems: list[Problem] = []
    add = problems.append

    sheet = ruleset.sheet
    for key, rows in (("abilities", sheet.abilities), ("skills", sheet.skills),
                      ("saves", sheet.saves), ("fields", sheet.fields),
                      ("derived", sheet.derived)):
        for index, ident in _duplicates(row.id for row in rows):
            add(Problem(pointer("sheet", key, index, "id"), f'duplicate id "{ident}"'))
    ability_ids = {a.id for a in sheet.abilities}
    for key, rows in (("skills", sheet.skills), ("saves", sheet.saves)):
        for index, skill in enumerate(rows):
            if skill.ability is not None and skill.ability not in ability_ids:
                add(Problem(pointer("sheet", key, index, "ability"),
                            f'unknown ability "{skill.ability}"'))
    for index, ability in enumerate(sheet.abilities):
        if not ability.min <= ability.default <= ability.max:
            add(Problem(pointer("sheet", "abilities", index, "default"),
                        f"default {ability.default} is outside {ability.min}..{ability.max}"))
    problems.extend(_derived_problems(ruleset))
    for index, ident in _duplicates(p.id for p in ruleset.live.pools):
        add(Problem(pointer("live", "pools", index, "id"), f'duplicate id "{ident}"'))
    for index, ident in _duplicates(c.id for c in ruleset.catalogs):
        add(Problem(pointer("catalogs", index, "id"), f'duplicate id "{ident}"'))

    if ruleset.items is not None:
        problems.extend(_item_block_problems(ruleset, ruleset.items))
    for c_index, catalog in enumerate(ruleset.catalogs):
        for index, ident in _duplicates(e.id for e in catalog.entries):
            add(Problem(pointer("catalogs", c_index, "entries", index, "id"),
                        f'duplicate id "{ident}"'))
        if catalog.holds != "items":
            continue
        if ruleset.items is None:
            add(Problem(pointer("catalogs", c_index, "holds"),
                        'a catalog that holds items needs the "items" block'))
        if catalog.feeds is not None:  # ITM-CAT-1
            add(Problem(pointer("catalogs", c_index, "feeds"),
                        "an item catalog declares no feeds"))
        for e_index, entry in enumerate(catalog.entries):
            where = ("catalogs", c_index, "entries", e_index)
            if entry.item is None:  # ITM-CAT-2
                add(Problem(pointer(*where), 'an entry of an item catalog carries an "item"'))
                continue
            for key in ("rows", "creature", "mechanics"):  # ITM-CAT-2, ITM-CAT-3
                if getattr(entry, key) is not None:
                    add(Problem(pointer(*where, key), f'an item entry carries no "{key}"'))
            if ruleset.items is not None:
                problems.extend(_item_problems(ruleset.items, entry.item, (*where, "item")))

    refs = {f"{c.id}/{e.id}" for c in ruleset.catalogs for e in c.entries}
    coin_ids = {u.id for f in (ruleset.items.currencies if ruleset.items else []) for u in f.units}
    for l_index, layer in enumerate(ruleset.layers):
        for h_index, ref in enumerate(layer.hides):
            if ref not in refs:
                add(Problem(pointer("layers", l_index, "hides", h_index),
                            f'unknown catalog entry "{ref}"'))
        for k_index, coin in enumerate(layer.coins):
            if coin not in coin_ids:
                add(Problem(pointer("layers", l_index, "coins", k_index), f'unknown coin "{coin}"'))
    for index, ident in _duplicates(layer.id for layer in ruleset.layers):
        add(Problem(pointer("layers", index, "id"), f'duplicate id "{ident}"'))
    return problems


def _derived_problems(ruleset: Ruleset) -> list[Problem]:
    """Derived values may read each other, but never in a cycle (evaluation must end)."""
    sheet = ruleset.sheet
    known = {
        "ability_score": {a.id for a in sheet.abilities},
        "ability_mod": {a.id for a in sheet.abilities},
        "field": {f.id for f in sheet.fields},
        "derived": {d.id for d in sheet.derived},
        "pool": {p.id for p in ruleset.live.pools},
    }
    problems = []
    graph: dict[str, list[str]] = {}
    for index, derived in enumerate(sheet.derived):
        graph[derived.id] = []
        for r_index, ref in enumerate(derived.of):
            target = getattr(ref, ref.kind)
            if ref.kind in known and target not in known[ref.kind]:
                problems.append(Problem(pointer("sheet", "derived", index, "of", r_index),
                                        f'unknown {ref.kind.replace("_", " ")} "{target}"'))
            if ref.derived is not None:
                graph[derived.id].append(ref.derived)
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    for index, derived in enumerate(sheet.derived):
        stack: list[tuple[str, Iterator[str]]] = [(derived.id, iter(graph[derived.id]))]
        if state.get(derived.id) == 2:
            continue
        state[derived.id] = 1
        while stack:
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                state[node] = 2
                stack.pop()
            elif state.get(child) == 1:
                problems.append(Problem(
                    pointer("sheet", "derived", index),
                    f'derived values read each other in a cycle through "{child}"'))
                state[child] = 2
            elif state.get(child) is None and child in graph:
                state[child] = 1
                stack.append((child, iter(graph[child])))
    return problems


def derived_reads_live(ruleset: Ruleset) -> dict[str, bool]:
    """Which derived values read live state, directly or through other derived values."""
    by_id = {d.id: d for d in ruleset.sheet.derived}
    result: dict[str, bool] = {}

    def visit(ident: str, depth: int) -> bool:
        if ident in result or depth > len(by_id):
            return result.get(ident, False)
        derived = by_id.get(ident)
        live = derived is not None and any(
            ref.kind in LIVE_KINDS or (ref.derived is not None and visit(ref.derived, depth + 1))
            for ref in derived.of
        )
        result[ident] = live
        return live

    for ident in by_id:
        visit(ident, 0)
    return result


def _item_block_problems(ruleset: Ruleset, block: ItemBlock) -> list[Problem]:
    problems: list[Problem] = []
    add = problems.append
    for key in ("categories", "rarities", "tags", "stats", "slots", "currencies"):
        for index, ident in _duplicates(row.id for row in getattr(block, key)):
            add(Problem(pointer("items", key, index, "id"), f'duplicate id "{ident}"'))
    coin_seen: set[str] = set()
    for f_index, family in enumerate(block.currencies):
        for u_index, coin in enumerate(family.units):
            if coin.id in coin_seen:  # ITM-CUR-5
                add(Problem(pointer("items", "currencies", f_index, "units", u_index, "id"),
                            f'coin id "{coin.id}" is used by another coin'))
            coin_seen.add(coin.id)
        for u_index, value in _duplicates(str(u.value) for u in family.units):  # ITM-CUR-3
            add(Problem(pointer("items", "currencies", f_index, "units", u_index, "value"),
                        f"two coins of one family have the value {value}"))
        if min(u.value for u in family.units) != 1:  # ITM-CUR-2
            add(Problem(pointer("items", "currencies", f_index, "units"),
                        "the smallest coin of a family is worth 1"))
        if family.per_weight is not None and block.carry is None:  # ITM-CUR-8
            add(Problem(pointer("items", "currencies", f_index, "perWeight"),
                        'perWeight needs "carry" in the item block'))
    stats = {s.id: s for s in block.stats}
    for index, stat in enumerate(block.stats):
        if stat.type == "enum" and not stat.values:
            add(Problem(pointer("items", "stats", index, "values"),
                        "an enum stat lists its values"))
        if stat.min is not None and stat.max is not None and stat.min > stat.max:
            add(Problem(pointer("items", "stats", index, "min"), "min is above max"))
        if stat.default is not None and (reason := stat_value_problem(stat, stat.default)):
            add(Problem(pointer("items", "stats", index, "default"), reason))
    derived_live = derived_reads_live(ruleset)
    if block.carry is not None:
        weight = stats.get(block.carry.stat)
        if weight is None or weight.type != "number":  # ITM-BLOCK-17
            add(Problem(pointer("items", "carry", "stat"),
                        f'carry.stat "{block.carry.stat}" is not a number stat of the block'))
        elif weight.min is None or weight.min < 0:
            add(Problem(pointer("items", "carry", "stat"),
                        f'the weight stat "{weight.id}" needs a min of 0 or more'))
        for key in ("encumbered_above", "limit"):  # ITM-BLOCK-18
            ref = getattr(block.carry, key)
            if ref is not None and _refs_live(ref, derived_live):
                add(Problem(pointer("items", "carry", "encumberedAbove" if key != "limit" else key),
                            "reads live state (a pool, an item or a derived value that does)"))
    if block.binding is not None and _refs_live(block.binding.max, derived_live):  # ITM-BLOCK-15
        add(Problem(pointer("items", "binding", "max"),
                    "reads live state (a pool, an item or a derived value that does)"))
    rarities = {r.id for r in block.rarities}
    for index, cap in enumerate(block.rarity_caps):
        if cap.rarity not in rarities:
            add(Problem(pointer("items", "rarityCaps", index, "rarity"),
                        f'unknown rarity "{cap.rarity}"'))
    for index, ident in _duplicates(c.rarity for c in block.rarity_caps):  # ITM-CAPS-1
        add(Problem(pointer("items", "rarityCaps", index, "rarity"),
                    f'a second cap for rarity "{ident}"'))
    return problems


def stat_value_problem(stat: Stat, value: object) -> str | None:
    """Why ``value`` is not one the stat can take (ITM-ENTRY-6), or None."""
    kind = stat.type
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f'"{stat.id}" takes a number'
        if stat.integer and float(value) != int(value):
            return f'"{stat.id}" takes whole numbers'
        if stat.min is not None and value < stat.min:
            return f'{value} is below the minimum {stat.min:g} of "{stat.id}"'
        if stat.max is not None and value > stat.max:
            return f'{value} is above the maximum {stat.max:g} of "{stat.id}"'
    elif kind == "boolean" and not isinstance(value, bool):
        return f'"{stat.id}" takes true or false'
    elif kind in ("text", "dice") and not isinstance(value, str):
        return f'"{stat.id}" takes a string'
    elif kind == "enum" and value not in (stat.values or []):
        return f'"{value}" is not one of the values of "{stat.id}"'
    elif kind == "dice" and isinstance(parse_dice(str(value)), str):
        return f'"{value}" is not dice notation'
    return None


def _item_problems(block: ItemBlock, item: Item, where: tuple[str | int, ...]) -> list[Problem]:
    problems: list[Problem] = []
    add = problems.append
    if item.category not in {c.id for c in block.categories}:  # ITM-ENTRY-3
        add(Problem(pointer(*where, "category"), f'unknown category "{item.category}"'))
    if item.rarity is not None and item.rarity not in {r.id for r in block.rarities}:
        add(Problem(pointer(*where, "rarity"), f'unknown rarity "{item.rarity}"'))  # ITM-ENTRY-4
    tags = {t.id for t in block.tags}
    for index, tag in enumerate(item.tags):  # ITM-ENTRY-5
        if tag not in tags:
            add(Problem(pointer(*where, "tags", index), f'unknown tag "{tag}"'))
    stats = {s.id: s for s in block.stats}
    for key, value in item.stats.items():  # ITM-ENTRY-6
        stat = stats.get(key)
        if stat is None:
            add(Problem(pointer(*where, "stats", key), f'unknown stat "{key}"'))
        elif (reason := stat_value_problem(stat, value)) is not None:
            add(Problem(pointer(*where, "stats", key), reason))
    slots = {s.id: s for s in block.slots}
    for key, count in item.slots.items():  # ITM-ENTRY-7
        slot = slots.get(key)
        if slot is None:
            add(Problem(pointer(*where, "slots", key), f'unknown slot "{key}"'))
        elif not 1 <= count <= slot.count:
            add(Problem(pointer(*where, "slots", key),
                        f"takes {count} of a slot a character has {slot.count} of"))
    coins = {u.id for f in block.currencies for u in f.units}
    if item.cost is not None and item.cost.unit not in coins:  # ITM-ENTRY-11
        add(Problem(pointer(*where, "cost", "unit"), f'unknown coin "{item.cost.unit}"'))
    if item.binds is not None and block.binding is None:  # ITM-ENTRY-18
        add(Problem(pointer(*where, "binds"), 'items bind only in a ruleset with "binding"'))
    if item.service:  # ITM-SVC-5
        if item.cost is None:
            add(Problem(pointer(*where, "service"), "a service has a cost"))
        for key in ("slots", "stack", "binds", "worn", "carried", "requires", "attack", "use",
                    "charges"):
            if getattr(item, key) not in (None, {}, []):
                add(Problem(pointer(*where, key), f'a service has no "{key}"'))
    return problems


def validate(document: Any) -> tuple[Ruleset | None, list[Problem]]:
    """Validate a ruleset document: the model, then the cross-references. Never raises."""
    if not isinstance(document, Mapping):
        return None, [Problem("", "a ruleset is a JSON object")]
    try:
        ruleset = Ruleset.model_validate(document)
    except ValidationError as error:
        return None, from_validation_error(error, document)
    return ruleset, cross_references(ruleset)
