"""The ``resolution`` block: how a ruleset rolls a check (docs/rules/checks.md), one typed model per
kind. The import rules the field types cannot say are in :mod:`.resolution_problems`."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter, ValidationError, model_validator

from .base import Id, Label, Labelled, RulesetModel
from .values import ValueRef

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


# --- talismans: a chosen catalog entry's mechanics.check --------------------------------------
# (docs/rules/checks.md#11-a-talisman-that-changes-the-roll)

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


def apply_override(resolution: Resolution, override: Override) -> Resolution:
    """CHK-OVR-A3: the resolution with each key of ``set`` replaced (``null`` removes it)."""
    document = resolution.model_dump(by_alias=True, exclude_unset=True)
    for key, value in override.set.items():
        if value is None:
            document.pop(key, None)
        else:
            document[key] = value
    return RESOLUTION.validate_python(document)

