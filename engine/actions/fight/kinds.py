"""The kinds of combat: what answers each one's ``[combat:]`` and ``[attack:]`` tags, what the
GM is taught of it, the order of a round's attacks and the work at the end of a round. A
ruleset's kind is read once as it loads (:attr:`engine.rules.game.Game.fight`);
:func:`kind_of` looks its handlers up in :data:`FIGHT_KINDS`, so no other code asks which
kind a fight is."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any

from ...rules.context import TurnContext
from ...rules.game import Game
from ...rules.state import Encounter, State
from ...ruleset.ruleset import FORMULA, NARRATIVE, NONE, OUTCOME, SYMBOLS
from ..answers import Answer
from ..declare import ByRuleset
from ..examples import Party
from . import formula
from .conditions import end_of_round as conditions_end_of_round
from .foes import regenerate_round
from .narrative import combat as narrative
from .narrative import spoils as narrative_spoils
from .narrative.use import narrative_use
from .outcome import combat as outcome
from .outcome.use import outcome_cast
from .requests import End, FormulaStrike, Join, NarrativeStrike, OutcomeStrike, Start, Strike

Teach = Callable[[Game, Party], list[str]]
RoundStep = Callable[[Game, State, State, list[Answer], TurnContext, Callable[[Answer], bool]],
                     tuple[State, list[Answer]]]
"""Work at the end of a reply that was a round: the state before the reply, the state after
its tags and their answers, and which answers acted in the round, to the new state and
answers."""


@dataclass(frozen=True, slots=True)
class FightKind:
    """One kind of combat. ``start`` also gets the foes the request names and the notes so
    far; ``rank`` is where an attacker found at ``found`` in the encounter stands in the
    round's order; ``uses_in_round``: an item used at the other side acts among the round's
    attacks (§13); ``after_round``: this kind's own end-of-round work, before the work every
    kind shares (:data:`AFTER_EVERY_ROUND`); ``use_item`` and ``cast``: the kind's own
    answer to an item used or a sheet ability used while its fight is on, where it has one."""

    name: str
    start: Callable[[Game, State, Start, TurnContext, list[str], list[str]],
                    tuple[State, Answer]]
    join: Callable[[Game, State, Join, TurnContext], tuple[State, Answer]]
    end: Callable[[Game, State, End, TurnContext], tuple[State, Answer]]
    attack: Callable[[Game, State, Any, TurnContext], tuple[State, Answer]]
    teach_start: Teach
    teach_fight: Teach
    rank: Callable[[Encounter, int], int]
    strike: type[Strike]
    """What this kind's ``[attack:]`` reads: ``attack`` gets it, and an attribute it does not
    read is ignored with a note, as any tag's (:mod:`engine.actions.reply`)."""
    uses_in_round: bool = False
    after_round: tuple[RoundStep, ...] = ()
    use_item: Callable[..., tuple[State, Answer, str | None]] | None = None
    cast: Callable[..., tuple[State, Answer]] | None = None
    sharers: Callable[[Game, State, TurnContext], tuple[int, ...]] = lambda *_: ()
    """Who shares an earn or a ``[loot:]`` without ``who=`` (D100-PARTY-10); nobody: the
    ordinary add."""


def _formula_start(game: Game, state: State, request: Start, ctx: TurnContext,
                   named: list[str], notes: list[str]) -> tuple[State, Answer]:
    return formula.start(game, state, request, ctx, named, notes)


def _outcome_start(game: Game, state: State, request: Start, ctx: TurnContext,
                   named: list[str], notes: list[str]) -> tuple[State, Answer]:
    return formula.start(game, state, request, ctx, named, notes, BY_OUTCOME)


def _initiative_order(encounter: Encounter, found: int) -> int:
    """CMB-TURN-3/4/6/14: the place in the initiative order."""
    return found


def _spoils_after(game: Game, before: State, state: State, answers: list[Answer],
                  ctx: TurnContext,
                  in_round: Callable[[Answer], bool]) -> tuple[State, list[Answer]]:
    return narrative_spoils.after_reply(state, ctx), answers  # D100-PARTY-10


BY_OUTCOME = formula.Turns(OUTCOME, outcome.harmed, outcome.joined)
"""CMB-OUTC-4: an outcome fight's foes join measured in harm levels."""

_FORMULA = FightKind(FORMULA, _formula_start, formula.join, formula.end, formula.attack,
                     formula.teach_start, formula.teach_fight, _initiative_order,
                     strike=FormulaStrike, uses_in_round=True)
FIGHT_KINDS: dict[str, FightKind] = {
    FORMULA: _FORMULA,
    # CHK-SYM-35: a symbol-pool ruleset with combat.attack fights as formula combat does (its
    # items used in a fight are answered as out of one); without it every fight tag is refused
    SYMBOLS: FightKind(SYMBOLS, _formula_start, formula.join, formula.end, formula.attack,
                       formula.teach_start, formula.teach_fight, _initiative_order,
                       strike=FormulaStrike),
    OUTCOME: FightKind(OUTCOME, _outcome_start, partial(formula.join, turns=BY_OUTCOME),
                       formula.end, outcome.attack, formula.teach_start, outcome.teach_fight,
                       outcome.rank, strike=OutcomeStrike, cast=outcome_cast),
    NARRATIVE: FightKind(NARRATIVE, narrative.start_tag, narrative.join_tag,
                         partial(formula.end, on=narrative.fight_on,
                                 spoils=narrative_spoils.won),
                         narrative.attack, narrative.teach_start, narrative.teach_fight,
                         narrative.rank, strike=NarrativeStrike,
                         after_round=(narrative.land, narrative.bleed, _spoils_after),
                         use_item=narrative_use, sharers=narrative_spoils.sharers),
    # "kind": "none": formula combat's handlers refuse every fight tag no-combat
    NONE: FightKind(NONE, _formula_start, formula.join, formula.end, formula.attack,
                    formula.teach_start, formula.teach_fight, _initiative_order,
                    strike=FormulaStrike),
}

AFTER_EVERY_ROUND: tuple[RoundStep, ...] = (conditions_end_of_round, regenerate_round)
"""The end-of-round work of every kind, in order: conditions count down and are saved
against (CMB-COND-3..6), then foes regenerate (CMB-ABIL-7)."""


STRIKES = ByRuleset(lambda game: game.fight.kind,
                    {name: kind.strike for name, kind in FIGHT_KINDS.items()})
"""What ``[attack:]`` reads under each kind of combat (:attr:`FightKind.strike`)."""


def kind_of(game: Game) -> FightKind:
    """The kind of combat ``game``'s ruleset fights with."""
    return FIGHT_KINDS[game.fight.kind]
