"""The replay report: one self-contained HTML file to look at a game instead of reading JSON.

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

The page's template, style and script are files of the package (``replay/report_assets/``:
``report.html``, ``report.css``, ``report.js``, ``regress.css``), put inline when a page is
written. The script builds every node with textContent (chat text is written by a model: never
parsed as HTML) and reads the SVG namespace from the inline ``<svg id="svg-ns">``, so the file
names no URL at all.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from string import Template
from typing import Any

import tagparse
from engine import Answer, Game, State
from engine.actions.money import purse_line
from engine.rules.money import family_coins
from engine.rules.state import Character, Encounter, Stack
from engine.text.fight.block import health_of
from engine.text.prompt import live_sheet

from .fold import Diagnostic, MessageAnswer, ReplayResult, replay
from .transcript import Transcript
from .view import StackKey, condition_labels, family_worth, stack_keys, stack_label

REPORT_FORMAT = "gmtags-report/1"
PAGE_SIZE = 50  # messages per page of the chat; the page renders one page at a time
EXCERPT = 400  # characters of a check's or drop's raw tag kept for the charts' tables

# Every fetch is forbidden: the page needs nothing but its own inline script and style.
CSP = ("default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
       "img-src data:; base-uri 'none'; form-action 'none'")



@cache
def asset(name: str) -> str:
    """A file of ``replay/report_assets`` (the page's template, style or script), as text."""
    return resources.files("replay").joinpath("report_assets", name).read_text(encoding="utf-8")


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
        # Two stacks of the same thing (a stack limit, a split) stay two rows.
        bag = tuple((self.stack_id(key, stack), stack.count)
                    for key, stack in zip(stack_keys(character), character.bag, strict=True))
        worth = tuple(family_worth(self.game, state, character))
        pools = tuple(live_sheet(self.game, state, character))  # pools and tracks
        conditions = tuple(condition_labels(self.game, character))
        return _Character(bag, purse_line(self.game, character, state), worth, pools,
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


HitPoints = dict[int, dict[str, list[Any]]]  # message -> hero -> [now, most], while fighting
ENDS = {"end:victory": "victory", "end:defeat": "defeat"}


def _heroes_hp(game: Game, state: State) -> dict[str, list[Any]]:
    """Each hero's hit points now, as ``[now, most]`` (none for a ruleset without them)."""
    found: dict[str, list[Any]] = {}
    for character in state.characters:
        health = health_of(game, state, character)
        if health is not None:
            found[character.name] = [health.now, health.most]
    return found


def _strike_json(answer: Answer, message: int, player: str) -> dict[str, Any]:
    """One ``[attack:]`` of a round as the report shows it: its record's dice and numbers, or
    the refusal (``NO TIME``, ``downed``…) of one that did not happen."""
    record = answer.record
    out: dict[str, Any] = {"m": message, "x": answer.text[:EXCERPT]}
    if not answer.ok:
        attrs = answer.tag.attrs
        out.update({"who": attrs.get("who") or player, "target": attrs.get("target", ""),
                    "why": answer.reason})
        return out
    for short, key in (("who", "attacker"), ("target", "target"), ("weapon", "weapon"),
                       ("rolls", "rolls"), ("mod", "modifier"), ("total", "total"),
                       ("def", "defence"), ("result", "result"), ("dmg", "damage"),
                       ("dice", "damageRolls"), ("type", "damageType"), ("hp", "hp"),
                       ("hpMax", "hpMax"), ("slot", "slot"), ("events", "events")):
        if key in record:
            out[short] = record[key]
    return out


def _fights(result: ReplayResult, heroes: HitPoints, player: str,
            on: Encounter | None = None) -> list[dict[str, Any]]:
    """Every formula fight of the chat, from its answers' records (docs/design.md#combat-records):
    when it began and ended, and each round — the order with initiative, each attack's dice,
    modifier, total against defence, result and damage dice (in the round's order,
    ``record.slot``, where the records give it), and everyone's hit points after it. ``on``:
    the fight already on in the state the chat starts from (``start`` -1)."""
    fights: list[dict[str, Any]] = []
    fight: dict[str, Any] | None = None
    order: list[list[Any]] = []
    foes: dict[str, list[Any]] = {}  # each foe's [hp, hpMax], from the latest record
    if on is not None:
        fight = {"start": -1, "end": None, "outcome": None, "rounds": []}
        fights.append(fight)
        order = [[c.name, c.side, c.initiative] for c in on.combatants]
        foes = {c.name: [c.hp, c.hp_max] for c in on.combatants if c.side == "foes"}

    def close(message: int, outcome: str) -> None:
        nonlocal fight
        if fight is not None:
            fight.update({"end": message, "outcome": outcome})
        fight = None

    for item in result.answers:
        answer, message = item.answer, item.message
        kind, op = answer.tag.kind, answer.tag.attrs.get("op", "").casefold()
        if kind == "combat" and answer.ok and op in ("start", "join"):
            if fight is None:
                fight = {"start": message, "end": None, "outcome": None, "rounds": []}
                fights.append(fight)
                foes = {}
            order = [[c.get("name"), c.get("side"), c.get("initiative")]
                     for c in answer.record.get("order", []) if isinstance(c, dict)]
            for foe in answer.record.get("foes", []):
                if isinstance(foe, dict):
                    foes[str(foe.get("name"))] = [foe.get("hp"), foe.get("hpMax")]
        elif kind == "combat" and answer.ok and op == "end":
            close(message, str(answer.record.get("outcome", "")))
        elif kind == "attack" and fight is not None:
            rounds = fight["rounds"]
            if not rounds or rounds[-1]["m"] != message:
                rounds.append({"m": message, "round": None, "order": order, "attacks": []})
            this = rounds[-1]
            this["attacks"].append(_strike_json(answer, message, player))
            if answer.ok:
                this["round"] = answer.record.get("round")
                target = str(answer.record.get("target"))
                if target in foes:
                    foes[target] = [answer.record.get("hp"), answer.record.get("hpMax")]
            unknown = [None, None]
            this["hp"] = [[name, *(foes.get(str(name), unknown) if side == "foes" else
                                   heroes.get(message, {}).get(str(name), unknown))]
                          for name, side, _ in order]
            ended = next((ENDS[e] for e in answer.record.get("events", []) if e in ENDS), None)
            if ended is not None:
                close(message, ended)
    for fight in fights:
        fight["rounds"] = [r for r in fight["rounds"] if r["round"] is not None]
        for one in fight["rounds"]:
            # the round's order where the records give it; what did not happen, last
            one["attacks"].sort(key=lambda a: (a.get("slot") is None, a.get("slot") or 0))
    return fights


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
    heroes: HitPoints = {}
    fighting = state.encounter is not None

    def on_message(index: int, after: State) -> None:
        nonlocal fighting
        change = collector.delta(index, after)
        if change is not None:
            deltas[index] = change
        if fighting or after.encounter is not None:  # the message a fight ends at, too
            heroes[index] = _heroes_hp(game, after)
        fighting = after.encounter is not None

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
            typed = tagparse.scan(message.text).tags  # never counted (docs/design.md#tags)
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
                   "loot": _loot(game, result), "fights": _fights(result, heroes, state.player,
                                                     state.encounter)},
    }


def _script_json(document: Any) -> str:
    """JSON safe inside a ``<script>`` element: no ``<``, ``>`` or ``&`` can end or open one."""
    text = json.dumps(document, ensure_ascii=False, separators=(",", ":"))
    return text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")


def render_report(document: Mapping[str, Any]) -> str:
    """The report page: one HTML file with its style, script and data inline."""
    title = html.escape(str(document.get("title", "gmtags report")))
    return Template(asset("report.html")).substitute(
        csp=CSP, title=title, style=asset("report.css"), data=_script_json(document),
        script=asset("report.js"))


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
        f"<title>{html.escape(title)}</title>\n<style>\n{asset('regress.css')}</style>\n"
        f"</head>\n<body>\n<h1>{html.escape(title)}</h1>\n"
        f"<p class=\"summary\">{count} difference{'' if count == 1 else 's'}</p>\n{body}\n"
        "</body>\n</html>\n"
    )
