"""Every action is declared once (DESIGN.md "Actions: one declaration each"): the standard
refusals, the notes, the reason codes and the record fields come from the declarations, and
what the engine answers never says more than they declare."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers import FIXTURES, fixture_json

import tagparse
from engine import ACTIONS, EVENTS, TurnContext, apply_event, apply_reply, load_ruleset, start_state
from engine.actions.attrs import COUNT, TEXT, WHO
from engine.actions.bags import Add
from engine.actions.declare import (
    Action,
    Refusal,
    Request,
    action,
    attr,
    read_request,
    request,
    table,
)
from engine.actions.reply import ACTION_ATTRIBUTE, KNOWN_ACTIONS, READS, action_of
from engine.rules import reasons
from engine.text.reference import EVERY_EVENT, EVERY_TAG
from replay.cli_io import load_chat
from replay.fold import replay

GRAVEWATCH = load_ruleset(fixture_json("rulesets/gravewatch.json"))  # has every block
PARTY = start_state(GRAVEWATCH, fixture_json("parties/gravewatch.json"))
EVERYTHING = {**ACTIONS, **EVENTS}


def _tag(declared: Action, **attrs: str) -> tagparse.Tag:
    """A tag of ``declared``'s kind and action with ``attrs``."""
    attribute = ACTION_ATTRIBUTE.get(declared.kind)
    head = f'{attribute}="{declared.name}" ' if attribute and declared.name else ""
    body = " ".join(f'{name}="{value}"' for name, value in attrs.items())
    tags = tagparse.scan(f"[{declared.kind}: {head}{body}]").tags
    assert len(tags) == 1 and tags[0].malformed is None
    return tags[0]


def _answer(declared: Action, **attrs: str):
    ctx = TurnContext(PARTY.seed, (0, 0))
    if declared.kind == "event":
        return apply_event(GRAVEWATCH, PARTY, {"action": declared.name, **attrs}, None, ctx)
    new_state, answers = apply_reply(GRAVEWATCH, PARTY, [_tag(declared, **attrs)], ctx)
    return new_state, answers[0]


def _fields(declared: Action, reader: object) -> list[str]:
    return [meta.name for _, meta in declared.request.declared if meta.reader is reader]


def test_every_needed_block_is_in_the_fixture_used_below() -> None:
    lacking = [key for key, d in EVERYTHING.items() if d.needs and not d.needs.test(GRAVEWATCH)]
    assert lacking == []


def _keys(has: Callable[[Action], object]) -> list[tuple[str, str | None]]:
    """The declared actions and events ``has(declared)`` holds for, in a stable order."""
    return sorted((key for key, d in EVERYTHING.items() if has(d)), key=str)


def _required(declared: Action) -> list:
    return [meta for _, meta in declared.request.declared if meta.missing is not None]


@pytest.mark.parametrize("key", _keys(_required))
def test_a_required_attribute_left_out_is_refused_with_the_state_unchanged(key) -> None:
    declared = EVERYTHING[key]
    required = _required(declared)
    new_state, answer = _answer(declared)
    assert (answer.ok, answer.reason, answer.text) == (False, reasons.MISSING_ATTRIBUTE,
                                                      required[0].missing)
    assert new_state is PARTY


@pytest.mark.parametrize("key", _keys(lambda d: "who" in d.reads()))
def test_who_naming_nobody_is_refused_unknown_character_with_the_state_unchanged(key) -> None:
    declared = EVERYTHING[key]
    filled = {meta.name: "x" for _, meta in declared.request.declared
              if meta.missing is not None}
    new_state, answer = _answer(declared, **filled, who="Nobody Atall")
    if answer.reason != reasons.UNKNOWN_CHARACTER:
        # an attribute read before who= refused first (a rest, a coin, a package by name)
        assert answer.ok is False and answer.reason in declared.every_reason()
    else:
        assert answer.text.startswith('Nobody called "Nobody Atall" is in the party (')
    assert new_state is PARTY


@pytest.mark.parametrize("key", _keys(lambda d: _fields(d, COUNT)))
def test_a_count_that_is_no_whole_number_is_refused_bad_count(key) -> None:
    declared = EVERYTHING[key]
    filled = {meta.name: "Torch" for _, meta in declared.request.declared
              if meta.missing is not None}
    new_state, answer = _answer(declared, **filled, count="2d6")
    assert (answer.ok, answer.reason) == (False, reasons.BAD_COUNT)
    assert answer.text == 'count="2d6" is not a whole number from 1 to 1000000.'
    assert new_state is PARTY


def test_reads_and_known_actions_come_from_the_declarations() -> None:
    def reads(key: tuple[str, str | None]) -> frozenset[str]:
        return READS[(key, ACTIONS[key].request)]
    assert reads(("inventory", "pay")) == {"action", "amount", "who"}
    assert reads(("inventory", "add")) >= {"item", "items", "count", "who", "like"}
    assert reads(("skill_check", None)) >= {"skill", "with", "upgradeown", "mode"}
    assert KNOWN_ACTIONS["inventory"] == {name for (kind, name) in ACTIONS if kind == "inventory"}
    assert KNOWN_ACTIONS["sheet"] == {"rest"}


def test_an_attribute_no_declaration_reads_is_noted_and_ignored() -> None:
    _, answers = apply_reply(GRAVEWATCH, PARTY, tagparse.scan(
        '[inventory: action="remove" item="x" colour="red" outcome="won"]').tags,
        TurnContext(PARTY.seed, (0, 0)))
    assert answers[0].notes == ('ignored unknown attribute "colour"',
                                'ignored "outcome": the engine works that out itself')


def test_every_reason_a_declaration_names_has_a_meaning() -> None:
    named = {code for d in EVERYTHING.values() for code in d.every_reason()}
    named |= set(EVERY_TAG) | set(EVERY_EVENT)
    assert named <= set(reasons.MEANINGS)
    assert all(reasons.MEANINGS[code] for code in named)


def _corpus() -> list[tuple[Path, Path, Path]]:
    """Every chat of the recorded corpus, with its ruleset and party."""
    corpus = FIXTURES / "chats" / "corpus"
    index = json.loads((corpus / "index.json").read_text(encoding="utf-8"))["chats"]
    return [(corpus / name, corpus / entry["ruleset"], corpus / entry["party"])
            for name, entry in sorted(index.items())]


def test_answers_never_give_a_reason_or_record_field_their_declaration_lacks() -> None:
    """Replaying the recorded corpus: each answer's reason code is one its action declares (or
    one any tag can get), and each record field is one it declares for docs/tags.md."""
    seen = 0
    for chat, ruleset, party in _corpus():
        game, transcript, state = load_chat(chat, ruleset, party)
        for item in replay(game, transcript, state).answers:
            answer = item.answer
            if answer.tag.kind == "event":
                declared = EVENTS.get(("event", answer.tag.attrs.get("action", "").lower()))
            else:
                declared = action_of(tagparse.scan(answer.tag.raw).tags[0])
            if declared is None:
                assert answer.reason in (reasons.UNKNOWN_ACTION, reasons.UNSUPPORTED,
                                         reasons.MALFORMED)
                continue
            if answer.reason is not None:
                assert answer.reason in (*declared.every_reason(), *EVERY_TAG), (
                    chat.name, answer.tag.raw, answer.reason)
            assert set(answer.record) <= set(declared.record), (
                chat.name, answer.tag.raw, set(answer.record) - set(declared.record))
            seen += 1
    assert seen > 1500


def test_adding_an_action_is_one_declaration_and_one_handler() -> None:
    """The example docs/rulesets.md shows: a request, a handler, and the table it joins."""

    @request
    class Shout(Request):
        """Shout a word; everyone hears it."""

        word: str = attr(TEXT, "what is shouted", missing="Say what to shout.")
        who: int = attr(WHO, "who shouts", shown="the player")

    @action("inventory", "shout", Shout, record={"said": "what was shouted"})
    def shout(game, state, shout: Shout, ctx):
        from engine.actions.answers import accepted

        name = state.characters[shout.who].name
        return state, accepted(shout.tag, f"{name}: {shout.word}!", {"said": shout.word})

    actions = table(shout)
    tag = tagparse.scan('[inventory: action="shout" word="Fire"]').tags[0]
    ctx = TurnContext(PARTY.seed, (0, 0))
    state, answer = actions[("inventory", "shout")].answer(GRAVEWATCH, PARTY, tag, ctx)
    assert answer.ok and answer.record == {"said": "Fire"} and state is PARTY
    refused = actions[("inventory", "shout")].answer(
        GRAVEWATCH, PARTY, tagparse.scan('[inventory: action="shout"]').tags[0], ctx)[1]
    assert (refused.reason, refused.text) == (reasons.MISSING_ATTRIBUTE, "Say what to shout.")
    assert shout.every_reason() == (reasons.MISSING_ATTRIBUTE, reasons.UNKNOWN_CHARACTER)


def test_a_declaration_mistake_is_found_when_the_module_loads() -> None:
    with pytest.raises(TypeError, match="not declared with attr"):
        @request
        class Bad(Request):
            word: str = "x"
    declared = ACTIONS[("inventory", "pay")]
    with pytest.raises(ValueError, match="declared twice"):
        table(declared, dataclasses.replace(declared))


def test_reading_a_request_reads_aliases_and_gives_the_first_refusal() -> None:
    add = ACTIONS[("inventory", "add")].request
    read = read_request(add, tagparse.scan('[inventory: action="add" items="Rope"]').tags[0],
                        GRAVEWATCH, PARTY)
    assert isinstance(read, Add) and read.item == "Rope"
    first = read_request(add, tagparse.scan(
        '[inventory: action="add" item="Rope" count="0" who="Nobody"]').tags[0],
        GRAVEWATCH, PARTY)
    assert isinstance(first, Refusal) and first.reason == reasons.BAD_COUNT  # count= before who=


def test_an_event_over_64_kib_is_refused_malformed_with_the_state_unchanged() -> None:
    """An event's size is its whole JSON (it used to be measured after being cut to 2,000
    characters, so no event was ever too large)."""
    ctx = TurnContext(PARTY.seed, (0, 0))
    new_state, answer = apply_event(GRAVEWATCH, PARTY, {"action": "add", "item": "Rope",
                                                        "note": "x" * 70_000}, None, ctx)
    assert (answer.ok, answer.reason, answer.text) == (False, reasons.MALFORMED,
                                                      "This event is too large.")
    assert new_state is PARTY
    assert len(answer.tag.raw) <= 2000  # the answer still names it briefly
    _, small = apply_event(GRAVEWATCH, PARTY, {"action": "split", "stack": 99,
                                                "note": "x" * 60_000}, None, ctx)
    assert small.reason == reasons.UNKNOWN_STACK  # under the limit: read, and answered
