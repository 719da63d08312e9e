"""The modules of engine/ruleset read in one order, each importing only modules before it: the
values every block uses, the blocks, the whole file, then the checks of it (issue 23: no
import cycle, no import hidden in a function to dodge one, no private name across modules)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[3] / "engine" / "ruleset"

# Lowest first. A module may import only modules of an earlier row.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("base", "pointers", "formula"),                  # wire conventions, ids, JSON pointers
    ("values",),                                      # value references and thresholds
    ("effects", "fakes", "loot", "resolution"),       # parts of blocks
    ("combat", "gear", "market", "sheet"),            # blocks built of those parts
    ("foe_abilities",),                               # a template's own abilities (issue 25)
    ("items", "fight", "abilities"),                  # the item and combat blocks, catalogs,
                                                      # an entry's fight keys
    ("ruleset",),                                     # the whole file
    ("versions", "references", "outcome_problems",    # checks: features, references, the
     "foe_problems"),                                 # outcome and foe keys (issue 25)
    ("resolution_problems", "fight_problems"),        # checks of the resolution, combat blocks
    ("problems",),                                    # validate: every check, in file order
)
RANK = {name: rank for rank, row in enumerate(LAYERS) for name in row}


def _imports(name: str) -> list[tuple[ast.ImportFrom, bool]]:
    """Every relative import of a module inside the package, and whether it sits at top level."""
    tree = ast.parse((PACKAGE / f"{name}.py").read_text(encoding="utf-8"))
    top = set(map(id, tree.body))
    return [(node, id(node) in top) for node in ast.walk(tree)
            if isinstance(node, ast.ImportFrom) and node.level == 1]


def test_every_module_of_the_package_has_a_layer() -> None:
    found = {path.stem for path in PACKAGE.glob("*.py")} - {"__init__"}
    assert found == set(RANK)


@pytest.mark.parametrize("name", sorted(RANK))
def test_a_ruleset_module_imports_only_earlier_modules_at_top_level(name: str) -> None:
    for node, at_top in _imports(name):
        assert at_top, f"{name}.py line {node.lineno}: an import inside a function or block"
        target = node.module or ""
        assert RANK[target] < RANK[name], f"{name}.py imports .{target}, which is not below it"
        private = [alias.name for alias in node.names if alias.name.startswith("_")]
        assert not private, f"{name}.py imports private names {private} from .{target}"
