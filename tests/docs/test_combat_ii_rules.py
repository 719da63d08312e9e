"""docs/combat-ii-rules.md: every rule ID of Combat II's scope (issue 25: spec/combat.md A.4,
A.8, A.9, A.11, A.12 and CMB-TURN-17; spec/items.md §10, §11, §12.3, §13 and ITM-WPN-11) has
a row, and every row marked tested names test files that cite the ID — the checks of
tests/docs/rule_tables.py, on this doc."""

from __future__ import annotations

from helpers import ROOT
from rule_tables import (
    rows,
    scope,
)

DOC = ROOT / "docs/combat-ii-rules.md"
RULE = r"(?:CMB|ITM)-[A-Z0-9]+-A?\d+"
# each group of the scope, in the spec's order: (group, first, last)
COMBAT = [("OUTC", 1, 4), ("REACT", 1, 7), ("SUS", 1, 8), ("ABIL", 1, 8), ("CARD", 1, 1),
          ("HP0", 1, 4), ("WIN", 1, 1)]
ITEMS = [("AMMO", 1, 7), ("CLIP", 1, 9), ("AMMO", 8, 11), ("MODE", 1, 9), ("OFF", 1, 7),
         ("FLOOR", 1, 3), ("ONHIT", 1, 7), ("PLUS", 1, 8), ("TOG", 6, 6), ("MODE", 10, 10),
         ("HARD", 1, 4), ("USE", 1, 19), ("CHG", 1, 5), ("ENTRY", 10, 10), ("CHG", 6, 7),
         ("RCHG", 1, 7), ("BRK", 1, 4), ("GATE", 1, 9), ("USE", 20, 26)]


def test_the_scope_is_issue_25s_sections_exactly() -> None:
    expected = [f"CMB-{group}-{n}" for group, first, last in COMBAT
                for n in range(first, last + 1)]
    expected += [f"ITM-{group}-{n}" for group, first, last in ITEMS
                 for n in range(first, last + 1)]
    expected += ["CMB-TURN-17", "ITM-WPN-11"]
    assert scope(DOC, RULE) == expected


def test_every_rule_of_the_scope_has_one_row_and_no_row_is_outside_it() -> None:
    listed = scope(DOC, RULE)
    assert len(listed) == len(set(listed)) == 149
    assert list(rows(DOC, RULE)) == listed
