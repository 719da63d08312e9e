"""gmtags' rules: ruleset models, state, dice, and one module per capability.

Pure: no file, clock, socket or environment access. ``replay`` does the I/O.
"""

from .answers import Answer, answer_attrs, every_answer_attr
from .apply import HANDLERS, apply_reply
from .context import TurnContext
from .dice import DiceExpr, DiceRoll, Stream, parse_dice, roll
from .game import CatalogItem, Game, load_ruleset
from .host import describe_bag, describe_stack, purse_summary, ruleset_coins, ruleset_items
from .party import PartyError, start_state
from .ruleset import Problem, Ruleset, RulesetError
from .state import Character, Place, Stack, State

ENGINE_VERSION = "0.1.0"

__all__ = [
    "ENGINE_VERSION", "HANDLERS", "Answer", "CatalogItem", "Character", "DiceExpr", "DiceRoll",
    "Game", "PartyError", "Place", "Problem", "Ruleset", "RulesetError", "Stack", "State",
    "Stream", "TurnContext", "answer_attrs", "apply_reply", "describe_bag", "describe_stack",
    "every_answer_attr", "load_ruleset", "parse_dice", "purse_summary", "roll", "ruleset_coins",
    "ruleset_items", "start_state",
]
