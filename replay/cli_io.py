"""What every ``gmtags`` command does the same way: exit codes, failing with one line on
standard error, loading a chat with its ruleset and party, and writing output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from engine import Game, PartyError, RulesetError, State

from .files import InputError, load_party, load_ruleset
from .formats import read_transcript
from .transcript import Transcript, TranscriptError

EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2

Command = TypeVar("Command", bound=Callable[..., Any])


def chat_arguments(command: Command) -> Command:
    """The ``CHAT --ruleset R [--party P]`` every command that replays a chat takes."""
    command = click.option("--party", "-p", type=click.Path(dir_okay=False),
                           help="A party file or an exported state (default: one character)."
                           )(command)
    command = click.option("--ruleset", "-r", required=True, type=click.Path(dir_okay=False),
                           help="The ruleset JSON file.")(command)
    return click.argument("chat", type=click.Path(dir_okay=False))(command)


def fail(message: str, code: int = EXIT_UNREADABLE) -> NoReturn:
    """Say what is wrong in one line on standard error and exit (2: unreadable input)."""
    click.echo(f"gmtags: {message}", err=True)
    sys.exit(code)


def load_chat(chat: str | Path, ruleset: str | Path,
              party: str | Path | None) -> tuple[Game, Transcript, State]:
    """The ruleset, the chat and its start state; unreadable input exits 2 saying why."""
    try:
        game = load_ruleset(ruleset)
        transcript = read_transcript(chat)
        state = load_party(game, party, transcript.player_name)
    except (InputError, TranscriptError) as error:
        fail(str(error))
    except (RulesetError, PartyError) as error:
        fail("cannot load:\n" + str(error))
    return game, transcript, state


def write_output(output: str, data: bytes) -> None:
    """Write ``data`` to a file, or to standard output for ``-``; a write error exits 2."""
    if output == "-":
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(output).write_bytes(data)
    except OSError as error:
        fail(f"{output}: {error.strerror or error}")
