"""A sheet ability in an outcome fight (CMB-OUTC-1..3 of
docs/rules/combat.md#a4-outcome-based-combat-position-and-effect with CMB-ABIL-1;
docs/rulesets.md#outcome-based-combat-combatoutcome). ``[attack: who= use= target=
position=]`` by a hero pays the ability's ``cost`` as a formula fight pays it
(:func:`engine.rules.abilities.paid`, all or nothing) and is the hero's one action of the
round: it rolls the same outcome check as an ``[attack:]`` (``combat.outcome.check``), read
both ways, graded by the GM's ``position=`` and by the ability's own effect — its
``mechanics.effect`` word (limited, standard, great; standard without one). An outcome fight
reads no attack roll, damage or save of the ability; one aimed at allies, a reaction or one
granting an action is not an outcome action."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from tagparse import Tag

from ....rules import reasons
from ....rules.abilities import chosen_ability, paid
from ....rules.context import TurnContext
from ....rules.fight.formula import standing
from ....rules.fight.outcome import DEFAULT_EFFECT
from ....rules.game import Game
from ....rules.state import Encounter, State
from ...answers import Answer, accepted, refused
from ...declare import Refusal
from ..encounter import cannot_act, round_of, target_of
from ..victory import ended
from . import combat as outcome

OUTCOME_USE_RECORD = {
    **outcome.OUTCOME_RECORD,
    "target": "the foe aimed at", "rolls": "outcome fights: the check's dice",
    "total": "outcome fights: the check's total", "critical": "outcome fights: the check's "
    "critical, when it has one",
    "hp": "outcome fights: the hero's health after", "hpMax": "outcome fights: the hero's "
    "maximum health", "temporary": "outcome fights: the hero's temporary points after",
    "damage": "outcome fights: the hero's points the harm that came back took",
}
"""The keys an ability's use in an outcome fight records besides ``use``, ``ref``, ``paid``,
``round``, ``attacker``, ``slot`` and ``events`` (an outcome ``[attack:]``'s record)."""


@dataclass(frozen=True)
class _Graded:
    """An ability's use read as an outcome action (:class:`fight_outcome.Graded`)."""

    tag: Tag
    position: str
    effect: str
    weapon: str | None = None


def _no(state: State, tag: Tag, reason: str, text: str) -> tuple[State, Answer]:
    return state, refused(tag, reason, text)


def outcome_cast(game: Game, state: State, tag: Tag, who: str, use: str, target: str,
                 position: str, encounter: Encounter,
                 ctx: TurnContext) -> tuple[State, Answer]:
    """CMB-OUTC-1..3, CMB-ABIL-1: hero ``who`` uses the ability ``use`` on foe ``target`` in
    the outcome fight ``encounter``; a refusal leaves the state unchanged."""
    me = encounter.find(who)
    if me is None:
        return _no(state, tag, reasons.UNKNOWN_COMBATANT, f'{who[:60]} is not in the fight: '
                   f'[combat: op="join" foe="{who[:60]}"] first; nothing was done.')
    caster = encounter.combatants[me]
    if caster.side == "foes":
        return _no(state, tag, reasons.PLAYERS_ROLL, "In an outcome fight only heroes roll: "
                   f"what {caster.name} does comes back through a hero's roll (its "
                   "position=); nothing was done.")
    if not standing(game, state, caster):
        return _no(state, tag, reasons.DOWNED,
                   f"{caster.name} is down and does not act; nothing was done.")
    stopped = cannot_act(game, state, encounter, me)
    if stopped is not None:
        return _no(state, tag, stopped.reason, stopped.text)
    hero = state.character_index(caster.name)
    assert hero is not None
    character = state.characters[hero]
    chosen = chosen_ability(game, character, use)
    if chosen is None:
        return _no(state, tag, reasons.UNKNOWN_ENTRY, f'{caster.name} has no ability called '
                   f'"{use.strip()[:60]}" that a fight can use; nothing was done.')
    ability, label = chosen.ability, chosen.entry.label
    if ability.is_reaction:  # CMB-REACT-5
        return _no(state, tag, reasons.REACTION_ONLY, f"{label} is a reaction: it is used by "
                   "itself when its moment comes, never as one of the turn's actions; "
                   "nothing was done.")
    if ability.for_allies or not ability.aimed:
        return _no(state, tag, reasons.UNSUPPORTED, f"{label} is not aimed at a foe, and an "
                   "outcome fight's action is (its roll says what it achieves against the "
                   "foe and what comes back); nothing was done.")
    if "," in target:
        return _no(state, tag, reasons.TOO_MANY_TARGETS, f"{label} in an outcome fight is "
                   "one action against one foe: name one target; nothing was done.")
    aimed = target_of(game, state, encounter, caster, target.strip())
    if isinstance(aimed, Refusal):
        return _no(state, tag, aimed.reason, aimed.text)
    encounter = round_of(encounter, ctx)
    if outcome.ACTION in encounter.combatants[me].spent:  # before paying anything
        return _no(state, tag, reasons.NO_TIME, f"NO TIME: {caster.name} has acted this "
                   "round; nothing was done.")
    bought = paid(game, state, character, ability)
    if isinstance(bought, str):
        return _no(state, tag, reasons.CANNOT_PAY, f"{caster.name} has no {bought} left to "
                   f"pay for {label}; nothing was done.")
    payer, taken = bought
    effect = ability.effect or DEFAULT_EFFECT
    done = outcome.strike(game, state.with_character(hero, payer),
                          _Graded(tag, position, effect), encounter, ctx, me, aimed)
    if isinstance(done, Refusal):
        return _no(state, tag, done.reason, done.text)
    record: dict[str, Any] = {"use": label, "ref": chosen.ref, **done.record}
    if taken:
        record["paid"] = ", ".join(taken)
    text = f"{caster.name} uses {label}" + (f" ({', '.join(taken)})" if taken else "") + \
        ": " + done.text
    next_state, words = ended(game, done.state, done.ends, encounter, ctx, record)
    text += words
    record["slot"] = ctx.ordinal + 1
    if done.events:
        record["events"] = list(done.events)
    return next_state, accepted(tag, text, record, done.notes)
