"""Money: coins in bags, paying with change, earning (spec/items.md §16, ITM-MONEY/PAY/EARN)."""

from __future__ import annotations

import re
from dataclasses import dataclass

from tagparse import Tag

from . import reasons
from .answers import Answer, accepted, refused
from .bags import (
    Thing,
    add_to_bag,
    bag_index,
    resolve_who,
    resolve_who_or_shared,
    take_from_bag,
)
from .carry import distribute
from .context import TurnContext
from .game import DEFAULT_STACK, MAX_STACKS_PER_BAG, CoinInfo, Game
from .layers import removed_coins
from .ruleset import Cost, Currency
from .state import Character, JournalEntry, State

MAX_AMOUNT_DIGITS = 9  # a tag pays or earns at most 999,999,999 coins at once
_AMOUNT = re.compile(r"\s*(\d+)\s*(.+?)\s*")
# 1.5, 1e400, 2d6: not a whole count (a model may write dice where a count belongs)
_NOT_WHOLE = re.compile(r"\s*[+-]?\d*(?:[.,]\d|[eE][+-]?\d|[dD]\d)")


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


def parse_amount(game: Game, state: State, text: str | None) -> Amount | tuple[str, str]:
    """``amount="3 shillings"`` → an :class:`Amount`, or (reason code, sentence)."""
    if not game.coins:  # ITM-PAY-9, ITM-EARN-3
        return reasons.NO_CURRENCIES, "This game has no coins."
    raw = (text or "").strip()
    match = _AMOUNT.fullmatch(raw[:200])
    if match is None or not match.group(1).isascii() or _NOT_WHOLE.match(raw):
        return reasons.BAD_AMOUNT, (f'amount="{raw[:60]}" is not a count and a coin '
                                    '(write e.g. amount="3 shillings").')
    digits, name = match.groups()
    if len(digits.lstrip("0")) > MAX_AMOUNT_DIGITS or int(digits) < 1:
        return reasons.BAD_AMOUNT, f'amount="{raw[:60]}" needs a whole count from 1 to 999999999.'
    info = coin_named(game, name, state)
    if info is None:  # ITM-PAY-8
        known = ", ".join(i.coin.label for c, i in game.coins.items()
                          if c not in removed_coins(game, state))
        return reasons.UNKNOWN_COIN, f'"{name[:60]}" is not a coin of this game ({known}).'
    return Amount(int(digits), info)


def family_coins(family: Currency) -> list[tuple[str, int]]:
    """The family's coins as (id, value), largest first."""
    return sorted(((u.id, u.value) for u in family.units), key=lambda c: -c[1])


def held_coins(character: Character, family: Currency) -> dict[str, int]:
    """How many of each of the family's coins the bag holds (coins never held are left out).

    Looks up each coin's stacks through the bag's index, so a purse costs the coin stacks it
    has, not the whole bag (issue 12: paying from a bag of hundreds of stacks)."""
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


def coin_listing(game: Game, coins: dict[str, int], family: Currency) -> str:
    """``crowns ×1, shillings ×2``: plural labels even for one (ITM-PAY-6), largest first."""
    return ", ".join(f"{game.coins[c].coin.label} ×{coins[c]}"
                     for c, _ in family_coins(family) if coins.get(c))


def exchange_text(game: Game, given: dict[str, int], back: dict[str, int],
                  family: Currency) -> str:
    """ITM-PAY-5: ``Paid with crowns ×1; shillings ×2 back.`` (``Paid with shillings ×3.``
    when nothing comes back), from :func:`exchanged` coins."""
    text = f"Paid with {coin_listing(game, given, family)}"
    return text + (f"; {coin_listing(game, back, family)} back." if back else ".")


def coin_thing(info: CoinInfo) -> Thing:
    return Thing(info.coin.label, None, info.coin.id, DEFAULT_STACK)


def count_text(info: CoinInfo, count: int) -> str:
    """ITM-MONEY-8: ``1 penny``, ``12 pennies``."""
    return f"{count} {info.name(count)}"


def pay(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="pay" amount=... who=...]`` out of one bag, with change."""
    amount = parse_amount(game, state, tag.get("amount"))
    if isinstance(amount, tuple):
        return state, refused(tag, *amount)
    who = resolve_who(state, tag)
    if isinstance(who, Answer):
        return state, who
    character = state.characters[who]
    family = amount.coin.family
    held = held_coins(character, family)
    plan = make_change(family_coins(family), held, amount.value)
    shown = count_text(amount.coin, amount.count)
    if plan is None:  # ITM-PAY-7, ITM-PAY-10
        return state, refused(tag, reasons.CANNOT_AFFORD,
                              f"{character.name} cannot afford {shown}: "
                              f"{short_of(game, character, family)}.")
    paid, change = plan
    bag = character.bag
    for coin, count in paid.items():
        bag, _ = take_from_bag(character.model_copy(update={"bag": bag}),
                               coin_thing(game.coins[coin]), "", count)
    for coin, count in change.items():
        grown = add_to_bag(bag, coin_thing(game.coins[coin]), count)
        if grown is None:
            return state, refused(tag, reasons.TOO_MANY_STACKS,
                                  f"{character.name}'s bag cannot take the change "
                                  f"(at most {MAX_STACKS_PER_BAG} stacks).")
        bag = grown
    given, back = exchanged(paid, change)
    journal = JournalEntry(turn=ctx.turn_label, text=f"{character.name} paid {shown}.")
    new_state = state.with_bag(who, bag)
    new_state = new_state.model_copy(update={"journal": (*state.journal, journal)})
    record = {"who": character.name, "amount": shown, "paid": given, "change": back}
    return new_state, accepted(tag, exchange_text(game, given, back, family), record)


def short_of(game: Game, character: Character, family: Currency) -> str:
    """Why a purse cannot pay, as the end of a sentence: ``the coins in the purse come to
    only 43 pennies`` (in the family's smallest coin), or ``the purse holds none of these
    coins``."""
    worth = sum(held_coins(character, family).get(c, 0) * v for c, v in family_coins(family))
    if not worth:
        return "the purse holds none of these coins"
    smallest = game.coins[family_coins(family)[-1][0]]
    return f"the coins in the purse come to only {count_text(smallest, worth)}"


def earn(game: Game, state: State, tag: Tag, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="earn" amount=... who=...]``: an add of that coin (ITM-EARN-2)."""
    amount = parse_amount(game, state, tag.get("amount"))
    if isinstance(amount, tuple):
        return state, refused(tag, *amount)
    who = resolve_who_or_shared(state, tag)
    if isinstance(who, Answer):
        return state, who
    # ITM-EARN-2: into who='s bag, or by the carry rule; coins weigh by perWeight (ITM-MONEY-2).
    new_state, placements, left = distribute(game, state, coin_thing(amount.coin),
                                             amount.count, who)
    if not placements:
        target = state.characters[who].name if who is not None else "Nobody in the party"
        return state, refused(tag, reasons.NOTHING_CARRIED,
                              f"{target} can carry none of {count_text(amount.coin, amount.count)}"
                              "; nothing was added.")
    received = [(new_state.characters[i].name, count_text(amount.coin, n)) for i, n in placements]
    journal = tuple(JournalEntry(turn=ctx.turn_label, text=f"{name} earned {shown}.")
                    for name, shown in received)
    new_state = new_state.model_copy(update={"journal": (*state.journal, *journal)})
    shown = count_text(amount.coin, amount.count)
    text = "; ".join(f"{name} receives {part}" for name, part in received) + "."
    if left:  # ITM-CARRY-7
        text += f" {count_text(amount.coin, left)} stay behind: nobody can carry more."
    record: dict[str, object] = {"who": ", ".join(name for name, _ in received), "amount": shown,
                                 "coin": amount.coin.coin.id, "count": amount.count - left}
    if left:
        record["left"] = left
    return new_state, accepted(tag, text, record)


def purse_line(game: Game, character: Character, state: State | None = None) -> str:
    """ITM-MONEY-6: ``Coin worth 432 pennies`` per family held, or ``no coins``."""
    parts = []
    removed = removed_coins(game, state)
    families = game.ruleset.items.currencies if game.ruleset.items else []
    for family in families:
        held = held_coins(character, family)
        worth = sum(held.get(c, 0) * v for c, v in family_coins(family) if c not in removed)
        if worth:
            smallest = game.coins[family_coins(family)[-1][0]]
            parts.append(f"{family.label} worth {count_text(smallest, worth)}")
    return "; ".join(parts) if parts else "no coins"


def cost_text(game: Game, cost: Cost) -> str:
    """ITM-MONEY-7: ``costs 3 shillings`` (``costs 1 shilling`` for one, ITM-MONEY-8)."""
    return f"costs {count_text(game.coins[cost.unit], cost.amount)}"
