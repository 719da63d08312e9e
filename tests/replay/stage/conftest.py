"""Fixtures of the stage tests; the servers themselves are in stage_servers.py."""

from stage_servers import fake_model, games_dir, model, redis_server, stage

__all__ = ["fake_model", "games_dir", "model", "redis_server", "stage"]
