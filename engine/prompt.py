"""What the GM is told before it writes its next reply: instructions for the commands this
ruleset has, and the state blocks (INVENTORY, ...) read from the state at that moment."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from . import invent, use
from .answers import Answer
from .bags import item_of
from .carry import load, thresholds, weight_text
from .game import Game
from .gear import binding_max, slots_in_use
from .market import market_block, market_instructions
from .money import cost_text, purse_line
from .ruleset import Item
from .sheet import effect_part
from .state import Character, Stack, State


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
    lines += [
        '- Set a count: [inventory: action="set" item="<name>" count="<n>" who="<character>"]',
        '- Give: [inventory: action="give" item="<name>" count="<n>" who="<giver>" '
        'to="<taker>"]',
    ]
    block = game.ruleset.items
    if block is not None and block.slots:  # ITM-CMD-1, ITM-CMD-3
        lines += ['- Equip: [inventory: action="equip" item="<name>" who="<character>"]',
                  '- Unequip: [inventory: action="unequip" item="<name>" who="<character>"]']
    if block is not None and block.binding is not None:  # ITM-CMD-2, ITM-CMD-3
        lines += [f'- Bind ({block.binding.label}): [inventory: action="bind" item="<name>" '
                  'who="<character>"]',
                  '- Unbind: [inventory: action="unbind" item="<name>" who="<character>"] '
                  "(this also ends a curse)"]
    if block is not None and block.carry is not None:  # ITM-CARRY-5..8
        lines.append("  Without who=, what arrives goes to whoever can carry it; what nobody can "
                     "carry stays behind.")
    if block is not None and not block.native:
        lines.append("- Only items of this ruleset (or more of something already held) can be "
                     "added.")  # ITM-FREE-5
    if block is not None and block.loot_tables:  # ITM-LOOT-19
        tables = ", ".join(f'"{t.id}" ({t.label})' for t in block.loot_tables)
        lines += ['- Loot: [loot: table="<table>" who="<character>"] (without who=, the party '
                  "shares it out).", f"  Tables: {tables}."]
    lines += invent.instructions(game)  # ITM-PROP-1..3, ITM-WPN-26
    lines += _check_lines(game)
    market = market_instructions(game)
    if market:
        lines.append(market)
    return "\n".join(lines)


def _check_lines(game: Game) -> list[str]:
    """How to ask for a check, naming the ruleset's skills and saves (checks.md Appendix A)."""
    if game.ruleset.resolution is None:
        return []
    sheet = game.ruleset.sheet
    lines = ['- Check: [skill_check: skill="<skill>" dc="<difficulty>" who="<character>"] '
             '(or save="<save>" / ability="<ability>" instead of skill=).']
    if sheet.skills:
        lines.append("  Skills: " + ", ".join(s.label for s in sheet.skills) + ".")
    if sheet.saves:
        lines.append("  Saves: " + ", ".join(s.label for s in sheet.saves) + ".")
    # ITM-CHK-10: the engine applies conditions and items itself; the GM must not add them.
    lines.append("  gmtags rolls the dice and applies conditions, worn and carried items "
                 "itself: never add those modifiers yourself, never write the result.")
    return lines


def _signed(number: Any) -> str:
    return f"+{number}" if isinstance(number, int | float) and number >= 0 else str(number)


def _labels(game: Game, kind: str, ids: Sequence[str] | None) -> str:
    sheet = game.ruleset.sheet
    rows = sheet.skills if kind == "skills" else sheet.saves
    names = {row.id: row.label for row in rows}
    return ", ".join(names.get(i, i) for i in ids or ())


def effect_text(game: Game, part: Mapping[str, Any]) -> str:
    """What a ``worn``/``carried`` part does to checks, in the GM's words (ITM-SHOW-4):
    ``-1 on checks (Sneak)``."""
    phrases: list[str] = []
    for modifier in part.get("modifiers") or ():
        if not isinstance(modifier, Mapping):
            continue
        amount = modifier.get("mode")
        if modifier.get("flat") is not None:
            amount = _signed(modifier["flat"])
        elif modifier.get("dice"):
            amount = ("-" if modifier.get("minus") else "+") + str(modifier["dice"])
        scope = _labels(game, "skills", modifier.get("skills") or part.get("skills"))
        scope = scope or _labels(game, "saves", modifier.get("saves") or part.get("saves"))
        phrases.append(f"{amount} on {modifier.get('to', 'checks')}"
                       + (f" ({scope})" if scope else ""))
    for effect in part.get("effects") or ():
        words = str(effect).replace("own-", "").split("-")
        phrases.append(f"{words[-1]} on {' '.join(words[:-1])}")
    for save in part.get("failsSaves") or ():
        phrases.append(f"fails {_labels(game, 'saves', [save])} saves")
    abilities = {row.id: row.label for row in game.ruleset.sheet.abilities}
    for ability, change in (part.get("abilities") or {}).items():
        if isinstance(change, Mapping) and change.get("set") is not None:
            phrases.append(f"{abilities.get(ability, ability)} at least {change['set']}")
        elif isinstance(change, Mapping) and change.get("add") is not None:
            phrases.append(f"{_signed(change['add'])} {abilities.get(ability, ability)}")
    return "; ".join(phrases)


def item_line(game: Game, name: str, item: Item) -> str:
    """ITM-SHOW-3: ``Hand axe [Weapon, Common, Thrown; Damage 1d6, Reach close]`` — labels,
    then the explicit stats the GM may see (ITM-BLOCK-11, OQ-10)."""
    block = game.ruleset.items
    if block is None:
        return name
    categories = {c.id: c.label for c in block.categories}
    rarities = {r.id: r.label for r in block.rarities}
    tags = {t.id: t.label for t in block.tags}
    head = [categories.get(item.category, item.category)]
    if item.rarity is not None:
        head.append(rarities.get(item.rarity, item.rarity))
    head += [tags.get(t, t) for t in item.tags]
    stats = [f"{stat.label} {_stat_value(item.stats[stat.id])}" for stat in block.stats
             if stat.id in item.stats and stat.prompt_visible]
    return f"{name} [{', '.join(head)}{'; ' + ', '.join(stats) if stats else ''}]"


def _stat_value(value: object) -> str:
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _charges_left(item: Item, stack: Stack) -> str | None:
    """ITM-RCHG-7: ``2 of 3 charges left`` (a stack that never spent one is full; ``max``
    may be read from an item stat, ITM-CHG-3)."""
    most = use.charges_max(item)
    left = use.charges_left(item, stack)
    if most is None or left is None:
        return None
    return f"{left} of {most} charges left"


def stack_line(game: Game, state: State, stack: Stack) -> str:
    """One stack as the GM sees it: the item line, count, what it does, charges, cost."""
    item = item_of(game, state, stack.item)
    if item is None:
        return f"- {stack.name} ×{stack.count}"
    shown = item_of(game, state, stack.shows_as) if stack.shows_as is not None else None
    parts = [f"- {item_line(game, stack.name, shown or item)} ×{stack.count}"]
    marks = [word for word, on in (("equipped", stack.equipped), ("bound", stack.bound),
                                   ("on", stack.toggled)) if on]
    extras = [", ".join(marks)] if marks else []
    if shown is not None:  # ITM-FAKE-10: the truth, and the name to keep using
        entry = game.items.get(stack.item or "")
        really = entry.label if entry is not None else stack.item
        extras.append(f"FAKE: really {really}; keep calling it {stack.name}")
    if stack.suspected_by:  # ITM-INSP-4
        extras.append(" and ".join(stack.suspected_by)
                      + (" thinks" if len(stack.suspected_by) == 1 else " think")
                      + " it's a fake")
    for which in ("worn", "carried"):  # ITM-SHOW-4
        text = effect_text(game, effect_part(item, which))
        if text:
            extras.append(f"{which}: {text}")
    charges = _charges_left(item, stack)
    if charges:
        extras.append(charges)
    if item.cost is not None and item.cost.unit in game.coins:  # ITM-MONEY-7
        extras.append(cost_text(game, item.cost))
    return parts[0] + (f" ({'; '.join(extras)})" if extras else "")


def bearer_lines(game: Game, state: State, character: Character) -> list[str]:
    """ITM-CMD-4: a character's load, slots in use and bound items."""
    block = game.ruleset.items
    lines: list[str] = []
    if block is None:
        return lines
    if block.carry is not None:  # ITM-CARRY-2/3, ITM-BLOCK-20
        above, limit = thresholds(game, character)
        carried = load(game, state, character)
        text = f"  load {weight_text(game, carried)}"
        if above is not None:
            text += f", encumbered above {weight_text(game, above)}"
        if limit is not None:
            text += f", limit {weight_text(game, limit)}"
        if above is not None and carried > above:
            text += " (encumbered)"
        lines.append(text)
    if block.slots:  # ITM-SLOT-3
        used = slots_in_use(game, state, character)
        lines.append("  slots: " + ", ".join(f"{s.label} {used.get(s.id, 0)}/{s.count}"
                                             for s in block.slots))
    if block.binding is not None:  # ITM-BIND-1
        bound = [s.name for s in character.bag if s.bound]
        lines.append(f"  {block.binding.label}: {len(bound)} of {binding_max(game, character)}"
                     + (f" ({', '.join(bound)})" if bound else ""))
    return lines


def inventory_block(game: Game, state: State) -> str:
    """The INVENTORY block: every bag (the player's always listed), stacks and purse."""
    lines = ["INVENTORY"]
    for character in state.characters:
        lines.append(f"{character.name} ({purse_line(game, character, state)}):")
        lines += bearer_lines(game, state, character)
        lines += [stack_line(game, state, s) for s in character.bag if s.coin is None]
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
    blocks = [instructions(game), inventory_block(game, state), market_block(game, state),
              last_answers_block(last_answers)]
    return "\n\n".join(block for block in blocks if block)
