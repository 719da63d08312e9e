"""What the example tags of the GM instructions are filled with: real names from
this ruleset and this party, never a placeholder or a list of alternatives inside a tag — a
small model copies an example tag as it stands, ``<D|C|B>`` and all.

Every pick is made by order (the catalog's, the party's), never by set iteration or chance, and
reads only the ruleset and the party's names, never a bag: the same ruleset and party give the
same instructions on every turn, so a model server can keep the front of the prompt cached."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass

from tagparse import render

from ..rules.game import CatalogItem, Game
from ..rules.state import State

FOE = "Wolf"
"""The foe every fight example names: an ordinary beast, the lowest rank and tier."""
FOE_COUNT = 2
FOE_NAMES = tuple(f"{FOE} {n}" for n in range(1, FOE_COUNT + 1))
"""What the engine calls the foes ``[combat: op="start" foe="Wolf" count="2"]`` brings."""
PLACE = "Millbrook"


@dataclass(frozen=True, slots=True)
class Party:
    """The names the examples give to heroes: the player's character, then the other members
    in the party's order. Empty when the instructions are written without a party: the
    examples then leave ``who=`` out (it defaults to the player's character)."""

    names: tuple[str, ...] = ()

    @property
    def hero(self) -> str | None:
        """The player's character."""
        return self.names[0] if self.names else None

    @property
    def other(self) -> str | None:
        """A second member (a giver's taker, an ally), or None in a party of one."""
        return self.names[1] if len(self.names) > 1 else None


def party_of(state: State) -> Party:
    """The party's names, the player's character first. Members do not change from turn to
    turn, so neither do the instructions written from them."""
    player = state.character_index(None)
    first = [state.characters[player].name] if player is not None else []
    return Party((*first, *(c.name for i, c in enumerate(state.characters) if i != player)))


def example(kind: str, **attrs: str | None) -> str:
    """An example tag in canonical form; an attribute given as None is left out, and
    ``with_`` is written ``with=``."""
    return render(kind, [(name.rstrip("_"), value) for name, value in attrs.items()
                         if value is not None])


def _shown(game: Game) -> list[CatalogItem]:
    """The catalog's items a game can have whatever its layers: none a layer hides, no
    service, no fake."""
    hidden = {ref for layer in game.ruleset.layers for ref in layer.hides}
    return [c for c in game.items.values()
            if c.ref not in hidden and not c.item.service and c.item.passes_for is None]


def _ammunition(game: Game) -> set[str]:
    return {c.item.attack.ammo.tag for c in game.items.values()
            if c.item.attack is not None and c.item.attack.ammo is not None}


def join_line(roles: list[str]) -> str:
    """More foes joining a fight by turns (formula, outcome): the first role, tier 1."""
    return ("- More foes join: " + example("combat", op="join", foe=FOE, role=roles[0], tier="1")
            + f" (roles: {', '.join(roles)})")


END_LINE = ("- It ends: " + example("combat", op="end", outcome="fled")
            + " (or victory, defeat, truce); felling the last foe ends it in victory by itself.")


def plain_item(game: Game) -> CatalogItem | None:
    """An everyday thing of the catalog to pick up, drop, give, buy: no weapon, ammunition,
    gear worn in a slot, bound or used item, one with a cost where there is one; the first of
    the category that has most such things (gear, rather than a stray arrow)."""
    ammunition = _ammunition(game)
    plain = [c for c in _shown(game)
             if c.item.attack is None and not c.item.slots and c.item.binds is None
             and c.item.use is None and c.item.charges is None
             and not ammunition.intersection(c.item.tags)]
    priced = [c for c in plain if c.item.cost is not None and c.item.cost.unit in game.coins]
    found = priced or plain or _shown(game)
    if not found:
        return None
    category = Counter(c.item.category for c in found).most_common(1)[0][0]
    return next(c for c in found if c.item.category == category)


def item_where(game: Game, test: Callable[[CatalogItem], bool]) -> CatalogItem | None:
    """The first item of the catalog that passes ``test``."""
    return next((c for c in _shown(game) if test(c)), None)


def count_of(item: CatalogItem, count: int) -> str | None:
    """``count=`` for an example with ``count`` of ``item``; None for an item that does not
    stack (one at a time)."""
    return str(count) if item.stack_limit > 1 else None


def coin(game: Game) -> str | None:
    """The coin prices are mostly in (the first such), else the first coin no layer takes out;
    by its label, as a model writes an amount: ``shillings``."""
    removed = {c for layer in game.ruleset.layers for c in layer.coins}
    coins = [ident for ident in game.coins if ident not in removed] or list(game.coins)
    used = Counter(c.item.cost.unit for c in _shown(game)
                   if c.item.cost is not None and c.item.cost.unit in coins)
    ident = used.most_common(1)[0][0] if used else next(iter(coins), None)
    return game.coins[ident].coin.label if ident is not None else None


def new_name(game: Game) -> str:
    """A name for an invented item that no catalog item has."""
    name = "Bone flute"
    while game.find_item(name) is not None:
        name = "Carved " + name.casefold()
    return name
