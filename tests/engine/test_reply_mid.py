"""A reply answered mid-reply (issue 27, DESIGN.md "Interfaces"): the tags up to a tag the
stage stopped at are answered before the tags after it, so a ``[place:]`` or a fight the model
wrote after it does not move ahead of the answer the model read. The stop is read from the
reply's text (``answered="mid-reply"`` in the tag's answer part), so ``gmtags replay`` and
``regress`` need nothing but the chat."""

from __future__ import annotations

from helpers import answer, fixture_json
from test_market import GAME, market_party

import tagparse
from engine import TurnContext, answer_attrs, apply_reply, load_ruleset, start_state
from engine.actions.reply import MID_REPLY, may_stop, settled

BUY = '[inventory: action="buy" item="Leather coat"]'
PLACE = '[place: name="Millbrook" size="market town"]'
ROPE = '[inventory: action="add" item="Rope"]'
START = '[combat: op="start" foe="Goblin"]'
MARK = ' | ok="true" text="read by the model" answered="mid-reply"]'


def marked(tag: str) -> str:
    """``tag`` as the stage leaves a tag it stopped at (its answer part is re-answered)."""
    return tag[:-1] + MARK


def test_a_place_after_a_stopped_purchase_holds_only_for_the_tags_after_it() -> None:
    state = market_party(GAME)
    _, usual = answer(GAME, state, f"{BUY} {PLACE}")
    new, stopped = answer(GAME, state, f"{marked(BUY)} {PLACE}")
    assert usual[0].ok  # the whole reply: the place first, the coat bought at Millbrook
    assert not stopped[0].ok and stopped[0].reason == "no-place"  # what the model read
    assert new.place is not None and new.place.name == "Millbrook"  # the place still holds
    assert stopped[0].record[MID_REPLY[0]] == MID_REPLY[1]
    assert MID_REPLY[0] not in stopped[1].record


def test_the_tags_after_a_stop_keep_the_usual_order_among_themselves() -> None:
    state = market_party(GAME)
    _, answers = answer(GAME, state, f"{marked(ROPE)} {BUY} {PLACE}")
    assert answers[1].ok  # the place, after the stop, is still resolved before the purchase


def test_the_mark_is_written_back_and_re_read() -> None:
    """``gmtags record`` writes answer parts with ``answer_attrs``: the mark survives, and
    the fold of the re-recorded text answers alike."""
    state = market_party(GAME)
    _, first = answer(GAME, state, f"{marked(BUY)} {PLACE}")
    assert MID_REPLY in answer_attrs(first[0])
    rewritten = tagparse.render("inventory", (("action", "buy"), ("item", "Leather coat")),
                                answer_attrs(first[0])) + " " + PLACE
    _, again = answer(GAME, state, rewritten)
    assert [(a.ok, a.text, a.record) for a in again] == [(a.ok, a.text, a.record) for a in first]


def test_a_mark_where_no_stop_can_be_counts_for_nothing() -> None:
    """A fight tag, a tag after the reply's first fight tag and a [place:] that is not the
    reply's first tag are never stopped at; a mark a model copies onto one is no stop."""
    tags = tagparse.scan(
        f"{marked(START)} {marked(ROPE)} {marked(PLACE)}").tags
    assert [may_stop(tags, i) for i in range(3)] == [False, False, False]
    assert settled(tags) == ()
    plain = tagparse.scan(f'{marked(PLACE)} {marked(BUY)} {marked(PLACE)}').tags
    assert settled(plain) == (0, 1)


def test_stops_given_by_the_stage_match_the_marks_read_from_the_text() -> None:
    state = market_party(GAME)
    ctx = TurnContext(state.seed, (0, 0))
    plain = tagparse.scan(f"{BUY} {PLACE}").tags
    given, by_stage = apply_reply(GAME, state, plain, ctx, stops=[0])
    read, by_text = apply_reply(GAME, state, tagparse.scan(f"{marked(BUY)} {PLACE}").tags, ctx)
    assert given.canonical() == read.canonical()
    assert [(a.ok, a.text, a.record) for a in by_stage] == [
        (a.ok, a.text, a.record) for a in by_text]
    # a stop the stage may not make (the late place) is ignored like a mark there
    _, ignored = apply_reply(GAME, state, plain, ctx, stops=[1])
    _, usual = apply_reply(GAME, state, plain, ctx)
    assert ignored == usual


def test_a_stopped_reply_rolls_the_dice_the_whole_reply_rolls() -> None:
    """Only the order of state changes moves: the k-th tag of a kind keeps its dice."""
    game = load_ruleset(fixture_json("rulesets/harrow.json"))
    state = start_state(game, fixture_json("parties/harrow.json"))
    climb = '[skill_check: skill="athletics" dc="9" who="Ada"]'
    _, usual = answer(game, state, f"{climb} {climb}")
    _, stopped = answer(game, state, f"{marked(climb)} {climb}")
    assert [a.record.get("rolls") for a in usual] == [a.record.get("rolls") for a in stopped]
