"""The replay report: one self-contained HTML file to look at a game instead of reading JSON
(issue #16).

``report_document`` replays a chat and gathers, per message, what a reader wants to see: the
text, the answered tags, the diagnostics, the swipes that were not selected, and the party's
state after it. States are stored as per-message DIFFS (stacks whose count changed, purses,
pools, conditions, place), never as one full state per message, so a 2,000-turn chat stays
small; the page rebuilds a turn's state from those diffs when it is shown. ``render_report``
puts the document into a single HTML page: inline CSS, a small vanilla script that paginates
the chat and draws the charts as inline SVG, and the data as JSON in a
``<script type="application/json">`` block. No network, no external assets: a
Content-Security-Policy forbids every fetch, so the file opens from disk anywhere.

``render_regress_html`` draws the regression view (``gmtags regress --html``) from plain
mappings, so it depends on nothing of the harness.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import tagparse
from engine import Game, State
from engine.actions.money import purse_line
from engine.rules.layers import removed_coins
from engine.rules.money import family_coins, held_coins
from engine.rules.state import Character, Stack
from engine.text.prompt import live_sheet

from .fold import Diagnostic, MessageAnswer, ReplayResult, replay
from .transcript import Transcript

REPORT_FORMAT = "gmtags-report/1"
PAGE_SIZE = 50  # messages per page of the chat; the page renders one page at a time
EXCERPT = 400  # characters of a check's or drop's raw tag kept for the charts' tables

# Every fetch is forbidden: the page needs nothing but its own inline script and style.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'")

StackKey = tuple[str, str | None, str | None, bool, bool, int | None, bool, int]


def stack_label(stack: Stack) -> str:
    """``Hand axe (equipped)``: the name and the per-stack state a reader tells stacks apart by."""
    marks = [word for word, on in (("equipped", stack.equipped), ("bound", stack.bound),
                                   ("on", stack.toggled)) if on]
    if stack.charges is not None:
        marks.append(f"{stack.charges} charges")
    return f"{stack.name} ({', '.join(marks)})" if marks else stack.name


@dataclass
class _Character:
    """What the report shows of one character, in a form cheap to compare."""

    bag: tuple[tuple[int, int], ...]  # (stack id, count), in bag order
    purse: str
    worth: tuple[int, ...]  # per currency family, in its smallest coin
    pools: tuple[str, ...]  # pools and tracks as the GM sees them: "Grit 6/10"
    conditions: tuple[str, ...]


@dataclass
class _Collector:
    """Turns the state after every message into diffs against the state before it."""

    game: Game
    stacks: list[list[str]] = field(default_factory=list)  # id -> [label, kind]
    stack_ids: dict[StackKey, int] = field(default_factory=dict)
    last: State | None = None
    characters: dict[str, _Character] = field(default_factory=dict)
    place: list[Any] | None = None
    worth: dict[tuple[str, int], list[list[int]]] = field(default_factory=dict)

    def stack_id(self, key: StackKey, stack: Stack) -> int:
        found = self.stack_ids.get(key)
        if found is None:
            found = self.stack_ids[key] = len(self.stacks)
            kind = "coin" if stack.coin else "item" if stack.item else "plain"
            self.stacks.append([stack_label(stack), kind])
        return found

    def character(self, state: State, character: Character) -> _Character:
        seen: dict[tuple[Any, ...], int] = {}
        bag: list[tuple[int, int]] = []
        for stack in character.bag:
            identity = (stack.name, stack.item, stack.coin, stack.equipped, stack.bound,
                        stack.charges, stack.toggled)
            # Two stacks of the same thing (a stack limit, a split) stay two rows.
            seen[identity] = occurrence = seen.get(identity, -1) + 1
            bag.append((self.stack_id((*identity, occurrence), stack), stack.count))
        removed = removed_coins(self.game, state)
        families = self.game.ruleset.items.currencies if self.game.ruleset.items else []
        worth = tuple(sum(held_coins(character, family).get(c, 0) * v
                          for c, v in family_coins(family) if c not in removed)
                      for family in families)
        pools = tuple(live_sheet(self.game, state, character))  # pools and tracks
        labels = {c.id: c.label for c in self.game.ruleset.conditions}
        conditions = tuple(labels.get(c, c) for c in character.conditions)
        return _Character(tuple(bag), purse_line(self.game, character, state), worth, pools,
                          conditions)

    def delta(self, index: int, state: State) -> dict[str, Any] | None:
        """What changed since the last state seen: ``b`` bags, ``p`` purses, ``l`` pools,
        ``c`` conditions (each by character index), ``pl`` the place."""
        if state is self.last:
            return None
        self.last = state
        out: dict[str, Any] = {}
        for position, character in enumerate(state.characters):
            now = self.character(state, character)
            before = self.characters.get(character.name)
            self.characters[character.name] = now
            key = str(position)
            bag = _bag_delta(before.bag if before else (), now.bag)
            if bag is not None:
                out.setdefault("b", {})[key] = bag
            if before is None or before.purse != now.purse:
                out.setdefault("p", {})[key] = now.purse
            if before is None or before.pools != now.pools:
                out.setdefault("l", {})[key] = list(now.pools)
            if before is None or before.conditions != now.conditions:
                out.setdefault("c", {})[key] = list(now.conditions)
            for family, value in enumerate(now.worth):
                series = self.worth.setdefault((character.name, family), [])
                if not series or series[-1][1] != value:
                    series.append([index, value])
        place = ([state.place.name, state.place.size, state.place.day]
                 if state.place is not None else None)
        if place != self.place or index < 0:
            out["pl"] = place
            self.place = place
        return out or None


def _bag_delta(before: tuple[tuple[int, int], ...],
               after: tuple[tuple[int, int], ...]) -> dict[str, Any] | None:
    """``{"s": [[stack, count], ...], "o": order}``: count 0 removes a stack; new stacks go
    last, in the order given; ``o`` (the whole order) only when that guess would be wrong."""
    if before == after:
        return None
    old, new = dict(before), dict(after)
    sets = [[stack, count] for stack, count in after if old.get(stack) != count]
    sets += [[stack, 0] for stack, _ in before if stack not in new]
    guessed = [stack for stack, _ in before if stack in new]
    guessed += [stack for stack, _ in after if stack not in old]
    order = [stack for stack, _ in after]
    out: dict[str, Any] = {"s": sets}
    if guessed != order:
        out["o"] = order
    return out


def _answer_json(answer: MessageAnswer) -> dict[str, Any]:
    tag = answer.answer.tag
    action = tag.attrs.get("action")
    out: dict[str, Any] = {"k": tag.kind + (f" {action}" if action else ""), "q": tag.raw,
                           "ok": answer.answer.ok, "x": answer.answer.text}
    if answer.answer.reason is not None:
        out["why"] = answer.answer.reason
    if answer.answer.notes:
        out["n"] = list(answer.answer.notes)
    return out


def _checks(game: Game, result: ReplayResult, player: str) -> list[dict[str, Any]]:
    """Every skill check, save or ability check answered: for the outcome chart and its dice."""
    sheet = game.ruleset.sheet
    labels = {s.id: s.label for s in [*sheet.skills, *sheet.saves, *sheet.abilities]}
    checks: list[dict[str, Any]] = []
    for item in result.answers:
        answer = item.answer
        if answer.tag.kind != "skill_check" or not answer.ok:
            continue
        record = answer.record
        named = next((record[k] for k in ("skill", "save", "ability") if k in record), None)
        if named is None:
            named = next((answer.tag.attrs[k] for k in ("skill", "save", "ability")
                          if k in answer.tag.attrs), "?")
        success = record.get("success")
        rolls = record.get("rolls")
        checks.append({
            "m": item.message, "skill": labels.get(str(named), str(named)),
            "who": answer.tag.attrs.get("who") or player,
            "success": success if isinstance(success, bool) else None,
            "rolls": rolls if isinstance(rolls, list) else [],
            "total": record.get("total"), "dc": record.get("dc"),
            "outcome": record.get("outcome"), "x": answer.text[:EXCERPT],
        })
    return checks


def _loot(game: Game, result: ReplayResult) -> list[dict[str, Any]]:
    """Drops per loot table, item by item, and how often each table was rolled."""
    items = game.ruleset.items
    labels = {t.id: t.label for t in (items.loot_tables if items else [])}
    tables: dict[str, dict[str, Any]] = {}
    for item in result.answers:
        answer = item.answer
        if answer.tag.kind != "loot" or not answer.ok:
            continue
        table_id = str(answer.record.get("table", "?"))
        table = tables.setdefault(table_id, {"table": labels.get(table_id, table_id),
                                             "rolls": 0, "drops": {}})
        table["rolls"] += 1
        drops = answer.record.get("drops")
        for drop in drops if isinstance(drops, list) else []:
            if isinstance(drop, dict) and isinstance(drop.get("count"), int):
                name = str(drop.get("name", "?"))
                table["drops"][name] = table["drops"].get(name, 0) + drop["count"]
    return [{"table": t["table"], "rolls": t["rolls"], "drops": sorted(t["drops"].items())}
            for _, t in sorted(tables.items())]


def _group_repairs(text: str, answers: list[dict[str, Any]],
                   diagnostics: list[Diagnostic]) -> list[list[str]]:
    """Each diagnostic inside a tag goes to that tag's answer as ``r`` (shown as one badge per
    tag); a malformed tag's own reason is its refusal already. What lies outside every tag is
    returned, for the message."""
    tags = tagparse.scan(text).tags
    paired = list(zip(tags, answers, strict=True)) if len(tags) == len(answers) else []
    left: list[list[str]] = []
    for diagnostic in diagnostics:
        start, end = diagnostic.span or (-1, -1)
        owner = next((answer for tag, answer in paired if tag.start <= start and end <= tag.end),
                     None)
        if owner is None:
            left.append([diagnostic.code, diagnostic.text])
        elif not (diagnostic.code == "malformed" and owner.get("why") == "malformed"):
            owner.setdefault("r", []).append([diagnostic.code, diagnostic.text])
    return left


def report_document(game: Game, transcript: Transcript, state: State,
                    title: str = "gmtags report") -> dict[str, Any]:
    """Replay ``transcript`` and gather everything the report page shows, as JSON data."""
    collector = _Collector(game)
    start = collector.delta(-1, state)
    deltas: dict[int, dict[str, Any]] = {}

    def on_message(index: int, after: State) -> None:
        change = collector.delta(index, after)
        if change is not None:
            deltas[index] = change

    result = replay(game, transcript, state, on_message=on_message)
    answers: dict[int, list[dict[str, Any]]] = {}
    for item in result.answers:
        answers.setdefault(item.message, []).append(_answer_json(item))
    diagnostics: dict[int, list[Diagnostic]] = {}
    for diagnostic in result.diagnostics:
        if diagnostic.message is not None:
            diagnostics.setdefault(diagnostic.message, []).append(diagnostic)
    messages: list[dict[str, Any]] = []
    for index, (session, _, message) in enumerate(transcript.messages()):
        entry: dict[str, Any] = {"s": session, "r": message.role, "t": message.text}
        if message.source_line is not None:
            entry["l"] = message.source_line
        if message.name:
            entry["n"] = message.name
        if message.hidden:
            entry["h"] = 1
        elif message.role in ("player", "system"):
            typed = tagparse.scan(message.text).tags  # never counted (DESIGN.md "Tags")
            if typed:
                entry["u"] = [tag.raw for tag in typed]
        if index in diagnostics:
            left = _group_repairs(message.text, answers.get(index, []), diagnostics[index])
            if left:
                entry["g"] = left
        if message.swipes and len(message.swipes) > 1:
            entry["w"] = [[i, text] for i, text in enumerate(message.swipes)
                          if i != message.swipe]
        if message.event is not None:
            entry["e"] = json.dumps(message.event, ensure_ascii=False, sort_keys=True)
        if index in answers:
            entry["a"] = answers[index]
        if index in deltas:
            entry["d"] = deltas[index]
        messages.append(entry)
    families = game.ruleset.items.currencies if game.ruleset.items else []
    worth = [{"who": who, "family": family, "points": points}
             for (who, family), points in collector.worth.items()
             if any(value for _, value in points)]
    return {
        "format": REPORT_FORMAT,
        "title": title,
        "ruleset": game.ruleset.label,
        "unit": "entry" if transcript.format == "openai" else "line",  # what ``l`` counts
        "pageSize": PAGE_SIZE,
        "characters": [c.name for c in state.characters],
        "families": [{"label": f.label,
                      "unit": game.coins[family_coins(f)[-1][0]].coin.label} for f in families],
        "stacks": collector.stacks,
        "start": start or {},
        "messages": messages,
        "charts": {"worth": worth, "checks": _checks(game, result, state.player),
                   "loot": _loot(game, result)},
    }


def _script_json(document: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` can end or open one."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_report(document: Mapping[str, Any]) -> str:
    """The report page: one HTML file with its style, script and data inline."""
    title = html.escape(str(document.get("title", "gmtags report")))
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
        f"<title>{title}</title>\n<style>\n{REPORT_CSS}</style>\n</head>\n<body>\n"
        f"{REPORT_BODY.replace('$TITLE', title)}"
        f"<script type=\"application/json\" id=\"report-data\">{_script_json(document)}"
        "</script>\n"
        f"<script>\n{REPORT_JS}</script>\n</body>\n</html>\n"
    )


def report_html(game: Game, transcript: Transcript, state: State,
                title: str = "gmtags report") -> str:
    """Replay a chat and render its report page (``gmtags report``)."""
    return render_report(report_document(game, transcript, state, title))


# The regression view --------------------------------------------------------------------------


def _pairs(value: Any) -> list[tuple[str, str]]:
    """Answer attributes as (key, value) pairs from a mapping or a sequence of pairs."""
    if isinstance(value, Mapping):
        return [(str(k), str(v)) for k, v in value.items()]
    pairs: list[tuple[str, str]] = []
    for pair in value or ():
        if isinstance(pair, Sequence) and not isinstance(pair, str) and len(pair) == 2:
            pairs.append((str(pair[0]), str(pair[1])))
    return pairs


def render_regress_html(differences: Iterable[Mapping[str, Any]],
                        title: str = "gmtags regress") -> str:
    """The regression view: each answer whose recorded and recomputed forms differ, side by side.

    Each difference is a mapping with ``recorded`` and ``now`` (the answer attributes, as a
    mapping or a sequence of (key, value) pairs) and, optionally, ``chat`` (a file name),
    ``message`` (index in the flattened transcript), ``line`` and ``tag`` (the request part).
    ``Difference.to_json()`` of ``replay.regress`` plus ``"chat"`` is one. Static HTML, no
    script; attributes that differ are marked, changed rows first in the recorded order.
    """
    rows: list[str] = []
    count = 0
    for difference in differences:
        count += 1
        recorded, now = _pairs(difference.get("recorded")), _pairs(difference.get("now"))
        before, after = dict(recorded), dict(now)
        keys = list(dict.fromkeys([k for k, _ in recorded] + [k for k, _ in now]))
        where = [str(difference["chat"])] if difference.get("chat") is not None else []
        if difference.get("message") is not None:
            line = difference.get("line")
            where.append(f"message {difference['message']}" +
                         (f" (line {line})" if line is not None else ""))
        lines = []
        for key in keys:
            old, new = before.get(key), after.get(key)
            mark = "same" if old == new else "changed"
            lines.append(
                f"<tr class=\"{mark}\"><th>{html.escape(key)}</th>"
                f"<td class=\"recorded\">{html.escape(old) if old is not None else '—'}</td>"
                f"<td class=\"now\">{html.escape(new) if new is not None else '—'}</td></tr>")
        rows.append(
            f"<section class=\"difference\" id=\"d{count}\">\n"
            f"<h2>{html.escape(' · '.join(where) or f'difference {count}')}</h2>\n"
            f"<p class=\"tag\"><code>{html.escape(str(difference.get('tag', '')))}</code></p>\n"
            "<table><thead><tr><th>attribute</th><th>recorded</th><th>now</th></tr></thead>"
            f"<tbody>\n{chr(10).join(lines)}\n</tbody></table>\n</section>")
    body = "\n".join(rows) if rows else "<p class=\"none\">No differences.</p>"
    return (
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        f"<meta http-equiv=\"Content-Security-Policy\" content=\"{CSP}\">\n"
        f"<title>{html.escape(title)}</title>\n<style>\n{REGRESS_CSS}</style>\n"
        f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
        f"<p class=\"summary\">{count} difference{'' if count == 1 else 's'}</p>\n{body}\n"
        "</body>\n</html>\n"
    )


# The page --------------------------------------------------------------------------------------
# Kept here, inline, so the report is one file and the module one unit. The script builds every
# node with textContent (chat text is written by a model: never parsed as HTML) and reads the SVG
# namespace from the inline <svg id="svg-ns"> so the file names no URL at all.

REPORT_BODY = """<svg id="svg-ns" width="0" height="0" aria-hidden="true"></svg>
<header>
<h1>$TITLE</h1>
<p id="subtitle"></p>
<nav class="tabs">
<button type="button" id="tab-chat" class="tab active">Chat</button>
<button type="button" id="tab-charts" class="tab">Charts</button>
</nav>
</header>
<main id="view-chat" class="view">
<div class="chat">
<div class="pager" id="pager-top"></div>
<div id="messages"></div>
<div class="pager" id="pager-bottom"></div>
</div>
<aside id="state" class="state" aria-live="polite"></aside>
</main>
<main id="view-charts" class="charts" hidden>
<section id="chart-worth"></section>
<section id="chart-checks"></section>
<section id="chart-loot"></section>
</main>
<noscript>This report draws itself with JavaScript; turn it on to see the game.</noscript>
"""

REPORT_CSS = """:root { --ok: #1a7f37; --bad: #c0392b; --warn: #b7791f; --ink: #1f2328;
  --muted: #656d76; --line: #d0d7de; --bg: #f6f8fa; --pick: #0969da; }
* { box-sizing: border-box; }
body { margin: 0; font: 14px/1.45 system-ui, sans-serif; color: var(--ink); background: #fff; }
header { padding: 10px 16px; border-bottom: 1px solid var(--line); background: var(--bg); }
h1 { font-size: 18px; margin: 0; }
#subtitle { margin: 2px 0 6px; color: var(--muted); }
.tabs .tab { border: 1px solid var(--line); background: #fff; padding: 4px 12px;
  cursor: pointer; border-radius: 4px; }
.tabs .tab.active { background: var(--pick); color: #fff; border-color: var(--pick); }
.view { display: grid; grid-template-columns: minmax(0, 1fr) minmax(280px, 380px); gap: 16px;
  padding: 12px 16px; }
.view[hidden], .charts[hidden] { display: none; }
.pager { display: flex; gap: 6px; align-items: center; margin: 6px 0; flex-wrap: wrap; }
.pager button { padding: 2px 8px; }
.pager input { width: 6em; }
.msg { border: 1px solid var(--line); border-left: 4px solid var(--line); border-radius: 4px;
  padding: 6px 10px; margin: 6px 0; cursor: pointer; }
.msg.role-gm { border-left-color: #8250df; }
.msg.role-player { border-left-color: var(--pick); background: #fbfdff; }
.msg.role-event { border-left-color: var(--warn); }
.msg.role-system { border-left-color: var(--muted); color: var(--muted); }
.msg.hidden { opacity: .55; }
.msg.selected { outline: 2px solid var(--pick); }
.msg .head { font-size: 12px; color: var(--muted); display: flex; gap: 8px; flex-wrap: wrap; }
.msg .text { white-space: pre-wrap; overflow-wrap: anywhere; margin: 4px 0; }
.msg pre { white-space: pre-wrap; overflow-wrap: anywhere; background: var(--bg); padding: 4px;
  margin: 4px 0; }
mark.tag { background: #eef; border-radius: 3px; }
mark.tag.ok { background: #dafbe1; }
mark.tag.refused { background: #ffebe9; }
mark.tag.uncounted { background: #eaeef2; text-decoration: line-through; }
details.repairs { display: inline; margin-left: 6px; }
details.repairs summary { display: inline-block; cursor: pointer; list-style: none; }
details.repairs .repair-list { margin: 2px 0 2px 16px; font-size: 12px; color: var(--muted); }
.answers { list-style: none; padding: 0; margin: 4px 0; }
.answers li { margin: 2px 0; }
.badge { display: inline-block; font-size: 12px; border-radius: 10px; padding: 0 8px;
  margin-right: 6px; color: #fff; }
.badge.ok { background: var(--ok); }
.badge.refused { background: var(--bad); }
.badge.diag { background: var(--warn); }
.badge.flag { background: var(--muted); }
.reason { font-family: ui-monospace, monospace; color: var(--bad); margin-right: 4px; }
.changes { font-size: 12px; color: var(--muted); margin: 2px 0; }
.changes .up { color: var(--ok); }
.changes .down { color: var(--bad); }
details.swipes summary { font-size: 12px; color: var(--muted); }
.state { position: sticky; top: 0; align-self: start; max-height: 100vh; overflow: auto;
  border: 1px solid var(--line); border-radius: 4px; padding: 8px 12px; background: var(--bg); }
.state h2 { font-size: 15px; margin: 0 0 4px; }
.state h3 { font-size: 14px; margin: 10px 0 2px; }
.state .line { margin: 1px 0; }
.state .line.changed { background: #fff8c5; }
table.bag { border-collapse: collapse; width: 100%; font-size: 13px; }
table.bag td { border-top: 1px solid var(--line); padding: 1px 4px; }
table.bag td.stack-count { text-align: right; white-space: nowrap; }
table.bag tr.added { background: #dafbe1; }
table.bag tr.changed { background: #fff8c5; }
table.bag tr.removed { background: #ffebe9; text-decoration: line-through; color: var(--muted); }
table.bag .was { color: var(--muted); font-size: 11px; margin-right: 4px; }
.kind-coin td.stack-name::before { content: "\\25CF "; color: #bf8700; }
.charts { padding: 12px 16px; }
.charts section { margin-bottom: 24px; }
.charts h2 { font-size: 16px; }
.charts svg { display: block; width: 100%; height: auto; font: 11px system-ui, sans-serif; }
.charts svg .axis-title { fill: var(--muted); }
.charts table { border-collapse: collapse; font-size: 12px; }
.charts td, .charts th { border: 1px solid var(--line); padding: 1px 6px; text-align: left; }
.charts a { color: var(--pick); cursor: pointer; }
.empty { color: var(--muted); font-style: italic; }
"""

REPORT_JS = r""""use strict";
(function () {
const D = JSON.parse(document.getElementById("report-data").textContent);
const NS = document.getElementById("svg-ns").namespaceURI;
const M = D.messages, N = M.length, PAGE = D.pageSize || 50;
const PAGES = Math.max(1, Math.ceil(N / PAGE));
const CP = 100;  // a state is kept every CP messages; others are rebuilt from the diffs
const COLORS = ["#0969da", "#cf222e", "#1a7f37", "#8250df", "#bf8700", "#1b7c83", "#953800"];
const $ = (id) => document.getElementById(id);
const plural = (n, word, many) => n + " " + (n === 1 ? word : many || word + "s");
// A message is named as everywhere in gmtags: its number and the file's line (or entry).
const where = (i) => "message " + i + (M[i] && M[i].l != null ? " (" + D.unit + " " + M[i].l
  + ")" : "");

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined && text !== null) node.textContent = String(text);
  return node;
}
function svg(tag, attrs, text) {
  const node = document.createElementNS(NS, tag);
  for (const key in attrs) node.setAttribute(key, String(attrs[key]));
  if (text !== undefined) node.textContent = String(text);
  return node;
}

// State: per character the bag (stack order and counts), purse, pools, conditions; the place.
function emptyState() {
  return {chars: D.characters.map(() => ({order: [], counts: {}, purse: "", pools: [],
    cond: []})), place: null};
}
function apply(st, d) {
  if (!d) return st;
  const out = {chars: st.chars.slice(), place: st.place};
  const touch = (k) => {
    if (out.chars[k] === st.chars[k]) out.chars[k] = Object.assign({}, st.chars[k]);
    return out.chars[k];
  };
  for (const k in d.b || {}) {
    const c = touch(k), counts = Object.assign({}, c.counts), order = c.order.slice();
    for (const [id, n] of d.b[k].s) {
      if (n === 0) { delete counts[id]; continue; }
      if (!(id in counts)) order.push(id);
      counts[id] = n;
    }
    c.counts = counts;
    c.order = d.b[k].o ? d.b[k].o.slice() : order.filter((id) => id in counts);
  }
  for (const k in d.p || {}) touch(k).purse = d.p[k];
  for (const k in d.l || {}) touch(k).pools = d.l[k];
  for (const k in d.c || {}) touch(k).cond = d.c[k];
  if ("pl" in d) out.place = d.pl;
  return out;
}
const START = apply(emptyState(), D.start);
const kept = new Map([[-1, START]]);
function stateAfter(i) {
  if (i < 0) return START;
  let from = Math.floor((i + 1) / CP) * CP - 1;
  while (!kept.has(from)) from -= CP;
  let st = kept.get(from);
  for (let j = from + 1; j <= i; j++) {
    st = apply(st, M[j].d);
    if ((j + 1) % CP === 0) kept.set(j, st);
  }
  return st;
}
function placeText(place) {
  if (!place) return "No place";
  return place[0] + (place[1] ? " (" + place[1] + ")" : "") + ", day " + place[2];
}

// The chat, one page at a time.
let page = -1, selected = -1;
function textWithTags(text, marks) {
  // marks: [raw tag, class] in text order; each is found after the ones before it.
  const box = el("div", "text");
  const spans = [];
  for (const [raw, cls] of marks) {
    let at = text.indexOf(raw);
    while (at >= 0 && spans.some((s) => at < s[1] && at + raw.length > s[0])) {
      at = text.indexOf(raw, at + 1);
    }
    if (at >= 0 && raw) spans.push([at, at + raw.length, cls]);
  }
  spans.sort((x, y) => x[0] - y[0]);
  let pos = 0;
  for (const [start, end, cls] of spans) {
    box.appendChild(document.createTextNode(text.slice(pos, start)));
    const mark = el("mark", "tag " + cls, text.slice(start, end));
    if (cls === "uncounted") mark.title = "not counted: only GM replies the player sees are";
    box.appendChild(mark);
    pos = end;
  }
  box.appendChild(document.createTextNode(text.slice(pos)));
  return box;
}
function changeLine(before, d) {
  const parts = [];
  for (const k in (d && d.b) || {}) {
    for (const [id, n] of d.b[k].s) {
      const was = before.chars[k].counts[id] || 0, diff = n - was;
      if (!diff) continue;
      const span = el("span", diff > 0 ? "up" : "down",
        (diff > 0 ? "+" : "−") + D.stacks[id][0] + " ×" + Math.abs(diff) + " ("
        + D.characters[k] + ")");
      parts.push(span);
    }
  }
  if (d && "pl" in d && d.pl) parts.push(el("span", "", "→ " + placeText(d.pl)));
  if (!parts.length) return null;
  const line = el("div", "changes");
  parts.forEach((p, n) => { if (n) line.append(" · "); line.appendChild(p); });
  return line;
}
// A tag's repairs as one badge: "repaired: curly-quotes ×4"; each one in its tooltip and,
// on a click, listed under it.
function repairs(found) {
  const counts = new Map();
  for (const [code] of found) counts.set(code, (counts.get(code) || 0) + 1);
  const label = [...counts].map(([code, n]) => code + (n > 1 ? " ×" + n : "")).join(", ");
  const box = el("details", "repairs");
  const summary = el("summary", "badge diag", "repaired: " + label);
  summary.title = found.map(([, text]) => text).join("\n");
  box.appendChild(summary);
  const list = el("ul", "repair-list");
  for (const [code, text] of found) list.appendChild(el("li", "", code + ": " + text));
  box.appendChild(list);
  return box;
}
function renderMessage(i, before) {
  const m = M[i];
  const box = el("article", "msg role-" + m.r + (m.h ? " hidden" : "")
    + (i === selected ? " selected" : ""));
  box.id = "m" + i;
  box.dataset.index = i;
  const head = el("div", "head");
  head.append(el("span", "", where(i)), el("span", "", "session " + (m.s + 1)),
    el("span", "", m.r + (m.n ? " · " + m.n : "")));
  if (m.h) head.appendChild(el("span", "badge flag", "hidden: not counted"));
  if (m.u) {
    head.appendChild(el("span", "badge flag uncounted",
      (m.u.length === 1 ? "tag" : m.u.length + " tags") + " not counted (" + m.r + ")"));
  }
  box.appendChild(head);
  const marks = m.r === "gm" && m.a ? m.a.map((a) => [a.q, a.ok ? "ok" : "refused"])
    : (m.u || []).map((raw) => [raw, "uncounted"]);
  if (m.t) box.appendChild(textWithTags(m.t, marks));
  if (m.e) box.appendChild(el("pre", "event", m.e));
  if (m.a) {
    const list = el("ul", "answers");
    for (const a of m.a) {
      const li = el("li", a.ok ? "answer ok" : "answer refused");
      li.title = a.q;
      li.appendChild(el("span", "badge " + (a.ok ? "ok" : "refused"), a.k));
      if (!a.ok) li.appendChild(el("span", "reason", a.why || "refused"));
      li.appendChild(el("span", "answer-text", a.x));
      if (a.n) li.appendChild(el("span", "badge flag", "ignored: " + a.n.join(", ")));
      if (a.r) li.appendChild(repairs(a.r));
      list.appendChild(li);
    }
    box.appendChild(list);
  }
  for (const [code, text] of m.g || []) {
    const line = el("div", "diagnostic");
    line.append(el("span", "badge diag", code), el("span", "", text));
    box.appendChild(line);
  }
  const changes = changeLine(before, m.d);
  if (changes) box.appendChild(changes);
  if (m.w) {
    const more = el("details", "swipes");
    more.appendChild(el("summary", "", plural(m.w.length, "other swipe")
      + ", not selected"));
    more.addEventListener("toggle", () => {
      if (more.dataset.filled) return;
      more.dataset.filled = "1";
      for (const [n, text] of m.w) more.appendChild(el("pre", "", "swipe " + n + ": " + text));
    });
    box.appendChild(more);
  }
  return box;
}
function renderPager(box) {
  box.textContent = "";
  const go = (label, to) => {
    const b = el("button", "", label);
    b.type = "button";
    b.disabled = to < 0 || to >= PAGES || to === page;
    b.addEventListener("click", () => showPage(to));
    return b;
  };
  box.append(go("« first", 0), go("‹ prev", page - 1),
    el("span", "", "page " + (page + 1) + " of " + PAGES + " · messages " + (page * PAGE)
      + "–" + (Math.min(N, page * PAGE + PAGE) - 1) + " of " + N),
    go("next ›", page + 1), go("last »", PAGES - 1));
  const jump = el("input");
  jump.type = "number"; jump.min = 0; jump.max = Math.max(0, N - 1);
  jump.placeholder = "message #";
  jump.addEventListener("change", () => {
    const i = Number(jump.value);
    if (Number.isInteger(i) && i >= 0 && i < N) select(i, true);
  });
  box.appendChild(jump);
}
function showPage(p) {
  page = Math.max(0, Math.min(PAGES - 1, p));
  const list = $("messages"), frag = document.createDocumentFragment();
  const from = page * PAGE, to = Math.min(N, from + PAGE);
  let st = stateAfter(from - 1);
  for (let i = from; i < to; i++) {
    frag.appendChild(renderMessage(i, st));
    st = apply(st, M[i].d);
  }
  list.textContent = "";
  list.appendChild(frag);
  renderPager($("pager-top"));
  renderPager($("pager-bottom"));
}
function select(i, scroll) {
  if (Math.floor(i / PAGE) !== page) showPage(Math.floor(i / PAGE));
  const old = $("m" + selected);
  if (old) old.classList.remove("selected");
  selected = i;
  const box = $("m" + i);
  if (box) {
    box.classList.add("selected");
    if (scroll) box.scrollIntoView({block: "center"});
  }
  renderState(i);
  try { history.replaceState(null, "", "#m" + i); } catch (e) { /* a sandboxed file view */ }
}

// The state panel: the party after the selected message, changes since the one before.
function renderState(i) {
  const before = stateAfter(i - 1), after = stateAfter(i), panel = $("state");
  panel.textContent = "";
  panel.dataset.message = i;
  panel.appendChild(el("h2", "", i < 0 ? "Party at the start" : "Party after " + where(i)));
  const place = el("p", "line place" + (before.place !== after.place ? " changed" : ""),
    placeText(after.place));
  panel.appendChild(place);
  after.chars.forEach((c, k) => {
    const was = before.chars[k], sec = el("section", "character");
    sec.dataset.character = D.characters[k];
    sec.appendChild(el("h3", "", D.characters[k]));
    sec.appendChild(el("p", "line purse" + (was.purse !== c.purse ? " changed" : ""), c.purse));
    if (c.pools.length) {
      sec.appendChild(el("p", "line pools" + (was.pools !== c.pools ? " changed" : ""),
        c.pools.join(" · ")));
    }
    sec.appendChild(el("p", "line conditions" + (was.cond !== c.cond ? " changed" : ""),
      c.cond.length ? "Conditions: " + c.cond.join(", ") : "No conditions"));
    const table = el("table", "bag"), body = el("tbody");
    const row = (id, count, cls, old) => {
      const tr = el("tr", cls + " kind-" + D.stacks[id][1]);
      tr.dataset.stack = D.stacks[id][0];
      const cell = el("td", "stack-count");
      if (old !== null) cell.appendChild(el("span", "was", old + "→"));
      cell.append(String(count));
      tr.append(el("td", "stack-name", D.stacks[id][0]), cell);
      body.appendChild(tr);
    };
    for (const id of c.order) {
      const old = was.counts[id];
      if (old === undefined) row(id, c.counts[id], "added", null);
      else if (old !== c.counts[id]) row(id, c.counts[id], "changed", old);
      else row(id, c.counts[id], "", null);
    }
    for (const id of was.order) if (!(id in c.counts)) row(id, 0, "removed", was.counts[id]);
    if (!body.children.length) body.appendChild(el("tr", "empty")).appendChild(
      el("td", "", "empty bag"));
    table.appendChild(body);
    sec.appendChild(table);
    panel.appendChild(sec);
  });
}

// Charts, drawn as inline SVG the first time the Charts tab opens.
let drawn = false;
function heading(box, text) { box.appendChild(el("h2", "", text)); }
function jumpLink(i) {
  const a = el("a", "", String(i));
  a.title = where(i);
  a.addEventListener("click", () => { showTab("chat"); select(i, true); });
  return a;
}
// Charts are as wide as the page (their box, measured when the tab opens) and drawn at that
// size, so text stays 11px; axes carry round-numbered ticks with light grid lines.
function chartWidth(box) {
  return Math.max(420, Math.floor(box.getBoundingClientRect().width) || 760);
}
function ticks(top, most) {
  // Whole round steps (1, 2 or 5 × 10^k) from 0 to the first at or above top, at most about
  // `most` of them: every value charted is a count of messages, coins or checks.
  const raw = Math.max(top, 1) / Math.max(1, most);
  const power = Math.pow(10, Math.max(0, Math.floor(Math.log10(raw))));
  const step = [1, 2, 5, 10].map((f) => f * power).find((s) => s >= raw);
  const out = [];
  for (let n = 0; n <= Math.ceil(top / step); n++) out.push(n * step);
  return out;
}
function count(v) { return v.toLocaleString("en"); }
function drawWorth(box) {
  heading(box, "Coin worth per character");
  const series = D.charts.worth;
  if (!series.length) { box.appendChild(el("p", "empty", "Nobody held coins.")); return; }
  D.families.forEach((family, f) => {
    const mine = series.filter((s) => s.family === f);
    if (!mine.length) return;
    const W = chartWidth(box), H = 280, L = 64, T = 16, B = 40;
    const names = Math.max(...mine.map((s) => s.who.length));
    const R = Math.min(220, 34 + names * 7);
    const highest = Math.max(1, ...mine.flatMap((s) => s.points.map((p) => p[1])));
    const ys = ticks(highest, 5), top = ys[ys.length - 1];
    const xs = ticks(Math.max(1, N - 1), Math.max(2, Math.floor((W - L - R) / 90)))
      .filter((v) => v <= N - 1);
    const x = (i) => L + Math.max(0, i) / Math.max(1, N - 1) * (W - L - R);
    const y = (v) => T + (1 - v / top) * (H - T - B);
    const chart = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H,
      role: "img", "aria-label": family.label + " worth per character, by message"});
    for (const v of ys) {
      chart.appendChild(svg("line", {x1: L, y1: y(v), x2: W - R, y2: y(v),
        stroke: v ? "#eaeef2" : "#999"}));
      chart.appendChild(svg("text", {x: L - 6, y: y(v) + 4, "text-anchor": "end"}, count(v)));
    }
    chart.appendChild(svg("line", {x1: L, y1: T, x2: L, y2: y(0), stroke: "#999"}));
    for (const v of xs) {
      chart.appendChild(svg("line", {x1: x(v), y1: y(0), x2: x(v), y2: y(0) + 4,
        stroke: "#999"}));
      chart.appendChild(svg("text", {x: x(v), y: y(0) + 16, "text-anchor": "middle"},
        count(v)));
    }
    chart.appendChild(svg("text", {x: (L + W - R) / 2, y: H - 6, "text-anchor": "middle",
      class: "axis-title"}, "message"));
    chart.appendChild(svg("text", {x: 14, y: (T + y(0)) / 2, "text-anchor": "middle",
      transform: "rotate(-90 14 " + (T + y(0)) / 2 + ")", class: "axis-title"},
      family.unit));
    mine.forEach((s, n) => {
      const color = COLORS[n % COLORS.length];
      let d = "M" + x(s.points[0][0]) + " " + y(s.points[0][1]);
      for (const [i, v] of s.points.slice(1)) d += " H" + x(i) + " V" + y(v);
      d += " H" + x(N - 1);
      const path = svg("path", {d: d, fill: "none", stroke: color, "stroke-width": 2});
      path.appendChild(svg("title", {}, s.who + ": " + family.label));
      chart.appendChild(path);
      chart.appendChild(svg("rect", {x: W - R + 12, y: T + n * 18, width: 10, height: 10,
        fill: color}));
      chart.appendChild(svg("text", {x: W - R + 26, y: T + n * 18 + 9}, s.who));
    });
    box.appendChild(el("h3", "", family.label + " (in " + family.unit + ")"));
    box.appendChild(chart);
  });
}
function bars(box, rows, colors, labels) {
  const W = chartWidth(box), ROW = 22, T = 4, B = 34;
  const L = Math.min(260, 16 + Math.max(...rows.map((r) => r[0].length)) * 7), R = 200;
  const H = T + rows.length * ROW + B;
  const highest = Math.max(1, ...rows.map((r) => r[1].reduce((a, b) => a + b, 0)));
  const xs = ticks(highest, Math.max(2, Math.floor((W - L - R) / 80))), top = xs[xs.length - 1];
  const x = (v) => L + v / top * (W - L - R), bottom = T + rows.length * ROW;
  const chart = svg("svg", {viewBox: "0 0 " + W + " " + H, width: W, height: H, role: "img"});
  for (const v of xs) {
    chart.appendChild(svg("line", {x1: x(v), y1: T, x2: x(v), y2: bottom,
      stroke: v ? "#eaeef2" : "#999"}));
    chart.appendChild(svg("text", {x: x(v), y: bottom + 14, "text-anchor": "middle"}, count(v)));
  }
  chart.appendChild(svg("text", {x: (L + W - R) / 2, y: H - 4, "text-anchor": "middle",
    class: "axis-title"}, labels.length > 1 ? "checks" : labels[0]));
  rows.forEach(([name, parts], n) => {
    const y = T + n * ROW;
    chart.appendChild(svg("text", {x: L - 6, y: y + 14, "text-anchor": "end"}, name));
    let at = L;
    parts.forEach((v, p) => {
      if (!v) return;
      const w = v / top * (W - L - R);
      const rect = svg("rect", {x: at, y: y + 2, width: Math.max(1, w), height: ROW - 6,
        fill: colors[p]});
      rect.appendChild(svg("title", {}, name + ": " + v + " " + labels[p]));
      chart.appendChild(rect);
      at += w;
    });
    chart.appendChild(svg("text", {x: at + 4, y: y + 14},
      parts.map((v, p) => v ? v + " " + labels[p] : "").filter(Boolean).join(", ")));
  });
  return chart;
}
function drawChecks(box) {
  heading(box, "Check outcomes by skill");
  const checks = D.charts.checks;
  if (!checks.length) { box.appendChild(el("p", "empty", "No checks were answered.")); return; }
  const by = new Map();
  for (const c of checks) {
    const row = by.get(c.skill) || [0, 0, 0];
    row[c.success === true ? 0 : c.success === false ? 1 : 2] += 1;
    by.set(c.skill, row);
  }
  const rows = [...by.entries()].sort((a, b) => a[0] < b[0] ? -1 : 1);
  box.appendChild(bars(box, rows, ["#1a7f37", "#cf222e", "#8c959f"],
    ["success", "failure", "no result"]));
  const more = el("details");
  more.appendChild(el("summary", "", checks.length === 1 ? "The dice of the one check"
    : "The dice of all " + checks.length + " checks"));
  more.addEventListener("toggle", () => {
    if (more.dataset.filled) return;
    more.dataset.filled = "1";
    const table = el("table"), head = el("tr");
    for (const h of ["message", "who", "skill", "dice", "total", "dc", "result"]) {
      head.appendChild(el("th", "", h));
    }
    table.appendChild(head);
    for (const c of checks) {
      const tr = el("tr"), cell = el("td");
      cell.appendChild(jumpLink(c.m));
      const result = c.outcome || (c.success === true ? "success"
        : c.success === false ? "failure" : "—");
      tr.append(cell, el("td", "", c.who), el("td", "", c.skill),
        el("td", "", JSON.stringify(c.rolls)), el("td", "", c.total ?? "—"),
        el("td", "", c.dc ?? "—"), el("td", "", result));
      tr.title = c.x;
      table.appendChild(tr);
    }
    more.appendChild(table);
  });
  box.appendChild(more);
}
function drawLoot(box) {
  heading(box, "Loot drops by table");
  if (!D.charts.loot.length) { box.appendChild(el("p", "empty", "No loot was rolled.")); return; }
  for (const t of D.charts.loot) {
    box.appendChild(el("h3", "", t.table + " — rolled " + plural(t.rolls, "time")));
    if (!t.drops.length) { box.appendChild(el("p", "empty", "Nothing dropped.")); continue; }
    box.appendChild(bars(box, t.drops.map(([name, n]) => [name, [n]]), ["#8250df"],
      ["dropped"]));
  }
}
function showTab(name) {
  $("view-chat").hidden = name !== "chat";
  $("view-charts").hidden = name !== "charts";
  $("tab-chat").classList.toggle("active", name === "chat");
  $("tab-charts").classList.toggle("active", name === "charts");
  if (name === "charts" && !drawn) {
    drawn = true;
    drawWorth($("chart-worth"));
    drawChecks($("chart-checks"));
    drawLoot($("chart-loot"));
  }
}

$("subtitle").textContent = D.ruleset + " · " + N + " messages · "
  + M.filter((m) => m.r === "gm" && !m.h).length + " visible GM replies";
$("tab-chat").addEventListener("click", () => showTab("chat"));
$("tab-charts").addEventListener("click", () => showTab("charts"));
$("messages").addEventListener("click", (event) => {
  if (event.target.closest("summary, details pre, a, input, button")) return;
  const box = event.target.closest(".msg");
  if (box) select(Number(box.dataset.index), false);
});
const wanted = /^#m(\d+)$/.exec(location.hash);
const first = wanted && Number(wanted[1]) < N ? Number(wanted[1]) : -1;
showPage(first >= 0 ? Math.floor(first / PAGE) : 0);
if (first >= 0) select(first, true); else renderState(-1);
document.body.dataset.ready = "1";
performance.mark("report-ready");
requestAnimationFrame(() => setTimeout(() => performance.mark("report-painted"), 0));
})();
"""

REGRESS_CSS = """body { margin: 16px; font: 14px/1.45 system-ui, sans-serif; color: #1f2328; }
h1 { font-size: 18px; }
h2 { font-size: 15px; margin: 18px 0 4px; }
.summary, .none { color: #656d76; }
table { border-collapse: collapse; width: 100%; table-layout: fixed; }
th, td { border: 1px solid #d0d7de; padding: 2px 6px; text-align: left; vertical-align: top;
  white-space: pre-wrap; overflow-wrap: anywhere; }
thead th { background: #f6f8fa; }
tbody th { width: 12em; font-family: ui-monospace, monospace; font-weight: normal; }
tr.changed td.recorded { background: #ffebe9; }
tr.changed td.now { background: #dafbe1; }
tr.same { color: #656d76; }
code { overflow-wrap: anywhere; }
"""
