"""The fold makes no reference cycles, so the ``gmtags`` command can run it with the cycle
collector paused (replay/cli.py, issue 13): every value it builds is freed by reference counting
alone. A change that makes cycles in the fold fails here, not as memory a long regress run
never gives back."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest

from replay import load_party, load_ruleset, parse_transcript, replay
from replay.cli import SERVER_GC_THRESHOLD, collect_cycles_for

ROOT = Path(__file__).resolve().parents[2]
CORPUS = ROOT / "fixtures/chats/corpus"
FIXTURES = [
    ("demo.jsonl", "rulesets/harrow.json", "parties/harrow.json"),
    ("bags-200.jsonl", "rulesets/harrow.json", "parties/harrow.json"),
    ("markets.jsonl", "rulesets/harrow.json", "parties/harrow.json"),
]
MISTAKES = "\n".join(json.dumps(line) for line in [
    {"role": "player", "name": "Ada", "text": "I look around. [inventory: action=\"add\"]"},
    {"role": "gm", "text": "[inventory: action=\"add\" item=\"Rope"},  # never closed
    {"role": "gm", "text": "[Inventory:  ACTION = “add” item=‘Torch’ who=Ada]"},
    {"role": "gm", "text": "[skill_check: skill=\"Stealth\" dc=\"x\" | ok=\"true\" | more]"},
    {"role": "gm", "text": "[loot: table=\"nowhere\"] [place: name=] [sheet: op=\"fly\"]"},
    {"role": "gm", "text": "[inventory: action=\"remove\" item=\"Dragon\" count=\"-3\"]"},
    {"role": "gm", "text": "[inventory: a=\"\\q\" [inventory: action=\"buy\" item=\"Torch\"]"},
])


def _chats() -> list[tuple[str, bytes, Path, Path]]:
    chats = [(name, (ROOT / "fixtures/chats" / name).read_bytes(), ROOT / "fixtures" / ruleset,
              ROOT / "fixtures" / party) for name, ruleset, party in FIXTURES]
    index = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))["chats"]
    chats += [(name, (CORPUS / name).read_bytes(), CORPUS / entry["ruleset"],
               CORPUS / entry["party"]) for name, entry in sorted(index.items())]
    chats.append(("mistakes", MISTAKES.encode(), ROOT / "fixtures/rulesets/harrow.json",
                  ROOT / "fixtures/parties/harrow.json"))
    return chats


@pytest.mark.parametrize("chat", _chats(), ids=lambda chat: chat[0])
def test_reading_and_folding_a_chat_leaves_no_cycles(chat):
    """Every fixture and corpus chat, and one of broken tags (malformed, repaired, refused):
    reading and folding it with the collector paused leaves nothing for the collector."""
    _, data, ruleset, party = chat
    game = load_ruleset(ruleset)  # loading a ruleset may make a few cycles, once per file
    gc.collect()
    gc.disable()
    transcript = parse_transcript(data)
    result = replay(game, transcript, load_party(game, party, transcript.player_name))
    assert result.answers  # the fold did work
    assert gc.collect() == 0


def test_batch_commands_pause_the_collector_and_the_server_keeps_it():
    collect_cycles_for("replay")
    assert not gc.isenabled()
    gc.enable()
    collect_cycles_for("serve")
    assert gc.isenabled()
    assert gc.get_threshold() == SERVER_GC_THRESHOLD
