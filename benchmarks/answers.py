"""How long answered tags are: what every later turn of a chat pays to send back to the model.

Over the recorded corpus (fixtures/chats/corpus, the chats of its index.json), for each answered
tag ``[kind: request | answer]`` of a visible GM reply, both parts written in canonical form:
the request part is ``[kind: request`` and the answer part `` | answer``. Prints the median of
len(answer part) / len(request part) and the longest answer part, per tag kind and in all,
twice: for the answer parts as recorded in the files, and as ``gmtags record`` writes them
with today's engine (in memory; the files are not touched).
Goal (issue 28): median ratio <= 1.2, no answer part over 400 characters, for every tag but the
fights' (``[attack:]`` and ``[combat:]``, :data:`FIGHT_KINDS`): those get their own figure, with
no goal set yet (a strike's one line is about 2.5 times its request; a won fight's answer lists
every felled foe's loot).
Run from the repository root: .venv/bin/python benchmarks/answers.py
"""

from __future__ import annotations

import json
import statistics
import sys
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tagparse  # noqa: E402
from replay import load_party, load_ruleset  # noqa: E402
from replay.record import Source, read_source, record  # noqa: E402

CORPUS = ROOT / "fixtures/chats/corpus"
MOST_RATIO = 1.2
MOST_LENGTH = 400

FIGHT_KINDS = frozenset({"attack", "combat"})
Parts = list[tuple[str, int, int]]  # (tag kind, request part length, answer part length)


def answered_parts(source: Source) -> Parts:
    """Each answered tag of a visible GM reply: its kind and the lengths of its two parts."""
    parts: Parts = []
    for _, _, message in source.transcript.messages():
        if message.role != "gm" or message.hidden:
            continue
        for tag in tagparse.scan(message.text).tags:
            if tag.malformed is not None or tag.answer is None:
                continue
            request = tagparse.render(tag.kind, tag.attrs)[:-1]
            answered = tagparse.render(tag.kind, tag.attrs, tag.answer)[:-1]
            parts.append((tag.kind, len(request), len(answered) - len(request)))
    return parts


def figures(parts: Parts) -> tuple[float, int]:
    """The median answer/request ratio and the longest answer part."""
    return (statistics.median(answer / request for _, request, answer in parts),
            max(answer for _, _, answer in parts))


def goal_parts(parts: Parts) -> Parts:
    """The parts the issue-28 goal is for: every tag but the fights'."""
    return [part for part in parts if part[0] not in FIGHT_KINDS]


def report(title: str, parts: Parts) -> bool:
    """Print the figures, per kind, for the fights, and in all but the fights; whether that
    meets the goal."""
    by_kind: dict[str, Parts] = defaultdict(list)
    for part in parts:
        by_kind[part[0]].append(part)
    print(f"{title}: {len(parts)} answered tags")
    for kind in sorted(by_kind):
        ratio, longest = figures(by_kind[kind])
        print(f"  {kind:<12} {len(by_kind[kind]):>5} tags  median answer/request {ratio:5.2f}  "
              f"longest answer part {longest:>5}")
    fights = [part for part in parts if part[0] in FIGHT_KINDS]
    if fights:
        ratio, longest = figures(fights)
        print(f"  {'fights':<12} {len(fights):>5} tags  median answer/request {ratio:5.2f}  "
              f"longest answer part {longest:>5}  (no goal yet)")
    rest = goal_parts(parts)
    ratio, longest = figures(rest)
    met = ratio <= MOST_RATIO and longest <= MOST_LENGTH
    print(f"  {'the rest':<12} {len(rest):>5} tags  median answer/request {ratio:5.2f}  "
          f"longest answer part {longest:>5}  goal (<= {MOST_RATIO}, <= {MOST_LENGTH}): "
          f"{'met' if met else 'NOT met'}")
    return met


def main() -> int:
    chats = json.loads((CORPUS / "index.json").read_text(encoding="utf-8"))["chats"]
    recorded: Parts = []
    now: Parts = []
    for name, entry in chats.items():
        game = load_ruleset(CORPUS / entry["ruleset"])
        state = load_party(game, CORPUS / entry["party"])
        source = read_source((CORPUS / name).read_bytes(), name)
        recorded += answered_parts(source)
        now += answered_parts(read_source(record(game, source, state).data, name))
    report(f"as recorded in {CORPUS.relative_to(ROOT)} ({len(chats)} chats)", recorded)
    met = report("as today's engine records them", now)
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
