"""``gmtags report``: a chat's replay as one self-contained HTML page (issue #16)."""

from __future__ import annotations

from pathlib import Path

import click

from .cli_io import chat_arguments, load_chat, write_output
from .report import report_html


@click.command(name="report")
@chat_arguments
@click.option("--output", "-o", default="-", show_default=True,
              help="Where to write the HTML page (- for standard output).")
@click.option("--title", help="The page title (default: the chat's file name).")
def report_command(chat: str, ruleset: str, party: str | None, output: str,
                   title: str | None) -> None:
    """Write CHAT's replay as one HTML page: turns, answered tags, bags after each turn, charts.

    The page is a single file with no external assets; open it from disk in any browser.
    Exit 0 when written, 2 when the chat, ruleset or party cannot be read.
    """
    game, transcript, state = load_chat(chat, ruleset, party)
    data = report_html(game, transcript, state, title or Path(chat).name).encode("utf-8")
    write_output(output, data)
    if output == "-":
        return
    click.echo(f"{chat}: report written to {output} ({len(data):,} bytes)", err=True)
