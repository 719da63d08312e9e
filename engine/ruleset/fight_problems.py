"""Load-time rules of the ``combat`` block that its field types cannot say
(docs/design.md#combat-ruleset-keys, docs/rules/combat.md#part-a--fights-under-a-ruleset, and the
item rules from docs/rules/items.md#8-typed-defences-from-conditions-levels-items-and-sheet-rows
on): which combat kind a resolution allows, the skills, budgets, conditions, pools and loot tables
the block names, what every formula's ``@`` references read, and the damage words and except tags of
every defence."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from pydantic import TypeAdapter, ValidationError

from .abilities import FREE, REACTION, Ability, is_fight_ability
from .combat import Attack
from .fight import (
    DAMAGE,
    ROLL_HIGH,
    TIER,
    Combat,
    Defences,
    Defended,
    Except,
    reference_read,
)
from .foe_problems import foe_problems
from .formula import Formula, references
from .outcome_problems import outcome_problems
from .pointers import Problem, duplicates, pointer
from .ruleset import Ruleset
from .values import ValueRef

Where = tuple[str | int, ...]
ValueCheck = Callable[[Where, ValueRef, bool], list[Problem]]
_DEFENCES: TypeAdapter[Any] = TypeAdapter(Defences)
# ITM-ARM-2: the condition effects a level cannot have, nor an item's worn or carried part.
NOT_ON_ITEMS = frozenset({"half-move-to-stand", "ends-on-damage", "cannot-target-source",
                          "cannot-target-source-side", "cannot-approach-source"})


def fight_problems(ruleset: Ruleset, value_problems: ValueCheck) -> list[Problem]:
    """Everything wrong with the combat block, and the damage words and except tags of the
    items' defences (ITM-DEF-10/11/13, ITM-ARM-4)."""
    problems: list[Problem] = []
    combat = ruleset.combat
    if combat is not None:
        problems += _kind(ruleset, combat)
        problems += _economy(ruleset, combat)
        problems += _formulas(ruleset, combat)
        problems += _templates(ruleset, combat)
        problems += _defences(ruleset, combat, value_problems)
        problems += _sheet_hides(ruleset, combat)
        problems += outcome_problems(ruleset, combat)  # CMB-OUTC-1..4
        problems += _pool(ruleset, combat, value_problems)  # pool fights (ITM-HARD-3)
        problems += foe_problems(ruleset, combat)  # CMB-ABIL-4/5/7, CMB-HP0
    problems += _item_damage(ruleset)
    problems += _weapon_reads(ruleset)
    problems += _qualities(ruleset)
    problems += ability_problems(ruleset)  # CMB-REACT-4, CMB-SUS-1, CMB-ABIL-1..3
    return problems


def _add(problems: list[Problem], where: Where, message: str) -> None:
    problems.append(Problem(pointer("combat", *where), message))


def _kind(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """CMB-GEN-3, CHK-SYM-35: a symbol-pool ruleset fights with symbol-pool combat and only a
    symbol-pool ruleset does; formula combat needs its formulas."""
    problems: list[Problem] = []
    symbols = ruleset.resolution is not None and ruleset.resolution.kind == "symbol-pool"
    if symbols and combat.kind not in (None, "symbol-pool", "none"):
        _add(problems, ("kind",),
             f'a symbol-pool ruleset fights with symbol-pool combat, not "{combat.kind}"')
    elif not symbols and combat.kind == "symbol-pool":
        _add(problems, ("kind",), 'symbol-pool combat needs a "symbol-pool" resolution')
    if combat.kind == "formula" and combat.attack is None:
        _add(problems, ("kind",), 'formula combat needs "combat.attack"')
    problems += _symbol_attack(ruleset, combat)  # CHK-SYM-35
    return problems


def _symbol_attack(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """CHK-SYM-35 (engine/rules/fight/symbols.py): symbol-pool combat with ``combat.attack`` needs
    setback dice for the defence; ``attack.difficulty`` is its own key, at most the resolution's
    ``difficulty.max``. (Without ``combat.attack`` the block loads and its fights are refused.)"""
    problems: list[Problem] = []
    res = ruleset.resolution
    symbols = res is not None and res.kind == "symbol-pool" and combat.kind != "none"
    attack = combat.attack
    if not symbols:
        if attack is not None and attack.difficulty is not None:
            _add(problems, ("attack", "difficulty"),
                 '"difficulty" is for symbol-pool combat (the opposing dice of an attack)')
        return problems
    assert res is not None and res.kind == "symbol-pool"
    if attack is None:
        return problems
    if res.setback is None:
        _add(problems, ("attack", "defence"), "symbol-pool combat reads a target's defence as "
             'setback dice: declare "resolution.setback"')
    if attack.difficulty is not None and attack.difficulty > res.difficulty.max:
        _add(problems, ("attack", "difficulty"),
             f"{attack.difficulty} opposing dice is more than difficulty.max "
             f"({res.difficulty.max})")
    return problems


def _economy(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """ITM-WPN-5, CMB-TURN-15/16, CMB-ATK-2, ITM-OFF-2: budgets and action ids, and the
    skills initiative and attacks roll."""
    problems: list[Problem] = []
    budgets = {b.id for b in combat.economy.budgets} if combat.economy else None
    if combat.economy is not None:
        for index, ident in duplicates(b.id for b in combat.economy.budgets):
            _add(problems, ("economy", "budgets", index, "id"), f'duplicate id "{ident}"')
    skills = {s.id for s in ruleset.sheet.skills}

    def budget(where: Where, ident: str) -> None:
        if budgets is None:
            _add(problems, where, f'budget "{ident}" needs "combat.economy.budgets"')
        elif ident not in budgets:
            _add(problems, where, f'unknown budget "{ident}"')

    if combat.turn is not None:
        actions = combat.turn.actions
        for index, ident in duplicates(a.id for a in actions):
            _add(problems, ("turn", "actions", index, "id"), f'duplicate id "{ident}"')
        # the budgets stay the action ids (docs/design.md#combat-ruleset-keys)
        for index, action in enumerate(actions):
            budget(("turn", "actions", index, "id"), action.id)
        initiative = combat.turn.initiative
        if initiative is not None and initiative.check not in skills:
            _add(problems, ("turn", "initiative", "check"),
                 f'unknown skill "{initiative.check}"')
    if combat.attack is not None and combat.attack.check not in skills:
        _add(problems, ("attack", "check"), f'unknown skill "{combat.attack.check}"')
    if combat.off_hand is not None:
        budget(("offHand", "budget"), combat.off_hand.budget)
    return problems


def _pool(ruleset: Ruleset, combat: Combat, value_problems: ValueCheck) -> list[Problem]:
    """ITM-HARD-3: ``combat.pool`` needs a ``dice-pool`` resolution, and only a ruleset with the
    spending style may have hardness (its own or a creature's); the sheet values it reads name what
    the sheet has."""
    problems: list[Problem] = []
    pool = combat.pool
    kind = ruleset.resolution.kind if ruleset.resolution is not None else None
    if pool is not None and kind != "dice-pool":
        _add(problems, ("pool",), 'combat.pool is for a "dice-pool" resolution'
             + (f', not "{kind}"' if kind else ""))
    spending = pool is not None and pool.style == "spending"
    if pool is not None and pool.hardness is not None and not spending:
        _add(problems, ("pool", "hardness"),
             'hardness needs combat.pool.style "spending" (ITM-HARD-3)')
    if pool is not None and pool.gain is not None and not spending:
        _add(problems, ("pool", "gain"), 'gain needs combat.pool.style "spending"')
    for index, template in enumerate(combat.templates):
        if template.combat.hardness is not None and not spending:
            _add(problems, ("templates", index, "combat", "hardness"),
                 'hardness needs combat.pool.style "spending" (ITM-HARD-3)')
    for key in ("hardness", "reduction"):
        value = getattr(pool, key) if pool is not None else None
        if value is not None:
            problems += value_problems(("combat", "pool", key), value, True)
    return problems


def _formula_places(combat: Combat) -> Iterator[tuple[Where, Formula, frozenset[str], bool]]:
    """Every formula of the block with the names its place supplies and whether it may read
    the sheet's fields and derived values (a foe's formulas read only abilities)."""
    reads = frozenset(combat.attack.reads) if combat.attack is not None else frozenset()
    if combat.turn is not None:
        for index, action in enumerate(combat.turn.actions):
            yield ("turn", "actions", index, "per"), action.per, frozenset(), True
            if action.attacks is not None:
                yield ("turn", "actions", index, "attacks"), action.attacks, frozenset(), True
    if combat.attack is not None:
        attack = combat.attack
        yield ("attack", "defence"), attack.defence, frozenset(), True
        # CMB-READS-4/9: the damage reads the reads and the attack roll's higher die.
        yield ("attack", "damage"), attack.damage, reads | {ROLL_HIGH}, True
        for name, read in attack.reads.items():
            yield ("attack", "reads", name), read, frozenset(), True
    for index, template in enumerate(combat.templates):
        where: Where = ("templates", index)
        tier = frozenset({TIER})
        if template.defaults is not None:  # the modifier itself: @tier only
            yield (*where, "defaults", "attribute"), template.defaults.attribute, tier, False
        yield (*where, "tracks", "hp"), template.tracks.hp, tier, False
        fight = template.combat
        written: tuple[tuple[str, Formula | None], ...] = (
            ("defence", fight.defence), ("attack", fight.attack), ("damage", fight.damage),
            ("attacks", fight.attacks), ("harm", fight.harm), ("hardness", fight.hardness),
            ("reduction", fight.reduction))
        for key, formula in written:
            if formula is not None:
                yield (*where, "combat", key), formula, tier, False
    if combat.sustain is not None:  # CMB-SUS-4, OQ-CMB-12
        yield ("sustain", "dc"), combat.sustain.dc, frozenset({DAMAGE}), True
    if combat.narrative is not None and combat.narrative.damage is not None:
        yield ("narrative", "damage"), combat.narrative.damage, frozenset(), True


def _formulas(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """docs/design.md#formula-combat: a reference names what its place can read."""
    problems: list[Problem] = []
    for where, formula, given, sheet_values in _formula_places(combat):
        defaults_only = where[-1] == "attribute"
        for reference in references(formula.tree):
            if defaults_only:
                found = str(reference) == f"@{TIER}"
            else:
                found = reference_read(ruleset.sheet, reference, given, sheet_values) is not None
            if not found:
                hint = (" (a foe's ability modifier reads @tier alone)" if defaults_only else
                        " (a foe's formulas read @tier and abilities)" if not sheet_values
                        else "")
                _add(problems, where, f'unknown reference "{reference}"{hint}')
                break
    return problems


def _templates(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """CMB-TPL-2, ITM-LOOT-14, CMB-SUS-4, and the pools narrative effort draws on
    (docs/design.md#combat-ruleset-keys)."""
    problems: list[Problem] = []
    for index, role in duplicates(t.role for t in combat.templates):
        _add(problems, ("templates", index, "role"), f'duplicate role "{role}"')
    tables = {t.id for t in ruleset.items.loot_tables} if ruleset.items is not None else set()
    for index, template in enumerate(combat.templates):
        if template.loot is not None and template.loot not in tables:
            _add(problems, ("templates", index, "loot"), f'unknown loot table "{template.loot}"')
        kind = template.combat.damage_type
        words = combat.damage_words
        if kind is not None and words is not None and kind not in words:  # ITM-DEF-13
            _add(problems, ("templates", index, "combat", "damageType"),
                 f'unknown damage type "{kind}"')
    default = combat.attack.damage_type if combat.attack is not None else None
    if default is not None and combat.damage_words is not None \
            and default not in combat.damage_words:
        _add(problems, ("attack", "damageType"), f'unknown damage type "{default}"')
    if combat.sustain is not None:
        saves = {s.id for s in ruleset.sheet.saves} | {a.id for a in ruleset.sheet.abilities}
        if combat.sustain.save not in saves:
            _add(problems, ("sustain", "save"), f'unknown save "{combat.sustain.save}"')
    narrative = combat.narrative
    pools = {p.id for p in ruleset.live.pools}
    for key, pool in (("stamina", narrative.stamina if narrative else None),
                      ("mana", narrative.mana if narrative else None)):
        if pool is not None and pool not in pools:
            _add(problems, ("narrative", key), f'unknown pool "{pool}"')
    return problems


def _defences(ruleset: Ruleset, combat: Combat, value_problems: ValueCheck) -> list[Problem]:
    """ITM-DEF-1..13 and CMB-COND-1/2: the conditions and levels of the block."""
    problems: list[Problem] = []
    conditions = {c.id for c in ruleset.conditions}
    checks = {s.id for s in ruleset.sheet.skills} | {s.id for s in ruleset.sheet.saves}
    for index, name in duplicates(c.name for c in combat.conditions):
        _add(problems, ("conditions", index), f'a second entry for condition "{name}"')
    for index, entry in enumerate(combat.conditions):
        where: Where = ("conditions", index)
        key = "condition" if entry.condition is not None else "id"
        if entry.name not in conditions:
            _add(problems, (*where, key), f'unknown condition "{entry.name}"')
        for c_index, check in enumerate(entry.checks):
            if check not in checks:
                _add(problems, (*where, "checks", c_index), f'unknown check "{check}"')
        problems += _granted(ruleset, combat, ("combat", *where), entry)
    for index, ident in duplicates(level.id for level in combat.levels):
        _add(problems, ("levels", index, "id"), f'duplicate id "{ident}"')
    for index, level in enumerate(combat.levels):
        problems += value_problems(("combat", "levels", index, "value"), level.value, True)
        problems += _granted(ruleset, combat, ("combat", "levels", index), level)
    if combat.damage_types is not None:
        words = [t if isinstance(t, str) else t.id for t in combat.damage_types]
        for index, word in duplicates(words):
            _add(problems, ("damageTypes", index), f'duplicate damage type "{word}"')
    return problems


def _sheet_hides(ruleset: Ruleset, combat: Combat) -> list[Problem]:
    """ITM-HIDES-2/8: each source names a sheet list — a catalog of entries a character
    chooses (CHK-TAL-1), not an item catalog — whose ``column`` is an entry's text (a
    string, or a list of them); a column read for condition immunities declares only
    condition ids."""
    problems: list[Problem] = []
    conditions = {c.id.casefold() for c in ruleset.conditions}
    lists = {c.id: (index, c) for index, c in enumerate(ruleset.catalogs) if c.holds != "items"}
    for s_index, source in enumerate(combat.sheet_hides or ()):
        found = lists.get(source.list_)
        if found is None:
            _add(problems, ("sheetHides", s_index, "list"),
                 f'unknown list "{source.list_}" (a catalog that holds no items)')
            continue
        c_index, catalog = found
        for e_index, entry in enumerate(catalog.entries):
            value = (entry.filters or {}).get(source.column)
            if value is None:
                continue
            at = ("catalogs", c_index, "entries", e_index, "filters", source.column)
            texts = [value] if isinstance(value, str) else (
                value if isinstance(value, list) else None)
            if texts is None or not all(isinstance(t, str) for t in texts):
                problems.append(Problem(pointer(*at), "a sheetHides column holds text"))
                continue
            if source.kind != "conditionImmunities":
                continue
            for text in texts:
                for word in (w.strip() for w in text.split(",")):
                    if word and word.casefold() not in conditions:
                        problems.append(Problem(pointer(*at), f'unknown condition "{word}"'))
    return problems


def _granted(ruleset: Ruleset, combat: Combat, where: Where, granted: Defended) -> list[Problem]:
    """ITM-DEF-1/3/9/11/13 for one condition or level."""
    problems = _words(ruleset, combat, where, {
        "resist": granted.resist, "vulnerable": granted.vulnerable, "immune": granted.immune})
    conditions = {c.id for c in ruleset.conditions}
    for index, ident in enumerate(granted.condition_immunities or ()):
        if ident not in conditions:
            problems.append(Problem(pointer(*where, "conditionImmunities", index),
                                    f'unknown condition "{ident}"'))
    return problems


def _words(ruleset: Ruleset, combat: Combat | None, where: Where,
           defences: dict[str, Iterable[str | Except] | None]) -> list[Problem]:
    """ITM-DEF-9 (vulnerable takes plain words), ITM-DEF-11 (except tags are item tags),
    ITM-DEF-13 (declared damage words)."""
    problems: list[Problem] = []
    words = combat.damage_words if combat is not None else None
    tags = {t.id for t in ruleset.items.tags} if ruleset.items is not None else set()
    for key, entries in defences.items():
        for index, entry in enumerate(entries or ()):
            at = (*where, key, index)
            word = entry if isinstance(entry, str) else entry.type
            if isinstance(entry, Except):
                if key == "vulnerable":
                    problems.append(Problem(pointer(*at),
                                            "vulnerable takes plain damage words, no except"))
                for t_index, tag in enumerate(entry.except_):
                    if tag not in tags:
                        problems.append(Problem(pointer(*at, "except", t_index),
                                                f'unknown tag "{tag}"'))
                at = (*at, "type")
            if words is not None and word not in words:
                problems.append(Problem(pointer(*at), f'unknown damage type "{word}"'))
    return problems


def _item_damage(ruleset: Ruleset) -> list[Problem]:
    """ITM-ARM-4, ITM-DEF-10/13: the defences of worn and carried effects, and the damage
    types items write out (not read from a stat), where the block declares the words."""
    problems: list[Problem] = []
    combat = ruleset.combat
    words = combat.damage_words if combat is not None else None
    for c_index, catalog in enumerate(ruleset.catalogs):
        if catalog.holds != "items":
            continue
        for e_index, entry in enumerate(catalog.entries):
            item = entry.item
            if item is None:
                continue
            where: Where = ("catalogs", c_index, "entries", e_index, "item")
            for key, effects in (("worn", item.worn), ("carried", item.carried)):
                if effects is not None:
                    problems += _effect_defences(ruleset, combat, (*where, key),
                                                 effects.model_extra or {}, effects.effects)
            if words is None:
                continue
            typed: list[tuple[Where, str | None]] = []
            if item.attack is not None:
                typed += _attack_types((*where, "attack"), item.attack)
            if item.use is not None:
                typed.append(((*where, "use", "damageType"), item.use.damage_type))
                typed += [((*where, "use", "plus", i, "type"), p.type)
                          for i, p in enumerate(item.use.plus)]
            problems += [Problem(pointer(*at), f'unknown damage type "{word}"')
                         for at, word in typed if word is not None and word not in words]
    return problems


def _weapon_reads(ruleset: Ruleset) -> list[Problem]:
    """CMB-READS-6: a weapon's own reads name values of ``combat.attack.reads`` (the ones
    whose place they take), and read the wearer's sheet as those do."""
    problems: list[Problem] = []
    combat = ruleset.combat
    system = combat.attack.reads if combat is not None and combat.attack is not None else {}
    for c_index, catalog in enumerate(ruleset.catalogs):
        for e_index, entry in enumerate(catalog.entries if catalog.holds == "items" else ()):
            attack = entry.item.attack if entry.item is not None else None
            for name, formula in (attack.reads if attack is not None else {}).items():
                where = ("catalogs", c_index, "entries", e_index, "item", "attack", "reads", name)
                if name not in system:
                    known = ", ".join(system) or "none"
                    problems.append(Problem(pointer(*where), f'"{name}" is not a value of '
                                            f"combat.attack.reads (it has: {known})"))
                    continue
                unknown = next((r for r in references(formula.tree)
                                if reference_read(ruleset.sheet, r) is None), None)
                if unknown is not None:
                    problems.append(Problem(pointer(*where), f'unknown reference "{unknown}"'))
    return problems


def _qualities(ruleset: Ruleset) -> list[Problem]:
    """ITM-WPN-29, ITM-DEF-11: the ``qualities`` of damage that comes from no item weapon (a
    spell's ``mechanics``, a template's attacks and its abilities) are item tags."""
    tags = {t.id for t in ruleset.items.tags} if ruleset.items is not None else set()
    places: list[tuple[Where, list[str]]] = []
    for c_index, catalog in enumerate(ruleset.catalogs):
        for e_index, entry in enumerate(catalog.entries):
            written = entry.mechanics.get("qualities") if isinstance(entry.mechanics, dict) \
                else None
            if isinstance(written, list):
                places.append((("catalogs", c_index, "entries", e_index, "mechanics",
                                "qualities"), [str(q) for q in written]))
    combat = ruleset.combat
    for t_index, template in enumerate(combat.templates if combat is not None else ()):
        where: Where = ("combat", "templates", t_index, "combat")
        places.append(((*where, "qualities"), template.combat.qualities))
        places += [((*where, "abilities", a_index, "qualities"), ability.qualities)
                   for a_index, ability in enumerate(template.combat.abilities)]
    return [Problem(pointer(*at, index), f'unknown tag "{quality}"')
            for at, written in places for index, quality in enumerate(written)
            if quality not in tags]


def _attack_types(where: Where, attack: Attack) -> list[tuple[Where, str | None]]:
    damage_type = attack.damage.type if attack.damage is not None else None
    found: list[tuple[Where, str | None]] = []
    if isinstance(damage_type, str):  # a stat read is the item's, checked as a stat value
        found.append(((*where, "damage", "type"), damage_type))
    found += [((*where, "plus", i, "type"), p.type) for i, p in enumerate(attack.plus)]
    return found


def _effect_defences(ruleset: Ruleset, combat: Combat | None, where: Where,
                     extra: dict[str, Any], effects: list[str]) -> list[Problem]:
    """ITM-ARM-2/4/5, ITM-DEF-10: the effects, condition immunities and ``resist``,
    ``vulnerable``, ``immune`` (in the creature form) of a worn or carried part."""
    problems: list[Problem] = []
    for index, effect in enumerate(effects):  # ITM-ARM-2
        if effect in NOT_ON_ITEMS:
            problems.append(Problem(pointer(*where, "effects", index),
                                    f'"{effect}" is no effect of an item (nobody put it on '
                                    "its owner and it never ends by itself)"))
    immunities = extra.get("conditionImmunities")
    if immunities is not None:  # ITM-ARM-5
        known = {c.id for c in ruleset.conditions}
        if not isinstance(immunities, list) or not all(isinstance(c, str) for c in immunities):
            problems.append(Problem(pointer(*where, "conditionImmunities"),
                                    "a list of the ruleset's condition ids"))
        else:
            problems += [Problem(pointer(*where, "conditionImmunities", index),
                                 f'unknown condition "{ident}"')
                         for index, ident in enumerate(immunities) if ident not in known]
    defences: dict[str, Iterable[str | Except] | None] = {}
    for key in ("resist", "vulnerable", "immune"):
        if key not in extra:
            continue
        try:
            defences[key] = _DEFENCES.validate_python(extra[key])
        except ValidationError:
            problems.append(Problem(pointer(*where, key),
                                    "1 to 30 damage words or {\"type\", \"except\"} entries"))
    return problems + _words(ruleset, combat, where, defences)


def _adder(problems: list[Problem],
           where: Where) -> Callable[[Where, str], None]:
    def add(path: Where, message: str) -> None:
        problems.append(Problem(pointer(*where, *path), message))
    return add


def ability_problems(ruleset: Ruleset) -> list[Problem]:
    """Everything wrong with the fight keys of the catalogs' entries: the keys' own types,
    the pools a cost takes from, the conditions applied, the save, the turn action used or
    granted, a reaction without its trigger (CMB-REACT-4), and what the formulas read (the
    caster's sheet)."""
    problems: list[Problem] = []
    pools = {p.id for p in ruleset.live.pools}
    conditions = {c.id for c in ruleset.conditions}
    saves = {s.id for s in ruleset.sheet.saves} | {a.id for a in ruleset.sheet.abilities}
    combat = ruleset.combat
    actions = {a.id for a in combat.turn_actions} if combat is not None else set()
    for c_index, catalog in enumerate(ruleset.catalogs):
        for e_index, entry in enumerate(catalog.entries):
            if not is_fight_ability(entry.mechanics):
                continue
            where = ("catalogs", c_index, "entries", e_index, "mechanics")
            try:
                ability = Ability.model_validate(entry.mechanics)
            except ValidationError as error:
                for found in error.errors():
                    at = pointer(*where, *found["loc"])
                    problems.append(Problem(at, found["msg"]))
                continue

            add = _adder(problems, where)
            for index, row in enumerate(ability.cost):
                if row.pool not in pools:
                    add(("cost", index), f'unknown pool "{row.pool}"')
            for index, applied in enumerate(ability.applies):
                if applied.condition not in conditions:
                    add(("applies", index, "condition"),
                        f'unknown condition "{applied.condition}"')
            if ability.save is not None and ability.save.save not in saves:
                add(("save", "save"), f'unknown save "{ability.save.save}"')
            if ability.uses not in (None, REACTION, FREE) and ability.uses not in actions:
                add(("uses",), f'"{ability.uses}" is no turn action, "reaction" or "free"')
            if ability.grants is not None and ability.grants.action not in actions:
                add(("grants", "action"), f'"{ability.grants.action}" is no turn action')
            if ability.is_reaction and ability.react is None:
                add(("react",), "a reaction says what sets it off: react.on")
            if ability.save is not None and ability.save_difficulty is None \
                    and ability.save.difficulty is None:
                add(("saveDifficulty",), "a save gives its difficulty (the caster's DC)")
            formulas: tuple[tuple[str, Formula | None], ...] = (
                ("toHit", ability.to_hit), ("saveDifficulty", ability.save_difficulty),
                ("react", ability.react.defence if ability.react is not None else None))
            for key, formula in formulas:
                unknown = next((r for r in references(formula.tree) if reference_read(
                    ruleset.sheet, r) is None), None) if formula is not None else None
                if unknown is not None:
                    add((key,), f'unknown reference "{unknown}"')
    return problems
