"""The import rules of the ``resolution`` block that pydantic's field types cannot say
(docs/rules/checks.md, CHK-*-Import), the check features' Capability API versions
(docs/rules/checks.md#appendix-d-capability-api-versions), and the ``mechanics.check`` of catalog
entries."""

from __future__ import annotations

from pydantic import ValidationError

from .pointers import Problem, pointer
from .resolution import (
    AgainstResolution,
    EntryMechanics,
    FaceRule,
    HighestResolution,
    Outcomes,
    PoolResolution,
    Resolution,
    SumResolution,
    SymbolResolution,
    UpTo,
    apply_override,
    entry_mechanics,
)
from .ruleset import Ruleset
from .versions import version_tuple

# CHK-OVR-5/6, OQ-CHK-47: keys an override's ``set`` may not touch.
FROZEN_KEYS = frozenset({"kind", "abilityModifier", "proficiency", "proficiencyTiers",
                         "penaltyFrom", "spend", "adjust", "difficultyLadder", "overrides"})
FROZEN_SYMBOL_KEYS = frozenset({"symbols", "dice"})


Found = list[tuple[tuple[str | int, ...], str]]


def _faces_problems(res: PoolResolution, at: tuple[str | int, ...]) -> Found:
    """CHK-POOL-17/33/47/48, OQ-CHK-14: faces that cannot be met are refused at import."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    sides = res.die.sides
    named: list[tuple[tuple[str | int, ...], int | None]] = [
        (("target", "default"), res.target.default), (("target", "min"), res.target.min),
        (("target", "max"), res.target.max)]
    for key in ("explode", "double"):
        rule: FaceRule | None = getattr(res, key)
        if rule is not None:
            named += [((key, "from"), rule.from_), ((key, "min"), rule.min)]
            if rule.from_ is not None and rule.min is not None and rule.from_ < rule.min:
                out.append(((*at, key, "from"), "from may not be lower than min"))
    for key in ("cancel", "botch"):
        rule2: UpTo | None = getattr(res, key)
        if rule2 is not None:
            named.append(((key, "upTo"), rule2.up_to))
            if rule2.up_to >= res.target.min:  # CHK-POOL-47
                out.append(((*at, key, "upTo"),
                            f"face {rule2.up_to} is not below the lowest threshold "
                            f"{res.target.min}"))
    for index, reroll in enumerate(res.reroll):
        if reroll.id is None:
            out.append(((*at, "reroll", index), 'a free reroll needs an "id"'))
        if reroll.up_to > sides - 1:  # CHK-POOL-28
            out.append(((*at, "reroll", index, "upTo"),
                        f"upTo is at most {sides - 1} (the die's faces minus one)"))
    for path, face in named:
        if face is not None and not 1 <= face <= sides:
            out.append(((*at, *path), f"face {face} is not on a d{sides}"))
    if not res.target.min <= res.target.default <= res.target.max:
        out.append(((*at, "target", "default"), "default is outside min..max"))
    adjustable = res.target.min < res.target.max
    for index, step in enumerate(res.difficulty_ladder):
        if step.target is not None and (
                not adjustable or not res.target.min <= step.target <= res.target.max):
            out.append(((*at, "difficultyLadder", index, "target"),
                        "a step's target needs an adjustable threshold and lies in its range"))
    if res.pool.min > res.pool.max:
        out.append(((*at, "pool", "min"), "min is above max"))
    covered: dict[str, int] = {}
    for s_index, stance in enumerate(res.stances):
        for skill in stance.skills:
            if skill in covered:  # CHK-POOL-43
                out.append(((*at, "stances", s_index, "skills"),
                            f'skill "{skill}" is already in another stance'))
            covered[skill] = s_index
    return out


def _kind_problems(res: Resolution, ruleset: Ruleset,
                   at: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    out: list[tuple[tuple[str | int, ...], str]] = []
    if isinstance(res, SumResolution):
        dice = res.dice
        if dice.faces is not None and len(dice.faces) != dice.sides:  # CHK-SUM-8
            out.append(((*at, "dice", "faces"), f"faces lists one value per face ({dice.sides})"))
        naturals = (res.naturals if isinstance(res.naturals, str)
                    else "none" if res.naturals.checks == res.naturals.saves == "none" else "x")
        if naturals != "none" and dice.count != 1:  # CHK-SUM-7
            out.append(((*at, "naturals"), "naturals other than none need exactly one die"))
        if res.open_ended is not None:
            if dice.count != 1:
                out.append(((*at, "openEnded"), "an open-ended roll is a single die"))
            if not 1 <= res.open_ended.low < res.open_ended.high <= dice.sides:
                out.append(((*at, "openEnded"), f"needs 1 <= low < high <= {dice.sides}"))
        for index, face in enumerate(res.unmodified):
            if not 1 <= face <= dice.sides:
                out.append(((*at, "unmodified", index), f"face {face} is not on a d{dice.sides}"))
        if res.outcomes and res.outcomes.naturals == "shift":  # CHK-OUT-14
            if dice.count != 1:
                out.append(((*at, "outcomes", "naturals"), "shift needs exactly one die"))
            if naturals != "none":
                out.append(((*at, "naturals"), 'must be "none" beside outcomes naturals "shift"'))
    elif isinstance(res, PoolResolution):
        out += _faces_problems(res, at)
        if res.situational_dice and res.situational_dice.min > res.situational_dice.max:
            out.append(((*at, "situationalDice", "min"), "min is above max"))
        skills = {s.id for s in ruleset.sheet.skills}
        for s_index, stance in enumerate(res.stances):
            for k_index, skill in enumerate(stance.skills):
                if skill not in skills:
                    out.append(((*at, "stances", s_index, "skills", k_index),
                                f'unknown skill "{skill}"'))
    elif isinstance(res, HighestResolution):
        if res.pool.min > res.pool.max:
            out.append(((*at, "pool", "min"), "min is above max"))
        if res.critical and res.critical.face and res.critical.face > res.die.sides:
            out.append(((*at, "critical", "face"), f"face is not on a d{res.die.sides}"))
    elif isinstance(res, AgainstResolution):
        if res.tens is not None and (res.dice.count, res.dice.sides) != (1, 100):  # CHK-RA-16
            out.append(((*at, "tens"), "tens needs a single d100"))
        for index, rule in enumerate(res.critical_success):
            if rule.past_target is not None:
                out.append(((*at, "criticalSuccess", index, "pastTarget"),
                            "pastTarget is for critical failures"))
        if res.outcomes and res.outcomes.by == "fraction" and res.against != "at-most":
            out.append(((*at, "outcomes", "by"), "fraction reads an at-most roll"))  # CHK-RA-18
    else:
        out += _symbol_problems(res, at)
    if res.outcomes and res.outcomes.by == "fraction" and not isinstance(res, AgainstResolution):
        out.append(((*at, "outcomes", "by"), "fraction is read by roll-against only"))
    return out


def _symbol_problems(res: SymbolResolution,
                     at: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    out: list[tuple[tuple[str | int, ...], str]] = []
    symbols = {s.id: s for s in res.symbols}
    dice = {d.id for d in res.dice}
    partner: dict[str, str] = {}
    for index, symbol in enumerate(res.symbols):
        if symbol.counts is not None:
            target = symbols.get(symbol.counts)
            if target is None:
                out.append(((*at, "symbols", index, "counts"), f'unknown symbol "{symbol.counts}"'))
            elif target.counts is not None or target.id == symbol.id:  # CHK-SYM-4
                out.append(((*at, "symbols", index, "counts"),
                            "counts names a symbol without counts of its own"))
        if symbol.cancels is not None:
            if symbol.cancels not in symbols or symbol.cancels == symbol.id:
                out.append(((*at, "symbols", index, "cancels"),
                            f'unknown symbol "{symbol.cancels}"'))
                continue
            for one, two in ((symbol.id, symbol.cancels), (symbol.cancels, symbol.id)):
                if partner.setdefault(one, two) != two:  # CHK-SYM-5
                    out.append(((*at, "symbols", index, "cancels"),
                                f'"{one}" already cancels another symbol'))
    for d_index, die in enumerate(res.dice):
        for f_index, face in enumerate(die.faces):
            for s_index, ident in enumerate(face):
                if ident not in symbols:  # CHK-SYM-9
                    out.append(((*at, "dice", d_index, "faces", f_index, s_index),
                                f'unknown symbol "{ident}"'))
    refs: list[tuple[tuple[str, ...], str | None]] = [
        (("pool", "die"), res.pool.die), (("pool", "upgrade"), res.pool.upgrade),
                        (("difficulty", "die"), res.difficulty.die),
                        (("difficulty", "upgrade"), res.difficulty.upgrade),
                        (("boost", "die"), res.boost.die if res.boost else None),
        (("setback", "die"), res.setback.die if res.setback else None)]
    for path, die_id in refs:
        if die_id is not None and die_id not in dice:
            out.append(((*at, *path), f'unknown die "{die_id}"'))
    marks: list[tuple[tuple[str, ...], str | None]] = [
        (("success", "symbol"), res.success.symbol), (("criticalSuccess",), res.critical_success),
        (("criticalFailure",), res.critical_failure)]
    for path, mark in marks:
        if mark is not None and mark not in symbols:
            out.append(((*at, *path), f'unknown symbol "{mark}"'))
    if res.allow_own_upgrade and res.pool.upgrade is None:  # CHK-SYM-24
        out.append(((*at, "allowOwnUpgrade"), "upgrading the roller's dice needs pool.upgrade"))
    return out


def _outcome_problems(outcomes: Outcomes,
                      at: tuple[str | int, ...]) -> list[tuple[tuple[str | int, ...], str]]:
    """CHK-OUT-5..12 and the import note of docs/rules/checks.md#81-algorithm--picking-a-tier."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    numeric = [(i, t) for i, t in enumerate(outcomes.tiers) if t.on is None]
    last = None
    for position, (index, tier) in enumerate(numeric):
        final = position == len(numeric) - 1
        if tier.at_least is None and not final:
            out.append(((*at, "tiers", index, "atLeast"),
                        "only the last numeric tier has no atLeast"))
        if tier.at_least is not None and final:
            out.append(((*at, "tiers", index, "atLeast"),
                        "the last numeric tier has no atLeast (it catches the rest)"))
        if tier.at_least is not None and last is not None and tier.at_least >= last:
            out.append(((*at, "tiers", index, "atLeast"), "atLeast decreases tier by tier"))
        if tier.at_least is not None and outcomes.by == "fraction" and tier.at_least <= 0:
            out.append(((*at, "tiers", index, "atLeast"),  # CHK-RA-A9: it divides the target
                        "a fraction tier's atLeast is above 0"))
        if tier.at_least is not None:
            last = tier.at_least
    if not numeric:
        out.append(((*at, "tiers"), "at least one tier is read by number"))
    for on, success in (("critical-success", True), ("critical-failure", False)):
        tiers = [(i, t) for i, t in enumerate(outcomes.tiers) if t.on == on]
        if len(tiers) > 1:
            out.append(((*at, "tiers", tiers[1][0], "on"), f'a second "{on}" tier'))
        for index, tier in tiers:
            if tier.at_least is not None:
                out.append(((*at, "tiers", index, "atLeast"), "an on: tier has no atLeast"))
            if tier.success != success:
                out.append(((*at, "tiers", index, "success"),
                            f'the "{on}" tier has success {str(success).lower()}'))
    if not any(t.success for t in outcomes.tiers) or all(t.success for t in outcomes.tiers):
        out.append(((*at, "tiers"), "at least one tier succeeds and one fails"))  # CHK-OUT-9
    return out


Gate = tuple[tuple[str | int, ...], str, str]


def _kind_gates(res: Resolution, at: tuple[str | int, ...]) -> list[Gate]:
    """docs/rules/checks.md#appendix-d-capability-api-versions: (path, feature, version) for what
    one resolution uses."""
    gates: list[Gate] = []
    kinds = {"dice-pool": "1.24", "dice-highest": "1.138", "roll-against": "1.139",
             "symbol-pool": "1.141"}
    if res.kind in kinds:  # CHK-POOL-50, CHK-HIGH-1, CHK-RA-1, CHK-SYM-1
        gates.append(((*at, "kind"), f"the {res.kind} kind", kinds[res.kind]))
    if res.outcomes is not None:  # CHK-OUT-1/22
        gates.append(((*at, "outcomes"), "outcomes", "1.135"))
    if res.overrides:  # CHK-OVR-1
        gates.append(((*at, "overrides"), "overrides", "1.140"))
    if res.spend:  # CHK-SPEND-14
        for index, entry in enumerate(res.spend):
            if entry.reroll is not None:
                gates.append(((*at, "spend", index, "reroll"), "a spend that buys a reroll",
                              "1.38"))
            if not isinstance(entry.per_check, int):
                gates.append(((*at, "spend", index, "perCheck"),
                              "a spend perCheck that is not a number", "1.38"))
        if len(res.spend) > 2:
            gates.append(((*at, "spend", 2), "more than two spend entries", "1.38"))
    if isinstance(res, SumResolution):
        if res.dice.faces is not None:  # CHK-SUM-8
            gates.append(((*at, "dice", "faces"), "dice.faces", "1.136"))
        if res.open_ended is not None:  # CHK-SUM-10
            gates.append(((*at, "openEnded"), "openEnded", "1.136"))
        if res.unmodified:  # CHK-SUM-16
            gates.append(((*at, "unmodified"), "unmodified", "1.136"))
    elif isinstance(res, PoolResolution):
        for key in ("explode", "double"):  # CHK-POOL-51
            rule: FaceRule | None = getattr(res, key)
            if rule is not None and rule.min is not None:
                gates.append(((*at, key, "min"), f"min on {key}", "1.37"))
        if res.pool.ability_plus_ability:
            gates.append(((*at, "pool", "abilityPlusAbility"), "pool.abilityPlusAbility",
                          "1.37"))
        if res.botch is not None and "rule" in res.botch.model_fields_set:
            gates.append(((*at, "botch", "rule"), "botch.rule", "1.37"))
        if res.reroll:  # CHK-POOL-52
            gates.append(((*at, "reroll"), "reroll", "1.38"))
        if res.target.from_ is not None:  # CHK-POOL-53
            gates.append(((*at, "target", "from"), "target.from", "1.137"))
        if res.stances:
            gates.append(((*at, "stances"), "stances", "1.137"))
        if res.exact is not None:
            gates.append(((*at, "exact"), "exact", "1.137"))
    elif isinstance(res, HighestResolution):
        if res.dark is not None and "outcome" in res.dark.model_fields_set:  # CHK-HIGH-14
            gates.append(((*at, "dark", "outcome"), "dark.outcome", "1.149"))
    elif isinstance(res, SymbolResolution) and "allow_own_upgrade" in res.model_fields_set:
        gates.append(((*at, "allowOwnUpgrade"), "allowOwnUpgrade", "1.150"))  # CHK-SYM-26
    return gates


def version_gates(ruleset: Ruleset) -> list[Gate]:
    """docs/rules/checks.md#appendix-d-capability-api-versions: every check feature a ruleset uses,
    with the version it needs (an override's ``set`` counts where it changes the resolution)."""
    res = ruleset.resolution
    if res is None:
        return []
    gates = _kind_gates(res, ("resolution",))
    for index, override in enumerate(res.overrides):
        if set(override.set) & FROZEN_KEYS:
            continue
        try:
            effective = apply_override(res, override)
        except ValidationError:
            continue
        gates += [((("resolution", "overrides", index, "set", *path[1:]) if path[1:] else
                    ("resolution", "overrides", index, "set")), feature, version)
                  for path, feature, version in _kind_gates(effective, ("resolution",))
                  if path[1:] and path[1] in override.set]
    for c_index, catalog in enumerate(ruleset.catalogs):
        for e_index, entry in enumerate(catalog.entries):
            mechanics = entry_mechanics(entry.mechanics)
            check = mechanics.check if mechanics is not None else None
            for key in ("explode", "double"):  # CHK-TAL-7, OQ-CHK-54
                if check is not None and getattr(check, key) is not None:
                    gates.append((("catalogs", c_index, "entries", e_index, "mechanics",
                                   "check", key), f"{key} in mechanics.check", "1.37"))
    if isinstance(res, SymbolResolution) and ruleset.combat is not None:  # CHK-SYM-35
        gates.append((("combat",), "combat in a symbol-pool ruleset", "1.382"))
    return gates


def empty_at_start(ruleset: Ruleset, pool: str) -> bool:
    """CHK-SPEND-2: a pool starts at its ``max``; a constant max of 0 or less starts empty
    (a max read from the sheet differs by character and is allowed)."""
    row = next((p for p in ruleset.live.pools if p.id == pool), None)
    return row is not None and row.max.const is not None and row.max.const <= 0


def _gate_problems(ruleset: Ruleset) -> Found:
    """CHK-POOL-54: a package ruleset (one that declares ``capabilityApi``) needs the version of
    every check feature it uses; a community ruleset declares none and is only validated. Versions
    compare as integer tuples (1.135 is newer than 1.38)."""
    if "capability_api" not in ruleset.model_fields_set:
        return []
    declared = version_tuple(ruleset.capability_api)
    seen: set[str] = set()
    out: Found = []
    for path, feature, version in version_gates(ruleset):
        if feature in seen or version_tuple(version) <= declared:
            continue
        seen.add(feature)
        out.append((path, f"{feature} needs capabilityApi {version} or later "
                          f"(the ruleset declares {ruleset.capability_api})"))
    return out


def _talisman_problems(ruleset: Ruleset) -> Found:
    """CHK-TAL-3/8/9/10, OQ-CHK-50: a catalog entry's ``mechanics.check`` and its price."""
    res = ruleset.resolution
    pools = {p.id for p in ruleset.live.pools}
    out: Found = []
    for c_index, catalog in enumerate(ruleset.catalogs):
        for e_index, entry in enumerate(catalog.entries):
            raw = entry.mechanics
            if not isinstance(raw, dict) or "check" not in raw:
                continue
            where = ("catalogs", c_index, "entries", e_index, "mechanics")
            try:
                mechanics = EntryMechanics.model_validate(raw)
            except ValidationError as error:
                for item in error.errors(include_url=False):
                    loc = tuple(part for part in item["loc"] if isinstance(part, str | int))
                    out.append(((*where, *loc), str(item["msg"])))
                continue
            if not isinstance(res, PoolResolution):  # CHK-TAL-9, OQ-CHK-50
                kind = res.kind if res is not None else "no"
                out.append(((*where, "check"),
                            f"only a dice-pool ruleset reads mechanics.check (this one has "
                            f"{kind} resolution)"))
            else:
                check = mechanics.check
                assert check is not None
                sides = res.die.sides
                if check.reroll is not None and check.reroll.up_to > sides - 1:  # CHK-TAL-3
                    out.append(((*where, "check", "reroll", "upTo"),
                                f"upTo is at most {sides - 1} (the die's faces minus one)"))
                for key in ("threshold", "explode", "double"):  # OQ-CHK-14
                    face = getattr(check, key)
                    if face is not None and face > sides:
                        out.append(((*where, "check", key), f"face {face} is not on a d{sides}"))
            for index, row in enumerate(mechanics.cost):  # CHK-TAL-10
                if row.pool not in pools:
                    out.append(((*where, "cost", index, "pool"), f'unknown pool "{row.pool}"'))
    return out


def resolution_problems(ruleset: Ruleset) -> list[Problem]:
    """Every import rule of docs/rules/checks.md that the field types cannot say (CHK-*-Import)."""
    res = ruleset.resolution
    talismans = [Problem(pointer(*path), message)
                 for path, message in _talisman_problems(ruleset) + _gate_problems(ruleset)]
    if res is None:
        return talismans
    at: tuple[str | int, ...] = ("resolution",)
    found: list[tuple[tuple[str | int, ...], str]] = []
    tiers = res.proficiency_tiers
    for index, tier in enumerate(tiers):
        if tier.multiplier is not None and res.proficiency is None:  # OQ-CHK-3
            found.append(((*at, "proficiencyTiers", index, "multiplier"),
                          'a multiplier needs "proficiency" to say what it multiplies'))
    seen: set[str] = set()
    for index, tier in enumerate(tiers):
        if tier.id in seen:
            found.append(((*at, "proficiencyTiers", index, "id"), f'duplicate id "{tier.id}"'))
        seen.add(tier.id)
    if res.ability_modifier.op == "stepTable" and not res.ability_modifier.rows:
        found.append(((*at, "abilityModifier", "rows"), "a step table lists its rows"))
    found += _kind_problems(res, ruleset, at)
    if isinstance(res, HighestResolution) and ruleset.combat is not None:  # CHK-HIGH-24
        found.append((("combat",), "a dice-highest ruleset has no combat of its own"))
    if res.outcomes is not None:
        found += _outcome_problems(res.outcomes, (*at, "outcomes"))
    pools = {p.id for p in ruleset.live.pools}
    spend_pools: set[str] = set()
    for index, entry in enumerate(res.spend):
        if isinstance(res, SumResolution | AgainstResolution):  # CHK-SPEND-12
            found.append(((*at, "spend", index), f"a {res.kind} ruleset declares no spend"))
        elif not isinstance(res, PoolResolution) and (entry.successes or entry.reroll):
            found.append(((*at, "spend", index), f"a {res.kind} spend buys only dice"))
        if entry.pool not in pools:
            found.append(((*at, "spend", index, "pool"), f'unknown pool "{entry.pool}"'))
        elif empty_at_start(ruleset, entry.pool):  # CHK-SPEND-2
            found.append(((*at, "spend", index, "pool"),
                          f'pool "{entry.pool}" starts empty, so there is nothing to spend'))
        if entry.pool in spend_pools:  # CHK-SPEND-13
            found.append(((*at, "spend", index, "pool"), f'a second spend on "{entry.pool}"'))
        spend_pools.add(entry.pool)
    named = {"skills": {s.id for s in ruleset.sheet.skills},
             "saves": {s.id for s in ruleset.sheet.saves},
             "abilities": {a.id for a in ruleset.sheet.abilities}}
    unconditional: set[tuple[str, str]] = set()
    for index, override in enumerate(res.overrides):
        where = (*at, "overrides", index)
        for key, known in named.items():
            for k_index, ident in enumerate(getattr(override, key)):
                if ident not in known:
                    found.append(((*where, key, k_index), f'unknown {key[:-1]} "{ident}"'))
                if override.when is None:
                    if (key, ident) in unconditional:  # CHK-OVR-11
                        found.append(((*where, key, k_index),
                                      f'"{ident}" is in a second override without "when"'))
                    unconditional.add((key, ident))
        if not (override.skills or override.saves or override.abilities):  # CHK-OVR-2
            found.append((where, "an override names skills, saves or abilities"))
        frozen = FROZEN_KEYS | (FROZEN_SYMBOL_KEYS if isinstance(res, SymbolResolution)
                                else frozenset())
        bad = sorted(set(override.set) & frozen)
        for key in bad:  # CHK-OVR-5/6, OQ-CHK-47
            found.append(((*where, "set", key), f'an override may not change "{key}"'))
        if bad:
            continue
        try:  # CHK-OVR-7: validated exactly like the ruleset's own resolution
            effective = apply_override(res, override)
        except ValidationError as error:
            for item in error.errors(include_url=False):
                found.append(((*where, "set"), f"{'.'.join(map(str, item['loc']))}: {item['msg']}"))
            continue
        for path, message in _kind_problems(effective, ruleset, ()):
            found.append(((*where, "set", *path), message))
    return [Problem(pointer(*path), message) for path, message in found] + talismans
