"""Time to load the whole 5e SRD ruleset (``fixtures/rulesets/srd5.json`` with its catalogue
files), against a plain ``json.loads`` of the same files in the same process.

Goal (issue 15): a full load under 0.5 s.
Run from the repository root: .venv/bin/python benchmarks/load_srd5.py
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import replay  # noqa: E402

RULESET = ROOT / "fixtures" / "rulesets" / "srd5.json"
REPEATS = 7


def files() -> list[Path]:
    document = json.loads(RULESET.read_text(encoding="utf-8"))
    return [RULESET, *(RULESET.parent / name for name in document["catalogFiles"])]


def plain_json() -> None:
    for path in files():
        json.loads(path.read_text(encoding="utf-8"))


def full_load() -> None:
    replay.load_ruleset(RULESET)


def median_seconds(work: Callable[[], None]) -> float:
    work()  # warm: imports, file cache
    times = []
    for _ in range(REPEATS):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    size = sum(path.stat().st_size for path in files())
    game = replay.load_ruleset(RULESET)
    baseline = median_seconds(plain_json)
    load = median_seconds(full_load)
    print(f"ruleset: {len(game.items)} items, {size / 1e6:.2f} MB in {len(files())} files")
    print(f"json.loads baseline : {baseline * 1000:8.1f} ms")
    print(f"replay.load_ruleset : {load * 1000:8.1f} ms  ({load / baseline:.1f}x the baseline)")
    print(f"goal < 500 ms       : {'met' if load < 0.5 else 'NOT met'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
