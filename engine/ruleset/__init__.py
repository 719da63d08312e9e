"""The ruleset file as typed, frozen pydantic models, split by block."""

from .base import Labelled, RulesetModel
from .items import Catalog, Coin, Cost, Currency, Entry, Item, ItemBlock, Stat
from .problems import Problem, RulesetError, validate, version_tuple
from .ruleset import Resolution, Ruleset
from .sheet import Sheet
from .values import ValueRef

__all__ = [
    "Catalog", "Coin", "Cost", "Currency", "Entry", "Item", "ItemBlock", "Labelled", "Problem",
    "Resolution", "Ruleset", "RulesetError", "RulesetModel", "Sheet", "Stat", "ValueRef",
    "validate", "version_tuple",
]
