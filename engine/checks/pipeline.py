"""``[skill_check: ...]``: the common check pipeline (checks.md §1.1, CHK-GEN-A1..A8)."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from tagparse import Tag

from .. import reasons
from ..answers import Answer, accepted, refused
from ..bags import resolve_who
from ..context import TurnContext
from ..game import Game
from ..ruleset.resolution import (
    AgainstResolution,
    HighestResolution,
    Override,
    PoolResolution,
    Resolution,
    SumResolution,
    SymbolResolution,
    apply_override,
)
from ..ruleset.sheet import Ability, Skill
from ..sheet import SheetView, ability_modifier
from ..state import Character, State
from . import against, highest, outcomes, pool, sum, symbols
from .modifiers import collect
from .request import CheckKind, Request, Rolled, whole

# The attributes a check reads, in the reader's lower case (checks.md Appendix A, items.md §7.5).
READS = frozenset({
    "skill", "save", "ability", "who", "dc", "difficulty", "threshold", "bonus", "with",
    "explode", "double", "reroll", "dark", "setback", "upgrade", "upgradeown", "spend",
    "mode",
})


@dataclass(frozen=True)
class _Refusal:
    """A bad request found while reading the tag: its reason code and sentence."""

    code: str
    text: str


def _named(game: Game,
           attrs: dict[str, str]) -> tuple[CheckKind, str, str, str | None] | _Refusal:
    """CHK-GEN-A1, OQ-CHK-6: (kind, id, label, ability) of the check, or why it has none."""
    sheet = game.ruleset.sheet
    tables: list[tuple[CheckKind, Sequence[Skill | Ability], str]] = [
        ("skill", sheet.skills, reasons.UNKNOWN_SKILL), ("save", sheet.saves, reasons.UNKNOWN_SAVE),
        ("ability", sheet.abilities, reasons.UNKNOWN_ABILITY)]
    for kind, rows, code in tables:
        wanted = attrs.get(kind)
        if wanted is None:
            continue
        key = wanted.strip().casefold()
        for row in rows:
            if key in (row.id.casefold(), row.label.casefold()):
                used = row.id if isinstance(row, Ability) else row.ability
                return kind, row.id, row.label, used
        known = ", ".join(row.label for row in rows) or "none"
        return _Refusal(code, f'There is no {kind} "{wanted[:60]}" (the sheet has: {known}); '
                              "nothing was rolled.")
    return _Refusal(reasons.MISSING_ATTRIBUTE,
                    "Name the check with skill=, save= or ability=; nothing was rolled.")


def _override(res: Resolution, kind: CheckKind, ident: str,
              view: SheetView) -> tuple[Resolution, Override | None]:
    """CHK-OVR-A1..A3, OQ-CHK-48: the first override that names the check and whose
    ``when`` holds (0 or missing does not)."""
    names = {"skill": "skills", "save": "saves", "ability": "abilities"}[kind]
    for override in res.overrides:
        if ident not in getattr(override, names):
            continue
        if override.when is not None and not view.value(override.when):
            continue
        return apply_override(res, override), override
    return res, None


def _tier(res: Resolution, entry: Any) -> tuple[float, float, float]:
    """CHK-GEN-9/10, DESIGN.md "Sheet model": (tier contribution, the skill's own bonus)."""
    tiers = res.proficiency_tiers
    tier_id, bonus = (entry, 0.0) if isinstance(entry, str) else (None, 0.0)
    if isinstance(entry, dict):
        tier_id = entry.get("tier")
        raw = entry.get("bonus", 0)
        bonus = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0.0
    tier = next((t for t in tiers if t.id == tier_id), tiers[0])
    return float(tier.flat), float(tier.multiplier or 0), bonus


def _sheet_parts(game: Game, res: Resolution, character: Character, view: SheetView,
                 kind: CheckKind, ident: str, ability: str | None,
                 attrs: dict[str, str]) -> tuple[str | None, float, float, float, str | None]:
    """CHK-GEN-A3/A4: (ability used, ability part, tier contribution, own bonus, with=)."""
    abilities = {a.id.casefold(): a.id for a in game.ruleset.sheet.abilities}
    abilities.update({a.label.casefold(): a.id for a in game.ruleset.sheet.abilities})
    second = abilities.get((attrs.get("with") or "").strip().casefold())  # CHK-TAG-13
    recorded = None
    part = 0.0
    if kind == "ability":
        part = ability_modifier(game, view.ability_score(ident))
        adds = isinstance(res, PoolResolution) and res.pool.ability_plus_ability
        if second is not None and adds:  # CHK-TAG-6, CHK-POOL-8/9
            part += ability_modifier(game, view.ability_score(second))
            recorded = second
        return ability, part, 0.0, 0.0, recorded
    if second is not None and second != ability:  # CHK-TAG-5
        ability, recorded = second, second
    if ability is not None:
        part = ability_modifier(game, view.ability_score(ability))
    entries = character.skills if kind == "skill" else character.saves
    flat, multiplier, bonus = _tier(res, entries.get(ident))
    rank = flat
    if multiplier and res.proficiency is not None:
        rank += multiplier * view.unchanged().value(res.proficiency.bonus)  # ITM-ABIL-6
    rows = game.ruleset.sheet.skills if kind == "skill" else game.ruleset.sheet.saves
    row = next((r for r in rows if r.id == ident), None)
    if row is not None and row.bonus_range is not None:
        bonus = min(max(bonus, row.bonus_range[0]), row.bonus_range[1])
    return ability, part, rank, bonus, recorded


def _spend(res: Resolution, attrs: dict[str, str], view: SheetView,
           sheet_number: float) -> tuple[dict[str, int], dict[str, Any]]:
    """CHK-PAY-A1..A4 for ``resolution.spend``: what is bought and what it costs."""
    offer = attrs.get("spend")
    if offer is None or ":" not in offer:
        return {}, {}
    name, _, points_text = offer.partition(":")
    points = whole(points_text)
    entry = next((e for e in res.spend if e.pool == name.strip()), None)
    if entry is None or points is None or points <= 0:  # OQ-CHK-49
        return {}, {}
    if entry.per_check == "pool":  # CHK-SPEND-10
        limit = math.floor(sheet_number)
    elif isinstance(entry.per_check, int):
        limit = entry.per_check
    else:
        limit = math.floor(view.value(entry.per_check))  # CHK-SPEND-11
    limit = min(max(limit, 0), 100)
    bought = min(points // entry.amount, limit)  # CHK-PAY-2/3
    cost = bought * entry.amount
    if bought == 0 or view.pool(entry.pool) < cost:  # CHK-PAY-1: all or nothing
        return {}, {"spendRefused": True} if bought else {}
    return ({"pool": 0, "dice": bought * (entry.dice or 0),
             "successes": bought * (entry.successes or 0), "cost": cost},
            {"spend": f"{entry.pool}:{cost}", "bought": bought, "entry": entry})


def skill_check(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """Answer ``[skill_check: ...]`` with the ruleset's own dice (CHK-GEN-A1..A8)."""
    res = game.ruleset.resolution
    if res is None:
        return state, refused(tag, reasons.NO_RESOLUTION,
                              "This ruleset declares no resolution, so it has no checks.")
    found = resolve_who(state, tag)
    if isinstance(found, Answer):
        return state, found
    attrs: dict[str, str] = {}
    for key, value in tag.attrs:  # the reader gives names in lower case (upgradeOwn=)
        attrs.setdefault(key.lower(), value)
    named = _named(game, attrs)
    if isinstance(named, _Refusal):
        return state, refused(tag, named.code, named.text)
    kind, ident, label, ability = named
    character = state.characters[found]
    view = SheetView(game, character, state)
    effective, override = _override(res, kind, ident, view)
    ability, part, rank, bonus, with_ability = _sheet_parts(
        game, effective, character, view, kind, ident, ability, attrs)
    applied = collect(game, state, character, view, kind, ident)
    record: dict[str, Any] = {kind: ident}
    if with_ability is not None:
        record["with"] = with_ability
    if override is not None:
        record["override"] = override.label
    if applied.names:
        record["effects"] = f"{applied.flat:+d}"  # ITM-CHK-8, OQ-24
        record["from"] = ", ".join(applied.names)
    if kind == "save" and applied.fails:  # ITM-CHK-7: fails without a roll, nothing spent
        record.update({"success": False, "rolls": [], "total": 0, "dc": None,
                       "automatic": True})
        return state, accepted(tag, f"{character.name}: {label} fails without a roll "
                                    f"({record['from']}).", record)
    sheet_number = part + rank + bonus
    bought: dict[str, int] = {}
    paid: dict[str, Any] = {}
    if isinstance(effective, PoolResolution | HighestResolution | SymbolResolution):
        bought, paid = _spend(effective, attrs, view, sheet_number)
    entry = paid.pop("entry", None)
    rolls_twice = isinstance(effective, SumResolution) and effective.advantage
    request = Request(
        who=character.name, kind=kind, ident=ident, label=label, attrs=attrs, view=view,
        ability=ability, ability_part=part, rank=rank, own_bonus=bonus,
        with_ability=with_ability, flat=applied.flat, dice=tuple(applied.dice),
        lean=applied.lean((attrs.get("mode") or "").strip().lower(), rolls_twice),
        bought_dice=bought.get("dice", 0), bought_successes=bought.get("successes", 0),
        bought_reroll=entry.reroll if entry is not None else None)
    stream = ctx.stream("skill_check", "dice")
    rolled: Rolled | None
    if isinstance(effective, SumResolution):
        rolled = sum.resolve(effective, request, stream, ctx.stream("skill_check", "effects"))
    elif isinstance(effective, PoolResolution):
        rolled = pool.resolve(effective, request, stream)
    elif isinstance(effective, HighestResolution):
        rolled = highest.resolve(effective, request, stream)
    elif isinstance(effective, AgainstResolution):
        rolled = against.resolve(effective, request, stream)
    else:
        rolled = symbols.resolve(effective, request, stream)
    if rolled is None:
        return state, refused(tag, reasons.MISSING_DIFFICULTY,
                              f"Give the {label} check a dc= or a difficulty= "
                              "(a step of the ladder); nothing was rolled.")
    success, critical = rolled.success, rolled.critical
    outcome = None
    if effective.outcomes is not None:  # CHK-GEN-A7, CHK-OUT-15
        landed = outcomes.pick(effective.outcomes, rolled, shift=True)
        success, critical, outcome = landed.success, landed.critical, landed.tier
    record.update({"success": success, "rolls": rolled.rolls, "total": rolled.value,
                   "dc": rolled.dc})
    record.update(rolled.record)
    if critical is not None:
        record["critical"] = critical
    if outcome is not None:
        record["outcome"] = outcome.label  # CHK-OUT-20
    record.update(paid)
    new_state = state
    if bought.get("cost"):  # CHK-SPEND-16: the same resolution pays for what it bought
        assert entry is not None
        pools = dict(character.pools)
        pools[entry.pool] = int(view.pool(entry.pool)) - bought["cost"]
        new_state = state.with_character(found, character.model_copy(update={"pools": pools}))
    word = outcome.label if outcome is not None else ("success" if success else "failure")
    if critical is not None and outcome is None:
        word = f"critical {word}"
    text = f"{character.name}: {label} {rolled.shown}: {word}."
    notices = list(rolled.notices)
    if outcome is not None and outcome.text:
        notices.append(outcome.text)  # CHK-OUT-21
    if override is not None and override.text:
        notices.append(override.text)  # CHK-OVR-2
    if notices:
        text += " " + " ".join(notices)
    return new_state, accepted(tag, text, record)
