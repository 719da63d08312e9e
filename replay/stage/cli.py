"""``gmtags serve``: run the pipeline stage with uvicorn, in one process or ``--workers N``."""

from __future__ import annotations

import logging
import os
import socket
import sys
from pathlib import Path

import click

from ..cache import DEFAULT_CACHE_MB, DEFAULT_NEAR_MB, DEFAULT_TTL
from .app import load_games
from .cors import DEFAULT_ORIGINS
from .upstream import Upstream
from .workers import StageSettings

KEY_VARIABLE = "GMTAGS_KEY"


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
@click.option("--workers", default=1, show_default=True, type=click.IntRange(1, 256),
              help="Worker processes answering on the one port (needs --redis: they share "
                   "their snapshots through it). A worker that dies is started again.")
@click.option("--redis", "redis_url", default=None, metavar="URL",
              help="Share snapshots through Redis (default: an in-process LRU): "
                   "redis://host:port/db, rediss://..., unix://..., a Redis Cluster as "
                   "redis+cluster://host:port[,host:port...], or the master Sentinels name as "
                   "redis+sentinel://host:port[,host:port...]/service[/db].")
@click.option("--redis-ttl", default=DEFAULT_TTL, show_default=True, type=int,
              help="Seconds a Redis snapshot lives.")
@click.option("--cache-mb", default=None, type=click.IntRange(1, 1 << 20),
              help=f"MiB the in-process snapshot LRU may hold: the whole cache without --redis "
                   f"(default {DEFAULT_CACHE_MB}), each process's layer in front of Redis with it "
                   f"(default {DEFAULT_NEAR_MB}).")
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
@click.option("--cors-origin", "cors_origins", multiple=True, metavar="ORIGIN",
              help="A page origin that may read /healthz and the state view (the "
                   "SillyTavern panel), e.g. http://192.168.1.20:8000; repeat for more. "
                   f"Default: {' and '.join(DEFAULT_ORIGINS)} (SillyTavern on this machine). "
                   "No other route answers another origin.")
@click.option("--check", "check_only", is_flag=True,
              help="Only load every game folder, list what is wrong, and exit (0: all load, "
                   "1: some do not).")
def serve(upstream: str | None, games_dir: Path, host: str, port: int, workers: int,
          redis_url: str | None, redis_ttl: int, cache_mb: int | None, max_body: int,
          timeout: float, deadline: float | None, cors_origins: tuple[str, ...],
          check_only: bool) -> None:
    """Run the OpenAI-compatible stage: /games/<game>/v1/chat/completions and friends.

    Clients may be required to send a key: set it in the GMTAGS_KEY environment variable and
    have clients send it as their API key (Bearer) or in an X-Gmtags-Key header. A game folder
    that does not load is reported at start and answers 503; the other games are served.
    """
    import uvicorn
    from uvicorn.supervisors import Multiprocess

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
    if workers > 1 and redis_url is None:
        raise click.UsageError(
            "--workers > 1 needs --redis: without it each worker would keep its own snapshot "
            "cache, and a chat would be folded again on every worker that takes one of its "
            "requests")
    try:
        parsed = Upstream.parse(upstream)
    except ValueError as failure:
        raise click.BadParameter(str(failure), param_hint="--upstream") from None
    settings = StageSettings(upstream=upstream, games_dir=games_dir, redis_url=redis_url,
                             redis_ttl=redis_ttl, cache_mb=cache_mb,
                             key=os.environ.get(KEY_VARIABLE) or None, max_body=max_body,
                             timeout=timeout, deadline=deadline, workers=workers,
                             cors_origins=cors_origins or DEFAULT_ORIGINS)
    try:
        store = settings.open_store()  # a malformed --redis URL is an error here, not in each
        # worker (opening one connects to nothing)
    except ValueError as failure:
        raise click.BadParameter(str(failure), param_hint="--redis") from None
    served = ", ".join(sorted(games.ready)) or "no game"
    # Bound before the line below is written, so that "serving" is true when a client (or a
    # test, or a supervisor) reads it: a request sent then waits in the socket's queue, for
    # the one process or for whichever worker accepts it first.
    listening = _listen(host, port)
    snapshots = f"redis, {settings.near_mb} MiB in front of it in each process" if redis_url \
        else f"in-process, {settings.near_mb} MiB"
    processes = f", {workers} workers" if workers > 1 else ""
    click.echo(f"gmtags: serving {served} on http://{host}:{port} for {parsed.shown} "
               f"(snapshots: {snapshots}{processes})", err=True)
    if workers == 1:
        server = uvicorn.Server(uvicorn.Config(settings.app(games, store), log_level="warning"))
        server.run(sockets=[listening])
        return
    # uvicorn's own supervisor: each worker builds the app with ``settings`` (the factory is
    # pickled to the spawned process), all accept on the one socket, and one that dies is
    # started again. A worker answers the supervisor's health pings only once it has imported
    # gmtags (seconds on a busy host): uvicorn's 5 s default would kill a slow starter and
    # start it again, forever, so the supervisor waits as long as a start may take.
    config = uvicorn.Config(settings, factory=True, workers=workers, log_level="warning",
                            timeout_worker_healthcheck=WORKER_START_S)
    Multiprocess(config, sockets=[listening]).run()


WORKER_START_S = 120  # the longest a worker may take to import gmtags and answer a health ping


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
