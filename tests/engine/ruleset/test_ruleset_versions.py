"""The Capability API version of each item feature (spec/items.md Appendix E, ITM-GEN-3/4):
a ruleset declaring one version less than a feature it uses is refused at the feature's first
use with its pointer and message; declaring that version, the feature is accepted. One row
per rule that names a version ([vX.Y] in the spec)."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

import pytest
from helpers import fixture_json, problems_of

Doc = dict[str, Any]


def below(version: str) -> str:
    """The version one step before ``version`` (``1.53`` → ``1.52``, ``1.802`` → ``1.801``)."""
    major, minor = version.split(".")
    return f"{major}.{int(minor) - 1}"


def combat_worn(document: Doc) -> None:
    """Give Ember Roads' leather coat a part only a fight reads (a resistance)."""
    document["catalogs"][0]["entries"][4]["item"]["worn"]["resist"] = ["burn"]


def only(*keep: str) -> Callable[[Doc], None]:
    """Take out of Gravewatch's market every seller key but ``keep`` (so the first use of a
    seller feature is the one the row names)."""
    def change(document: Doc) -> None:
        for seller in document["items"]["market"]["sellers"]:
            for key in ("stock", "honest", "manner"):
                if key not in keep:
                    seller.pop(key, None)
    return change


# (rule, fixture, change before, first use's pointer, feature, version)
VERSIONS: list[tuple[str, str, Callable[[Doc], None] | None, str, str, str]] = [
    ("ITM-GEN-2", "ember-roads", None, "/items", "the items block", "1.49"),
    ("ITM-BLOCK-21", "ember-roads", None, "/items/propose", "propose", "1.51"),
    ("ITM-CAPS-1", "ember-roads", None, "/items/rarityCaps/0/rarity", "rarityCaps", "1.51"),
    ("ITM-CAPS-3", "ember-roads", None, "/items/rarityCaps/0/bonus", "rarityCaps[].bonus",
     "1.53"),
    ("ITM-ISTAT-1", "ember-roads", None, "/sheet/derived/1/of/2/itemStat", "itemStat", "1.52"),
    ("ITM-ENTRY-19", "ember-roads", None, "/catalogs/0/entries/4/item/worn", "worn", "1.53"),
    ("ITM-ENTRY-19", "ember-roads", None, "/catalogs/0/entries/6/item/carried", "carried",
     "1.53"),
    ("ITM-ENTRY-19", "ember-roads", None, "/catalogs/0/entries/5/item/worn/abilities",
     "abilities", "1.54"),
    ("ITM-ENTRY-19", "ember-roads", combat_worn, "/catalogs/0/entries/4/item/worn",
     "worn/carried in combat", "1.56"),
    ("ITM-ENTRY-20", "gravewatch", None, "/catalogs/0/entries/5/item/requires", "requires",
     "1.54"),
    ("ITM-ENTRY-21", "ember-roads", None, "/catalogs/0/entries/0/item/attack", "attack",
     "1.55"),
    ("ITM-AMMO-1", "gravewatch", None, "/catalogs/0/entries/4/item/attack/ammo", "ammo",
     "1.57"),
    ("ITM-AMMO-1", "gravewatch", None, "/catalogs/0/entries/4/item/attack/clip", "clip",
     "1.57"),
    ("ITM-MODE-1", "ember-roads", None, "/catalogs/0/entries/0/item/attack/modes", "modes",
     "1.58"),
    ("ITM-MODE-1", "gravewatch", None, "/catalogs/0/entries/3/item/attack/offHand", "offHand",
     "1.58"),
    ("ITM-MODE-1", "gravewatch", None, "/catalogs/0/entries/5/item/attack/floor", "floor",
     "1.58"),
    ("ITM-MODE-1", "gravewatch", None, "/catalogs/0/entries/3/item/attack/onHit", "onHit",
     "1.58"),
    ("ITM-ENTRY-22", "gravewatch", None, "/catalogs/0/entries/1/item/use", "use", "1.59"),
    ("ITM-ENTRY-22", "gravewatch", None, "/catalogs/0/entries/7/item/charges", "charges",
     "1.59"),
    ("ITM-ENTRY-22", "gravewatch", None, "/catalogs/0/entries/1/item/use/restore", "restore",
     "1.60"),
    ("ITM-BLOCK-24", "gravewatch", None, "/items/lootTables", "lootTables", "1.63"),
    ("ITM-MKT-1", "gravewatch", None, "/items/market", "market", "1.65"),
    ("ITM-SVC-1", "gravewatch", None, "/catalogs/0/entries/9/item/service", "service", "1.65"),
    ("ITM-DAY-1", "gravewatch", None, "/items/market/buyBack", "buyBack", "1.69"),
    ("ITM-DAY-1", "gravewatch", only("stock"), "/items/market/sellers/1/stock", "stock",
     "1.69"),
    ("ITM-GEAR-1", "ember-roads", None, "/items/startingGear", "startingGear", "1.78"),
    ("ITM-FAKE-1", "gravewatch", None, "/catalogs/1/entries/2/item/risky", "risky", "1.79"),
    ("ITM-FAKE-1", "gravewatch", None, "/catalogs/1/entries/1/item/passesFor", "passesFor",
     "1.79"),
    ("ITM-FAKE-1", "gravewatch", only("honest"), "/items/market/sellers/4/honest",
     "honest: false", "1.79"),
    ("ITM-TELL-1", "gravewatch", None, "/catalogs/1/entries/4/item/tells", "tells", "1.802"),
    ("ITM-TELL-1", "gravewatch", only("honest", "manner"), "/items/market/sellers/4/manner",
     "manner", "1.802"),
    ("ITM-TOG-1", "gravewatch", None, "/catalogs/0/entries/8/item/toggle", "toggle", "1.170"),
]


@pytest.mark.parametrize(("rule", "fixture", "change", "where", "feature", "version"),
                         VERSIONS, ids=[f"{row[0]}:{row[4]}" for row in VERSIONS])
def test_a_feature_needs_its_capability_api_version(rule: str, fixture: str,
                                                    change: Callable[[Doc], None] | None,
                                                    where: str, feature: str,
                                                    version: str) -> None:
    """ITM-GEN-3: one version less is refused at the feature's first use; its own version
    is accepted for it (ITM-GEN-4: compared as integers, so 1.170 comes after 1.79)."""
    document = copy.deepcopy(fixture_json(f"rulesets/{fixture}.json"))
    if change is not None:
        change(document)

    def declaring(declared: str) -> list[str]:
        return problems_of(document, lambda d: d.__setitem__("capabilityApi", declared))

    assert (f"{where}: {feature} needs capabilityApi {version} or later (the ruleset "
            f"declares {below(version)})") in declaring(below(version))
    assert not [p for p in declaring(version) if f": {feature} needs" in p]
