"""What a sheet ability or spell does in a formula fight: the fight keys of a catalog entry's
``mechanics`` (docs/rules/combat.md#a8-reactions,
docs/rules/combat.md#a9-sustained-abilities-concentration,
docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary, CMB-TURN-17; ITM-USE-2/6/9/10,
whose use vocabulary these keys share).

An entry a character chose (``entries`` on its sheet) is one of its abilities in a fight when
its ``mechanics`` holds any of :data:`FIGHT_KEYS`. The spec's Shield::

    {"kind": "Spell", "level": 1, "cost": [{"slot": 1}], "uses": "reaction",
     "react": {"on": "hit", "defence": "5"}}

and, in the same words, an attack spell (``attackRoll``, ``toHit``, ``amount``), a save spell
(``save``, ``saveDifficulty``, ``amount``: damage rolled once, each target saves), a sustained
one (``concentration``) and Action Surge (``grants``). The other keys of ``mechanics`` (a
talisman's ``check``, ``kind`` and ``level`` as the catalog's pages write them) are kept as
written. Load-time rules across keys are
:func:`engine.ruleset.fight_problems.ability_problems`."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, ValidationError

from .base import Id, RulesetModel
from .combat import Amount, Duration, SaveRoll
from .formula import FormulaText
from .resolution import CostRow

FIGHT_KEYS = frozenset({"uses", "react", "concentration", "attackRoll", "save", "amount",
                        "applies", "grants"})
"""A ``mechanics`` holding any of these is a fight ability (and is checked at load)."""
REACTION = "reaction"  # CMB-REACT-4: the ``uses`` of an ability used only as a reaction
FREE = "free"  # ``uses: "free"``: spends none of the turn's actions (Action Surge)
TRIGGERS = ("hit", "spell", "leave")  # OQ-CMB-11: being hit, a spell, leaving


class SlotCost(RulesetModel):
    """CMB-REACT-7: ``{"slot": 1}`` — one spell slot of that level: one point of the live pool
    ``slot_<level>`` (spell slots as pools)."""

    slot: int = Field(ge=1, le=9)

    @property
    def pool(self) -> str:
        return f"slot_{self.slot}"

    @property
    def amount(self) -> int:
        return 1


class React(RulesetModel):
    """CMB-REACT-4/7, OQ-CMB-11: the trigger of a reaction and its effect — ``defence`` added
    to the reactor's defence before the triggering hit is confirmed, for the rest of the
    round."""

    on: Literal["hit", "spell", "leave"]
    defence: FormulaText | None = None


class Applied(RulesetModel):
    """A condition an ability puts on a target it hits or that fails its save (ITM-OUT-6's
    ``applies``), for ``duration.rounds`` or until removed; ``saveEnds``: the target makes the
    ability's save again, against the same DC, at the end of each round (CMB-COND-3/4)."""

    condition: Id
    duration: Duration | None = None
    save_ends: bool = False


class Grants(RulesetModel):
    """CMB-TURN-17: one more use of the turn action ``action`` this round (Action Surge), whose
    attacks are really rolled."""

    action: Id
    count: int = Field(default=1, ge=1, le=3)


class Ability(RulesetModel):
    """The fight keys of a catalog entry's ``mechanics`` (see the module's words); every other
    key is kept as written."""

    model_config = RulesetModel.model_config | {"extra": "allow"}
    kind: str | None = None
    level: int | None = Field(default=None, ge=0, le=20)
    cost: list[CostRow | SlotCost] = Field(default_factory=list, max_length=4)
    """Paid from the caster's live pools when it is used (a slot, mana, ki)."""
    uses: Id | None = None
    """``reaction`` (CMB-REACT-4), ``free``, or a turn action's id; the first action with
    attacks without it (CMB-ABIL-1: it replaces that action's first attack)."""
    react: React | None = None
    concentration: bool = False
    """CMB-SUS-1: a sustained ability (concentration)."""
    attack_roll: bool = False
    """CMB-ABIL-2: an attack spell: its own attack roll against each target's defence."""
    to_hit: FormulaText | None = None
    """What the attack roll adds, read on the caster's sheet (ITM-USE-7/8: nothing without)."""
    save: SaveRoll | None = None
    """CMB-ABIL-3: a save spell: each target saves (``onSuccess`` ``half`` by default)."""
    save_difficulty: FormulaText | None = None
    """ITM-USE-9/10: the caster's DC, read on the caster's sheet (``save.difficulty`` when it
    is a number of its own)."""
    amount: Amount | None = None
    """The damage dealt (a critical doubles its dice, CMB-ATK-5)."""
    damage_type: Id | None = None
    qualities: list[Id] = Field(default_factory=list, max_length=16)
    """ITM-WPN-29 (v1.101): the item tags its damage carries (``magical``), as a weapon's tags
    go with its hits: an ``except`` naming one lets it through (ITM-DEF-8)."""
    applies: list[Applied] = Field(default_factory=list, max_length=8)
    target_count: int = Field(default=1, ge=1, le=12)
    """How many foes one use may be aimed at (``target="A, B"``)."""
    grants: Grants | None = None
    effect: Literal["limited", "standard", "great"] | None = None
    """CMB-OUTC-2: in an outcome fight the ability's own effect grade (how much a success achieves
    against the foe); ``standard`` without it. Formula fights ignore it."""
    targets: Literal["self", "ally", "enemy", "any"] | None = None
    """ITM-USE's ``targets``: ``ally`` — aimed at heroes of the fight (the user too), ``self`` — at
    the user alone, rather than at foes: its ``amount`` heals each, its ``applies`` (a buff) land on
    each with no roll (engine/actions/fight/allies.py)."""

    @property
    def is_reaction(self) -> bool:
        return self.uses == REACTION

    @property
    def aimed(self) -> bool:
        """Whether it is aimed at foes (an attack or save spell, or one that applies
        conditions), rather than only granting something to its user."""
        return self.attack_roll or self.save is not None or self.amount is not None \
            or bool(self.applies)

    @property
    def for_allies(self) -> bool:
        """Whether it is aimed at heroes of the fight (``targets: "ally"``)."""
        return self.targets in ("ally", "self")


def is_fight_ability(mechanics: Any) -> bool:
    """Whether an entry's ``mechanics`` gives it a part in a fight (:data:`FIGHT_KEYS`)."""
    return isinstance(mechanics, dict) and not FIGHT_KEYS.isdisjoint(mechanics)


def ability_of(mechanics: Any) -> Ability | None:
    """The typed fight keys of an entry's ``mechanics``, or None when it has none (or does not
    read: the ruleset loader reported that already)."""
    if not is_fight_ability(mechanics):
        return None
    try:
        return Ability.model_validate(mechanics)
    except ValidationError:
        return None
