"""Items in words: what an item does when worn, carried, used or fought with, as the GM
instructions, the state blocks and the host's descriptions show it (ITM-SHOW-*)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from ..rules.game import Game
from ..rules.items import charges_left, charges_max, read_stat
from ..rules.sheet import save_label
from ..rules.state import Stack
from ..ruleset import Item, ValueRef
from ..ruleset.combat import Amount, Attack, OnHit, Plus


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
    text = "; ".join(phrases)
    guards = _guards(game, part)
    return ", ".join([text, *guards] if text else guards)


def _guards(game: Game, part: Mapping[str, Any]) -> list[str]:
    """ITM-ARM-8: a part's typed defences — ``resists fire``, ``resists cut except silver``,
    ``immune to Rattled``."""
    found: list[str] = []
    for key, verb in (("resist", "resists"), ("immune", "immune to"),
                      ("vulnerable", "vulnerable to")):
        entries = part.get(key)
        for entry in entries if isinstance(entries, list | tuple) else ():
            if isinstance(entry, str):
                found.append(f"{verb} {entry}")
            elif isinstance(entry, Mapping) and isinstance(entry.get("type"), str):
                tags = entry.get("except")
                unless = ", ".join(str(t) for t in tags) if isinstance(tags, list) else ""
                found.append(f"{verb} {entry['type']}" + (f" except {unless}" if unless else ""))
    labels = {c.id: c.label for c in game.ruleset.conditions}
    immunities = part.get("conditionImmunities")
    for ident in immunities if isinstance(immunities, list | tuple) else ():
        found.append(f"immune to {labels.get(str(ident), str(ident))}")
    return found


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


def _budget(game: Game, budget: str | None) -> str:
    """A budget by its label in ``combat.economy.budgets`` (``act`` is ``Action``)."""
    combat = game.ruleset.combat
    rows = combat.economy.budgets if combat is not None and combat.economy is not None else ()
    return next((r.label for r in rows if r.id == budget), str(budget))


def _number(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _distance(game: Game, *numbers: Any) -> str:
    """ITM-WPN-16: ``10 to 20 paces`` in the combat block's distance unit."""
    combat = game.ruleset.combat
    unit = combat.distance.unit if combat is not None and combat.distance is not None else None
    text = " to ".join(_number(n) for n in numbers)
    return f"{text} {unit}" if unit else text


def _abilities(game: Game, item: Item, value: Any) -> str:
    """ITM-WPN-6/22: ability ids (or an enum stat of them) by their labels; the best counts."""
    read = read_stat(game, item, value)
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
        skill = read_stat(game, item, hit.skill)
        if skill:
            labels = {row.id: row.label for row in game.ruleset.sheet.skills}
            words = " + ".join(w for w in (words, labels.get(str(skill), str(skill))) if w)
        bonus = read_stat(game, item, hit.bonus)
        if isinstance(bonus, int | float) and not isinstance(bonus, bool) and bonus:
            sign = "+" if bonus > 0 else "-"
            words = f"{words} {sign}{_number(abs(bonus))}".strip()
        if hit.sheet_bonus is not None:
            words = f"{words} + {_sheet_name(game, hit.sheet_bonus)}".strip(" +")
        if words:
            core.append(f"{words} to hit")
    damage = attack.damage
    if damage is not None:
        dealt = [str(d) for d in (read_stat(game, item, damage.dice),) if d not in (None, "")]
        if damage.abilities is not None:
            dealt.append(_abilities(game, item, damage.abilities))
        if damage.sheet_bonus is not None:  # ITM-WPN-14: by its name on the sheet
            dealt.append(_sheet_name(game, damage.sheet_bonus))
        bonus = read_stat(game, item, damage.bonus)
        if isinstance(bonus, int | float) and not isinstance(bonus, bool) and bonus:
            dealt.append(_number(bonus))
        kind = read_stat(game, item, damage.type)
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
    versatile = read_stat(game, item, attack.versatile)
    if versatile:  # ITM-WPN-19
        extras.append(f"{versatile} with a hand free")
    target = read_stat(game, item, hit.target if hit is not None else None)
    if isinstance(target, int | float) and not isinstance(target, bool):  # ITM-WPN-11
        extras.append(f"at {_number(target)}")
    extras.extend(arms_text(game, item, attack))
    return _budget(game, attack.budget), ", ".join(core), extras


def _tag_label(game: Game, tag: str) -> str:
    block = game.ruleset.items
    return next((t.label for t in (block.tags if block is not None else ()) if t.id == tag), tag)


def _plural(count: int, word: str) -> str:
    return f"{count} {word}{'' if count == 1 else 's'}"


def arms_text(game: Game, item: Item, attack: Attack) -> list[str]:
    """ITM-AMMO-11, ITM-MODE-10: what the weapon shoots and holds, its modes, its off hand,
    its floor, its further amounts and its conditions on a hit — ``ammunition Arrow (1 an
    attack, 50% picked up after a won fight)``, ``holds 1, reload (Act)``, ``modes Volley (2
    shots, -2 to hit, up to 2 targets)``, ``off hand (Quick)``, ``at least 1 on a hit before
    resistance``, ``+3d6 slashing against Dragon``, ``Marked for 2 rounds when a hit deals 2
    or more``."""
    parts: list[str] = []
    if attack.ammo is not None:
        back = f", {_number(round(attack.ammo.recover * 100, 2))}% picked up after a won " \
            "fight" if attack.ammo.recover else ""
        parts.append(f"ammunition {_tag_label(game, attack.ammo.tag)} "
                     f"({attack.ammo.per_attack} an attack{back})")
    if attack.clip is not None:
        parts.append(f"holds {stat_text(read_stat(game, item, attack.clip.max))}, reload "
                     f"({_budget(game, attack.clip.reload)})")
    if attack.modes:
        shown = []
        for mode in attack.modes:
            what = [_plural(mode.ammo, "shot")] if mode.ammo is not None else []
            if mode.to_hit:
                what.append(f"{_signed(mode.to_hit)} to hit")
            if mode.target:
                what.append(f"target {_signed(mode.target)}")
            if mode.targets is not None and mode.targets > 1:
                what.append(f"up to {mode.targets} targets")
            shown.append(mode.label + (f" ({', '.join(what)})" if what else ""))
        parts.append("modes " + ", ".join(shown))
    combat = game.ruleset.combat
    if attack.off_hand and combat is not None and combat.off_hand is not None:
        parts.append(f"off hand ({_budget(game, combat.off_hand.budget)})")
    if attack.floor is not None:
        parts.append(f"at least {stat_text(read_stat(game, item, attack.floor))} on a hit "
                     "before resistance")
    for plus in attack.plus:
        parts.append(_plus_text(game, plus))
    for hit in attack.on_hit:
        parts.append(_on_hit_text(game, hit))
    return parts


def _plus_text(game: Game, plus: Plus) -> str:
    """ITM-MODE-10: ``+3d6 slashing against Dragon``, ``+14 slashing on a critical hit``."""
    amount = _amount(Amount(dice=plus.dice, flat=plus.flat))
    text = f"+{amount}" + (f" {plus.type}" if plus.type else "")
    if plus.target_is is not None:
        named = [t[:1].upper() + t[1:] for t in plus.target_is.types]
        named += [_tag_label(game, t) for t in plus.target_is.tags]
        text += f" against {' or '.join(named)}"
    if plus.when == "critical":
        text += " on a critical hit"
    elif plus.when == "toggled":
        text += " while switched on"
    if plus.save is not None and plus.save.difficulty is not None:
        text += f" ({save_label(game, plus.save.save)} DC {plus.save.difficulty} " + (
            "for half)" if plus.save.on_success == "half" else "for none)")
    return text


def _on_hit_text(game: Game, hit: OnHit) -> str:
    """ITM-MODE-10: ``Marked for 2 rounds when a hit deals 2 or more``."""
    label = next((c.label for c in game.ruleset.conditions if c.id == hit.condition),
                 hit.condition)
    text = label
    if hit.rounds is not None:
        text += f" for {_plural(hit.rounds, 'round')}"
    elif hit.save_ends is not None:
        text += (f" until a {save_label(game, hit.save_ends.save)} save "
                 f"(DC {hit.save_ends.difficulty})")
    text += f" when a hit deals {hit.at_least} or more"
    if hit.save is not None and hit.save.difficulty is not None:
        text += f" ({save_label(game, hit.save.save)} DC {hit.save.difficulty} keeps it off)"
    return text


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
        difficulty = action.save.difficulty or read_stat(game, item, action.save_difficulty)
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
    most = charges_max(item)
    if action.charges is not None and most is not None:  # ITM-CHG-1
        parts.append(f"{action.charges} of {most} charges")
    return f"({budget}): " + ", ".join(parts or [action.kind])


def charges_text(item: Item, stack: Stack) -> str | None:
    """ITM-RCHG-7: ``2 of 3 charges left`` (a stack that never spent one is full; ``max``
    may be read from an item stat, ITM-CHG-3)."""
    most = charges_max(item)
    left = charges_left(item, stack)
    if most is None or left is None:
        return None
    return f"{left} of {most} charges left"
