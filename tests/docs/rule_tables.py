"""The rule status tables of docs/ (docs/combat-rules.md, -ii-, -iii-, docs/items-rules.md,
docs/checks-rules.md): reading a table's scope and rows, and what a test file cites.

A test file cites a rule ID when it writes it out (``ITM-PAY-4``), writes it in a range
(``CMB-TURN-6..8``, ``ITM-WPN-6/8``, ``CMB-COND-3…5``) or names it in a test name
(``test_itm_pay_4_…``, ``test_cmb_turn_6_8_…``: each number after the group). A range in the
file's **module docstring** that spans more than :data:`WIDE` IDs is a summary of what the
file is about, not a citation: it counts for none of its IDs (an ID the docstring writes out,
or a range of at most :data:`WIDE`, counts). Only ``tests/**/test_*.py`` files are read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers import ROOT

PREFIXES = "CMB|ITM|CHK|D100"
RULE = rf"(?:{PREFIXES})-[A-Z0-9]+-A?\d+"
WRITTEN = re.compile(rf"\b({PREFIXES})-([A-Z0-9]+)-(A?)(\d+)((?:\s*(?:\.\.|…|/)\s*A?\d+\b)*)")
STEP = re.compile(r"(\.\.|…|/)\s*A?(\d+)")
NAMED = re.compile(r"(?<![a-z])(cmb|itm|chk|d100)_([a-z0-9]+)((?:_a?\d+)+)")
MAX_RANGE = 40  # a wider "range" is no range of rules but a typo
WIDE = 3  # a module docstring's range of more IDs than this is a summary, not a citation

TESTED = "tested: "
NOT_APPLICABLE = "not applicable: "


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


def cited(text: str) -> set[str]:
    """The rule IDs a test file's ``text`` cites: everything :func:`mentioned` finds outside
    its module docstring, and inside it each ID written out or in a range of at most
    :data:`WIDE` IDs (a wider range there says what the file is about, it cites nothing)."""
    tree = ast.parse(text)
    first = tree.body[0] if tree.body else None
    if not (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
            and isinstance(first.value.value, str)):
        return mentioned(text)
    lines = text.splitlines(keepends=True)
    assert first.end_lineno is not None
    start = sum(len(line) for line in lines[:first.lineno - 1])
    end = sum(len(line) for line in lines[:first.end_lineno])
    docstring = text[start:end]
    found = mentioned(text[:start] + text[end:])
    for match in WRITTEN.finditer(docstring):
        ids = mentioned(match.group(0))
        if len(ids) <= WIDE:
            found |= ids
    for match in NAMED.finditer(docstring):
        found |= mentioned(match.group(0))
    return found


_CITED: dict[str, set[str]] = {}


def cited_by(name: str) -> set[str]:
    """What the test file ``name`` (``tests/....py``, from the repository root) cites."""
    if name not in _CITED:
        path = ROOT / name
        assert path.is_file(), f"{name} does not exist"
        assert path.name.startswith("test_") and Path(name).parts[0] == "tests", (
            f"{name} is not a test file")
        _CITED[name] = cited(path.read_text(encoding="utf-8"))
    return _CITED[name]


def scope(doc: Path, rule: str = RULE) -> list[str]:
    """A table's IDs, as its Scope section lists them (each in backticks)."""
    section = doc.read_text(encoding="utf-8").split("## Scope", 1)[1].split("## Rules", 1)[0]
    return re.findall(rf"`({rule})`", section)


def rows(doc: Path, rule: str = RULE) -> dict[str, tuple[str, str]]:
    """Each row of a table: rule -> (owner, status)."""
    found: dict[str, tuple[str, str]] = {}
    for line in doc.read_text(encoding="utf-8").splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if line.startswith("| ") and len(cells) == 3 and re.fullmatch(rule, cells[0]):
            assert cells[0] not in found, f"{cells[0]} has two rows"
            found[cells[0]] = (cells[1], cells[2])
    return found


def tested_files(status: str) -> list[str]:
    """The test files a ``tested:`` status names (before any ``(partly: …)`` note)."""
    named = status.split(" (partly:", 1)[0].split(" (the middleware", 1)[0]
    return re.findall(r"`(tests/[^`]+\.py)`", named)


def check_owners_and_statuses(found: dict[str, tuple[str, str]],
                              statuses: tuple[str, ...] = (TESTED, NOT_APPLICABLE)) -> None:
    """Each row's owner is Engine or Storyteller and its status one of ``statuses``."""
    for rule, (owner, status) in found.items():
        assert owner in ("Engine", "Storyteller"), rule
        assert status.startswith(statuses), (rule, status)


def check_reasons(found: dict[str, tuple[str, str]]) -> None:
    """A row not tested says why in a line."""
    for rule, (_, status) in found.items():
        if not status.startswith(TESTED):
            assert len(status.split(": ", 1)[1]) > 20, (rule, "a reason in one line")


def check_tested_files(found: dict[str, tuple[str, str]]) -> None:
    """Every row marked tested names test files, and each of them cites the rule (by
    :func:`cited`: not only through a wide range in its module docstring)."""
    for rule, (_, status) in found.items():
        if not status.startswith(TESTED):
            continue
        files = tested_files(status)
        assert files, f"{rule} names no test file"
        missing = [name for name in files if rule not in cited_by(name)]
        assert not missing, f"{rule} is not cited by {missing}"
