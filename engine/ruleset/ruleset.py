"""The whole ruleset file (docs/design.md#ruleset-file)."""

from __future__ import annotations

from dataclasses import dataclass

from pydantic import Field

from .base import Id, Label, RulesetModel
from .fight import Combat
from .items import Catalog, ItemBlock
from .resolution import Resolution
from .sheet import Condition, Layer, Live, Rest, Sheet


class Ruleset(RulesetModel):
    """A gmtags ruleset: the sheet, how checks roll, the items block, catalogs and layers."""

    id: Id
    label: Label
    capability_api: str = Field(default="1.49", pattern=r"^\d+(\.\d+){0,3}$")
    """ITM-GEN-2..4: the Capability API version the ruleset is written for; every feature it uses
    needs at least its version (docs/rules/items.md#appendix-e-capability-api-versions)."""
    sheet: Sheet = Field(default_factory=Sheet)
    live: Live = Field(default_factory=Live)
    conditions: list[Condition] = Field(default_factory=list, max_length=96)
    rests: list[Rest] = Field(default_factory=list, max_length=12)
    resolution: Resolution | None = None
    items: ItemBlock | None = None
    catalogs: list[Catalog] = Field(default_factory=list, max_length=64)
    catalog_files: list[str] = Field(default_factory=list, max_length=64)
    """Catalog files (relative to this file) whose catalogs are added to ``catalogs``."""
    layers: list[Layer] = Field(default_factory=list, max_length=24)
    combat: Combat | None = None


def combat_kind(ruleset: Ruleset) -> str:
    """Which combat the ruleset fights with (docs/design.md#which-combat): a symbol-pool ruleset
    fights with symbol-pool combat (CHK-SYM-35; ``"kind": "none"`` still turns fights off), else
    ``combat.kind`` as written, else formula combat where ``combat.attack`` is given (Part A), else
    narrative combat (Part B) — also for a dice-highest ruleset (CHK-HIGH-24) and a ruleset with no
    ``combat`` block."""
    combat = ruleset.combat
    if combat is not None and combat.kind == "none":
        return "none"
    if ruleset.resolution is not None and ruleset.resolution.kind == "symbol-pool":
        return "symbol-pool"
    if combat is None:
        return "narrative"
    if combat.kind is not None:
        return combat.kind
    return "formula" if combat.attack is not None else "narrative"


NONE = "none"
FORMULA = "formula"
OUTCOME = "outcome"
NARRATIVE = "narrative"
SYMBOLS = "symbol-pool"
"""The kinds of combat (``combat.kind``; a symbol-pool ruleset fights with its own, CHK-SYM-35)."""

SUM = "sum"
POOL = "pool"
AGAINST = "roll-against"
"""How a strike's attack check is read: a dice sum against defence, successes of a dice pool,
a roll against a number, or symbols (``symbol-pool`` is both a kind and a hit rule)."""


@dataclass(frozen=True, slots=True)
class FightRule:
    """A ruleset's combat: ``kind`` (:data:`NONE`, :data:`FORMULA`, :data:`OUTCOME`,
    :data:`NARRATIVE`, :data:`SYMBOLS`), ``hit`` (:data:`SUM`, :data:`POOL`, :data:`AGAINST`,
    :data:`SYMBOLS`) and whether a symbol-pool ruleset gives the check its attacks roll
    (``combat.attack``; without it it does not fight)."""

    kind: str
    hit: str
    armed: bool

    @classmethod
    def of(cls, ruleset: Ruleset) -> FightRule:
        """The ruleset's combat, read once as it loads (:attr:`engine.rules.game.Game.fight`)."""
        kind = combat_kind(ruleset)
        res = ruleset.resolution
        combat = ruleset.combat
        if res is not None and res.kind == "dice-pool":
            hit = POOL  # a pool's successes, whatever the kind of combat
        elif kind == SYMBOLS:
            hit = SYMBOLS
        elif kind == FORMULA and res is not None and res.kind == AGAINST:
            hit = AGAINST
        else:
            hit = SUM
        return cls(kind, hit, combat is not None and combat.attack is not None)

    @property
    def rolls_against_or_symbols(self) -> str | None:
        """The hit rule when it is a roll against a number or symbols, else None."""
        return self.hit if self.hit in (AGAINST, SYMBOLS) else None
