"""What changes a check besides the sheet (docs/rules/items.md#7-checks-outside-combat): the
roller's wound penalty, their conditions, what their items do while worn or carried, and the
``otherwise`` of unmet requirements."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ValidationError

from ...dice import DiceExpr, Stream, parse_dice
from ...ruleset.effects import Effects, Requirement
from ...ruleset.items import Item
from ...ruleset.sheet import Condition
from ..game import Game
from ..memo import remembered
from ..sheet import SheetView, owned_items
from ..state import Character, State
from ..tracks import wound_penalties
from .read import CheckKind


@dataclass
class Applied:
    """The sum of everything that concerns one check (ITM-CHK-3..8)."""

    flat: int = 0
    dice: list[tuple[DiceExpr, int]] = field(default_factory=list)
    advantage: int = 0
    disadvantage: int = 0
    fails: bool = False
    names: list[str] = field(default_factory=list)

    def roll(self, stream: Stream) -> tuple[int, list[int]]:
        """ITM-CHK-3/11: the modifiers' dice rolled — their signed total (``minus`` subtracts
        them), which a check adds like the flat number (to a sum's total, as dice to a pool),
        and the faces in the order drawn."""
        total = 0
        faces: list[int] = []
        for expr, sign in self.dice:
            for _ in range(expr.count):
                face = stream.die(expr.sides)
                faces.append(face)
                total += sign * face
            total += sign * expr.modifier
        return total, faces

    def lean(self, asked: str | None, rolls_twice: bool) -> int:
        """ITM-CHK-5/6: any advantage and any disadvantage cancel; only a ruleset that rolls
        twice leans at all."""
        up = self.advantage + (asked == "advantage")
        down = self.disadvantage + (asked == "disadvantage")
        if not rolls_twice or (up and down):
            return 0
        return 1 if up else -1 if down else 0


def _effects(value: Any) -> Effects | None:
    """Read a ``worn``/``carried``/``otherwise``/condition part, typed or as written."""
    if isinstance(value, Effects):
        return value
    if isinstance(value, BaseModel):
        value = value.model_dump(mode="json", by_alias=True, exclude_none=True)
    if not isinstance(value, Mapping):
        return None
    try:
        return Effects.model_validate(value)
    except ValidationError:
        return None


def _requirements(value: Any) -> Iterator[Requirement]:
    for row in value if isinstance(value, list | tuple) else ():
        if isinstance(row, Requirement):
            yield row
            continue
        if isinstance(row, BaseModel):
            row = row.model_dump(mode="json", by_alias=True, exclude_none=True)
        try:
            yield Requirement.model_validate(row)
        except ValidationError:
            continue


@remembered(4096)
def _condition_part(condition: Condition) -> Effects | None:
    """A condition read as a ``worn``-style part, built once per ruleset condition."""
    dumped = condition.model_dump(mode="json", by_alias=True, exclude_none=True)
    return _effects({k: v for k, v in dumped.items() if k not in ("id", "label")})


def sources(game: Game, state: State, character: Character,
            view: SheetView) -> Iterator[tuple[str, Effects]]:
    """ITM-CHK-1: (name, part) for the wound penalty, every active condition, owned item and
    unmet requirement."""
    # ITM-OUT-11, CHK-HIGH-3, CHK-SYM-16: the wound penalty is a sheet-level modifier of every
    # check, named after its track; a character without marks has none.
    for track, penalty in wound_penalties(game, state, character):
        yield track.label, Effects(modifiers=penalty.modifiers)
    if character.conditions:
        by_id = {c.id: c for c in game.ruleset.conditions}
        for ident in dict.fromkeys(character.conditions):
            condition = by_id.get(ident)
            part = _condition_part(condition) if condition is not None else None
            if condition is not None and part is not None:
                yield condition.label, part
    if not character.bag:
        return
    # ITM-WORN-1/8: once per owned item, in bag order; a worn copy wins over a carried one.
    owned = owned_items(game, character, state)
    for item in owned:
        part = _item_part(item.item, item.worn)
        if part is not None:
            yield item.label, part
    for item in owned:  # ITM-REQ-4/5: only a worn item demands anything
        if not item.worn or item.ref not in game.items:
            continue
        for requirement in _requirements(item.item.requires):
            if view.value(requirement.value) < requirement.at_least:
                yield item.label, requirement.otherwise


@remembered(4096)
def _item_part(item: Item, worn: bool) -> Effects | None:
    """The item's ``worn`` or ``carried`` part read as Effects, read once per item."""
    return _effects(item.worn if worn else item.carried)


def _concerns(scope_skills: list[str] | None, scope_saves: list[str] | None, kind: CheckKind,
              ident: str) -> bool:
    """ITM-CHK-4, ITM-WORN-6: unscoped parts concern every check of their kind."""
    if kind == "save":
        return scope_saves is None or ident in scope_saves
    if kind == "ability":
        return scope_skills is None
    return scope_skills is None or ident in scope_skills


def collect(game: Game, state: State, character: Character, view: SheetView,
            kind: CheckKind, ident: str) -> Applied:
    """Everything from docs/rules/items.md#7-checks-outside-combat that concerns this check."""
    applied = Applied()
    target = "saves" if kind == "save" else "checks"
    for name, part in sources(game, state, character, view):
        touched = False
        if kind == "save" and ident in part.fails_saves:  # ITM-WORN-5, ITM-CHK-7
            applied.fails = touched = True
        if _concerns(part.skills, part.saves, kind, ident):
            for effect in part.effects:  # ITM-WORN-3
                if effect == f"own-{target}-advantage":
                    applied.advantage += 1
                    touched = True
                elif effect == f"own-{target}-disadvantage":
                    applied.disadvantage += 1
                    touched = True
        for modifier in part.modifiers:  # ITM-WORN-4
            if modifier.to != target:
                continue
            own = modifier.skills is not None or modifier.saves is not None
            skills = modifier.skills if own else part.skills
            saves = modifier.saves if own else part.saves
            if not _concerns(skills, saves, kind, ident):
                continue
            touched = True
            sign = -1 if modifier.minus else 1
            applied.flat += modifier.flat or 0
            if modifier.dice is not None:
                expr = parse_dice(modifier.dice)
                if isinstance(expr, DiceExpr):
                    applied.dice.append((expr, sign))
            if modifier.mode == "advantage":
                applied.advantage += 1
            elif modifier.mode == "disadvantage":
                applied.disadvantage += 1
        if touched and name not in applied.names:
            applied.names.append(name)
    return applied
