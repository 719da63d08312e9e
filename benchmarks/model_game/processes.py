"""The processes a model game starts, and stopping each of them, whatever happened."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import time
from collections.abc import Callable

import httpx


def free_port() -> int:
    """A free loopback port (the process that takes it binds it a moment later)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def stop(process: subprocess.Popen[bytes], grace: float = 15) -> None:
    """Ask ``process`` to end, and kill it if it has not within ``grace`` seconds."""
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=grace)
        except subprocess.TimeoutExpired:
            process.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                process.wait(timeout=15)


def wait_ready(url: str, process: subprocess.Popen[bytes], what: str, seconds: float,
               log: Callable[[], str]) -> None:
    """Wait until ``url`` answers 200 (llama-server answers 503 while it loads its model);
    raise with the end of the process's log when it exits first or ``seconds`` pass."""
    ends = time.monotonic() + seconds
    while time.monotonic() < ends:
        if process.poll() is not None:
            raise RuntimeError(f"{what} exited with status {process.returncode}:\n{log()}")
        try:
            if httpx.get(url, timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.25)
    raise RuntimeError(f"{what} did not answer {url} within {seconds:.0f} s:\n{log()}")


def tail(path: object, lines: int = 20) -> Callable[[], str]:
    """A function that reads the last ``lines`` lines of the log file at ``path``."""
    def read() -> str:
        try:
            with open(str(path), encoding="utf-8", errors="replace") as file:
                return "".join(file.readlines()[-lines:])
        except OSError:
            return "(no log)"
    return read
