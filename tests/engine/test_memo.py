"""The memos the engine remembers pure results in, and what they remember: a rule function
memoised with ``remembered`` is keyed on its own arguments, so two calls that differ in any
argument never share a result; every result remembered while folding chats is the one the
function computes afresh; a character's owned items (ITM-WORN-1/8) are the same whether
computed or remembered."""

from __future__ import annotations

import json
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

from helpers import answer, fixture_json
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import Game, load_ruleset, start_state
from engine.rules.bags import Thing, add_to_bag, item_of, take_from_bag
from engine.rules.carry import load, stack_weight
from engine.rules.gear import slots_in_use
from engine.rules.items import item_is_worn
from engine.rules.memo import REMEMBERED, IdentityMemo, remembered
from engine.rules.sheet import (
    Owned,
    _changes_by,
    active_parts,
    effective_abilities,
    owned_in,
    owned_items,
)
from engine.rules.state import Character, Stack
from replay import load_party, parse_transcript, replay
from replay import load_ruleset as load_ruleset_file

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures/chats/corpus"

# Arguments as rule functions get them: equal but distinct values, shared values, None,
# booleans and interned strings, so identity and equality disagree as often as they can.
POOL: list[Any] = [("bag",), ("bag",), ["mutable"], None, True, False, "worn", "carried",
                   Fraction(1, 2), Fraction(1, 2), 0, 10**20, 10**20 + 0]
ARGUMENTS = st.lists(st.sampled_from(range(len(POOL))), max_size=4)
KEYWORDS = st.dictionaries(st.sampled_from(["state", "worn"]), st.sampled_from(range(len(POOL))),
                           max_size=2)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(ARGUMENTS, KEYWORDS), max_size=40), st.integers(1, 8))
def test_calls_differing_in_any_argument_never_share_a_result(
        calls: list[tuple[list[int], dict[str, int]]], size: int) -> None:
    """The key is the arguments themselves: a result is reused only for the very same objects
    in the same places (positional or by the same name), and the memo never holds more than
    its size."""

    @remembered(size)
    def given_back(*args: Any, **kwargs: Any) -> tuple[tuple[Any, ...], dict[str, Any]]:
        return args, kwargs

    for positions, names in calls:
        args = tuple(POOL[at] for at in positions)
        kwargs = {name: POOL[at] for name, at in names.items()}
        got_args, got_kwargs = given_back(*args, **kwargs)
        assert len(got_args) == len(args) and all(map(lambda a, b: a is b, got_args, args))
        assert got_kwargs.keys() == kwargs.keys()
        assert all(got_kwargs[name] is value for name, value in kwargs.items())
        assert given_back.held() <= size


def test_a_result_is_remembered_for_the_same_objects_and_computed_once() -> None:
    made: list[object] = []

    @remembered(4)
    def made_for(value: object, worn: bool = False) -> object:
        made.append(value)
        return object()

    first, second = ["bag"], ["bag"]  # equal, not the same
    assert made_for(first) is made_for(first)
    assert made_for(second) is not made_for(first)
    assert made_for(first, True) is not made_for(first)
    assert made_for(first, worn=True) is made_for(first, worn=True)
    assert made == [first, second, first, first]


def test_a_memoised_function_is_bounded_by_number_and_by_weight() -> None:
    @remembered(3)
    def plain(value: object) -> int:
        return id(value)

    held = [object() for _ in range(10)]
    for value in held:
        plain(value)
        assert plain.held() <= 3

    @remembered(1000, weigh=len, most=100)
    def text(value: object, length: int) -> str:
        return "x" * length

    for value in held:
        text(value, 30)
        assert text.weight() <= 100 and text.held() <= 3
    text(held[0], 101)  # heavier than the bound alone: not remembered
    assert (held[0], 101) not in [args for args, _, _ in text.calls()]


def test_a_memoised_function_stays_bounded_under_threads() -> None:
    @remembered(16)
    def plain(value: object) -> int:
        return id(value)

    def run() -> None:
        for _ in range(2000):
            value = object()
            assert plain(value) == id(value)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert plain.held() <= 16


def _corpus_chats() -> list[tuple[Path, Path, Path]]:
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))["chats"]
    return [(CORPUS / name, CORPUS / entry["ruleset"], CORPUS / entry["party"])
            for name, entry in sorted(index.items())]


def test_every_result_remembered_while_folding_the_corpus_is_the_one_computed_afresh() -> None:
    """Each engine function memoised with ``remembered`` (rules on sheets, items, formulas,
    fights, the state's JSON), after folding every corpus chat: what it holds for each call is
    what the plain function returns for those very arguments."""
    engine = [f for f in REMEMBERED if f.__module__.startswith("engine.")]  # not the tests' own
    assert {f.__name__ for f in engine} >= {
        "owned_in", "_changes_by", "effect_part", "references_of", "rolls_dice",
        "_condition_part", "_item_part", "_counts_without_dice", "canonical_fragment"}
    checked = {function.__name__: 0 for function in engine}
    for chat, ruleset, party in _corpus_chats():
        for function in engine:
            function.clear()
        game = load_ruleset_file(ruleset)
        transcript = parse_transcript(chat.read_bytes())
        replay(game, transcript, load_party(game, party, transcript.player_name)).state.canonical()
        for function in engine:
            for args, kwargs, value in function.calls():
                assert function.__wrapped__(*args, **kwargs) == value, (chat.name, function)
                checked[function.__name__] += 1
    assert all(checked.values()), checked  # every memoised function was asked something


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
            owned_in.clear()
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
        owned_in.clear()
        _changes_by.clear()
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
