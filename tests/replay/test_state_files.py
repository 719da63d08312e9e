"""Exported states: written by the one rule of every JSON gmtags writes (camelCase keys,
defaults left out, ``format`` and ``encounter`` always), and files exported in the earlier
format (``gmtags-state/1``, snake_case, every field written; ``fixtures/states/``, made by
``export-state`` before the change) still load wherever a state is read."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import FIXTURES

from engine.rules.state import FOE_ONLY, STATE_FORMAT, Combatant
from replay import load_party, load_ruleset, read_transcript, replay

GMTAGS = shutil.which("gmtags", path=str(Path(sys.executable).parent)) or "gmtags"
CORPUS = FIXTURES / "chats/corpus"

# Each old file: the chat and its first lines it was exported after, and the game's files.
OLD = {
    "format-1-srd5-fight.json": ("srd5-fights.jsonl", 66, "srd5", "srd5"),
    "format-1-d100-fight.json": ("against-d100-fights.jsonl", 15, "against-d100-fight",
                                 "against-d100-fight"),
    "format-1-srd5-after.json": ("srd5-fights.jsonl", None, "srd5", "srd5"),
}


def _exported_now(chat: str, lines: int | None, ruleset: str, party: str,
                  tmp_path: Path) -> tuple[Path, Path, Path]:
    """Today's ``export-state`` after the same lines of the chat: (state, ruleset, party)."""
    text = (CORPUS / chat).read_text(encoding="utf-8")
    prefix = tmp_path / "chat.jsonl"
    prefix.write_text("".join(text.splitlines(keepends=True)[:lines]), encoding="utf-8")
    rules, start = FIXTURES / f"rulesets/{ruleset}.json", FIXTURES / f"parties/{party}.json"
    out = tmp_path / "state.json"
    subprocess.run([GMTAGS, "export-state", str(prefix), "-r", str(rules), "-p", str(start),
                    "-o", str(out)], check=True, capture_output=True, timeout=120)
    return out, rules, start


@pytest.mark.parametrize("name", sorted(OLD))
def test_a_state_exported_in_format_1_loads_as_the_same_state_exported_today(
        name: str, tmp_path: Path) -> None:
    chat, lines, ruleset, party = OLD[name]
    old = json.loads((FIXTURES / "states" / name).read_text(encoding="utf-8"))
    assert old["format"] == "gmtags-state/1" and "gear_taken" in json.dumps(old)
    now, rules, _ = _exported_now(chat, lines, ruleset, party, tmp_path)
    written = json.loads(now.read_text(encoding="utf-8"))
    assert written["format"] == STATE_FORMAT == "gmtags-state/2"
    assert "encounter" in written and "gear_taken" not in json.dumps(written)
    game = load_ruleset(rules)
    assert load_party(game, old) == load_party(game, written)
    checked = subprocess.run([GMTAGS, "check", str(rules), "--party",
                              str(FIXTURES / "states" / name)],
                             capture_output=True, text=True, timeout=120, check=False)
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_a_hero_in_a_fight_carries_no_foe_field_and_a_foe_its_numbers() -> None:
    old = json.loads((FIXTURES / "states/format-1-srd5-fight.json").read_text(encoding="utf-8"))
    assert any(c["side"] == "party" and "hp_max" in c for c in old["encounter"]["combatants"])
    game = load_ruleset(FIXTURES / "rulesets/srd5.json")
    chat = read_transcript(CORPUS / "srd5-fights.jsonl")
    state = load_party(game, FIXTURES / "parties/srd5.json")
    result = replay(game, chat, state).to_json()
    assert result["state"]["encounter"] is None  # the chat ends out of a fight
    fight = load_party(game, old).to_json()["encounter"]
    foe_keys = {Combatant.model_fields[name].alias for name in FOE_ONLY}
    heroes = [c for c in fight["combatants"] if c["side"] == "party"]
    foes = [c for c in fight["combatants"] if c["side"] == "foes"]
    assert heroes and foes
    assert all(not foe_keys & set(c) for c in heroes)
    assert all({"hp", "hpMax", "defence"} <= set(c) for c in foes)


def test_a_hero_given_a_foe_number_is_refused() -> None:
    with pytest.raises(ValueError, match="foe-only"):
        Combatant(name="Ada", side="party", initiative=3, joined=0, hp=5)
