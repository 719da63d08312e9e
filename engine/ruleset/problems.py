"""Everything wrong with a ruleset, each as ``JSON-pointer: message`` (ITM-INV-1: checked at
import, so an impossible rule is refused at load and never discovered in play)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from types import UnionType
from typing import Annotated, Any, Literal, TypeGuard, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError

from ..dice import parse_dice
from .effects import Modifier
from .fight_problems import fight_problems
from .items import Item, ItemBlock
from .pointers import Problem, RulesetError, did_you_mean, duplicates, pointer
from .references import block_problems, stat_value_problem
from .resolution_problems import resolution_problems
from .ruleset import Ruleset
from .values import LIVE_KINDS, ItemStatRef, ValueRef
from .versions import version_problems, version_tuple, walk

__all__ = ["Problem", "RulesetError", "cross_references", "pointer", "stat_value_problem",
           "validate", "version_tuple"]

LIVE = "reads live state (a pool, an item or a derived value that does)"


def from_validation_error(error: ValidationError, document: Any,
                          model: type[BaseModel] | None = None) -> list[Problem]:
    """Turn pydantic's errors into pointers that exist in the author's document.

    pydantic's ``loc`` also names union members and validator functions; walking the document
    along the ``loc`` and stopping at the first step that is not in it gives the place the
    author has to look at. With the ``model`` that was validated, an unknown key names the
    known key it most likely meant.
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
            if parts and model is not None:
                message += did_you_mean(str(parts[-1]), known_keys(model, item["loc"][:-1]))
        elif item["type"] == "missing":
            message = f'missing required key "{item["loc"][-1]}"'
        messages = seen.setdefault(pointer(*parts), [])
        if message not in messages:
            messages.append(message)
    return [Problem(where, "; ".join(messages)) for where, messages in seen.items()]


def known_keys(model: type[BaseModel], loc: Sequence[str | int]) -> set[str]:
    """The keys an object at ``loc`` (pydantic's error location, union tags and all) may
    have: the fields of the model or models that the location leads to, by their JSON names."""
    types: list[Any] = [model]
    for step in loc:
        models = [t for t in _members(types) if _is_model(t)]
        fields = [f for m in models for name, f in m.model_fields.items()
                  if step in (name, f.alias)]
        if fields:
            types = [f.annotation for f in fields]
            continue
        chosen = [m for m in models if m.__name__ == step or _tagged(m, step)]
        if chosen:  # the step names a member of a union
            types = chosen
            continue
        types = [args[-1] if get_origin(t) in (dict, Mapping) else args[0]
                 for t in _members(types)
                 if get_origin(t) is not None and (args := get_args(t))]
    return {f.alias or name for m in _members(types) if _is_model(m)
            for name, f in m.model_fields.items()}


def _members(types: Sequence[Any]) -> list[Any]:
    """The types a union or an ``Annotated`` stands for, flattened."""
    found: list[Any] = []
    pending = list(types)
    while pending:
        kind = pending.pop(0)
        origin = get_origin(kind)
        if origin is Annotated:
            pending.insert(0, get_args(kind)[0])
        elif origin in (Union, UnionType):
            pending[:0] = [arg for arg in get_args(kind) if arg is not type(None)]
        else:
            found.append(kind)
    return found


def _is_model(kind: Any) -> TypeGuard[type[BaseModel]]:
    return isinstance(kind, type) and issubclass(kind, BaseModel)


def _tagged(model: type[BaseModel], tag: str | int) -> bool:
    """Whether ``tag`` is a literal value of one of the model's fields (a union's tag)."""
    return any(get_origin(f.annotation) is Literal and tag in get_args(f.annotation)
               for f in model.model_fields.values())


def _refs_live(ref: ValueRef, derived_live: Mapping[str, bool],
               kinds: frozenset[str] = LIVE_KINDS) -> bool:
    if ref.kind in kinds:
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
        for index, ident in duplicates(row.id for row in rows):
            add(Problem(pointer("sheet", key, index, "id"), f'duplicate id "{ident}"'))
    ability_ids = {a.id for a in sheet.abilities}
    for key, rows in (("skills", sheet.skills), ("saves", sheet.saves)):
        for index, skill in enumerate(rows):
            if skill.ability is not None and skill.ability not in ability_ids:
                add(Problem(pointer("sheet", key, index, "ability"),
                            f'unknown ability "{skill.ability}"'))
    for index, ability in enumerate(sheet.abilities):
        if ability.min > ability.max:
            add(Problem(pointer("sheet", "abilities", index, "min"), "min is above max"))
        elif not ability.min <= ability.default <= ability.max:
            add(Problem(pointer("sheet", "abilities", index, "default"),
                        f"default {ability.default} is outside {ability.min}..{ability.max}"))
    for key, rows in (("skills", sheet.skills), ("saves", sheet.saves)):
        for index, skill in enumerate(rows):
            if skill.bonus_range is not None and skill.bonus_range[0] > skill.bonus_range[1]:
                add(Problem(pointer("sheet", key, index, "bonusRange"),
                            "the lowest bonus is above the highest"))
    problems.extend(_derived_problems(ruleset))
    for index, ident in duplicates(p.id for p in ruleset.live.pools):
        add(Problem(pointer("live", "pools", index, "id"), f'duplicate id "{ident}"'))
    reads_items = derived_reads_live(ruleset, frozenset({"item_stat"}))
    for index, pool in enumerate(ruleset.live.pools):
        if index and pool.health and any(p.health for p in ruleset.live.pools[:index]):
            add(Problem(pointer("live", "pools", index, "health"), "a second health pool"))
        if _refs_live(pool.max, reads_items, frozenset({"item_stat"})):  # ITM-ISTAT-12
            add(Problem(pointer("live", "pools", index, "max"),
                        "reads items (itemStat, or a derived value that does)"))
    check_value = value_checker(ruleset)
    for index, pool in enumerate(ruleset.live.pools):
        problems.extend(check_value(("live", "pools", index, "max"), pool.max, True))
    problems.extend(_track_problems(ruleset, reads_items, check_value))
    for index, ident in duplicates(c.id for c in ruleset.conditions):
        add(Problem(pointer("conditions", index, "id"), f'duplicate id "{ident}"'))
    for index, ident in duplicates(r.id for r in ruleset.rests):
        add(Problem(pointer("rests", index, "id"), f'duplicate id "{ident}"'))
    for index, ident in duplicates(c.id for c in ruleset.catalogs):
        add(Problem(pointer("catalogs", index, "id"), f'duplicate id "{ident}"'))

    if ruleset.items is not None:
        problems.extend(_item_block_problems(ruleset, ruleset.items))
        problems.extend(block_problems(ruleset, ruleset.items, check_value))
    nodes = list(walk(ruleset))
    problems.extend(_item_stat_problems(ruleset, nodes))
    for c_index, catalog in enumerate(ruleset.catalogs):
        for index, ident in duplicates(e.id for e in catalog.entries):
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
    for index, ident in duplicates(layer.id for layer in ruleset.layers):
        add(Problem(pointer("layers", index, "id"), f'duplicate id "{ident}"'))
    if ruleset.items is not None:
        for l_index, layer in enumerate(ruleset.layers):
            for f_index, row in enumerate(layer.items.unsold if layer.items else []):
                problems.extend(_filter_problems(ruleset.items, row,
                                                 ("layers", l_index, "items", "unsold", f_index)))
    problems.extend(fight_problems(ruleset, check_value))
    problems.extend(version_problems(ruleset, nodes))
    problems.extend(resolution_problems(ruleset))
    return problems


def _track_problems(ruleset: Ruleset, reads_items: Mapping[str, bool],
                    check_value: Callable[[tuple[str | int, ...], ValueRef, bool],
                                          list[Problem]]) -> list[Problem]:
    """Health and wound tracks (docs/rules/items.md#1-glossary "track", ITM-OUT-3, ITM-OUT-11): ids
    apart from the pools', one health pool or health track in all, a max that reads no item
    (ITM-ISTAT-12), and penalties only on a wound track, rising, within its max."""
    problems: list[Problem] = []
    add = problems.append
    live = ruleset.live
    pool_ids = {p.id for p in live.pools}
    skills = {s.id for s in ruleset.sheet.skills}
    saves = {s.id for s in ruleset.sheet.saves}
    for index, ident in duplicates(t.id for t in live.tracks):
        add(Problem(pointer("live", "tracks", index, "id"), f'duplicate id "{ident}"'))
    health_seen = any(p.health for p in live.pools)
    for index, track in enumerate(live.tracks):
        where = ("live", "tracks", index)
        if track.id in pool_ids:
            add(Problem(pointer(*where, "id"), f'"{track.id}" is already the id of a pool'))
        if track.kind == "health":
            if health_seen:
                add(Problem(pointer(*where, "kind"), "a second health pool or health track"))
            health_seen = True
        if _refs_live(track.max, reads_items, frozenset({"item_stat"})):  # ITM-ISTAT-12
            add(Problem(pointer(*where, "max"),
                        "reads items (itemStat, or a derived value that does)"))
        problems.extend(check_value((*where, "max"), track.max, True))
        if track.max.const is not None and track.max.const < 1:
            add(Problem(pointer(*where, "max"), "a track holds at least 1"))
        if track.penalties and track.kind != "wounds":
            add(Problem(pointer(*where, "penalties"), "only a wound track has penalties"))
        previous = 0
        for p_index, penalty in enumerate(track.penalties):
            at = (*where, "penalties", p_index)
            if penalty.at_least <= previous:
                add(Problem(pointer(*at, "atLeast"),
                            f"penalties rise: atLeast {penalty.at_least} is not above {previous}"))
            previous = max(previous, penalty.at_least)
            if track.max.const is not None and penalty.at_least > track.max.const:
                add(Problem(pointer(*at, "atLeast"),
                            f"atLeast {penalty.at_least} is above the track's max "
                            f"{track.max.const:g}"))
            for m_index, modifier in enumerate(penalty.modifiers):
                problems.extend(_penalty_modifier_problems(
                    modifier, (*at, "modifiers", m_index), skills, saves))
    return problems


def _penalty_modifier_problems(modifier: Modifier, where: tuple[str | int, ...],
                               skills: set[str], saves: set[str]) -> list[Problem]:
    """ITM-WORN-4 as a wound penalty: it changes checks or saves, with dice gmtags rolls and
    the sheet's own skills and saves."""
    problems: list[Problem] = []
    if modifier.to not in ("checks", "saves"):
        problems.append(Problem(pointer(*where, "to"),
                                f'a wound penalty changes "checks" or "saves", not '
                                f'"{modifier.to}"'))
    if modifier.dice is not None and isinstance(reason := parse_dice(modifier.dice), str):
        problems.append(Problem(pointer(*where, "dice"), reason))
    for key, known in (("skills", skills), ("saves", saves)):
        for index, ident in enumerate(getattr(modifier, key) or ()):
            if ident not in known:
                problems.append(Problem(pointer(*where, key, index),
                                        f'unknown {key[:-1]} "{ident}"'))
    if modifier.flat is None and modifier.dice is None and modifier.mode is None:
        problems.append(Problem(pointer(*where), "a wound penalty has a flat, dice or mode"))
    return problems


def referable_ids(ruleset: Ruleset) -> dict[str, set[str]]:
    """The ids each kind of value reference may name in this ruleset."""
    sheet = ruleset.sheet
    return {
        "ability_score": {a.id for a in sheet.abilities},
        "ability_mod": {a.id for a in sheet.abilities},
        "field": {f.id for f in sheet.fields},
        "derived": {d.id for d in sheet.derived},
        "pool": {p.id for p in ruleset.live.pools},
    }


def _derived_problems(ruleset: Ruleset) -> list[Problem]:
    """Derived values may read each other, but never in a cycle (evaluation must end)."""
    known = referable_ids(ruleset)
    problems = []
    graph: dict[str, list[str]] = {}
    for index, derived in enumerate(ruleset.sheet.derived):
        graph[derived.id] = []
        for r_index, ref in enumerate(derived.of):
            target = getattr(ref, ref.kind)
            if ref.kind in known and target not in known[ref.kind]:
                problems.append(Problem(pointer("sheet", "derived", index, "of", r_index),
                                        f'unknown {ref.kind.replace("_", " ")} "{target}"'))
            if ref.derived is not None:
                graph[derived.id].append(ref.derived)
    state: dict[str, int] = {}  # 1 = on the path, 2 = done
    for index, derived in enumerate(ruleset.sheet.derived):
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


def derived_reads_live(ruleset: Ruleset,
                       kinds: frozenset[str] = LIVE_KINDS) -> dict[str, bool]:
    """Which derived values read live state (references of ``kinds``), directly or through
    other derived values."""
    by_id = {d.id: d for d in ruleset.sheet.derived}
    result: dict[str, bool] = {}

    def visit(ident: str, depth: int) -> bool:
        if ident in result or depth > len(by_id):
            return result.get(ident, False)
        derived = by_id.get(ident)
        live = derived is not None and any(
            ref.kind in kinds or (ref.derived is not None and visit(ref.derived, depth + 1))
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
        for index, ident in duplicates(row.id for row in getattr(block, key)):
            add(Problem(pointer("items", key, index, "id"), f'duplicate id "{ident}"'))
    coin_seen: set[str] = set()
    for f_index, family in enumerate(block.currencies):
        for u_index, coin in enumerate(family.units):
            if coin.id in coin_seen:  # ITM-CUR-5
                add(Problem(pointer("items", "currencies", f_index, "units", u_index, "id"),
                            f'coin id "{coin.id}" is used by another coin'))
            coin_seen.add(coin.id)
        for u_index, value in duplicates(str(u.value) for u in family.units):  # ITM-CUR-3
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
    for index, ident in duplicates(c.rarity for c in block.rarity_caps):  # ITM-CAPS-1
        add(Problem(pointer("items", "rarityCaps", index, "rarity"),
                    f'a second cap for rarity "{ident}"'))
    return problems


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


def value_checker(ruleset: Ruleset) -> Callable[[tuple[str | int, ...], ValueRef, bool],
                                                list[Problem]]:
    """A check of one value reference: what it names exists, and (unless ``live_ok``) it reads
    no live state (ITM-BLOCK-15/18, ITM-GEAR-14)."""
    known = referable_ids(ruleset)
    derived_live = derived_reads_live(ruleset)

    def check(where: tuple[str | int, ...], ref: ValueRef, live_ok: bool) -> list[Problem]:
        target = getattr(ref, ref.kind)
        if ref.kind in known and target not in known[ref.kind]:
            return [Problem(pointer(*where), f'unknown {ref.kind.replace("_", " ")} "{target}"')]
        if not live_ok and _refs_live(ref, derived_live):
            return [Problem(pointer(*where), LIVE)]
        return []

    return check


def _filter_problems(block: ItemBlock, row: Any, where: tuple[str | int, ...]) -> list[Problem]:
    """ITM-MKT-6: an item filter names block ids."""
    problems = []
    for key, ids in (("rarity", block.rarities), ("category", block.categories),
                     ("tag", block.tags)):
        ident = getattr(row, key, None)
        if ident is not None and ident not in {r.id for r in ids}:
            problems.append(Problem(pointer(*where, key), f'unknown {key} "{ident}"'))
    return problems


def _item_stat_problems(ruleset: Ruleset,
                        nodes: list[tuple[tuple[str | int, ...], BaseModel]]) -> list[Problem]:
    """ITM-ISTAT-7/9: every ``itemStat`` names a block stat (a number stat for sum, max and
    min), and slots, categories and tags the block has."""
    problems: list[Problem] = []
    block = ruleset.items
    for path, node in nodes:
        if not isinstance(node, ValueRef) or node.item_stat is None:
            continue
        spec = ItemStatRef.model_validate(node.item_stat)
        where = (*path, "itemStat")
        if block is None:
            problems.append(Problem(pointer(*where), 'itemStat needs the "items" block'))
            continue
        stats = {s.id: s for s in block.stats}
        stat = stats.get(spec.stat) if spec.stat is not None else None
        if spec.stat is not None and stat is None:
            problems.append(Problem(pointer(*where, "stat"), f'unknown stat "{spec.stat}"'))
        elif stat is not None and spec.pick != "count" and stat.type != "number":
            problems.append(Problem(pointer(*where, "stat"),
                                    f'pick "{spec.pick}" needs a number stat, not "{stat.id}"'))
        problems.extend(_item_stat_filters(block, spec, where))
    return problems


def _item_stat_filters(block: ItemBlock, spec: ItemStatRef,
                       where: tuple[str | int, ...]) -> list[Problem]:
    problems = _filter_problems(block, spec, where)
    if spec.slot is not None and spec.slot not in {s.id for s in block.slots}:
        problems.append(Problem(pointer(*where, "slot"), f'unknown slot "{spec.slot}"'))
    return problems


def validate(document: Any) -> tuple[Ruleset | None, list[Problem]]:
    """Validate a ruleset document: the model, then the cross-references. Never raises."""
    if not isinstance(document, Mapping):
        return None, [Problem("", "a ruleset is a JSON object")]
    try:
        ruleset = Ruleset.model_validate(document)
    except ValidationError as error:
        return None, from_validation_error(error, document, Ruleset)
    return ruleset, cross_references(ruleset)
