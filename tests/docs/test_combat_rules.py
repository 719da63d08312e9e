"""docs/combat-rules.md: every rule ID of Combat I's scope (issue 24) has a row, and every row
marked tested names test files that really mention the ID — written out, in a range
(``CMB-TURN-6..8``, ``ITM-WPN-6/8``, ``CMB-COND-3…5``) or in a test name
(``test_cmb_turn_6_8_…``)."""

from __future__ import annotations

import re

import pytest
from helpers import ROOT

DOC = ROOT / "docs/combat-rules.md"
STATUSES = ("tested: ", "not applicable: ", "not applicable yet: ", "out of scope: ", "left: ")

WRITTEN = re.compile(r"\b(CMB|ITM|D100)-([A-Z0-9]+)-(A?)(\d+)((?:\s*(?:\.\.|…|/)\s*A?\d+\b)*)")
STEP = re.compile(r"(\.\.|…|/)\s*A?(\d+)")
NAMED = re.compile(r"(?<![a-z])(cmb|itm|d100)_([a-z0-9]+)((?:_a?\d+)+)")
MAX_RANGE = 40  # a wider "range" is no range of rules but a typo


def mentioned(text: str) -> set[str]:
    """Every rule ID ``text`` mentions, each ID of a range or a test name counted."""
    found: set[str] = set()
    for match in WRITTEN.finditer(text):
        prefix, group, step, number, rest = match.groups()
        last = int(number)
        found.add(f"{prefix}-{group}-{step}{last}")
        for separator, written in STEP.findall(rest):
            upto = int(written)
            numbers = [upto] if separator == "/" else (
                range(last + 1, upto + 1) if upto - last <= MAX_RANGE else [])
            found.update(f"{prefix}-{group}-{step}{n}" for n in numbers)
            last = upto
    for match in NAMED.finditer(text):
        prefix, group, numbers = match.groups()
        found.update(f"{prefix.upper()}-{group.upper()}-{n.upper()}"
                     for n in numbers.strip("_").split("_"))
    return found


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
])
def test_mentions_count_each_id_of_a_range(text, expected) -> None:
    assert mentioned(text) == expected


def scope() -> list[str]:
    """The scope's IDs, as the doc's Scope section lists them."""
    section = DOC.read_text(encoding="utf-8").split("## Scope", 1)[1].split("## Rules", 1)[0]
    return re.findall(r"`((?:CMB|ITM)-[A-Z0-9]+-A?\d+)`", section)


def rows() -> dict[str, tuple[str, str]]:
    """Each table row: rule -> (owner, status)."""
    found: dict[str, tuple[str, str]] = {}
    for line in DOC.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and re.fullmatch(
                r"(CMB|ITM)-[A-Z0-9]+-A?\d+", cells[0]):
            assert cells[0] not in found, f"{cells[0]} has two rows"
            found[cells[0]] = (cells[1], cells[2])
    return found


def test_every_rule_of_the_scope_has_one_row_and_no_row_is_outside_it() -> None:
    listed = scope()
    assert len(listed) == len(set(listed)) == 145
    assert list(rows()) == listed


def test_every_row_says_who_owns_it_and_what_became_of_it() -> None:
    for rule, (owner, status) in rows().items():
        assert owner in ("Engine", "Storyteller"), rule
        assert status.startswith(STATUSES), (rule, status)


def test_every_rule_marked_tested_is_mentioned_by_the_test_files_it_names() -> None:
    cache: dict[str, set[str]] = {}
    for rule, (_, status) in rows().items():
        if not status.startswith("tested: "):
            continue
        files = re.findall(r"`(tests/[^`]+\.py)`", status.split(" (partly:", 1)[0])
        assert files, f"{rule} names no test file"
        for name in files:
            if name not in cache:
                path = ROOT / name
                assert path.is_file(), f"{rule}: {name} does not exist"
                cache[name] = mentioned(path.read_text(encoding="utf-8"))
        assert any(rule in cache[name] for name in files), f"{rule} is in none of {files}"
