"""The replay's text output (replay/console.py, issue 29): a header, each answered reply named
by message number and line with its prose beside its answers, compact tags, only refusals or
only the final state on request, the whole final state, and plurals that are words."""

from __future__ import annotations

import io
import json

from helpers import FIXTURES, fixture_json
from rich.console import Console
from rich.progress import TimeRemainingColumn

import replay
from replay.console import (
    Names,
    RateColumn,
    compact_tag,
    print_replay,
    progress_bar,
    progress_columns,
)

CHAT = FIXTURES / "chats" / "demo.jsonl"
NAMES = Names("demo.jsonl", "harrow.json", "party.json")


def shown(chat: bytes | None = None, party: dict | None = None, width: int = 80,
          **options: object) -> str:
    game = replay.load_ruleset(FIXTURES / "rulesets" / "harrow.json")
    transcript = (replay.parse_transcript(chat) if chat is not None
                  else replay.read_transcript(CHAT))
    state = replay.load_party(game, party or fixture_json("parties/harrow.json"))
    result = replay.replay(game, transcript, state)
    out = Console(file=io.StringIO(), width=width, highlight=False, color_system=None)
    print_replay(out, NAMES, game, transcript, state, result, **options)  # type: ignore[arg-type]
    text = out.file.getvalue()  # type: ignore[attr-defined]
    return "\n".join(line.rstrip() for line in text.splitlines())


def test_the_header_names_the_chat_ruleset_party_and_how_it_went():
    lines = shown().splitlines()
    assert lines[:4] == [
        "demo.jsonl: 12 messages in 2 sessions, 5 visible GM replies",
        "ruleset: Harrow Vale (harrow.json)",
        "party: party.json: Ada (player), Bram the Quiet",
        "16 answers: 12 ok, 4 refused · 10 diagnostics",
    ]


def test_each_reply_is_named_by_message_and_line_with_its_prose_beside_its_answers():
    text = shown()
    assert "message 2 (line 3) · GM: Under the cracked millstone you find a waxed bundle" in text
    assert "  ok      inventory add item=Torch" in text
    assert "[inventory: action=\"add\" item=\"Torch\"" not in text  # compact, not raw


def test_a_line_at_80_columns_stays_within_them():
    assert max(len(line) for line in shown(width=80).splitlines()) <= 80


def test_a_malformed_tag_shows_what_the_model_wrote():
    assert '[inventory: action="add" item=]' in shown(width=120)


def test_only_refused_leaves_out_every_answer_that_went_through():
    text = shown(only="refused")
    assert "  ok " not in text
    assert text.count("  refused ") == 4


def test_final_shows_the_header_and_the_state_only():
    text = shown(final=True)
    assert "message 2" not in text
    assert "After the chat" in text and "Ada's bag" in text


def test_the_final_state_has_pools_conditions_and_purse():
    party = fixture_json("parties/harrow.json")
    party["characters"][0]["conditions"] = ["rattled"]
    party["characters"][0]["pools"] = {"health": 7, "resolve": 3}
    text = shown(party=party, final=True)
    assert "Ada (player): Grit 7/10, Resolve 3/4 · conditions: Rattled · Coin worth" in text


def test_a_wound_track_is_in_the_final_state():
    game = replay.load_ruleset(FIXTURES / "rulesets" / "wounds.json")
    state = replay.load_party(game, fixture_json("parties/wounds.json"))
    transcript = replay.parse_transcript(b"")
    result = replay.replay(game, transcript, state)
    out = Console(file=io.StringIO(), width=100, color_system=None)
    print_replay(out, NAMES, game, transcript, state, result)
    assert "Wounds 2/" in out.file.getvalue()  # type: ignore[attr-defined]


def test_counts_of_one_are_singular():
    chat = json.dumps({"role": "gm", "text": 'Here. [inventory: action="add" item="Rope"]'})
    lines = shown(chat=chat.encode()).splitlines()
    assert lines[0] == "demo.jsonl: 1 message in 1 session, 1 visible GM reply"
    assert lines[3] == "1 answer: 1 ok, 0 refused · 0 diagnostics"
    assert "(s)" not in "\n".join(lines)


def test_a_skipped_line_is_named_by_its_line_once():
    chat = b'{"role": "gm", "text": "a"}\n{"role": "gm", "text": "b" "x"}\n'
    text = shown(chat=chat)
    assert "line 2: bad-json: not JSON: Expecting ',' delimiter at column 28" in text


def test_compact_tags_quote_only_values_with_spaces():
    game = replay.load_ruleset(FIXTURES / "rulesets" / "harrow.json")
    state = replay.load_party(game, fixture_json("parties/harrow.json"))
    chat = json.dumps({"role": "gm", "text": '[inventory: action="pay" amount="3 shillings" '
                                             'who="Ada"]'})
    result = replay.replay(game, replay.parse_transcript(chat), state)
    assert compact_tag(result.answers[0].answer) == 'inventory pay amount="3 shillings" who=Ada'


def test_the_progress_bar_shows_a_rate_and_the_time_left():
    kinds = [type(column) for column in progress_columns()]
    assert RateColumn in kinds and TimeRemainingColumn in kinds
    with progress_bar(1000, True) as update:
        assert update is not None
        update(10, 1000)
    with progress_bar(1000, False) as quiet:
        assert quiet is None
