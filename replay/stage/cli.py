"""``gmtags serve``: run the pipeline stage with uvicorn."""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path

import click

from ..cache import DEFAULT_CACHE_MB, DEFAULT_TTL, open_store
from .app import StageConfig, build_app, load_games
from .upstream import Redactor, Upstream

KEY_VARIABLE = "GMTAGS_KEY"


# A fold of a big request runs in a worker thread; the event loop gets the GIL back this often
# (seconds), so small requests on other chats are not kept waiting behind it (issue 22).
SWITCH_INTERVAL = 0.001


@click.command()
@click.option("--upstream", default=None, metavar="URL",
              help="The model server's OpenAI base URL, e.g. http://127.0.0.1:5001/v1 (a "
                   "query string and user:password are kept, and never logged).")
@click.option("--games", "games_dir", required=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A folder of game folders (ruleset.json, party.json, options.json).")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to listen on (loopback by default).")
@click.option("--port", default=8111, show_default=True, type=int, help="The port to listen on.")
@click.option("--redis", "redis_url", default=None, metavar="URL",
              help="Share snapshots through Redis (default: an in-process LRU).")
@click.option("--redis-ttl", default=DEFAULT_TTL, show_default=True, type=int,
              help="Seconds a Redis snapshot lives.")
@click.option("--cache-mb", default=DEFAULT_CACHE_MB, show_default=True,
              type=click.IntRange(1, 1 << 20),
              help="MiB the in-process snapshot LRU may hold (without --redis).")
@click.option("--max-body", default=8 * 1024 * 1024, show_default=True, type=int,
              help="Largest request body accepted, in bytes.")
@click.option("--timeout", default=300.0, show_default=True, type=float,
              help="Seconds the model server may stay silent: to connect, and between any two "
                   "pieces of its answer (not a limit on the whole reply: see --deadline).")
@click.option("--deadline", default=None, type=click.FloatRange(min=0, min_open=True),
              metavar="SECONDS",
              help="Seconds one reply may take in all, from the request to the model to its "
                   "last piece (default: no limit). Past it the client gets a 504, or an error "
                   "event when streaming.")
@click.option("--check", "check_only", is_flag=True,
              help="Only load every game folder, list what is wrong, and exit (0: all load, "
                   "1: some do not).")
def serve(upstream: str | None, games_dir: Path, host: str, port: int, redis_url: str | None,
          redis_ttl: int, cache_mb: int, max_body: int, timeout: float, deadline: float | None,
          check_only: bool) -> None:
    """Run the OpenAI-compatible stage: /games/<game>/v1/chat/completions and friends.

    Clients may be required to send a key: set it in the GMTAGS_KEY environment variable and
    have clients send it as their API key (Bearer) or in an X-Gmtags-Key header. A game folder
    that does not load is reported at start and answers 503; the other games are served.
    """
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    games = load_games(games_dir)
    for name, problems in games.broken.items():
        click.echo(f"gmtags: game {name!r} is disabled, its folder does not load:\n"
                   + "\n".join(f"  {line}" for line in problems.splitlines()), err=True)
    if check_only:
        for name in sorted(games.ready):
            click.echo(f"gmtags: game {name!r} loads", err=True)
        if not games.ready and not games.broken:
            click.echo(f"gmtags: no game folder with a ruleset.json under {games_dir}", err=True)
        sys.exit(1 if games.broken or not games.ready else 0)
    if not games.ready and not games.broken:
        click.echo(f"gmtags: no game folder with a ruleset.json under {games_dir}", err=True)
        sys.exit(2)
    if upstream is None:
        raise click.UsageError("--upstream is required (unless --check)")
    try:
        parsed = Upstream.parse(upstream)
    except ValueError as failure:
        raise click.BadParameter(str(failure), param_hint="--upstream") from None
    key = os.environ.get(KEY_VARIABLE) or None
    config = StageConfig(upstream=upstream, games=games,
                         store=open_store(redis_url, ttl=redis_ttl, cache_mb=cache_mb),
                         key=key, max_body=max_body, timeout=timeout, deadline=deadline)
    redactor = Redactor([*parsed.secrets, *([key] if key else [])])
    for handler in logging.getLogger().handlers:  # whatever logs, through these handlers
        handler.addFilter(redactor)
    sys.setswitchinterval(SWITCH_INTERVAL)
    served = ", ".join(sorted(games.ready)) or "no game"
    # Bound before the line below is written, so that "serving" is true when a client (or a
    # test, or a supervisor) reads it: a request sent then waits in the socket's queue.
    listening = _listen(host, port)
    click.echo(f"gmtags: serving {served} on http://{host}:{port} for {parsed.shown} "
               f"(snapshots: {'redis' if redis_url else f'in-process, {cache_mb} MiB'})",
               err=True)
    server = uvicorn.Server(uvicorn.Config(build_app(config), log_level="warning"))
    server.run(sockets=[listening])


def _listen(host: str, port: int) -> socket.socket:
    """A listening socket on ``host:port``; a port in use (or a host that is not this
    machine's) ends the command with a one-line message, exit 2."""
    try:
        family, kind, proto, _, address = socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)[0]
        listening = socket.socket(family, kind, proto)
        listening.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        listening.bind(address)
        listening.listen(2048)
    except OSError as failure:
        click.echo(f"gmtags: cannot listen on {host}:{port}: {failure.strerror or failure}",
                   err=True)
        sys.exit(2)
    return listening
