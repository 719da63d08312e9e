"""Test-suite root: the repository is on sys.path, so tests import the packages from here."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "tests"))
