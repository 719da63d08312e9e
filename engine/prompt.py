"""What the GM is told before it writes its next reply: instructions for the commands this
ruleset has, and the state blocks (INVENTORY, ...) read from the state at that moment."""

from __future__ import annotations

from collections.abc import Sequence

from .answers import Answer
from .game import Game
from .money import purse_line
from .state import State


def instructions(game: Game) -> str:
    """The GM instructions: only the commands this ruleset answers (ITM-MONEY-10)."""
    lines = [
        "You are the game master. When the party's possessions change, write a tag in your "
        "reply; gmtags answers it with the rules and the dice. Never invent results.",
        '- Add: [inventory: action="add" item="<name>" count="<n>" who="<character>"]',
        '- Remove: [inventory: action="remove" item="<name>" count="<n>" who="<character>"]',
    ]
    if game.coins:
        coins = ", ".join(info.coin.label for info in game.coins.values())
        lines += [
            '- Pay: [inventory: action="pay" amount="<n> <coin>" who="<character>"]',
            '- Earn: [inventory: action="earn" amount="<n> <coin>" who="<character>"]',
            f"  Coins: {coins}.",
        ]
    if game.ruleset.items is not None and not game.ruleset.items.native:
        lines.append("- Only items of this ruleset (or more of something already held) can be "
                     "added.")  # ITM-FREE-5
    return "\n".join(lines)


def inventory_block(game: Game, state: State) -> str:
    """The INVENTORY block: every bag (the player's always listed), stacks and purse."""
    lines = ["INVENTORY"]
    for character in state.characters:
        lines.append(f"{character.name} ({purse_line(game, character, state)}):")
        for stack in character.bag:
            if stack.coin is not None:
                continue
            marks = " (equipped)" if stack.equipped else ""
            lines.append(f"- {stack.name} ×{stack.count}{marks}")
        if not any(s.coin is None for s in character.bag):
            lines.append("- nothing")
    return "\n".join(lines)


def last_answers_block(answers: Sequence[Answer]) -> str:
    """What the engine answered to the tags of the GM's previous reply."""
    if not answers:
        return ""
    lines = ["LAST ANSWERS"]
    for answer in answers:
        status = "ok" if answer.ok else f"refused ({answer.reason})"
        lines.append(f"- [{answer.tag.kind}] {status}: {answer.text}")
    return "\n".join(lines)


def gm_context(game: Game, state: State, last_answers: Sequence[Answer] = ()) -> str:
    """The whole GM section for the next prompt, blocks separated by blank lines."""
    blocks = [instructions(game), inventory_block(game, state), last_answers_block(last_answers)]
    return "\n\n".join(block for block in blocks if block)
