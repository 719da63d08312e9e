"""Starting gear (docs/rules/items.md#17-starting-gear): listing the packages for a character, and
taking one — an event the host records in the transcript (``{"action": "starting-gear", "gear":
"fighter", "who": "Ada", "choices": [1, "A greataxe"], "oneOf": [], "again": false}``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from ..rules import reasons
from ..rules.bags import Thing, add_to_bag
from ..rules.carry import load, thresholds, unit_weight
from ..rules.context import TurnContext
from ..rules.game import DEFAULT_STACK, Game
from ..rules.gear import slots_in_use
from ..rules.layers import hidden_items, removed_coins
from ..rules.sheet import SheetView
from ..rules.state import Character, Stack, State
from ..ruleset.gear import GearLine, StartingGear
from .answers import Answer, accepted, refused
from .attrs import JSON, WHO
from .declare import Reader, Refusal, Request, action, attr, request
from .placing import weight_text


def packages(game: Game) -> list[StartingGear]:
    block = game.ruleset.items
    return list(block.starting_gear) if block is not None else []


def starting_gear_for(game: Game, character: Character) -> list[StartingGear]:
    """ITM-GEAR-3/4, OQ-41: gear whose ``fits`` the sheet meets, then gear without ``fits``,
    then the rest — all offered, in ruleset order within each part. ``fits`` reads the sheet
    without live state (ITM-GEAR-14)."""
    sheet = SheetView(game, character, items_apply=False)
    fitting = [g for g in packages(game)
               if g.fits is not None and sheet.value(g.fits.value) >= g.fits.at_least]
    open_to_all = [g for g in packages(game) if g.fits is None]
    rest = [g for g in packages(game) if g not in fitting and g not in open_to_all]
    return fitting + open_to_all + rest


def group_key(gear: StartingGear) -> str:
    """ITM-GEAR-11/13: the group, or the gear's own group (never equal to a named group)."""
    return f"group:{gear.group}" if gear.group is not None else f"gear:{gear.id}"


@dataclass(frozen=True, slots=True)
class Piece:
    thing: Thing
    count: int
    equip: bool


def _choose(options: Sequence[Any], wanted: Any, labels: Sequence[str]) -> int | None:
    """An option by index or by label (any case)."""
    if isinstance(wanted, int) and not isinstance(wanted, bool) and 0 <= wanted < len(options):
        return wanted
    if isinstance(wanted, str):
        folded = wanted.strip().casefold()
        return next((i for i, label in enumerate(labels) if label.casefold() == folded), None)
    return None


def _coin_piece(game: Game, state: State, coin: str, count: int) -> tuple[Piece | None, str]:
    """ITM-GEAR-18, OQ-43: a removed coin is paid in the largest remaining coin of the family
    whose value divides the total exactly."""
    info = game.coins[coin]
    removed = removed_coins(game, state)
    if coin not in removed:
        return Piece(Thing(info.coin.label, None, coin, DEFAULT_STACK), count, False), ""
    total = count * info.coin.value
    remaining = sorted((u for u in info.family.units if u.id not in removed),
                       key=lambda u: -u.value)
    for unit in remaining:
        if total % unit.value == 0:
            note = (f"{count} {info.name(count)} paid as {total // unit.value} "
                    f"{unit.one if total // unit.value == 1 and unit.one else unit.label}")
            return Piece(Thing(unit.label, None, unit.id, DEFAULT_STACK), total // unit.value,
                         False), note
    return None, f"{count} {info.name(count)} (not in this game)"


def _pieces(game: Game, state: State, gear: StartingGear, request: TakeGear,
            ) -> tuple[list[Piece], list[str], list[str]] | tuple[str, str]:
    """The pieces a selection takes, what was left out (ITM-GEAR-17), coin notes — or a
    (reason, sentence) refusal."""
    chosen = request.choices or []
    if not isinstance(chosen, list) or len(chosen) != len(gear.choices):
        labels = "; ".join(f"{c.label}: " + " / ".join(o.label for o in c.options)
                           for c in gear.choices)
        return reasons.BAD_SELECTION, (f"{gear.label} needs one option for each of its "
                                       f"{len(gear.choices)} choice(s) ({labels}).")
    lines: list[GearLine] = list(gear.lines)
    for choice, wanted in zip(gear.choices, chosen, strict=True):
        index = _choose(choice.options, wanted, [o.label for o in choice.options])
        if index is None:
            options = " / ".join(o.label for o in choice.options)
            return reasons.BAD_SELECTION, f"Choose one of {options} for {choice.label}."
        lines += choice.options[index].lines
    picks = list(request.one_of or [])
    hidden = hidden_items(game, state)
    pieces: list[Piece] = []
    left_out: list[str] = []
    notes: list[str] = []
    for line in lines:
        if line.one_of is not None:
            allowed = [game.items[r] for r in line.one_of if r in game.items and r not in hidden]
            if not allowed:  # ITM-GEAR-17: a list a layer empties entirely
                left_out.append("a choice of " + ", ".join(line.one_of))
                continue
            wanted = picks.pop(0) if picks else (0 if len(allowed) == 1 else None)
            index = _choose(allowed, wanted, [a.label for a in allowed])
            if index is None and isinstance(wanted, str):
                index = next((i for i, a in enumerate(allowed) if a.ref == wanted), None)
            if index is None:
                names = " / ".join(a.label for a in allowed)
                return reasons.BAD_SELECTION, f"Pick one of {names}."
            found = allowed[index]
            pieces.append(Piece(Thing(found.label, found.ref, None, found.stack_limit),
                                line.count, line.equip))
        elif line.item is not None:
            found_item = game.items.get(line.item)
            if found_item is None or line.item in hidden:
                left_out.append(found_item.label if found_item else line.item)
                continue
            pieces.append(Piece(Thing(found_item.label, found_item.ref, None,
                                      found_item.stack_limit), line.count, line.equip))
        elif line.coins is not None:
            piece, note = _coin_piece(game, state, line.coins, line.count)
            if piece is None:
                left_out.append(note)
            else:
                pieces.append(piece)
                if note:
                    notes.append(note)
        elif line.name is not None:
            pieces.append(Piece(Thing(line.name, None, None, DEFAULT_STACK), line.count, False))
    return pieces, left_out, notes


def _slots_free(game: Game, state: State, bag: tuple[Stack, ...], character: Character,
                ref: str) -> bool:
    item = game.items[ref].item
    if not item.slots:
        return False
    slots = {s.id: s.count for s in (game.ruleset.items.slots if game.ruleset.items else [])}
    used = slots_in_use(game, state, character.model_copy(update={"bag": bag}))
    return all(used.get(slot, 0) + n <= slots.get(slot, 0) for slot, n in item.slots.items())


def _gear(raw: Any, game: Game, state: State) -> StartingGear | Refusal:
    wanted = str(raw or "").strip().casefold()
    gear = next((g for g in packages(game) if wanted in (g.id.casefold(), g.label.casefold())),
                None)
    if gear is None:
        known = ", ".join(g.id for g in packages(game)) or "none"
        return Refusal(reasons.UNKNOWN_GEAR,
                       f'There is no starting gear "{wanted[:40]}" (known: {known}).')
    return gear


GEAR = Reader("starting gear", _gear, {"type": "string"}, (reasons.UNKNOWN_GEAR,), json=True)
"""``gear``: a starting gear package by id or label."""


@request
class TakeGear(Request):
    """Take one starting gear package, all or nothing (ITM-GEAR-5, ITM-GEAR-15..19)."""

    gear: StartingGear = attr(GEAR, "the package, by id or label")
    who: int = attr(WHO, "who takes it", shown="the player")
    again: Any = attr(JSON, "true: take a package of a group already taken, on purpose "
                      "(ITM-GEAR-12)")
    choices: Any = attr(JSON, "one option per choice of the package, by label or position")
    one_of: Any = attr(JSON, "one pick per oneOf line, by label, reference or position",
                       name="oneOf")


@action("event", "starting-gear", TakeGear,
        reasons=(reasons.ALREADY_TAKEN, reasons.BAD_SELECTION, reasons.NOTHING_LEFT,
                 reasons.TOO_HEAVY, reasons.TOO_MANY_STACKS),
        record={"who": "who took it", "gear": "the package's id", "taken": "what was taken",
                "leftOut": "what this game left out (ITM-GEAR-17)"})
def take(game: Game, state: State, request: TakeGear, ctx: TurnContext) -> tuple[State, Answer]:
    """ITM-GEAR-5, ITM-GEAR-15..19: take one package, all or nothing."""
    tag, gear, who = request.tag, request.gear, request.who
    character = state.characters[who]
    if group_key(gear) in character.gear_taken and request.again is not True:  # GEAR-12
        return state, refused(tag, reasons.ALREADY_TAKEN,
                              f"{character.name} already took gear of the group "
                              f"{gear.group or gear.id}; take it again only on purpose "
                              '("again": true).')
    built = _pieces(game, state, gear, request)
    if len(built) == 2:
        return state, refused(tag, built[0], built[1])
    pieces, left_out, notes = built
    if not pieces:  # ITM-GEAR-19
        return state, refused(tag, reasons.NOTHING_LEFT,
                              f"Nothing of {gear.label} is left in this game "
                              f"({', '.join(left_out)}).")
    weight = sum((unit_weight(game, state, p.thing.item, p.thing.coin) * p.count
                  for p in pieces), Fraction(0))
    _, limit = thresholds(game, character)
    current = load(game, state, character)
    if limit is not None and current + weight > limit:  # ITM-GEAR-16, OQ-42
        room = max(Fraction(0), limit - current)
        return state, refused(tag, reasons.TOO_HEAVY,
                              f"{gear.label} weighs {weight_text(game, weight)}; "
                              f"{character.name} can still carry {weight_text(game, room)}.")
    bag = character.bag
    taken: list[str] = []
    for piece in pieces:
        count = piece.count
        label = f"{piece.thing.name} ×{count}"
        if piece.equip and piece.thing.item and _slots_free(game, state, bag, character,
                                                            piece.thing.item):
            bag = (*bag, piece.thing.stack(1).model_copy(update={"equipped": True}))
            count -= 1
            label += " (equipped)"
        if count:
            grown = add_to_bag(bag, piece.thing, count)
            if grown is None:
                return state, refused(tag, reasons.TOO_MANY_STACKS,
                                      f"{character.name}'s bag cannot take that many stacks.")
            bag = grown
        taken.append(label)
    updated = character.model_copy(update={
        "bag": bag, "gear_taken": tuple(dict.fromkeys((*character.gear_taken, group_key(gear)))),
    })
    text = f"{character.name} takes {gear.label}: {', '.join(taken)}."
    if notes:
        text += " " + "; ".join(notes) + "."
    if left_out:
        text += " Left out (not in this game): " + ", ".join(left_out) + "."
    record: dict[str, object] = {"gear": gear.id, "who": character.name, "taken": taken,
                                 "leftOut": left_out}
    return state.with_character(who, updated), accepted(tag, text, record)
