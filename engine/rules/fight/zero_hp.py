"""What 0 hit points means for a hero (CMB-HP0-1..4, OQ-CMB-15 of
docs/rules/combat.md#a12-rule-cards-0-hit-points-and-who-wins), as pure rules. The keys are
:mod:`engine.ruleset.foe_abilities`: a condition's ``zeroHp`` (``death`` or ``stable``) read
together with the world's death rule ``combat.zeroHp.death``.

OQ-CMB-15's best reading: a condition the hero bears says what 0 means for it; ``stable``
wins over ``death`` (CMB-HP0-4: "when the hero becomes stable"); with no such condition,
``combat.zeroHp.meaning``; with none at all, the hero is only down, as before. ``death`` in a
world with death: the hero dies on the spot (CMB-HP0-3) and gets ``combat.zeroHp.dead``; in a
world without death, or ``stable``: the bleeding stops, the hero gets ``combat.zeroHp.stable``
and wakes up later (CMB-HP0-4; "later" has no duration here)."""

from __future__ import annotations

from dataclasses import dataclass

from ..game import Game
from ..state import State
from .conditions import fight_keys


@dataclass(frozen=True, slots=True)
class AtZero:
    """What 0 meant: the meaning read (``death``/``stable``), the outcome (``dead``/``stable``)
    and the condition it gave (None: the ruleset names none)."""

    meaning: str
    outcome: str
    condition: str | None

    def record(self, who: str) -> dict[str, object]:
        found: dict[str, object] = {"who": who, "meaning": self.meaning,
                                    "outcome": self.outcome}
        if self.condition is not None:
            found["condition"] = self.condition
        return found


def zero_meaning(game: Game, conditions: tuple[str, ...]) -> str | None:
    """CMB-HP0-1, OQ-CMB-15: what 0 means for a hero bearing ``conditions``: ``stable`` if one
    of them says so, else ``death`` if one says so, else the ruleset's ``meaning``."""
    said = {keys.zero_hp for name in conditions
            if (keys := fight_keys(game, name)) is not None and keys.zero_hp is not None}
    if "stable" in said:
        return "stable"
    if "death" in said:
        return "death"
    combat = game.ruleset.combat
    rule = combat.zero_hp if combat is not None else None
    return rule.meaning if rule is not None else None


def at_zero(game: Game, state: State, who: int) -> tuple[State, AtZero | None]:
    """CMB-HP0-2..4: hero ``who`` has just dropped to 0: the state with the condition its
    outcome gives on its sheet, and what happened (None: it is only down)."""
    character = state.characters[who]
    meaning = zero_meaning(game, character.conditions)
    if meaning is None:
        return state, None
    combat = game.ruleset.combat
    rule = combat.zero_hp if combat is not None else None
    died = meaning == "death" and rule is not None and rule.death  # CMB-HP0-3
    condition = (rule.dead if died else rule.stable) if rule is not None else None
    if condition is not None and condition not in character.conditions:
        character = character.model_copy(
            update={"conditions": (*character.conditions, condition)})
        state = state.with_character(who, character)
    return state, AtZero(meaning, "dead" if died else "stable", condition)


DEAD = "dead"  # the condition of a dead hero where combat.zeroHp names none


def dead_condition(game: Game) -> str:
    """The condition a hero that died bears: ``combat.zeroHp.dead``, else ``dead``."""
    combat = game.ruleset.combat
    rule = combat.zero_hp if combat is not None else None
    return rule.dead if rule is not None and rule.dead is not None else DEAD


def is_dead(game: Game, conditions: tuple[str, ...]) -> bool:
    """Whether a hero bears the condition of the dead (:func:`dead_condition`; healing does
    not raise it), whichever rule killed it (CMB-HP0-3, a narrative hero bled out)."""
    return dead_condition(game) in conditions
