"""A foe template's own abilities, its regeneration, and what 0 hit points means for a hero
(CMB-ABIL-4/5/7/8 of docs/rules/combat.md#a11-abilities-against-foes-and-the-bestiary; CMB-HP0-1..4,
OQ-CMB-15 of docs/rules/combat.md#a12-rule-cards-0-hit-points-and-who-wins).

The bestiary and the "Spells and abilities" page are not ours (CMB-ABIL-8); we read a
bestiary creature as a template with the smallest keys its fight needs:

* ``combat.abilities`` on a template — its own attacks and abilities, each used in place of
  one of its attacks a round: an attack (``toHit`` added to the attack check, the template's
  ``attack`` without it) or a save (``save``: each hero saves against ``saveDifficulty`` or
  ``save.difficulty``; ``onSuccess`` half by default, CMB-ABIL-5's breath weapon), its
  ``damage`` and ``damageType``, ``uses`` per fight (none: every round), ``targets`` (how
  many heroes one use reaches). Formulas read ``@tier`` and the foe's ability modifier, once,
  when the foe joins (CMB-TPL-8).
* ``regenerate`` on a template — ``{"amount": "<formula>", "stoppedBy": ["fire", "acid"]}``:
  at the end of each round a foe above 0 regains ``amount`` unless it took damage of a
  ``stoppedBy`` type that round (CMB-ABIL-7).
* ``zeroHp`` on a combat condition — ``"death"`` or ``"stable"``: what 0 hit points means for
  a hero bearing it (CMB-HP0-1, OQ-CMB-15's best reading); and ``combat.zeroHp`` — the world's
  death rule (``death``: whether heroes can die, CMB-HP0-2/3), what 0 means when no condition
  says (``meaning``), and the conditions a hero then gets (``dead``, ``stable``)."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from .base import Id, Label, RulesetModel
from .combat import SaveRoll
from .formula import FormulaText

ZeroMeaning = Literal["death", "stable"]


class FoeAbility(RulesetModel):
    """CMB-ABIL-4/5: one of a template's own attacks or abilities."""

    id: Id
    label: Label | None = None
    to_hit: FormulaText | None = None
    """An attack's number in the attack check (the template's ``attack`` without it)."""
    save: SaveRoll | None = None
    """A save ability (a breath weapon): each target saves; ``onSuccess`` half by default."""
    save_difficulty: FormulaText | None = None
    """The DC, read for the foe (``save.difficulty`` when that is given)."""
    damage: FormulaText | None = None
    damage_type: Id | None = None
    """CMB-TYPE-1: without it the foe's own damage type."""
    qualities: list[Id] = Field(default_factory=list, max_length=16)
    """ITM-WPN-29: the item tags its damage carries (a deva's mace: ``magical``)."""
    uses: int | None = Field(default=None, ge=1, le=20)
    """Uses per fight; without it, as often as the foe attacks."""
    targets: int = Field(default=1, ge=1, le=12)
    spell: bool = False
    """It is a spell: a hero's standing reaction on ``spell`` meets its attack before one on
    ``hit`` would (CMB-REACT-4, OQ-CMB-11)."""


class Regenerate(RulesetModel):
    """CMB-ABIL-7: what a foe regains at the end of each round, and the damage types that stop
    it that round."""

    amount: FormulaText
    stopped_by: list[Id] = Field(default_factory=list, max_length=16)


class ZeroHp(RulesetModel):
    """CMB-HP0-1..4, OQ-CMB-15: the world's death rule and what 0 hit points means."""

    death: bool = False
    """The world's death rule: heroes can die (CMB-HP0-3); without it they cannot (CMB-HP0-4)."""
    meaning: ZeroMeaning | None = None
    """What 0 means for a hero none of whose conditions says (none: down, as before)."""
    dead: Id | None = None
    """The condition a hero who dies gets."""
    stable: Id | None = None
    """The condition a hero who becomes stable gets (it wakes up later, CMB-HP0-4)."""
