"""ITM-GEN-2..4 and docs/rules/items.md#appendix-e-capability-api-versions: the Capability API
version each feature needs. A ruleset that uses a feature must declare at least that version (OQ-1:
refused at import); versions compare as dot-separated integers (OQ-2: taken literally)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from pydantic import BaseModel

from .combat import Attack, Charges, Damage, OnHit, Plus, ToHit, Use
from .effects import Effects
from .fight import OffHand, TemplateCombat
from .foe_abilities import FoeAbility
from .items import Carry, Coin, Entry, Item, ItemBlock, RarityCap, Sold
from .loot import LootRow
from .market import Market, Place, Seller, SoldRule
from .pointers import Problem, pointer
from .ruleset import Ruleset
from .sheet import Layer
from .values import ValueRef

Path = tuple[str | int, ...]


def version_tuple(version: str) -> tuple[int, ...]:
    """ITM-GEN-4: versions compare component-wise as dot-separated integers."""
    return tuple(int(part) for part in version.split("."))


_FIELDS: dict[type[BaseModel], tuple[tuple[str, str], ...]] = {}
_LEAVES = (str, int, float, bool)


def _fields(model: type[BaseModel]) -> tuple[tuple[str, str], ...]:
    fields = _FIELDS.get(model)
    if fields is None:
        fields = tuple((name, info.alias or name) for name, info in model.model_fields.items())
        _FIELDS[model] = fields
    return fields


def walk(node: Any, path: Path = ()) -> Iterator[tuple[Path, BaseModel]]:
    """Every model in a ruleset tree, in document order, with its path of wire keys."""
    if isinstance(node, BaseModel):
        yield path, node
        for name, alias in _fields(type(node)):
            value = getattr(node, name)
            if value is not None and not isinstance(value, _LEAVES) and value:
                yield from walk(value, (*path, alias))
    elif isinstance(node, list | tuple):
        for index, value in enumerate(node):
            if not isinstance(value, _LEAVES):
                yield from walk(value, (*path, index))
    elif isinstance(node, dict):
        for key, value in node.items():
            if isinstance(value, BaseModel | list | tuple):
                yield from walk(value, (*path, key))


def _set(key: str) -> Callable[[Any], bool]:
    """The key is written (a value other than None, empty or ``false``)."""
    def used(node: Any) -> bool:
        value = getattr(node, key)
        return value not in (None, [], {}, False)
    return used


def _given(key: str) -> Callable[[Any], bool]:
    """The author wrote the key, whatever its value."""
    return lambda node: key in node.model_fields_set


# (model, wire key, is it used, feature, version); Appendix E in its order.
FEATURES: list[tuple[type[BaseModel], str, Callable[[Any], bool], str, str]] = [
    (RarityCap, "rarity", _set("rarity"), "rarityCaps", "1.51"),
    (ItemBlock, "propose", _given("propose"), "propose", "1.51"),
    (ValueRef, "itemStat", _set("item_stat"), "itemStat", "1.52"),
    (Item, "worn", _set("worn"), "worn", "1.53"),
    (Item, "carried", _set("carried"), "carried", "1.53"),
    (RarityCap, "bonus", _set("bonus"), "rarityCaps[].bonus", "1.53"),
    (Item, "requires", _set("requires"), "requires", "1.54"),
    (Effects, "abilities", _set("abilities"), "abilities", "1.54"),
    (Item, "attack", _set("attack"), "attack", "1.55"),
    (Effects, "", lambda node: bool(node.model_extra), "worn/carried in combat", "1.56"),
    (Attack, "ammo", _set("ammo"), "ammo", "1.57"),
    (Attack, "clip", _set("clip"), "clip", "1.57"),
    (Attack, "modes", _set("modes"), "modes", "1.58"),
    (Attack, "offHand", _set("off_hand"), "offHand", "1.58"),
    (Attack, "floor", _set("floor"), "floor", "1.58"),
    (Attack, "onHit", _set("on_hit"), "onHit", "1.58"),
    (Item, "use", _set("use"), "use", "1.59"),
    (Item, "charges", _set("charges"), "charges", "1.59"),
    (Use, "restore", _set("restore"), "restore", "1.60"),
    (Charges, "recharge", _set("recharge"), "charges.recharge", "1.61"),
    (Charges, "breaksOn", _set("breaks_on"), "charges.breaksOn", "1.61"),
    (Use, "gate", _set("gate"), "gate", "1.62"),
    (ItemBlock, "lootTables", _set("loot_tables"), "lootTables", "1.63"),
    (LootRow, "coins", _set("coins"), "a loot row with coins", "1.64"),
    (Layer, "coins", _set("coins"), "a layer that takes out coins", "1.64"),
    (ItemBlock, "market", _set("market"), "market", "1.65"),
    (Sold, "place", _set("place"), "an item's sold place", "1.65"),
    (Item, "service", _set("service"), "service", "1.65"),
    (Place, "purse", _set("purse"), "purse", "1.69"),
    (Market, "buyBack", _set("buy_back"), "buyBack", "1.69"),
    (Seller, "stock", _set("stock"), "stock", "1.69"),
    (SoldRule, "limited", _set("limited"), "limited", "1.69"),
    (Sold, "limited", _set("limited"), "limited", "1.69"),
    (SoldRule, "", lambda node: node.place is None, "sold without a place", "1.69"),
    (ItemBlock, "startingGear", _set("starting_gear"), "startingGear", "1.78"),
    (Item, "risky", _set("risky"), "risky", "1.79"),
    (Item, "passesFor", _set("passes_for"), "passesFor", "1.79"),
    (Seller, "honest", lambda node: node.honest is False, "honest: false", "1.79"),
    (Carry, "unit", _set("unit"), "carry.unit", "1.791"),
    (Item, "tells", _set("tells"), "tells", "1.802"),
    (Seller, "manner", _set("manner"), "manner", "1.802"),
    (ItemBlock, "namesItAt", _set("names_it_at"), "namesItAt", "1.802"),
    (ItemBlock, "passiveBase", _given("passive_base"), "passiveBase", "1.802"),
    (ItemBlock, "warnBy", _set("warn_by"), "warnBy", "1.802"),
    (ItemBlock, "revealsFakes", _set("reveals_fakes"), "revealsFakes", "1.802"),
    (Item, "foolsReveal", _set("fools_reveal"), "foolsReveal", "1.802"),
    (Market, "unsold", _set("unsold"), "unsold", "1.813"),
    (Layer, "items", _set("items"), "a layer's items", "1.813"),
    (Coin, "one", _set("one"), "a coin's one", "1.89"),
    (ToHit, "sheetBonus", _set("sheet_bonus"), "toHit.sheetBonus", "1.95"),
    (Damage, "sheetBonus", _set("sheet_bonus"), "damage.sheetBonus", "1.97"),
    (OffHand, "fullWhen", _set("full_when"), "offHand.fullWhen", "1.97"),
    (Damage, "rerollUpTo", _set("reroll_up_to"), "damage.rerollUpTo", "1.98"),
    (Entry, "mechanics", lambda node: isinstance(node.mechanics, dict)
     and "qualities" in node.mechanics, "qualities", "1.101"),
    (TemplateCombat, "qualities", _set("qualities"), "qualities", "1.101"),  # ITM-WPN-29
    (FoeAbility, "qualities", _set("qualities"), "qualities", "1.101"),
    (OnHit, "save", _set("save"), "onHit[].save", "1.169"),
    (OnHit, "saveEnds", _set("save_ends"), "onHit[].saveEnds", "1.169"),
    (Attack, "plus", _set("plus"), "plus", "1.169"),
    (Item, "toggle", _set("toggle"), "toggle", "1.170"),
    (Plus, "when", lambda node: node.when == "toggled", 'plus[].when: "toggled"', "1.170"),
    (Use, "concentration", _set("concentration"), "use.concentration", "1.174"),
    (Use, "zone", _set("zone"), "use.zone", "1.174"),
]
_BY_MODEL: dict[type[BaseModel], list[tuple[str, Callable[[Any], bool], str, str]]] = {}
for _model, _key, _used, _feature, _version in FEATURES:
    _BY_MODEL.setdefault(_model, []).append((_key, _used, _feature, _version))


def used_features(ruleset: Ruleset, nodes: list[tuple[Path, BaseModel]] | None = None,
                  ) -> Iterator[tuple[Path, str, str]]:
    """(path, feature, version) for the first use of every feature, in document order
    (``nodes``: the ruleset's :func:`walk`, when the caller has it already)."""
    seen: set[str] = set()
    if ruleset.items is not None or any(c.holds == "items" for c in ruleset.catalogs):
        seen.add("items")  # ITM-GEN-2
        yield ("items",) if ruleset.items is not None else ("catalogs",), "the items block", "1.49"
    for path, node in walk(ruleset) if nodes is None else nodes:
        for key, used, feature, version in _BY_MODEL.get(type(node), ()):
            if feature not in seen and used(node):
                seen.add(feature)
                yield ((*path, key) if key else path), feature, version


def version_problems(ruleset: Ruleset,
                     nodes: list[tuple[Path, BaseModel]] | None = None) -> list[Problem]:
    """ITM-GEN-3: every feature used needs a ``capabilityApi`` at least its version."""
    declared = version_tuple(ruleset.capability_api)
    return [Problem(pointer(*path), f"{feature} needs capabilityApi {version} or later "
                                    f"(the ruleset declares {ruleset.capability_api})")
            for path, feature, version in used_features(ruleset, nodes)
            if version_tuple(version) > declared]
