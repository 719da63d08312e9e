"""References into docs/ resolve: every ``docs/<file>.md#<anchor>`` a code comment or docstring
writes, and every relative link of a page of docs/ and of the README, names a file that exists
and, after ``#``, a heading of it (by GitHub's slug) or an ``<a id>``/``<a name>`` of it. And
no code points outside the repository: no ``DESIGN.md``, no ``spec/``, no "issue N" tag."""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from pathlib import Path

import pytest
from helpers import ROOT

CODE = ("engine", "replay", "tagparse", "tests", "benchmarks", "scripts")
PAGES = [*sorted((ROOT / "docs").rglob("*.md")), ROOT / "README.md"]

FENCE = re.compile(r"^\s*(```|~~~)")
HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"""<a\s+(?:id|name)=["']([^"']+)["']""")
LINK = re.compile(r"\]\(([^()\s]+)\)")
CITED = re.compile(r"\bdocs/[\w./-]+\.md(?:#[\w-]+)?")


def slug(heading: str) -> str:
    """GitHub's anchor for a heading: its text without markup, lower case, every character but
    a letter, digit, ``_``, ``-`` or space dropped, each space a ``-``."""
    text = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").strip().lower()
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def outside_fences(text: str) -> Iterator[str]:
    """The lines of a Markdown text that are not inside a fenced code block."""
    fenced = False
    for line in text.splitlines():
        if FENCE.match(line):
            fenced = not fenced
            continue
        if not fenced:
            yield line


@cache
def anchors(page: Path) -> frozenset[str]:
    """The anchors of a Markdown page: each heading's slug (a repeated one also as ``-1``,
    ``-2``, …, as GitHub numbers them) and each explicit ``<a id>``/``<a name>``."""
    found: set[str] = set()
    seen: dict[str, int] = {}
    for line in outside_fences(page.read_text(encoding="utf-8")):
        found.update(HTML_ANCHOR.findall(line))
        heading = HEADING.match(line)
        if heading:
            base = slug(heading.group(2))
            count = seen.get(base, 0)
            seen[base] = count + 1
            found.add(base if count == 0 else f"{base}-{count}")
    return frozenset(found)


def broken(target: Path, anchor: str | None) -> str | None:
    """Why a reference to ``target`` (and ``#anchor``) does not resolve, or None."""
    if not target.exists():
        return "no such file"
    if anchor is None or target.suffix != ".md":
        return None
    return None if anchor in anchors(target) else f"no heading #{anchor}"


def code_files() -> Iterator[Path]:
    """The Python files of the repository's code, tests and tools."""
    for top in CODE:
        yield from sorted((ROOT / top).rglob("*.py"))


def test_slugs_are_githubs() -> None:
    assert slug("ITM-PAY-4") == "itm-pay-4"
    assert slug("A.4 Outcome-based combat (position and effect)") == (
        "a4-outcome-based-combat-position-and-effect")
    assert slug("Narrative combat: `combat.narrative`") == "narrative-combat-combatnarrative"
    assert slug("`[skill_check:]`") == "skill_check"
    assert slug("Part B — narrative d100 fights") == "part-b--narrative-d100-fights"
    assert slug("The party file and `--party`") == "the-party-file-and---party"


def test_every_docs_reference_in_the_code_resolves() -> None:
    problems = []
    for path in code_files():
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for cited in CITED.findall(line):
                name, _, anchor = cited.partition("#")
                why = broken(ROOT / name.rstrip("."), anchor or None)
                if why:
                    problems.append(f"{path.relative_to(ROOT)}:{number}: {cited}: {why}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_every_relative_link_of_a_page_resolves(page: Path) -> None:
    problems = []
    for line in outside_fences(page.read_text(encoding="utf-8")):
        for target in LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto:, …
                continue
            name, _, anchor = target.partition("#")
            why = broken(page.parent / name if name else page, anchor or None)
            if why:
                problems.append(f"{target}: {why}")
    assert not problems, "\n".join(problems)


def test_every_rule_id_the_status_tables_hold_is_a_heading_of_docs_rules() -> None:
    """Each row of a status table names a rule that docs/rules/ states, under its ID."""
    stated = anchors(ROOT / "docs/rules/items.md") | anchors(ROOT / "docs/rules/checks.md") | (
        anchors(ROOT / "docs/rules/combat.md"))
    rule = re.compile(r"^\| ((?:CMB|ITM|CHK|D100)-[A-Z0-9]+-A?\d+) \|", re.M)
    missing = {found for table in sorted((ROOT / "docs").glob("*-rules.md"))
               for found in rule.findall(table.read_text(encoding="utf-8"))
               if found.lower() not in stated}
    assert not missing, sorted(missing)


# DESIGN.md, spec/ (also a spec page named bare: "checks.md §3"), an "issue N" tag
OUTSIDE = re.compile(
    r"DESIGN\.md|\bspec/|(?<!rules/)\b(?:items|checks|combat)\.md|(?i:\bissue #?\d+)")


def test_no_code_points_outside_the_repository() -> None:
    """The code cites docs/ (docs/design.md, docs/rules/), not the DESIGN.md and spec/ pages
    that lived outside the repository, and carries no "issue N" tag."""
    problems = [f"{path.relative_to(ROOT)}:{number}: {line.strip()[:100]}"
                for top in ("engine", "replay", "tagparse")
                for path in sorted((ROOT / top).rglob("*.py"))
                for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
                if OUTSIDE.search(line)]
    assert not problems, f"{len(problems)} lines, first: " + "\n".join(problems[:20])
