"""The 200-reply bags chat (issue 4): a caravan journey in The Long Haul that exercises the
shared view and carry limits, coin weight, stack limits, set/give/equip/unequip/bind/unbind, a
cursed ring, services, ``native: false`` and the items the GM invents, replayed against the
checked-in expected answers and final state.

Regenerate the chat with ``fixtures/chats/make_bags_chat.py`` and the expected file with
``GMTAGS_UPDATE_EXPECTED=1 .venv/bin/python -m pytest tests/replay/test_bags_chat.py`` — then
read the diff: it must be what you intended.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES, ROOT

import replay
from engine import State

CHAT = FIXTURES / "chats" / "bags-200.jsonl"
RULESET = FIXTURES / "rulesets" / "bags.json"
PARTY = FIXTURES / "parties" / "bags.json"
EXPECTED = Path(__file__).resolve().parent / "expected" / "bags-200.json"


def lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CHAT.read_text(encoding="utf-8").splitlines()]


@cache
def replayed() -> dict[str, Any]:
    game = replay.load_ruleset(RULESET)
    result = replay.replay(game, replay.read_transcript(CHAT), replay.load_party(game, PARTY))
    return expected_form(result.to_json())


def expected_form(document: dict[str, Any]) -> dict[str, Any]:
    """What the expected file pins: every answer (without the tag it repeats) and the state,
    without the fields left at their defaults (so a new state field does not change it)."""
    answers = [{"message": a["message"], "kind": a["tag"]["kind"],
                "action": a["tag"]["attrs"].get("action"), "ok": a["ok"],
                "reason": a["reason"], "text": a["text"], "record": a["record"],
                "notes": a["notes"]} for a in document["answers"]]
    state = State.model_validate(document["state"]).model_dump(mode="json", exclude_defaults=True)
    return {"answers": answers, "state": state}


def expected() -> dict[str, Any]:
    if os.environ.get("GMTAGS_UPDATE_EXPECTED") == "1":
        EXPECTED.parent.mkdir(parents=True, exist_ok=True)
        EXPECTED.write_text(json.dumps(replayed(), indent=1, ensure_ascii=False) + "\n",
                            encoding="utf-8")
    loaded: dict[str, Any] = json.loads(EXPECTED.read_text(encoding="utf-8"))
    return loaded


def test_the_chat_is_what_the_generator_writes(tmp_path: Path) -> None:
    out = tmp_path / "bags.jsonl"
    subprocess.run([sys.executable, str(FIXTURES / "chats" / "make_bags_chat.py"), str(out)],
                   check=True)
    assert out.read_bytes() == CHAT.read_bytes()


def test_the_chat_has_200_replies_two_sessions_swipes_and_a_hidden_reply() -> None:
    chat = lines()
    assert sum(1 for line in chat if line["role"] == "gm") == 200
    assert sum(1 for line in chat if line.get("new_session")) == 1
    assert any("swipes" in line for line in chat) and any(line.get("hidden") for line in chat)
    text = " ".join(line["text"] for line in chat)
    for action in ("add", "remove", "set", "give", "equip", "unequip", "bind", "unbind", "earn"):
        assert f'action="{action}"' in text
    for attribute in ("like=", "category=", "rarity=", "tags=", "stats=", "slots=", "binds=",
                      "worn=", "carried=", "summary="):
        assert attribute in text


def test_the_replay_matches_the_expected_answers_and_state() -> None:
    want = expected()
    got = replayed()
    assert len(got["answers"]) == len(want["answers"])
    for mine, theirs in zip(got["answers"], want["answers"], strict=True):
        assert mine == theirs
    assert got["state"] == want["state"]


def test_every_refusal_of_the_issue_is_in_the_chat() -> None:
    reasons = {a["reason"] for a in replayed()["answers"] if not a["ok"]}
    assert reasons >= {"nothing-carried", "not-enough", "service", "not-ruleset-item",
                       "slots-full", "not-equippable", "binding-full", "cursed", "not-held",
                       "already"}


def answered(message_text: str) -> list[dict[str, Any]]:
    """The answers to the GM reply whose text contains ``message_text``."""
    chat = replay.read_transcript(CHAT).messages()
    index = next(i for i, (_, _, m) in enumerate(chat) if message_text in m.text)
    return [a for a in replayed()["answers"] if a["message"] == index]


@pytest.mark.parametrize(("reply", "texts"), [
    ("The quartermaster points", ["Added Rope ×3 to Juno's bag."]),  # ITM-CARRY-5
    ("Six ingots", ["Added Iron ingot ×2 to Ada's bag, Iron ingot ×1 to Juno's bag, Iron ingot "
                    "×3 to Bram's bag."]),  # ITM-CARRY-6, OQ-12
    ("The anvil will not fit", ["Nobody in the party (Ada, Juno, Bram) can carry Anvil ×1; it "
                                "stays behind."]),  # ITM-CARRY-7
    ("It slides on too easily", ["Juno equips Widow's ring.", "Juno binds Widow's ring (Oath). "
                                 "It is cursed: it will not let go."]),  # ITM-BIND-3
    ("He lifts the curse", ["The curse on Widow's ring ends; Juno unbinds it."]),  # OQ-11
    ("Thick as a door", [
        "Invented Warden coat [Armor, Common; Bulk 3, Guard 1]. Changed: Guard 2 capped to 1 "
        "(Common items); worn defence change dropped: Guard already adds to the defence. Added "
        "Warden coat ×1 to Bram's bag."]),  # ITM-PROP-9, ITM-PROP-15
    ("A bearded axe", ["Invented Bearded axe [Weapon, Common; Damage 1d8, Rolls with brawn]. It "
                       "fights as Hand axe does. Added Bearded axe ×1 to Bram's bag."]),
    ("He will not say what it is worth", [
        "Invented Silver idol [Relic, Storied, Silvered; Bulk 1] (carried: +1 on checks (Ward))."
        " carried= read from stats=. summary= read from stats=. Changed: tag \"shiny\" dropped "
        "(not a tag here). Added Silver idol ×1 to Ada's bag."]),  # ITM-PROP-10/12, BLOCK-11
])
def test_key_answers_of_the_chat(reply: str, texts: list[str]) -> None:
    assert [a["text"] for a in answered(reply)] == texts


def test_itm_prop_20_the_invented_names_last_into_the_second_session() -> None:
    state = replayed()["state"]
    names = [i["name"] for i in state["invented"]]
    assert "Ember brooch" in names and "Cart wheel" in names
    ada = next(c for c in state["characters"] if c["name"] == "Ada")
    assert [s["count"] for s in ada["bag"] if s["name"] == "Ember brooch"] == [2]


def test_no_hidden_stat_reaches_the_gm() -> None:
    """ITM-BLOCK-11: the idol's True worth is never in an answer."""
    for answer in replayed()["answers"]:
        told = json.dumps([answer["text"], answer["record"], answer["notes"]])
        assert "worth" not in told.casefold()


@pytest.mark.parametrize("seed", ["0", "4242"])
def test_the_replay_is_the_same_under_any_hash_seed(seed: str) -> None:
    env = {**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(ROOT)}
    run = subprocess.run(
        [sys.executable, "-c", "from replay.cli import main; main()", "replay", str(CHAT),
         "--ruleset", str(RULESET), "--party", str(PARTY), "--format", "json"],
        capture_output=True, text=True, env=env, cwd=ROOT, check=True)
    assert expected_form(json.loads(run.stdout)) == replayed()
