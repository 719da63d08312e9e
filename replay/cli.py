"""The ``gmtags`` command line: check, parse, replay, prompt, schema, demo (the recording
commands are in ``recording_cli``, ``report`` in ``report_cli``, ``serve`` in ``stage``)."""

from __future__ import annotations

import gc
import json
import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

import tagparse
from engine import Game
from engine.ruleset import Ruleset
from engine.text.prompt import gm_context
from engine.text.reference import request_schema, tag_reference

from .cli_io import EXIT_PROBLEMS, Loader, Unreadable, chat_arguments, fail, load_chat, plural
from .console import Names, console, print_replay, progress_bar
from .files import InputError, bundled, read_json
from .fold import ReplayResult, replay
from .transcript import Transcript

DEMO_CHAT = "chats/demo.jsonl"
DEMO_RULESET = "rulesets/harrow.json"
DEMO_PARTY = "parties/harrow.json"
FORMAT_HELP = "text: for reading on a terminal; json: one JSON document for scripts."


def _emit_json(document: Any) -> None:
    click.echo(json.dumps(document, ensure_ascii=False, indent=2))


@click.group(context_settings={"help_option_names": ["-h", "--help"],
                              "max_content_width": 100})
@click.version_option(package_name="gmtags")
@click.pass_context
def main(context: click.Context) -> None:
    """Turn the bracket tags an LLM game master writes into game mechanics."""
    collect_cycles_for(context.invoked_subcommand)


# A replay builds many small values that live to its end (every answer, every state), and the
# cycle collector walks them again at each collection: a sixth of a long replay's time
# (benchmarks/replay.py), for nothing, since the fold makes no reference cycles
# (tests/replay/test_no_reference_cycles.py keeps it so). A command that folds chats and exits runs
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


@main.command(short_help="Validate a ruleset (and a party against it).")
@click.argument("ruleset", type=click.Path(dir_okay=False))
@click.option("--party", "-p", type=click.Path(dir_okay=False),
              help="Also check this party file (or a state saved by export-state) against "
                   "the ruleset.")
def check(ruleset: str, party: str | None) -> None:
    """Validate RULESET, and with --party also a party file against it.

    Prints a summary and exits 0 when all is well; else lists every problem as
    `JSON-pointer: message` (a problem in another file, such as the party or a catalogFiles
    file, as `file#/pointer: message`) and exits 1. Exit 2 when a file cannot be read.
    """
    loader = Loader()
    try:
        game = loader.game(Path(ruleset))
    except Unreadable as error:
        if _looks_like_a_party(Path(ruleset)):
            click.echo(f"{ruleset}: this looks like a party file, not a ruleset: check it "
                       f"with gmtags check RULESET --party {ruleset}", err=True)
        _problems_or_fail(error, ruleset, 0)
    click.echo(f"{ruleset}: valid — {_summary(game)}")
    if party is None:
        return
    try:
        state = loader.state(game, Path(party), None)
    except Unreadable as error:
        _problems_or_fail(error, party, 1)
    names = ", ".join(c.name for c in state.characters)
    click.echo(f"{party}: fits the ruleset — {plural(len(state.characters), 'character')} "
               f"({names}), player {state.player}")


def _looks_like_a_party(path: Path) -> bool:
    """A party file or exported state (it has ``characters`` and ``seed``) given as RULESET."""
    try:
        document = read_json(path)
    except InputError:
        return False
    return isinstance(document, dict) and document.keys() >= PARTY_KEYS


def _problems_or_fail(error: Unreadable, name: str, depth: int) -> None:
    """A file with problems: each on its own line (``party.json#/pointer: ...`` for a file
    other than the ruleset), a count on standard error, exit 1; an unreadable file: exit 2."""
    problems = getattr(error.__context__, "problems", None)
    if problems is None:
        fail(str(error))
    for problem in problems:
        click.echo(f"{name}#{problem}" if depth else str(problem))
    click.echo(f"{name}: {plural(len(problems), 'problem')}", err=True)
    sys.exit(EXIT_PROBLEMS)


def _summary(game: Game) -> str:
    families = len(game.ruleset.items.currencies) if game.ruleset.items else 0
    catalogs = sum(1 for c in game.ruleset.catalogs if c.holds == "items")
    return (f"{game.ruleset.label}: {plural(len(game.items), 'item')} in "
            f"{plural(catalogs, 'catalog')}, {plural(len(game.coins), 'coin')} in "
            f"{plural(families, 'family', 'families')}")


@main.command(short_help="List the tags and diagnostics in a text.")
@click.argument("source", type=click.File("r", encoding="utf-8", errors="replace"))
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help=FORMAT_HELP)
def parse(source: Any, fmt: str) -> None:
    """List the tags and diagnostics in a text FILE (or - for standard input).

    Places are `line:column` of the text (1-based); the JSON gives character offsets.
    """
    text = source.read()
    result = tagparse.scan(text)
    if fmt == "json":
        _emit_json({"tags": [t.to_json() for t in result.tags],
                    "diagnostics": [d.to_json() for d in result.diagnostics]})
        return
    out = console()
    table = Table("at", "kind", "attributes", "answer", "problem")
    for tag in result.tags:
        table.add_row(_line_column(text, tag.start), tag.kind,
                      escape(" ".join(f'{k}="{v}"' for k, v in tag.attrs)),
                      escape(" ".join(f'{k}="{v}"' for k, v in tag.answer or ())),
                      escape(tag.malformed or ""))
    out.print(table)
    for diagnostic in result.diagnostics:
        out.print(escape(f"{_line_column(text, diagnostic.start)} {diagnostic.code}: "
                         f"{diagnostic.message}"))


def _line_column(text: str, offset: int) -> str:
    """``3:14``: the 1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    return f"{line}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def run_replay(chat: str | Path, ruleset: str | Path, party: str | Path | None,
               strict: bool = False) -> ReplayResult:
    """Read everything, replay; unreadable input exits 2 saying why."""
    return _replayed(chat, ruleset, party, strict)[2]


def _replayed(chat: str | Path, ruleset: str | Path, party: str | Path | None,
              strict: bool) -> tuple[Game, Transcript, ReplayResult, Any]:
    game, transcript, state = load_chat(chat, ruleset, party, strict)
    total = sum(len(s.messages) for s in transcript.sessions)
    with progress_bar(total, sys.stderr.isatty()) as progress:
        return game, transcript, replay(game, transcript, state, progress), state


def _show(chat: str | Path, ruleset: str | Path, party: str | Path | None, strict: bool,
          fmt: str, only: str | None, final: bool, names: Names) -> None:
    game, transcript, result, start = _replayed(chat, ruleset, party, strict)
    if fmt == "json":
        _emit_json(result.to_json())
    else:
        print_replay(console(), names, game, transcript, start, result, only, final)


ONLY_HELP = ("Show only the answers that were refused (and the final state); text output "
             "only, the JSON always has every answer.")
FINAL_HELP = ("Show only the header and the state after the chat, not each answer; text "
              "output only.")
PARTY_KEYS = frozenset({"characters", "seed"})


@main.command(name="replay", short_help="Replay a chat: every answer and the final state.")
@chat_arguments
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help=FORMAT_HELP)
@click.option("--only", type=click.Choice(["refused"]), help=ONLY_HELP)
@click.option("--final", is_flag=True, help=FINAL_HELP)
def replay_command(chat: str, ruleset: str, party: str | None, strict: bool, fmt: str,
                   only: str | None, final: bool) -> None:
    """Replay a recorded CHAT and print every answer and the state after it.

    CHAT is gmtags JSONL, a SillyTavern .jsonl or an OpenAI messages JSON file, or - for
    standard input. Exit 0 when the replay ran (even with refused tags), 2 when the chat,
    ruleset or party cannot be read.
    """
    names = Names(_chat_label(chat), ruleset, party)
    _show(chat, ruleset, party, strict, fmt, only, final, names)


def _chat_label(chat: str) -> str:
    return "<stdin>" if chat == "-" else chat


@main.command(name="prompt", short_help="Show what the GM would be told next.")
@chat_arguments
def prompt_command(chat: str, ruleset: str, party: str | None, strict: bool) -> None:
    """Print what the game-master model would be shown with its next reply after CHAT.

    That is the instructions for writing tags, the INVENTORY, SHEET and MARKET blocks, the
    COMBAT block while a fight is on (the order, hit points, defences and how to fight) and
    the answers to the last reply, exactly as `gmtags serve` adds them to the prompt. It shows
    the GM's whole view, secrets included (which market wares are fakes, for instance), so
    it is for checking a game, not for the player's eyes.
    """
    game, _, result, _ = _replayed(chat, ruleset, party, strict)
    last = max((item.message for item in result.answers), default=None)
    answers = [item.answer for item in result.answers if item.message == last]
    click.echo(gm_context(game, result.state, answers))


@main.command(short_help="Print the JSON Schema of rulesets or of tag requests.")
@click.option("--requests", is_flag=True,
              help="The JSON Schema of every tag action and host event request instead.")
@click.option("--tags-doc", is_flag=True,
              help="The tag reference in Markdown (docs/tags.md) instead.")
def schema(requests: bool, tags_doc: bool) -> None:
    """Print the JSON Schema of the ruleset format (for editors' autocompletion); with
    --requests, that of the requests each tag and host event makes; with --tags-doc, the tag
    reference docs/tags.md is written from."""
    if requests and tags_doc:
        raise click.UsageError("--requests and --tags-doc print different things: pick one.")
    if tags_doc:
        click.echo(tag_reference(), nl=False)
    else:
        _emit_json(request_schema() if requests else ruleset_schema())


def ruleset_schema() -> dict[str, Any]:
    document = Ruleset.model_json_schema(by_alias=True, mode="validation")
    document["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    document["$id"] = "https://gmtags.invalid/schema/ruleset.json"
    return document


@main.command(short_help="Replay the bundled demo chat (Harrow Vale).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True, help=FORMAT_HELP)
@click.option("--only", type=click.Choice(["refused"]), help=ONLY_HELP)
@click.option("--final", is_flag=True, help=FINAL_HELP)
def demo(fmt: str, only: str | None, final: bool) -> None:
    """Replay the bundled demo chat (Harrow Vale) and print its answers and final bags."""
    names = Names(f"demo ({DEMO_CHAT})", DEMO_RULESET, DEMO_PARTY)
    _show(bundled(DEMO_CHAT), bundled(DEMO_RULESET), bundled(DEMO_PARTY), False, fmt, only,
          final, names)


from .recording_cli import export_state_command, record_command, regress_command  # noqa: E402

main.add_command(record_command)
main.add_command(regress_command)
main.add_command(export_state_command)

from .stage.cli import serve  # noqa: E402

# The listing's one line for serve (its own help starts with a sentence too long for it).
serve.short_help = "Run the pipeline stage: an OpenAI-compatible proxy."
main.add_command(serve)

from .report_cli import report_command  # noqa: E402

main.add_command(report_command)

from .sillytavern_cli import sillytavern  # noqa: E402

main.add_command(sillytavern)
