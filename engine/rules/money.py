"""Coins in bags: what a purse holds and how change is made (docs/rules/items.md#16-money,
ITM-MONEY, ITM-PAY-4)."""

from __future__ import annotations

from dataclasses import dataclass

from ..ruleset import Currency
from .bags import Thing, add_to_bag, bag_index, take_from_bag
from .game import DEFAULT_STACK, CoinInfo, Game
from .layers import removed_coins
from .state import Character, Stack, State


@dataclass(frozen=True, slots=True)
class Amount:
    """A count of one coin, as ``amount=`` names it (ITM-PAY-2)."""

    count: int
    coin: CoinInfo

    @property
    def value(self) -> int:
        """The amount in the family's smallest coin."""
        return self.count * self.coin.coin.value


def coin_named(game: Game, name: str, state: State | None = None) -> CoinInfo | None:
    """ITM-PAY-2: a coin by id or label, singular (``one``) or plural, ignoring case.

    A coin a game layer takes out of play is not found.
    """
    wanted = name.strip().casefold()
    removed = removed_coins(game, state)
    for coin_id, info in game.coins.items():
        names = {coin_id.casefold(), info.coin.label.casefold()}
        if info.coin.one is not None:
            names.add(info.coin.one.casefold())
        if wanted in names and coin_id not in removed:
            return info
    return None


def family_coins(family: Currency) -> list[tuple[str, int]]:
    """The family's coins as (id, value), largest first."""
    return sorted(((u.id, u.value) for u in family.units), key=lambda c: -c[1])


def held_coins(character: Character, family: Currency) -> dict[str, int]:
    """How many of each of the family's coins the bag holds (coins never held are left out).

    Looks up each coin's stacks through the bag's index, so a purse costs the coin stacks it has,
    not the whole bag (a bag may hold hundreds of stacks)."""
    bag = character.bag
    index = bag_index(bag)
    held: dict[str, int] = {}
    for unit in family.units:
        positions = index.get(("coin", unit.id))
        if positions:
            held[unit.id] = sum(bag[i].count for i in positions)
    return held


def make_change(coins: list[tuple[str, int]], held: dict[str, int],
                amount: int) -> tuple[dict[str, int], dict[str, int]] | None:
    """ITM-PAY-4: what to pay and what comes back, or None when the purse cannot afford it.

    ``coins`` is the family, largest first; values are in its smallest coin.
    """
    if sum(held.get(c, 0) * v for c, v in coins) < amount:  # step 1
        return None
    paid: dict[str, int] = {}
    rest = amount
    for coin, value in coins:  # step 2: largest fitting coins first
        k = min(held.get(coin, 0), rest // value)
        if k:
            paid[coin] = k
            rest -= k * value
    change: dict[str, int] = {}
    if rest > 0:  # step 3: break the smallest coin still held that covers the rest
        coin, value = next((c, v) for c, v in reversed(coins)
                           if v >= rest and held.get(c, 0) - paid.get(c, 0) > 0)
        paid[coin] = paid.get(coin, 0) + 1
        back = value - rest
        for smaller, smaller_value in coins:  # step 4: change, largest smaller coin first
            if smaller_value < value and back >= smaller_value:
                change[smaller] = back // smaller_value
                back %= smaller_value
    return paid, change


def exchanged(paid: dict[str, int],
              change: dict[str, int]) -> tuple[dict[str, int], dict[str, int]]:
    """What changed hands: a coin ITM-PAY-4 both pays (step 2) and gives back (step 4) — the
    seven pennies paid towards 3 shillings before a crown is broken — counts once, on the
    side it ends up on. The bag is the same either way."""
    given = {c: n - change.get(c, 0) for c, n in paid.items() if n > change.get(c, 0)}
    back = {c: n - paid.get(c, 0) for c, n in change.items() if n > paid.get(c, 0)}
    return given, back


def coin_thing(info: CoinInfo) -> Thing:
    return Thing(info.coin.label, None, info.coin.id, DEFAULT_STACK)


def count_text(info: CoinInfo, count: int) -> str:
    """ITM-MONEY-8: ``1 penny``, ``12 pennies``."""
    return f"{count} {info.name(count)}"


def exchange_coins(game: Game, character: Character, paid: dict[str, int],
                   change: dict[str, int]) -> tuple[Stack, ...] | None:
    """ITM-PAY-4/5: the bag after ``paid`` leaves it and ``change`` comes back; None when the
    change needs more stacks than one bag takes (OQ-4)."""
    bag = character.bag
    for coin_id, count in paid.items():
        bag, _ = take_from_bag(character.model_copy(update={"bag": bag}),
                               coin_thing(game.coins[coin_id]), "", count)
    for coin_id, count in change.items():
        grown = add_to_bag(bag, coin_thing(game.coins[coin_id]), count)
        if grown is None:
            return None
        bag = grown
    return bag
