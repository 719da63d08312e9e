"""The ruleset's ``combat`` block (docs/design.md#combat-ruleset-keys;
docs/rules/combat.md#part-a--fights-under-a-ruleset, and the item rules from
docs/rules/items.md#8-typed-defences-from-conditions-levels-items-and-sheet-rows on): which combat
the ruleset fights with, the action economy and turn, the attack formulas, enemy templates,
sustained abilities, narrative constants, the fight keys of conditions and levels, and what the item
rules put there (``distance``, ``offHand``, ``damageTypes``, ``sheetHides``). The load-time rules
across keys are in :mod:`.fight_problems`; what a formula's ``@`` reference reads is
:func:`reference_read`."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Annotated, Literal

from pydantic import Field, model_validator

from .base import Id, Label, Labelled, RulesetModel, Text
from .foe_abilities import FoeAbility, Regenerate, ZeroHp, ZeroMeaning
from .formula import Formula, FormulaText, Number, Reference
from .sheet import Sheet
from .values import ValueRef

CombatKind = Literal["formula", "narrative", "symbol-pool", "outcome", "none"]
RANKS = ("D", "C", "B", "A", "S", "SS", "SSS", "X", "XX")  # docs/design.md#narrative-combat
RankLetter = Literal["D", "C", "B", "A", "S", "SS", "SSS", "X", "XX"]

# ITM-DEF-7/9: a damage word ("fire"), free text unless combat.damageTypes declares them.
DamageWord = Id


class Except(RulesetModel):
    """ITM-DEF-7/8: ``{"type": "bludgeoning", "except": ["magical"]}`` — a strike carrying any
    of the ``except`` tags (items.tags, ITM-DEF-11) bypasses this entry."""

    type: DamageWord
    except_: list[Id] = Field(alias="except", min_length=1, max_length=12)


Defences = Annotated[list[DamageWord | Except], Field(min_length=1, max_length=30)]


class Defended(RulesetModel):
    """ITM-DEF-1: what a condition or a level grants against damage and conditions."""

    resist: Defences | None = None
    vulnerable: Defences | None = None
    """ITM-DEF-9: plain damage words only (the except form is reported at load)."""
    immune: Defences | None = None
    condition_immunities: list[Id] | None = Field(default=None, min_length=1, max_length=40)


class Budget(Labelled):
    """ITM-WPN-5: an action-economy unit (``act``, ``quick``, ``bonus``)."""


class Economy(RulesetModel):
    budgets: list[Budget] = Field(min_length=1, max_length=12)


class Initiative(RulesetModel):
    """CMB-TURN-15: the check rolled for initiative, a skill of ``sheet.skills``."""

    check: Id


ONE = Formula("1", Number(1))


class TurnAction(RulesetModel):
    """CMB-TURN-16: one action of a turn; its ``id`` is one of ``economy.budgets``."""

    id: Id
    name: Label
    per: FormulaText = Field(default=ONE, json_schema_extra={"default": "1"})
    """How many uses per turn (OQ-CMB-7 d)."""
    attacks: FormulaText | None = None
    """How many attack rolls one use allows; none without it (OQ-CMB-7 c)."""
    description: Text | None = None


class Turn(RulesetModel):
    initiative: Initiative | None = None
    actions: list[TurnAction] = Field(default_factory=list, max_length=12)


class AttackRule(RulesetModel):
    """CMB-ATK-1..7, CMB-READS-1..9: the three formulas of formula combat."""

    check: Id
    """A skill of ``sheet.skills``, combat-only (CMB-ATK-2)."""
    defence: FormulaText
    """A hero's defence, read for the defender (CMB-ATK-6)."""
    damage: FormulaText
    """Unarmed damage, read for the attacker (CMB-ATK-4); may read ``@roll.high``."""
    damage_type: str | None = None
    """CMB-TYPE-1: the system's default damage type (``damageType``) — of an unarmed strike,
    and of a foe's strikes where its template names none."""
    reads: dict[Id, FormulaText] = Field(default_factory=dict, max_length=16)
    """CMB-READS-2..5: values each attack reads as ``@name``, computed for the attacker."""
    difficulty: int | None = Field(default=None, ge=0, le=12)
    """CHK-SYM-35: symbol-pool combat only — the difficulty dice every attack is opposed by (default
    2, engine/rules/fight/symbols.py)."""


class TemplateDefaults(RulesetModel):
    attribute: FormulaText
    """The foe's ability modifier (a score where one is needed: 10 + 2 × it;
    docs/design.md#formula-combat)."""


class TemplateTracks(RulesetModel):
    hp: FormulaText


class TemplateCombat(RulesetModel):
    """CMB-TPL-4..6: a foe's defence, attack (its number in the attack check) and damage."""

    defence: FormulaText
    attack: FormulaText
    damage: FormulaText
    attacks: FormulaText | None = None
    """Attacks per round; one without it (docs/design.md#formula-combat)."""
    damage_type: str | None = None
    """CMB-TYPE-1, OQ-CMB-9: the damage type of the foe's attacks (``damageType``); without
    it, the system default ``combat.attack.damageType``."""
    qualities: list[Id] = Field(default_factory=list, max_length=16)
    """ITM-WPN-29: the item tags the damage of the foe's own attacks carries."""
    harm: FormulaText | None = None
    """CMB-OUTC-4: in an outcome fight, the foe's harm levels (a minion one or two, a boss six or
    more), read at ``@tier``; an outcome ruleset's templates need it."""
    hardness: FormulaText | None = None
    """ITM-HARD-1: a creature's own hardness, in a spending-style pool fight."""
    reduction: FormulaText | None = None
    """ITM-FLOOR-2: what the foe takes off a pool hit's damage (its armour)."""
    abilities: list[FoeAbility] = Field(default_factory=list, max_length=8)
    """CMB-ABIL-4/5: its own attacks and abilities (:mod:`.foe_abilities`)."""


class Technique(RulesetModel):
    """D100-DEF-8: a technique a foe of a template may use in a narrative fight
    (``[attack: technique=]``); ``undodgeable`` ones no defence can meet (D100-DEF-7)."""

    id: Id
    label: Label | None = None
    undodgeable: bool = False


class SaveAgainst(RulesetModel):
    """ITM-ONHIT-7: what a foe of the template adds to its saves against one ``condition`` (an
    ``onHit`` entry's save and the ``saveEnds`` save that ends it), or against magic (``magic``: the
    ``onHit`` save against a weapon tagged ``magical``); the smallest key for "a save against that
    condition, and against magic"."""

    condition: Id | None = None
    magic: bool = False
    bonus: int = Field(ge=-20, le=20)

    @model_validator(mode="after")
    def _one(self) -> SaveAgainst:
        if (self.condition is None) == (not self.magic):
            raise ValueError('a save bonus is against a "condition" or against "magic"')
        return self


class Template(RulesetModel):
    """CMB-TPL-1..8: the sheet a foe of a ``role`` gets, as formulas in ``@tier``."""

    role: Id
    label: Label | None = None
    defaults: TemplateDefaults | None = None
    tracks: TemplateTracks
    combat: TemplateCombat
    loot: Id | None = None
    """The loot table a felled foe drops (ITM-LOOT-14)."""
    types: list[Id] = Field(default_factory=list, max_length=24)
    """ITM-PLUS-4: the creature types of a foe of this template (what a weapon's ``plus``
    ``targetIs.types`` names; the combat page's creature types are not ours, so this is the
    smallest key a target check needs)."""
    tags: list[Id] = Field(default_factory=list, max_length=24)
    """ITM-PLUS-4: the foe's tags, for ``targetIs.tags``."""
    per_hero: int = Field(default=1, ge=1, le=12)
    techniques: list[Technique] = Field(default_factory=list, max_length=24)
    """D100-DEF-8: the only techniques a foe of this template uses (narrative)."""
    xp: FormulaText | None = None
    """D100-PARTY-10: the experience a felled foe of this template gives each hero standing at a
    narrative victory (read at the foe's ``@tier``)."""
    """D100-PARTY-9: the foes of this template ``count="fitting"`` brings for each standing hero
    (narrative fights)."""
    regenerate: Regenerate | None = None
    """CMB-ABIL-7: what it regains each round, unless stopped (:mod:`.foe_abilities`)."""
    saves_against: list[SaveAgainst] = Field(default_factory=list, max_length=8)
    """ITM-ONHIT-7: its bonuses on saves against a condition or against magic."""


class Sustain(RulesetModel):
    """CMB-SUS-4: the save a sustainer makes when damaged, against ``dc`` (may read ``@damage``)."""

    save: Id
    """A save of ``sheet.saves`` or an ability."""
    dc: FormulaText


class Overexertion(RulesetModel):
    """D100-OVER-1, OQ-D100-8: how many ranks past what the actor can reach now each price of
    pushing begins at."""

    rupture: int = Field(default=1, ge=1, le=9)
    grave: int = Field(default=2, ge=1, le=9)
    far: int = Field(default=3, ge=1, le=9)
    rupture_keeps: float = Field(default=0.8, ge=0, le=1)
    """D100-OVER-1: the share of the pool's maximum a rupture leaves (rounded down)."""
    grave_keeps: float = Field(default=0.5, ge=0, le=1)
    """D100-OVER-1: the share of the pool's maximum a grave injury leaves."""
    scar: Id = "scarred"
    """D100-OVER-1: the condition a grave injury leaves on the sheet for life."""


class NarrativeBase(RulesetModel):
    party: int = Field(default=80, ge=0, le=100)
    foes: int = Field(default=65, ge=0, le=100)


class Narrative(RulesetModel):
    """docs/design.md#narrative-combat: the constants of Part B, all optional."""

    base: NarrativeBase | None = None
    damage: FormulaText | None = None
    """The blow before the grade's multiplier (default ``10``), read for the attacker."""
    stamina: Id | None = None
    """The pool physical effort draws on (a pool of ``live.pools``)."""
    mana: Id | None = None
    ranks: dict[RankLetter, Label] = Field(default_factory=dict)
    """Other names for the rank letters."""
    effort: dict[Id, RankLetter | None] = Field(default_factory=dict, max_length=24)
    """D100-EFF-2: the effect ladder's words, each the rank of the effect (null: an everyday act,
    free); without it engine/rules/fight/narrative.py's ``EFFORT``."""
    overexertion: Overexertion | None = None
    restrained: float = Field(default=0.5, ge=0, le=1)
    """D100-DMG-4: what a ``purpose="restrained"`` blow keeps of its damage."""
    reckless_target: float = Field(default=1 / 3, ge=0, le=1)
    weapon_armour: float = Field(default=1 / 3, ge=0, le=1)
    """D100-DMG-3: what each step of ``edge=`` (a hero's weapon better than the target's armour:
    ``better`` 1, ``superior`` 2) adds to the blow's damage."""
    flair: int = Field(default=1, ge=0, le=10)
    """D100-MOM-5: the momentum a strike graded ``flair="creative|cooperative"`` adds to its
    side."""
    bleed_rounds: int | None = Field(default=3, ge=1, le=20)
    """D100-PARTY-7: the rounds a downed hero bleeds before it dies (null: no clock)."""
    focus: int = Field(default=3, ge=0, le=20)
    """D100-PARTY-8: what each ally's earlier strike this round on the same target adds to a hero's
    hit chance (focus fire; at most three count)."""
    xp: Id | None = None
    """D100-PARTY-10: the sheet field a victory's experience is added to (none: nobody gains
    experience)."""
    """D100-DMG-3: the damage added to a blow on a target whose own last attack was reckless (the
    spec's "up to one third"); half of it after an aggressive one."""


POSITIONS = ("controlled", "risky", "desperate")
"""CMB-OUTC-2, OQ-CMB-6: the positions the GM grades an outcome action with (Forged in the
Dark's words), least dangerous first."""
EFFECTS = ("limited", "standard", "great")
"""CMB-OUTC-2, OQ-CMB-6: the effects the GM grades an outcome action with, smallest first."""
PositionWord = Literal["controlled", "risky", "desperate"]
EffectWord = Literal["limited", "standard", "great"]
FORGED_HARM = (0.25, 0.5, 0.8, 1.0)  # CMB-OUTC-3: a quarter, a half, four-fifths, all


class TierReading(RulesetModel):
    """CMB-OUTC-1: how one outcome tier is read both ways — ``effect``: the effect's harm levels are
    moved by this many (null: nothing is achieved); ``harm``: the position's harm level comes back
    moved by this many (null: nothing comes back)."""

    effect: int | None = Field(default=0, ge=-3, le=3)
    harm: int | None = Field(default=None, ge=-3, le=3)


class OutcomeRule(RulesetModel):
    """CMB-OUTC-1..4, OQ-CMB-6: outcome-based combat's keys (``combat.outcome``)."""

    check: Id
    """The skill of ``sheet.skills`` a hero's action rolls, read through the outcome tiers."""
    dc: int = Field(default=0, ge=-1000, le=1000)
    """The difficulty it is rolled against (what tiers read ``by: "margin"`` count from)."""
    harm: list[Annotated[float, Field(gt=0, le=1)]] = Field(
        default_factory=lambda: list(FORGED_HARM), min_length=1, max_length=8)
    """f_k: the share of a hero's maximum health one harm of level k takes (OQ-CMB-6)."""
    effect: dict[EffectWord, Annotated[int, Field(ge=0, le=12)]] = Field(default_factory=dict)
    """The foe harm levels each effect deals on a full success (limited 1, standard 2, great
    3 for a word left out)."""
    position: dict[PositionWord, Annotated[int, Field(ge=0, le=8)]] = Field(
        default_factory=dict)
    """The harm level each position brings back (controlled 1, risky 2, desperate 3 for a word
    left out)."""
    tiers: dict[Id, TierReading] = Field(default_factory=dict, max_length=8)
    """Readings by tier id; a tier left out is read by its kind (engine/rules/fight/outcome.py)."""


class Against(RulesetModel):
    """CMB-COND-1/2: what attacks against the bearer get, from ``reach`` or from anywhere."""

    edge: int | None = Field(default=None, ge=-10, le=10)
    reach: Literal["near", "far"] | None = None
    crit: bool = False
    """Such attacks are critical hits (CMB-COND-2)."""


class CombatCondition(Defended):
    """The fight keys of one of the ruleset's conditions (CMB-COND-1/2, ITM-DEF-1), named by
    ``condition`` or, in the seed's form, by ``id``."""

    condition: Id | None = None
    id: Id | None = None
    edge: int | None = Field(default=None, ge=-10, le=10)
    """1 advantage, -1 disadvantage on the bearer's own ``checks`` (OQ-CMB-8)."""
    checks: list[Id] = Field(default_factory=list, max_length=24)
    against: list[Against] = Field(default_factory=list, max_length=8)
    no_actions: bool = False
    """CMB-TYPE-2: the bearer uses no attacks, abilities or potions."""
    zero_hp: ZeroMeaning | None = None
    """CMB-HP0-1: what 0 hit points means for a hero bearing it (:mod:`.foe_abilities`)."""

    @model_validator(mode="after")
    def _named_once(self) -> CombatCondition:
        if (self.condition is None) == (self.id is None):
            raise ValueError('a combat condition names its condition by "condition" or "id"')
        return self

    @property
    def name(self) -> str:
        """The id of the condition these keys belong to."""
        return self.condition if self.condition is not None else str(self.id)


class Level(Defended):
    """ITM-DEF-1/2: defences that hold while ``value`` reaches ``atLeast``."""

    id: Id
    label: Label | None = None
    value: ValueRef
    at_least: float


class Distance(RulesetModel):
    """ITM-WPN-16: the unit reach and range are written in."""

    unit: Label


class OffHand(RulesetModel):
    """ITM-OFF-2/4/7: the budget a second attack spends and whether it keeps its ability."""

    budget: Id
    ability: Literal["full", "penalty-only"] = "full"
    full_when: ValueRef | None = None
    """ITM-OFF-7 (v1.97)."""


class HideSource(RulesetModel):
    """ITM-HIDES-2: a sheet list's column whose words grant one kind of defence."""

    list_: Id = Field(alias="list")
    column: Id
    kind: Literal["resist", "vulnerable", "immune", "conditionImmunities"]  # OQ-25


class PoolCombat(RulesetModel):
    """ITM-HARD (docs/rules/items.md#123-hardness), glossary "spending, taking style": how a
    ``dice-pool`` ruleset's fights use initiative and armour (the spec's combat page is missing;
    these are the smallest keys its rules need, docs/rulesets.md "Pool fights")."""

    style: Literal["spending", "taking"] | None = None
    """Where initiative is a number attacks shift: ``spending`` (hardness applies, no floor,
    ITM-HARD-1..3, ITM-FLOOR-3) or ``taking`` (a hit takes initiative instead of dealing
    damage, ITM-ONHIT-4); without it initiative only orders the round."""
    hardness: ValueRef | None = None
    """ITM-HARD-1/4: a hero's hardness, read from its sheet as it joins (its armour's, through
    ``itemStat``). Only with the spending style (ITM-HARD-3)."""
    reduction: ValueRef | None = None
    """ITM-FLOOR-2, ITM-ARM-9: a hero's damage reduction against a pool hit, read from its
    sheet when hit (its armour's, through ``itemStat``)."""
    gain: int | None = Field(default=None, ge=0, le=100)
    """Glossary "spending, taking style", ITM-FLOOR-3: with the spending style, what each
    combatant's initiative number rises by at the start of every round after the first; with it a
    spending strike deals its attacker's number and the number falls back to the initiative it
    joined with (its base). Without it the style only gates hardness."""


class Combat(RulesetModel):
    """The ``combat`` block."""

    kind: CombatKind | None = None
    """Which combat the ruleset fights with; without it see :func:`..ruleset.combat_kind`."""
    economy: Economy | None = None
    turn: Turn | None = None
    attack: AttackRule | None = None
    templates: list[Template] = Field(default_factory=list, max_length=24)
    sustain: Sustain | None = None
    zero_hp: ZeroHp | None = None
    """CMB-HP0-2..4: the world's death rule (:mod:`.foe_abilities`)."""
    narrative: Narrative | None = None
    outcome: OutcomeRule | None = None  # outcome-based combat (CMB-OUTC-1..4)
    conditions: list[CombatCondition] = Field(default_factory=list, max_length=96)
    levels: list[Level] = Field(default_factory=list, max_length=24)
    distance: Distance | None = None
    off_hand: OffHand | None = None
    damage_types: list[DamageWord | Labelled] | None = Field(default=None, min_length=1,
                                                             max_length=64)
    """ITM-DEF-13: the damage vocabulary; without it damage words are free text."""
    sheet_hides: list[HideSource] | None = Field(default=None, max_length=8)
    """ITM-HIDES-1: up to 8 sources (an empty list is allowed)."""
    pool: PoolCombat | None = None
    """A ``dice-pool`` ruleset's initiative style, hardness and damage reduction."""

    @property
    def turn_actions(self) -> tuple[TurnAction, ...]:
        """The actions of one turn: ``turn.actions``, else each budget as an action used once
        a turn with one attack (docs/design.md#formula-combat)."""
        if self.turn is not None and self.turn.actions:
            return tuple(self.turn.actions)
        budgets = self.economy.budgets if self.economy is not None else []
        return tuple(TurnAction(id=b.id, name=b.label, attacks=ONE) for b in budgets)

    @property
    def damage_words(self) -> frozenset[str] | None:
        """The declared damage words, or None where they are free text."""
        if self.damage_types is None:
            return None
        return frozenset(t if isinstance(t, str) else t.id for t in self.damage_types)


# What a reference reads besides the sheet, by where the formula sits
# (docs/design.md#formula-combat).
TIER = "tier"
DAMAGE = "damage"
ROLL_HIGH = "roll.high"


@dataclass(frozen=True, slots=True)
class Read:
    """What an ``@`` reference reads: an ability's ``score`` or ``modifier``, a sheet
    ``field`` or ``derived`` value, or a ``given`` value the place of the formula supplies
    (``tier``, ``damage``, ``roll.high``, a name of ``attack.reads``)."""

    kind: Literal["score", "modifier", "field", "derived", "given"]
    name: str


def reference_read(sheet: Sheet, reference: Reference, given: frozenset[str] = frozenset(),
                   sheet_values: bool = True) -> Read | None:
    """What ``reference`` reads on ``sheet``, or None when it names nothing there.

    ``given`` names what the formula's place supplies (``@tier``, ``@damage``, ``@roll.high``,
    ``@second``), looked up first; ``sheet_values`` False allows abilities only (a foe has no
    fields or derived values). ``@x`` is ability ``x``'s score, ``@x.mod`` its modifier; any
    other ``@a`` or ``@a.b`` is the field or derived value ``a`` or ``a_b``."""
    written = str(reference)[1:]
    if written in given:
        return Read("given", written)
    abilities = {a.id for a in sheet.abilities}
    if reference.name in abilities and reference.part in (None, "mod"):
        return Read("score" if reference.part is None else "modifier", reference.name)
    if not sheet_values:
        return None
    ident = reference.name if reference.part is None else f"{reference.name}_{reference.part}"
    if any(f.id == ident for f in sheet.fields):
        return Read("field", ident)
    if any(d.id == ident for d in sheet.derived):
        return Read("derived", ident)
    return None
