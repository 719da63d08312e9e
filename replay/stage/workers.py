"""What one stage process needs to build its app: the ``gmtags serve`` options, picklable, so
that each of ``--workers N`` processes (spawned by uvicorn's supervisor) builds the same app."""

from __future__ import annotations

import logging
import sys
from dataclasses import dataclass, field
from pathlib import Path

from starlette.applications import Starlette

from ..cache import DEFAULT_CACHE_MB, DEFAULT_NEAR_MB, Store, open_store
from .app import Games, StageConfig, build_app, load_games
from .cors import DEFAULT_ORIGINS
from .upstream import Redactor, Upstream

# A fold of a big request runs in a worker thread; the event loop gets the GIL back this often
# (seconds), so small requests on other chats are not kept waiting behind it.
SWITCH_INTERVAL = 0.001


@dataclass(frozen=True)
class StageSettings:
    """The options of ``gmtags serve``; calling it builds the stage's app (uvicorn's app
    factory in each worker)."""

    upstream: str
    games_dir: Path
    redis_url: str | None = None
    redis_ttl: int = 7 * 24 * 3600
    cache_mb: int | None = None
    key: str | None = field(default=None, repr=False)
    max_body: int = 8 * 1024 * 1024
    timeout: float = 300.0
    deadline: float | None = None
    workers: int = 1
    cors_origins: tuple[str, ...] = DEFAULT_ORIGINS

    @property
    def near_mb(self) -> int:
        """MiB of this process's snapshot LRU (the whole cache, or the layer before Redis)."""
        return self.cache_mb or (DEFAULT_NEAR_MB if self.redis_url else DEFAULT_CACHE_MB)

    def open_store(self) -> Store:
        """This process's snapshot store (raises ValueError for a malformed --redis URL)."""
        return open_store(self.redis_url, ttl=self.redis_ttl, cache_mb=self.near_mb)

    def app(self, games: Games | None = None, store: Store | None = None) -> Starlette:
        """The stage of this process, its logging set up (every secret redacted)."""
        # A worker names itself in each line: which process answered, which one failed.
        pid = "[%(process)d]" if self.workers > 1 else ""
        logging.basicConfig(level=logging.INFO,
                            format=f"%(levelname)s %(name)s{pid}: %(message)s")
        redactor = Redactor([*Upstream.parse(self.upstream).secrets,
                             *([self.key] if self.key else [])])
        for handler in logging.getLogger().handlers:  # whatever logs, through these handlers
            handler.addFilter(redactor)
        sys.setswitchinterval(SWITCH_INTERVAL)
        config = StageConfig(upstream=self.upstream,
                             games=games if games is not None else load_games(self.games_dir),
                             store=store if store is not None else self.open_store(),
                             key=self.key, max_body=self.max_body, timeout=self.timeout,
                             deadline=self.deadline, cors_origins=self.cors_origins)
        return build_app(config)

    def __call__(self) -> Starlette:
        return self.app()
