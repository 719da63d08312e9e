"""docs/items-rules.md (issue 44): every rule ID of spec/items.md has one row, tested (by test
files that cite it, tests/docs/rule_tables.py) or not applicable with a reason."""

from __future__ import annotations

from collections import Counter

from helpers import ROOT
from rule_tables import (
    scope,
)

DOC = ROOT / "docs/items-rules.md"
RULE = r"ITM-[A-Z0-9]+-\d+"
# the rule groups of spec/items.md and how many rules each has (ITM-USE, ITM-AMMO, ITM-CHG,
# ITM-MODE, ITM-ENTRY and ITM-BLOCK come back in later sections: their sums)
GROUPS = {
    "GEN": 4, "BLOCK": 25, "CUR": 9, "CAPS": 6, "CAT": 3, "ENTRY": 22, "SVC": 5, "TOG": 6,
    "INV": 6, "NAME": 3, "STACK": 3, "FREE": 9, "SHOW": 8, "SLOT": 3, "BIND": 4, "CARRY": 8,
    "PROP": 22, "CMD": 4, "ISTAT": 18, "CHK": 11, "WORN": 9, "ABIL": 6, "REQ": 6, "DEF": 13,
    "HIDES": 9, "WPN": 31, "AMMO": 11, "CLIP": 9, "MODE": 10, "OFF": 7, "FLOOR": 3, "ONHIT": 7,
    "PLUS": 8, "ARM": 9, "HARD": 4, "USE": 26, "CHG": 7, "RCHG": 7, "BRK": 4, "GATE": 9,
    "CLS": 19, "LOOT": 19, "MONEY": 11, "PAY": 10, "EARN": 3, "GEAR": 22, "MKT": 21,
    "PRICE": 6, "PLACE": 6, "BUY": 16, "DAY": 17, "SELL": 8, "MKTV": 3, "RISK": 3, "FAKE": 21,
    "TELL": 8, "INSP": 9, "NOTICE": 7, "SEE": 8, "FAKEV": 4, "OUT": 16,
}


def test_the_scope_is_every_rule_of_items_md_once() -> None:
    listed = scope(DOC, RULE)
    assert len(listed) == len(set(listed)) == 611
    counted = Counter(rule.split("-")[1] for rule in listed)
    assert dict(counted) == GROUPS
    for group, count in GROUPS.items():
        numbers = sorted(int(r.split("-")[2]) for r in listed if r.split("-")[1] == group)
        assert numbers == list(range(1, count + 1)), group
