"""``[combat:]`` start, join and end and ``[attack:]``, declared once for every kind of combat
and answered by the ruleset's kind (:func:`engine.actions.fight.kinds.kind_of`); the order of
a reply's fight tags and the work at the end of a round."""

from __future__ import annotations

from collections.abc import Sequence

from tagparse import Tag

from ...rules import reasons
from ...rules.context import TurnContext
from ...rules.game import Game
from ...rules.names import meant_fighter
from ...rules.state import State
from ..answers import Answer, refused
from ..declare import FIRST, LAST, ROUND, action
from ..examples import Party
from . import check_kinds as other_kinds
from .abilities import cast
from .conditions import condition
from .kinds import AFTER_EVERY_ROUND, STRIKES, kind_of
from .leave import leave
from .narrative import combat as narrative
from .narrative.combat import defend
from .outcome import combat as outcome
from .requests import (
    NAME_THE_FOE,
    End,
    Join,
    Start,
    Strike,
    foes_named,
)
from .weapons import reload

ATTACK_RECORD = {
    "round": "the encounter's round", "slot": "the attack's place (1-based) in the round's "
    "order among the reply's attacks (initiative order, CMB-TURN-14)",
    "attacker": "who attacked", "target": "who was attacked",
    "weapon": "a hero's weapon, or unarmed", "budget": "the turn action a hero spent",
    "range": "near or far (a hero's attack)", "rolls": "the attack dice",
    "modifier": "what was added to them: a weapon's toHit, a foe's template attack",
    "total": "dice and modifier", "defence": "the target's defence",
    "result": "hit, miss or critical", "damage": "the damage dealt (0 on a miss)",
    "damageRolls": "the damage dice, per dice term", "damageType": "the weapon's damage type",
    "hp": "the target's hit points after (a hero's: its health pool or track)",
    "hpMax": "the target's most hit points",
    "temporary": "a hero's temporary points left after the strike (they go first, ITM-OUT-4)",
    "events": "damage:<target>:<points> (dealt and taken), down:<hero>, dead:<hero>, "
              "stable:<hero>, felled:<foe>, end:victory, end:defeat (CMB-CARD-1, CMB-HP0-3/4); "
              "outcome fights: harm:<foe>:<levels>",
    "zeroHp": "a foe's strike that dropped a hero to 0 where 0 has a meaning (CMB-HP0-1..4): "
              "who, meaning (death, stable), outcome (dead, stable), condition (it got)",
    "loot": "a won fight's drops: each felled foe's loot table, its dice and where each drop "
            "went (ITM-LOOT-12/14)",
    "affectedBy": "what affected the attack (CMB-MOD-2): the conditions of attacker and "
                  'target, read before its dice ("Prone (near): advantage"), and the '
                  "target's typed defences that changed the damage (ITM-DEF-4..8)",
    "mode": "the weapon's mode the attack was made in (ITM-MODE-2)",
    "volley": "a mode aimed at several foes (ITM-MODE-6): the strike on each further target, "
              "each with these fields (its own roll; the ammunition shot once, above)",
    "ammo": "what the attack shot (ITM-AMMO-3, ITM-CLIP-4): shot, left (still carried, or "
            "loaded with a clip), of (the clip's size), usedUp (stacks taken to 0)",
    "floor": "the weapon's floor the damage was raised to (ITM-FLOOR-2)",
    "plus": "each further amount dealt (ITM-PLUS-1..8): damage, damageRolls, damageType, "
            "save, affectedBy, dealt",
    "onHit": "each condition the hit put on the target (ITM-ONHIT-1..6): condition, rounds, "
             "saveEnds, save, immune",
    "recovered": "a won fight: what each hero picked up per stack (ITM-AMMO-5/6): who, item, "
                 "shot, recovered",
    "reaction": "a foe's strike: the struck hero's standing reaction to being hit "
                "(CMB-REACT-1..7): who, use, ref, on, paid, added (defence), defence (after), "
                "before (the result it was), threshold (roll-against: the number now read "
                "against), setbackAdded (symbol-pool: the added setback dice's faces)",
    "sustain": "a foe's strike that damaged a hero sustaining an ability (CMB-SUS-4..7): "
               "use, save, dc, rolls, total, saved; ended, why (failed, downed), removed",
    "roundEnd": "the round's last attack: each condition saved against or counted down at the "
                "end of the round (CMB-COND-3..6): who, condition, rounds (left), save, dc, "
                "rolls, total, saved, ended",
    **outcome.OUTCOME_RECORD,  # an outcome fight's action (CMB-OUTC-1..4)
    # a dice-pool fight (engine/actions/fight/pool.py)
    "dice": "a pool fight: the dice the strike rolled (ITM-MODE-4, ITM-ARM-3)",
    "threshold": "a pool fight: the per-die target (ITM-WPN-11, ITM-MODE-5)",
    "successes": "a pool fight: the successes counted (also total), against defence",
    "reduction": "a pool fight: the target's damage reduction taken off (ITM-FLOOR-2)",
    "hardness": "a spending-style strike below the target's hardness: it did nothing "
                "(ITM-HARD-2)",
    "initiative": "a taking-style hit: both initiative numbers after it (the event "
                  "initiative:<attacker> goes with it); a spending strike that threw its "
                  "number: the attacker's number after it (its base)",
    "number": "a spending-style strike with combat.pool.gain that landed: the attacker's "
              "number it threw (its damage before reduction, ITM-FLOOR-3)",
    "regenerated": "the round's last attack: each foe that regenerated, or was stopped "
                   "(CMB-ABIL-7): who, amount, hp, stoppedBy",
    **other_kinds.RECORD,  # roll-against and symbol-pool attacks
}


JOIN_RECORD = {"round": "the encounter's round (0 before the first attack)",
               "order": "every combatant in initiative order: name, side, initiative, and "
                        "rolls (the initiative dice of those who joined now)",
               "foes": "each new foe's numbers: name, hp, hpMax, defence, attack, damage, "
                       "role, tier (outcome fights: name, harm, role, tier)",
               "events": "start, when this begins the fight (CMB-CARD-1)"}


def teach_start(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: out of a fight the GM learns only how to start one; the lines
    of a fight come with the COMBAT block while one is on (:func:`teach_fight`)."""
    return kind_of(game).teach_start(game, party)


def teach_fight(game: Game, party: Party) -> list[str]:
    """docs/design.md#combat-prompt: the GM's combat lines, shown under the COMBAT block while a
    fight is on."""
    return kind_of(game).teach_fight(game, party)


@action("combat", "start", Start, reasons=(reasons.MISSING_ATTRIBUTE, reasons.NO_COMBAT,
                                           reasons.UNSUPPORTED),
        teach=teach_start, record=JOIN_RECORD, phase=FIRST)
def start(game: Game, state: State, request: Start, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="start" foe= role= tier= count=]`` (CMB-TPL-1..8, CMB-TURN-2..4)."""
    notes: list[str] = []
    named = foes_named(request, notes)
    if not named:
        return state, refused(request.tag, reasons.MISSING_ATTRIBUTE, NAME_THE_FOE)
    return kind_of(game).start(game, state, request, ctx, named, notes)


@action("combat", "join", Join, reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED,
                                         reasons.NO_ENCOUNTER), record=JOIN_RECORD,
        phase=FIRST)
def join(game: Game, state: State, request: Join, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="join" foe= role= tier= count=]`` (CMB-TURN-5, CMB-TURN-A1)."""
    return kind_of(game).join(game, state, request, ctx)


@action("combat", "end", End, reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED,
                                       reasons.NO_ENCOUNTER, reasons.UNKNOWN_OUTCOME),
        record={"outcome": "victory, defeat, fled or truce", "rounds": "the rounds fought",
                "loot": "victory: each felled foe's loot table, its dice and where each drop "
                        "went (ITM-LOOT-12/14); fled, truce and defeat drop nothing",
                **narrative.XP_RECORD,
                "events": "end:<outcome> (CMB-CARD-1)"}, phase=LAST)
def end(game: Game, state: State, request: End, ctx: TurnContext) -> tuple[State, Answer]:
    """``[combat: op="end" outcome=]``: the encounter is over (state.encounter is None); a
    victory drops the felled foes' loot (ITM-LOOT-12), nothing else does."""
    return kind_of(game).end(game, state, request, ctx)


@action("attack", None, Strike, record={**ATTACK_RECORD, **narrative.ATTACK_RECORD},
        reasons=(reasons.NO_COMBAT, reasons.UNSUPPORTED, reasons.NO_ENCOUNTER,
                 reasons.UNKNOWN_COMBATANT, reasons.DOWNED, reasons.TARGET_DOWN,
                 reasons.UNKNOWN_WEAPON, reasons.NOT_WORN, reasons.UNKNOWN_BUDGET,
                 reasons.CANNOT_ACT, reasons.NO_TIME, reasons.OUT_OF_REACH,
                 reasons.MISSING_ATTRIBUTE, reasons.UNKNOWN_MODE, reasons.NO_AMMO,
                 reasons.NOT_LOADED, reasons.PLAYERS_ROLL, reasons.TOO_MANY_TARGETS,
                 *narrative.ATTACK_REASONS), phase=ROUND, by_ruleset=STRIKES)
def attack(game: Game, state: State, request: Strike, ctx: TurnContext) -> tuple[State, Answer]:
    """``[attack: who= target= ...]``: one strike, of a hero on a foe or of a foe on a hero
    (CMB-ATK-A1..A7, CMB-ATK-7; narrative fights D100-ATK-A1..A8), read into the kind's own
    request (:data:`engine.actions.fight.kinds.STRIKES`)."""
    return kind_of(game).attack(game, state, request, ctx)


# --- the order of a reply's fight tags and the end of its round -----------------------------


def attacker_rank(game: Game, state: State, tag: Tag) -> int:
    """CMB-TURN-3/4/6/14, OQ-CMB-7 a/b: where an ``[attack:]``'s attacker stands in the
    round's order (formula combat: the initiative order, highest first, a hero before a foe on
    a tie, then join order), so a reply's attacks land in that order; an attacker not in the
    fight comes after everyone (its attack is refused)."""
    encounter = state.encounter
    if encounter is None:
        return 0
    written = meant_fighter(state, (tag.get("who") or "").strip())
    hero = state.character_index(written or None)
    found = encounter.find(state.characters[hero].name if hero is not None else written)
    if found is None:
        return len(encounter.combatants)
    return kind_of(game).rank(encounter, found)


def uses_in_round(game: Game, state: State) -> bool:
    """Whether an item used now may act in the round, among the attacks (§13): in a fight on
    of a kind whose uses do."""
    return state.encounter is not None and kind_of(game).uses_in_round


ACTIONS = (start, join, end, attack, cast, condition, reload, defend, leave)
"""The fight's declared actions, in the order the GM is taught them."""

ROUND_OPS = frozenset(a.name for a in ACTIONS if a.kind == "combat" and a.phase == ROUND)
"""The ``[combat:]`` ops declared to act in the round like a strike (a reload, leaving)."""


def acts_in_round(answer: Answer) -> bool:
    """Whether an answer acted in a fight's round — what makes a reply a round, at whose end
    conditions count down (CMB-COND-3..6) and foes regenerate (CMB-ABIL-7): an answered
    ``[attack:]`` (a strike, an ability used), a ``[combat:]`` op declared ``phase="round"``
    (a reload, leaving: ITM-CLIP-5), or an item used in the fight that spent a turn action
    (§13: it acts among the attacks). A kind may count more acts for its own end-of-round
    work (a narrative defence or item use, D100-PARTY-3/7)."""
    if not answer.ok:
        return False
    tag = answer.tag
    if tag.kind == "attack":
        return True
    if tag.kind == "combat":
        return tag.attrs.get("op", "").strip().lower() in ROUND_OPS
    return tag.kind == "inventory" and answer.record.get("budget") is not None


def end_of_round(game: Game, before: State, state: State, answers: Sequence[Answer],
                 ctx: TurnContext) -> tuple[State, list[Answer]]:
    """After a reply's tags: the kind's own end-of-round work, then every kind's, in order
    (:data:`engine.actions.fight.kinds.AFTER_EVERY_ROUND`)."""
    told = list(answers)
    for step in (*kind_of(game).after_round, *AFTER_EVERY_ROUND):
        state, told = step(game, before, state, told, ctx, acts_in_round)
    return state, told
