"""Fuzz the readers for a set time and report crashes (issue #14).

Targets:

* ``scan``: ``tagparse.scan`` on mutated GM prose; it must never raise, ``scan(fast=True)``
  must equal ``scan(fast=False)``, and the answers of the tags it finds must be values.
* ``ruleset``: ``engine.ruleset.validate`` on mutated fixture rulesets (values replaced,
  keys dropped, lists doubled, references pointed at themselves or at nothing, huge and
  negative numbers, dice like ``999999d999999``); it must return problems, never raise, and a
  ruleset it accepts must load and answer a few tags.
* ``transcript``: ``replay.parse_transcript`` on mutated chat files of every format (bytes,
  invalid UTF-8, deep JSON, control characters); it must return a transcript or raise
  ``TranscriptError``, and the transcript must fold through ``replay.replay``.

A mutation fuzzer seeded from the files in ``fixtures/`` with a seeded ``random.Random``: each
run prints its seed, so a crash replays with ``--seed``. Every input that raises, breaks a law,
or takes longer than ``--slow`` seconds is reported with the input saved under ``--out``.

    .venv/bin/python benchmarks/fuzz.py scan --seconds 600 [--seed N] [--out DIR]

Exit status: 0 when the target ran clean for the whole time, 1 when something was reported.
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import tagparse  # noqa: E402
from engine import Game, RulesetError, TurnContext, apply_reply, load_ruleset  # noqa: E402
from engine.ruleset import validate  # noqa: E402
from replay import TranscriptError, parse_transcript, replay  # noqa: E402
from replay.files import load_party  # noqa: E402
from replay.files import load_ruleset as load_ruleset_file  # noqa: E402

FIXTURES = ROOT / "fixtures"
MAX_INPUT = 200_000  # characters (or bytes) a mutated input may grow to

TOKENS = ["[", "]", '"', "'", "“", "”", "|", ":", "=", "\\", "\n", "\r", "\x00", "\x1b",
          "\ufffd", "[inventory:", "[loot:", "[place:", "[skill_check:", "[sheet:",
          'action="add"', 'action="pay"', 'action="buy"', 'item="', 'count="', 'amount="',
          'who="', "999999d999999", "1e400", "-1", "0", "99999999999999999999", "NaN",
          'ok="true"', "text=", "{", "}", "[[", "]]", "\u202e", "\ud800", " " * 50,
          # what models write besides (issue 28): words without a key, numbers before prose,
          # open single quotes, markdown escapes, lists, the template, written results
          "\\]", "\\[", " add ", " remove ", " advantage", "dc=14 with advantage", "dc=",
          "count=3 ", "item='", "‘", 'items="', ", ", ",", 'action="add | remove"',
          'result="success"', 'rolls="11"']


class Report:
    """What a run found: crashes (exceptions), broken laws and slow inputs."""

    def __init__(self, target: str, out: Path) -> None:
        self.target = target
        self.out = out
        self.found: list[str] = []
        self.seen: set[str] = set()

    def add(self, kind: str, detail: str, data: str | bytes) -> None:
        key = f"{kind}:{detail.splitlines()[-1] if detail else ''}"
        if key in self.seen:
            return
        self.seen.add(key)
        self.out.mkdir(parents=True, exist_ok=True)
        path = self.out / f"{self.target}-{len(self.found)}.bin"
        path.write_bytes(data if isinstance(data, bytes) else data.encode("utf-8",
                                                                           "surrogatepass"))
        self.found.append(f"{kind}: {detail.strip()}\n  input: {path}")
        print(f"[{self.target}] {kind}: {detail.strip()[-2000:]}\n  input saved to {path}",
              flush=True)


def mutate_text(rng: random.Random, text: str, pool: list[str]) -> str:
    """A few random edits: insert tokens, delete, duplicate, splice another seed, flip."""
    for _ in range(rng.randint(1, 6)):
        if len(text) > MAX_INPUT:
            text = text[:MAX_INPUT]
        at = rng.randint(0, len(text))
        choice = rng.random()
        if choice < 0.35:
            text = text[:at] + rng.choice(TOKENS) + text[at:]
        elif choice < 0.5 and text:
            end = min(len(text), at + rng.randint(1, 40))
            text = text[:at] + text[end:]
        elif choice < 0.6 and text:
            end = min(len(text), at + rng.randint(1, 200))
            text = text[:at] + text[at:end] * rng.randint(2, 50) + text[end:]
        elif choice < 0.75:
            other = rng.choice(pool)
            first = rng.randint(0, len(other))
            text = text[:at] + other[first:first + rng.randint(1, 400)] + text[at:]
        elif choice < 0.9 and text:
            index = rng.randrange(len(text))
            text = text[:index] + chr(rng.choice([rng.randint(0, 0x7f), rng.randint(0, 0x2fff),
                                                  rng.randint(0x10000, 0x10ffff)])) \
                + text[index + 1:]
        else:
            text = text[:at] + rng.choice(TOKENS) * rng.randint(10, 5000) + text[at:]
    return text[:MAX_INPUT]


def mutate_bytes(rng: random.Random, data: bytes, pool: list[bytes]) -> bytes:
    text_pool = [p.decode("utf-8", "replace") for p in pool]
    data = mutate_text(rng, data.decode("utf-8", "surrogateescape"), text_pool).encode(
        "utf-8", "surrogatepass")
    for _ in range(rng.randint(0, 3)):  # raw byte flips: invalid UTF-8, stray BOMs
        if not data:
            break
        index = rng.randrange(len(data))
        data = data[:index] + bytes([rng.randrange(256)]) + data[index + 1:]
    if rng.random() < 0.05:
        data = rng.choice([b"\xef\xbb\xbf", b"\xff\xfe", b"\xfe\xff"]) + data
    return data[:MAX_INPUT]


# --- targets ---------------------------------------------------------------------------------

def _chat_texts() -> list[str]:
    texts = []
    for path in sorted((FIXTURES / "chats").rglob("*")):
        if path.suffix in (".jsonl", ".json"):
            texts.append(path.read_text(encoding="utf-8", errors="replace")[:MAX_INPUT])
    return texts


def scan_target(report: Report, rng: random.Random, deadline: float, slow: float) -> int:
    pool = _chat_texts()
    game = load_ruleset_file(FIXTURES / "rulesets" / "harrow.json")
    start = load_party(game, FIXTURES / "parties" / "harrow.json")
    runs = 0
    while time.monotonic() < deadline:
        text = mutate_text(rng, rng.choice(pool)[rng.randint(0, 2000):][:rng.randint(1, 5000)],
                           pool)
        began = time.monotonic()
        try:
            fast = tagparse.scan(text)
            full = tagparse.scan(text, fast=False)
            if fast != full:
                report.add("law", "scan(fast=True) != scan(fast=False)", text)
            apply_reply(game, start, fast.tags[:50], TurnContext(start.seed, (0, 0)))
        except Exception:
            report.add("crash", traceback.format_exc(), text)
        if time.monotonic() - began > slow:
            report.add("slow", f"{time.monotonic() - began:.1f} s for {len(text)} characters",
                       text)
        runs += 1
    return runs


def _ruleset_documents() -> list[dict[str, Any]]:
    from replay.files import ruleset_document

    return [ruleset_document(path) for path in sorted((FIXTURES / "rulesets").glob("*.json"))
            if path.stem != "srd5"]  # srd5's 742 items make each try too slow to fuzz well


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)] + list(value)
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def _random_json(rng: random.Random, strings: list[str], depth: int = 0) -> Any:
    choice = rng.random()
    if depth > 3 or choice < 0.3:
        return rng.choice([*strings, "999999d999999", "1d6", "", "x" * 10_000])
    if choice < 0.5:
        return rng.choice([0, -1, 1, 2**63, -(2**70), 10**400, 1.5, 1e308, True, False, None])
    if choice < 0.6:
        return float(rng.choice(["nan", "inf", "-inf"]))
    if choice < 0.8:
        return [_random_json(rng, strings, depth + 1) for _ in range(rng.randint(0, 3))]
    return {rng.choice(strings): _random_json(rng, strings, depth + 1)
            for _ in range(rng.randint(0, 3))}


def mutate_document(rng: random.Random, document: dict[str, Any]) -> Any:
    document = copy.deepcopy(document)
    strings = _strings(document)
    for _ in range(rng.randint(1, 4)):
        paths = _paths(document)
        path = rng.choice(paths[1:]) if len(paths) > 1 else ()
        if not path:
            break
        parent: Any = document
        for part in path[:-1]:
            parent = parent[part]
        key = path[-1]
        choice = rng.random()
        if choice < 0.4:  # replace with a string from elsewhere: a reference to anything
            parent[key] = rng.choice(strings) if rng.random() < 0.6 else _random_json(rng,
                                                                                         strings)
        elif choice < 0.55:
            del parent[key]
        elif choice < 0.7 and isinstance(parent[key], list) and parent[key]:
            parent[key] = parent[key] + copy.deepcopy(parent[key])  # duplicate ids
        elif choice < 0.8 and isinstance(parent[key], dict):
            parent[key][rng.choice(strings)] = _random_json(rng, strings)
        elif choice < 0.9 and isinstance(parent[key], int | float) and not isinstance(
                parent[key], bool):
            parent[key] = rng.choice([0, -1, 10**9, 10**30, -(10**30), parent[key] * 1000])
        else:  # a reference to itself: the id of the object that holds the key
            holder = parent if isinstance(parent, dict) else None
            if holder is not None and isinstance(holder.get("id"), str):
                parent[key] = holder["id"]
    return document


def _exercise(game: Game) -> None:
    """Answer a few tags with a loaded mutated ruleset (a party built from its sheet)."""
    from engine import start_state

    try:
        state = start_state(game, {"seed": "fuzz", "player": "Ada",
                                   "characters": [{"name": "Ada"}]})
    except Exception:
        return  # a party that does not fit the sheet is refused, which is a value here
    items = [c.label for c in list(game.items.values())[:5]] or ["Rope"]
    tables = game.ruleset.items.loot_tables if game.ruleset.items else []
    text = " ".join([f'[inventory: action="add" item="{items[0]}" count="3"]',
                     '[inventory: action="earn" amount="50 crowns"]',
                     *(f'[loot: table="{t.id}"]' for t in tables[:3]),
                     '[place: name="Here" size="city"]',
                     f'[inventory: action="buy" item="{items[-1]}"]',
                     '[skill_check: skill="climb" dc="9"]'])
    apply_reply(game, state, tagparse.scan(text).tags, TurnContext("fuzz", (0, 0)))


def ruleset_target(report: Report, rng: random.Random, deadline: float, slow: float) -> int:
    documents = _ruleset_documents()
    runs = 0
    while time.monotonic() < deadline:
        document = mutate_document(rng, rng.choice(documents))
        text = json.dumps(document, default=str)[:MAX_INPUT]
        began = time.monotonic()
        try:
            ruleset, problems = validate(document)
            if ruleset is not None and not problems:
                try:
                    game = load_ruleset(document)
                except RulesetError:
                    game = None
                if game is not None:
                    _exercise(game)
        except Exception:
            report.add("crash", traceback.format_exc(), text)
        if time.monotonic() - began > slow:
            report.add("slow", f"{time.monotonic() - began:.1f} s", text)
        runs += 1
    return runs


def transcript_target(report: Report, rng: random.Random, deadline: float, slow: float) -> int:
    pool = [t.encode("utf-8") for t in _chat_texts()]
    game = load_ruleset_file(FIXTURES / "rulesets" / "harrow.json")
    start = load_party(game, FIXTURES / "parties" / "harrow.json")
    runs = 0
    while time.monotonic() < deadline:
        data = mutate_bytes(rng, rng.choice(pool), pool)
        began = time.monotonic()
        for form in (None, "gmtags", "sillytavern", "openai"):
            try:
                transcript = parse_transcript(data, format=form)
            except TranscriptError:
                continue
            except Exception:
                report.add("crash", f"format={form}\n" + traceback.format_exc(), data)
                continue
            try:
                replay(game, transcript, start)
            except Exception:
                report.add("crash", f"replay after format={form}\n" + traceback.format_exc(),
                           data)
        if time.monotonic() - began > slow:
            report.add("slow", f"{time.monotonic() - began:.1f} s for {len(data)} bytes", data)
        runs += 1
    return runs


TARGETS: dict[str, Callable[[Report, random.Random, float, float], int]] = {
    "scan": scan_target, "ruleset": ruleset_target, "transcript": transcript_target,
}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(TARGETS))
    parser.add_argument("--seconds", type=float, default=600.0)
    parser.add_argument("--seed", type=int, default=None)
    parser.add_argument("--slow", type=float, default=5.0, help="report inputs slower than this")
    parser.add_argument("--out", type=Path, default=Path("fuzz-findings"))
    args = parser.parse_args()
    seed = args.seed if args.seed is not None else random.SystemRandom().randrange(2**32)
    print(f"[{args.target}] seed {seed}, {args.seconds:.0f} s", flush=True)
    report = Report(args.target, args.out)
    began = time.monotonic()
    runs = TARGETS[args.target](report, random.Random(seed), began + args.seconds, args.slow)
    took = time.monotonic() - began
    print(f"[{args.target}] {runs} inputs in {took:.0f} s (seed {seed}): "
          f"{len(report.found)} finding(s)", flush=True)
    for finding in report.found:
        print(" -", finding)
    return 1 if report.found else 0


if __name__ == "__main__":
    sys.exit(main())
