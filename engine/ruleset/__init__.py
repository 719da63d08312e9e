"""The ruleset file as typed, frozen pydantic models, split by block, and the checks of it.

The modules import only downwards: ``base`` and ``pointers`` (wire conventions, ids, JSON
pointers), ``values``, the blocks (``effects``, ``fakes``, ``loot``, ``resolution``; ``combat``,
``gear``, ``market``, ``sheet``; ``items``), ``ruleset`` (the whole file), then the rules the
field types cannot say (``versions``, ``references``, ``resolution_problems``) and ``problems``
(:func:`validate`). tests/engine/ruleset/test_ruleset_layers.py holds that order."""

from .base import Labelled, RulesetModel
from .combat import Attack, Charges, StatRead, Toggle, Use
from .fakes import RevealWay, Tell
from .gear import GearLine, StartingGear
from .items import Binds, Catalog, Coin, Cost, Currency, Entry, Item, ItemBlock, Sold, Stat
from .loot import ItemFilter, LootRow, LootTable
from .market import Market, Place, PriceLevel, Seller, SoldRule
from .pointers import Problem, RulesetError
from .problems import validate
from .resolution import Resolution
from .ruleset import Ruleset
from .sheet import Sheet
from .values import ItemStatRef, Threshold, ValueRef
from .versions import version_tuple

__all__ = [
    "Attack", "Binds", "Catalog", "Charges", "Coin", "Cost", "Currency", "Entry", "GearLine",
    "Item", "ItemBlock", "ItemFilter", "ItemStatRef", "Labelled", "LootRow", "LootTable", "Market",
    "Place", "PriceLevel", "Problem", "Resolution", "RevealWay", "Ruleset", "RulesetError",
    "RulesetModel", "Seller", "Sheet", "Sold", "SoldRule", "StartingGear", "Stat", "StatRead",
    "Tell", "Threshold", "Toggle", "Use", "ValueRef", "validate", "version_tuple",
]
