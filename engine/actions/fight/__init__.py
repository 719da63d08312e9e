"""``[combat:]`` and ``[attack:]``: the fight's declarations and handlers, one module per job
(joining, arms, conditions, reactions, items used in a fight) and one per kind of combat
(``formula``, ``pool``, ``narrative/``, ``outcome/``), answered through the table of kinds
(``kinds.FIGHT_KINDS``). What the rest of the engine uses of a fight is named here."""

from .abilities import cast
from .conditions import condition
from .kinds import kind_of
from .leave import leave
from .narrative.combat import defend
from .requests import LEGACY_FOES
from .tags import (
    attack,
    attacker_rank,
    end,
    end_of_round,
    join,
    phase,
    start,
    teach_fight,
    teach_start,
    uses_in_round,
)
from .weapons import reload

ACTIONS = (start, join, end, attack, cast, condition, reload, defend, leave)
"""The fight's declared actions, in the order the GM is taught them."""

__all__ = [
    "ACTIONS", "LEGACY_FOES", "attacker_rank", "end_of_round", "kind_of", "phase",
    "teach_fight", "teach_start", "uses_in_round",
]
