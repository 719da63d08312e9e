"""The game as the player sees it: each character's purse, bag, pools and tracks, conditions
and sheet, the place and day, and the fight while one is on (the state view's ``party``,
drawn by the SillyTavern panel), and what changed since an earlier state.

Only what the player may see: a stack shows the name the player knows it by (a fake keeps the
name of what it pretends to be, ITM-FAKE-10), never its catalog id. The report's per-turn
diffs (:mod:`replay.report`) read characters through the same functions, so the panel and the
report never disagree on a purse, a pool or a condition.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from engine import Answer, Game, State
from engine.rules.layers import removed_coins
from engine.rules.money import count_text, family_coins, held_coins
from engine.rules.state import Character, Encounter, Stack
from engine.text.fight.block import health_of
from engine.text.prompt import live_sheet

StackKey = tuple[str, str | None, str | None, bool, bool, int | None, bool, int]


def stack_label(stack: Stack) -> str:
    """``Hand axe (equipped)``: the name and the per-stack state a reader tells stacks apart by."""
    marks = [word for word, on in (("equipped", stack.equipped), ("bound", stack.bound),
                                   ("on", stack.toggled)) if on]
    if stack.charges is not None:
        marks.append(f"{stack.charges} charges")
    return f"{stack.name} ({', '.join(marks)})" if marks else stack.name


def stack_keys(character: Character) -> list[StackKey]:
    """Each stack of the bag as something to follow from one state to the next: what tells
    it apart, and which of the stacks alike it is (a stack limit, a split: two rows)."""
    seen: dict[tuple[Any, ...], int] = {}
    keys: list[StackKey] = []
    for stack in character.bag:
        identity = (stack.name, stack.item, stack.coin, stack.equipped, stack.bound,
                    stack.charges, stack.toggled)
        seen[identity] = occurrence = seen.get(identity, -1) + 1
        keys.append((*identity, occurrence))
    return keys


def family_worth(game: Game, state: State, character: Character) -> list[int]:
    """What the character's coins are worth per currency family, in its smallest coin
    (coins a layer removes count nothing, ITM-LAYER)."""
    removed = removed_coins(game, state)
    families = game.ruleset.items.currencies if game.ruleset.items else []
    return [sum(held_coins(character, family).get(c, 0) * v
                for c, v in family_coins(family) if c not in removed)
            for family in families]


def condition_labels(game: Game, character: Character) -> list[str]:
    """The character's conditions by their ruleset labels, in the order they were taken."""
    labels = {c.id: c.label for c in game.ruleset.conditions}
    return [labels.get(c, c) for c in character.conditions]


def purse_view(game: Game, state: State, character: Character) -> list[dict[str, Any]]:
    """Per currency family the character holds coins of: its label, what they are worth
    (``432 pennies``) and the coins themselves, largest first."""
    families = game.ruleset.items.currencies if game.ruleset.items else []
    out = []
    for family, worth in zip(families, family_worth(game, state, character), strict=True):
        held = held_coins(character, family)
        coins = [{"coin": coin, "label": game.coins[coin].name(count), "count": count}
                 for coin, _ in family_coins(family) if (count := held.get(coin, 0))]
        if coins:
            smallest = game.coins[family_coins(family)[-1][0]]
            out.append({"family": family.id, "label": family.label,
                        "worth": count_text(smallest, worth), "coins": coins})
    return out


def _sheet_value(value: Any, tiers: dict[str, str]) -> str:
    """A skill or save as the sheet holds it: a tier id, or ``{"tier", "bonus"}``."""
    if isinstance(value, dict):
        tier = tiers.get(str(value.get("tier")), str(value.get("tier", "")))
        bonus = value.get("bonus")
        return f"{tier} +{bonus}" if bonus else tier
    return tiers.get(str(value), str(value))


def sheet_view(game: Game, character: Character) -> dict[str, list[dict[str, Any]]]:
    """The character's abilities (label, score) and the skills and saves it has set (label,
    tier), in the ruleset's order."""
    sheet = game.ruleset.sheet
    resolution = game.ruleset.resolution
    tiers = {t.id: t.label for t in resolution.proficiency_tiers} if resolution else {}
    out: dict[str, list[dict[str, Any]]] = {
        "abilities": [{"id": a.id, "label": a.label, "score": character.abilities[a.id]}
                      for a in sheet.abilities if a.id in character.abilities]}
    for key, entries, values in (("skills", sheet.skills, character.skills),
                                 ("saves", sheet.saves, character.saves)):
        out[key] = [{"id": e.id, "label": e.label, "tier": _sheet_value(values[e.id], tiers)}
                    for e in entries if e.id in values]
    return out


def character_view(game: Game, state: State, character: Character) -> dict[str, Any]:
    """One character as the panel shows it: purse, bag (coins are in the purse), pools and
    tracks as the GM reads them (``Grit 6/10``), hit points, conditions, sheet."""
    bag = [{"name": stack.name, "label": stack_label(stack),
            "kind": "item" if stack.item else "plain", "count": stack.count}
           for stack in character.bag if stack.coin is None]
    health = health_of(game, state, character)
    return {
        "name": character.name,
        "purse": purse_view(game, state, character),
        "bag": bag,
        "pools": live_sheet(game, state, character),
        "health": None if health is None else {"label": health.label, "now": health.now,
                                                "most": health.most},
        "conditions": condition_labels(game, character),
        "sheet": sheet_view(game, character),
    }


def encounter_view(game: Game, state: State, encounter: Encounter,
                   last_attacks: Sequence[Answer] = ()) -> dict[str, Any]:
    """The fight on now: its round and kind, everyone in initiative order with hit points
    (a hero's from its sheet) and conditions, and the attacks of its latest round."""
    labels = {c.id: c.label for c in game.ruleset.conditions}
    order = []
    for combatant in encounter.combatants:
        entry: dict[str, Any] = {"name": combatant.name, "side": combatant.side,
                                 "initiative": combatant.initiative,
                                 "hp": combatant.hp, "hpMax": combatant.hp_max}
        names = [c.name for c in combatant.conditions]
        index = state.character_index(combatant.name) if combatant.side == "party" else None
        if index is not None:
            character = state.characters[index]
            health = health_of(game, state, character)
            if health is not None:
                entry.update({"hp": health.now, "hpMax": health.most})
            names = list(dict.fromkeys([*character.conditions, *names]))
        entry["conditions"] = [labels.get(name, name) for name in names]
        entry["down"] = entry["hp"] == 0
        order.append(entry)
    attacks = [{"who": a.tag.attrs.get("who") or state.player,
                "target": a.tag.attrs.get("target"), "ok": a.ok, "reason": a.reason,
                "text": a.text} for a in last_attacks]
    out: dict[str, Any] = {"round": encounter.round, "kind": encounter.kind, "order": order,
                           "lastAttacks": attacks}
    if encounter.momentum is not None:
        out["momentum"] = dict(encounter.momentum)
    return out


def party_view(game: Game, state: State, last_attacks: Sequence[Answer] = ()) -> dict[str, Any]:
    """Everything the panel shows of ``state``: characters, place and day, the fight."""
    place = state.place
    return {
        "characters": [character_view(game, state, c) for c in state.characters],
        "place": None if place is None else {"name": place.name, "size": place.size,
                                             "day": place.day},
        "encounter": None if state.encounter is None else encounter_view(
            game, state, state.encounter, last_attacks),
    }


def changes_view(game: Game, before: State, after: State) -> dict[str, Any]:
    """What changed from ``before`` to ``after``, per character (by name): each bag row
    (its label) ``added``, ``more``, ``fewer`` or ``removed`` with the count before, and
    whether the purse, the pools and tracks, or the conditions changed; and the place."""
    if before is after:
        return {"characters": {}, "place": False}
    earlier = {c.name: c for c in before.characters}
    characters: dict[str, Any] = {}
    for character in after.characters:
        old = earlier.get(character.name)
        if old is None:
            characters[character.name] = {"new": True}
            continue
        if old is character:
            continue
        found: dict[str, Any] = {}
        was = {key: stack for key, stack in zip(stack_keys(old), old.bag, strict=True)
               if stack.coin is None}
        now = {key: stack for key, stack in zip(stack_keys(character), character.bag,
                                                strict=True) if stack.coin is None}
        bag = []
        for key, stack in now.items():
            gone = was.get(key)
            if gone is None:
                bag.append({"label": stack_label(stack), "change": "added", "was": 0})
            elif gone.count != stack.count:
                bag.append({"label": stack_label(stack), "was": gone.count,
                            "change": "more" if stack.count > gone.count else "fewer"})
        bag += [{"label": stack_label(stack), "change": "removed", "was": stack.count}
                for key, stack in was.items() if key not in now]
        if bag:
            found["bag"] = bag
        if family_worth(game, before, old) != family_worth(game, after, character) or \
                purse_view(game, before, old) != purse_view(game, after, character):
            found["purse"] = True
        if live_sheet(game, before, old) != live_sheet(game, after, character):
            found["pools"] = True
        if old.conditions != character.conditions:
            found["conditions"] = True
        if found:
            characters[character.name] = found
    place = (before.place.name, before.place.day) if before.place else None
    now_place = (after.place.name, after.place.day) if after.place else None
    return {"characters": characters, "place": place != now_place}
