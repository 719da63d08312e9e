"""What every ``gmtags`` command does the same way: exit codes, failing with one line on
standard error, loading a chat (a file or ``-`` for standard input) with its ruleset and
party, naming the file a problem is in, and writing output."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click

from engine import Game, PartyError, RulesetError, State

from .files import InputError, load_party, load_ruleset
from .formats import parse_transcript
from .record import Source, read_source
from .transcript import (
    BAD_JSON,
    BAD_MESSAGE,
    TRAILING_DATA,
    UNKNOWN_ROLE,
    Transcript,
    TranscriptError,
    place,
)

EXIT_OK, EXIT_PROBLEMS, EXIT_UNREADABLE = 0, 1, 2
STDIN = "-"
STDIN_NAME = "<stdin>"
# Reader diagnostics that mean a line (or the text after a document) was skipped unread;
# the others are repairs of a message that was kept.
SKIPPED = frozenset({BAD_JSON, BAD_MESSAGE, UNKNOWN_ROLE, TRAILING_DATA})

Command = TypeVar("Command", bound=Callable[..., Any])


class Unreadable(Exception):
    """A chat, ruleset, party or index that cannot be read or does not fit: exit 2."""


def chat_arguments(command: Command) -> Command:
    """The ``CHAT --ruleset R [--party P] [--strict]`` every command that replays a chat
    takes."""
    command = click.option(
        "--strict", is_flag=True,
        help="Stop with exit 2 when any line of the chat cannot be read (by default such a "
             "line is skipped with a warning, and only a chat with no readable message at "
             "all stops).")(command)
    command = click.option(
        "--party", "-p", type=click.Path(dir_okay=False),
        help="The party file (characters, bags, seed), or a state saved by export-state to "
             "go on from. Without it the game has one character, named after the chat's "
             'player (else "Player"), with nothing in the bag.')(command)
    command = click.option("--ruleset", "-r", required=True, type=click.Path(dir_okay=False),
                           help="The ruleset JSON file the game is played with.")(command)
    return click.argument("chat", type=click.Path(dir_okay=False, allow_dash=True))(command)


def plural(count: int, word: str, many: str | None = None) -> str:
    """``1 tag``, ``3 tags``, ``2 families`` (``many`` for a plural that is not word + s)."""
    return f"{count:,} {word if count == 1 else many or word + 's'}"


def fail(message: str, code: int = EXIT_UNREADABLE) -> NoReturn:
    """Say what is wrong on standard error and exit (2: unreadable input)."""
    click.echo(f"gmtags: {message}", err=True)
    sys.exit(code)


def problems_text(name: str, what: str, error: RulesetError) -> str:
    """``party.json: does not fit the ruleset (2 problems):`` and one indented line each."""
    count = len(error.problems)
    lines = [f"{name}: {what} ({count} problem{'' if count == 1 else 's'}):"]
    lines += [f"  {problem}" for problem in error.problems]
    return "\n".join(lines)


def chat_name(chat: str | Path) -> str:
    """How a chat is named in messages: its path, or ``<stdin>`` for ``-``."""
    return STDIN_NAME if str(chat) == STDIN else str(chat)


def read_chat_bytes(chat: str | Path) -> bytes:
    """The chat's bytes: the file's, or standard input's for ``-``."""
    if str(chat) == STDIN:
        return sys.stdin.buffer.read()
    try:
        return Path(chat).read_bytes()
    except OSError as error:
        raise Unreadable(f"{chat}: {error.strerror or error}") from None


def check_readable(transcript: Transcript, name: str, strict: bool) -> None:
    """A chat whose lines were all skipped unread (a JSON ``[1, 2, 3]``, roles that are all
    unknown), or under ``strict`` one with any line skipped, is :class:`Unreadable`; an empty
    file, or a chat that is only a header, is an empty chat."""
    skipped = [d for d in transcript.diagnostics if d.code in SKIPPED]
    if not skipped:
        return
    unit = "entry" if transcript.format == "openai" else "line"
    count = plural(len(skipped), unit, "entries" if unit == "entry" else None)
    shown = [f"  {place(None, d.line, transcript.format)}: {d.message}" for d in skipped[:5]]
    if len(skipped) > len(shown):
        shown.append(f"  … and {len(skipped) - len(shown)} more")
    if transcript.sessions and not strict:
        # Read on, but say so where it is seen even when the output goes to a file.
        click.echo("\n".join([f"gmtags: {name}: {count} could not be read and "
                              f"{'was' if len(skipped) == 1 else 'were'} skipped (--strict "
                              "stops instead):", *shown]), err=True)
        return
    reason = (f"{count} could not be read (--strict)" if transcript.sessions
              else f"no message could be read ({count} skipped)")
    raise Unreadable("\n".join([f"{name}: {reason}:", *shown]))


@dataclass(frozen=True)
class Chat:
    """A chat file (or ``-``) and the ruleset and party it is played with."""

    path: Path
    ruleset: Path
    party: Path | None


class Loader:
    """Reads rulesets once per path, and chats with their start states; every problem is an
    :class:`Unreadable` that names the file it is in."""

    def __init__(self, strict: bool = False) -> None:
        self.strict = strict
        self.games: dict[Path, Game] = {}

    def game(self, path: Path) -> Game:
        if path not in self.games:
            try:
                self.games[path] = load_ruleset(path)
            except InputError as error:
                raise Unreadable(str(error)) from None
            except RulesetError as error:
                raise Unreadable(problems_text(str(path), "not a valid ruleset", error)) from None
        return self.games[path]

    def state(self, game: Game, party: Path | None, player: str | None) -> State:
        """The start state from a party file or an exported state, checked against the
        ruleset."""
        try:
            return load_party(game, party, player)
        except InputError as error:
            raise Unreadable(str(error)) from None
        except PartyError as error:
            raise Unreadable(problems_text(str(party), "does not fit the ruleset", error)) \
                from None

    def transcript(self, chat: Path) -> Transcript:
        name = chat_name(chat)
        try:
            transcript = parse_transcript(read_chat_bytes(chat), name=name)
        except TranscriptError as error:
            raise Unreadable(str(error)) from None
        check_readable(transcript, name, self.strict)
        return transcript

    def source(self, chat: Path) -> Source:
        """The chat read for writing back (``record``, ``regress --update``)."""
        name = chat_name(chat)
        try:
            source = read_source(read_chat_bytes(chat), name)
        except TranscriptError as error:
            raise Unreadable(str(error)) from None
        check_readable(source.transcript, name, self.strict)
        return source

    def chat(self, chat: Chat) -> tuple[Game, Source, State]:
        game = self.game(chat.ruleset)
        source = self.source(chat.path)
        return game, source, self.state(game, chat.party, source.transcript.player_name)


def load_chat(chat: str | Path, ruleset: str | Path, party: str | Path | None,
              strict: bool = False) -> tuple[Game, Transcript, State]:
    """The ruleset, the chat and its start state; unreadable input exits 2 saying why."""
    loader = Loader(strict)
    try:
        game = loader.game(Path(ruleset))
        transcript = loader.transcript(Path(chat))
        state = loader.state(game, Path(party) if party else None, transcript.player_name)
    except Unreadable as error:
        fail(str(error))
    return game, transcript, state


def refuse_terminal(output: str, what: str) -> None:
    """``report`` and ``record`` write a file: to a terminal that is only noise, so without
    ``-o`` (or with ``-o -``) on a terminal they stop before any work and say so."""
    if output == STDIN and sys.stdout.isatty():
        fail(f"not writing {what} to the terminal: give -o FILE (or pipe it: ... | less)")


def write_output(output: str, data: bytes) -> None:
    """Write ``data`` to a file, or to standard output for ``-``; a write error exits 2."""
    if output == STDIN:
        sys.stdout.buffer.write(data)
        sys.stdout.flush()
        return
    try:
        Path(output).write_bytes(data)
    except OSError as error:
        fail(f"{output}: {error.strerror or error}")
