"""Money: coins in bags, paying with change, earning (docs/rules/items.md#16-money,
ITM-MONEY/PAY/EARN)."""

from __future__ import annotations

import re

from ..rules import reasons
from ..rules.carry import distribute
from ..rules.context import TurnContext
from ..rules.game import MAX_STACKS_PER_BAG, Game
from ..rules.layers import removed_coins
from ..rules.money import (
    Amount,
    coin_named,
    coin_thing,
    count_text,
    exchange_coins,
    exchanged,
    family_coins,
    held_coins,
    make_change,
)
from ..rules.state import Character, JournalEntry, State
from ..ruleset import Cost, Currency
from . import fight
from .answers import Answer, accepted, refused
from .attrs import WHO, WHO_OR_PARTY
from .declare import Reader, Refusal, Request, action, attr, request
from .examples import Party, coin, example

MAX_AMOUNT_DIGITS = 9  # a tag pays or earns at most 999,999,999 coins at once
_AMOUNT = re.compile(r"\s*(\d+)\s*(.+?)\s*")
# 1.5, 1e400, 2d6: not a whole count (a model may write dice where a count belongs)
_NOT_WHOLE = re.compile(r"\s*[+-]?\d*(?:[.,]\d|[eE][+-]?\d|[dD]\d)")


def _amount(raw: str | None, game: Game, state: State) -> Amount | Refusal:
    """``amount="3 shillings"`` → an :class:`Amount`, or why not."""
    if not game.coins:  # ITM-PAY-9, ITM-EARN-3
        return Refusal(reasons.NO_CURRENCIES, "This game has no coins.")
    text = (raw or "").strip()
    match = _AMOUNT.fullmatch(text[:200])
    if match is None or not match.group(1).isascii() or _NOT_WHOLE.match(text):
        return Refusal(reasons.BAD_AMOUNT, f'amount="{text[:60]}" is not a count and a coin '
                       '(write e.g. amount="3 shillings").')
    digits, name = match.groups()
    if len(digits.lstrip("0")) > MAX_AMOUNT_DIGITS or int(digits) < 1:
        return Refusal(reasons.BAD_AMOUNT,
                       f'amount="{text[:60]}" needs a whole count from 1 to 999999999.')
    info = coin_named(game, name, state)
    if info is None:  # ITM-PAY-8
        known = ", ".join(i.coin.label for c, i in game.coins.items()
                          if c not in removed_coins(game, state))
        return Refusal(reasons.UNKNOWN_COIN,
                       f'"{name[:60]}" is not a coin of this game ({known}).')
    return Amount(int(digits), info)


AMOUNT = Reader("amount", _amount, {"type": "string", "pattern": r"^\s*[0-9]+\s*\S.*$"},
                (reasons.NO_CURRENCIES, reasons.BAD_AMOUNT, reasons.UNKNOWN_COIN))
"""``amount=``: a whole count and a coin of the game by id or label, "3 shillings"."""


@request
class Pay(Request):
    """Pay out of one bag, with change (ITM-PAY-1..10)."""

    amount: Amount = attr(AMOUNT, "how much: a count and a coin")
    who: int = attr(WHO, "who pays", shown="the player")


@request
class Earn(Request):
    """Coins arrive: an add of that coin (ITM-EARN-1..3)."""

    amount: Amount = attr(AMOUNT, "how much: a count and a coin")
    who: int | None = attr(WHO_OR_PARTY, "whose bag; without who=, whoever can carry it",
                           shown="the party")


def _teach_money(game: Game, party: Party) -> list[str]:
    """Which way the money moves, said plainly — a model used pay= for money the party received."""
    unit = coin(game)
    if unit is None:  # ITM-MONEY-10: only the commands this ruleset answers
        return []
    coins = ", ".join(info.coin.label for info in game.coins.values())
    return ["- The party gets money (a reward, wages, coins found): " + example(
                "inventory", action="earn", amount=f"5 {unit}", who=party.hero),
            "- The party gives money (buying, a bribe, a toll): " + example(
                "inventory", action="pay", amount=f"2 {unit}", who=party.hero),
            f"  Coins: {coins}."]


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


@action("inventory", "pay", Pay, teach=_teach_money,
        reasons=(reasons.CANNOT_AFFORD, reasons.TOO_MANY_STACKS),
        record={"who": "who paid", "amount": "what was paid, as a count and a coin",
                "paid": "the coins given, by id", "change": "the coins that came back, by id"})
def pay(game: Game, state: State, request: Pay, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="pay" amount=... who=...]`` out of one bag, with change."""
    tag, amount, who = request.tag, request.amount, request.who
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
    bag = exchange_coins(game, character, paid, change)
    if bag is None:
        return state, refused(tag, reasons.TOO_MANY_STACKS,
                              f"{character.name}'s bag cannot take the change "
                              f"(at most {MAX_STACKS_PER_BAG} stacks).")
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


@action("inventory", "earn", Earn, reasons=(reasons.NOTHING_CARRIED,),
        record={"who": "whose bags took the coins, comma separated",
                "amount": "what was earned", "coin": "the coin's id",
                "count": "how many were put into bags",
                "left": "how many nobody could carry (only when some)"})
def earn(game: Game, state: State, request: Earn, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="earn" amount=... who=...]``: an add of that coin (ITM-EARN-2)."""
    tag, amount, who = request.tag, request.amount, request.who
    # ITM-EARN-2: into who='s bag, or by the carry rule; coins weigh by perWeight (ITM-MONEY-2).
    heroes = fight.sharers(game, state, ctx) if who is None else ()
    new_state, placements, left = (  # D100-PARTY-10: a narrative victory's coins are split
        fight.split(game, state, coin_thing(amount.coin), amount.count, heroes)
        if heroes else distribute(game, state, coin_thing(amount.coin), amount.count, who))
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
