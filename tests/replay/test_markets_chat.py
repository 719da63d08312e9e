"""The markets fixture chat: three places over two sessions, with swipes, buys and sells,
replayed against Gravewatch's market (ITM-PLACE-4..6, ITM-DAY-4/5, ITM-BUY-4)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from helpers import FIXTURES

import replay
from engine.actions.market import market_block

CHAT = FIXTURES / "chats" / "markets.jsonl"
RULESET = FIXTURES / "rulesets" / "gravewatch.json"
PARTY = FIXTURES / "parties" / "markets.json"
MARKET_TAGS = ("[place:", 'action="buy"', 'action="sell"')


def lines() -> list[dict[str, Any]]:
    return [json.loads(line) for line in CHAT.read_text(encoding="utf-8").splitlines()]


def run(chat: list[dict[str, Any]], tmp_path: Path, name: str = "chat.jsonl") -> Any:
    path = tmp_path / name
    path.write_text("".join(json.dumps(line) + "\n" for line in chat), encoding="utf-8")
    game = replay.load_ruleset(RULESET)
    return replay.replay(game, replay.read_transcript(path), replay.load_party(game, PARTY))


def outcomes(result: Any) -> list[tuple[int, str, bool, str | None, str]]:
    return [(a.message, a.answer.tag.kind, a.answer.ok, a.answer.reason, a.answer.text)
            for a in result.answers]


def test_the_chat_has_three_places_two_sessions_swipes_buys_and_sells():
    chat = lines()
    text = " ".join(line.get("text", "") for line in chat if line["role"] == "gm")
    assert all(f'name="{place}"' in text for place in ("Millbrook", "Ashford", "Gallows Cross"))
    assert sum(1 for line in chat if line.get("new_session")) == 1
    assert sum(1 for line in chat if "swipes" in line) >= 4
    assert 'action="buy"' in text and 'action="sell"' in text


def test_the_chat_replays_to_the_expected_answers(tmp_path: Path):
    result = run(lines(), tmp_path)
    got = [(kind, ok, reason) for _, kind, ok, reason, _ in outcomes(result)]
    assert got == [
        ("place", True, None),  # Millbrook, market town
        ("inventory", True, None),  # ITM-PRICE-5: a coat of 8 shillings at dear
        ("inventory", True, None),  # sell the spade to the smith
        ("inventory", True, None),  # the smith's silver nail (rare: limited 1d2)
        ("place", True, None),  # Ashford, hamlet: another place ends the day
        ("inventory", True, None),
        ("inventory", True, None),
        ("inventory", False, "no-place"),  # a new session: the place counts from its start
        ("place", True, None),  # Gallows Cross, village
        ("inventory", True, None),
        ("inventory", True, None),  # two coats: the coat's own limit is 2 a day
        ("inventory", False, "sold-out"),
        ("place", True, None),  # day="new"
        ("inventory", True, None),  # a new day restocks the coat
        ("inventory", False, "cannot-carry"),  # Ada is at her carry limit: nothing is bought
    ]
    texts = [text for *_, text in outcomes(result)]
    assert texts[1] == ("Ada bought Oilskin coat ×1 from the chandler for 12 shillings. "
                        "Paid with crowns ×2, shillings ×2.")
    assert texts[2] == "Ada sold Grave spade ×1 to the smith for 30 pennies (shillings ×2, pennies ×6)."
    place = result.state.place
    assert place is not None and (place.name, place.size, place.day) == ("Gallows Cross",
                                                                         "village", 2)


def test_itm_place_5_6_player_tags_and_hidden_replies_never_count(tmp_path: Path):
    """The player's [place: name="Caer Ys" size="city"] and a hidden GM reply's place are in the
    chat; neither is ever answered, and Millbrook holds until Ashford is named."""
    result = run(lines(), tmp_path)
    named = [a.answer.record["name"] for a in result.answers if a.answer.tag.kind == "place"]
    assert named == ["Millbrook", "Ashford", "Gallows Cross", "Gallows Cross"]


def swipe_choices() -> list[tuple[int, list[int]]]:
    """(line index, swipe indices) for every reply with swipes and no market tag."""
    choices = []
    for index, line in enumerate(lines()):
        swipes = line.get("swipes")
        if swipes and not any(t in s for s in swipes for t in MARKET_TAGS):
            choices.append((index, list(range(len(swipes)))))
    return choices


def test_every_choice_of_swipes_replays_to_the_same_state(tmp_path: Path):
    """ITM-DAY-4/5, ITM-PLACE-6: swipes of replies without market tags change nothing — the
    same answers, the same final state, the same shelf in the MARKET block."""
    base = lines()
    choices = swipe_choices()
    combos = list(itertools.product(*(options for _, options in choices)))
    assert len(combos) >= 12
    expected = run(base, tmp_path, "base.jsonl")
    game = replay.load_ruleset(RULESET)
    expected_block = market_block(game, expected.state)
    assert expected_block.startswith("MARKET\nPlace: Gallows Cross (village), market day 2.")
    for number, combo in enumerate(combos):
        chat = [dict(line) for line in base]
        for (index, _), swipe in zip(choices, combo, strict=True):
            chat[index]["swipe"] = swipe
            chat[index]["text"] = chat[index]["swipes"][swipe]
        result = run(chat, tmp_path, f"combo-{number}.jsonl")
        assert result.state.canonical() == expected.state.canonical()
        assert outcomes(result) == outcomes(expected)
        assert market_block(game, result.state) == expected_block


@pytest.mark.parametrize("dice", ["per-turn", "per-swipe"])
def test_a_market_reply_swiped_keeps_its_days_shelf(tmp_path: Path, dice: str):
    """A swipe of the reply that began a day (same tags, other prose) rolls the same shelf,
    even when checks roll per swipe."""
    chat = lines()
    first = next(i for i, line in enumerate(chat) if 'name="Millbrook"' in line.get("text", ""))
    original = chat[first]["text"]
    chat[first] = {"role": "gm", "swipes": [original, "Other words. " + original], "swipe": 1,
                   "text": "Other words. " + original}
    party = json.loads(PARTY.read_text(encoding="utf-8"))
    party["dice"] = dice
    game = replay.load_ruleset(RULESET)
    path = tmp_path / "swiped.jsonl"
    path.write_text("".join(json.dumps(line) + "\n" for line in chat), encoding="utf-8")
    swiped = replay.replay(game, replay.read_transcript(path), replay.load_party(game, party))
    plain = replay.replay(game, replay.read_transcript(CHAT), replay.load_party(game, party))
    assert swiped.state.canonical() == plain.state.canonical()
