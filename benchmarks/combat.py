"""What a fight costs: one answered attack against one check, and a round late in a long fight
against one early in it.

On fixtures/rulesets/skirmish.json and its party, with a "dummy" foe template added in
memory (1,000,000 hit points: 1,000 rounds of blows never fell it):

(a) one reply with one ``[attack:]`` (Brannoc's longsword on the dummy, a new round each time)
    against, as the baseline measured in the same run, one reply with one ``[skill_check:]``
    (athletics, the same attack-free state). Goal (issue 24): at most 2x.
(b) the fold's cost per reply — one round of two hero attacks (Brannoc and Ada on the dummy) —
    over rounds 991-1,000 of a 1,000-round fight against rounds 1-10 of the same fight. Goal:
    flat, at most 1.5x. Measured twice: the engine alone (``apply_reply`` from the state before
    each of those rounds, the tags scanned once), and the whole replay fold of a 1,000-round chat
    (each message's time, from one ``on_message`` call to the next). With it, the state's size in
    canonical JSON at round 10 and at round 1,000: what could make a late round dearer.

Every figure is the best of several runs, as benchmarks/replay.py takes them: on a shared
machine the best of a few short runs is mostly how busy the neighbours were.
Run from the repository root: .venv/bin/python benchmarks/combat.py
"""

from __future__ import annotations

import gc
import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tagparse  # noqa: E402
from engine import Game, State, TurnContext, apply_reply, load_ruleset, start_state  # noqa: E402
from engine.rules.state import plain_canonical  # noqa: E402
from replay import parse_transcript, replay  # noqa: E402

RULESET = ROOT / "fixtures/rulesets/skirmish.json"
PARTY = ROOT / "fixtures/parties/skirmish.json"
ROUNDS = 1_000
WINDOW = 10  # rounds compared at each end of the fight
REPEATS = 5  # runs per figure; the best is kept
MOST_ATTACK = 2.0
MOST_LATE = 1.5
DUMMY = {"role": "dummy", "tracks": {"hp": "1000000"},
         "combat": {"defence": "12", "attack": "0", "damage": "1d4"}}
START = '[combat: op="start" foe="Dummy" role="dummy"]'
ROUND = '[attack: target="Dummy"] [attack: who="Ada" target="Dummy"]'
ATTACK = '[attack: target="Dummy"]'
CHECK = '[skill_check: skill="athletics" dc="12"]'


def game_and_start() -> tuple[Game, State]:
    document = json.loads(RULESET.read_text(encoding="utf-8"))
    document["combat"]["templates"].append(DUMMY)
    game = load_ruleset(document)
    return game, start_state(game, json.loads(PARTY.read_text(encoding="utf-8")))


def best(run: Callable[[], object], repeats: int = REPEATS) -> float:
    """The best wall time of ``repeats`` runs of ``run``."""
    fastest = float("inf")
    for _ in range(repeats):
        began = time.perf_counter()
        run()
        fastest = min(fastest, time.perf_counter() - began)
    return fastest


def attack_against_check(game: Game, fighting: State) -> float:
    """(a): the time of one attack reply over that of one check reply, each the mean of many
    replies (a new turn key each: a new round, new dice)."""
    attack, check = tagparse.scan(ATTACK).tags, tagparse.scan(CHECK).tags
    replies = 2_000

    def answering(tags: Any) -> Callable[[], None]:
        def run() -> None:
            for turn in range(1, replies + 1):
                _, answers = apply_reply(game, fighting, tags, TurnContext(fighting.seed,
                                                                           (0, turn)))
                assert answers[0].ok, answers[0].text
        return run

    # Alternated, so a neighbour's burst of work falls on both figures alike rather than on
    # whichever of the two blocks of runs it happened to meet.
    attack_time = check_time = float("inf")
    for _ in range(REPEATS):
        attack_time = min(attack_time, best(answering(attack), 1) / replies)
        check_time = min(check_time, best(answering(check), 1) / replies)
    ratio = attack_time / check_time
    print(f"(a) one [attack:] reply {attack_time * 1e6:8.1f} us, one [skill_check:] reply "
          f"{check_time * 1e6:8.1f} us: {ratio:.2f}x the check (goal <= {MOST_ATTACK}x: "
          f"{'met' if ratio <= MOST_ATTACK else 'NOT met'})")
    return ratio


def states_of_the_fight(game: Game, start: State) -> list[State]:
    """The state before each round 1..ROUNDS (index r - 1) and after the last (index ROUNDS)."""
    state, answers = apply_reply(game, start, tagparse.scan(START).tags,
                                 TurnContext(start.seed, (0, 0)))
    assert answers[0].ok
    tags = tagparse.scan(ROUND).tags
    states = [state]
    for turn in range(1, ROUNDS + 1):
        state, answers = apply_reply(game, state, tags, TurnContext(state.seed, (0, turn)))
        assert all(a.ok for a in answers), [a.text for a in answers]
        states.append(state)
    assert state.encounter is not None and state.encounter.round == ROUNDS
    return states


def late_against_early_engine(game: Game, states: list[State]) -> float:
    """(b), the engine alone: rounds 991..1,000 against rounds 1..10, from the state before
    each, many times over."""
    tags = tagparse.scan(ROUND).tags
    passes = 100

    def rounds(first: int) -> Callable[[], None]:
        def run() -> None:
            for _ in range(passes):
                for number in range(first, first + WINDOW):
                    before = states[number - 1]
                    apply_reply(game, before, tags, TurnContext(before.seed, (0, number)))
        return run

    early = best(rounds(1)) / (passes * WINDOW)
    late = best(rounds(ROUNDS - WINDOW + 1)) / (passes * WINDOW)
    ratio = late / early
    print(f"(b) engine: a round of rounds 1-{WINDOW} {early * 1e6:8.1f} us, of rounds "
          f"{ROUNDS - WINDOW + 1}-{ROUNDS} {late * 1e6:8.1f} us: {ratio:.2f}x")
    return ratio


def fight_chat() -> bytes:
    """A gmtags chat: the fight begins, then ROUNDS player/GM pairs of one round each."""
    lines: list[dict[str, Any]] = [{"role": "player", "name": "Brannoc", "text": "A dummy!"},
                                   {"role": "gm", "text": f"It stands there. {START}"}]
    for _ in range(ROUNDS):
        lines += [{"role": "player", "name": "Brannoc", "text": "We hit it."},
                  {"role": "gm", "text": f"Thwack. {ROUND}"}]
    return ("\n".join(json.dumps(line) for line in lines) + "\n").encode("utf-8")


def late_against_early_fold(game: Game, start: State) -> float:
    """(b), the whole fold: each GM reply's time in a cold replay of the chat (from the
    message before it to it, so the player's message is counted too), best per message."""
    data = fight_chat()
    messages = len(parse_transcript(data).messages())
    fastest = [float("inf")] * messages
    for _ in range(3):
        transcript = parse_transcript(data)
        stamps: list[float] = []

        def stamp(_index: int, _state: State, stamps: list[float] = stamps) -> None:
            stamps.append(time.perf_counter())

        gc.collect()
        began = time.perf_counter()
        replay(game, transcript, start, on_message=stamp)
        previous = began
        for index, stamp in enumerate(stamps):
            fastest[index] = min(fastest[index], stamp - previous)
            previous = stamp
    # message 1 starts the fight; round r's player message is 2r, its GM reply 2r + 1

    def per_round(first: int) -> float:
        return sum(fastest[2 * r] + fastest[2 * r + 1]
                   for r in range(first, first + WINDOW)) / WINDOW

    early, late = per_round(1), per_round(ROUNDS - WINDOW + 1)
    ratio = late / early
    print(f"(b) fold:   a round of rounds 1-{WINDOW} {early * 1e6:8.1f} us, of rounds "
          f"{ROUNDS - WINDOW + 1}-{ROUNDS} {late * 1e6:8.1f} us: {ratio:.2f}x")
    return ratio


def main() -> int:
    load = ", ".join(f"{n:.2f}" for n in os.getloadavg())
    print(f"load average (1, 5, 15 min): {load} on {os.cpu_count()} cores; best of "
          f"{REPEATS} runs per figure")
    game, start = game_and_start()
    fighting, _ = apply_reply(game, start, tagparse.scan(START).tags,
                              TurnContext(start.seed, (0, 0)))
    attack = attack_against_check(game, fighting)
    states = states_of_the_fight(game, start)
    engine = late_against_early_engine(game, states)
    fold = late_against_early_fold(game, start)
    sizes = [len(plain_canonical(states[n])) for n in (WINDOW, ROUNDS)]
    print(f"    state in canonical JSON: {sizes[0]} bytes after round {WINDOW}, {sizes[1]} "
          f"after round {ROUNDS}")
    flat = max(engine, fold) <= MOST_LATE
    print(f"goal: (a) <= {MOST_ATTACK}x {'met' if attack <= MOST_ATTACK else 'NOT met'}; "
          f"(b) <= {MOST_LATE}x {'met' if flat else 'NOT met'}")
    return 0 if attack <= MOST_ATTACK and flat else 1


if __name__ == "__main__":
    sys.exit(main())
