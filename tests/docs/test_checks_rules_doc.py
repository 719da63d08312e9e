"""docs/checks-rules.md (issue 44): every rule ID of spec/checks.md has one row, tested (by test
files that cite it, tests/docs/rule_tables.py) or not applicable with a reason."""

from __future__ import annotations

from collections import Counter

from helpers import ROOT
from rule_tables import (
    scope,
)

DOC = ROOT / "docs/checks-rules.md"
RULE = r"CHK-[A-Z]+-A?\d+"
# the rule groups of spec/checks.md, each with its numbered rules and its algorithm's steps
GROUPS = {
    "GEN": (13, 8), "SUM": (19, 12), "POOL": (54, 24), "TAG": (22, 0), "HIGH": (24, 13),
    "RA": (19, 11), "SYM": (44, 15), "SCOPE": (5, 0), "OUT": (22, 6), "OVR": (11, 3),
    "SPEND": (16, 0), "TAL": (12, 0), "PAY": (6, 5),
}


def test_the_scope_is_every_rule_of_checks_md_once() -> None:
    listed = scope(DOC, RULE)
    assert len(listed) == len(set(listed)) == 364
    assert Counter(rule.split("-")[1] for rule in listed) == Counter(
        {group: rules + steps for group, (rules, steps) in GROUPS.items()})
    for group, (rules, steps) in GROUPS.items():
        assert {r for r in listed if r.split("-")[1] == group} == (
            {f"CHK-{group}-{n}" for n in range(1, rules + 1)}
            | {f"CHK-{group}-A{n}" for n in range(1, steps + 1)}), group
