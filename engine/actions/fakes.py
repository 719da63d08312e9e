"""Fakes and how they are found out (docs/rules/items.md#19-honest-and-dishonest-sellers-fakes and
docs/rules/items.md#20-detecting-fakes: ITM-FAKE-*, ITM-TELL-*, ITM-INSP-*, ITM-NOTICE-*,
ITM-SEE-*).

A fake in a bag is a stack whose ``item`` is what it really is and whose ``shows_as`` is the item
it passes for (ITM-FAKE-9): its name, and everything the player sees, is the passes-for item's;
the sheet reads what it really is (ITM-FAKE-17). Found out (ITM-FAKE-16), the stack takes its
own name and ``shows_as`` goes.

Checks on fakes (tells, a seller's manner) are rolled with the ruleset's own resolution through
the check pipeline, on dice kept apart from the reply's own ``[skill_check:]`` tags.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from tagparse import Tag

from ..rules import reasons
from ..rules.bags import find_thing
from ..rules.checks.modifiers import collect
from ..rules.checks.read import Rolled
from ..rules.context import TurnContext
from ..rules.fakes import ADVANTAGE_POINTS, fakes_of, find_way, reveal_stacks, sees_through
from ..rules.game import CatalogItem, Game
from ..rules.market import find_seller, market_of, offers, sellers_here
from ..rules.sheet import SheetView
from ..rules.state import Character, Looked, Stack, State
from ..ruleset.fakes import RevealWay, Tell
from ..ruleset.market import Seller
from ..ruleset.values import Threshold
from .answers import Answer, accepted, refused
from .attrs import HELD, TEXT, WHO, read_held
from .checks import skill_check
from .checks.pipeline import effective_resolution, sheet_parts, value_check
from .declare import Reading, Request, action, attr, request

# ---------------------------------------------------------------------------------------------
# What a fake is and how it shows (ITM-FAKE-2, ITM-FAKE-9, ITM-FAKE-16)


# ---------------------------------------------------------------------------------------------
# Checks on fakes: tells and manner (ITM-TELL-1..8, OQ-58, OQ-59)


@dataclass(frozen=True, slots=True)
class Check:
    """One check a character could make: a fake's tell or a dishonest seller's manner."""

    tell: Tell
    fake: CatalogItem | None  # the fake whose tell it is; None: the seller's manner
    seller: Seller | None = None


def _meets(view: SheetView, row: Threshold) -> bool:
    return view.value(row.value) >= row.at_least


def can_make(game: Game, state: State, character: Character, tell: Tell) -> bool:
    """ITM-TELL-4/5, OQ-58: every ``needs`` row, one ``needsAny`` row, one item of
    ``carries`` in the checker's own bag — and a check its sheet has."""
    view = SheetView(game, character, state)
    if not all(_meets(view, row) for row in tell.needs):
        return False
    if tell.needs_any and not any(_meets(view, row) for row in tell.needs_any):
        return False
    if tell.carries is not None:
        wanted = set(tell.carries.any_of)
        if not any(s.item in wanted and s.shows_as is None for s in character.bag):
            return False
    return True


def lean(game: Game, state: State, character: Character, tell: Tell) -> int:
    """ITM-TELL-6: +1 with advantage, −1 with disadvantage, 0 when both or neither."""
    view = SheetView(game, character, state)
    up = any(_meets(view, row) for row in tell.advantage_if)
    down = any(_meets(view, row) for row in tell.disadvantage_if)
    return 0 if up == down else (1 if up else -1)


def _kind(tell: Tell) -> tuple[str, str]:
    check = tell.check
    if check.skill is not None:
        return "skill", check.skill
    if check.ability is not None:
        return "ability", check.ability
    return "value", ""


def check_number(game: Game, state: State, character: Character, tell: Tell) -> float:
    """The number a check adds to the dice: the sheet's part of it with what conditions and
    items add (as ``[skill_check:]`` reads it), or the sheet value a ``value`` check names."""
    view = SheetView(game, character, state)
    kind, ident = _kind(tell)
    if kind == "value":
        assert tell.check.value is not None
        applied = collect(game, state, character, view, "ability", "")
        return view.value(tell.check.value) + applied.flat
    applied = collect(game, state, character, view, kind, ident)  # type: ignore[arg-type]
    res = game.ruleset.resolution
    if res is None:
        return 0.0
    ability: str | None = ident
    if kind == "skill":
        row = next((s for s in game.ruleset.sheet.skills if s.id == ident), None)
        ability = row.ability if row is not None else None
    effective, _ = effective_resolution(res, kind, ident, view)  # type: ignore[arg-type]
    _, part, rank, bonus, _ = sheet_parts(game, effective, character, view,
                                           kind, ident, ability, {})  # type: ignore[arg-type]
    return part + rank + bonus + applied.flat


def chance(game: Game, state: State, character: Character, tell: Tell) -> float:
    """OQ-59, ITM-NOTICE-1: modifier − dc, advantage +5, disadvantage −5."""
    return (check_number(game, state, character, tell) - tell.dc
            + ADVANTAGE_POINTS * lean(game, state, character, tell))


def label_of(game: Game, tell: Tell) -> str:
    """What a check rolls, in the sheet's words (``Arcana``, ``Poisoner's kit``)."""
    sheet = game.ruleset.sheet
    check = tell.check
    rows: Sequence[tuple[str, str]] = (
        [(s.id, s.label) for s in sheet.skills] if check.skill is not None
        else [(a.id, a.label) for a in sheet.abilities] if check.ability is not None
        else [(d.id, d.label) for d in sheet.derived])
    ident = check.skill or check.ability or (check.value.derived if check.value else None)
    return next((label for row_id, label in rows if row_id == ident), ident or "Sheet")


@dataclass(frozen=True, slots=True)
class Roll:
    """One check rolled: success, how far past the dc, and the record of the dice."""

    success: bool
    margin: float
    record: dict[str, object]


def _value_roll(game: Game, state: State, character: Character, tell: Tell, mode: int,
                check_ctx: TurnContext) -> Rolled | None:
    """A ``value`` check: that number is the sheet number (as a use's gate reads one)."""
    assert tell.check.value is not None
    asked = "advantage" if mode > 0 else "disadvantage" if mode < 0 else None
    return value_check(game, state, character, tell.check.value, label_of(game, tell), tell.dc,
                       check_ctx, asked)


def roll_check(game: Game, state: State, character: Character, tell: Tell,
               check_ctx: TurnContext) -> Roll | None:
    """ITM-INSP-3: roll one check with the ruleset's own dice; None without a resolution."""
    if game.ruleset.resolution is None:
        return None
    mode = lean(game, state, character, tell)
    kind, ident = _kind(tell)
    if kind == "value":
        rolled = _value_roll(game, state, character, tell, mode, check_ctx)
        if rolled is None:
            return None
        return Roll(rolled.success, rolled.value - tell.dc,
                    {"rolls": rolled.rolls, "total": rolled.value, "dc": tell.dc})
    attrs = [(kind, ident), ("dc", str(tell.dc)), ("who", character.name)]
    if mode:
        attrs.append(("mode", "advantage" if mode > 0 else "disadvantage"))
    _, answer = skill_check.answer(game, state, Tag("skill_check", tuple(attrs), 0, 0, "", None),
                            check_ctx)
    if not answer.ok:
        return None
    total = answer.record.get("total", 0)
    margin = float(total) - tell.dc if isinstance(total, int | float) else 0.0
    return Roll(bool(answer.record.get("success")), margin,
                {k: answer.record[k] for k in ("rolls", "total", "dc") if k in answer.record})


def checks_on(game: Game, fake: CatalogItem | None, shown: CatalogItem | None,
              seller: Seller | None) -> list[Check]:
    """ITM-INSP-3/6, OQ-61: the tells of the fake (for a genuine item, of every fake that
    passes for it), then a dishonest seller's manner."""
    found: list[Check] = []
    if fake is not None:
        found += [Check(t, fake) for t in fake.item.tells or []]
    elif shown is not None:
        for other in fakes_of(game, shown.ref):
            found += [Check(t, other) for t in other.item.tells or []]
    if seller is not None and not seller.honest and seller.manner is not None:
        found.append(Check(seller.manner, None, seller))  # ITM-TELL-7
    return found


def _check_ctx(ctx: TurnContext, purpose: str) -> TurnContext:
    """The dice of a check on fakes: the pipeline's stream under a seed kept apart."""
    return replace(ctx, seed=f"{ctx.seed}\x1ffakes/{purpose}")


# ---------------------------------------------------------------------------------------------
# Noticing before a purchase (ITM-NOTICE-1..7, OQ-61)


@dataclass(frozen=True, slots=True)
class Noticed:
    """Who noticed what before a buy at a dishonest seller."""

    who: str
    check: str  # what they checked (``Insight``)
    says: str | None
    about: str  # "item" or "seller"


def notice(game: Game, state: State, buyer: int, seller: Seller, fake: CatalogItem,
           ctx: TurnContext) -> Noticed | None:
    """ITM-NOTICE-1/2/7, OQ-61: party members other than the buyer, in party order, each
    check in order (tells, then manner); the first to reach a dc has noticed."""
    block = game.ruleset.items
    base = block.passive_base if block is not None else 10
    by_roll = block is not None and block.warn_by == "roll"
    checks = checks_on(game, fake, None, seller)
    for index, character in enumerate(state.characters):
        if index == buyer:
            continue
        for number, check in enumerate(checks):
            if not can_make(game, state, character, check.tell):
                continue
            if by_roll:
                rolled = roll_check(game, state, character, check.tell,
                                    _check_ctx(ctx, f"notice/{index}/{number}"))
                success = rolled is not None and rolled.success
            else:
                score = (base + check_number(game, state, character, check.tell)
                         + ADVANTAGE_POINTS * lean(game, state, character, check.tell))
                success = score >= check.tell.dc
            if success:
                return Noticed(character.name, label_of(game, check.tell), check.tell.says,
                               "item" if check.fake is not None else "seller")
    return None


# ---------------------------------------------------------------------------------------------
# [inventory: action="reveal"] (ITM-FAKE-11)


def _named_stacks(game: Game, state: State, character: Character, name: str) -> list[int]:
    """The stacks ``item=`` names: by the item they show as, or by their own name."""
    thing = find_thing(game, name, state)
    wanted = name.strip().casefold()
    ref = thing.item if thing is not None else None
    return [i for i, s in enumerate(character.bag) if s.coin is None and (
        (ref is not None and ref in (s.item, s.shows_as)) or s.name.casefold() == wanted)]


def _looked_at(value: str, values: Mapping[str, Any], game: Game, state: State) -> Reading[str]:
    """An item of the bag as :func:`read_held` reads it, unless ``seller=`` names whose ware
    it is."""
    return value if values.get("seller") else read_held(value, values, game, state)


LOOKED_AT = replace(HELD, settle=_looked_at)
"""``item=`` of an inspect: an item of the bag (:data:`HELD`), or a seller's ware."""


def _item(verb: str) -> str:
    return attr(LOOKED_AT, "the item, by the name it shows as or its own",
                missing=f'Say which item: [inventory: action="{verb}" item="<name>" '
                'who="<character>"].')


@request
class Reveal(Request):
    """The fake is found out; from then on it is its true item (ITM-FAKE-11, ITM-FAKE-16)."""

    item: str = _item("reveal")
    who: int = attr(WHO, "whose bag holds it", shown="the player")


@request
class Inspect(Request):
    """One close look at an item in the bag or a seller's ware (ITM-INSP-1..9), or a way of
    seeing through fakes (ITM-SEE-4..8)."""

    item: str = _item("inspect")
    who: int = attr(WHO, "who looks", shown="the player")
    seller: str = attr(TEXT, "a seller here: look at that seller's ware instead of the bag",
                       shown="the bag")
    with_: str = attr(TEXT, "a way of seeing through fakes (revealsFakes), by id or label",
                      name="with", shown="a check")


@action("inventory", "reveal", Reveal, reasons=(reasons.NOT_HELD, reasons.NOT_A_FAKE),
        record={"item": "the true item's reference", "name": "its true name",
                "was": "what it passed for", "who": "whose bag"})
def reveal(game: Game, state: State, request: Reveal, ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="reveal" item="<shown name>" who="<name>"]``: the fake is found
    out, and from then on it is its true item (ITM-FAKE-11, ITM-FAKE-16)."""
    tag, name, who = request.tag, request.item, request.who
    character = state.characters[who]
    named = _named_stacks(game, state, character, name)
    if not named:
        return state, refused(tag, reasons.NOT_HELD, f"{character.name} has no {name[:80]}.")
    disguised = [i for i in named if character.bag[i].shows_as is not None]
    if not disguised:
        return state, refused(tag, reasons.NOT_A_FAKE,
                              f"{character.bag[named[-1]].name} is what it seems: nothing to "
                              "reveal.")
    shown = character.bag[disguised[0]].name
    new_state = reveal_stacks(game, state, who, disguised, "revealed", ctx.turn_label)
    truth = new_state.characters[who].bag[disguised[0]]
    record = {"item": truth.item, "name": truth.name, "was": shown, "who": character.name}
    return new_state, accepted(tag, f"{character.name}'s {shown} is really {truth.name}; from "
                                    f"now on it is called {truth.name}.", record)


# ---------------------------------------------------------------------------------------------
# [inventory: action="inspect"] (ITM-INSP-1..9, ITM-SEE-1..8)


@dataclass(frozen=True, slots=True)
class Target:
    """What an inspection looks at: a bag stack or a seller's ware, genuine or a fake."""

    shown: CatalogItem | None  # the item it is shown (or offered) as
    fake: CatalogItem | None  # what it really is, when it is a fake
    stack: int | None  # its bag position, for a bag item
    seller: Seller | None  # the seller, for a ware
    name: str


def _bag_target(game: Game, state: State, tag: Tag, who: int, name: str) -> Target | Answer:
    character = state.characters[who]
    named = _named_stacks(game, state, character, name)
    if not named:
        return refused(tag, reasons.NOT_HELD, f"{character.name} has no {name[:80]}.")
    untried = [i for i in named if character.name not in character.bag[i].inspected_by]
    index = (untried or named)[-1]
    stack = character.bag[index]
    entry = game.items.get(stack.item or "")
    if stack.shows_as is not None and entry is not None:
        return Target(game.items.get(stack.shows_as), entry, index, None, stack.name)
    return Target(entry, None, index, None, stack.name)


def _ware_target(game: Game, state: State, tag: Tag, name: str,
                 wanted: str) -> Target | Answer:
    market = market_of(game)
    where = state.place
    if market is None:
        return refused(tag, reasons.NO_MARKET, "This ruleset has no market: there are no wares "
                       "to inspect.")
    if where is None or where.size is None:
        return refused(tag, reasons.NO_PLACE, "No market place is in effect: there are no wares "
                       "to inspect.")
    seller = find_seller(market, wanted)
    if seller is None or seller not in sellers_here(market, where.size):
        return refused(tag, reasons.NO_SELLER, f'There is no seller "{wanted[:60]}" at '
                       f"{where.name}.")
    entry = game.find_item(name)
    if entry is None:
        return refused(tag, reasons.UNKNOWN_ITEM, f'"{name[:80]}" is not an item of this '
                       "ruleset.")
    today = [o for o in offers(game, state, market, where, entry, [seller], named=True)
             if o.left is None or o.left > 0]
    if not today:
        return refused(tag, reasons.NO_SELLER, f"The {seller.label} does not offer "
                       f"{entry.label} today.")
    return Target(entry, today[0].fake, None, seller, entry.label)


def _tried(state: State, target: Target, who: str) -> bool:
    if target.stack is not None:
        character = next(c for c in state.characters if c.name == who)
        return who in character.bag[target.stack].inspected_by
    place = state.place
    assert place is not None and target.seller is not None and target.shown is not None
    return Looked(seller=target.seller.id, item=target.shown.ref, who=who) in place.looked


def _spend(state: State, target: Target, who: int) -> State:
    """ITM-INSP-7: the character's one attempt, on the stack or for the market day."""
    character = state.characters[who]
    if target.stack is not None:
        bag = list(character.bag)
        stack = bag[target.stack]
        bag[target.stack] = stack.model_copy(
            update={"inspected_by": (*stack.inspected_by, character.name)})
        return state.with_bag(who, tuple(bag))
    place = state.place
    assert place is not None and target.seller is not None and target.shown is not None
    looked = Looked(seller=target.seller.id, item=target.shown.ref, who=character.name)
    return state.model_copy(update={"place": place.model_copy(
        update={"looked": (*place.looked, looked)})})


def _with_way(game: Game, state: State, tag: Tag, ctx: TurnContext, target: Target, who: int,
              way: RevealWay) -> tuple[State, Answer]:
    """ITM-SEE-4..8: a way names the fakes it sees through; the rest give ``genuine`` (a way
    that sees through every fake) or ``unsure``. No attempt is spent."""
    character = state.characters[who]
    record: dict[str, object] = {"who": character.name, "with": way.id, "name": target.name}
    if target.fake is not None and sees_through(way, target.fake):  # ITM-SEE-5
        record["result"] = "fake"
        record["really"] = target.fake.label
        new_state = state
        if target.stack is not None:
            new_state = reveal_stacks(game, state, who, [target.stack], way.label,
                                      ctx.turn_label)
        return new_state, accepted(tag, f"{way.label} shows {character.name} that the "
                                        f"{target.name} is really {target.fake.label}.", record)
    everything = not way.tags and not way.items
    result = "genuine" if everything else "unsure"  # ITM-SEE-7, OQ-62
    record["result"] = result
    text = (f"{way.label} shows {character.name} nothing amiss: the {target.name} is genuine."
            if everything else f"{way.label} shows {character.name} nothing about the "
            f"{target.name}: unsure.")
    return state, accepted(tag, text, record)


INSPECT_RECORD = {"who": "who looked", "name": "what was looked at",
                  "check": "the check made", "success": "whether it succeeded",
                  "with": "the way used, by id",
                  "result": "fake, genuine or unsure (a way; a check's seen result)",
                  "really": "a fake found out: what it really is"}


@action("inventory", "inspect", Inspect, record=INSPECT_RECORD,
        reasons=(reasons.UNKNOWN_WAY, reasons.NOT_HELD, reasons.NO_MARKET, reasons.NO_PLACE,
                 reasons.NO_SELLER, reasons.UNKNOWN_ITEM, reasons.NOTHING_TO_CHECK,
                 reasons.ALREADY_INSPECTED, reasons.NO_RESOLUTION))
def inspect(game: Game, state: State, request: Inspect,
            ctx: TurnContext) -> tuple[State, Answer]:
    """``[inventory: action="inspect" item=... who=... seller=... with=...]``: one look at an
    item in the bag or a seller's ware, with the ruleset's own dice (ITM-INSP-1..9) or a way
    of seeing through fakes (ITM-SEE-4..8)."""
    tag, name, who = request.tag, request.item, request.who
    character = state.characters[who]
    way_text = request.with_
    way = find_way(game, way_text) if way_text else None
    if way_text and way is None:
        block = game.ruleset.items
        known = ", ".join(w.label for w in block.reveals_fakes) if block is not None else ""
        return state, refused(tag, reasons.UNKNOWN_WAY,
                              f'"{way_text[:60]}" is not a way to see through fakes '
                              f"(ways: {known or 'none'}).")
    target = (_ware_target(game, state, tag, name, request.seller) if request.seller
              else _bag_target(game, state, tag, who, name))
    if isinstance(target, Answer):
        return state, target
    if way is not None:
        return _with_way(game, state, tag, ctx, target, who, way)
    checks = checks_on(game, target.fake, target.shown, target.seller)
    eligible = [c for c in checks if can_make(game, state, character, c.tell)]
    if not eligible:  # ITM-INSP-9: the attempt is not spent
        why = ("nothing could give it away" if not checks
               else f"{character.name} cannot make any check that could")
        return state, refused(tag, reasons.NOTHING_TO_CHECK,
                              f"{character.name} looks the {target.name} over, but {why}.")
    if _tried(state, target, character.name):  # ITM-INSP-7
        return state, refused(tag, reasons.ALREADY_INSPECTED,
                              f"{character.name} has already had a close look at the "
                              f"{target.name}.")
    if game.ruleset.resolution is None:
        return state, refused(tag, reasons.NO_RESOLUTION,
                              "This ruleset declares no resolution, so it has no checks.")
    best = max(eligible, key=lambda c: (chance(game, state, character, c.tell),
                                        -eligible.index(c)))  # OQ-59: ties go to the first
    rolled = roll_check(game, state, character, best.tell, _check_ctx(ctx, "inspect"))
    if rolled is None:
        return state, refused(tag, reasons.NO_RESOLUTION, "This check cannot be rolled.")
    new_state = _spend(state, target, who)
    record: dict[str, object] = {"who": character.name, "name": target.name,
                                 "check": label_of(game, best.tell), "success": rolled.success}
    record.update(rolled.record)
    return _outcome(game, new_state, tag, ctx, target, who, best, rolled, record)


def _outcome(game: Game, state: State, tag: Tag, ctx: TurnContext, target: Target, who: int,
             best: Check, rolled: Roll, record: dict[str, object]) -> tuple[State, Answer]:
    """ITM-INSP-4/5/6/8, ITM-TELL-8: what the character saw."""
    character = state.characters[who]
    says = f" ({best.tell.says})" if best.tell.says else ""
    if not rolled.success:  # ITM-INSP-8
        record["result"] = "cannot-tell"
        return state, accepted(tag, f"{character.name} cannot tell anything about the "
                                    f"{target.name}.", record)
    if best.fake is None:  # ITM-TELL-8: something is wrong with the seller's wares, never what
        record["result"] = "seller"
        seller = best.seller.label if best.seller is not None else "seller"
        return state, accepted(tag, f"{character.name} senses that something is wrong with the "
                                    f"{seller}'s wares{says}.", record)
    if target.fake is None:  # ITM-INSP-6: a genuine item
        record["result"] = "genuine"
        return state, accepted(tag, f"{character.name} finds that the {target.name} looks "
                                    "genuine.", record)
    block = game.ruleset.items
    names_at = block.names_it_at if block is not None else None
    if names_at is not None and rolled.margin >= names_at:  # ITM-INSP-5, OQ-60
        record["result"] = "named"
        record["really"] = target.fake.label
        new_state = state
        if target.stack is not None:
            new_state = reveal_stacks(game, state, who, [target.stack],
                                      f"{character.name} saw through it", ctx.turn_label)
        return new_state, accepted(tag, f"{character.name} notices{says}: the {target.name} is "
                                        f"really {target.fake.label}.", record)
    record["result"] = "suspect"  # ITM-INSP-4
    new_state = state
    if target.stack is not None:
        bag = list(character.bag)
        stack = bag[target.stack]
        if character.name not in stack.suspected_by:
            bag[target.stack] = stack.model_copy(
                update={"suspected_by": (*stack.suspected_by, character.name)})
        new_state = state.with_bag(who, tuple(bag))
    return new_state, accepted(tag, f"{character.name} notices{says} and thinks the "
                                    f"{target.name} is a fake.", record)


def suspicion_text(stack: Stack) -> str | None:
    """ITM-INSP-4: what the bag shows next to a suspect item: ``Mira thinks it's a fake``."""
    if not stack.suspected_by:
        return None
    names = " and ".join(stack.suspected_by)
    verb = "thinks" if len(stack.suspected_by) == 1 else "think"
    return f"{names} {verb} it's a fake"


def inspect_prompt(character: Character, stack: Stack) -> str:
    """ITM-INSP-2: the player's message asking the GM for an inspection."""
    return f"I take a close look at my {stack.name} before I trust it."
