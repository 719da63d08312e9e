"""How long loading (validating and building) a ruleset with a 1,000-entry catalog takes.

Run: ``.venv/bin/python benchmarks/load_catalog.py [ENTRIES]``. Builds the catalog from the
Gravewatch fixture's items (cycled, with fresh ids), then times ``engine.load_ruleset`` over a
few repeats and prints the best and median wall time.
"""

from __future__ import annotations

import copy
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from engine import load_ruleset

FIXTURE = Path(__file__).resolve().parent.parent / "fixtures" / "rulesets" / "gravewatch.json"


def document_with(entries: int) -> dict[str, Any]:
    """Gravewatch with its kit catalog grown to ``entries`` entries."""
    document: dict[str, Any] = json.loads(FIXTURE.read_text(encoding="utf-8"))
    kit = document["catalogs"][0]
    originals = list(kit["entries"])
    grown = []
    for index in range(entries):
        entry = copy.deepcopy(originals[index % len(originals)])
        if index >= len(originals):
            entry["id"] = f"{entry['id']}-{index}"
            entry["label"] = f"{entry['label']} {index}"
        grown.append(entry)
    kit["entries"] = grown
    return document


def main() -> None:
    entries = int(sys.argv[1]) if len(sys.argv) > 1 else 1000
    document = document_with(entries)
    timings = []
    for _ in range(7):
        start = time.perf_counter()
        load_ruleset(document)
        timings.append(time.perf_counter() - start)
    print(f"load_ruleset with a {entries}-entry catalog: best {min(timings) * 1000:.1f} ms, "
          f"median {statistics.median(timings) * 1000:.1f} ms")


if __name__ == "__main__":
    main()
