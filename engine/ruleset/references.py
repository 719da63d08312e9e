"""Load-time rules of the item block and item entries that pydantic's field types cannot say:
references that must exist (``<catalog>/<entry>``, coins, tags, places, tables, conditions,
budgets), rules across keys, and item values read through stats (docs/rules/items.md). Every rule
here is **[Import]**: an impossible rule is refused at load, never found in play."""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from ..dice import parse_dice
from .combat import Attack, StatRead, ToHit, Use
from .fakes import CheckName, Tell
from .gear import GearLine
from .items import Item, ItemBlock, Stat
from .loot import ItemFilter
from .pointers import Problem, duplicates, pointer
from .ruleset import Ruleset
from .values import Threshold, ValueRef

Where = tuple[str | int, ...]
# OQ-4: the most stacks one bag takes at once (engine/game.py MAX_STACKS_PER_BAG; the ruleset
# package cannot import the game module, which imports it).
MAX_STACKS_PER_BAG = 500
DEFAULT_STACK = 999_999


@dataclass
class Names:
    """The ids a ruleset declares, looked up while checking references."""

    ruleset: Ruleset
    block: ItemBlock
    items: dict[str, Item] = field(default_factory=dict)
    coins: set[str] = field(default_factory=set)
    problems: list[Problem] = field(default_factory=list)

    def __post_init__(self) -> None:
        for catalog in self.ruleset.catalogs:
            for entry in catalog.entries:
                if catalog.holds == "items" and entry.item is not None:
                    self.items[f"{catalog.id}/{entry.id}"] = entry.item
        self.coins = {u.id for f in self.block.currencies for u in f.units}
        self.categories = {c.id for c in self.block.categories}
        self.rarities = {r.id for r in self.block.rarities}
        self.tags = {t.id for t in self.block.tags}
        self.stats = {s.id: s for s in self.block.stats}
        self.slots = {s.id for s in self.block.slots}
        sheet = self.ruleset.sheet
        self.abilities = {a.id for a in sheet.abilities}
        self.skills = {s.id for s in sheet.skills}
        self.saves = {s.id for s in sheet.saves}
        self.conditions = {c.id for c in self.ruleset.conditions}
        self.rests = {r.id for r in self.ruleset.rests}
        self.pools = {p.id: p for p in self.ruleset.live.pools}
        self.tables = {t.id for t in self.block.loot_tables}
        market = self.block.market
        self.places = {p.id for p in market.places} if market else set()
        economy = self.ruleset.combat.economy if self.ruleset.combat is not None else None
        self.budgets: set[str] | None = None if economy is None else {
            b.id for b in economy.budgets}

    def add(self, where: Where, message: str) -> None:
        self.problems.append(Problem(pointer(*where), message))

    def known(self, where: Where, ident: str | None, ids: Iterable[str] | Mapping[str, Any],
              what: str) -> None:
        """Report ``ident`` unless the ruleset declares it."""
        if ident is not None and ident not in ids:
            self.add(where, f'unknown {what} "{ident}"')

    def item(self, where: Where, ref: str) -> Item | None:
        found = self.items.get(ref)
        if found is None:
            self.add(where, f'unknown item "{ref}"')
        return found

    def budget(self, where: Where, ident: str) -> None:
        """ITM-WPN-5, ITM-CLIP-3, ITM-TOG-1, ITM-USE-5: one of ``combat.economy.budgets``."""
        if self.budgets is None:
            self.add(where, f'budget "{ident}" needs "combat.economy.budgets"')
        elif ident not in self.budgets:
            self.add(where, f'unknown budget "{ident}"')

    def item_filter(self, where: Where, row: ItemFilter) -> None:
        """ITM-MKT-6: a filter names block ids."""
        self.known((*where, "rarity"), row.rarity, self.rarities, "rarity")
        self.known((*where, "category"), row.category, self.categories, "category")
        self.known((*where, "tag"), row.tag, self.tags, "tag")


ValueCheck = Callable[[Where, ValueRef, bool], list[Problem]]


def block_problems(ruleset: Ruleset, block: ItemBlock,
                   value_problems: ValueCheck) -> list[Problem]:
    """Everything the item block refers to, and every item entry's references.

    ``value_problems(where, ref, live_ok)`` checks a value reference against the sheet.
    """
    names = Names(ruleset, block)
    _caps(names)
    _loot(names)
    _gear(names, value_problems)
    _market(names, value_problems)
    for index, ident in duplicates(w.id for w in block.reveals_fakes):
        names.add(("items", "revealsFakes", index, "id"), f'duplicate id "{ident}"')
    for w_index, way in enumerate(block.reveals_fakes):
        for t_index, tag in enumerate(way.tags):
            names.known(("items", "revealsFakes", w_index, "tags", t_index), tag, names.tags, "tag")
        for i_index, ref in enumerate(way.items):  # ITM-FAKEV-3
            where = ("items", "revealsFakes", w_index, "items", i_index)
            target = names.item(where, ref)
            if target is not None and target.passes_for is None:
                names.add(where, f'"{ref}" is not a fake')
    for c_index, catalog in enumerate(ruleset.catalogs):
        if catalog.holds != "items":
            continue
        for e_index, entry in enumerate(catalog.entries):
            if entry.item is not None:
                _entry(names, ("catalogs", c_index, "entries", e_index, "item"), entry.item,
                       value_problems)
    return names.problems


def _caps(names: Names) -> None:
    """ITM-CAPS-2: a cap names a number stat and lies in its range (whole where it must)."""
    for c_index, cap in enumerate(names.block.rarity_caps):
        for key, value in cap.stats.items():
            where = ("items", "rarityCaps", c_index, "stats", key)
            stat = names.stats.get(key)
            if stat is None or stat.type != "number":
                names.add(where, f'"{key}" is not a number stat of the block')
            elif (reason := stat_value_problem(stat, value)) is not None:
                names.add(where, reason)


def _loot(names: Names) -> None:
    """ITM-LOOT-5..9: unique tables; rows name items, coins and filter ids that exist."""
    for index, ident in duplicates(t.id for t in names.block.loot_tables):
        names.add(("items", "lootTables", index, "id"), f'duplicate id "{ident}"')
    for t_index, table in enumerate(names.block.loot_tables):
        for r_index, row in enumerate(table.entries):
            where = ("items", "lootTables", t_index, "entries", r_index)
            if row.item is not None:
                names.item((*where, "item"), row.item)
            if row.filter is not None:
                names.item_filter((*where, "filter"), row.filter)
            names.known((*where, "coins"), row.coins, names.coins, "coin")


def _gear(names: Names, value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-GEAR-6..22."""
    block = names.block
    for index, ident in duplicates(g.id for g in block.starting_gear):
        names.add(("items", "startingGear", index, "id"), f'duplicate id "{ident}"')
    for g_index, gear in enumerate(block.starting_gear):
        base: Where = ("items", "startingGear", g_index)
        if gear.fits is not None:  # ITM-GEAR-14: no live state
            names.problems.extend(value_problems((*base, "fits", "value"), gear.fits.value, False))
        lines: list[tuple[Where, GearLine]] = [((*base, "lines", i), line)
                                               for i, line in enumerate(gear.lines)]
        for c_index, choice in enumerate(gear.choices):
            for o_index, option in enumerate(choice.options):
                lines.extend(((*base, "choices", c_index, "options", o_index, "lines", i), line)
                             for i, line in enumerate(option.lines))
        for where, line in lines:
            _gear_line(names, where, line)


def _gear_line(names: Names, where: Where, line: GearLine) -> None:
    refs = [((*where, "item"), line.item)] if line.item is not None else []
    refs += [((*where, "oneOf", i), ref) for i, ref in enumerate(line.one_of or [])]
    for ref_where, ref in refs:
        item = names.item(ref_where, ref)
        if item is None:
            continue
        if item.service:  # ITM-GEAR-20/22
            names.add(ref_where, f'"{ref}" is a service')
            continue
        limit = 1 if item.charges is not None else (item.stack or DEFAULT_STACK)
        if math.ceil(line.count / limit) > MAX_STACKS_PER_BAG:  # ITM-GEAR-22, OQ-4
            names.add((*where, "count"), f"{line.count} of \"{ref}\" need more than "
                      f"{MAX_STACKS_PER_BAG} stacks")
    names.known((*where, "coins"), line.coins, names.coins, "coin")
    if line.name is not None and names.block.freeform != "plain":  # ITM-GEAR-6
        names.add((*where, "name"), 'a plain item needs "freeform": "plain"')


def _market(names: Names,
            value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-MKT-2..15, ITM-DAY-10..16, ITM-TELL-7."""
    market = names.block.market
    if market is None:
        return
    base: Where = ("items", "market")
    for key in ("prices", "places", "sellers"):
        for index, ident in duplicates(row.id for row in getattr(market, key)):
            names.add((*base, key, index, "id"), f'duplicate id "{ident}"')
    defaults = sum(level.default for level in market.prices)
    if defaults != 1:  # ITM-MKT-2
        names.add((*base, "prices"), f"exactly one price level is the default, not {defaults}")
    for p_index, place in enumerate(market.places):
        if place.purse is not None:  # ITM-DAY-16
            names.known((*base, "places", p_index, "purse", "unit"), place.purse.unit,
                        names.coins, "coin")
    for s_index, rule in enumerate(market.sold):
        where = (*base, "sold", s_index)
        names.item_filter((*where, "filter"), rule.filter)
        names.known((*where, "place"), rule.place, names.places, "place")
        if rule.place is None and rule.limited is None:  # ITM-MKT-5, ITM-DAY-7
            names.add(where, 'a sold rule names a "place", a "limited" or both')
    for f_index, row in enumerate(market.unsold):
        names.item_filter((*base, "unsold", f_index), row)
    for s_index, seller in enumerate(market.sellers):
        where = (*base, "sellers", s_index)
        for f_index, row in enumerate(seller.sells):
            names.item_filter((*where, "sells", f_index), row)
        names.known((*where, "place"), seller.place, names.places, "place")
        if seller.stock is not None:  # ITM-DAY-10
            names.known((*where, "stock", "table"), seller.stock.table, names.tables,
                        "loot table")
        if seller.only is not None:  # ITM-MKT-12: live state allowed
            names.problems.extend(value_problems((*where, "only", "value"),
                                                 seller.only.value, True))
        if seller.manner is not None:
            if seller.honest:  # ITM-TELL-7
                names.add((*where, "manner"), 'only a seller with "honest": false has a manner')
            _tell(names, (*where, "manner"), seller.manner, value_problems)


def _check_name(names: Names, where: Where, check: CheckName,
                value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-GATE-2, ITM-TELL-3: exactly one of skill, ability, value — and it exists."""
    given = [k for k in ("skill", "ability", "value") if getattr(check, k) is not None]
    if len(given) != 1:
        names.add(where, f"a check names exactly one of skill, ability, value (found {len(given)})")
    names.known((*where, "skill"), check.skill, names.skills, "skill")
    names.known((*where, "ability"), check.ability, names.abilities, "ability")
    if check.value is not None:
        names.problems.extend(value_problems((*where, "value"), check.value, True))


def _thresholds(names: Names, where: Where, rows: list[Threshold],
                value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    for index, row in enumerate(rows):
        names.problems.extend(value_problems((*where, index, "value"), row.value, True))


def _tell(names: Names, where: Where, tell: Tell,
          value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-TELL-3..6, ITM-FAKEV-3."""
    _check_name(names, (*where, "check"), tell.check, value_problems)
    for key in ("needs", "needs_any", "advantage_if", "disadvantage_if"):
        wire = {"needs_any": "needsAny", "advantage_if": "advantageIf",
                "disadvantage_if": "disadvantageIf"}.get(key, key)
        _thresholds(names, (*where, wire), getattr(tell, key), value_problems)
    if tell.carries is not None:
        for index, ref in enumerate(tell.carries.any_of):
            names.item((*where, "carries", "anyOf", index), ref)


def stat_value_problem(stat: Stat, value: object) -> str | None:
    """Why ``value`` is not one the stat can take (ITM-ENTRY-6), or None."""
    kind = stat.type
    if kind == "number":
        if isinstance(value, bool) or not isinstance(value, int | float):
            return f'"{stat.id}" takes a number'
        # JSON's 1e400 reads as infinity; a huge whole number stays an int (float() overflows).
        if isinstance(value, float) and not math.isfinite(value):
            return f'"{stat.id}" takes a finite number'
        if stat.integer and isinstance(value, float) and not value.is_integer():
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


def _stat_read(names: Names, where: Where, read: object, item: Item,
               types: tuple[str, ...]) -> object | None:
    """ITM-WPN-21/22: ``{"stat": id}`` names a block stat of one of ``types``; returns the
    item's effective value (OQ-3: its own, else the stat's default)."""
    if not isinstance(read, StatRead):
        return read
    stat = names.stats.get(read.stat)
    if stat is None:
        names.add((*where, "stat"), f'unknown stat "{read.stat}"')
        return None
    if stat.type not in types:
        names.add((*where, "stat"), f'"{read.stat}" is not a {" or ".join(types)} stat')
        return None
    return item.stats.get(read.stat, stat.default)


def _to_hit(names: Names, where: Where, to_hit: ToHit, item: Item, pool_fight: bool) -> None:
    if isinstance(to_hit.abilities, StatRead):
        _stat_read(names, (*where, "abilities"), to_hit.abilities, item, ("enum",))
    else:
        abilities = [to_hit.abilities] if isinstance(to_hit.abilities, str) else \
            to_hit.abilities or []
        for index, ident in enumerate(abilities):
            names.known((*where, "abilities", index) if isinstance(to_hit.abilities, list)
                        else (*where, "abilities"), ident, names.abilities, "ability")
    if isinstance(to_hit.skill, StatRead):
        _stat_read(names, (*where, "skill"), to_hit.skill, item, ("enum",))
    else:
        names.known((*where, "skill"), to_hit.skill, names.skills, "skill")
    _stat_read(names, (*where, "bonus"), to_hit.bonus, item, ("number",))
    _stat_read(names, (*where, "target"), to_hit.target, item, ("number",))
    if to_hit.target is not None and not pool_fight:  # ITM-WPN-11
        names.add((*where, "target"), 'a per-die target needs a "dice-pool" resolution')
    elif to_hit.target is not None:
        target = getattr(names.ruleset.resolution, "target", None)
        if target is not None and target.min == target.max:  # ITM-WPN-11: a variable target
            names.add((*where, "target"),
                      "a per-die target needs a pool whose target varies "
                      "(resolution.target.min below resolution.target.max)")


def _attack(names: Names, where: Where, attack: Attack, item: Item) -> None:
    """ITM-WPN-5..22, ITM-AMMO-2, ITM-CLIP-2/3, ITM-MODE-2/3, ITM-OFF-2, ITM-ONHIT-1..6."""
    resolution = names.ruleset.resolution
    pool_fight = resolution is not None and resolution.kind == "dice-pool"
    combat = names.ruleset.combat
    names.budget((*where, "budget"), attack.budget)
    if attack.to_hit is not None:
        _to_hit(names, (*where, "toHit"), attack.to_hit, item, pool_fight)
    damage = attack.damage
    if (damage is None or damage.dice is None) and not pool_fight:  # ITM-WPN-13
        names.add((*where, "damage", "dice") if damage else where,
                  "a weapon in a sum fight deals damage dice")
    if damage is not None:
        _stat_read(names, (*where, "damage", "dice"), damage.dice, item, ("dice",))
        if isinstance(damage.abilities, StatRead):
            _stat_read(names, (*where, "damage", "abilities"), damage.abilities, item, ("enum",))
        _stat_read(names, (*where, "damage", "bonus"), damage.bonus, item, ("number",))
        _stat_read(names, (*where, "damage", "type"), damage.type, item, ("text", "enum"))
    _stat_read(names, (*where, "versatile"), attack.versatile, item, ("dice",))
    if ((attack.reach is not None or attack.range is not None)
            and (combat is None or combat.distance is None)):
        names.add((*where, "reach" if attack.reach is not None else "range"),
                  'reach and range need "combat.distance"')  # ITM-WPN-16
    if attack.ammo is not None:  # ITM-AMMO-2
        names.known((*where, "ammo", "tag"), attack.ammo.tag, names.tags, "tag")
    if attack.clip is not None:
        _stat_read(names, (*where, "clip", "max"), attack.clip.max, item, ("number",))
        names.budget((*where, "clip", "reload"), attack.clip.reload)
    for index, ident in duplicates(m.id for m in attack.modes):
        names.add((*where, "modes", index, "id"), f'duplicate id "{ident}"')
    for index, mode in enumerate(attack.modes):  # ITM-MODE-3
        if mode.ammo is not None and attack.ammo is None and attack.clip is None:
            names.add((*where, "modes", index, "ammo"), 'a mode that shoots needs "ammo" or "clip"')
    if attack.off_hand and (combat is None or combat.off_hand is None):  # ITM-OFF-2
        names.add((*where, "offHand"), 'an off-hand weapon needs "combat.offHand"')
    _stat_read(names, (*where, "floor"), attack.floor, item, ("number",))
    for index, hit in enumerate(attack.on_hit):
        hit_where = (*where, "onHit", index)
        names.known((*hit_where, "condition"), hit.condition, names.conditions, "condition")
        for key, save in (("save", hit.save), ("saveEnds", hit.save_ends)):
            if save is not None:
                names.known((*hit_where, key, "save"), save.save, names.saves, "save")
        if hit.save_ends is not None and hit.rounds is not None:  # ITM-ONHIT-6
            names.add((*hit_where, "rounds"), 'an entry with "saveEnds" has no "rounds"')
    for index, plus in enumerate(attack.plus):
        if plus.dice is None and plus.flat is None:
            names.add((*where, "plus", index), 'a plus component deals "dice" or "flat"')
        if plus.save is not None:
            names.known((*where, "plus", index, "save", "save"), plus.save.save, names.saves,
                        "save")


def _use(names: Names, where: Where, use: Use, item: Item,
         value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-USE-5..15, ITM-CHG-1/6/7, ITM-GATE-2/3, ITM-OUT-6."""
    if (use.budget is None) == (not use.free):  # ITM-USE-5
        names.add(where, 'a use spends a "budget" or is "free"')
    if use.budget is not None:
        names.budget((*where, "budget"), use.budget)
    if use.to_hit is not None:
        resolution = names.ruleset.resolution
        _to_hit(names, (*where, "toHit"), use.to_hit, item,
                resolution is not None and resolution.kind == "dice-pool")
    if use.save is not None:
        names.known((*where, "save", "save"), use.save.save, names.saves, "save")
    _stat_read(names, (*where, "saveDifficulty"), use.save_difficulty, item, ("number",))
    for index, applied in enumerate(use.applies):
        names.known((*where, "applies", index, "condition"), applied.condition, names.conditions,
                    "condition")
    if use.restore is not None:
        pool = names.pools.get(use.restore.pool)
        if pool is None:  # ITM-USE-14
            names.add((*where, "restore", "pool"), f'unknown pool "{use.restore.pool}"')
        elif pool.health:
            names.add((*where, "restore", "pool"), "restore never names the health pool")
        if use.kind not in ("heal", "buff"):  # ITM-USE-15
            names.add((*where, "restore"), 'restore sits on a "heal" or a "buff"')
    if use.consumes and use.charges is not None:  # ITM-CHG-6
        names.add((*where, "charges"), "a use spends the item or charges, never both")
    if use.charges is not None and item.charges is None:
        names.add((*where, "charges"), 'the item has no "charges" to spend')
    if use.gate is not None:
        _check_name(names, (*where, "gate", "check"), use.gate.check, value_problems)
        difficulty = _stat_read(names, (*where, "gate", "difficulty"), use.gate.difficulty,
                                item, ("number",))
        if isinstance(difficulty, int | float) and not 1 <= difficulty <= 100:  # ITM-GATE-3
            names.add((*where, "gate", "difficulty"), f"a difficulty is 1 to 100, not {difficulty}")
        if use.gate.unless is not None:
            names.problems.extend(value_problems((*where, "gate", "unless", "value"),
                                                 use.gate.unless.value, True))


def _entry(names: Names, where: Where, item: Item,
           value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """The references of one item entry beyond category/rarity/tags/stats/slots/cost."""
    if item.sold is not None:  # ITM-ENTRY-13/14
        if names.block.market is None:
            names.add((*where, "sold"), 'an item is "sold" only in a ruleset with a "market"')
        else:
            names.known((*where, "sold", "place"), item.sold.place, names.places, "place")
    if item.toggle is not None:
        names.budget((*where, "toggle", "budget"), item.toggle.budget)
    if item.attack is not None:
        _attack(names, (*where, "attack"), item.attack, item)
    if item.use is not None:
        _use(names, (*where, "use"), item.use, item, value_problems)
    if item.charges is not None:
        charges_max = _stat_read(names, (*where, "charges", "max"), item.charges.max, item,
                                 ("number",))
        if isinstance(charges_max, int | float) and charges_max < 1:  # ITM-CHG-3, OQ-33
            names.add((*where, "charges", "max"), f"the item holds {charges_max:g} charges")
        if item.use is None or item.use.charges is None:  # ITM-CHG-7
            names.add((*where, "charges"), "an item's charges are spent by its use "
                      '("use.charges")')
        recharge = item.charges.recharge
        for index, rest in enumerate(recharge.rests if recharge else []):  # ITM-RCHG-1
            names.known((*where, "charges", "recharge", "rests", index), rest, names.rests, "rest")
        breaks = item.charges.breaks_on
        if breaks is not None and breaks.at_most > breaks.die:
            names.add((*where, "charges", "breaksOn", "atMost"),
                      f"a d{breaks.die} never shows more than {breaks.die}")
    _fake(names, where, item, value_problems)


def _fake(names: Names, where: Where, item: Item,
          value_problems: Callable[[Where, ValueRef, bool], list[Problem]]) -> None:
    """ITM-FAKE-3, ITM-FAKEV-2..4."""
    if item.passes_for is None:
        for key, value in (("tells", item.tells), ("foolsReveal", item.fools_reveal)):
            if value is not None:  # ITM-FAKEV-2
                names.add((*where, key), f'only a fake ("passesFor") has "{key}"')
    else:
        target_where = (*where, "passesFor")
        target = names.item(target_where, item.passes_for)
        if target is not None:
            if target.passes_for is not None:
                names.add(target_where, f'"{item.passes_for}" is a fake itself')
            elif target.cost is None or target.service:
                names.add(target_where, f'"{item.passes_for}" is not a saleable item')
            elif target.category != item.category:
                names.add(target_where, f'"{item.passes_for}" is of another category')
            elif target.slots != item.slots:
                names.add(target_where, f'"{item.passes_for}" is worn in other slots')
            elif item.binds is not None and target.binds is None:
                names.add(target_where, f'"{item.passes_for}" does not bind')
    for index, tell in enumerate(item.tells or []):
        _tell(names, (*where, "tells", index), tell, value_problems)
    ways = {w.id for w in names.block.reveals_fakes}
    for index, way in enumerate(item.fools_reveal or []):  # ITM-FAKEV-4
        names.known((*where, "foolsReveal", index), way, ways, "way to reveal fakes")
