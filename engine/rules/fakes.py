"""Fakes: what a fake passes for, how it shows in a bag, and when it is found out
(ITM-FAKE-2..19, ITM-SEE-4)."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence

from ..ruleset.fakes import RevealWay
from .checks.modifiers import collect
from .context import TurnContext
from .game import MAX_STACKS_PER_BAG, CatalogItem, Game
from .sheet import SheetView
from .state import Character, JournalEntry, Stack, State

ADVANTAGE_POINTS = 5  # ITM-NOTICE-1, OQ-59: advantage counts as +5, disadvantage as −5


def fakes_of(game: Game, ref: str) -> list[CatalogItem]:
    """ITM-INSP-6: every fake of the ruleset that passes for ``ref``, in catalog order."""
    return [entry for entry in game.items.values() if entry.item.passes_for == ref]


def passes_for(game: Game, fake: CatalogItem) -> CatalogItem | None:
    """ITM-FAKE-3/4: the item a fake passes for, if it is still a real item of the same
    category, slots and binding (a missing target makes it never sold)."""
    target = game.items.get(fake.item.passes_for or "")
    if target is None or target.item.passes_for is not None:
        return None
    item, real = fake.item, target.item
    if real.category != item.category or real.slots != item.slots:
        return None
    if item.binds is not None and real.binds is None:
        return None
    return target


def shown_ref(stack: Stack) -> str | None:
    """ITM-FAKE-9: the item a stack shows as — what it passes for while not found out."""
    return stack.shows_as or stack.item


def add_disguised(bag: tuple[Stack, ...], fake: CatalogItem, shown: CatalogItem,
                  count: int) -> tuple[Stack, ...] | None:
    """ITM-FAKE-7/9: ``count`` fakes into a bag as the item they pass for, merging only with
    loose stacks of the same disguised fake (ITM-STACK-1); None past the stacks a bag takes."""
    proto = Stack(name=shown.label, item=fake.ref, count=1, shows_as=shown.ref)
    limit = fake.stack_limit
    stacks = list(bag)
    left = count
    for index, stack in enumerate(stacks):
        if left and stack.loose and stack.same_kind(proto) and stack.count < limit:
            moved = min(left, limit - stack.count)
            stacks[index] = stack.model_copy(update={"count": stack.count + moved})
            left -= moved
    if len(stacks) + -(-left // limit) > MAX_STACKS_PER_BAG:
        return None
    while left:
        moved = min(left, limit)
        stacks.append(proto.model_copy(update={"count": moved}))
        left -= moved
    return tuple(stacks)


def unmasked(game: Game, stack: Stack) -> Stack:
    """ITM-FAKE-16: the stack as its true item, under its own name."""
    entry = game.items.get(stack.item or "")
    name = entry.label if entry is not None else stack.name
    return stack.model_copy(update={"name": name, "shows_as": None, "suspected_by": ()})


def reveal_stacks(game: Game, state: State, who: int, indices: Sequence[int], how: str,
                  turn: str = "") -> State:
    """Find out the disguised stacks at ``indices`` of one bag (ITM-FAKE-11..18, ITM-INSP-5,
    ITM-SEE-5); the journal says what each was (ITM-FAKE-18)."""
    character = state.characters[who]
    bag = list(character.bag)
    entries: list[JournalEntry] = []
    for index in indices:
        stack = bag[index]
        if stack.shows_as is None:
            continue
        bag[index] = unmasked(game, stack)
        entries.append(JournalEntry(turn=turn, text=f"{character.name}'s {stack.name} was "
                                    f"really {bag[index].name} ({how})."))
    if not entries:
        return state
    new_state = state.with_bag(who, tuple(bag))
    return new_state.model_copy(update={"journal": (*state.journal, *entries)})


def reveal_on_use(game: Game, state: State, who: int, stack_index: int,
                  turn: str = "") -> State:
    """ITM-FAKE-13: using a fake finds it out (what it really does happens); the same state
    for anything else. For the use engine, to call before it applies the use."""
    bag = state.characters[who].bag
    if not 0 <= stack_index < len(bag) or bag[stack_index].shows_as is None:
        return state
    return reveal_stacks(game, state, who, [stack_index], "found out by using it", turn)


def sheet_signature(game: Game, state: State,
                     character: Character) -> tuple[object, ...]:
    """Every number the sheet shows and what items add to each check (ITM-FAKE-18)."""
    view = SheetView(game, character, state)
    sheet = game.ruleset.sheet
    numbers: list[object] = [view.ability_score(a.id) for a in sheet.abilities]
    numbers += [view.derived(d.id) for d in sheet.derived]
    for kind, rows in (("skill", sheet.skills), ("save", sheet.saves)):
        for row in rows:
            applied = collect(game, state, character, view, kind, row.id)  # type: ignore[arg-type]
            numbers.append((applied.flat, tuple((str(e), s) for e, s in applied.dice),
                            applied.advantage, applied.disadvantage, applied.fails))
    return tuple(numbers)


def settle_fakes(game: Game, state: State, ctx: TurnContext | None = None,
                 before: State | None = None) -> State:
    """After an inventory change: a bound fake is found out (ITM-FAKE-12), and so is a fake
    after which the sheet shows a number, or a check adds something, the item it passes for
    would not give (ITM-FAKE-18). Only a sheet difference counts (ITM-FAKE-19).

    With ``before`` (the state before the change), only the characters the change touched are
    looked at: the others' bags and sheets are the same objects, already settled.
    """
    if not game.has_fakes:  # no item of this ruleset passes for another: nothing to settle
        return state
    turn = ctx.turn_label if ctx is not None else ""
    for who, character in enumerate(state.characters):
        if (before is not None and who < len(before.characters)
                and before.characters[who] is character):
            continue
        if not any(s.shows_as is not None for s in character.bag):
            continue
        bound = [i for i, s in enumerate(character.bag) if s.shows_as is not None and s.bound]
        if bound:
            state = reveal_stacks(game, state, who, bound, "binding it showed it", turn)
            character = state.characters[who]
        disguised = [i for i, s in enumerate(character.bag) if s.shows_as is not None]
        if not disguised:
            continue
        actual = sheet_signature(game, state, character)
        shown = [s.model_copy(update={"item": s.shows_as}) if s.shows_as is not None else s
                 for s in character.bag]
        seeming = sheet_signature(game, state, character.model_copy(update={"bag": tuple(shown)}))
        if actual == seeming:
            continue
        differs = []
        for index in disguised:  # the stacks whose truth makes the difference
            alone = list(character.bag)
            alone[index] = shown[index]
            other = character.model_copy(update={"bag": tuple(alone)})
            if sheet_signature(game, state, other) != actual:
                differs.append(index)
        state = reveal_stacks(game, state, who, differs or disguised,
                              "the sheet gave it away", turn)
    return state


def find_way(game: Game, text: str) -> RevealWay | None:
    """OQ-62: a way of ``revealsFakes`` by id or label, ignoring case."""
    block = game.ruleset.items
    wanted = text.strip().casefold()
    ways = block.reveals_fakes if block is not None else []
    return next((w for w in ways if wanted in (w.id.casefold(), w.label.casefold())), None)


def sees_through(way: RevealWay, fake: CatalogItem) -> bool:
    """ITM-SEE-2/6, OQ-62: every fake (neither tags nor items), fakes with one of its tags, or
    the listed fakes — unless the fake's ``foolsReveal`` names the way."""
    if way.id in (fake.item.fools_reveal or []):
        return False
    if not way.tags and not way.items:
        return True
    return fake.ref in way.items or any(t in fake.item.tags for t in way.tags)


def stacks_shown_as(character: Character, ref: str,
                    keep: Callable[[Stack], bool] | None = None) -> Iterator[int]:
    """The bag positions of disguised fakes that show as ``ref``."""
    for index, stack in enumerate(character.bag):
        if stack.shows_as == ref and (keep is None or keep(stack)):
            yield index
