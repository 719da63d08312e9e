"""``[combat:]`` and ``[attack:]``: the fight's declarations and handlers, one module per job
(joining, arms, conditions, reactions, items used in a fight) and one per kind of combat
(``formula``, ``pool``, ``narrative/``, ``outcome/``), answered through the table of kinds
(``kinds.FIGHT_KINDS``). What the rest of the engine uses of a fight is named here."""

from ...rules.context import TurnContext
from ...rules.game import Game
from ...rules.state import State
from .kinds import kind_of
from .narrative.spoils import loot as shared_loot
from .narrative.spoils import pass_, split, want
from .narrative.use import FIGHT_REASONS as KIND_USE_REASONS
from .narrative.use import FIGHT_RECORD as KIND_USE_RECORD
from .requests import LEGACY_FOES
from .tags import (
    ACTIONS,
    acts_in_round,
    attacker_rank,
    end_of_round,
    teach_fight,
    teach_start,
    uses_in_round,
)


def sharers(game: Game, state: State, ctx: TurnContext) -> tuple[int, ...]:
    """The heroes an earn or a ``[loot:]`` without ``who=`` is shared among in this kind of
    combat (D100-PARTY-10: a narrative victory's), else nobody."""
    return kind_of(game).sharers(game, state, ctx)

__all__ = [
    "ACTIONS",
    "KIND_USE_REASONS",
    "KIND_USE_RECORD",
    "LEGACY_FOES",
    "acts_in_round",
    "attacker_rank",
    "end_of_round",
    "kind_of",
    "pass_",
    "shared_loot",
    "sharers",
    "split",
    "teach_fight",
    "teach_start",
    "uses_in_round",
    "want",
]
