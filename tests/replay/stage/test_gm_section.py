"""The stage's remembered GM section (issue 12: a reply's cost must not grow with the chat).

``GmSection`` keeps the state's blocks per state and ``engine.text.prompt.StackLines`` each stack's line;
both must give exactly the text of ``gm_context`` written from scratch (DESIGN.md "Interfaces":
the GM section; spec/items.md ITM-SHOW-3..7 for the stack lines).
"""

from __future__ import annotations

from typing import Any

import pytest
from helpers import answer, fixture_json, harrow, harrow_party

from engine import Answer, Game, State, load_ruleset, start_state
from engine.rules.state import Stack
from engine.text.prompt import StackLines, gm_context, inventory_block, stack_line
from replay.cache import MemoryStore, SnapshotCache
from replay.stage import app
from replay.stage.app import SECTION_BEGIN, SECTION_END, GameFolder, prepare
from replay.stage.layout import Layout

TAGS = [
    'Found. [inventory: action="add" item="Torch" count="2" who="Ada"]',
    'Paid. [inventory: action="pay" amount="3 pennies" who="Ada"]',
    'A coil. [inventory: action="add" item="Rope" who="Bram the Quiet"]',
    'Dropped. [inventory: action="remove" item="Torch" who="Ada"]',
    'Handed over. [inventory: action="give" item="Rope" who="Bram the Quiet" to="Ada"]',
    "Nothing happens.",
    'Bad. [inventory: action="pay" amount="900 crowns" who="Ada"]',
]


def written(game: Game, state: State, answers: tuple[Answer, ...]) -> str:
    """The section as the stage wrote it before anything was remembered."""
    return "\n".join([SECTION_BEGIN, gm_context(game, state, answers), SECTION_END])


@pytest.fixture(scope="module")
def game() -> Game:
    return harrow()


def test_the_remembered_section_is_the_written_one_request_after_request(game: Game) -> None:
    """With "stateDepth": null the whole section is one message after the system's."""
    folder = GameFolder("harrow", game, harrow_party(game), layout=Layout(state_depth=None))
    cache = SnapshotCache(MemoryStore())
    messages: list[dict[str, Any]] = [{"role": "system", "content": "GM of Harrow Vale."}]
    for index in range(3 * len(TAGS)):
        messages += [{"role": "user", "content": f"turn {index}"},
                     {"role": "assistant", "content": TAGS[index % len(TAGS)]}]
        for regenerated in (False, True):  # the same request twice: a swipe
            body = {"messages": [*messages, {"role": "user", "content": "go"}]}
            sent = prepare(folder, cache, body).body["messages"]
            snapshot = prepare(folder, SnapshotCache(MemoryStore()), body).outcome.snapshot
            assert sent[1]["content"] == written(game, snapshot.state, snapshot.last_answers), (
                index, regenerated)


def test_a_state_seen_again_gets_the_same_text_but_other_answers_do_not(
        game: Game, monkeypatch: pytest.MonkeyPatch) -> None:
    start = harrow_party(game)
    folder = GameFolder("harrow", game, start)
    state, answers = answer(game, start, TAGS[0])
    first = folder.section(state, answers)
    assert first == written(game, state, answers)
    written_again: list[State] = []
    monkeypatch.setattr(app, "state_context",
                        lambda *args: written_again.append(args[1]) or "not remembered")
    assert folder.section(state, list(answers)) == first  # the state's blocks remembered
    other = folder.section(state, ())  # another reply that left the state as it was
    assert other == written(game, state, ())
    assert other != first and "LAST ANSWERS" in first and "LAST ANSWERS" not in other
    assert written_again == []


def test_at_most_the_configured_number_of_sections_is_kept(game: Game) -> None:
    start = harrow_party(game)
    folder = GameFolder("harrow", game, start)
    folder.section.states = 2
    states = [start]
    for tag in TAGS[:4]:
        states.append(answer(game, states[-1], tag)[0])
    for state in states:
        assert folder.section(state, ()) == written(game, state, ())
    assert len(folder.section._texts) == 2


def test_stack_lines_equal_stack_line_for_each_game_that_renders_the_stack() -> None:
    harrow_game = harrow()
    state = harrow_party(harrow_game)
    other = load_ruleset(fixture_json("rulesets/harrow.json"))  # an equal game, not the same
    lines = StackLines()
    for game in (harrow_game, other, harrow_game):
        for character in state.characters:
            for stack in character.bag:
                assert lines(game, state, stack) == stack_line(game, state, stack)
    assert inventory_block(harrow_game, state, lines) == inventory_block(harrow_game, state)


def test_itm_prop_1_the_same_stack_with_another_invented_item_gets_a_new_line() -> None:
    game = load_ruleset(fixture_json("rulesets/ember-roads.json"))
    start = start_state(game, fixture_json("parties/ember-roads.json"))
    plain, answers = answer(game, start, '[inventory: action="add" item="Ember brooch" '
                                         'category="gear" worn="+1 Sway" who="Juno"]')
    storied, more = answer(game, start, '[inventory: action="add" item="Ember brooch" '
                                        'category="gear" rarity="storied" worn="+1 Sway" '
                                        'who="Juno"]')
    assert answers[0].ok and more[0].ok
    brooch = next(s for c in plain.characters for s in c.bag if s.item == "invented/1")
    # The very same stack object, now naming another invented item under the same reference.
    mixed = plain.model_copy(update={"invented": storied.invented})
    lines = StackLines()
    before = lines(game, plain, brooch)
    after = lines(game, mixed, brooch)
    assert before == stack_line(game, plain, brooch) and "[Gear]" in before
    assert after == stack_line(game, mixed, brooch) and "[Gear, Storied]" in after


def test_stack_lines_keep_at_most_their_size_and_stay_right(game: Game) -> None:
    state = harrow_party(game)
    for tag in TAGS[:3]:
        state = answer(game, state, tag)[0]
    stacks = [s for c in state.characters for s in c.bag]
    assert len(stacks) > 3
    lines = StackLines(size=3)
    for _ in range(2):
        for stack in stacks:
            assert lines(game, state, stack) == stack_line(game, state, stack)
            assert len(lines._lines) <= 3


def test_chats_of_one_game_keep_their_own_bags_lines(game: Game,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Chats of one game begin with the party's very stacks; rendering one chat's bag must
    not make the next render of another chat's bag look up every line again (issue 12)."""
    state = harrow_party(game)
    first = state.characters[0].bag[0]  # the party's: the same object in every chat
    bags = [(first, *(Stack(name=f"{kind} {n}", count=1) for n in range(60)))
            for kind in ("Pebble", "Feather", "Button")]
    lines = StackLines()
    for bag in bags:
        lines.bag_lines(game, state, bag)
    looked_up: list[Stack] = []  # stacks whose line was not taken from a bag rendered before
    line_or_coin = lines._line_or_coin
    monkeypatch.setattr(lines, "_line_or_coin",
                        lambda g, s, stack: looked_up.append(stack) or line_or_coin(g, s, stack))
    for bag in bags:  # each chat's next reply changes its last stack
        following = (*bag[:-1], bag[-1].model_copy(update={"count": 2}))
        assert lines.bag_lines(game, state, following) == [
            stack_line(game, state, s) for s in following if s.coin is None]
    assert looked_up == [bag[-1].model_copy(update={"count": 2}) for bag in bags]
