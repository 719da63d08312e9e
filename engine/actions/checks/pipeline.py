"""``[skill_check: ...]``: the common check pipeline
(docs/rules/checks.md#11-algorithm--the-common-pipeline, CHK-GEN-A1..A8)."""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...rules import reasons
from ...rules.checks.modifiers import collect
from ...rules.checks.read import CheckKind, CheckRead, Rolled, ladder_step, whole
from ...rules.context import TurnContext
from ...rules.fight.formula import combat_only
from ...rules.game import Game
from ...rules.sheet import SheetView, ability_modifier
from ...rules.state import Character, State
from ...ruleset.resolution import (
    AgainstResolution,
    EntryCheck,
    HighestResolution,
    Override,
    PoolResolution,
    RerollRule,
    Resolution,
    SumResolution,
    SymbolResolution,
    apply_override,
    entry_mechanics,
)
from ...ruleset.sheet import Ability, Skill
from ...ruleset.values import ValueRef
from ...ruleset.versions import version_tuple
from ..answers import Answer, accepted, refused
from ..attrs import NUMERAL, RAW, WHO
from ..declare import Needs, Request, action, attr, request
from ..examples import Party, example
from . import against, highest, outcomes, pool, sum, symbols

MAX_PURCHASES = 100  # CHK-TAL-11: an entry bought per price paid, bounded like a sheet limit


@dataclass(frozen=True)
class _Refusal:
    """A bad request found while reading the tag: its reason code and sentence."""

    code: str
    text: str


def _named(game: Game,
           attrs: Mapping[str, str]) -> tuple[CheckKind, str, str, str | None] | _Refusal:
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


def effective_resolution(res: Resolution, kind: CheckKind, ident: str,
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
    """CHK-GEN-9/10, docs/design.md#sheet-model: (tier contribution, the skill's own bonus)."""
    tiers = res.proficiency_tiers
    tier_id, bonus = (entry, 0.0) if isinstance(entry, str) else (None, 0.0)
    if isinstance(entry, dict):
        tier_id = entry.get("tier")
        raw = entry.get("bonus", 0)
        bonus = float(raw) if isinstance(raw, int | float) and not isinstance(raw, bool) else 0.0
    tier = next((t for t in tiers if t.id == tier_id), tiers[0])
    return float(tier.flat), float(tier.multiplier or 0), bonus


def sheet_parts(game: Game, res: Resolution, character: Character, view: SheetView,
                 kind: CheckKind, ident: str, ability: str | None,
                 attrs: Mapping[str, str]) -> tuple[str | None, float, float, float, str | None]:
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


@dataclass
class Purchase:
    """What ``spend=`` and ``use=`` buy for one check and what it costs (CHK-PAY-A1..A4)."""

    dice: int = 0
    successes: int = 0
    reroll: RerollRule | None = None  # the spend's reroll, bought once (CHK-SPEND-8)
    entry: EntryCheck | None = None  # CHK-TAL-2..6
    charges: dict[str, int] = field(default_factory=dict)  # pool -> points to take
    record: dict[str, Any] = field(default_factory=dict)
    notices: list[str] = field(default_factory=list)


def _offer(attrs: Mapping[str, str]) -> tuple[str, int] | None:
    """OQ-CHK-49: ``spend="<pool>:<points>"``; anything else is no offer."""
    offer = attrs.get("spend")
    if offer is None or ":" not in offer:
        return None
    name, _, points_text = offer.partition(":")
    points = whole(points_text)
    if points is None or points <= 0:
        return None
    return name.strip(), points


def _chosen(game: Game, character: Character, name: str) -> tuple[str, Any] | None:
    """CHK-PAY-5: the roller's chosen catalog entry named by label, id or reference."""
    wanted = name.strip().casefold()
    for catalog in game.ruleset.catalogs:
        for entry in catalog.entries:
            ref = f"{catalog.id}/{entry.id}"
            if ref in character.entries and wanted in (
                    entry.label.casefold(), entry.id.casefold(), ref.casefold()):
                return entry.label, entry.mechanics
    return None


def _entry_purchase(game: Game, res: Resolution, character: Character, attrs: Mapping[str, str],
                    offer: tuple[str, int] | None, bought: Purchase) -> bool:
    """CHK-TAL-10/11, CHK-PAY-A3, OQ-CHK-51/53: buy the entry ``use=`` names; True when the
    offer's points went to the entry (so the system spend does not read them)."""
    name = attrs.get("use")
    if name is None or not name.strip():
        return False
    found = _chosen(game, character, name)
    mechanics = entry_mechanics(found[1]) if found is not None else None
    if found is None or mechanics is None or mechanics.check is None or not isinstance(
            res, PoolResolution):  # CHK-PAY-5, CHK-TAL-9: never applied on trust
        bought.notices.append(f'"{name.strip()[:60]}" is not an entry {character.name} chose '
                              "with a check of its own; it changed nothing.")
        return False
    label, _ = found
    pays = offer is not None and any(row.pool == offer[0] for row in mechanics.cost)
    if mechanics.per_cost_step is not None and pays:  # CHK-TAL-11: as many as paid for
        assert offer is not None
        step = next(row.amount for row in mechanics.cost if row.pool == offer[0])
        times = min(offer[1] // step, MAX_PURCHASES)  # CHK-PAY-2: a part purchase buys nothing
    else:
        times = 1  # CHK-TAL-11 without perCostStep, OQ-CHK-51(b) use= without spend=
    if times == 0:
        bought.notices.append(f"{offer[1] if offer else 0} points do not pay for {label}; "
                              "it changed nothing.")
        return pays
    check = mechanics.check
    bought.entry = check
    bought.dice += times * (check.dice or 0)  # OQ-CHK-51(c): dice and successes scale
    bought.successes += times * (check.successes or 0)
    for row in mechanics.cost:
        bought.charges[row.pool] = bought.charges.get(row.pool, 0) + times * row.amount
    paid = ", ".join(f"{row.pool}:{times * row.amount}" for row in mechanics.cost)
    bought.record.update({"use": label, "useBought": times})
    if paid:
        bought.record["usePaid"] = paid
    return pays


def _spend_purchase(res: Resolution, offer: tuple[str, int], view: SheetView,
                    sheet_number: float, bought: Purchase) -> None:
    """CHK-PAY-A2 for ``resolution.spend``: whole purchases, capped at ``perCheck``."""
    name, points = offer
    entry = next((e for e in res.spend if e.pool == name), None)
    if entry is None:  # OQ-CHK-49: a pool no spend entry names is ignored
        return
    if entry.per_check == "pool":  # CHK-SPEND-10
        limit = math.floor(sheet_number)
    elif isinstance(entry.per_check, int):
        limit = entry.per_check
    else:
        limit = math.floor(view.value(entry.per_check))  # CHK-SPEND-11
    limit = min(max(limit, 0), 100)
    times = min(points // entry.amount, limit)  # CHK-PAY-2/3
    if times == 0:
        return
    cost = times * entry.amount
    bought.dice += times * (entry.dice or 0)
    bought.successes += times * (entry.successes or 0)
    bought.reroll = entry.reroll  # CHK-SPEND-8: one reroll however many purchases
    bought.charges[entry.pool] = bought.charges.get(entry.pool, 0) + cost
    bought.record.update({"spend": f"{entry.pool}:{cost}", "bought": times})


def purchases(game: Game, res: Resolution, character: Character, view: SheetView,
              attrs: Mapping[str, str], sheet_number: float) -> Purchase:
    """CHK-GEN-A5, CHK-PAY-A1..A4: what ``spend=`` and ``use=`` buy, all or nothing."""
    bought = Purchase()
    offer = _offer(attrs)
    taken = _entry_purchase(game, res, character, attrs, offer, bought)
    if offer is not None and not taken and isinstance(
            res, PoolResolution | HighestResolution | SymbolResolution):  # CHK-SPEND-12
        _spend_purchase(res, offer, view, sheet_number, bought)
    if any(view.pool(pool) < cost for pool, cost in bought.charges.items()):  # CHK-PAY-1/A4
        refused_record = {("useRefused" if key == "use" else "spendRefused"): True
                          for key in bought.record if key in ("use", "spend")}
        notices = list(bought.notices)
        if "use" in bought.record:
            short = ", ".join(f"{pool} {int(view.pool(pool))} of {cost}"
                              for pool, cost in bought.charges.items() if view.pool(pool) < cost)
            notices.append(f"Not enough to pay ({short}); nothing was bought and nothing "
                           "was taken.")
        return Purchase(record=refused_record, notices=notices)
    return bought


@dataclass(frozen=True)
class Checked:
    """One resolved check: whether it could be rolled (``reason`` when not), its sentence, its
    record (docs/rules/checks.md#appendix-b-the-fields-of-a-checks-record: success, rolls, total,
    dc, outcome, ...) and its success."""

    ok: bool
    text: str
    record: dict[str, Any]
    success: bool = False
    reason: str | None = None


def roll_check(game: Game, state: State, who: int, attrs: Mapping[str, str],
               ctx: TurnContext, purpose: str = "skill_check",
               written: str | None = None, added: int = 0) -> tuple[State, Checked]:
    """Roll one check for ``state.characters[who]`` (CHK-GEN-A1..A8): ``attrs`` are the tag
    attributes in lower case (``skill=``/``save=``/``ability=``, ``dc=``, ``bonus=``, ...); the dice
    come from ``ctx.stream(purpose, ...)``; ``written`` is a result the GM wrote itself
    (``result="success"``), which the sentence says was not used. Returns the state after any
    payment (the same object when nothing was paid) and the result; never raises on bad input.
    ``added`` is a flat number the caller adds to the roll (an outcome fight's weapon toHit), as an
    effect's modifier is added."""
    res = game.ruleset.resolution
    if res is None:
        return state, Checked(False, "This ruleset declares no resolution, so it has no checks.",
                              {}, reason=reasons.NO_RESOLUTION)
    named = _named(game, attrs)
    if isinstance(named, _Refusal):
        return state, Checked(False, named.text, {}, reason=named.code)
    kind, ident, label, ability = named
    character = state.characters[who]
    view = SheetView(game, character, state)
    effective, override = effective_resolution(res, kind, ident, view)
    ability, part, rank, bonus, with_ability = sheet_parts(
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
        return state, Checked(True, f"{character.name}: {label} fails without a roll "
                                    f"({record['from']}).", record)
    effect_total, effect_faces = applied.roll(ctx.stream(purpose, "effects"))  # ITM-CHK-3
    if effect_faces:
        record["effects"] = f"{applied.flat + effect_total:+d}"
        record["effectDice"] = effect_faces
    sheet_number = part + rank + bonus
    bought = purchases(game, effective, character, view, attrs, sheet_number)
    rolls_twice = isinstance(effective, SumResolution) and effective.advantage
    request = CheckRead(
        who=character.name, kind=kind, ident=ident, label=label, attrs=attrs, view=view,
        ability=ability, ability_part=part, rank=rank, own_bonus=bonus,
        with_ability=with_ability, flat=applied.flat + effect_total + added,
        lean=applied.lean((attrs.get("mode") or "").strip().lower(), rolls_twice),
        bought_dice=bought.dice, bought_successes=bought.successes,
        bought_reroll=bought.reroll, entry=bought.entry)
    rolled = resolve_request(game, effective, request, ctx, purpose)
    if rolled is None:
        return state, Checked(False, _no_difficulty(effective, attrs, label), {},
                              reason=reasons.MISSING_DIFFICULTY)
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
    record.update(bought.record)  # CHK-PAY-6
    if bought.successes:
        record["successesBought"] = bought.successes
    new_state = state
    if bought.charges:  # CHK-SPEND-16: the same resolution pays for what it bought
        pools = dict(character.pools)
        for name, cost in bought.charges.items():
            pools[name] = int(view.pool(name)) - cost
        new_state = state.with_character(who, character.model_copy(update={"pools": pools}))
    word = outcome.label if outcome is not None else ("success" if success else "failure")
    if critical is not None and outcome is None:
        word = f"critical {word}"
    if written is None:
        text = f"{character.name}: {label} {rolled.shown}: {word}."
    else:  # CHK-TAG-20: the engine rolls; the GM is told so and what to narrate, not its verdict
        text = (f"{character.name}: {label}. You wrote {written}; the engine rolled "
                f"{rolled.shown}: {word}. Narrate the {word[:1].lower()}{word[1:]}.")
    notices = list(rolled.notices) + bought.notices
    if outcome is not None and outcome.text:
        notices.append(outcome.text)  # CHK-OUT-21
    if override is not None and override.text:
        notices.append(override.text)  # CHK-OVR-2
    if notices:
        text += " " + " ".join(notices)
    return new_state, Checked(True, text, record, success)


def _no_difficulty(res: Resolution, attrs: Mapping[str, str], label: str) -> str:
    """OQ-CHK-10/16: why a check has no difficulty, naming a value that was ignored."""
    ignored = []
    dc = attrs.get("dc")
    if dc is not None and whole(dc) is None:
        ignored.append(f'dc="{_shown(dc)}" is not a whole number')
    difficulty = attrs.get("difficulty")
    ladder: list[Any] = res.difficulty_ladder  # each kind has its own step type
    if difficulty is not None and ladder_step(ladder, difficulty) is None:
        steps = ", ".join(step.label for step in ladder)
        ignored.append(f'difficulty="{_shown(difficulty)}" is not a step of the ladder'
                       + (f" ({steps})" if steps else " (this ruleset has none)"))
    why = f"{'; '.join(ignored)}. " if ignored else ""
    return (f"{why}Give the {label} check a dc= or a difficulty= (a step of the ladder); "
            "nothing was rolled.")


def _shown(value: str, most: int = 40) -> str:
    """A value the model wrote, cut short for an answer."""
    return value if len(value) <= most else value[:most - 1] + "…"


Resolver = Callable[[Game, Any, CheckRead, TurnContext, str], "Rolled | None"]


def _sum(game: Game, res: SumResolution, request: CheckRead, ctx: TurnContext,
         purpose: str) -> Rolled | None:
    return sum.resolve(res, request, ctx.stream(purpose, "dice"))


def _pool(game: Game, res: PoolResolution, request: CheckRead, ctx: TurnContext,
          purpose: str) -> Rolled | None:
    return pool.resolve(res, request, ctx.stream(purpose, "dice"))


def _highest(game: Game, res: HighestResolution, request: CheckRead, ctx: TurnContext,
             purpose: str) -> Rolled | None:
    return highest.resolve(res, request, ctx.stream(purpose, "dice"))


def _against(game: Game, res: AgainstResolution, request: CheckRead, ctx: TurnContext,
             purpose: str) -> Rolled | None:
    return against.resolve(res, request, ctx.stream(purpose, "dice"))


def _symbols(game: Game, res: SymbolResolution, request: CheckRead, ctx: TurnContext,
             purpose: str) -> Rolled | None:
    return symbols.resolve(res, request, ctx.stream(purpose, "dice"), _separate_setback(game))


# Each resolution kind's own algorithm (docs/rules/checks.md, a section each), by the ruleset's
# ``kind``.
RESOLVERS: dict[str, Resolver] = {"dice-sum": _sum, "dice-pool": _pool,
                                  "dice-highest": _highest, "roll-against": _against,
                                  "symbol-pool": _symbols}


def resolve_request(game: Game, res: Resolution, request: CheckRead, ctx: TurnContext,
                    purpose: str = "skill_check") -> Rolled | None:
    """CHK-GEN-A6: run the resolution kind's own algorithm on a built request, with the dice
    of ``ctx.stream(purpose, ...)``; None when the check names no difficulty it can use."""
    return RESOLVERS[res.kind](game, res, request, ctx, purpose)


def value_check(game: Game, state: State, character: Character, value: ValueRef, label: str,
                difficulty: int, ctx: TurnContext, asked: str | None = None) -> Rolled | None:
    """A check whose sheet number is a sheet value (an item's gate, ITM-GATE-2; a fake's tell,
    ITM-TELL-4), with what conditions and items do to every check (ITM-OUT-11); ``asked`` is
    ``advantage``/``disadvantage`` or None."""
    res = game.ruleset.resolution
    assert res is not None
    view = SheetView(game, character, state)
    applied = collect(game, state, character, view, "ability", "")
    rolls_twice = isinstance(res, SumResolution) and res.advantage
    effect_total, _ = applied.roll(ctx.stream("skill_check", "effects"))  # ITM-CHK-3
    request = CheckRead(who=character.name, kind="ability", ident="", label=label,
                      attrs={"dc": str(difficulty)}, view=view, ability=None,
                      ability_part=view.value(value), rank=0, own_bonus=0,
                      flat=applied.flat + effect_total,
                      lean=applied.lean(asked, rolls_twice))
    return resolve_request(game, res, request, ctx)


def _separate_setback(game: Game) -> bool:
    """CHK-SYM-22: a package ruleset reads ``setback=`` from capabilityApi 1.150 on."""
    ruleset = game.ruleset
    return ("capability_api" not in ruleset.model_fields_set
            or version_tuple(ruleset.capability_api) >= (1, 150))


def _check_attr(help: str) -> str | None:
    return attr(RAW, help)


def _number_attr(help: str) -> str | None:
    """A number of the check, read from a labelled value too (``dc="DC 10"``);
    anything else that is no whole number is ignored (OQ-CHK-16)."""
    return attr(NUMERAL, help)


@request
class SkillCheck(Request):
    """A check with the ruleset's own dice (CHK-GEN-A1..A8); name it with skill=, save= or ability=
    (docs/rules/checks.md#appendix-a-the-attributes-of-skill_check,
    docs/rules/items.md#75-resolving-a-check)."""

    who: int = attr(WHO, "who rolls", shown="the player")
    skill: str | None = _check_attr("the skill checked, by id or label")
    save: str | None = _check_attr("the save checked, instead of skill=")
    ability: str | None = _check_attr("the ability checked, instead of skill=")
    dc: str | None = _number_attr('the difficulty number (dc="15 (hard)" and dc="DC 15" '
                                  "are 15)")
    difficulty: str | None = _check_attr("a step of the ruleset's difficulty ladder, by label")
    threshold: str | None = _number_attr("a roll-against threshold")
    bonus: str | None = _number_attr("situational bonus (dice for a pool), within the "
                                    "ruleset's limits (CHK-TAG-4)")
    with_: str | None = attr(RAW, "another ability for the check (CHK-TAG-5/6)", name="with")
    explode: str | None = _number_attr("exploding dice, where the ruleset allows it")
    double: str | None = _number_attr("faces that count double, where allowed")
    reroll: str | None = _check_attr("faces rerolled, where allowed")
    dark: str | None = _number_attr("dark dice of a dice-highest roll")
    setback: str | None = _number_attr("setback dice of a symbol pool")
    upgrade: str | None = _number_attr("dice upgraded (a symbol pool)")
    upgradeown: str | None = _number_attr("own dice upgraded (a symbol pool)")
    spend: str | None = _check_attr("a pool spent for bought dice or successes (CHK-POOL-A3)")
    mode: str | None = _check_attr('"advantage" or "disadvantage" ("with advantage" is read '
                                   "so)")
    use: str | None = _check_attr("a chosen entry used for the check (CHK-TAL-2..6)")

    def attrs(self) -> dict[str, str]:
        """The attributes written, by their tag names, for the resolution kinds to read."""
        return {meta.name: value for name, meta in self.declared
                if name != "who" and (value := getattr(self, name)) is not None}


CHECK_RECORD = {
    "skill": "the skill checked, by id (or save=, ability=)",
    "save": "the save checked, by id", "ability": "the ability checked, by id",
    "with": "the ability with= used instead (CHK-TAG-16)",
    "override": "the override that applied (CHK-OVR-A1)",
    "effects": "what conditions and items added, signed (ITM-CHK-8)",
    "effectDice": "the dice of those modifiers, as rolled (ITM-CHK-3)",
    "from": "where those effects came from", "automatic": "a check failed automatically",
    "success": "whether it succeeded", "rolls": "the dice rolled", "total": "the result",
    "dc": "the difficulty", "critical": "success or failure, when critical",
    "outcome": "the outcome tier's label (CHK-OUT-20)",
    "unmodified": "the total before modifiers", "modifier": "the sheet number added",
    "kept": "the dice kept", "thrown": "the dice thrown away",
    "highest": "the highest die (dice-highest)", "exact": "whether a die met it exactly",
    "threshold": "the number to roll under (roll-against)", "against": "what it was rolled "
    "against", "tens": "the tens dice (d100)", "explode": "the dice that exploded",
    "double": "the faces that counted double", "reroll": "the dice rerolled",
    "rerolled": "what the rerolls gave", "zeroDice": "a pool of no dice: what it rolled",
    "dark": "the dark dice", "darkHighest": "the highest dark die",
    "darkOutcome": "what the dark dice say",
    "symbols": "the symbols rolled, net", "symbolDetails": "each die's symbols",
    "setback": "the setback dice", "upgrade": "dice upgraded", "upgradeOwn": "own dice upgraded",
    "resolution": "the resolution kind", "missingDifficulty": "the difficulty was missing",
    "bonus": "the situational bonus used (CHK-TAG-4)",
    "spend": "the pool spent, and how much (CHK-POOL-A3)", "bought": "what the spend bought",
    "spendRefused": "the spend could not be paid", "successesBought": "successes bought",
    "use": "the chosen entry used (CHK-TAL-2..6)", "useBought": "how many times bought",
    "usePaid": "what the entry cost", "useRefused": "the entry could not be paid",
}


def _teach_check(game: Game, party: Party) -> list[str]:
    """How to ask for a check: an example on the ruleset's first skill (not one only a fight rolls)
    with a sensible difficulty, then its skills and saves
    (docs/rules/checks.md#appendix-a-the-attributes-of-skill_check)."""
    sheet = game.ruleset.sheet
    fight_only = combat_only(game)
    skills = [s.label for s in sheet.skills if s.id.casefold() not in fight_only]
    difficulty, ladder = _difficulty(game)
    named: dict[str, str | None] = (
        {"skill": skills[0]} if skills else {"save": sheet.saves[0].label} if sheet.saves
        else {"ability": sheet.abilities[0].label} if sheet.abilities else {})
    line = ("- A risky act the rules decide: "
            + example("skill_check", **named, **difficulty, who=party.hero))
    others = [f'save="{sheet.saves[0].label}"'] if sheet.saves and skills else []
    if sheet.abilities and skills:
        others.append(f'ability="{sheet.abilities[0].label}"')
    lines = [line + (f" ({' or '.join(others)} instead of skill=)" if others else "")]
    listed = [f"Skills: {', '.join(skills)}."] if skills else []
    if sheet.saves:
        listed.append("Saves: " + ", ".join(s.label for s in sheet.saves) + ".")
    if ladder:
        listed.append(ladder)
    lines += [f"  {one}" for one in listed]
    # ITM-CHK-10: the engine applies conditions and items itself; the GM must not add them.
    wounds = "wound penalties, " if any(t.penalties for t in game.ruleset.live.tracks) else ""
    lines.append(f"  gmtags rolls the dice and applies {wounds}conditions and items itself: add "
                 "no modifiers, write no result.")
    return lines


def _difficulty(game: Game) -> tuple[dict[str, str | None], str]:
    """The difficulty an example check writes — the middle step of the ruleset's ladder, else
    what suits its dice — and the sentence naming the ladder's steps (or what ``dc=`` counts)."""
    res = game.ruleset.resolution
    if isinstance(res, AgainstResolution):  # CHK-RA-8: dc= only shifts; a step is named
        steps = ", ".join(s.label for s in res.difficulty_ladder)
        return {}, f"Harder checks name a difficulty= ({steps})." if steps else ""
    if isinstance(res, PoolResolution):  # CHK-TAG-1: the successes needed
        pool_steps = res.difficulty_ladder
        needed = pool_steps[(len(pool_steps) - 1) // 2].successes if pool_steps else 2
        shown = ": " + ", ".join(f"{s.label} {s.successes}" for s in pool_steps)
        return {"dc": str(needed)}, f"dc= is the successes needed{shown if pool_steps else ''}."
    ladder = res.difficulty_ladder if res is not None else []
    if ladder:
        middle = ladder[(len(ladder) - 1) // 2].dc
    elif isinstance(res, SumResolution):  # a little above the dice's average
        middle = res.dice.count * (res.dice.sides + 1) // 2 + 2
    elif isinstance(res, HighestResolution):
        middle = max(1, res.die.sides - 2)
    else:  # a symbol pool's difficulty dice (CHK-SYM-A5)
        middle = 2
    steps = ", ".join(f"{s.label} {s.dc}" for s in ladder)
    if isinstance(res, SymbolResolution):
        return {"dc": str(middle)}, f"dc= is the difficulty dice{': ' + steps if steps else ''}."
    return {"dc": str(middle)}, f"Difficulties: {steps}." if steps else ""


@action("skill_check", None, SkillCheck, teach=_teach_check, record=CHECK_RECORD,
        needs=Needs(lambda game: game.ruleset.resolution is not None, reasons.NO_RESOLUTION,
                    "This ruleset declares no resolution, so it has no checks."),
        reasons=(reasons.UNKNOWN_SKILL, reasons.UNKNOWN_SAVE, reasons.UNKNOWN_ABILITY,
                 reasons.MISSING_ATTRIBUTE, reasons.MISSING_DIFFICULTY, reasons.MALFORMED,
                 reasons.COMBAT_ONLY))
def skill_check(game: Game, state: State, request: SkillCheck,
                ctx: TurnContext) -> tuple[State, Answer]:
    """Answer ``[skill_check: ...]`` with the ruleset's own dice (CHK-GEN-A1..A8)."""
    tag = request.tag
    attrs = request.attrs()
    notes = _as_meant(attrs)
    skill = (attrs.get("skill") or "").strip()
    if skill.casefold() in combat_only(game):  # CMB-ATK-2: only a fight rolls it
        return state, refused(tag, reasons.COMBAT_ONLY,
                              f'"{skill[:40]}" is rolled only in a fight (by [attack:] or '
                              "initiative), never as a check; nothing was rolled.", notes=notes)
    # The results a GM wrote are no attributes of the request (the engine ignores them), but the
    # answer names the first one, so the GM sees its verdict was not used.
    new_state, checked = roll_check(game, state, request.who, attrs, ctx,
                                    written=_written(dict(tag.attrs)))
    if not checked.ok and checked.reason is not None:
        return state, refused(tag, checked.reason, checked.text, notes=notes)
    return new_state, accepted(tag, checked.text, checked.record, notes)


# What a GM writes as the result of a check it asks for, the verdict before the dice: never used
# (CHK-TAG-20), but named in the answer.
_WRITTEN_RESULTS = ("result", "outcome", "success", "critical", "dc_met", "rolls", "roll",
                    "total", "net", "successes")
_MODES = ("advantage", "disadvantage")


def _written(attrs: Mapping[str, str]) -> str | None:
    """The first result the GM wrote itself, as it wrote it (``result="success"``)."""
    key = next((key for key in _WRITTEN_RESULTS if key in attrs), None)
    return None if key is None else f'{key}="{_shown(attrs[key])}"'


def _as_meant(attrs: dict[str, str]) -> tuple[str, ...]:
    """Read ``mode=`` as the GM meant it, in place; the notes say what was read so:
    ``mode="with advantage"`` is ``advantage``; a mode that is neither advantage nor disadvantage
    is dropped. (A labelled ``dc=`` is read by its reader.)"""
    notes: list[str] = []
    mode = attrs.get("mode")
    if mode is not None:
        words = mode.strip().lower().split()
        meant = " ".join(words[1:] if words[:1] == ["with"] else words)
        if meant in _MODES:
            attrs["mode"] = meant
        else:
            del attrs["mode"]
            notes.append(f'ignored mode="{_shown(mode)}": a check takes mode="advantage" or '
                         'mode="disadvantage"')
    return tuple(notes)
