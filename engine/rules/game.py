"""A loaded ruleset with the lookups the rules need: items by reference and by name, coins."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..ruleset import Coin, Currency, Entry, Item, Problem, Ruleset, RulesetError, validate
from ..ruleset.problems import cross_references
from ..ruleset.ruleset import FightRule

# OQ-4: the default stack size and the most stacks one bag takes are single engine constants.
DEFAULT_STACK = 999_999
MAX_STACKS_PER_BAG = 500


@dataclass(frozen=True, slots=True)
class CatalogItem:
    """An item a catalog lists, known by its reference ``<catalog>/<entry>``."""

    ref: str
    label: str
    entry: Entry
    item: Item

    @property
    def stack_limit(self) -> int:
        """ITM-ENTRY-8..10: ``stack``, else the default; an item with charges stacks alone."""
        if self.item.charges is not None:
            return 1
        return self.item.stack or DEFAULT_STACK


@dataclass(frozen=True, slots=True)
class CoinInfo:
    coin: Coin
    family: Currency

    def name(self, count: int) -> str:
        """ITM-CUR-6/7: ``one`` for exactly one, else the label."""
        if count == 1 and self.coin.one is not None:
            return self.coin.one
        return self.coin.label


@dataclass(frozen=True)
class Game:
    """Everything about a ruleset the engine looks up while answering tags. Built once."""

    ruleset: Ruleset
    digest: str
    fight: FightRule
    """Which combat the ruleset fights with, decided once as it loads."""
    items: Mapping[str, CatalogItem] = field(default_factory=dict)
    item_by_name: Mapping[str, str] = field(default_factory=dict)
    coins: Mapping[str, CoinInfo] = field(default_factory=dict)
    has_fakes: bool = False  # some item passes for another (ITM-FAKE-1): fakes can exist

    @classmethod
    def build(cls, ruleset: Ruleset) -> Game:
        items: dict[str, CatalogItem] = {}
        by_name: dict[str, str] = {}
        for catalog in ruleset.catalogs:
            if catalog.holds != "items":
                continue
            for entry in catalog.entries:
                if entry.item is None:
                    continue
                ref = f"{catalog.id}/{entry.id}"
                items[ref] = CatalogItem(ref, entry.label, entry, entry.item)
                # ITM-NAME-2: of two items with one label, the first listed wins.
                by_name.setdefault(entry.label.casefold(), ref)
        coins: dict[str, CoinInfo] = {}
        if ruleset.items is not None:
            for family in ruleset.items.currencies:
                for coin in family.units:
                    coins[coin.id] = CoinInfo(coin, family)
        canonical = json.dumps(
            ruleset.model_dump(mode="json", by_alias=True, exclude_none=True),
            sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        )
        digest = hashlib.sha256(canonical.encode("utf-8")).hexdigest()
        has_fakes = any(c.item.passes_for is not None for c in items.values())
        return cls(ruleset, digest, FightRule.of(ruleset), items, by_name, coins, has_fakes)

    def find_item(self, name: str) -> CatalogItem | None:
        """ITM-NAME-1/2: the catalog item whose label equals ``name`` ignoring case."""
        ref = self.item_by_name.get(name.strip().casefold())
        if ref is None:
            ref = name.strip() if name.strip() in self.items else None
        return self.items.get(ref) if ref is not None else None


def load_ruleset(document: Mapping[str, Any] | Ruleset) -> Game:
    """Validate a ruleset document (already parsed JSON) and build its lookups.

    Raises :class:`RulesetError` listing every problem. Reading files (and ``catalogFiles``)
    is ``replay``'s job: the engine does no I/O.
    """
    if isinstance(document, Ruleset):
        ruleset: Ruleset | None = document
        problems: list[Problem] = cross_references(document)
    else:
        ruleset, problems = validate(document)
    if problems or ruleset is None:
        raise RulesetError(problems)
    return Game.build(ruleset)
