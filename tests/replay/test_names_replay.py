"""Issue 39 through the fold: a chat whose GM shortens names ("Bram" for Bram the Quiet, "rope
lad" for the Rope ladder, dc="DC 9") replays to the same answers every time, records and
regresses with no difference, and ends in the very state of the same chat with every name
and number written out."""

from __future__ import annotations

import json

from helpers import fixture_json, harrow_party

from engine import load_ruleset
from replay.fold import replay
from replay.record import read_source, record
from replay.regress import regress

GAME = load_ruleset(fixture_json("rulesets/harrow.json"))

SHORT = [
    'Bram finds a ladder. [inventory: action="add" item="Rope ladder" who="Bram"]',
    'He hands it over. [inventory: action="give" item="rope lad" who="bram" to="Ada"]',
    'Bram climbs. [skill_check: skill="climb" dc="DC 9" who="Bram the"]',
    'Torches for all. [inventory: action="add" item="Torch" count="2 torches" who="Bram"]',
    'One burns out. [inventory: action="remove" item="torc" count="x1" who="Bram"]',
]
WHOLE = [
    'Bram finds a ladder. [inventory: action="add" item="Rope ladder" who="Bram the Quiet"]',
    'He hands it over. [inventory: action="give" item="Rope ladder" who="Bram the Quiet" '
    'to="Ada"]',
    'Bram climbs. [skill_check: skill="climb" dc="9" who="Bram the Quiet"]',
    'Torches for all. [inventory: action="add" item="Torch" count="2" who="Bram the Quiet"]',
    'One burns out. [inventory: action="remove" item="Torch" count="1" who="Bram the Quiet"]',
]


def chat(replies: list[str]) -> bytes:
    lines = []
    for reply in replies:
        lines += [{"role": "player", "name": "Ada", "text": "Go on."},
                  {"role": "gm", "text": reply}]
    return "\n".join(json.dumps(line) for line in lines).encode()


def answers(replies: list[str]) -> tuple[list[dict[str, object]], str]:
    result = replay(GAME, read_source(chat(replies)).transcript, harrow_party(GAME))
    return [found.answer.to_json() for found in result.answers], result.state.canonical()


def test_issue_39_a_chat_with_short_names_replays_to_the_same_answers_twice() -> None:
    first, state = answers(SHORT)
    again, state_again = answers(SHORT)
    assert json.dumps(first) == json.dumps(again) and state == state_again
    assert all(found["ok"] for found in first), first
    assert [found["notes"] for found in first] == [
        ['read who="Bram" as Bram the Quiet'],
        ['read who="bram" as Bram the Quiet', 'read item="rope lad" as Rope ladder'],
        ['read who="Bram the" as Bram the Quiet', 'read dc="DC 9" as 9'],
        ['read count="2 torches" as 2', 'read who="Bram" as Bram the Quiet'],
        ['read count="x1" as 1', 'read who="Bram" as Bram the Quiet',
         'read item="torc" as Torch'],
    ]


def test_issue_39_short_names_answer_as_the_names_written_out_do() -> None:
    short, short_state = answers(SHORT)
    whole, whole_state = answers(WHOLE)
    assert short_state == whole_state
    assert [(a["ok"], a["text"], a["record"]) for a in short] == \
        [(a["ok"], a["text"], a["record"]) for a in whole]
    assert all(found["notes"] == [] for found in whole)


def test_issue_39_a_recorded_chat_with_short_names_regresses_with_no_difference() -> None:
    recorded = record(GAME, read_source(chat(SHORT)), harrow_party(GAME)).data
    assert b"Bram the Quiet" in recorded
    report = regress("short", GAME, read_source(recorded), harrow_party(GAME))
    assert (report.answers, report.differences, report.unanswered) == (len(SHORT), [], [])
