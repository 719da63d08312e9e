"""A fight as the GM and the reader see it: ``gmtags prompt`` on a chat that stops mid-fight
shows the COMBAT block (DESIGN.md "Combat" → "Prompt"), and the report gathers each round —
the order, each attack's dice against the defence, hit points after it — from the answers'
records (DESIGN.md "Records"). On fixtures/chats/skirmish-fight.jsonl: four rounds, a NO TIME
attack in round 2, the goblin felled in round 3 and a rat in round 4, the fight still on."""

from __future__ import annotations

import json
import re

from click.testing import CliRunner
from helpers import FIXTURES, answer

import replay
from engine.rules.state import State
from replay.cli import main
from replay.report import report_document, report_html

RULESET = FIXTURES / "rulesets/skirmish.json"
PARTY = FIXTURES / "parties/skirmish.json"
FIGHT = FIXTURES / "chats/skirmish-fight.jsonl"
GAME = replay.load_ruleset(RULESET)


def fight_document() -> dict:
    transcript = replay.read_transcript(FIGHT)
    return report_document(GAME, transcript, replay.load_party(GAME, PARTY,
                                                                transcript.player_name))


def test_gmtags_prompt_mid_fight_shows_the_combat_block() -> None:
    result = CliRunner().invoke(main, ["prompt", str(FIGHT), "--ruleset", str(RULESET),
                                       "--party", str(PARTY)])
    assert result.exit_code == 0, result.output
    text = result.output
    assert "COMBAT (round 4 fought; the next reply with an attack is round 5)" in text
    assert "2. Goblin (foe: standard, tier 1; initiative 15): FELLED (hp 0/14)" in text
    assert "4. Rat 2 (foe: minion, tier 1; initiative 3): hp 1/1; defence 10" in text
    assert '- A foe attacks: [attack: who="Wolf 2" target="Brannoc"]' in text
    assert text.index("COMBAT (") < text.index("LAST ANSWERS")


def test_the_report_gathers_each_round_of_the_fight_from_the_records() -> None:
    fights = fight_document()["charts"]["fights"]
    assert len(fights) == 1
    fight = fights[0]
    assert (fight["start"], fight["end"], fight["outcome"]) == (2, None, None)
    assert [r["round"] for r in fight["rounds"]] == [1, 2, 3, 4]
    assert [r["m"] for r in fight["rounds"]] == [4, 6, 8, 10]
    first = fight["rounds"][0]
    # CMB-TURN-13: the order with initiative, as the start and join records gave it
    assert first["order"] == [["Ada", "party", 16], ["Goblin", "foes", 15],
                              ["Brannoc", "party", 9], ["Rat 2", "foes", 3],
                              ["Rat 1", "foes", 2]]
    # CMB-TURN-14: a round's attacks are listed in the order they landed (Ada is faster)
    assert [a["who"] for a in first["attacks"]] == ["Ada", "Brannoc"]
    miss = first["attacks"][1]
    assert {k: miss[k] for k in ("who", "target", "weapon", "rolls", "mod", "total", "def",
                                 "result", "dmg")} == {
        "who": "Brannoc", "target": "Goblin", "weapon": "Longsword", "rolls": [6], "mod": 5,
        "total": 11, "def": 13, "result": "miss", "dmg": 0}
    def brannoc(index: int) -> list[dict]:
        return [a for a in fight["rounds"][index]["attacks"] if a["who"] == "Brannoc"]
    hit = brannoc(1)[0]
    assert (hit["rolls"], hit["total"], hit["result"], hit["dice"], hit["dmg"], hit["type"],
            hit["hp"]) == ([14], 19, "hit", [[7]], 10, "slashing", 4)
    late = fight["rounds"][1]["attacks"][-1]  # CMB-TURN-12: NO TIME, listed, not resolved
    assert (late["who"], late["target"], late["why"]) == ("Brannoc", "Goblin", "no-time")
    assert "result" not in late
    # hit points after each round: foes from the records, heroes from their sheets
    after = {r["round"]: {name: (now, most) for name, now, most in r["hp"]}
             for r in fight["rounds"]}
    assert after[1]["Goblin"] == (14, 14) and after[2]["Goblin"] == (4, 14)
    assert after[3]["Goblin"] == (0, 14) and after[4]["Rat 1"] == (0, 1)
    assert after[4]["Ada"] == (9, 12) and after[4]["Brannoc"] == (12, 12)
    assert brannoc(2)[0]["events"][1:] == ["felled:Goblin"]


def test_a_fight_won_and_one_ended_by_the_gm_each_close_with_their_outcome(tmp_path) -> None:
    lines = [
        {"role": "gm", "text": '[combat: op="start" foe="Rat" role="minion"]'},
        {"role": "gm", "text": 'The rat squeaks. [attack: target="Rat"]'},
        {"role": "gm", "text": '[combat: op="start" foe="Goblin"]'},
        {"role": "gm", "text": '[attack: target="Goblin"] [combat: op="end" outcome="fled"]'},
    ]
    chat = tmp_path / "two.jsonl"
    chat.write_text("\n".join(json.dumps(line) for line in lines) + "\n", encoding="utf-8")
    transcript = replay.read_transcript(chat)
    state: State = replay.load_party(GAME, PARTY, transcript.player_name)
    fights = report_document(GAME, transcript, state)["charts"]["fights"]
    assert [(f["start"], f["end"], f["outcome"]) for f in fights] == [
        (0, 1, "victory"), (2, 3, "fled")]
    assert [len(f["rounds"]) for f in fights] == [1, 1]


def test_a_fight_already_on_in_the_start_state_is_reported_from_it(tmp_path) -> None:
    """An exported state mid-fight (``--party`` a state): its rounds go on from its order."""
    transcript = replay.read_transcript(FIGHT)
    party = replay.load_party(GAME, PARTY, transcript.player_name)
    on, answers = answer(GAME, party, '[combat: op="start" foe="Goblin"]')
    assert answers[0].ok and on.encounter is not None
    chat = tmp_path / "on.jsonl"
    chat.write_text(json.dumps({"role": "gm", "text": '[attack: target="Goblin"]'}) + "\n",
                    encoding="utf-8")
    fights = report_document(GAME, replay.read_transcript(chat), on)["charts"]["fights"]
    assert [(f["start"], f["end"], len(f["rounds"])) for f in fights] == [(-1, None, 1)]
    assert [name for name, _, _ in fights[0]["rounds"][0]["order"]] == [
        c.name for c in on.encounter.combatants]
    assert fights[0]["rounds"][0]["attacks"][0]["who"] == "Brannoc"


def test_a_chat_without_a_fight_has_none_and_the_page_embeds_the_fights() -> None:
    harrow = replay.load_ruleset(FIXTURES / "rulesets/harrow.json")
    demo = replay.read_transcript(FIXTURES / "chats/demo.jsonl")
    party = replay.load_party(harrow, FIXTURES / "parties/harrow.json", demo.player_name)
    assert report_document(harrow, demo, party)["charts"]["fights"] == []
    transcript = replay.read_transcript(FIGHT)
    page = report_html(GAME, transcript, replay.load_party(GAME, PARTY,
                                                           transcript.player_name))
    assert 'id="chart-fights"' in page
    data = re.search(r'id="report-data">(.*?)</script>', page, re.S)
    assert data is not None and json.loads(data.group(1))["charts"]["fights"]
