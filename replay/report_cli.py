"""``gmtags report``: a chat's replay as one self-contained HTML page."""

from __future__ import annotations

from pathlib import Path

import click

from .cli_io import chat_arguments, chat_name, load_chat, refuse_terminal, write_output
from .report import report_html


@click.command(name="report", short_help="Write a chat's replay as one HTML page.")
@chat_arguments
@click.option("--output", "-o", default="-", show_default=True,
              help="The HTML file to write; - writes it to standard output (a pipe or a "
                   "file, never the terminal).")
@click.option("--title", help="The page title (default: the chat's file name).")
def report_command(chat: str, ruleset: str, party: str | None, strict: bool, output: str,
                   title: str | None) -> None:
    """Write CHAT's replay as one HTML page: turns, answered tags, bags after each turn, charts.

    The page is a single file with no external assets; open it from disk in any browser.
    CHAT is a file, or - for standard input. Exit 0 when written, 2 when the chat, ruleset
    or party cannot be read.
    """
    refuse_terminal(output, "an HTML page")
    game, transcript, state = load_chat(chat, ruleset, party, strict)
    name = title or (Path(chat).name if chat != "-" else "chat")
    data = report_html(game, transcript, state, name).encode("utf-8")
    write_output(output, data)
    if output == "-":
        return
    click.echo(f"{chat_name(chat)}: report written to {output} ({len(data):,} bytes)",
               err=True)
