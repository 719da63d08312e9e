"""gmtags' rules, on three floors that import only downwards: ``engine.rules`` (state and
the rules on it), ``engine.actions`` (every tag action and host event, declared once, and the
reducer) and ``engine.text`` (what the GM and the player read), over the ruleset models
(``engine.ruleset``) and the dice (``engine.dice``).

Pure: no file, clock, socket or environment access. ``replay`` does the I/O.
"""

from .actions.answers import Answer, answer_attrs, every_answer_attr
from .actions.events import EVENTS, apply_event
from .actions.reply import (
    ACTIONS,
    MAX_REPEATS,
    MAX_TAGS_PER_REPLY,
    VOCABULARY,
    answer_tag,
    apply_reply,
    mark_mid_reply,
    may_stop,
    repeat_refusal,
    repeats,
    same_tag,
)
from .dice import DiceExpr, DiceRoll, Stream, parse_dice, roll
from .rules.context import TurnContext
from .rules.game import CatalogItem, Game, load_ruleset
from .rules.party import PartyError, start_state
from .rules.session import start_session
from .rules.state import Character, Place, Stack, State
from .ruleset import Problem, Ruleset, RulesetError
from .text.host import describe_bag, describe_stack, purse_summary, ruleset_coins, ruleset_items

ENGINE_VERSION = "0.2.0"  # with the answers it gives: snapshots of another version are not reused

__all__ = [
    "ACTIONS",
    "ENGINE_VERSION",
    "EVENTS",
    "MAX_REPEATS",
    "MAX_TAGS_PER_REPLY",
    "VOCABULARY",
    "Answer",
    "CatalogItem",
    "Character",
    "DiceExpr",
    "DiceRoll",
    "Game",
    "PartyError",
    "Place",
    "Problem",
    "Ruleset",
    "RulesetError",
    "Stack",
    "State",
    "Stream",
    "TurnContext",
    "answer_attrs",
    "answer_tag",
    "apply_event",
    "apply_reply",
    "describe_bag",
    "describe_stack",
    "every_answer_attr",
    "load_ruleset",
    "mark_mid_reply",
    "may_stop",
    "parse_dice",
    "purse_summary",
    "repeat_refusal",
    "repeats",
    "roll",
    "ruleset_coins",
    "ruleset_items",
    "same_tag",
    "start_session",
    "start_state",
]
