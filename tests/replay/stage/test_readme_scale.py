"""README "Running for many players": its command runs as written (issue 30)."""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
import threading
from pathlib import Path

import httpx
import pytest
from stage_servers import ENV, GMTAGS, FakeModel, RedisServer, Workers, free_port

ROOT = Path(__file__).resolve().parents[3]
SECTION = (ROOT / "README.md").read_text(encoding="utf-8").split(
    "## Running for many players", 1)[1].split("\n## ", 1)[0]


def test_the_workers_command_serves_as_the_readme_says(
        model: FakeModel, games_dir: Path, tmp_path: Path) -> None:
    [block] = re.findall(r"```sh\n(.*?)```", SECTION, flags=re.DOTALL)
    words = shlex.split(block.replace("\\\n", " "))
    assert words[:2] == [".venv/bin/gmtags", "serve"]
    redis = RedisServer()
    port = free_port()
    given = {"--upstream": model.url, "--games": str(games_dir), "--port": str(port),
             "--redis": redis.url}
    # the README's values for this machine's servers; every option it shows is kept
    args = [given.get(words[at - 1], word) for at, word in enumerate(words) if at >= 2]
    assert args.count("--workers") == 1 and args[args.index("--workers") + 1] == "2"
    process = subprocess.Popen([*GMTAGS, "serve", *args], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, env=ENV)
    running = Workers(process, f"http://127.0.0.1:{port}")
    threading.Thread(target=running.read, daemon=True).start()
    try:
        with running.changed:
            assert running.changed.wait_for(
                lambda: any("serving" in line for line in running.lines), timeout=60)
        assert "2 workers" in "".join(running.lines)
        model.script["hello"] = "Welcome."
        reply = httpx.post(running.url + "/games/harrow/v1/chat/completions",
                           json={"messages": [{"role": "user", "content": "hello"}]}, timeout=60)
        assert reply.status_code == 200
        assert reply.json()["choices"][0]["message"]["content"] == "Welcome."
    finally:
        process.terminate()
        process.wait(timeout=60)
        redis.stop()


def test_the_nginx_block_is_accepted_by_nginx(tmp_path: Path) -> None:
    [block] = re.findall(r"```nginx\n(.*?)```", SECTION, flags=re.DOTALL)
    assert block.count("{") == block.count("}") == 3
    assert "proxy_pass http://gmtags;" in block and "proxy_buffering off;" in block
    nginx = shutil.which("nginx")
    if nginx is None:
        pytest.skip("nginx is not installed: only the block's shape was checked")
    path = tmp_path / "nginx.conf"
    path.write_text(f"events {{}}\nhttp {{\n{block}\n}}\n")
    result = subprocess.run([nginx, "-t", "-c", str(path)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr
