"""docs/combat-iii-rules.md: every rule ID of Combat III's scope (issue 26: spec/combat.md Part B,
spec/items.md §14) has a row, and every row marked tested names test files that really mention
the ID — as tests/docs/rule_tables.py reads citations (an ID written out, in a range or in a
test name such as ``test_d100_def_3_6_…``)."""

from __future__ import annotations

from helpers import ROOT
from rule_tables import (
    rows,
    scope,
)

DOC = ROOT / "docs/combat-iii-rules.md"
RULE = r"(?:D100-[A-Z]+-A?\d+|ITM-CLS-\d+)"
PART_B = {"ROLE": 3, "HIT": 4, "GRADE": 6, "DMG": 4, "RANK": 7, "EFF": 7, "OVER": 2, "DEF": 8,
          "MOM": 6, "PARTY": 11}


def test_the_scope_is_part_b_and_items_section_14_exactly() -> None:
    expected = [f"D100-{group}-{n}" for group, last in PART_B.items()
                for n in range(1, last + 1)]
    expected += [f"D100-ATK-A{n}" for n in range(1, 9)]
    expected += [f"ITM-CLS-{n}" for n in range(1, 20)]
    assert scope(DOC, RULE) == expected


def test_every_rule_of_the_scope_has_one_row_and_no_row_is_outside_it() -> None:
    listed = scope(DOC, RULE)
    assert len(listed) == len(set(listed)) == 85
    assert list(rows(DOC, RULE)) == listed
