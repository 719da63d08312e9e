"""The recording commands: ``record``, ``regress`` and ``export-state``.

``regress`` takes chat files and directories. A directory with an ``index.json`` lists its
chats and names each one's ruleset and party (paths relative to the index):
``{"chats": {"market.jsonl": {"ruleset": "../rulesets/harrow.json", "party": "..."}}}``;
``--ruleset``/``--party`` given on the command line apply to every chat instead. A directory
without an index holds chats: every ``*.jsonl`` and ``*.json`` file in it, in name order.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import click

from .cli_io import (
    EXIT_UNREADABLE,
    Chat,
    Loader,
    Unreadable,
    chat_arguments,
    chat_name,
    fail,
    plural,
    refuse_terminal,
    write_output,
)
from .files import InputError, read_json
from .fold import replay
from .record import record
from .regress import ChatReport, regress
from .report import render_regress_html
from .transcript import place

EXIT_DIFFERENCES = 1
INDEX = "index.json"
CHAT_SUFFIXES = (".jsonl", ".json")


def _index(directory: Path) -> list[Chat]:
    """The chats an index.json lists, with their ruleset and party."""
    index_path = directory / INDEX
    try:
        document = read_json(index_path)
    except InputError as error:
        raise Unreadable(str(error)) from None
    chats = document.get("chats") if isinstance(document, dict) else None
    if not isinstance(chats, dict):
        raise Unreadable(f'{index_path}: an index is {{"chats": {{"file": {{"ruleset": ...}}}}}}')
    found: list[Chat] = []
    for name, entry in sorted(chats.items()):
        ruleset = entry.get("ruleset") if isinstance(entry, dict) else None
        party = entry.get("party") if isinstance(entry, dict) else None
        if not isinstance(ruleset, str) or not (party is None or isinstance(party, str)):
            raise Unreadable(f"{index_path}: {name}: needs a ruleset path (and maybe a party)")
        found.append(Chat(directory / name, directory / ruleset,
                          directory / party if party else None))
    return found


def find_chats(paths: tuple[str, ...], ruleset: str | None, party: str | None) -> list[Chat]:
    """The chats named by files and directories, each with its ruleset and party."""
    found: list[Chat] = []
    for name in paths:
        path = Path(name)
        if path.is_dir():
            if (path / INDEX).is_file():
                listed = _index(path)
            else:
                listed = [Chat(file, Path(), None) for file in sorted(path.iterdir())
                          if file.is_file() and file.suffix in CHAT_SUFFIXES]
            if ruleset is not None:
                listed = [Chat(chat.path, Path(ruleset), Path(party) if party else None)
                          for chat in listed]
            elif not (path / INDEX).is_file():
                raise Unreadable(f"{path}: no {INDEX} here and no --ruleset given")
            found += listed
        elif ruleset is not None:
            found.append(Chat(path, Path(ruleset), Path(party) if party else None))
        else:
            found += _indexed(path)
    return found


def _indexed(path: Path) -> list[Chat]:
    """A single chat file, with the ruleset and party its directory's index names."""
    if not (path.parent / INDEX).is_file():
        raise Unreadable(f"{path}: no --ruleset given and no {INDEX} next to it")
    listed = [chat for chat in _index(path.parent) if chat.path.name == path.name]
    if not listed:
        raise Unreadable(f"{path}: not listed in {path.parent / INDEX}")
    return listed


@click.command(name="record", short_help="Write a chat back with every tag answered inline.")
@chat_arguments
@click.option("--output", "-o", default="-", show_default=True,
              help="The file to write the recorded chat to; - writes it to standard output "
                   "(a pipe or a file, never the terminal).")
def record_command(chat: str, ruleset: str, party: str | None, strict: bool,
                   output: str) -> None:
    """Answer every tag of CHAT and write the chat back, in its own format, answers inline.

    CHAT is a file, or - for standard input. Exit 0 when written, 2 when the chat, ruleset
    or party cannot be read.
    """
    refuse_terminal(output, "the recorded chat")
    try:
        game, source, state = Loader(strict).chat(
            Chat(Path(chat), Path(ruleset), Path(party) if party else None))
    except Unreadable as error:
        fail(str(error))
    recording = record(game, source, state)
    write_output(output, recording.data)
    click.echo(f"{chat_name(chat)}: {plural(recording.answered, 'tag')} answered in "
               f"{plural(recording.messages, 'message')}", err=True)


@click.command(name="regress", short_help="Diff recorded answers against today's engine.")
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.option("--ruleset", "-r", type=click.Path(dir_okay=False),
              help="The ruleset every chat is played with (default: the one each chat's "
                   "index.json names).")
@click.option("--party", "-p", type=click.Path(dir_okay=False),
              help="The party every chat starts from (with --ruleset; default: one "
                   "character).")
@click.option("--format", "fmt", type=click.Choice(["text", "json"]), default="text",
              show_default=True,
              help="text: one diff per changed answer and a summary line; json: one "
                   "document for scripts.")
@click.option("--update", is_flag=True,
              help="Re-record the chats whose answers differ or are written in an older form.")
@click.option("--strict", is_flag=True,
              help="Also count tags that have no recorded answer as differences.")
@click.option("--html", "html_out", type=click.Path(dir_okay=False),
              help="Also write the differences side by side as a self-contained HTML page.")
def regress_command(paths: tuple[str, ...], ruleset: str | None, party: str | None, fmt: str,
                    update: bool, strict: bool, html_out: str | None) -> None:
    """Replay recorded chats and diff their recorded answers against today's engine.

    Exit 0 when nothing differs (or --update re-recorded it), 1 when something does, 2 when
    a chat, ruleset, party or index cannot be read.
    """
    try:
        chats = find_chats(paths, ruleset, party)
    except Unreadable as error:
        fail(str(error))
    loader = Loader()
    reports: list[ChatReport] = []
    updated: list[str] = []
    for chat in chats:
        try:
            game, source, state = loader.chat(chat)
        except Unreadable as error:
            reports.append(ChatReport(str(chat.path), error=str(error)))
            continue
        report = regress(str(chat.path), game, source, state)
        reports.append(report)
        if update:  # an older recording (whole records inline) is re-recorded too
            data = record(game, source, state).data
            if data != chat.path.read_bytes():
                chat.path.write_bytes(data)
                updated.append(str(chat.path))
    if fmt == "json":
        click.echo(json.dumps(_summary_json(reports, updated, strict), ensure_ascii=False,
                              indent=2))
    else:
        _print_reports(reports, updated, strict)
    if html_out is not None:
        differences = [{"chat": r.chat, **d.to_json()} for r in reports for d in r.differences]
        Path(html_out).write_text(render_regress_html(differences), encoding="utf-8")
    if any(report.error for report in reports):
        sys.exit(EXIT_UNREADABLE)
    if not update and any(report.failed(strict) for report in reports):
        sys.exit(EXIT_DIFFERENCES)


def _summary_json(reports: list[ChatReport], updated: list[str], strict: bool) -> dict[str, Any]:
    return {
        "chats": [report.to_json() for report in reports],
        "answers": sum(report.answers for report in reports),
        "differences": sum(len(report.differences) for report in reports),
        "unanswered": sum(len(report.unanswered) for report in reports),
        "errors": sum(1 for report in reports if report.error),
        "strict": strict,
        "updated": updated,
    }


def _print_reports(reports: list[ChatReport], updated: list[str], strict: bool) -> None:
    for report in reports:
        if report.error:
            click.echo(f"{report.chat}: cannot read: {report.error}")
            continue
        for difference in report.differences:
            where = place(difference.message, difference.line, report.format)
            click.echo(f"{report.chat}: {where}: {difference.tag}")
            for change in difference.diff_lines():
                click.echo(f"    {change}")
        if strict:
            for missing in report.unanswered:
                where = place(missing.message, missing.line, report.format)
                click.echo(f"{report.chat}: {where}: unanswered: {missing.tag}")
    for path in updated:
        click.echo(f"{path}: re-recorded")
    summary = _summary_json(reports, updated, strict)
    click.echo(f"{plural(len(reports), 'chat')}, "
               f"{plural(summary['answers'], 'recorded answer')}: "
               f"{plural(summary['differences'], 'difference')}, {summary['unanswered']} "
               f"unanswered, {summary['errors']} unreadable")


@click.command(name="export-state", short_help="Save the state after a chat, for the next session.")
@chat_arguments
@click.option("--output", "-o", default="-", show_default=True,
              help="The file to write the state to (- for standard output).")
def export_state_command(chat: str, ruleset: str, party: str | None, strict: bool,
                         output: str) -> None:
    """Write the state at the end of CHAT as JSON, to give as --party to the next session.

    CHAT is a file, or - for standard input. Exit 0 when written, 2 when the chat, ruleset
    or party cannot be read.
    """
    try:
        game, source, state = Loader(strict).chat(
            Chat(Path(chat), Path(ruleset), Path(party) if party else None))
    except Unreadable as error:
        fail(str(error))
    final = replay(game, source.transcript, state).state
    text = json.dumps(final.to_json(), ensure_ascii=False, indent=2) + "\n"
    write_output(output, text.encode("utf-8"))
