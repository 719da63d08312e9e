"""Suite-wide fixtures."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest


@pytest.fixture(autouse=True)
def _cycle_collector_restored() -> Iterator[None]:
    """A ``gmtags`` command run in process (click's CliRunner) pauses this process's cycle
    collector, as the command line does (replay/cli.py); the next test gets it back."""
    enabled, threshold = gc.isenabled(), gc.get_threshold()
    yield
    gc.set_threshold(*threshold)
    if enabled:
        gc.enable()
