"""The bag index (issue 13) is only a shortlist: whatever bags the engine builds, finding
stacks through it gives exactly what the plain O(n) search over the bag gives (ITM-STACK-1,
ITM-FAKE-9), and the index remembered for a bag is the one built from scratch."""

from __future__ import annotations

from helpers import fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import load_ruleset
from engine.rules import bags
from engine.rules.bags import (
    MAX_INDEXED_BAGS,
    Thing,
    add_to_bag,
    bag_index,
    build_bag_index,
    held_up_to,
    matching_positions,
    stack_matches,
    take_from_bag,
)
from engine.rules.carry import stack_room
from engine.rules.game import MAX_STACKS_PER_BAG
from engine.rules.money import held_coins
from engine.rules.state import Character, Stack

NAMES = st.sampled_from(["Rope", "rope", "ROPE", "Torch", "Gold crown", "Straße", "STRASSE"])
REFS = st.sampled_from(["core/rope", "core/torch", "invented/1"])
COINS = st.sampled_from(["gc", "sp"])


@st.composite
def stacks(draw: st.DrawFn) -> Stack:
    kind = draw(st.sampled_from(["item", "coin", "plain", "fake"]))
    item = draw(REFS) if kind in ("item", "fake") else None
    return Stack(
        name=draw(NAMES),
        item=item,
        coin=draw(COINS) if kind == "coin" else None,
        count=draw(st.integers(1, 12)),
        equipped=draw(st.booleans()),
        bound=draw(st.booleans()),
        charges=draw(st.none() | st.integers(0, 3)),
        toggled=draw(st.booleans()),
        shows_as=draw(REFS) if kind == "fake" else None,
    )


@st.composite
def things(draw: st.DrawFn) -> Thing:
    kind = draw(st.sampled_from(["item", "coin", "plain"]))
    return Thing(
        name=draw(NAMES),
        item=draw(REFS) if kind == "item" else None,
        coin=draw(COINS) if kind == "coin" else None,
        stack_limit=draw(st.integers(1, 10)),
    )


def plain_add(bag: tuple[Stack, ...], thing: Thing, count: int) -> tuple[Stack, ...] | None:
    """ITM-STACK-1 as a walk over every stack: the reference the index must agree with."""
    stacks = list(bag)
    left = count
    proto = thing.stack(1)
    for index, stack in enumerate(stacks):
        if left and stack.loose and stack.same_kind(proto) and stack.count < thing.stack_limit:
            moved = min(left, thing.stack_limit - stack.count)
            stacks[index] = stack.model_copy(update={"count": stack.count + moved})
            left -= moved
    new_stacks = -(-left // thing.stack_limit)
    if len(stacks) + new_stacks > MAX_STACKS_PER_BAG:
        return None
    while left > 0:
        moved = min(left, thing.stack_limit)
        stacks.append(thing.stack(moved))
        left -= moved
    return tuple(stacks)


def plain_matches(bag: tuple[Stack, ...], thing: Thing | None, name: str) -> list[int]:
    return [i for i, s in enumerate(bag) if stack_matches(s, thing, name)]


def plain_take(bag: tuple[Stack, ...], free: list[int], count: int) -> tuple[Stack, ...]:
    """Taking as a walk over every stack: loose stacks first, last stack first; emptied
    stacks leave the bag."""
    counts = [s.count for s in bag]
    left = count
    for i in sorted(free, key=lambda i: (not bag[i].loose, -i)):
        moved = min(left, counts[i])
        counts[i] -= moved
        left -= moved
    return tuple(s.model_copy(update={"count": n}) for s, n in zip(bag, counts, strict=True)
                 if n > 0)


def assert_index_consistent(bag: tuple[Stack, ...]) -> None:
    assert bag_index(bag) == build_bag_index(bag)


# Each step: add, take (maybe keeping bound stacks), split a stack in two, merge two stacks,
# or drop a stack — the last three as other modules (gear, market, fakes) build bags.
STEPS = st.lists(
    st.tuples(st.sampled_from(["add", "take", "take-keep", "split", "merge", "drop"]),
              things(), st.integers(1, 30), st.integers(0, 1000)),
    max_size=25,
)


@settings(max_examples=150, deadline=None)
@given(st.lists(stacks(), max_size=12), STEPS)
def test_itm_stack_1_index_agrees_with_the_plain_search_under_every_change(start, steps):
    bag = tuple(start)
    for action, thing, count, pick in steps:
        assert matching_positions(bag, thing, thing.name) == plain_matches(bag, thing, thing.name)
        assert matching_positions(bag, None, thing.name) == plain_matches(bag, None, thing.name)
        if action == "add":
            grown = add_to_bag(bag, thing, count)
            assert grown == plain_add(bag, thing, count)
            if grown is not None:
                bag = grown
        elif action.startswith("take"):
            keep = (lambda s: s.bound) if action == "take-keep" else None
            character = Character(name="A", bag=bag)
            bag = character.bag  # validation may copy the tuple
            taken, held = take_from_bag(character, thing, thing.name, count, keep)
            free = [i for i in plain_matches(bag, thing, thing.name)
                    if keep is None or not keep(bag[i])]
            total = sum(bag[i].count for i in free)
            # Exact below count; at count or more, counting may stop early.
            assert held == total if total < count else count <= held <= total
            plain_total = sum(bag[i].count for i in plain_matches(bag, thing, thing.name))
            counted = held_up_to(bag, thing, thing.name, count)
            assert (counted == plain_total if plain_total < count
                    else count <= counted <= plain_total)
            if held < count:
                assert taken is bag
            else:
                assert sum(s.count for s in taken) == sum(s.count for s in bag) - count
                assert taken == plain_take(bag, free, count)
            bag = taken
        elif bag:
            at = pick % len(bag)
            stack = bag[at]
            if action == "split" and stack.count > 1:
                half = stack.model_copy(update={"count": stack.count // 2})
                rest = stack.model_copy(update={"count": stack.count - stack.count // 2})
                bag = (*bag[:at], half, rest, *bag[at + 1:])
            elif action == "merge" and len(bag) > 1:
                other = (at + 1) % len(bag)
                merged = stack.model_copy(update={"count": stack.count + bag[other].count})
                bag = tuple(merged if i == at else s for i, s in enumerate(bag) if i != other)
            elif action == "drop":
                bag = bag[:at] + bag[at + 1:]
        assert_index_consistent(bag)


def test_itm_stack_1_an_add_finds_its_stack_among_many_others():
    many = tuple(Stack(name=f"Trinket {n}", count=1) for n in range(400))
    rope = Thing("Rope", "core/rope", None, 10)
    bag = add_to_bag((*many, Stack(name="Rope", item="core/rope", count=3)), rope, 4)
    assert bag is not None
    assert bag[-1].count == 7 and len(bag) == 401
    assert_index_consistent(bag)


def test_itm_fake_9_a_fake_is_found_by_what_it_passes_for():
    fake = Stack(name="Rope", item="invented/1", shows_as="core/rope", count=2)
    real = Stack(name="Rope", item="core/rope", count=1)
    rope = Thing("Rope", "core/rope", None, 10)
    assert matching_positions((real, fake), rope, "Rope") == [0, 1]
    # a new rope never merges into the fake (it is not the same kind)
    assert add_to_bag((fake,), rope, 1) == (fake, rope.stack(1))


def test_the_remembered_indexes_stay_bounded():
    for n in range(MAX_INDEXED_BAGS * 2):
        bag_index((Stack(name=f"Coin {n}", count=1),))
    assert len(bags._INDEXES) <= MAX_INDEXED_BAGS


BAGS_GAME = load_ruleset(fixture_json("rulesets/bags.json"))
FAMILY_COINS = st.sampled_from(["bit", "mark", "sovereign", "pinch", "cake", "gc"])


@settings(max_examples=100, deadline=None)
@given(st.lists(st.tuples(st.none() | FAMILY_COINS, st.integers(1, 50)), max_size=30))
def test_itm_money_6_a_purse_read_through_the_index_is_the_plain_walk(rows):
    bag = tuple(Stack(name=coin or "Pebble", coin=coin, count=count) for coin, count in rows)
    character = Character(name="Ada", bag=bag)
    for family in BAGS_GAME.ruleset.items.currencies:
        ids = {u.id for u in family.units}
        plain: dict[str, int] = {}
        for stack in bag:
            if stack.coin in ids:
                plain[stack.coin] = plain.get(stack.coin, 0) + stack.count
        assert held_coins(character, family) == plain


@settings(max_examples=150, deadline=None)
@given(st.lists(stacks(), max_size=20), things(), st.none() | st.integers(1, 40))
def test_itm_stack_1_room_found_through_the_index_is_the_plain_walks(start, thing, want):
    bag = tuple(start)
    proto = thing.stack(1)
    room = sum(thing.stack_limit - s.count for s in bag
               if s.loose and s.same_kind(proto) and s.count < thing.stack_limit)
    free = max(0, MAX_STACKS_PER_BAG - len(bag)) * thing.stack_limit
    expected = free if want is not None and free >= want else room + free
    assert stack_room(bag, thing, want) == expected
    full = bag + tuple(Stack(name=f"Pebble {n}", count=1)
                       for n in range(MAX_STACKS_PER_BAG - len(bag)))
    # A full bag: only room in its stacks. With ``want``, stack_room stops once it has found
    # that many (its docstring): exact below ``want``, at least ``want`` and never above the room.
    found = stack_room(full, thing, want)
    if want is None:
        assert found == room
    else:
        assert min(found, want) == min(room, want) and found <= room
