"""Resting: the GM's ``[sheet: op="rest" rest="vigil" who=...]`` and the host's Rest event
(``{"action": "rest", "rest": "vigil", "who": "Ada"}``) bring back the charges of every item that
names the rest (docs/rules/items.md#138-recharge, ITM-RCHG-1..7)."""

from __future__ import annotations

from typing import Any

from ..rules import reasons
from ..rules.bags import item_of
from ..rules.context import TurnContext
from ..rules.game import Game
from ..rules.items import charges_left, charges_max, roll_amount
from ..rules.state import State
from ..ruleset.sheet import Rest as RestRule
from .answers import Answer, accepted
from .attrs import WHO_OR_PARTY
from .declare import Needs, Reader, Refusal, Request, action, attr, request
from .use import item_label


def _rest(raw: str | None, game: Game, state: State) -> RestRule | Refusal:
    """The rest ``rest=`` names by id or label; the only one when it names none."""
    rests = game.ruleset.rests
    wanted = (raw or "").strip().casefold()
    if not wanted:
        if len(rests) == 1:
            return rests[0]
        known = ", ".join(r.id for r in rests)
        return Refusal(reasons.MISSING_ATTRIBUTE,
                       f'Say which rest: rest="<id>" (one of: {known}); nothing changed.')
    found = next((r for r in rests if wanted in (r.id.casefold(), r.label.casefold())), None)
    if found is None:
        known = ", ".join(r.id for r in rests)
        return Refusal(reasons.UNKNOWN_REST,
                       f'There is no rest "{wanted[:40]}" (known: {known}); nothing changed.')
    return found


REST = Reader("rest", _rest, {"type": "string"}, (reasons.MISSING_ATTRIBUTE, reasons.UNKNOWN_REST))
"""``rest=``: a rest of the ruleset by id or label; the only one when there is one."""


@request
class Rest(Request):
    """A rest: every item that names it gets its charges back (ITM-RCHG-1..7)."""

    rest: RestRule = attr(REST, "the rest, by id or label",
                          shown="the only rest, when there is one")
    who: int | None = attr(WHO_OR_PARTY, "who rests", shown="the whole party")


REST_RECORD = {"rest": "the rest's id", "who": "who rested, comma separated",
               "recharged": "each item recharged: who, item, name, charges, max, gained"}
HAS_RESTS = Needs(lambda game: bool(game.ruleset.rests), reasons.NO_RESTS,
                  "This ruleset has no rests; nothing changed.")





def rest(game: Game, state: State, request: Rest, ctx: TurnContext,
         kind: str) -> tuple[State, Answer]:
    """ITM-RCHG-1..6: each resting character's items that name the rest get their charges
    back (``max``, or an amount never above ``max``); sheet and bag are one change."""
    tag, chosen = request.tag, request.rest
    # engine: a [sheet: op="rest"] without who= is the whole party resting
    everyone = list(range(len(state.characters)))
    resting = everyone if request.who is None else [request.who]
    new_state = state
    lines: list[str] = []
    recharged: list[dict[str, Any]] = []
    for index in resting:
        character = new_state.characters[index]
        bag = list(character.bag)
        back: list[str] = []
        for position, stack in enumerate(bag):  # OQ-34: every item in the bag, worn or not
            item = item_of(game, new_state, stack.item)
            if item is None or item.charges is None or item.charges.recharge is None:
                continue
            recharge = item.charges.recharge
            most = charges_max(item)
            left = charges_left(item, stack)
            if chosen.id not in recharge.rests or most is None or left is None:
                continue
            if recharge.amount == "max":  # ITM-RCHG-2
                after = most
            else:
                stream = ctx.stream(kind, f"rest/{index}/{position}")
                after = min(most, left + max(roll_amount(recharge.amount, stream), 0))
            after = max(after, left)
            bag[position] = stack.model_copy(update={"charges": after})
            label = item_label(game, stack)
            back.append(f"{label} {after}/{most} charges")  # ITM-RCHG-6
            recharged.append({"who": character.name, "item": stack.item, "name": label,
                              "charges": after, "max": most, "gained": after - left})
        if back:  # ITM-RCHG-4: the bag is written with the sheet, in one new character
            new_state = new_state.with_character(
                index, character.model_copy(update={"bag": tuple(bag)}))
        lines.append(f"{character.name}: {', '.join(back) if back else 'nothing to recharge'}")
    text = f"{chosen.label}. " + "; ".join(lines) + "."
    record: dict[str, Any] = {"rest": chosen.id,
                              "who": ", ".join(state.characters[i].name for i in resting),
                              "recharged": recharged}
    return new_state, accepted(tag, text, record)


@action("sheet", "rest", Rest, needs=HAS_RESTS, record=REST_RECORD)
def rest_tag(game: Game, state: State, request: Rest, ctx: TurnContext) -> tuple[State, Answer]:
    """``[sheet: op="rest" rest=... who=...]`` (ITM-RCHG-3, ITM-RCHG-5)."""
    return rest(game, state, request, ctx, "sheet")


@action("event", "rest", Rest, needs=HAS_RESTS, record=REST_RECORD)
def rest_event(game: Game, state: State, request: Rest,
               ctx: TurnContext) -> tuple[State, Answer]:
    """The host's Rest button, ``rest(character, rest_id)`` (ITM-RCHG-3)."""
    return rest(game, state, request, ctx, "event")
