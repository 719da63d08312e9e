"""A tag written more than MAX_REPEATS times in one reply (engine.actions.reply): a small model
in a loop, not a GM's intent. The copies past the bound are refused ``repeated-tag`` with the
state unchanged, spend no dice, and the stage ends a reply before the first of them."""

from __future__ import annotations

import pytest
from helpers import answer, bag, harrow, harrow_party

import tagparse
from engine import MAX_REPEATS, repeats
from engine.rules import reasons

GAME = harrow()
TORCH = '[inventory: action="add" item="Torch" who="Ada"]'
CLIMB = '[skill_check: skill="climb" dc="9" who="Ada"]'


@pytest.mark.parametrize("copies", [1, 2, 3, 4, 16])
def test_a_tag_is_answered_at_most_three_times_a_reply(copies: int) -> None:
    state = harrow_party(GAME)
    after, answers = answer(GAME, state, " ".join([TORCH] * copies))
    applied = min(copies, MAX_REPEATS)
    assert [a.ok for a in answers] == [True] * applied + [False] * (copies - applied)
    assert all(a.reason == reasons.REPEATED_TAG for a in answers[applied:])
    three, _ = answer(GAME, state, " ".join([TORCH] * applied))
    assert after == three  # the copies changed nothing


def test_the_same_attributes_in_another_order_or_case_of_name_are_the_same_tag() -> None:
    other = '[inventory: who="Ada" item="Torch" action="add"]'
    _, answers = answer(GAME, harrow_party(GAME), f"{TORCH} {other} {TORCH} {other}")
    assert [a.reason for a in answers] == [None, None, None, reasons.REPEATED_TAG]


def test_other_tags_between_copies_keep_their_dice() -> None:
    """A refused copy spends no dice: the check after it rolls what it rolls without it."""
    state = harrow_party(GAME)
    _, plain = answer(GAME, state, f"{TORCH} {TORCH} {TORCH} {CLIMB}")
    _, looped = answer(GAME, state, f"{TORCH} {TORCH} {TORCH} {TORCH} {CLIMB}")
    assert looped[3].reason == reasons.REPEATED_TAG
    assert looped[4].record == plain[3].record


def test_different_counts_are_different_tags() -> None:
    tags = " ".join(f'[inventory: action="add" item="Torch" who="Ada" count="{n}"]'
                    for n in range(1, 6))
    after, answers = answer(GAME, harrow_party(GAME), tags)
    assert all(a.ok for a in answers)
    assert sum(count for name, count in bag(after, "Ada") if name == "Torch") == 15


def test_attacks_are_bounded_by_the_round_not_by_repeats() -> None:
    """CMB-TURN-9/10: a hero with four attacks writes one [attack:] four times."""
    tags = tagparse.scan(" ".join(['[attack: who="Ada" target="Wolf"]'] * 6)).tags
    assert repeats(tags) == frozenset()
    assert repeats(tagparse.scan(" ".join([TORCH] * 6)).tags) == frozenset({3, 4, 5})
