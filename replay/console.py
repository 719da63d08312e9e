"""A replay as a person reads it on a terminal (``gmtags replay``, ``gmtags demo``): a header
naming the chat, ruleset and party; each reply that was answered, named by its message number
and line, with its prose shortened beside its answers; and the whole state after the chat.

The JSON (``--format json``) is the machine's form; this one is for reading, so it may change.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass

from rich.console import Console, Group, RenderableType
from rich.markup import escape
from rich.padding import Padding
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TextColumn,
    TimeRemainingColumn,
)
from rich.table import Table
from rich.text import Text

import tagparse
from engine import Answer, Game, State
from engine.actions.money import purse_line
from engine.rules.state import Character
from engine.text.prompt import live_sheet

from .cli_io import plural
from .fold import Diagnostic, MessageAnswer, ReplayResult
from .transcript import Message, Transcript, place

PROGRESS_FROM = 200  # messages; shorter replays finish before a bar would help
TAG_VALUE = 24  # characters of an attribute value shown in a compact tag
RAW_TAG = 40  # characters of a malformed tag's raw text shown
TAG_COLUMN = 40  # the tag column's width when tags and answers stand side by side
SIDE_BY_SIDE = 110  # terminals at least this wide show tag and answer side by side
SPACES = re.compile(r"\s+")


@dataclass(frozen=True)
class Names:
    """What the header names: the chat, the ruleset and the party files."""

    chat: str
    ruleset: str
    party: str | None


def console() -> Console:
    """Standard output as rich writes it: no colour guessing of numbers, lines wrapped."""
    return Console(highlight=False)


def compact_tag(answer: Answer) -> str:
    """A tag in few columns: ``inventory add item=Torch count=2 who=Ada`` (the action or op
    first without its name, quotes only around a value with spaces, long values cut); a
    malformed tag as its raw text, cut."""
    tag = answer.tag
    if answer.reason == "malformed" or (not tag.attrs and tag.raw):
        raw = SPACES.sub(" ", tag.raw)
        return raw if len(raw) <= RAW_TAG else raw[:RAW_TAG - 1] + "…"
    parts = [tag.kind]
    for key, value in tag.attrs.items():
        shown = value if len(value) <= TAG_VALUE else value[:TAG_VALUE - 1] + "…"
        if " " in shown or not shown or '"' in shown:
            shown = '"' + shown.replace('"', '\\"') + '"'
        parts.append(shown if key in ("action", "op") else f"{key}={shown}")
    return " ".join(parts)


def prose(message: Message) -> str:
    """A GM reply's text without its tags, on one line; an event's action."""
    if message.role == "event":
        event = message.event or {}
        what = " ".join(str(event[key]) for key in ("action", "item", "rest", "gear", "coin")
                        if isinstance(event.get(key), str | int))
        return f"{message.name or 'the player'}: {what}" if what else "a host event"
    text = message.text
    for tag in reversed(tagparse.scan(text).tags):
        text = text[:tag.start] + " " + text[tag.end:]
    return SPACES.sub(" ", text).strip()


def header(names: Names, game: Game, transcript: Transcript, state: State,
           result: ReplayResult | None = None) -> Text:
    """Which chat, with which ruleset and party; and, after a replay, how it went."""
    flat = transcript.messages()
    replies = sum(1 for _, _, m in flat if m.role == "gm" and not m.hidden)
    sessions = len(transcript.sessions)
    party = ", ".join(c.name + (" (player)" if c.name == state.player else "")
                      for c in state.characters)
    lines = [
        f"{names.chat}: {plural(len(flat), 'message')} in {plural(sessions, 'session')}, "
        f"{plural(replies, 'visible GM reply', 'visible GM replies')}",
        f"ruleset: {game.ruleset.label} ({names.ruleset})",
        f"party: {names.party or 'none given, so one character'}: {party}",
    ]
    if result is not None:
        refused = sum(1 for item in result.answers if not item.answer.ok)
        lines.append(f"{plural(len(result.answers), 'answer')}: {len(result.answers) - refused:,}"
                     f" ok, {refused:,} refused · {plural(len(result.diagnostics), 'diagnostic')}")
    return Text("\n".join(lines), style="bold")


def print_replay(out: Console, names: Names, game: Game, transcript: Transcript,
                 start: State, result: ReplayResult, only: str | None = None,
                 final: bool = False) -> None:
    """The whole text output of ``gmtags replay``: header, answers by reply, final state,
    warnings. ``only="refused"`` keeps only refused answers; ``final`` only the state."""
    out.print(header(names, game, transcript, start, result))
    flat = transcript.messages()
    diagnostics: dict[int | None, list[Diagnostic]] = {}
    for diagnostic in result.diagnostics:
        diagnostics.setdefault(diagnostic.message, []).append(diagnostic)
    if not final:
        for index, answers in _by_message(result.answers):
            shown = [a for a in answers if only != "refused" or not a.ok]
            if shown:
                out.print()
                out.print(_reply(flat[index][2], index, transcript, shown,
                                 diagnostics.pop(index, []), out.width))
    out.print()
    print_state(out, game, result.state)
    left = [d for items in diagnostics.values() for d in items]
    if left and not (final or only):
        out.print()
        out.print(Text("Diagnostics", style="bold yellow"))
        for diagnostic in left:
            line = flat[diagnostic.message][2].source_line \
                if diagnostic.message is not None else diagnostic.line
            where = place(diagnostic.message, line, transcript.format)
            out.print(Text(f"  {where}: {diagnostic.code}: {diagnostic.text}", style="yellow"))


def _by_message(answers: Sequence[MessageAnswer]) -> Iterator[tuple[int, list[Answer]]]:
    group: list[Answer] = []
    current = -1
    for item in answers:
        if item.message != current and group:
            yield current, group
            group = []
        current = item.message
        group.append(item.answer)
    if group:
        yield current, group


def _reply(message: Message, index: int, transcript: Transcript, answers: Sequence[Answer],
           diagnostics: Sequence[Diagnostic], width: int) -> RenderableType:
    """One answered reply: where it is, its prose on one line, then each answer — on a wide
    terminal its tag and answer side by side (columns of the same widths in every reply), on
    a narrow one the answer under its tag."""
    where = place(index, message.source_line, transcript.format)
    who = "event" if message.role == "event" else "GM"
    heading = Text(f"{where} · {who}: ", style="bold")
    heading.append(prose(message), style="italic")
    heading.no_wrap = True
    heading.overflow = "ellipsis"
    table = Table.grid(padding=(0, 1))
    table.add_column("status", no_wrap=True, width=len("refused"))
    beside = width >= SIDE_BY_SIDE
    if beside:
        table.add_column("tag", width=TAG_COLUMN, overflow="fold", style="cyan")
    table.add_column("answer", overflow="fold")
    for answer in answers:
        status = Text("ok", style="green") if answer.ok else Text("refused", style="red")
        tag = Text(compact_tag(answer), style="cyan")
        said = Text(answer.text if answer.ok else f"{answer.reason}: {answer.text}")
        if beside:
            table.add_row(status, tag, said)
        else:  # a narrow terminal: the tag on its line, the answer under it
            table.add_row(status, Text.assemble(tag, "\n", "→ ", said))
    parts: list[RenderableType] = [heading, Padding(table, (0, 0, 0, 2))]
    if diagnostics:
        codes = ", ".join(dict.fromkeys(d.code for d in diagnostics))
        parts.append(Text(f"  diagnostics: {codes}", style="yellow"))
    return Group(*parts)


def print_state(out: Console, game: Game, state: State) -> None:
    """The state after the chat: the place and day, then each character's pools, tracks,
    conditions, purse and bag."""
    place_now = state.place
    out.print(Text("After the chat", style="bold"))
    out.print(escape(f"Place: {place_now.name} ({place_now.size or 'no market'}), day "
                     f"{place_now.day}") if place_now else "Place: none")
    for character in state.characters:
        out.print()
        out.print(Text(_character_line(game, state, character)))
        bag = Table("stack", "count", "item", title=f"{character.name}'s bag",
                    title_justify="left")
        for stack in character.bag:
            marks = [m for m, on in (("equipped", stack.equipped), ("bound", stack.bound),
                                     ("on", stack.toggled)) if on]
            label = stack.name + (f" ({', '.join(marks)})" if marks else "")
            if stack.charges is not None:
                label += f", {plural(stack.charges, 'charge')}"
            bag.add_row(escape(label), f"{stack.count:,}", stack.item or stack.coin or "plain")
        if not character.bag:
            bag.add_row("(empty)", "", "")
        out.print(bag)
    if state.invented:
        out.print()
        out.print(escape("Items the GM invented: " + ", ".join(i.name for i in state.invented)))


def _character_line(game: Game, state: State, character: Character) -> str:
    """``Ada (player): Grit 10/10, Resolve 3/4 · conditions: Rattled · Coin worth 31
    pennies``."""
    labels = {c.id: c.label for c in game.ruleset.conditions}
    parts = [", ".join(live_sheet(game, state, character)) or "no pools or tracks",
             "conditions: " + (", ".join(labels.get(c, c) for c in character.conditions)
                               or "none"),
             purse_line(game, character, state)]
    who = character.name + (" (player)" if character.name == state.player else "")
    return f"{who}: " + " · ".join(parts)


class RateColumn(ProgressColumn):
    """Messages replayed per second."""

    def render(self, task: Task) -> Text:
        speed = task.finished_speed or task.speed
        return Text(f"{speed:,.0f} messages/s" if speed else "", style="progress.data.speed")


def progress_columns() -> tuple[ProgressColumn | str, ...]:
    """``replaying ━━━━━━╸━━━ 1,200/4,000 2,310 messages/s 0:00:02``."""
    return (TextColumn("replaying"), BarColumn(), MofNCompleteColumn(), RateColumn(),
            TimeRemainingColumn())


@contextmanager
def progress_bar(total: int, stream_is_terminal: bool
                 ) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on standard error for long replays — count, rate and time left — and
    nothing when standard error is not a terminal."""
    if total < PROGRESS_FROM or not stream_is_terminal:
        yield None
        return
    with Progress(*progress_columns(), console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("replay", total=total)
        yield lambda done, _total: bar.update(task, completed=done)
