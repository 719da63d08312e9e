"""Rests bring charges back (spec/items.md §13.8, ITM-RCHG-1..7)."""

from __future__ import annotations

from typing import Any

import pytest
from scipy.stats import chisquare

from engine import Game, State, TurnContext
from engine.actions.events import apply_event
from engine.text.prompt import stack_line
from tests.engine.test_use import BELL, bell, grave, grave_party, kit_item, person
from tests.helpers import answer

VIGIL = '[sheet: op="rest" rest="vigil" who="Ada"]'


def _party(game: Game, charges: int | None, **ada: Any) -> State:
    return grave_party(game, [bell(charges=charges), {"item": "kit/litany-page", "count": 1}],
                       **ada)


def test_itm_rchg_6_the_rest_reports_what_came_back() -> None:
    game = grave()
    state = _party(game, 1)
    new, answers = answer(game, state, VIGIL)
    assert answers[0].ok
    assert answers[0].text == "Vigil. Ada: Dawn bell 3/3 charges."
    assert "Dawn bell 3/3 charges" in answers[0].text
    assert person(new, "Ada").bag[0].charges == 3
    assert answers[0].record["recharged"] == [
        {"who": "Ada", "item": "kit/dawn-bell", "name": "Dawn bell", "charges": 3, "max": 3,
         "gained": 2}]


def test_itm_rchg_7_used_then_rested_the_gm_sees_the_charges() -> None:
    game = grave()
    state = _party(game, None)
    used, _ = answer(game, state, BELL)
    assert "2 of 3 charges left" in stack_line(game, used, person(used, "Ada").bag[0])
    rested, _ = answer(game, used, VIGIL, (0, 1))
    assert "3 of 3 charges left" in stack_line(game, rested, person(rested, "Ada").bag[0])


def test_itm_rchg_2_an_amount_never_passes_max_and_follows_its_dice() -> None:
    """From 0 of 3, 1d6 + 1 gives back 2 on a 1 and 3 (the max) otherwise: exactly 1/6, 5/6."""
    def amount(doc: dict[str, Any]) -> None:
        kit_item(doc, "dawn-bell")["charges"]["recharge"]["amount"] = {"dice": "1d6", "flat": 1}
    game = grave(amount)
    state = _party(game, 0)
    counts = {2: 0, 3: 0}
    draws = 3000
    for reply in range(draws):
        new, _ = answer(game, state, VIGIL, (0, reply))
        charges = person(new, "Ada").bag[0].charges
        assert charges is not None and charges <= 3
        counts[charges] += 1
    assert chisquare([counts[2], counts[3]], [draws / 6, draws * 5 / 6]).pvalue > 0.001


def test_itm_rchg_1_a_rest_the_item_does_not_name_changes_nothing_on_it() -> None:
    def camp(doc: dict[str, Any]) -> None:
        doc["rests"].append({"id": "camp", "label": "Camp"})
    game = grave(camp)
    state = _party(game, 1)
    new, answers = answer(game, state, '[sheet: op="rest" rest="camp" who="Ada"]')
    assert answers[0].ok and answers[0].text == "Camp. Ada: nothing to recharge."
    assert person(new, "Ada").bag[0].charges == 1


def test_itm_rchg_3_oq_34_worn_or_not_every_item_in_the_bag_recharges() -> None:
    game = grave()
    state = grave_party(game, [{**bell(charges=0, worn=False)}])
    new, _ = answer(game, state, VIGIL)
    assert person(new, "Ada").bag[0].charges == 3


def test_itm_rchg_3_without_who_the_whole_party_rests() -> None:
    game = grave()
    state = _party(game, 0)
    new, answers = answer(game, state, '[sheet: op="rest" rest="Vigil"]')
    assert answers[0].text == "Vigil. Ada: Dawn bell 3/3 charges; Mira: nothing to recharge."
    assert answers[0].record["who"] == "Ada, Mira"
    assert person(new, "Ada").bag[0].charges == 3


def test_itm_rchg_3_the_rest_event_recharges_too() -> None:
    game = grave()
    state = _party(game, 0)
    new, result = apply_event(game, state, {"action": "rest", "rest": "vigil"}, "Ada",
                              TurnContext(state.seed, (0, 0)))
    assert result.ok and result.text == "Vigil. Ada: Dawn bell 3/3 charges."
    assert person(new, "Ada").bag[0].charges == 3


def test_a_single_rest_is_chosen_when_none_is_named() -> None:
    game = grave()
    state = _party(game, 0)
    new, answers = answer(game, state, '[sheet: op="rest" who="Ada"]')
    assert answers[0].ok and person(new, "Ada").bag[0].charges == 3


@pytest.mark.parametrize(("mutate", "tag", "reason"), [
    (None, '[sheet: op="rest" rest="nap" who="Ada"]', "unknown-rest"),
    (None, '[sheet: op="rest" rest="vigil" who="Nobody"]', "unknown-character"),
    ("two-rests", '[sheet: op="rest" who="Ada"]', "missing-attribute"),
])
def test_rest_refusals_change_nothing(mutate: str | None, tag: str, reason: str) -> None:
    def two_rests(doc: dict[str, Any]) -> None:
        doc["rests"].append({"id": "camp", "label": "Camp"})
    game = grave(two_rests if mutate else None)
    state = _party(game, 0)
    new, answers = answer(game, state, tag)
    assert new is state
    assert not answers[0].ok and answers[0].reason == reason


def test_rest_in_a_ruleset_without_rests_is_refused() -> None:
    full = grave()
    game = Game.build(full.ruleset.model_copy(update={"rests": []}))
    state = _party(game, 0)
    new, answers = answer(game, state, VIGIL)
    assert new is state and answers[0].reason == "no-rests"
