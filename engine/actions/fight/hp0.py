"""A hero dropped to 0 hit points in a fight (CMB-HP0-1..4, CMB-CARD-1 of
docs/rules/combat.md#a12-rule-cards-0-hit-points-and-who-wins):
the ``down:<hero>`` event, and what 0 means for it by its conditions and the world's death
rule (:mod:`engine.rules.zero_hp`) — ``dead:<hero>`` or ``stable:<hero>`` after it, the record's
``zeroHp`` and the words. Every strike that can drop a hero calls :func:`downed`."""

from __future__ import annotations

from typing import Any

from ...rules.fight.conditions import fight_over, label_of
from ...rules.fight.formula import standing
from ...rules.fight.zero_hp import at_zero
from ...rules.game import Game
from ...rules.state import Encounter, State


def downed(game: Game, state: State, hero: int, events: list[str],
           record: dict[str, Any]) -> tuple[State, str]:
    """CMB-CARD-1, CMB-HP0-1..4: hero ``hero`` is at 0: ``down:<hero>`` in ``events``; where a
    condition or the ruleset gives 0 a meaning, the condition it leads to on the sheet,
    ``dead:<hero>`` (CMB-HP0-3) or ``stable:<hero>`` (CMB-HP0-4) in ``events`` and
    ``record["zeroHp"]`` (who, meaning, outcome, condition). Returns the state and the words."""
    name = state.characters[hero].name
    events.append(f"down:{name}")
    state, text = zero_meaning(game, state, hero, events, record)
    return state, f" {name} is down.{text}"


def lost_if_none_stand(game: Game, state: State, encounter: Encounter,
                       events: list[str]) -> tuple[State, str]:
    """docs/design.md#rounds-and-order: when no hero of ``encounter`` stands any longer, the
    fight ends in defeat (``end:defeat`` in ``events``, the fight over). Returns the state and
    the words to add."""
    if any(c.side == "party" and standing(game, state, c) for c in encounter.combatants):
        return state, ""
    events.append("end:defeat")
    return fight_over(state), " The fight is lost."


def zero_meaning(game: Game, state: State, hero: int, events: list[str],
                 record: dict[str, Any]) -> tuple[State, str]:
    """CMB-HP0-1..4 for a hero already told down (its ``down:<hero>`` event written, as a
    narrative blow writes it): what 0 means for it — the condition, ``dead:<hero>`` or
    ``stable:<hero>`` in ``events`` and ``record["zeroHp"]``; the words (empty without a
    meaning)."""
    name = state.characters[hero].name
    text = ""
    state, happened = at_zero(game, state, hero)
    if happened is None:
        return state, text
    events.append(f"{happened.outcome}:{name}")
    record["zeroHp"] = happened.record(name)
    shown = f" ({label_of(game, happened.condition)})" if happened.condition else ""
    if happened.outcome == "dead":
        text += f" {name} dies{shown}."
    else:
        text += f" {name} is stable{shown}: the bleeding stops, and {name} wakes up later."
    return state, text
