"""All rule status tables together (issue 44): docs/combat-rules.md, docs/combat-ii-rules.md,
docs/combat-iii-rules.md, docs/items-rules.md and docs/checks-rules.md hold every one of the
1,151 rule IDs of spec/ (items.md 611, checks.md 364, combat.md 176), each tested or not
applicable — none left open — and a rule two tables hold has the same status in both."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers import ROOT
from rule_tables import (
    NOT_APPLICABLE,
    RULE,
    TESTED,
    check_owners_and_statuses,
    check_reasons,
    check_tested_files,
    rows,
    scope,
)

TABLES = [ROOT / "docs" / name for name in (
    "combat-rules.md", "combat-ii-rules.md", "combat-iii-rules.md", "items-rules.md",
    "checks-rules.md")]


# Each table and the IDs its rows hold (a table's own file tests what its scope is).
RULES = {
    "combat-rules.md": r"(?:CMB|ITM)-[A-Z0-9]+-A?\d+",
    "combat-ii-rules.md": r"(?:CMB|ITM)-[A-Z0-9]+-A?\d+",
    "combat-iii-rules.md": r"(?:D100-[A-Z]+-A?\d+|ITM-CLS-\d+)",
    "items-rules.md": r"ITM-[A-Z0-9]+-\d+",
    "checks-rules.md": r"CHK-[A-Z]+-A?\d+",
}


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_of_a_tables_scope_has_one_row_and_no_row_is_outside_it(name: str) -> None:
    doc = ROOT / "docs" / name
    assert list(rows(doc, RULES[name])) == scope(doc, RULES[name])


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_row_says_who_owns_it_and_what_became_of_it(name: str) -> None:
    check_owners_and_statuses(rows(ROOT / "docs" / name, RULES[name]))


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_not_tested_says_why(name: str) -> None:
    check_reasons(rows(ROOT / "docs" / name, RULES[name]))


@pytest.mark.parametrize("name", sorted(RULES))
def test_every_rule_marked_tested_is_cited_by_the_test_files_it_names(name: str) -> None:
    check_tested_files(rows(ROOT / "docs" / name, RULES[name]))


def _all_rows() -> list[tuple[Path, str, str]]:
    return [(doc, rule, status) for doc in TABLES for rule, (_, status) in rows(doc).items()]


def test_every_rule_of_the_spec_is_in_a_table() -> None:
    ids = {rule for doc in TABLES for rule in scope(doc, RULE)}
    assert len(ids) == 1151
    assert sum(1 for rule in ids if rule.startswith("ITM-")) == 611
    assert sum(1 for rule in ids if rule.startswith("CHK-")) == 364
    assert sum(1 for rule in ids if rule.startswith(("CMB-", "D100-"))) == 176
    assert ids == {rule for _, rule, _ in _all_rows()}


def test_every_rule_is_tested_or_not_applicable() -> None:
    kinds = {TESTED: set(), NOT_APPLICABLE: set()}
    for doc, rule, status in _all_rows():
        kind = next((k for k in kinds if status.startswith(k)), None)
        assert kind is not None, (doc.name, rule, status)
        kinds[kind].add(rule)
    assert not kinds[TESTED] & kinds[NOT_APPLICABLE], "a rule both tested and not applicable"
    assert len(kinds[TESTED]) + len(kinds[NOT_APPLICABLE]) == 1151


def test_a_rule_in_two_tables_has_the_same_status_in_both() -> None:
    """Tested in one table, tested in every other (not applicable likewise); and docs/
    items-rules.md copies the row of the last combat table that holds the rule (Combat II
    and III took over rules Combat I had, so their rows are the newer)."""
    kinds: dict[str, str] = {}
    newest: dict[str, str] = {}
    for doc, rule, status in _all_rows():
        kind = TESTED if status.startswith(TESTED) else NOT_APPLICABLE
        assert kinds.setdefault(rule, kind) == kind, (rule, doc.name)
        if doc.name.startswith("combat"):
            newest[rule] = status
    for rule, (_, status) in rows(ROOT / "docs/items-rules.md").items():
        if rule in newest:
            assert status == newest[rule], rule


def test_no_table_points_outside_the_repository() -> None:
    """The tables cite rule IDs and this repository's files, not the shared spec's paths."""
    for doc in TABLES:
        text = doc.read_text(encoding="utf-8")
        assert "../shared" not in text and "/work/" not in text, doc.name
