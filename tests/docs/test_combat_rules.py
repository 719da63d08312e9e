"""docs/combat-rules.md: every rule ID of Combat I's scope (issue 24) has a row, and every row
marked tested names test files that cite the ID — written out, in a range (``CMB-TURN-6..8``,
``ITM-WPN-6/8``, ``CMB-COND-3…5``) or in a test name (``test_cmb_turn_6_8_…``), as
tests/docs/rule_tables.py reads them."""

from __future__ import annotations

import pytest
from helpers import ROOT
from rule_tables import (
    cited,
    mentioned,
    rows,
    scope,
)

DOC = ROOT / "docs/combat-rules.md"
RULE = r"(?:CMB|ITM)-[A-Z0-9]+-A?\d+"


@pytest.mark.parametrize(("text", "expected"), [
    ("CMB-TURN-6..8", {"CMB-TURN-6", "CMB-TURN-7", "CMB-TURN-8"}),
    ("CMB-COND-3…5", {"CMB-COND-3", "CMB-COND-4", "CMB-COND-5"}),
    ("ITM-WPN-6/8/12", {"ITM-WPN-6", "ITM-WPN-8", "ITM-WPN-12"}),
    ("CMB-ATK-A1..A3", {"CMB-ATK-A1", "CMB-ATK-A2", "CMB-ATK-A3"}),
    ("def test_cmb_turn_2_4_a1_x", {"CMB-TURN-2", "CMB-TURN-4", "CMB-TURN-A1"}),
    ("def test_cmb_tpl_5_a_foe", {"CMB-TPL-5"}),
    ("ITM-WPN-10", {"ITM-WPN-10"}),  # not ITM-WPN-1
    ("CMB-TURN-1..900", {"CMB-TURN-1"}),  # no range of rules: only what is written first
    ("D100-ATK-A3..A5", {"D100-ATK-A3", "D100-ATK-A4", "D100-ATK-A5"}),  # issue 26
    ("def test_d100_mom_3_4_a_kill", {"D100-MOM-3", "D100-MOM-4"}),
    ("CHK-POOL-A12..A14", {"CHK-POOL-A12", "CHK-POOL-A13", "CHK-POOL-A14"}),  # issue 44
    ("def test_chk_out_a2_x", {"CHK-OUT-A2"}),
])
def test_mentions_count_each_id_of_a_range(text, expected) -> None:
    assert mentioned(text) == expected


@pytest.mark.parametrize(("text", "expected"), [
    ('"""Pins ITM-USE-1..26."""\n', set()),  # a wide range in the module docstring: a summary
    ('"""Pins ITM-MODE-2..4 and ITM-USE-7."""\n',
     {"ITM-MODE-2", "ITM-MODE-3", "ITM-MODE-4", "ITM-USE-7"}),  # narrow, or written out
    ('"""Pins ITM-USE-1..26."""\n\ndef test_x():\n    """ITM-USE-1..26"""\n',
     {f"ITM-USE-{n}" for n in range(1, 27)}),  # in a test's own docstring it cites
    ('"""ITM-USE-1..26."""\n\ndef test_itm_use_3_x():\n    pass\n', {"ITM-USE-3"}),
])
def test_a_wide_range_in_a_module_docstring_cites_nothing(text, expected) -> None:
    """Issue 44: only a test that names a rule cites it, not a file's summary of its scope."""
    assert cited(text) == expected


def test_every_rule_of_the_scope_has_one_row_and_no_row_is_outside_it() -> None:
    listed = scope(DOC, RULE)
    assert len(listed) == len(set(listed)) == 145
    assert list(rows(DOC, RULE)) == listed
