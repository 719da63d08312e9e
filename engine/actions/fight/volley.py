"""A weapon's mode aimed at several foes (ITM-MODE-6, with ITM-MODE-3):
``[attack: who="Ada" with="Hunting bow" mode="volley" target="Goblin 1, Goblin 2"]``.

One attack, its budget spent once and its mode's ``ammo`` shot once, with its own attack roll
against each target (up to the mode's ``targets``), each made exactly as a single strike is
(:func:`engine.actions.fight.formula.hero_strike`: the mode's ``toHit``, the conditions' edges,
typed damage, ``onHit``); the further rolls are counted in the attacker's ``spent`` as ``volley``,
which no turn action counts, so that each has dice of its own (docs/design.md#combat-dice). The
answer's record is the first target's strike, with ``volley``: the strikes on the others."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ...rules import reasons
from ...rules.state import Encounter, State
from ..answers import Answer, accepted
from ..declare import Refusal
from .encounter import target_names

VOLLEY = "volley"  # what a further roll of a several-target mode counts as in ``spent``


def named_targets(written: str) -> list[str]:
    """``target=`` as comma-separated names, each once (the first is the strike's own)."""
    return target_names(written) or [written]


def too_many(weapon: str, most: int, named: int) -> Refusal:
    return Refusal(reasons.TOO_MANY_TARGETS, f"{weapon} is aimed at {most} foe"
                   f"{'s' if most != 1 else ''} at most this way, not {named}: name a mode "
                   "with more targets, or one foe; nothing was done.")


def volley(state: State, encounter: Encounter, request: Any, others: list[int],
           one_strike: Callable[[State, Encounter, int, bool], tuple[State, Answer]],
           first: int) -> tuple[State, Answer]:
    """ITM-MODE-6: the strike on ``first`` as it is (its budget and shots), then one on each of
    ``others`` that spends and shoots nothing more (``one_strike(state, encounter, target,
    free)``); stops when the fight ended. The answer: the first strike's record with
    ``volley`` (the others' records) and every strike's events."""
    names = [encounter.combatants[i].name for i in others]
    state, answer = one_strike(state, encounter, first, False)
    if not answer.ok:  # refused: the very state it was given
        return state, answer
    record = dict(answer.record)
    events = list(record.get("events", []))
    texts = [answer.text]
    rows: list[dict[str, Any]] = []
    for name in names:
        now = state.encounter
        index = now.find(name) if now is not None else None
        if now is None or index is None or not now.combatants[index].hp:
            break  # the fight is over, or the foe fell to an earlier roll of this attack
        state, more = one_strike(state, now, index, True)
        if not more.ok:
            break
        row = {k: v for k, v in more.record.items() if k not in ("slot", "events")}
        events += more.record.get("events", [])
        rows.append(row)
        texts.append(more.text)
    if rows:
        record["volley"] = rows
    if events:
        record["events"] = events
    return state, accepted(request.tag, " ".join(texts), record, answer.notes)
