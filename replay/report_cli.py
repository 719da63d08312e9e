"""``gmtags report``: a chat's replay as one self-contained HTML page (issue #16)."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from engine import PartyError, RulesetError

from .files import InputError, load_party, load_ruleset
from .formats import read_transcript
from .report import report_html
from .transcript import TranscriptError

EXIT_UNREADABLE = 2


def _fail(message: str) -> None:
    click.echo(f"gmtags: {message}", err=True)
    sys.exit(EXIT_UNREADABLE)


@click.command(name="report")
@click.argument("chat", type=click.Path(dir_okay=False))
@click.option("--ruleset", "-r", required=True, type=click.Path(dir_okay=False),
              help="The ruleset JSON file.")
@click.option("--party", "-p", type=click.Path(dir_okay=False),
              help="A party file or an exported state (default: one character).")
@click.option("--output", "-o", default="-", show_default=True,
              help="Where to write the HTML page (- for standard output).")
@click.option("--title", help="The page title (default: the chat's file name).")
def report_command(chat: str, ruleset: str, party: str | None, output: str,
                   title: str | None) -> None:
    """Write CHAT's replay as one HTML page: turns, answered tags, bags after each turn, charts.

    The page is a single file with no external assets; open it from disk in any browser.
    Exit 0 when written, 2 when the chat, ruleset or party cannot be read.
    """
    try:
        game = load_ruleset(ruleset)
        transcript = read_transcript(chat)
        state = load_party(game, party, transcript.player_name)
    except (InputError, TranscriptError) as error:
        _fail(str(error))
        return
    except (RulesetError, PartyError) as error:
        _fail("cannot load:\n" + str(error))
        return
    page = report_html(game, transcript, state, title or Path(chat).name)
    data = page.encode("utf-8")
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(output).write_bytes(data)
    except OSError as error:
        _fail(f"{output}: {error.strerror or error}")
        return
    click.echo(f"{chat}: report written to {output} ({len(data):,} bytes)", err=True)
