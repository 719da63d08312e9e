"""Items the GM invents in the ruleset's terms (spec/items.md §5.10, ITM-PROP-*).

This version answers the parts of a proposal that need no new item: ``propose: false``
(ITM-PROP-2) and a name that already is a ruleset item (ITM-PROP-17, OQ-23). Building a new
item from the description (clamps, caps, tolerant reading) is not answered yet: such an add is
refused ``unsupported`` and changes nothing, so no half-built item enters the game.
"""

from __future__ import annotations

from tagparse import Tag

from . import reasons
from .answers import Answer, refused
from .bags import Thing, add_thing
from .game import Game
from .state import State

# ITM-PROP-3, OQ-16: an add carrying any of these attributes describes a new item.
DESCRIPTION = ("like", "category", "rarity", "tags", "stats", "slots", "binds", "worn",
               "carried", "summary")


def is_proposal(tag: Tag) -> bool:
    """OQ-16: an add with any description attribute is a proposal; name and count are not."""
    return any(tag.get(key) is not None for key in DESCRIPTION)


def propose(game: Game, state: State, tag: Tag, name: str, count: int, who: int | None,
            found: Thing | None) -> tuple[State, Answer]:
    """``[inventory: action="add" item=... like=... stats=...]``: a new item, or why not."""
    described = [key for key in DESCRIPTION if tag.get(key) is not None]
    if found is not None:  # ITM-PROP-17, OQ-23: the name is that item; the description is not
        new_state, answer = add_thing(game, state, tag, found, count, who)
        if answer.ok:
            note = (f"{found.name} is already an item of this game, so the description "
                    f"({', '.join(described)}) was not applied")
            answer = answer.model_copy(update={"notes": (*answer.notes, note)})
        return new_state, answer
    block = game.ruleset.items
    if block is None or not block.propose:  # ITM-PROP-2
        return state, refused(tag, reasons.NO_PROPOSALS,
                              "This ruleset does not let the GM invent items; add one of its "
                              "items by name instead. Nothing was added.")
    return state, refused(tag, reasons.UNSUPPORTED,
                          f'Inventing "{name[:80]}" is not answered by this version of gmtags; '
                          "add an existing item by name instead. Nothing was added.")
