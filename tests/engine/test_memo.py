"""The identity memo the engine remembers pure results in, and what it remembers: a
character's owned items (ITM-WORN-1/8) are the same whether computed or remembered."""

from __future__ import annotations

from fractions import Fraction

from helpers import answer, fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, load_ruleset, start_state
from engine.rules.bags import Thing, add_to_bag, item_of, take_from_bag
from engine.rules.carry import load, stack_weight
from engine.rules.gear import slots_in_use
from engine.rules.items import item_is_worn
from engine.rules.memo import IdentityMemo
from engine.rules.sheet import (
    _CHANGES,
    _OWNED,
    Owned,
    active_parts,
    effective_abilities,
    owned_items,
)
from engine.rules.state import Character, Stack


def test_a_value_is_found_only_for_the_very_same_objects() -> None:
    memo: IdentityMemo[str] = IdentityMemo(4)
    first, second = ["bag"], ["bag"]  # equal, not the same
    memo.put((first, "game"), "remembered")
    assert memo.get((first, "game")) == "remembered"
    assert memo.get((second, "game")) is None
    assert memo.get((first, "other game")) is None
    assert memo.get((first,)) is None  # fewer keys never match


def test_the_memo_is_bounded_and_starts_over_when_full() -> None:
    memo: IdentityMemo[int] = IdentityMemo(3)
    held = [object() for _ in range(10)]
    for number, key in enumerate(held):
        memo.put((key,), number)
        assert len(memo._entries) <= 3
    assert memo.get((held[-1],)) == 9


def test_itm_worn_8_owned_items_remembered_equal_owned_items_computed() -> None:
    """Every state of a game with worn and carried items: the remembered answer is the one
    computed from scratch, and a changed bag is never answered from an old one."""
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    state = start_state(game, fixture_json("parties/harrow.json"))
    tags = ['[inventory: action="add" item="Rope"]', '[inventory: action="add" item="Torch" count=3]',
            '[inventory: action="remove" item="Rope"]']
    for tag in tags:
        state, answers = answer(game, state, tag)
        assert answers[0].ok, answers[0].text
        for character in state.characters:
            remembered = owned_items(game, character, state)
            _OWNED.clear()
            assert owned_items(game, character, state) == remembered
            assert active_parts(game, character, state) == active_parts(game, character, state)


BAGS_GAME = load_ruleset(fixture_json("rulesets/bags.json"))
# catalog items that take slots, bind, both or neither; a reference no ruleset knows; plain
REFS = st.sampled_from([*sorted(BAGS_GAME.items), "invented/9", None])
COINS = st.sampled_from([None, None, "bit", "sovereign", "cake"])


@st.composite
def bags_of(draw: st.DrawFn) -> tuple[Stack, ...]:
    rows = draw(st.lists(st.tuples(REFS, COINS, st.booleans(), st.booleans(), st.integers(1, 5)),
                         max_size=30))
    return tuple(Stack(name=ref or coin or "Pebble", item=None if coin else ref, coin=coin,
                       count=count, equipped=equipped, bound=bound)
                 for ref, coin, equipped, bound, count in rows)


def plain_owned(game: Game, bag: tuple[Stack, ...]) -> tuple[Owned, ...]:
    """ITM-WORN-1/8 as a walk over every stack: the reference the indexed form must match."""
    worn: dict[str, bool] = {}
    for stack in bag:
        entry = game.items.get(stack.item or "")
        if entry is not None:
            worn[entry.ref] = worn.get(entry.ref, False) or item_is_worn(entry.item, stack)
    return tuple(Owned(ref, game.items[ref].label, game.items[ref].item, w)
                 for ref, w in worn.items())


@settings(max_examples=150, deadline=None)
@given(bags_of())
def test_itm_worn_8_owned_items_found_through_the_bag_index_equal_the_plain_walk(
        bag: tuple[Stack, ...]) -> None:
    character = Character(name="Ada", bag=bag)
    assert owned_items(BAGS_GAME, character) == plain_owned(BAGS_GAME, character.bag)


@settings(max_examples=150, deadline=None)
@given(bags_of())
def test_itm_carry_2_itm_slot_3_load_and_slots_through_the_index_equal_the_plain_walk(
        bag: tuple[Stack, ...]) -> None:
    state = start_state(BAGS_GAME, fixture_json("parties/bags.json"))
    character = Character(name="Ada", bag=bag)
    assert load(BAGS_GAME, state, character) == sum(
        (stack_weight(BAGS_GAME, state, s) for s in character.bag), Fraction(0))
    plain: dict[str, int] = {}
    for stack in character.bag:
        item = item_of(BAGS_GAME, state, stack.item)
        if stack.equipped and item is not None:
            for slot, count in item.slots.items():
                plain[slot] = plain.get(slot, 0) + count * stack.count
    assert slots_in_use(BAGS_GAME, state, character) == plain


@settings(max_examples=100, deadline=None)
@given(bags_of(), st.lists(st.tuples(st.sampled_from(["add", "take", "equip", "bind"]), REFS,
                                     st.integers(1, 12)), max_size=20))
def test_itm_worn_8_owned_items_stay_right_while_bags_share_their_index(
        bag: tuple[Stack, ...], steps: list[tuple[str, str | None, int]]) -> None:
    """Bags that differ in counts alone share an index and so a remembered answer; a flag
    changed anywhere makes a new index, so worn items are never answered from an old bag."""
    character = Character(name="Ada", bag=bag)
    for action, ref, count in steps:
        entry = BAGS_GAME.items.get(ref or "")
        thing = Thing(entry.label if entry else "Pebble", entry.ref if entry else None, None,
                      entry.stack_limit if entry else 10)
        bag = character.bag
        if action == "add":
            bag = add_to_bag(bag, thing, count) or bag
        elif action == "take":
            bag, _ = take_from_bag(character, thing, thing.name, count)
        elif bag:  # equip or bind one stack in place, as the gear actions do
            at = count % len(bag)
            flag = "equipped" if action == "equip" else "bound"
            bag = (*bag[:at], bag[at].model_copy(update={flag: not getattr(bag[at], flag)}),
                   *bag[at + 1:])
        character = character.model_copy(update={"bag": bag})
        assert owned_items(BAGS_GAME, character) == plain_owned(BAGS_GAME, character.bag)
        remembered = effective_abilities(BAGS_GAME, character)
        _OWNED.clear()
        _CHANGES.clear()
        assert effective_abilities(BAGS_GAME, character) == remembered  # ITM-ABIL-1..5


def test_reuse_ends_equals_making_everything_and_makes_only_the_changed_middle() -> None:
    """What a changed tuple keeps of the one before it, at both ends, is not made again; the
    result is always what making every value gives."""
    from hypothesis import given
    from hypothesis import strategies as st

    from engine.rules.memo import reuse_ends, shared_ends

    pool = [object() for _ in range(6)]
    tuples = st.lists(st.sampled_from(pool), max_size=12).map(tuple)

    @given(tuples, tuples)
    def check(before: tuple[object, ...], now: tuple[object, ...]) -> None:
        made: list[object] = []

        def make(value: object) -> int:
            made.append(value)
            return id(value)

        done = [id(v) for v in before]
        assert reuse_ends(before, done, now, make) == [id(v) for v in now]
        if before == now:
            assert made == []
        head, tail = shared_ends(before, now)
        assert head + tail <= min(len(before), len(now))  # the runs never overlap
        assert before[:head] == now[:head]
        assert before[len(before) - tail:] == now[len(now) - tail:]
        assert len(made) == len(now) - head - tail  # only the middle is made

    check()
