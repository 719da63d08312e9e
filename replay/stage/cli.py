"""``gmtags serve``: run the pipeline stage with uvicorn."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path

import click

from engine import PartyError, RulesetError

from ..cache import DEFAULT_TTL, open_store
from ..files import InputError
from .app import StageConfig, build_app, load_games

KEY_VARIABLE = "GMTAGS_KEY"


@click.command()
@click.option("--upstream", required=True, metavar="URL",
              help="The model server's OpenAI base URL, e.g. http://127.0.0.1:5001/v1.")
@click.option("--games", "games_dir", required=True,
              type=click.Path(file_okay=False, exists=True, path_type=Path),
              help="A folder of game folders (ruleset.json, party.json, options.json).")
@click.option("--host", default="127.0.0.1", show_default=True)
@click.option("--port", default=8111, show_default=True, type=int)
@click.option("--redis", "redis_url", default=None, metavar="URL",
              help="Share snapshots through Redis (default: an in-process LRU).")
@click.option("--redis-ttl", default=DEFAULT_TTL, show_default=True, type=int,
              help="Seconds a Redis snapshot lives.")
@click.option("--max-body", default=8 * 1024 * 1024, show_default=True, type=int,
              help="Largest request body accepted, in bytes.")
@click.option("--timeout", default=300.0, show_default=True, type=float,
              help="Seconds to wait for the model server (per read).")
def serve(upstream: str, games_dir: Path, host: str, port: int, redis_url: str | None,
          redis_ttl: int, max_body: int, timeout: float) -> None:
    """Run the OpenAI-compatible stage: /games/<game>/v1/chat/completions and friends.

    Clients may be required to send a key: set it in the GMTAGS_KEY environment variable and
    have clients send it as their API key (Bearer) or in an X-Gmtags-Key header.
    """
    import uvicorn

    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s")
    try:
        games = load_games(games_dir)
    except (InputError, RulesetError, PartyError) as failure:
        click.echo(f"gmtags: cannot load a game:\n{failure}", err=True)
        sys.exit(2)
    if not games:
        click.echo(f"gmtags: no game folder with a ruleset.json under {games_dir}", err=True)
        sys.exit(2)
    config = StageConfig(upstream=upstream, games=games,
                         store=open_store(redis_url, ttl=redis_ttl),
                         key=os.environ.get(KEY_VARIABLE) or None, max_body=max_body,
                         timeout=timeout)
    click.echo(f"gmtags: serving {', '.join(sorted(games))} on http://{host}:{port} "
               f"(snapshots: {'redis' if redis_url else 'in-process'})", err=True)
    uvicorn.run(build_app(config), host=host, port=port, log_level="warning")
