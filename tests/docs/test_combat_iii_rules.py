"""docs/combat-iii-rules.md: every rule ID of Combat III's scope (issue 26: spec/combat.md Part B,
spec/items.md §14) has a row, and every row marked tested names test files that really mention
the ID — counted by ``mentioned()`` of tests/docs/test_combat_rules.py (an ID written out, in a
range or in a test name such as ``test_d100_def_3_6_…``)."""

from __future__ import annotations

import re
from pathlib import Path

from helpers import ROOT
from test_combat_rules import mentioned

DOC = ROOT / "docs/combat-iii-rules.md"
STATUSES = ("tested: ", "not applicable: ", "left: ")
RULE = r"(?:D100-[A-Z]+-A?\d+|ITM-CLS-\d+)"
PART_B = {"ROLE": 3, "HIT": 4, "GRADE": 6, "DMG": 4, "RANK": 7, "EFF": 7, "OVER": 2, "DEF": 8,
          "MOM": 6, "PARTY": 11}


def scope(doc: Path = DOC, rule: str = RULE) -> list[str]:
    """The scope's IDs, as the doc's Scope section lists them (also Combat II's doc)."""
    section = doc.read_text(encoding="utf-8").split("## Scope", 1)[1].split("## Rules", 1)[0]
    return re.findall(rf"`({rule})`", section)


def rows(doc: Path = DOC, rule: str = RULE) -> dict[str, tuple[str, str]]:
    """Each table row: rule -> (owner, status)."""
    found: dict[str, tuple[str, str]] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and re.fullmatch(rule, cells[0]):
            assert cells[0] not in found, f"{cells[0]} has two rows"
            found[cells[0]] = (cells[1], cells[2])
    return found


def test_the_scope_is_part_b_and_items_section_14_exactly() -> None:
    expected = [f"D100-{group}-{n}" for group, last in PART_B.items()
                for n in range(1, last + 1)]
    expected += [f"D100-ATK-A{n}" for n in range(1, 9)]
    expected += [f"ITM-CLS-{n}" for n in range(1, 20)]
    assert scope() == expected


def test_every_rule_of_the_scope_has_one_row_and_no_row_is_outside_it() -> None:
    listed = scope()
    assert len(listed) == len(set(listed)) == 85
    assert list(rows()) == listed


def test_every_row_says_who_owns_it_and_what_became_of_it() -> None:
    check_owners_and_statuses(rows())


def check_owners_and_statuses(found: dict[str, tuple[str, str]]) -> None:
    """Each row's owner is Engine or Storyteller and its status one of STATUSES."""
    for rule, (owner, status) in found.items():
        assert owner in ("Engine", "Storyteller"), rule
        assert status.startswith(STATUSES), (rule, status)


def test_every_engine_rule_is_tested_or_says_why_not() -> None:
    check_reasons(rows())


def check_reasons(found: dict[str, tuple[str, str]]) -> None:
    """An Engine row not tested says why in a line."""
    for rule, (owner, status) in found.items():
        if owner == "Engine" and not status.startswith("tested: "):
            assert len(status.split(": ", 1)[1]) > 20, (rule, "a reason in one line")


def test_every_rule_marked_tested_is_mentioned_by_the_test_files_it_names() -> None:
    check_tested_files(rows())


def check_tested_files(found: dict[str, tuple[str, str]]) -> None:
    """Every row marked tested names test files, each of which mentions the rule."""
    cache: dict[str, set[str]] = {}
    for rule, (_, status) in found.items():
        if not status.startswith("tested: "):
            continue
        files = re.findall(r"`(tests/[^`]+\.py)`", status.split(" (partly:", 1)[0].split(
            " (the middleware", 1)[0])
        assert files, f"{rule} names no test file"
        for name in files:
            if name not in cache:
                path = ROOT / name
                assert path.is_file(), f"{rule}: {name} does not exist"
                cache[name] = mentioned(path.read_text(encoding="utf-8"))
        assert all(rule in cache[name] for name in files), (
            f"{rule} is not in every one of {files}")
