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
from .memo import IdentityMemo, reuse_ends, shared_ends
from .money import cost_text, purse_line
from .ruleset import Item, ValueRef
from .ruleset.combat import Amount, StatRead
from .sheet import effect_part
from .state import Character, Stack, State
from .tracks import penalty_for, track_max, track_value


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
    wounds = "wound penalties, " if any(t.penalties for t in game.ruleset.live.tracks) else ""
    lines.append(f"  gmtags rolls the dice and applies {wounds}conditions, worn and carried "
                 "items itself: never add those modifiers yourself, never write the result.")
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
    stats = [f"{stat.label} {stat_text(item.stats[stat.id])}" for stat in block.stats
             if stat.id in item.stats and stat.prompt_visible]
    return f"{name} [{', '.join(head)}{'; ' + ', '.join(stats) if stats else ''}]"


def stat_text(value: object) -> str:
    """A stat value as it is shown: ``yes``/``no``, ``2`` for 2.0, else as written."""
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def stat_value(game: Game, item: Item, stat_id: str) -> Any:
    """OQ-3: an item's effective value for a stat: its own, else the stat's ``default``."""
    if stat_id in item.stats:
        return item.stats[stat_id]
    block = game.ruleset.items
    declared = next((s for s in block.stats if s.id == stat_id), None) if block else None
    return declared.default if declared is not None else None


def _read(game: Game, item: Item, value: Any) -> Any:
    """ITM-WPN-21: a value written out, or one of the item's own stats (OQ-3)."""
    return stat_value(game, item, value.stat) if isinstance(value, StatRead) else value


def _combat(game: Game, key: str) -> Mapping[str, Any]:
    found = (game.ruleset.combat or {}).get(key)
    return found if isinstance(found, Mapping) else {}


def _budget(game: Game, budget: str | None) -> str:
    """A budget by its label in ``combat.economy.budgets`` (``act`` is ``Action``)."""
    rows = _combat(game, "economy").get("budgets") or ()
    return next((str(r.get("label")) for r in rows if isinstance(r, Mapping)
                 and r.get("id") == budget and r.get("label")), str(budget))


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _distance(game: Game, *numbers: Any) -> str:
    """ITM-WPN-16: ``10 to 20 paces`` in the combat block's distance unit."""
    unit = _combat(game, "distance").get("unit")
    text = " to ".join(_number(n) for n in numbers)
    return f"{text} {unit}" if unit else text


def _abilities(game: Game, item: Item, value: Any) -> str:
    """ITM-WPN-6/22: ability ids (or an enum stat of them) by their labels; the best counts."""
    read = _read(game, item, value)
    ids = [read] if isinstance(read, str) else list(read or ())
    labels = {row.id: row.label for row in game.ruleset.sheet.abilities}
    return " or ".join(labels.get(str(i), str(i)) for i in ids)


def _sheet_name(game: Game, ref: ValueRef) -> str:
    """ITM-WPN-10: a sheet bonus by its name on the sheet."""
    sheet = game.ruleset.sheet
    rows: dict[str, Sequence[Any]] = {"derived": sheet.derived, "field": sheet.fields,
                                      "ability_score": sheet.abilities,
                                      "ability_mod": sheet.abilities}
    wanted = getattr(ref, ref.kind)
    return next((str(r.label) for r in rows.get(ref.kind, ()) if r.id == wanted), str(wanted))


def _amount(amount: Amount) -> str:
    """``1d4 + 1``: the dice, then the flat number."""
    text = amount.dice or ""
    if amount.flat:
        sign = "-" if amount.flat < 0 else "+"
        text = f"{text} {sign} {abs(amount.flat)}" if text else str(amount.flat)
    return text or "0"


def weapon_text(game: Game, item: Item) -> tuple[str, str, list[str]] | None:
    """What a weapon does (ITM-SHOW-6, ITM-WPN-31): (budget label, ``Brawn to hit, 1d6 +
    Brawn cut``, [``reach 2 paces``, ``range 10 to 20 paces``, ``1d8 with a hand free``,
    ``at 6``]); None for an item without ``attack``."""
    attack = item.attack
    if attack is None:
        return None
    core: list[str] = []
    hit = attack.to_hit
    if hit is not None:
        words = _abilities(game, item, hit.abilities) if hit.abilities is not None else ""
        skill = _read(game, item, hit.skill)
        if skill:
            labels = {row.id: row.label for row in game.ruleset.sheet.skills}
            words = " + ".join(w for w in (words, labels.get(str(skill), str(skill))) if w)
        bonus = _read(game, item, hit.bonus)
        if isinstance(bonus, int | float) and not isinstance(bonus, bool) and bonus:
            sign = "+" if bonus > 0 else "-"
            words = f"{words} {sign}{_number(abs(bonus))}".strip()
        if hit.sheet_bonus is not None:
            words = f"{words} + {_sheet_name(game, hit.sheet_bonus)}".strip(" +")
        if words:
            core.append(f"{words} to hit")
    damage = attack.damage
    if damage is not None:
        dealt = [str(d) for d in (_read(game, item, damage.dice),) if d not in (None, "")]
        if damage.abilities is not None:
            dealt.append(_abilities(game, item, damage.abilities))
        bonus = _read(game, item, damage.bonus)
        if isinstance(bonus, int | float) and not isinstance(bonus, bool) and bonus:
            dealt.append(_number(bonus))
        kind = _read(game, item, damage.type)
        text = " + ".join(d for d in dealt if d)
        if kind:
            text = f"{text} {kind}".strip()
        if text:
            core.append(text)
    extras: list[str] = []
    if attack.reach is not None:
        extras.append(f"reach {_distance(game, attack.reach)}")
    if attack.range is not None:
        ends = (attack.range.normal,) if attack.range.long is None else (
            attack.range.normal, attack.range.long)
        extras.append(f"range {_distance(game, *ends)}")
    versatile = _read(game, item, attack.versatile)
    if versatile:  # ITM-WPN-19
        extras.append(f"{versatile} with a hand free")
    target = _read(game, item, hit.target if hit is not None else None)
    if isinstance(target, int | float) and not isinstance(target, bool):  # ITM-WPN-11
        extras.append(f"at {_number(target)}")
    return _budget(game, attack.budget), ", ".join(core), extras


def attack_line(game: Game, item: Item) -> str | None:
    """ITM-WPN-31: ``attack (Action): Brawn to hit, 1d6 + Brawn cut, reach 2 paces, range 10
    to 20 paces`` — the GM line's and the details' full form."""
    found = weapon_text(game, item)
    if found is None:
        return None
    budget, core, extras = found
    return f"attack ({budget}): " + ", ".join(p for p in (core, *extras) if p)


def use_text(game: Game, item: Item) -> str | None:
    """ITM-SHOW-7, ITM-USE-25: ``(Action): heals 1d4 + 1, range 0 paces, used up`` — what
    using the item does, after its budget; None for an item without ``use``."""
    action = item.use
    if action is None:
        return None
    budget = "Free" if action.free or action.budget is None else _budget(game, action.budget)
    parts: list[str] = []
    if action.amount is not None:
        amount = _amount(action.amount)
        if action.kind == "heal":
            parts.append(f"heals {amount}")
        else:
            parts.append(f"{amount}{' ' + action.damage_type if action.damage_type else ''}")
    if action.temporary is not None:
        parts.append(f"{_amount(action.temporary)} temporary")
    if action.restore is not None:
        pools = {row.id: row.label for row in game.ruleset.live.pools}
        parts.append(f"restores {_amount(action.restore.amount)} "
                     f"{pools.get(action.restore.pool, action.restore.pool)}")
    if action.save is not None:
        saves = {row.id: row.label for row in game.ruleset.sheet.saves}
        difficulty = action.save.difficulty or _read(game, item, action.save_difficulty)
        shown = f" {_number(difficulty)}" if isinstance(difficulty, int | float) else ""
        outcome = action.save.on_success
        tail = " negates it" if outcome == "negates" else (f" for {outcome}" if outcome else "")
        parts.append(f"{saves.get(action.save.save, action.save.save)}{shown} save{tail}")
    conditions = {row.id: row.label for row in game.ruleset.conditions}
    parts += [conditions.get(a.condition, a.condition) for a in action.applies]
    if action.range is not None:
        parts.append(f"range {_distance(game, action.range)}")
    if action.area is not None:
        parts.append(f"area {_distance(game, action.area)}")
    if action.consumes:
        parts.append("used up")
    most = use.charges_max(item)
    if action.charges is not None and most is not None:  # ITM-CHG-1
        parts.append(f"{action.charges} of {most} charges")
    return f"({budget}): " + ", ".join(parts or [action.kind])


def charges_text(item: Item, stack: Stack) -> str | None:
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
    attack = attack_line(game, item)  # ITM-WPN-31
    if attack:
        extras.append(attack)
    used = use_text(game, item)  # ITM-USE-25
    if used:
        extras.append(f"use {used}")
    charges = charges_text(item, stack)
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


def sheet_block(game: Game, state: State) -> str:
    """The SHEET block: each character's live sheet as the GM should narrate it
    (:func:`live_sheet`) and their conditions. Empty for a ruleset with no pools or tracks
    whose characters have no conditions."""
    conditions = {c.id: c.label for c in game.ruleset.conditions}
    lines = []
    for character in state.characters:
        parts = live_sheet(game, state, character)
        if character.conditions:
            parts.append("conditions: " + ", ".join(
                conditions.get(c, c) for c in dict.fromkeys(character.conditions)))
        if parts:
            lines.append(f"{character.name}: " + "; ".join(parts))
    return "\n".join(["SHEET", *lines]) if lines else ""


def live_sheet(game: Game, state: State, character: Character) -> list[str]:
    """A character's pools (``Grit 6/11 (+2 temporary)``, ITM-OUT-4) and health and wound
    tracks with the penalty their marks give (``Wounds 2/5 (-1 on checks; -1 on saves)``,
    ITM-OUT-3, ITM-OUT-11; gmtags applies it to every check itself), as the GM and the
    report show them."""
    live = game.ruleset.live
    parts = [_pool_text(game, state, character, pool.id, pool.label) for pool in live.pools]
    for track in live.tracks:
        now = track_value(game, character, state, track)
        text = f"{track.label} {now}/{track_max(game, character, state, track)}"
        penalty = penalty_for(track, now) if track.kind == "wounds" else None
        if penalty is not None:
            dumped = penalty.model_dump(mode="json", by_alias=True, exclude_none=True)
            text += f" ({effect_text(game, dumped)})"
        parts.append(text)
    return parts


def _pool_text(game: Game, state: State, character: Character, pool: str, label: str) -> str:
    most = use.pool_max(game, character, state, pool)
    text = f"{label} {character.pools.get(pool, most)}/{most}"
    temporary = character.pools.get(f"{pool}:temporary", 0)  # ITM-OUT-4
    return text + (f" (+{temporary} temporary)" if temporary else "")


BAGS_PER_FIRST_STACK = 4  # bags remembered per first stack: chats of one game share theirs


class StackLines:
    """:func:`stack_line`, remembered per stack for a caller that renders the same state many
    times over (the stage, once per request). A stack's line depends only on the game, the
    stack and the items its ``item`` and ``shows_as`` name, all immutable, so a line is reused
    only when those are the very same objects — found without looking the items up while the
    state's invented items are the very tuple the line was written with (the catalog is the
    game's). At most ``size`` lines; then it starts over."""

    def __init__(self, size: int = 16_384) -> None:
        self.size = size
        self._lines: dict[int, tuple[Game, Stack, Item | None, Item | None, object, str]] = {}
        # first stack -> the last bags rendered that began with it, newest last: (game, invented
        # items, the bag, the line of each of its stacks, "" for a coin); see :meth:`bag_lines`
        self._bags: IdentityMemo[list[tuple[Game, object, tuple[Stack, ...], list[str]]]] = (
            IdentityMemo(256))

    def __call__(self, game: Game, state: State, stack: Stack) -> str:
        found = self._lines.get(id(stack))
        if found is not None and (found[1] is not stack or found[0] is not game):
            found = None  # another stack or game that had this id
        if found is not None and found[4] is state.invented:
            return found[5]  # the same items, without looking them up again
        item = item_of(game, state, stack.item)
        shown = item_of(game, state, stack.shows_as) if stack.shows_as is not None else None
        if found is not None and found[2] is item and found[3] is shown:
            line = found[5]
        else:
            line = stack_line(game, state, stack)
        if len(self._lines) >= self.size:
            self._lines.clear()
        self._lines[id(stack)] = (game, stack, item, shown, state.invented, line)
        return line

    def bag_lines(self, game: Game, state: State, bag: tuple[Stack, ...]) -> list[str]:
        """The line of each stack of ``bag`` that is not a coin, in bag order. A changed bag
        shares most stacks with a bag rendered before that began with the same stack: the runs
        it shares at both ends keep their lines (found by identity in C loops, issue 12),
        while the game and the state's invented items are the same. The chats of one game
        begin with the same stacks (the party's), so the last :data:`BAGS_PER_FIRST_STACK`
        such bags are kept and the one sharing the most stacks at its ends is used."""
        if not bag:
            return []
        recent = self._bags.get((bag[0],)) or []
        base: tuple[Game, object, tuple[Stack, ...], list[str]] | None = None
        shared = -1
        for entry in recent:
            if entry[0] is game and entry[1] is state.invented:
                ends = sum(shared_ends(entry[2], bag))
                if ends > shared:
                    base, shared = entry, ends
        if base is not None:
            lines = reuse_ends(base[2], base[3], bag,
                               lambda stack: self._line_or_coin(game, state, stack))
        else:
            lines = [self._line_or_coin(game, state, s) for s in bag]
        # The bag this one changed (they share at least half their stacks) is superseded; a
        # bag of another chat that only begins the same way is kept for that chat.
        superseded = base if base is not None and 2 * shared >= len(bag) else None
        kept = [entry for entry in recent if entry is not superseded]
        kept = kept[max(0, len(kept) + 1 - BAGS_PER_FIRST_STACK):]
        self._bags.put((bag[0],), [*kept, (game, state.invented, bag, lines)])
        return list(filter(None, lines))

    def _line_or_coin(self, game: Game, state: State, stack: Stack) -> str:
        return "" if stack.coin is not None else self(game, state, stack)


def inventory_block(game: Game, state: State, lines_of: StackLines | None = None) -> str:
    """The INVENTORY block: every bag (the player's always listed), stacks and purse."""
    lines = ["INVENTORY"]
    for character in state.characters:
        lines.append(f"{character.name} ({purse_line(game, character, state)}):")
        lines += bearer_lines(game, state, character)
        if lines_of is not None:
            stacks = lines_of.bag_lines(game, state, character.bag)
        else:
            stacks = [stack_line(game, state, s) for s in character.bag if s.coin is None]
        lines += stacks or ["- nothing"]
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


def state_context(game: Game, state: State, lines_of: StackLines | None = None) -> str:
    """The GM section's blocks that depend on the state alone: instructions, inventory, sheet
    and market, separated by blank lines (``lines_of``: remembered stack lines to reuse, see
    :class:`StackLines`)."""
    blocks = [instructions(game), inventory_block(game, state, lines_of),
              sheet_block(game, state), market_block(game, state)]
    return "\n\n".join(block for block in blocks if block)


def gm_context(game: Game, state: State, last_answers: Sequence[Answer] = (),
               lines_of: StackLines | None = None) -> str:
    """The whole GM section for the next prompt: :func:`state_context`, then what the engine
    answered to the GM's previous reply."""
    return with_last_answers(state_context(game, state, lines_of), last_answers)


def with_last_answers(state_text: str, last_answers: Sequence[Answer]) -> str:
    """A state's blocks (never empty: the instructions) and the LAST ANSWERS block after them."""
    answers = last_answers_block(last_answers)
    return f"{state_text}\n\n{answers}" if answers else state_text
