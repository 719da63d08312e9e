"""Build the 5e ruleset ``fixtures/rulesets/srd5.json`` (and its catalogue files under
``fixtures/rulesets/srd5/``) from the SRD 5.1 item data in ``fixtures/srd-5.1/``.

    .venv/bin/python scripts/srd5_convert.py [SRD_DIR] [OUT_DIR]

Defaults: ``fixtures/srd-5.1`` and ``fixtures/rulesets`` next to this script's repository.
The output is stable: entries sorted by id, ``json.dumps(sort_keys=True, indent=2,
ensure_ascii=False)`` with a trailing newline, so a re-run reproduces the committed files byte
for byte (tests/e2e/test_srd5.py).

What is SRD data and what is gmtags' own choice:

* From the SRD files: every item's name, category, cost, weight, description (first paragraph),
  weapon damage, damage type, properties and ranges, armour class, Dex cap, Strength requirement
  and stealth disadvantage, magic items' rarity and attunement, and what the potions of healing
  heal (the SRD's "Potions of Healing" table, :data:`HEALING_POTIONS`).
* gmtags' own (the SRD has no such tables): prices of magic items the SRD leaves unpriced
  (:data:`RARITY_PRICE_GP`, halved for consumables as the DMG does), the market (places, sold
  rules, sellers), the loot tables (modelled on the DMG's individual-treasure and hoard bands,
  which are not in the SRD), and the services catalogue (the PHB/SRD "Services" and "Food,
  Drink, and Lodging" prices, typed by hand).

Attribution (CC-BY-4.0, required): see ``fixtures/srd-5.1/README.md``; it is repeated in the
ruleset's and catalogues' labels and in ``fixtures/rulesets/srd5.LICENSE.md``.
"""

from __future__ import annotations

import json
import re
import sys
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
ATTRIBUTION = (
    'This work includes material taken from the System Reference Document 5.1 ("SRD 5.1") by '
    "Wizards of the Coast LLC, available at "
    "https://dnd.wizards.com/resources/systems-reference-document. The SRD 5.1 is licensed under "
    "the Creative Commons Attribution 4.0 International License, "
    "https://creativecommons.org/licenses/by/4.0/legalcode."
)
SHORT_CREDIT = "SRD 5.1, Wizards of the Coast, CC-BY-4.0"

# Catalogue of each SRD item category (Item.json); magic items go to "magic_items".
EQUIPMENT = {"weapon", "armor", "shield", "ammunition"}
# The coins themselves are the ruleset's currency, not catalogue items.
COIN_ITEMS = {"copper-piece", "silver-piece", "electrum-piece", "gold-piece", "platinum-piece"}
CATEGORY_LABELS = {
    "adventuring-gear": "Adventuring gear", "ammunition": "Ammunition", "armor": "Armor",
    "land-vehicle": "Land vehicle", "poison": "Poison", "potion": "Potion", "ring": "Ring",
    "rod": "Rod", "scroll": "Scroll", "shield": "Shield", "staff": "Staff", "tools": "Tools",
    "trade-good": "Trade good", "wand": "Wand", "waterborne-vehicle": "Waterborne vehicle",
    "weapon": "Weapon", "wondrous-item": "Wondrous item", "service": "Service",
}
RARITIES = [("common", "Common"), ("uncommon", "Uncommon"), ("rare", "Rare"),
            ("very-rare", "Very rare"), ("legendary", "Legendary"), ("artifact", "Artifact")]
# gmtags' own prices for magic items the SRD leaves unpriced (gp), inside the DMG's bands;
# consumables (potions, scrolls, ammunition) cost half. Artifacts, cursed items and fakes stay
# unpriced (unsaleable, ITM-MKT-19) unless the spec's own example prices them.
RARITY_PRICE_GP = {"common": 100, "uncommon": 400, "rare": 4000, "very-rare": 40000,
                   "legendary": 200000}
CONSUMABLE = {"potion", "scroll", "ammunition"}
# The spec's own 5e examples (items.md §19): Bag of Devouring costs 5 gp.
COST_OVERRIDES_GP = {"bag-of-devouring": 5}
FAKES = {"potion-of-poison": "magic_items/potion-of-healing",
         "bag-of-devouring": "magic_items/bag-of-holding"}
# The SRD's "Potions of Healing" table: what drinking one gives back (ITM-OUT-3, ITM-USE-2);
# an action to drink, used up.
HEALING_POTIONS = {"potion-of-healing": ("2d4", 2), "potion-of-greater-healing": ("4d4", 4),
                   "potion-of-superior-healing": ("8d4", 8),
                   "potion-of-supreme-healing": ("10d4", 20)}
RISKY = {"wand-of-wonder": "every wave is a gamble; some effects turn on the one who waves it"}
DAMAGE_TYPES = ["acid", "bludgeoning", "cold", "fire", "force", "lightning", "necrotic",
                "piercing", "poison", "psychic", "radiant", "slashing", "thunder"]
PROPERTY_TAGS = {"ammunition": "Ammunition", "finesse": "Finesse", "heavy": "Heavy",
                 "light": "Light", "loading": "Loading", "range": "Range", "reach": "Reach",
                 "special": "Special", "thrown": "Thrown", "two-handed": "Two-handed",
                 "versatile": "Versatile"}
ABILITIES = [("str", "Strength"), ("dex", "Dexterity"), ("con", "Constitution"),
             ("int", "Intelligence"), ("wis", "Wisdom"), ("cha", "Charisma")]
SKILLS = [("acrobatics", "Acrobatics", "dex"), ("animal_handling", "Animal Handling", "wis"),
          ("arcana", "Arcana", "int"), ("athletics", "Athletics", "str"),
          ("deception", "Deception", "cha"), ("history", "History", "int"),
          ("insight", "Insight", "wis"), ("intimidation", "Intimidation", "cha"),
          ("investigation", "Investigation", "int"), ("medicine", "Medicine", "wis"),
          ("nature", "Nature", "int"), ("perception", "Perception", "wis"),
          ("performance", "Performance", "cha"), ("persuasion", "Persuasion", "cha"),
          ("religion", "Religion", "int"), ("sleight_of_hand", "Sleight of Hand", "dex"),
          ("stealth", "Stealth", "dex"), ("survival", "Survival", "wis")]
CLASSES = ["barbarian", "bard", "cleric", "druid", "fighter", "monk", "paladin", "ranger",
           "rogue", "sorcerer", "warlock", "wizard"]
SUMMARY_CHARS = 600
# The SRD weapon table's Heavy property, which the open5e property assignments leave out.
HEAVY = {"srd_crossbow-heavy", "srd_glaive", "srd_greataxe", "srd_greatsword", "srd_halberd",
         "srd_longbow", "srd_maul", "srd_pike"}
# Animals and vehicles walk, roll or float: nobody carries them in a bag, so they have no
# weight for the carry rule (the SRD lists a cow at 1,000 lb, which no buyer could carry).
UNCARRIED_CATEGORIES = {"land-vehicle", "waterborne-vehicle"}
LIVESTOCK = {"chicken", "cow", "goat", "ox", "pig", "sheep"}


def _records(srd: Path, name: str) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = json.loads((srd / f"{name}.json").read_text(encoding="utf-8"))
    return rows


def _entry_id(pk: str) -> str:
    return pk.removeprefix("srd_")


def _summary(desc: str) -> str:
    """The first paragraph of the SRD description, at most SUMMARY_CHARS characters."""
    text = " ".join(desc.strip().split("\n")[0].split())
    if len(text) <= SUMMARY_CHARS:
        return text
    cut = text[:SUMMARY_CHARS - 1].rsplit(" ", 1)[0]
    return cut + "…"


def _cost(gp: Decimal) -> dict[str, Any] | None:
    """ITM-ENTRY-11: a whole amount in the largest of cp/sp/gp that writes the SRD price
    exactly (5e lists prices in cp, sp and gp, never ep or pp)."""
    copper = gp * 100
    if copper <= 0 or copper != copper.to_integral_value():
        return None
    cp = int(copper)
    for unit, value in (("gp", 100), ("sp", 10), ("cp", 1)):
        if cp % value == 0:
            return {"amount": cp // value, "unit": unit}
    raise AssertionError("unreachable: 1 cp divides everything")


def _number(text: str) -> int | float:
    value = Decimal(text)
    return int(value) if value == value.to_integral_value() else float(value)


def _weapon_parts(pk: str, weapon: dict[str, Any], properties: list[tuple[str, str | None]]
                  ) -> tuple[list[str], dict[str, Any], dict[str, int], dict[str, Any] | None]:
    tags = ["simple" if weapon["is_simple"] else "martial"]
    if pk in HEAVY:
        tags.append("heavy")
    stats: dict[str, Any] = {}
    if weapon["damage_dice"] not in ("0", ""):
        stats["damage"] = weapon["damage_dice"]
        stats["damage_type"] = weapon["damage_type"]
    for prop, detail in properties:
        tags.append(prop)
        if prop == "versatile" and detail:
            stats["versatile_damage"] = detail
    if weapon["range"]:  # ammunition and thrown weapons: "(range 80/320)" in the SRD table
        tags.append("range")
        stats["range"] = f"{int(weapon['range'])}/{int(weapon['long_range'])}"
    hands = 2 if "two-handed" in tags else 1
    return sorted(set(tags)), stats, {"hands": hands}, _attack(pk, set(tags), weapon, stats)


def _attack(pk: str, tags: set[str], weapon: dict[str, Any],
            stats: dict[str, Any]) -> dict[str, Any] | None:
    """ITM-WPN-1..19 in 5e's terms (SRD "Weapons"): d20 + the ability + the proficiency bonus
    when the wielder's classes are proficient; finesse takes the better of Strength and
    Dexterity, a ranged (ammunition) weapon Dexterity, any other Strength (thrown too); a
    melee weapon reaches 5 ft (10 with reach), a ranged or thrown one has its range; a
    versatile one deals its two-handed dice with a hand free; a magic weapon's bonus adds to
    hit and damage. The net deals no damage and makes no attack roll of this kind."""
    if "damage" not in stats:
        return None
    abilities: str | list[str] = ["str", "dex"] if "finesse" in tags else (
        "dex" if "ammunition" in tags else "str")
    attack: dict[str, Any] = {
        "budget": "action",
        "toHit": {"abilities": abilities, "proficiency": {"derived": _proficiency(pk, tags)},
                  "bonus": {"stat": "magic_bonus"}},
        "damage": {"dice": {"stat": "damage"}, "abilities": abilities,
                   "bonus": {"stat": "magic_bonus"}, "type": {"stat": "damage_type"}},
    }
    if "ammunition" not in tags:  # a melee weapon, or a thrown one: a strike up close
        attack["reach"] = 10 if "reach" in tags else 5
    if weapon["range"]:
        attack["range"] = {"normal": int(weapon["range"]), "long": int(weapon["long_range"])}
    if "versatile_damage" in stats:
        attack["versatile"] = {"stat": "versatile_damage"}
    return attack


# SRD class proficiencies: which classes are proficient with simple and martial weapons, and
# the classes proficient only with some weapons (bard and rogue, monk, druid, sorcerer and
# wizard). Each group is a derived value, above 0 when the character is proficient.
SIMPLE_CLASSES = ["barbarian", "bard", "cleric", "fighter", "monk", "paladin", "ranger",
                  "rogue", "warlock"]
MARTIAL_CLASSES = ["barbarian", "fighter", "paladin", "ranger"]
WEAPON_GROUPS: list[tuple[str, str, str, list[str], list[str]]] = [
    # (derived id, label, simple or martial, other classes, weapons)
    ("proficient_light_blades", "Proficient with longswords, rapiers, hand crossbows",
     "martial", ["bard", "rogue"], ["crossbow-hand", "longsword", "rapier"]),
    ("proficient_shortsword", "Proficient with shortswords", "martial",
     ["bard", "monk", "rogue"], ["shortsword"]),
    ("proficient_scimitar", "Proficient with scimitars", "martial", ["druid"], ["scimitar"]),
    ("proficient_druid_weapons", "Proficient with clubs, javelins, maces, sickles, spears",
     "simple", ["druid"], ["club", "javelin", "mace", "sickle", "spear"]),
    ("proficient_caster_weapons", "Proficient with daggers, darts, slings, quarterstaffs",
     "simple", ["druid", "sorcerer", "wizard"], ["dagger", "dart", "quarterstaff", "sling"]),
    ("proficient_light_crossbow", "Proficient with light crossbows", "simple",
     ["sorcerer", "wizard"], ["crossbow-light"]),
]


def _proficiency(pk: str, tags: set[str]) -> str:
    """The derived value that says whether the wielder is proficient with this weapon."""
    ident = _entry_id(pk)
    for derived, _, _, _, weapons in WEAPON_GROUPS:
        if ident in weapons:
            return derived
    return "proficient_martial" if "martial" in tags else "proficient_simple"


def _proficiency_derived() -> list[dict[str, Any]]:
    def levels(classes: list[str]) -> list[dict[str, Any]]:
        return [{"field": f"level_{name}"} for name in classes]

    rows: list[dict[str, Any]] = [
        {"id": "proficient_simple", "label": "Proficient with simple weapons", "op": "sum",
         "of": levels(SIMPLE_CLASSES)},
        {"id": "proficient_martial", "label": "Proficient with martial weapons", "op": "sum",
         "of": levels(MARTIAL_CLASSES)},
    ]
    rows += [{"id": derived, "label": label, "op": "sum",
              "of": [{"derived": f"proficient_{kind}"}, *levels(classes)]}
             for derived, label, kind, classes, _ in WEAPON_GROUPS]
    return rows


def _armor_stats(armor: dict[str, Any]) -> dict[str, Any]:
    stats: dict[str, Any] = {"armor_class": armor["ac_base"], "adds_dex": armor["ac_add_dexmod"]}
    if armor["ac_cap_dexmod"] is not None:
        stats["dex_cap"] = armor["ac_cap_dexmod"]
    elif not armor["ac_add_dexmod"]:  # heavy armour: no Dexterity at all (the AC formula)
        stats["dex_cap"] = 0
    if armor["strength_score_required"] is not None:
        stats["strength_required"] = armor["strength_score_required"]
    if armor["grants_stealth_disadvantage"]:
        stats["stealth_disadvantage"] = True
    return stats


def _stealth_worn(stats: dict[str, Any]) -> dict[str, Any] | None:
    if not stats.get("stealth_disadvantage"):
        return None
    return {"modifiers": [{"to": "checks", "skills": ["stealth"], "mode": "disadvantage"}]}


def _properties(srd: Path) -> dict[str, list[tuple[str, str | None]]]:
    found: dict[str, list[tuple[str, str | None]]] = {}
    for row in _records(srd, "WeaponPropertyAssignment"):
        fields = row["fields"]
        prop = fields["property"].removeprefix("srd-2014_").removesuffix("-wp")
        prop = "special" if prop.endswith("-special") else prop
        found.setdefault(fields["weapon"], []).append((prop, fields["detail"]))
    return found


def _entry(ident: str, label: str, desc: str, item: dict[str, Any]) -> dict[str, Any]:
    entry: dict[str, Any] = {"id": ident, "label": label, "item": item}
    summary = _summary(desc)
    if summary:
        entry["summary"] = summary
    return entry


def mundane_entries(srd: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Item.json → the "equipment" and "gear" catalogues."""
    weapons = {row["pk"]: row["fields"] for row in _records(srd, "Weapon")}
    armors = {row["pk"]: row["fields"] for row in _records(srd, "Armor")}
    properties = _properties(srd)
    equipment: list[dict[str, Any]] = []
    gear: list[dict[str, Any]] = []
    for row in _records(srd, "Item"):
        fields = row["fields"]
        ident = _entry_id(row["pk"])
        if ident in COIN_ITEMS:
            continue
        category = fields["category"]
        item: dict[str, Any] = {"category": category, "tags": ["mundane"]}
        stats: dict[str, Any] = {}
        weight = _number(fields["weight"])
        if weight and category not in UNCARRIED_CATEGORIES and ident not in LIVESTOCK:
            stats["weight"] = weight
        _add_gear_parts(item, stats, fields, weapons, armors, properties)
        if stats:
            item["stats"] = stats
        worn = _stealth_worn(stats)
        if worn:
            item["worn"] = worn
        cost = _cost(Decimal(fields["cost"])) if fields["cost"] is not None else None
        if cost:
            item["cost"] = cost
        entry = _entry(ident, fields["name"], fields["desc"], item)
        (equipment if category in EQUIPMENT else gear).append(entry)
    return equipment, gear


def _add_gear_parts(item: dict[str, Any], stats: dict[str, Any], fields: dict[str, Any],
                    weapons: dict[Any, Any], armors: dict[Any, Any],
                    properties: dict[Any, Any]) -> None:
    """What a weapon, an armour or a shield adds to an entry (mundane or magic alike)."""
    if fields["weapon"]:
        tags, weapon_stats, slots, attack = _weapon_parts(
            fields["weapon"], weapons[fields["weapon"]], properties.get(fields["weapon"], []))
        item["tags"] = sorted({*item["tags"], *tags})
        stats.update(weapon_stats)
        item["slots"] = slots
        if attack is not None:
            item["attack"] = attack
    if fields["armor"]:
        stats.update(_armor_stats(armors[fields["armor"]]))
        item["slots"] = {"body": 1}
    if fields["category"] == "shield":
        stats["ac_bonus"] = 2
        item["slots"] = {"hands": 1}


PLUS = re.compile(r"\(\+(\d)\)|^\+(\d) ")
# The SRD marks a cursed item with a paragraph headed "**_Curse_**.".
CURSE = re.compile(r"\*\*_Curse_\*\*\.")


def magic_entries(srd: Path) -> list[dict[str, Any]]:
    """MagicItem.json → the "magic_items" catalogue."""
    weapons = {row["pk"]: row["fields"] for row in _records(srd, "Weapon")}
    armors = {row["pk"]: row["fields"] for row in _records(srd, "Armor")}
    properties = _properties(srd)
    entries: list[dict[str, Any]] = []
    for row in _records(srd, "MagicItem"):
        fields = row["fields"]
        ident = _entry_id(row["pk"])
        category = fields["category"]
        rarity = fields["rarity"]
        item: dict[str, Any] = {"category": category, "rarity": rarity, "tags": ["magical"]}
        stats: dict[str, Any] = {}
        weight = _number(fields["weight"])
        if weight:
            stats["weight"] = weight
        _add_gear_parts(item, stats, fields, weapons, armors, properties)
        plus = PLUS.search(fields["name"])
        if plus and (fields["weapon"] or fields["armor"] or category in EQUIPMENT):
            stats["magic_bonus"] = int(plus.group(1) or plus.group(2))
        if stats:
            item["stats"] = stats
        worn = _stealth_worn(stats)
        if worn:
            item["worn"] = worn
        cursed = bool(CURSE.search(fields["desc"]))
        if fields["requires_attunement"]:
            binds: dict[str, Any] = {}
            detail = (fields.get("attunement_detail") or "").strip()
            if detail:
                binds["restriction"] = detail
            if cursed:
                binds["cursed"] = True
            item["binds"] = binds
        item.update(_magic_cost(ident, category, rarity, fields["cost"], cursed))
        if ident in FAKES:
            item["passesFor"] = FAKES[ident]
        if ident in RISKY:
            item["risky"] = RISKY[ident]
        if ident in HEALING_POTIONS:
            dice, flat = HEALING_POTIONS[ident]
            item["use"] = {"kind": "heal", "budget": "action",
                           "amount": {"dice": dice, "flat": flat}, "consumes": True}
        if ident == "potion-of-poison":
            item["tells"] = [
                {"check": {"value": {"derived": "poisoners_kit_check"}}, "dc": 13,
                 "carries": {"anyOf": ["gear/poisoners-kit"]},
                 "says": "a faint bitterness under the sweetness"},
                {"check": {"skill": "arcana"}, "dc": 18,
                 "says": "its magic does not feel like healing magic"},
            ]
            item["foolsReveal"] = ["identify"]
        entries.append(_entry(ident, fields["name"], fields["desc"], item))
    return entries


def _magic_cost(ident: str, category: str, rarity: str, srd_cost: str | None,
                cursed: bool) -> dict[str, Any]:
    if ident in COST_OVERRIDES_GP:
        return {"cost": {"amount": COST_OVERRIDES_GP[ident], "unit": "gp"}}
    if srd_cost is not None:
        cost = _cost(Decimal(srd_cost))
        if cost:
            return {"cost": cost}
    if cursed or ident in FAKES or rarity not in RARITY_PRICE_GP:
        return {}
    gp = RARITY_PRICE_GP[rarity] // (2 if category in CONSUMABLE else 1)
    return {"cost": {"amount": gp, "unit": "gp"}}


def service_entries() -> list[dict[str, Any]]:
    """Services (ITM-SVC-1): the SRD's "Services" and "Food, Drink, and Lodging" prices."""
    rows = [
        ("ale-mug", "Ale (mug)", 4, "cp", "A mug of ale at the inn."),
        ("coach-cab-between-towns", "Coach cab between towns (per mile)", 3, "cp",
         "A seat on the coach to the next town."),
        ("coach-cab-within-a-city", "Coach cab within a city", 1, "cp",
         "A ride across the city."),
        ("hireling-skilled", "Skilled hireling (per day)", 2, "gp",
         "A mason, scribe, guide or other skilled hand for a day."),
        ("hireling-untrained", "Untrained hireling (per day)", 2, "sp",
         "A porter or labourer for a day."),
        ("inn-stay-comfortable", "Inn stay, comfortable (per day)", 8, "sp",
         "A private room and a warm bath."),
        ("inn-stay-modest", "Inn stay, modest (per day)", 5, "sp",
         "A bed in a shared room."),
        ("meal-modest", "Meal, modest", 3, "sp", "Bread, stew and small beer."),
        ("messenger", "Messenger (per mile)", 2, "cp", "A runner carries a letter."),
        ("road-or-gate-toll", "Road or gate toll", 1, "cp", "The toll at a bridge or gate."),
        ("ships-passage", "Ship's passage (per mile)", 1, "sp", "Passage on a ship or ferry."),
    ]
    return [{"id": ident, "label": label, "summary": summary,
             "item": {"category": "service", "service": True,
                      "cost": {"amount": amount, "unit": unit}}}
            for ident, label, amount, unit, summary in rows]


def _labelled(pairs: list[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"id": ident, "label": label} for ident, label in pairs]


def sheet() -> dict[str, Any]:
    fields: list[dict[str, Any]] = [
        {"id": "level", "label": "Character level", "type": "number", "default": 1},
        {"id": "hit_point_max", "label": "Hit point maximum", "type": "number", "default": 10},
        {"id": "poisoners_kit", "label": "Proficient with a poisoner's kit (1 or 0)",
         "type": "number", "default": 0},
        {"id": "knows_trade", "label": "Knows the criminal trade (1 or 0)",
         "type": "number", "default": 0},
    ]
    fields += [{"id": f"level_{name}", "label": f"{name.capitalize()} level", "type": "number",
                "default": 0} for name in CLASSES]
    return {
        "abilities": [{"id": ident, "label": label, "min": 1, "max": 30, "default": 10}
                      for ident, label in ABILITIES],
        "skills": [{"id": ident, "label": label, "ability": ability}
                   for ident, label, ability in SKILLS] + COMBAT_SKILLS,
        "saves": [{"id": ident, "label": f"{label} saving throw", "ability": ident}
                  for ident, label in ABILITIES],
        "fields": fields,
        "derived": [
            # Proficiency bonus by level: floor((level + 7) / 4) = 2 at 1-4, 3 at 5-8, ... 6 at 17+.
            {"id": "level_plus_seven", "label": "Level + 7", "op": "sum",
             "of": [{"field": "level"}, {"const": 7}]},
            {"id": "proficiency_bonus", "label": "Proficiency bonus", "op": "floorDiv",
             "of": [{"derived": "level_plus_seven"}, {"const": 4}]},
            # Variant encumbrance (SRD "Lifting and Carrying"): encumbered above 5 × Strength,
            # no more than the carrying capacity of 15 × Strength.
            {"id": "encumbered_above", "label": "Encumbered above (lb)", "op": "product",
             "of": [{"abilityScore": "str"}, {"const": 5}]},
            {"id": "carrying_capacity", "label": "Carrying capacity (lb)", "op": "product",
             "of": [{"abilityScore": "str"}, {"const": 15}]},
            {"id": "poisoners_kit_bonus", "label": "Poisoner's kit proficiency", "op": "product",
             "of": [{"field": "poisoners_kit"}, {"derived": "proficiency_bonus"}]},
            {"id": "poisoners_kit_check", "label": "Poisoner's kit check", "op": "sum",
             "of": [{"abilityMod": "int"}, {"derived": "poisoners_kit_bonus"}]},
            {"id": "knows_trade", "label": "Knows the trade", "op": "sum",
             "of": [{"field": "knows_trade"}]},
            {"id": "passive_perception", "label": "Passive Wisdom (Perception)", "op": "sum",
             "of": [{"const": 10}, {"abilityMod": "wis"}]},
            *_proficiency_derived(),
            *_armour_derived(),
        ],
    }


# The two combat-only checks (CMB-ATK-2): the attack roll (its ability is the weapon's,
# ITM-WPN-6) and initiative (d20 + Dexterity).
COMBAT_SKILLS = [{"id": "attack", "label": "Attack roll", "ability": "str"},
                 {"id": "initiative", "label": "Initiative", "ability": "dex"}]


def _worn(stat: str, pick: str, default: float | None = None,
          **only: str) -> dict[str, Any]:
    spec: dict[str, Any] = {"stat": stat, "from": "worn", "pick": pick, **only}
    if default is not None:
        spec["default"] = default
    return {"itemStat": spec}


def _armour_derived() -> list[dict[str, Any]]:
    """What the AC formula reads off the worn items (ITM-ARM-9, SRD "Armor and Shields"):
    the body armour's base AC (10 unarmoured) and its Dexterity cap (none: 99; heavy armour
    0), the shield's +2, and the magic bonus of worn armour and shields."""
    return [
        {"id": "armor_base", "label": "Armor's base AC", "op": "sum",
         "of": [_worn("armor_class", "max", 10, slot="body")]},
        {"id": "armor_dex_cap", "label": "Dex modifier to AC at most", "op": "sum",
         "of": [_worn("dex_cap", "min", 99, slot="body")]},
        {"id": "shield_bonus", "label": "Shield's AC bonus", "op": "sum",
         "of": [_worn("ac_bonus", "max")]},
        {"id": "armor_magic", "label": "Magic armor and shield bonus", "op": "sum",
         "of": [_worn("magic_bonus", "sum", category="armor"),
                _worn("magic_bonus", "sum", category="shield")]},
    ]


def conditions() -> list[dict[str, Any]]:
    """SRD conditions; only those that change ability checks carry modifiers."""
    disadvantage = [{"to": "checks", "mode": "disadvantage"}]
    plain = ["blinded", "charmed", "deafened", "grappled", "incapacitated", "invisible",
             "paralyzed", "petrified", "prone", "restrained", "stunned", "unconscious"]
    rows: list[dict[str, Any]] = [{"id": name, "label": name.capitalize()} for name in plain]
    rows += [{"id": "poisoned", "label": "Poisoned", "modifiers": disadvantage},
             {"id": "frightened", "label": "Frightened", "modifiers": disadvantage},
             {"id": "exhaustion", "label": "Exhaustion", "modifiers": disadvantage}]
    return sorted(rows, key=lambda row: row["id"])


def resolution() -> dict[str, Any]:
    """checks.md §2: a d20 plus ⌊(score − 10) / 2⌋ plus proficiency, with advantage."""
    return {
        "kind": "dice-sum",
        "dice": {"count": 1, "sides": 20},
        "abilityModifier": {"op": "floorHalfMinusTen"},
        "proficiencyTiers": [
            {"id": "none", "label": "Not proficient"},
            {"id": "proficient", "label": "Proficient", "multiplier": 1},
            {"id": "expertise", "label": "Expertise", "multiplier": 2},
        ],
        "proficiency": {"bonus": {"derived": "proficiency_bonus"}},
        "advantage": True,
        "naturals": "none",
        # SRD "Rolling 1 or 20": only an attack roll hits on a natural 20 (a critical) and
        # misses on a natural 1 (CMB-ATK-3).
        "overrides": [{"id": "attack-rolls", "label": "Attack rolls", "skills": ["attack"],
                       "set": {"naturals": "both"}}],
        "difficultyLadder": [
            {"label": "Very easy", "dc": 5}, {"label": "Easy", "dc": 10},
            {"label": "Medium", "dc": 15}, {"label": "Hard", "dc": 20},
            {"label": "Very hard", "dc": 25}, {"label": "Nearly impossible", "dc": 30},
        ],
    }


def stats() -> list[dict[str, Any]]:
    return [
        {"id": "weight", "label": "Weight", "type": "number", "min": 0, "max": 100000,
         "integer": False, "default": 0},
        {"id": "damage", "label": "Damage", "type": "dice", "example": "1d8"},
        {"id": "damage_type", "label": "Damage type", "type": "enum", "values": DAMAGE_TYPES},
        {"id": "versatile_damage", "label": "Two-handed damage", "type": "dice",
         "example": "1d10"},
        {"id": "range", "label": "Range (ft)", "type": "text", "example": "80/320"},
        {"id": "armor_class", "label": "Armor class", "type": "number", "min": 0, "max": 30},
        {"id": "adds_dex", "label": "Adds Dex modifier", "type": "boolean"},
        {"id": "dex_cap", "label": "Dex modifier at most", "type": "number", "min": 0, "max": 10},
        {"id": "ac_bonus", "label": "Armor class bonus", "type": "number", "min": 0, "max": 10},
        {"id": "strength_required", "label": "Strength required", "type": "number", "min": 1,
         "max": 30},
        {"id": "stealth_disadvantage", "label": "Stealth disadvantage", "type": "boolean"},
        {"id": "magic_bonus", "label": "Magic bonus", "type": "number", "min": 0, "max": 3},
    ]


def tags() -> list[dict[str, str]]:
    rows = [("magical", "Magical"), ("mundane", "Mundane"), ("simple", "Simple weapon"),
            ("martial", "Martial weapon"), *PROPERTY_TAGS.items()]
    return sorted(_labelled(rows), key=lambda row: row["id"])


def currencies() -> list[dict[str, Any]]:
    units = [("cp", "copper pieces", "copper piece", 1),
             ("sp", "silver pieces", "silver piece", 10),
             ("ep", "electrum pieces", "electrum piece", 50),
             ("gp", "gold pieces", "gold piece", 100),
             ("pp", "platinum pieces", "platinum piece", 1000)]
    return [{"id": "coins", "label": "Coins", "perWeight": 50,
             "units": [{"id": ident, "label": label, "one": one, "value": value}
                       for ident, label, one, value in units]}]


def _coin_rows(rows: list[tuple[str, str, int]]) -> list[dict[str, Any]]:
    return [{"coins": coin, "count": count, "weight": weight} for coin, count, weight in rows]


def loot_tables() -> list[dict[str, Any]]:
    """Individual treasure and hoards by challenge band (gmtags' own tables in the spirit of the
    DMG's, which are not SRD material). A row's count is dice without multipliers, so large
    amounts are written in a larger coin of the same value (e.g. 4d6 × 100 cp as 4d6 gp)."""
    def hoard(band: str, label: str, coins: list[tuple[str, str, int]], rolls: str,
              rarities: list[tuple[str, int]]) -> dict[str, Any]:
        entries = _coin_rows(coins)
        entries += [{"filter": {"rarity": rarity, "tag": "magical"}, "weight": weight}
                    for rarity, weight in rarities]
        entries += [{"filter": {"category": "trade-good"}, "weight": 2, "count": "1d4"}]
        return {"id": f"hoard_{band}", "label": label, "rolls": rolls, "entries": entries}

    return [
        {"id": "individual_cr0_4", "label": "Individual treasure, challenge 0-4",
         "entries": _coin_rows([("cp", "5d6", 30), ("sp", "4d6", 30), ("ep", "3d6", 10),
                                ("gp", "3d6", 25), ("pp", "1d6", 5)])},
        {"id": "individual_cr5_10", "label": "Individual treasure, challenge 5-10",
         "entries": _coin_rows([("gp", "4d6", 30), ("gp", "6d6", 30), ("ep", "6d6+12", 10),
                                ("gp", "4d6+20", 15), ("pp", "2d6+3", 15)])},
        {"id": "individual_cr11_16", "label": "Individual treasure, challenge 11-16",
         "entries": _coin_rows([("gp", "4d6+40", 20), ("pp", "1d6+10", 15),
                                ("pp", "4d6+10", 40), ("pp", "4d6+20", 25)])},
        {"id": "individual_cr17", "label": "Individual treasure, challenge 17+",
         "entries": _coin_rows([("pp", "2d6+100", 15), ("pp", "8d6+60", 55),
                                ("pp", "6d6+120", 30)])},
        hoard("cr0_4", "Treasure hoard, challenge 0-4",
              [("gp", "6d6", 3), ("sp", "3d6+30", 3), ("gp", "2d6+10", 3)], "1d4+1",
              [("common", 3), ("uncommon", 2), ("rare", 1)]),
        hoard("cr5_10", "Treasure hoard, challenge 5-10",
              [("gp", "6d6+100", 3), ("gp", "2d6+200", 3), ("pp", "3d6+10", 3)], "1d4+2",
              [("common", 2), ("uncommon", 3), ("rare", 2), ("very-rare", 1)]),
        hoard("cr11_16", "Treasure hoard, challenge 11-16",
              [("gp", "4d6+1000", 3), ("pp", "5d6+300", 3)], "1d4+3",
              [("uncommon", 2), ("rare", 3), ("very-rare", 2), ("legendary", 1)]),
        hoard("cr17", "Treasure hoard, challenge 17+",
              [("gp", "12d6+1000", 3), ("pp", "8d6+1000", 3)], "1d4+4",
              [("rare", 2), ("very-rare", 3), ("legendary", 2)]),
        {"id": "fences_odd_lot", "label": "The fence's odd lot", "rolls": "1d3",
         "entries": [
             {"item": "magic_items/potion-of-poison", "weight": 3, "count": "1d2"},
             {"item": "magic_items/bag-of-devouring", "weight": 1},
             {"item": "magic_items/potion-of-healing", "weight": 2, "count": "1d3"},
             {"filter": {"rarity": "uncommon", "tag": "magical"}, "weight": 2},
         ]},
    ]


def starting_gear() -> list[dict[str, Any]]:
    """The spec's own 5e examples (items.md §17.1), with the SRD's remaining fighter choices
    and the acolyte's other belongings."""
    return [
        {"id": "fighter", "label": "Fighter", "group": "class",
         "fits": {"value": {"field": "level_fighter"}, "atLeast": 1},
         "lines": [{"item": "equipment/shield", "equip": True}],
         "choices": [
             {"label": "Armor", "options": [
                 {"label": "Chain mail",
                  "lines": [{"item": "equipment/chain-mail", "equip": True}]},
                 {"label": "Leather armor and a longbow", "lines": [
                     {"item": "equipment/leather-armor", "equip": True},
                     {"item": "equipment/longbow"},
                     {"item": "equipment/arrow-bow", "count": 20}]}]},
             {"label": "A martial weapon", "options": [
                 {"label": "Pick one",
                  "lines": [{"oneOf": ["equipment/longsword", "equipment/battleaxe"]}]},
                 {"label": "A greataxe", "lines": [{"item": "equipment/greataxe"}]}]},
             {"label": "A ranged weapon", "options": [
                 {"label": "A light crossbow and 20 bolts", "lines": [
                     {"item": "equipment/crossbow-light"},
                     {"item": "equipment/crossbow-bolt", "count": 20}]},
                 {"label": "Two handaxes",
                  "lines": [{"item": "equipment/handaxe", "count": 2}]}]},
         ]},
        {"id": "acolyte", "label": "Acolyte", "group": "background",
         "lines": [{"coins": "gp", "count": 15}, {"name": "Vestments"},
                   {"oneOf": ["gear/amulet", "gear/emblem", "gear/reliquary"]},
                   {"item": "gear/book"}, {"name": "Stick of incense", "count": 5},
                   {"item": "gear/clothes-common"}, {"item": "gear/pouch"}]},
    ]


def market() -> dict[str, Any]:
    """gmtags' own market: rare magic only in cities (ITM-MKT-5), a few a day (ITM-DAY-6)."""
    mundane = [{"category": category, "tag": "mundane"}
               for category in ("adventuring-gear", "tools", "trade-good", "land-vehicle",
                                "ring", "rod", "staff", "wand")]
    return {
        "prices": [
            {"id": "cheap", "label": "cheap", "times": 0.75},
            {"id": "fair", "label": "fair", "times": 1, "default": True},
            {"id": "dear", "label": "dear", "times": 1.5},
            {"id": "gouging", "label": "gouging", "times": 2},
        ],
        "places": [
            {"id": "hamlet", "label": "hamlet", "purse": {"amount": 20, "unit": "gp"}},
            {"id": "village", "label": "village", "purse": {"amount": 100, "unit": "gp"}},
            {"id": "town", "label": "town", "purse": {"amount": 1000, "unit": "gp"}},
            {"id": "city", "label": "city", "purse": {"amount": 20000, "unit": "gp"}},
        ],
        "buyBack": 0.5,
        "sold": [
            {"filter": {"rarity": "legendary"}, "place": "city", "limited": 1},
            {"filter": {"rarity": "very-rare"}, "place": "city", "limited": "1d2"},
            {"filter": {"rarity": "rare"}, "place": "city", "limited": "1d3"},
            {"filter": {"rarity": "uncommon"}, "place": "town", "limited": "1d4"},
            {"filter": {"category": "potion"}, "place": "village"},
            {"filter": {"rarity": "common"}, "place": "town"},
            {"filter": {"category": "poison"}, "place": "city", "limited": "1d4"},
            {"filter": {"category": "waterborne-vehicle"}, "place": "town", "limited": 1},
            {"filter": {"category": "land-vehicle"}, "place": "village"},
            {"filter": {"category": "armor"}, "place": "village"},
        ],
        "sellers": [
            {"id": "general-store", "label": "general store",
             "sells": [*mundane, {"category": "ammunition", "tag": "mundane"}]},
            {"id": "inn", "label": "inn", "sells": [{"category": "service"}]},
            {"id": "smith", "label": "smith", "place": "village",
             "sells": [{"category": category, "tag": "mundane"}
                       for category in ("weapon", "armor", "shield", "ammunition")]},
            {"id": "alchemist", "label": "alchemist", "place": "village",
             "sells": [{"category": "potion"}, {"category": "poison"}]},
            {"id": "shipwright", "label": "shipwright", "place": "town",
             "sells": [{"category": "waterborne-vehicle"}]},
            {"id": "arcane-dealer", "label": "arcane dealer", "place": "town",
             "sells": [{"tag": "magical"}]},
            {"id": "fence", "label": "Fence", "place": "town", "honest": False,
             "sells": [{"tag": "magical"}], "stock": {"table": "fences_odd_lot"},
             "manner": {"check": {"skill": "insight"}, "dc": 13,
                        "advantageIf": [{"value": {"derived": "knows_trade"}, "atLeast": 1}],
                        "says": "their eyes slide away when you ask about it"}},
        ],
    }


def items_block() -> dict[str, Any]:
    categories = sorted(_labelled(list(CATEGORY_LABELS.items())), key=lambda row: row["id"])
    return {
        "categories": categories,
        "rarities": _labelled(RARITIES),
        "tags": tags(),
        "stats": stats(),
        "slots": [{"id": "hands", "label": "Hands", "count": 2},
                  {"id": "body", "label": "Body", "count": 1}],
        "binding": {"label": "Attunement", "max": {"const": 3}},
        "carry": {"stat": "weight", "encumberedAbove": {"derived": "encumbered_above"},
                  "limit": {"derived": "carrying_capacity"}, "unit": "lb"},
        "currencies": currencies(),
        "lootTables": loot_tables(),
        "startingGear": starting_gear(),
        "market": market(),
        "namesItAt": 5,
        "revealsFakes": [
            {"id": "identify", "label": "Identify"},
            {"id": "detect-poison", "label": "Detect Poison and Disease",
             "items": ["magic_items/potion-of-poison"]},
        ],
    }


def _extra_attack() -> str:
    """SRD "Extra Attack": two attacks an Attack action from level 5 of a barbarian, fighter,
    monk, paladin or ranger; a fighter three from 11 and four from 20."""
    levels = ", ".join(f"@level.{name}"
                       for name in ("fighter", "barbarian", "monk", "paladin", "ranger"))
    return (f"1 + min(1, floor(max({levels}) / 5)) + min(1, floor(@level.fighter / 11))"
            " + min(1, floor(@level.fighter / 20))")


def _template(role: str, label: str, attribute: str, hp: str, defence: str, attack: str,
              damage: str, kind: str, loot: str, attacks: str | None = None) -> dict[str, Any]:
    fight = {"defence": defence, "attack": attack, "damage": damage, "damageType": kind}
    if attacks is not None:
        fight["attacks"] = attacks
    return {"role": role, "label": label, "defaults": {"attribute": attribute},
            "tracks": {"hp": hp}, "combat": fight, "loot": loot}


def templates() -> list[dict[str, Any]]:
    """CMB-TPL-1..8: the spec's standard template as written, and gmtags' own minion, elite
    and boss in the numbers of the SRD's monsters by challenge (a goblin's AC 15 and +4, an
    ogre's 59 hit points, a young dragon's three attacks), each with the damage type of its
    strikes (CMB-TYPE-1: a scimitar slashes, a bite pierces, an ogre's club bludgeons). A
    template names one loot table, so each role drops from the challenge band it stands for."""
    return [
        _template("standard", "Standard", "min(5, floor((@tier + 1) / 2))", "8 + 6 * @tier",
                  "12 + @tier", "@tier", "(@tier)d6 + @tier", "slashing", "individual_cr0_4"),
        _template("minion", "Minion", "floor((@tier + 1) / 2)", "4 * @tier", "11 + @tier",
                  "@tier + 2", "1d6 + @tier", "piercing", "individual_cr0_4"),
        _template("elite", "Elite", "min(6, @tier + 1)", "15 * @tier + 10", "13 + @tier",
                  "@tier + 4", "(@tier)d8 + @tier + 2", "slashing", "individual_cr5_10", "2"),
        _template("boss", "Boss", "min(7, @tier + 2)", "30 * @tier + 20", "14 + @tier",
                  "@tier + 6", "(@tier + 1)d10 + @tier + 3", "bludgeoning", "hoard_cr5_10", "3"),
    ]


def combat_conditions() -> list[dict[str, Any]]:
    """The fight keys of the SRD conditions (SRD "Conditions"): who cannot act, attack rolls
    with advantage (edge 1) or disadvantage (-1), hits that are critical up close, and the
    petrified creature's resistance to all damage and immunity to poison."""
    cannot: dict[str, Any] = {"noActions": True}
    helpless = [{"edge": 1}, {"reach": "near", "crit": True}]  # advantage once, crit near
    return [
        {"condition": "blinded", "edge": -1, "checks": ["attack"], "against": [{"edge": 1}]},
        {"condition": "frightened", "edge": -1, "checks": ["attack"]},
        {"condition": "incapacitated", **cannot},
        {"condition": "invisible", "edge": 1, "checks": ["attack"], "against": [{"edge": -1}]},
        {"condition": "paralyzed", **cannot, "against": helpless},
        {"condition": "petrified", **cannot, "against": [{"edge": 1}],
         "resist": list(DAMAGE_TYPES), "immune": ["poison"],
         "conditionImmunities": ["poisoned"]},
        {"condition": "poisoned", "edge": -1, "checks": ["attack"]},
        {"condition": "prone", "edge": -1, "checks": ["attack"],
         "against": [{"edge": 1, "reach": "near"}, {"edge": -1, "reach": "far"}]},
        {"condition": "restrained", "edge": -1, "checks": ["attack"], "against": [{"edge": 1}]},
        {"condition": "stunned", **cannot, "against": [{"edge": 1}]},
        {"condition": "unconscious", **cannot, "against": helpless},
    ]


def combat() -> dict[str, Any]:
    """Formula combat that fights like 5e (spec/combat.md Part A): a d20 attack roll with the
    weapon's numbers against AC; AC is the worn armour's base plus the Dexterity modifier up
    to its cap (none for heavy armour; 10 + Dex unarmoured), the shield's +2 and magic
    bonuses; an unarmed strike deals 1 + Strength; initiative is d20 + Dexterity."""
    dex = "min(@dex.mod, @armor_dex_cap) * min(@armor_dex_cap, 1)"  # heavy armour: cap 0
    return {
        "kind": "formula",
        "economy": {"budgets": [{"id": "action", "label": "Action"},
                                {"id": "bonus", "label": "Bonus action"},
                                {"id": "reaction", "label": "Reaction"}]},
        "distance": {"unit": "ft"},
        "turn": {"initiative": {"check": "initiative"},
                 "actions": [{"id": "action", "name": "Action", "per": "1",
                              "attacks": _extra_attack()},
                             {"id": "bonus", "name": "Bonus action", "per": "1"},
                             {"id": "reaction", "name": "Reaction", "per": "1"}]},
        "attack": {"check": "attack",
                   "defence": f"@armor_base + {dex} + @shield_bonus + @armor_magic",
                   "damage": "1 + @str.mod", "damageType": "bludgeoning"},
        "templates": templates(),
        "conditions": combat_conditions(),
        "damageTypes": list(DAMAGE_TYPES),
    }


CATALOG_FILES = {
    "equipment": "Equipment (weapons, armor, ammunition)",
    "gear": "Adventuring gear, tools, trade goods, poisons, vehicles",
    "magic_items": "Magic items",
}


def build(srd: Path) -> dict[str, Any]:
    """Every output file (relative path → JSON document)."""
    equipment, gear = mundane_entries(srd)
    catalogs = {"equipment": equipment, "gear": gear, "magic_items": magic_entries(srd)}
    files: dict[str, Any] = {}
    for ident, label in CATALOG_FILES.items():
        files[f"srd5/{ident}.json"] = {
            "id": ident, "label": f"{label} ({SHORT_CREDIT})", "holds": "items",
            "entries": sorted(catalogs[ident], key=lambda entry: entry["id"]),
        }
    files["srd5.json"] = {
        "id": "srd5",
        "label": f"5e ({SHORT_CREDIT})",
        "capabilityApi": "1.813",
        "sheet": sheet(),
        "live": {"pools": [{"id": "hp", "label": "Hit points", "health": True,
                            "max": {"field": "hit_point_max"}}]},
        "conditions": conditions(),
        "rests": [{"id": "short-rest", "label": "Short rest"},
                  {"id": "long-rest", "label": "Long rest"}],
        "resolution": resolution(),
        "items": items_block(),
        "catalogs": [{"id": "services", "label": f"Services ({SHORT_CREDIT})", "holds": "items",
                      "entries": service_entries()}],
        "catalogFiles": [f"srd5/{ident}.json" for ident in CATALOG_FILES],
        "layers": [{"id": "low-magic", "label": "Low magic: no seller carries magic items",
                    "items": {"unsold": [{"tag": "magical"}]}}],
        "combat": combat(),
    }
    return files


def render(document: Any) -> str:
    return json.dumps(document, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def license_text() -> str:
    return (
        "# Licence of `srd5.json` and `srd5/*.json`\n\n"
        "These files are generated by `scripts/srd5_convert.py` from the SRD 5.1 item data in\n"
        "`fixtures/srd-5.1/` (open5e, `data/v2/wizards-of-the-coast/srd-2014/`, commit 7d44bb0).\n"
        "They are licensed under the Creative Commons Attribution 4.0 International License\n"
        "(CC-BY-4.0), like their source.\n\n"
        f"{ATTRIBUTION}\n\n"
        "Changes made: converted to the gmtags ruleset format; descriptions shortened to their\n"
        "first paragraph; magic items the SRD leaves unpriced are given prices by rarity; the\n"
        "market, loot tables, starting-gear choices and the services list are gmtags' own.\n"
    )


def write(srd: Path, out: Path) -> list[Path]:
    """Write every output file under ``out``; returns the paths written."""
    written = []
    for relative, document in build(srd).items():
        path = out / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(render(document), encoding="utf-8", newline="\n")
        written.append(path)
    licence = out / "srd5.LICENSE.md"
    licence.write_text(license_text(), encoding="utf-8", newline="\n")
    written.append(licence)
    return written


def main(argv: list[str]) -> int:
    srd = Path(argv[1]) if len(argv) > 1 else ROOT / "fixtures" / "srd-5.1"
    out = Path(argv[2]) if len(argv) > 2 else ROOT / "fixtures" / "rulesets"
    for path in write(srd, out):
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
