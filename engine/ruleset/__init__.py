"""The ruleset file as typed, frozen pydantic models, split by block, and the checks of it.

The modules import only downwards: ``base``, ``pointers`` and ``formula`` (wire conventions,
ids, JSON pointers, the formula grammar), ``values``, the blocks (``effects``, ``fakes``,
``loot``, ``resolution``; ``combat``, ``gear``, ``market``, ``sheet``; ``items`` and ``fight``,
the combat block), ``ruleset`` (the whole file), then the rules the field types cannot say
(``versions``, ``references``; ``resolution_problems``, ``fight_problems``) and ``problems``
(:func:`validate`). tests/engine/ruleset/test_ruleset_layers.py holds that order."""

from .base import Labelled, RulesetModel
from .combat import Attack, Charges, StatRead, Toggle, Use
from .fakes import RevealWay, Tell
from .fight import Combat, CombatCondition, Read, Template, reference_read
from .formula import Formula, FormulaError, parse_formula
from .gear import GearLine, StartingGear
from .items import Binds, Catalog, Coin, Cost, Currency, Entry, Item, ItemBlock, Sold, Stat
from .loot import ItemFilter, LootRow, LootTable
from .market import Market, Place, PriceLevel, Seller, SoldRule
from .pointers import Problem, RulesetError
from .problems import validate
from .resolution import Resolution
from .ruleset import Ruleset, combat_kind
from .sheet import Sheet
from .values import ItemStatRef, Threshold, ValueRef
from .versions import version_tuple

__all__ = [
    "Attack", "Binds", "Catalog", "Charges", "Coin", "Combat", "CombatCondition", "Cost",
    "Currency", "Entry", "Formula", "FormulaError", "GearLine",
    "Item", "ItemBlock", "ItemFilter", "ItemStatRef", "Labelled", "LootRow", "LootTable", "Market",
    "Place", "PriceLevel", "Problem", "Read", "Resolution", "RevealWay", "Ruleset", "RulesetError",
    "RulesetModel", "Seller", "Sheet", "Sold", "SoldRule", "StartingGear", "Stat", "StatRead",
    "Tell", "Template", "Threshold", "Toggle", "Use", "ValueRef", "combat_kind", "parse_formula",
    "reference_read", "validate", "version_tuple",
]
