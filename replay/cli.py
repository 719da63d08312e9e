"""The ``gmtags`` command line: check, parse, replay, schema, demo."""

from __future__ import annotations

import gc
import json
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import click
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.table import Table

import tagparse
from engine import Game, RulesetError
from engine.prompt import gm_context
from engine.ruleset import Ruleset

from .cli_io import EXIT_PROBLEMS, chat_arguments, fail, load_chat
from .files import InputError, bundled, load_ruleset
from .fold import ReplayResult, replay

PROGRESS_FROM = 200  # messages; shorter replays finish before a bar would help

DEMO_CHAT = "chats/demo.jsonl"
DEMO_RULESET = "rulesets/harrow.json"
DEMO_PARTY = "parties/harrow.json"


def _out() -> Console:
    return Console(soft_wrap=True, highlight=False)


def _emit_json(document: Any) -> None:
    click.echo(json.dumps(document, ensure_ascii=False, indent=2))


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="gmtags")
@click.pass_context
def main(context: click.Context) -> None:
    """Turn the bracket tags an LLM game master writes into game mechanics."""
    collect_cycles_for(context.invoked_subcommand)


# A replay builds many small values that live to its end (every answer, every state), and the
# cycle collector walks them again at each collection: a sixth of a long replay's time
# (benchmarks/replay.py), for nothing, since the fold makes no reference cycles
# (tests/replay/test_no_cycles.py keeps it so). A command that folds chats and exits runs
# with the collector paused; what a cycle elsewhere leaves (the few that loading a ruleset
# makes) lasts until the process ends. The long-running server makes cycles (asyncio, HTTP)
# and keeps collecting, less often than CPython's default. The library leaves its host's
# collector alone.
SERVER_GC_THRESHOLD = (50_000, 20, 20)
SERVER_COMMANDS = frozenset({"serve"})


def collect_cycles_for(command: str | None) -> None:
    """Set this process's cycle collector for the ``gmtags`` command about to run."""
    if command in SERVER_COMMANDS:
        gc.set_threshold(*SERVER_GC_THRESHOLD)
    else:
        gc.disable()


@main.command()
@click.argument("ruleset", type=click.Path(dir_okay=False))
def check(ruleset: str) -> None:
    """Validate RULESET; list every problem as `JSON-pointer: message` (exit 1)."""
    try:
        game = load_ruleset(ruleset)
    except InputError as error:
        fail(str(error))
    except RulesetError as error:
        for problem in error.problems:
            click.echo(str(problem))
        click.echo(f"{ruleset}: {len(error.problems)} problem(s)", err=True)
        sys.exit(EXIT_PROBLEMS)
    click.echo(f"{ruleset}: valid — {_summary(game)}")


def _summary(game: Game) -> str:
    coins = len(game.coins)
    families = len(game.ruleset.items.currencies) if game.ruleset.items else 0
    return (f"{game.ruleset.label}: {len(game.items)} items in "
            f"{sum(1 for c in game.ruleset.catalogs if c.holds == 'items')} catalog(s), "
            f"{coins} coin(s) in {families} famil{'y' if families == 1 else 'ies'}")


@main.command()
@click.argument("source", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def parse(source: Any, fmt: str) -> None:
    """List the tags and diagnostics in a text FILE (or - for standard input)."""
    result = tagparse.scan(source.read())
    if fmt == "json":
        _emit_json({"tags": [t.to_json() for t in result.tags],
                    "diagnostics": [d.to_json() for d in result.diagnostics]})
        return
    console = _out()
    table = Table("span", "kind", "attributes", "answer", "problem")
    for tag in result.tags:
        table.add_row(f"{tag.start}-{tag.end}", tag.kind,
                      escape(" ".join(f'{k}="{v}"' for k, v in tag.attrs)),
                      escape(" ".join(f'{k}="{v}"' for k, v in tag.answer or ())),
                      escape(tag.malformed or ""))
    console.print(table)
    for diagnostic in result.diagnostics:
        console.print(escape(f"{diagnostic.start}-{diagnostic.end} {diagnostic.code}: "
                             f"{diagnostic.message}"))


@contextmanager
def _progress(total: int) -> Iterator[Callable[[int, int], None] | None]:
    """A progress bar on a terminal for long replays; nothing when stderr is piped."""
    if total < PROGRESS_FROM or not sys.stderr.isatty():
        yield None
        return
    columns = (TextColumn("replaying"), BarColumn(), MofNCompleteColumn())
    with Progress(*columns, console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task("replay", total=total)
        yield lambda done, _total: bar.update(task, completed=done)


def run_replay(chat: str | Path, ruleset: str | Path, party: str | Path | None) -> ReplayResult:
    """Read everything, replay; unreadable input exits 2 with one line saying why."""
    return _replayed(chat, ruleset, party)[1]


def _replayed(chat: str | Path, ruleset: str | Path,
              party: str | Path | None) -> tuple[Game, ReplayResult]:
    game, transcript, state = load_chat(chat, ruleset, party)
    with _progress(sum(len(s.messages) for s in transcript.sessions)) as progress:
        return game, replay(game, transcript, state, progress)


def _print_text(result: ReplayResult) -> None:
    console = _out()
    table = Table("msg", "tag", "ok", "answer", title="Answers")
    for item in result.answers:
        answer = item.answer
        attrs = " ".join(f'{k}="{v}"' for k, v in answer.tag.attrs.items())
        status = "ok" if answer.ok else f"refused: {answer.reason}"
        table.add_row(str(item.message), escape(f"[{answer.tag.kind}: {attrs}]"), status,
                      escape(answer.text), style=None if answer.ok else "red")
    console.print(table)
    for character in result.state.characters:
        bag = Table("stack", "count", "item", title=f"{character.name}'s bag")
        for stack in character.bag:
            marks = " (equipped)" if stack.equipped else ""
            bag.add_row(escape(stack.name + marks), str(stack.count),
                        stack.item or stack.coin or "plain")
        if not character.bag:
            bag.add_row("(empty)", "", "")
        console.print(bag)
    place = result.state.place
    console.print(escape(f"Place: {place.name} ({place.size or 'no market'}), day {place.day}")
                  if place else "Place: none")
    for diagnostic in result.diagnostics:
        where = f"message {diagnostic.message}" if diagnostic.message is not None else (
            f"line {diagnostic.line}" if diagnostic.line is not None else "input")
        console.print(escape(f"{where}: {diagnostic.code}: {diagnostic.text}"), style="yellow")


@main.command(name="replay")
@chat_arguments
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def replay_command(chat: str, ruleset: str, party: str | None, fmt: str) -> None:
    """Replay a recorded CHAT (gmtags JSONL, SillyTavern .jsonl or OpenAI messages JSON)."""
    result = run_replay(chat, ruleset, party)
    if fmt == "json":
        _emit_json(result.to_json())
    else:
        _print_text(result)


@main.command(name="prompt")
@chat_arguments
def prompt_command(chat: str, ruleset: str, party: str | None) -> None:
    """Print what the GM would be shown next after CHAT: instructions, INVENTORY, MARKET and
    the last answers — the truth included (the source's "Peek Prompt", ITM-FAKE-21)."""
    game, result = _replayed(chat, ruleset, party)
    last = max((item.message for item in result.answers), default=None)
    answers = [item.answer for item in result.answers if item.message == last]
    click.echo(gm_context(game, result.state, answers))


@main.command()
def schema() -> None:
    """Print the JSON Schema of the ruleset format (for editors' autocompletion)."""
    _emit_json(ruleset_schema())


def ruleset_schema() -> dict[str, Any]:
    document = Ruleset.model_json_schema(by_alias=True, mode="validation")
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["$id"] = "https://gmtags.invalid/schema/ruleset.json"
    return document


@main.command()
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True)
def demo(fmt: str) -> None:
    """Replay the bundled demo chat (Harrow Vale) and print its answers and final bags."""
    result = run_replay(bundled(DEMO_CHAT), bundled(DEMO_RULESET), bundled(DEMO_PARTY))
    if fmt == "json":
        _emit_json(result.to_json())
    else:
        _print_text(result)


from .recording_cli import export_state_command, record_command, regress_command  # noqa: E402

main.add_command(record_command)
main.add_command(regress_command)
main.add_command(export_state_command)

from .stage.cli import serve  # noqa: E402

main.add_command(serve)

from .report_cli import report_command  # noqa: E402

main.add_command(report_command)
