"""Game state as immutable values with canonical JSON (DESIGN.md "State, snapshots and scale").

State is never mutated: every change builds a new value with ``model_copy(update=...)`` or a
constructor, so a cached snapshot stays valid and a refused operation can return the very
object it was given (all-or-nothing).
"""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from .ruleset import Item

STATE_FORMAT: Literal["gmtags-state/1"] = "gmtags-state/1"


class StateModel(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class Stack(StateModel):
    """One inventory line: a catalog item, a coin or a plain item, with per-stack state."""

    name: str
    item: str | None = None  # catalog reference <catalog>/<entry>; identity, whatever the name
    coin: str | None = None  # coin id
    count: int = Field(ge=1)
    equipped: bool = False
    bound: bool = False
    charges: int | None = None
    toggled: bool = False
    # ITM-FAKE-9: a fake not yet found out shows as the item it passes for (its reference);
    # ``item`` keeps what it really is (ITM-FAKE-17). None: shown as what it is.
    shows_as: str | None = None
    suspected_by: tuple[str, ...] = ()  # ITM-INSP-4: who thinks it is a fake
    inspected_by: tuple[str, ...] = ()  # ITM-INSP-7: who has had their one look at it

    @property
    def plain(self) -> bool:
        return self.item is None and self.coin is None

    def same_kind(self, other: Stack) -> bool:
        """Whether two stacks hold the same thing (they could merge, stack limits aside)."""
        if self.item is not None or other.item is not None:
            # ITM-FAKE-9: a fake passing for something never merges with one found out
            return self.item == other.item and self.shows_as == other.shows_as
        if self.coin is not None or other.coin is not None:
            return self.coin == other.coin
        return self.name.casefold() == other.name.casefold()

    @property
    def loose(self) -> bool:
        """A stack more of the same may merge into: not equipped, bound, switched on or charged."""
        return not (self.equipped or self.bound or self.toggled or self.charges is not None)


class Character(StateModel):
    name: str
    abilities: dict[str, int] = Field(default_factory=dict)
    skills: dict[str, Any] = Field(default_factory=dict)
    saves: dict[str, Any] = Field(default_factory=dict)
    fields: dict[str, Any] = Field(default_factory=dict)
    pools: dict[str, int] = Field(default_factory=dict)
    tracks: dict[str, int] = Field(default_factory=dict)  # points (health) or marks (wounds)
    conditions: tuple[str, ...] = ()
    bag: tuple[Stack, ...] = ()
    gear_taken: tuple[str, ...] = ()  # ITM-GEAR-11: starting-gear groups already taken
    entries: tuple[str, ...] = ()  # CHK-TAL-1, CHK-PAY-5: catalog entries the character chose


class Taken(StateModel):
    """What the party bought today of a limited item (``seller`` None: the place's shelves) or
    of one seller's stock (ITM-DAY-9, ITM-DAY-11)."""

    item: str  # catalog reference
    seller: str | None = None
    count: int = Field(ge=1)


class Looked(StateModel):
    """ITM-INSP-7: one character's look at a seller's ware on this market day."""

    seller: str
    item: str  # the reference of the item the ware is offered as
    who: str


class Held(StateModel):
    """ITM-NOTICE-3/6: a buy a companion held on this market day; asked again, it goes
    through."""

    seller: str
    item: str  # the reference of the item the buy named
    who: str  # the buyer


class Place(StateModel):
    """Where the party is (ITM-PLACE-4) and the market day there (ITM-DAY-2..5).

    ``began`` is the position of the ``[place:]`` answer that began the day — (session,
    GM-reply, place tag of the reply), never the swipe — so every roll of the day is a pure
    function of the visible transcript (ITM-DAY-5, OQ-50). ``taken`` and ``paid_out`` are the
    day's ledger, rebuilt from the day's visible replies by the fold.
    """

    name: str
    size: str | None = None  # place size id; None: a place without a market (ITM-PLACE-2)
    day: int = 1
    began: tuple[int, ...] = ()
    taken: tuple[Taken, ...] = ()
    paid_out: int = Field(default=0, ge=0)  # ITM-DAY-17: in the purse family's smallest coin
    looked: tuple[Looked, ...] = ()  # ITM-INSP-7: wares inspected today
    held: tuple[Held, ...] = ()  # ITM-NOTICE-6: buys held today


class JournalEntry(StateModel):
    turn: str
    text: str


class InventedItem(StateModel):
    """An item the GM invented in the ruleset's terms (ITM-PROP-20): its name is that item for
    the rest of the game; ``ref`` is what stacks of it carry in ``Stack.item``."""

    name: str
    ref: str  # "invented/<n>": never a catalog reference (catalog ids have no such catalog)
    item: Item
    summary: str | None = None
    changes: tuple[str, ...] = ()  # ITM-PROP-19: what was inferred and changed, for the player


class State(StateModel):
    """Everything a game has built up: the party, where it is, and the journal."""

    format: Literal["gmtags-state/1"] = STATE_FORMAT
    seed: str
    player: str
    dice: Literal["per-turn", "per-swipe"] = "per-turn"
    layers: tuple[str, ...] = ()  # the ruleset layers this game plays with
    characters: tuple[Character, ...]
    place: Place | None = None
    journal: tuple[JournalEntry, ...] = ()
    invented: tuple[InventedItem, ...] = ()  # ITM-PROP-20/21, by name

    def character_index(self, name: str | None) -> int | None:
        """The character a ``who=`` names (any case), or the player's without a name."""
        wanted = (name or self.player).strip().casefold()
        for index, character in enumerate(self.characters):
            if character.name.casefold() == wanted:
                return index
        return None

    def with_character(self, index: int, character: Character) -> State:
        characters = list(self.characters)
        characters[index] = character
        return self.model_copy(update={"characters": tuple(characters)})

    def to_json(self) -> dict[str, Any]:
        return self.model_dump(mode="json")

    def canonical(self) -> str:
        """Canonical JSON: sorted keys, no whitespace, UTF-8 kept (hashable for snapshots)."""
        return json.dumps(self.to_json(), sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False)
