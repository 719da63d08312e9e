"""gmtags' rules: ruleset models, state, dice, and one module per capability.

Pure: no file, clock, socket or environment access. ``replay`` does the I/O.
"""

from .actions.answers import Answer, answer_attrs, every_answer_attr
from .actions.host import describe_bag, describe_stack, purse_summary, ruleset_coins, ruleset_items
from .actions.reply import ACTIONS, apply_reply
from .dice import DiceExpr, DiceRoll, Stream, parse_dice, roll
from .party import PartyError, start_state
from .rules.context import TurnContext
from .rules.game import CatalogItem, Game, load_ruleset
from .rules.state import Character, Place, Stack, State
from .ruleset import Problem, Ruleset, RulesetError

ENGINE_VERSION = "0.1.0"

__all__ = [
    "ACTIONS", "ENGINE_VERSION", "Answer", "CatalogItem", "Character", "DiceExpr", "DiceRoll",
    "Game", "PartyError", "Place", "Problem", "Ruleset", "RulesetError", "Stack", "State",
    "Stream", "TurnContext", "answer_attrs", "apply_reply", "describe_bag", "describe_stack",
    "every_answer_attr", "load_ruleset", "parse_dice", "purse_summary", "roll", "ruleset_coins",
    "ruleset_items", "start_state",
]
