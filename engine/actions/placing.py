"""Things arriving in bags by the carry rule, and the sentences that say where they went
(ITM-CARRY-5..8, OQ-13)."""

from __future__ import annotations

from fractions import Fraction

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import Thing
from ..rules.carry import carry_rule, distribute
from ..rules.game import MAX_STACKS_PER_BAG, Game
from ..rules.state import State
from .answers import Answer, accepted, refused


def add_thing(game: Game, state: State, tag: Tag, thing: Thing, count: int,
              who: int | None, extra: dict[str, object] | None = None) -> tuple[State, Answer]:
    """Put ``count`` of ``thing`` into ``who``'s bag or the shared view by the carry rule,
    and say where it went and what stayed behind (ITM-CARRY-5..8, OQ-13)."""
    new_state, placements, left = distribute(game, state, thing, count, who)
    if not placements:
        target = state.characters[who].name if who is not None else "the party"
        reason = reasons.NOTHING_CARRIED
        room = ", ".join(c.name for c in state.characters)
        text = f"Nobody in the party ({room}) can carry {thing.name} ×{count}; it stays behind."
        if game.ruleset.items is None or game.ruleset.items.carry is None:
            reason = reasons.TOO_MANY_STACKS
            text = (f"{target}'s bag cannot take that many stacks (at most "
                    f"{MAX_STACKS_PER_BAG}); nothing was added.")
        elif who is not None:
            text = (f"{target} cannot carry {thing.name} ×{count} without passing the carry "
                    "limit; nothing was added.")
        return state, refused(tag, reason, text)
    record: dict[str, object] = {
        "item": thing.item, "coin": thing.coin, "name": thing.name, "count": count - left,
        "who": ", ".join(new_state.characters[i].name for i, _ in placements),
    }
    if left:
        record["left"] = left
    record.update(extra or {})
    return new_state, accepted(tag, placement_text(new_state, thing.name, placements, left),
                               record)


def weight_text(game: Game, weight: Fraction) -> str:
    """A weight as the GM reads it: ``3``, ``2.25``, ``0.33``, and ``carry.unit`` (ITM-BLOCK-20)."""
    if weight.denominator == 1:
        number = str(weight.numerator)
    else:
        number = f"{float(weight):.2f}".rstrip("0").rstrip(".")
    carry = carry_rule(game)
    return f"{number} {carry.unit}" if carry is not None and carry.unit else number


def placement_text(state: State, thing_name: str, placements: list[tuple[int, int]],
                   left: int) -> str:
    """The answer's sentence: where the things went, and what stayed behind (ITM-CARRY-7)."""
    return added_text(thing_name, [(state.characters[i].name, n) for i, n in placements], left)


def added_text(thing_name: str, placed: list[tuple[str, int]], left: int) -> str:
    """An add's sentence from who took how many (``placed``, by name) and what stayed behind:
    ``Added Torch ×2 to Ada's bag.`` (also each drop of a ``[loot:]``, ITM-LOOT-18)."""
    parts = [f"{thing_name} ×{n} to {who}'s bag" for who, n in placed]
    text = ("Added " + ", ".join(parts) + ".") if parts else ""
    if left:
        behind = (f"{thing_name} ×{left} stays behind: nobody can carry more."
                  if parts else f"Nobody can carry {thing_name} ×{left}; it stays behind.")
        text = f"{text} {behind}".strip()
    return text
