"""Ammunition and clips as pure rules (docs/rules/items.md#10-ammunition-and-reloading): what a
weapon shoots from its wearer's bag, how much is carried, what one attack takes and from which
stacks, the loaded count a weapon with a clip keeps on its stack, and what a won fight gives back.
No tags and no sentences: ``[attack:]`` (engine/actions/fight/formula.py, arms.py) and ``[combat:
op="reload"]`` (engine/actions/fight/weapons.py) use these."""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from fractions import Fraction

from ..ruleset import Item
from ..ruleset.combat import Attack, Clip, Mode
from .bags import Thing, add_to_bag, item_of, stack_limit
from .game import DEFAULT_STACK, Game
from .items import read_stat
from .state import Character, Encounter, Shot, Stack, State
from .weapons import whole


def shots_per_attack(attack: Attack, mode: Mode | None) -> int:
    """ITM-AMMO-3, ITM-MODE-3: what one attack shoots — the mode's ``ammo``, else
    ``ammo.perAttack`` (1 by default); a weapon with a clip and no ``ammo`` spends 1 loaded
    a shot. 0 for a weapon that shoots nothing."""
    if attack.ammo is None and attack.clip is None:
        return 0
    if mode is not None and mode.ammo is not None:
        return mode.ammo
    return attack.ammo.per_attack if attack.ammo is not None else 1


def _tagged(game: Game, state: State, stack: Stack, tag: str) -> bool:
    item = item_of(game, state, stack.item)
    return item is not None and tag in item.tags


def carried(game: Game, state: State, character: Character, tag: str) -> int:
    """ITM-AMMO-3/4: how many items tagged ``tag`` the character carries, worn or not."""
    return sum(s.count for s in character.bag if _tagged(game, state, s, tag))


def clip_size(game: Game, item: Item, clip: Clip) -> int:
    """ITM-CLIP-2: how much the clip holds, written out or read from one of the item's number
    stats (a stat it gives no value for holds nothing)."""
    return max(whole(read_stat(game, item, clip.max)), 0)


def loaded(game: Game, item: Item, clip: Clip, stack: Stack) -> int:
    """ITM-CLIP-6..8: what the weapon on ``stack`` holds loaded — the count kept on its stack;
    full when nobody has fired it yet, and full on a stack of several of the weapon (a loaded
    count belongs to a single weapon)."""
    size = clip_size(game, item, clip)
    if stack.loaded is None or stack.count > 1:
        return size
    return min(stack.loaded, size)


def with_loaded(state: State, who: int, position: int, count: int) -> State:
    """ITM-CLIP-6: the state with the weapon at ``position`` of hero ``who``'s bag holding
    ``count`` loaded."""
    bag = list(state.characters[who].bag)
    bag[position] = bag[position].model_copy(update={"loaded": count})
    return state.with_bag(who, tuple(bag))


def _same(shot: Shot, who: str, stack: Stack) -> bool:
    return shot.who == who and shot.item == stack.item and (
        shot.item is not None or shot.name.casefold() == stack.name.casefold())


def _kind_of(shot: Shot) -> Stack:
    return Stack(name=shot.name, item=shot.item, count=1)


def _emptied(shots: Iterable[Shot], who: str, kind: Stack) -> set[int]:
    """The ordinals of the stacks of ``kind`` the fight has used up in ``who``'s bag."""
    return {s.stack for s in shots if s.emptied and _same(s, who, kind)}


def _ordinal(shots: Iterable[Shot], who: str, bag: list[Stack], position: int) -> int:
    """The stack at ``position`` as the fight counts it: its place among the bag's stacks of
    its kind, after the stacks of that kind the fight used up (always the first ones: an
    attack takes from the first stack)."""
    stack = bag[position]
    before = sum(1 for s in bag[:position] if s.same_kind(stack))
    return len(_emptied(shots, who, stack)) + before


def _with_shot(shots: list[Shot], shot: Shot) -> list[Shot]:
    """``shots`` with ``shot`` added to the row of the same stack and fraction, if there is one
    (one row per stack and weapon fraction, however long the fight)."""
    for index, row in enumerate(shots):
        if (row.who, row.item, row.name, row.stack, row.recover) == (
                shot.who, shot.item, shot.name, shot.stack, shot.recover):
            shots[index] = row.model_copy(update={"count": row.count + shot.count,
                                                  "emptied": row.emptied or shot.emptied})
            return shots
    return [*shots, shot]


@dataclass(frozen=True, slots=True)
class Shooting:
    """One attack's ammunition taken from the bag: the new state, the fight's shots, the names
    of the stacks used up (ITM-AMMO-8) and what is still carried."""

    state: State
    shots: tuple[Shot, ...]
    used_up: tuple[str, ...]
    left: int


def shoot(game: Game, state: State, who: int, tag: str, count: int, recover: float,
          shots: tuple[Shot, ...], kept: bool = True) -> Shooting | None:
    """ITM-AMMO-3/8: ``count`` items tagged ``tag`` taken from hero ``who``'s bag — from the
    first such stack, then the next; a stack taken to 0 leaves the bag. ``kept`` False (a
    reload, ITM-CLIP-9) takes them without counting them for recovery. None when the bag does
    not hold that many (ITM-AMMO-4, nothing is taken)."""
    character = state.characters[who]
    if carried(game, state, character, tag) < count:
        return None
    bag = list(character.bag)
    rows = list(shots)
    used_up: list[str] = []
    left = count
    position = 0
    while left and position < len(bag):
        stack = bag[position]
        if not _tagged(game, state, stack, tag):
            position += 1
            continue
        taken = min(left, stack.count)
        left -= taken
        emptied = taken == stack.count
        if kept:
            rows = _with_shot(rows, Shot(who=character.name, item=stack.item, name=stack.name,
                                         stack=_ordinal(rows, character.name, bag, position),
                                         count=taken, recover=recover, emptied=emptied))
        if emptied:
            used_up.append(stack.name)
            del bag[position]
        else:
            bag[position] = stack.model_copy(update={"count": stack.count - taken})
            position += 1
    state = state.with_bag(who, tuple(bag))
    return Shooting(state, tuple(rows), tuple(used_up),
                    carried(game, state, state.characters[who], tag))


@dataclass(frozen=True, slots=True)
class Recovered:
    """ITM-AMMO-5/6: what one hero picked up from one stack after a won fight."""

    who: str
    name: str
    shot: int
    recovered: int


def _fraction(value: float) -> Fraction:
    """A recover fraction as written (0.1 is a tenth, not the float nearest it)."""
    return Fraction(repr(value))


def recover(game: Game, state: State, encounter: Encounter) -> tuple[State, list[Recovered]]:
    """ITM-AMMO-5/6, OQ-29: after a fight the party won, each stack gets back ``recover`` of
    what was shot from it, the fractions summed over the whole fight and rounded down once per
    stack (half of five arrows from one quiver is two). A stack used up in the fight forms a
    stack of the same item in the same bag again (OQ-29). Clips are never picked up
    (ITM-CLIP-9: their shots are not counted)."""
    groups: dict[tuple[str, str | None, str, int], list[Shot]] = {}
    for shot in encounter.shots:
        groups.setdefault((shot.who, shot.item, shot.name.casefold(), shot.stack), []).append(
            shot)
    found: list[Recovered] = []
    for (name, _, _, ordinal), rows in groups.items():
        back = math.floor(sum((r.count * _fraction(r.recover) for r in rows), Fraction(0)))
        total = sum(r.count for r in rows)
        who = state.character_index(name)
        if who is None:
            continue
        if back:
            emptied = _emptied(encounter.shots, name, _kind_of(rows[0]))
            state = _returned(game, state, who, rows, ordinal, back, emptied)
        found.append(Recovered(state.characters[who].name, rows[0].name, total, back))
    return state, found


def _returned(game: Game, state: State, who: int, rows: list[Shot], ordinal: int,
              count: int, emptied: set[int]) -> State:
    """``count`` items back to the stack the fight counts as ``ordinal`` (ITM-AMMO-5); to a
    new stack of the same item when it was used up (OQ-29), or when the bag no longer has it;
    a stack's limit is kept (what does not fit starts a new stack, ITM-STACK-1)."""
    character = state.characters[who]
    kind = _kind_of(rows[0])
    bag = list(character.bag)
    item = item_of(game, state, kind.item)
    limit = stack_limit(item) if item is not None else DEFAULT_STACK
    if not any(r.emptied for r in rows):
        nth = ordinal - sum(1 for e in emptied if e < ordinal)
        positions = [p for p, s in enumerate(bag) if s.same_kind(kind)]
        if 0 <= nth < len(positions):
            position = positions[nth]
            stack = bag[position]
            fits = min(count, max(limit - stack.count, 0))
            bag[position] = stack.model_copy(update={"count": stack.count + fits})
            count -= fits
    grown: tuple[Stack, ...] | None = tuple(bag)
    if count:
        fresh = Thing(kind.name, kind.item, None, limit).stack(min(count, limit))
        grown = (*bag, fresh)
        if count > limit:
            grown = add_to_bag(grown, Thing(kind.name, kind.item, None, limit), count - limit)
    return state.with_bag(who, grown) if grown is not None else state
