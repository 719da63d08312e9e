"""The figures of a model game as a table for people (stdout) and as JSON for comparing runs."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .figures import Turn

# (row label, figure key, how to show it) in the order the table prints them
ROWS: tuple[tuple[str, str], ...] = (
    ("turns played", "turns"),
    ("tags read", "read"),
    ("  answered ok", "ok"),
    ("  refused", "refused"),
    ("  of them malformed", "malformed"),
    ("tag-like heads not read", "unreadHeads"),
    ("answer parts gmtags did not write", "foreign"),
    ("  replies holding one", "foreignReplies"),
    ("answer parts taken out (gmtags.takenOut)", "takenOut"),
    ("replies cut (gmtags.cut)", "cut"),
    ("most identical tags in a reply", "mostRepeated"),
    ("replies with >3 identical tags", "repliesOver3"),
    ("intent match", "intent"),
    ("replies whose replay differs", "replayDiffers"),
    ("prompt tokens evaluated", "promptN"),
    ("prompt tokens from the cache", "cacheN"),
    ("prompt evaluated/turn, turns 3-6", "promptTurns3to6"),
    ("prompt evaluated/turn, last 4", "promptLast4"),
    ("  last 4 / turns 3-6", "promptGrowth"),
    ("seconds, whole game", "seconds"),
    ("seconds per turn", "secondsPerTurn"),
    ("replies ended by length", "length"),
    ("turns that failed", "errors"),
)
SHOWN_EXAMPLES = 3


def cell(figures: Mapping[str, Any], key: str) -> str:
    """One figure as the table shows it ("-": not measured)."""
    if key == "intent":
        if not figures.get("intentTurns"):
            return "-"
        return f"{figures['intentMatched']}/{figures['intentTurns']} " \
               f"{figures['intentPercent']:.0f}%"
    value = figures.get(key)
    if isinstance(value, list):
        return str(len(value))
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.2f}" if key == "promptGrowth" else f"{value:g}"
    return str(value)


def figures_table(runs: Sequence[Mapping[str, Any]], total: Mapping[str, Any]) -> str:
    """Rows of figures, a column per run and one for the total."""
    columns = [(run["name"], run["figures"]) for run in runs] + [("total", total)]
    rows: list[tuple[str, str]] = []
    for label, key in ROWS:
        rows.append((label, key))
        if key == "refused":
            reasons = sorted({r for _, f in columns for r in f.get("refusedBy", {})})
            rows += [(f"    {reason}", f"refusedBy:{reason}") for reason in reasons]
    body = [[label] + [_cell(figures, key) for _, figures in columns] for label, key in rows]
    header = ["figure"] + [name for name, _ in columns]
    widths = [max(len(line[i]) for line in [header, *body]) for i in range(len(header))]
    out = []
    for line in [header, *body]:
        out.append("  ".join([line[0].ljust(widths[0]),
                              *(v.rjust(w) for v, w in zip(line[1:], widths[1:], strict=True))]))
    out.insert(1, "-" * len(out[0]))
    return "\n".join(out)


def _cell(figures: Mapping[str, Any], key: str) -> str:
    if key.startswith("refusedBy:"):
        return str(figures.get("refusedBy", {}).get(key.split(":", 1)[1], 0))
    return cell(figures, key)


def examples(runs: Sequence[Mapping[str, Any]]) -> str:
    """A few of what each run got wrong: answer parts gmtags did not write, heads it did not
    read, replies whose replay differs, replies that repeat a tag."""
    out = []
    for run in runs:
        lines = []
        foreign = [(t["number"], f) for t in run["turns"] for f in t["figures"]["foreign"]]
        for number, part in foreign[:SHOWN_EXAMPLES]:
            lines.append(f"  turn {number}: answer part not gmtags' ({part['where']}): "
                         f"{part['part']}")
        words = run["figures"]["unreadHeadWords"]
        if words:
            lines.append("  heads not read: " + ", ".join(f"[{w}: ×{n}" for w, n in words.items()))
        for number in run["figures"]["repliesOver3"][:SHOWN_EXAMPLES]:
            most = run["turns"][number - 1]["figures"]["mostRepeated"]
            lines.append(f"  turn {number}: one tag {most} times")
        for difference in (run.get("differences") or [])[:SHOWN_EXAMPLES]:
            lines.append(f"  turn {difference['turn']}: live {difference['live']} "
                         f"≠ replay {difference['replay']}")
        if run.get("replayError"):
            lines.append(f"  replay failed: {run['replayError']}")
        if lines:
            out.append(f"{run['name']}:")
            out += lines
    return "\n".join(out)


def progress(name: str, total: int, turn: Turn, figures: Mapping[str, Any]) -> str:
    """One line per turn while a game is played."""
    tokens = "-" if figures["promptN"] is None else \
        f"{figures['promptN']} (+{figures['cacheN'] or 0} cached)"
    intent = {None: "-", True: "yes", False: "no"}[figures["intent"]]
    status = f"FAILED {turn.error}" if turn.error else \
        f"tags {figures['read']} ok {figures['ok']} foreign {len(figures['foreign'])} " \
        f"intent {intent} finish {turn.finish}"
    return (f"{name} turn {turn.number}/{total} {'streamed' if turn.stream else 'whole':8} "
            f"{turn.seconds:6.1f} s  prompt {tokens}  {status}")


def turn_json(turn: Turn, figures: Mapping[str, Any]) -> dict[str, Any]:
    """Everything about one turn, for ``--json``."""
    return {"number": turn.number, "player": turn.player, "expect": turn.expect,
            "stream": turn.stream, "text": turn.text, "finish": turn.finish,
            "seconds": round(turn.seconds, 3),
            "firstByte": None if turn.first_byte is None else round(turn.first_byte, 3),
            "gmtags": turn.metadata, "requests": turn.legs, "error": turn.error,
            "figures": dict(figures)}
