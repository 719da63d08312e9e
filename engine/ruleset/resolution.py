"""The ``resolution`` block: how a ruleset rolls a check (spec/checks.md), one typed model per
kind, and the import rules pydantic's field types cannot say (``resolution_problems``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from .base import Id, Label, Labelled, RulesetModel
from .values import ValueRef

if TYPE_CHECKING:
    from .problems import Problem
    from .ruleset import Ruleset

Face = Annotated[int, Field(ge=1, le=1000)]
TierText = Annotated[str, Field(max_length=200)]


class AbilityModifier(RulesetModel):
    """CHK-GEN-4..7; ``rows`` holds the ``[score, number]`` pairs of a step table (OQ-CHK-2)."""

    op: Literal["identity", "floorHalfMinusTen", "stepTable"] = "identity"
    rows: list[tuple[float, float]] | None = Field(default=None, min_length=1, max_length=64)


class Tier(Labelled):
    """CHK-GEN-8/10: a proficiency tier adds ``flat`` + ``multiplier`` × proficiency bonus."""

    flat: int = 0
    multiplier: float | None = None


class Proficiency(RulesetModel):
    bonus: ValueRef  # CHK-GEN-11


class OutcomeTier(Labelled):
    """CHK-OUT-5..12."""

    at_least: float | None = None
    success: bool = False
    critical: bool = False
    text: TierText | None = None
    on: Literal["critical-success", "critical-failure"] | None = None


class Outcomes(RulesetModel):
    by: Literal["margin", "total", "fraction"] = "margin"
    naturals: Literal["shift"] | None = None
    tiers: list[OutcomeTier] = Field(min_length=2, max_length=8)


class Override(RulesetModel):
    """CHK-OVR-2..9: checks that roll with other keys of the same kind."""

    id: Id
    label: Label
    text: Annotated[str, Field(max_length=400)] | None = None
    skills: list[Id] = Field(default_factory=list, max_length=96)
    saves: list[Id] = Field(default_factory=list, max_length=24)
    abilities: list[Id] = Field(default_factory=list, max_length=24)
    when: ValueRef | None = None
    set: dict[str, Any] = Field(default_factory=dict)


class RerollRule(RulesetModel):
    """CHK-POOL-26..29, CHK-SPEND-7, CHK-TAL-2."""

    id: Id | None = None
    up_to: Face
    mode: Literal["once", "until"] = "once"


class SpendEntry(RulesetModel):
    """CHK-SPEND-2..11."""

    pool: Id
    amount: int = Field(ge=1, le=100)
    successes: int | None = Field(default=None, ge=1, le=10)
    dice: int | None = Field(default=None, ge=1, le=10)
    reroll: RerollRule | None = None
    per_check: Annotated[int, Field(ge=1, le=10)] | Literal["pool"] | ValueRef

    @model_validator(mode="after")
    def _buys_something(self) -> SpendEntry:
        if self.successes is None and self.dice is None and self.reroll is None:
            raise ValueError("a spend buys successes, dice or a reroll")  # CHK-SPEND-4
        return self


class Common(RulesetModel):
    """CHK-GEN-3: the keys every kind has."""

    ability_modifier: AbilityModifier = Field(default_factory=AbilityModifier)
    proficiency_tiers: list[Tier] = Field(min_length=1, max_length=12)
    proficiency: Proficiency | None = None
    outcomes: Outcomes | None = None
    overrides: list[Override] = Field(default_factory=list, max_length=24)
    spend: list[SpendEntry] = Field(default_factory=list, max_length=4)  # CHK-SPEND-13


# --- dice-sum -------------------------------------------------------------------------------

class SumDice(RulesetModel):
    count: int = Field(ge=1, le=100)
    sides: int = Field(ge=2, le=1000)
    faces: list[int] | None = Field(default=None, max_length=1000)  # CHK-SUM-8


class OpenEnded(RulesetModel):
    high: Face  # CHK-SUM-10
    low: Face


class NaturalsSplit(RulesetModel):
    """OQ-CHK-8: separate values for checks and saves."""

    checks: Literal["none", "both", "max-only", "min-only"] = "none"
    saves: Literal["none", "both", "max-only", "min-only"] = "none"


class DcStep(RulesetModel):
    label: Label
    dc: int = Field(ge=-1000, le=1000)


class SumResolution(Common):
    kind: Literal["dice-sum"]
    dice: SumDice
    advantage: bool = False
    naturals: Literal["none", "both", "max-only", "min-only"] | NaturalsSplit = "none"
    open_ended: OpenEnded | None = None
    unmodified: list[int] = Field(default_factory=list, max_length=20)
    difficulty_ladder: list[DcStep] = Field(default_factory=list, max_length=12)


# --- dice-pool ------------------------------------------------------------------------------

class Die(RulesetModel):
    sides: int = Field(ge=2, le=100)  # CHK-POOL-4


class PoolLimits(RulesetModel):
    min: int = Field(default=0, ge=0, le=100)
    max: int = Field(ge=0, le=100)  # CHK-POOL-7
    ability_plus_ability: bool = False


class Target(RulesetModel):
    default: Face
    min: Face
    max: Face
    from_: ValueRef | None = Field(default=None, alias="from")


class FaceRule(RulesetModel):
    """``explode``/``double`` fire at ``from``; a check may lower them to ``min`` (CHK-POOL-15)."""

    from_: Face | None = Field(default=None, alias="from")
    min: Face | None = None

    @model_validator(mode="after")
    def _some_face(self) -> FaceRule:
        if self.from_ is None and self.min is None:
            raise ValueError('give "from", "min" or both')
        return self


class UpTo(RulesetModel):
    up_to: Face


class Botch(UpTo):
    rule: Literal["noSuccesses", "halfOrMore"] = "noSuccesses"  # CHK-POOL-23


class Exceptional(RulesetModel):
    successes: int = Field(ge=1, le=400)


class Range(RulesetModel):
    min: int = Field(ge=-100, le=100)
    max: int = Field(ge=-100, le=100)


class Stance(Labelled):
    count: Literal["below", "above"]
    skills: list[Id] = Field(default_factory=list, max_length=96)


class Exact(RulesetModel):
    label: Label
    text: TierText | None = None
    counts: bool = True


class PoolStep(RulesetModel):
    label: Label
    successes: int = Field(ge=1, le=400)
    target: Face | None = None


class PoolResolution(Common):
    kind: Literal["dice-pool"]
    die: Die
    pool: PoolLimits
    target: Target
    explode: FaceRule | None = None
    double: FaceRule | None = None
    cancel: UpTo | None = None
    botch: Botch | None = None
    exceptional: Exceptional | None = None
    situational_dice: Range | None = None
    reroll: list[RerollRule] = Field(default_factory=list, max_length=6)  # CHK-POOL-26
    stances: list[Stance] = Field(default_factory=list, max_length=6)  # CHK-POOL-41
    exact: Exact | None = None
    difficulty_ladder: list[PoolStep] = Field(default_factory=list, max_length=12)


# --- dice-highest ---------------------------------------------------------------------------

class HighestPool(RulesetModel):
    min: int = Field(default=0, ge=0, le=20)
    max: int = Field(ge=0, le=20)  # CHK-HIGH-2


class Critical(RulesetModel):
    count: int = Field(ge=1, le=20)
    face: Face | None = None


class Dark(RulesetModel):
    label: Label
    max: int = Field(ge=1, le=10)  # CHK-HIGH-7
    text: TierText | None = None
    outcome: Literal["all", "light"] | None = None  # CHK-HIGH-8/9


class HighestResolution(Common):
    kind: Literal["dice-highest"]
    die: Die
    pool: HighestPool
    keep: int = Field(default=1, ge=1, le=3)  # CHK-HIGH-4
    zero_dice: Literal["lowest-of-two", "fail"] = "lowest-of-two"
    critical: Critical | None = None
    dark: Dark | None = None
    situational_dice: Range | None = None
    difficulty_ladder: list[DcStep] = Field(default_factory=list, max_length=12)


# --- roll-against ---------------------------------------------------------------------------

class AgainstDice(RulesetModel):
    count: int = Field(default=1, ge=1, le=100)
    sides: int = Field(default=100, ge=2, le=1000)


class WhenTarget(RulesetModel):
    at_least: int | None = None
    below: int | None = None


class CriticalRule(RulesetModel):
    """CHK-RA-12..14: face bounds, or (failures only) ``pastTarget``, limited by ``whenTarget``."""

    from_: int | None = Field(default=None, alias="from")
    to: int | None = None
    past_target: int | None = Field(default=None, ge=0)
    when_target: WhenTarget | None = None

    @model_validator(mode="after")
    def _bounds_or_past(self) -> CriticalRule:
        if self.past_target is not None and (self.from_ is not None or self.to is not None):
            raise ValueError('a rule gives face bounds or "pastTarget", not both')  # OQ-CHK-34
        return self


class Tens(RulesetModel):
    max: int = Field(ge=1, le=5)  # OQ-CHK-36: no range stated; 5 bounds the enumeration


class AgainstStep(RulesetModel):
    label: Label
    dc: int = Field(default=0, ge=-100, le=100)
    divide: int | None = Field(default=None, ge=2, le=10)  # CHK-RA-6


class AgainstResolution(Common):
    kind: Literal["roll-against"]
    dice: AgainstDice = Field(default_factory=AgainstDice)  # CHK-RA-4, OQ-CHK-31
    against: Literal["at-most", "at-least"] = "at-most"
    critical_success: list[CriticalRule] = Field(default_factory=list, max_length=6)
    critical_failure: list[CriticalRule] = Field(default_factory=list, max_length=6)
    tens: Tens | None = None
    difficulty_ladder: list[AgainstStep] = Field(default_factory=list, max_length=12)


# --- symbol-pool ----------------------------------------------------------------------------

class Symbol(Labelled):
    counts: Id | None = None
    cancels: Id | None = None
    text: TierText | None = None


class SymbolDie(Labelled):
    faces: list[Annotated[list[Id], Field(max_length=3)]] = Field(min_length=2, max_length=20)


class SymbolNeeded(RulesetModel):
    symbol: Id
    needed: int = Field(default=1, ge=1, le=20)


class SymbolPool(RulesetModel):
    die: Id
    upgrade: Id | None = None
    max: int = Field(default=6, ge=1, le=12)  # CHK-SYM-12
    build: Literal["larger-upgraded", "sum"] = "larger-upgraded"


class SymbolDifficulty(RulesetModel):
    die: Id
    upgrade: Id | None = None
    max: int = Field(default=5, ge=0, le=12)  # CHK-SYM-17


class SideDice(RulesetModel):
    die: Id
    max: int = Field(default=3, ge=0, le=6)  # CHK-SYM-20


class SymbolResolution(Common):
    kind: Literal["symbol-pool"]
    symbols: list[Symbol] = Field(min_length=2, max_length=10)  # CHK-SYM-2
    dice: list[SymbolDie] = Field(min_length=2, max_length=8)  # CHK-SYM-7
    success: SymbolNeeded
    pool: SymbolPool
    difficulty: SymbolDifficulty
    boost: SideDice | None = None
    setback: SideDice | None = None
    critical_success: Id | None = None
    critical_failure: Id | None = None
    allow_own_upgrade: bool | None = None
    difficulty_ladder: list[DcStep] = Field(default_factory=list, max_length=12)


# --- talismans: a chosen catalog entry's mechanics.check (checks.md §11) ----------------------

class EntryCheck(RulesetModel):
    """CHK-TAL-2..5: what a chosen entry changes in one pool check."""

    reroll: RerollRule | None = None
    dice: int | None = Field(default=None, ge=1, le=10)
    successes: int | None = Field(default=None, ge=1, le=10)
    threshold: Face | None = None
    explode: Face | None = None
    double: Face | None = None

    @model_validator(mode="after")
    def _defines_something(self) -> EntryCheck:
        if all(getattr(self, key) is None for key in type(self).model_fields):
            raise ValueError("a check holds reroll, dice, successes, threshold, explode or "
                             "double")  # CHK-TAL-8
        return self


class CostRow(RulesetModel):
    """CHK-TAL-10: one part of an entry's price, taken from a live pool."""

    pool: Id
    amount: int = Field(default=1, ge=1, le=100)


class EntryMechanics(RulesetModel):
    """The parts of a catalog entry's ``mechanics`` a check reads (CHK-TAL-1, CHK-TAL-10/11);
    the rest (``kind``, combat keys) is kept as written for the pages that define it."""

    model_config = RulesetModel.model_config | {"extra": "allow"}
    cost: list[CostRow] = Field(default_factory=list, max_length=4)
    per_cost_step: dict[str, Any] | None = None
    check: EntryCheck | None = None


def entry_mechanics(mechanics: Any) -> EntryMechanics | None:
    """The typed ``mechanics`` of a catalog entry when it declares a ``check``, else None."""
    if not isinstance(mechanics, dict) or "check" not in mechanics:
        return None
    try:
        return EntryMechanics.model_validate(mechanics)
    except ValidationError:
        return None


Resolution = Annotated[
    SumResolution | PoolResolution | HighestResolution | AgainstResolution | SymbolResolution,
    Field(discriminator="kind"),
]
RESOLUTION: TypeAdapter[Resolution] = TypeAdapter(Resolution)

# CHK-OVR-5/6, OQ-CHK-47: keys an override's ``set`` may not touch.
FROZEN_KEYS = frozenset({"kind", "abilityModifier", "proficiency", "proficiencyTiers",
                         "penaltyFrom", "spend", "adjust", "difficultyLadder", "overrides"})
FROZEN_SYMBOL_KEYS = frozenset({"symbols", "dice"})


def apply_override(resolution: Resolution, override: Override) -> Resolution:
    """CHK-OVR-A3: the resolution with each key of ``set`` replaced (``null`` removes it)."""
    document = resolution.model_dump(by_alias=True, exclude_unset=True)
    for key, value in override.set.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    return RESOLUTION.validate_python(document)


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
    """CHK-OUT-5..12 and the import note of §8.1."""
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
    """checks.md Appendix D: (path, feature, version) for what one resolution uses."""
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
    """checks.md Appendix D: every check feature a ruleset uses, with the version it needs
    (an override's ``set`` counts where it changes the resolution)."""
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
    """CHK-POOL-54, §0.3: a package ruleset (one that declares ``capabilityApi``) needs the
    version of every check feature it uses; a community ruleset declares none and is only
    validated. Versions compare as integer tuples (1.135 is newer than 1.38)."""
    from .versions import version_tuple

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
    """Every import rule of spec/checks.md that the field types cannot say (CHK-*-Import)."""
    from .problems import Problem, pointer

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
