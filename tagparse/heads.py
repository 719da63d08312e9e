"""Tags a model meant but wrote under a wrong head, read as the tags they are.

A small model writes the tags it is shown with their heads mangled: a stray letter before the
head (``[RInventory: action="add" …]``, ``[Agive: …]``, ``[B Equip: …]``), the action as the head
(``[Pay: amount="2 pennies"]``, ``[give: item="Rope" to="Bram"]``), or any head before an
``action=``/``op=`` that names one (``[A: action="equip" …]``, ``[Battle: op="start" …]``).
gmtags does not read those brackets, so the player's story goes on as if they were answered.

:func:`mend` rewrites such a bracket to the tag it stands for when it can be only that tag: its
attributes parse as a tag's, every one of them is an attribute that tag reads, and the head is
a known kind or action name with at most :data:`JUNK` characters before it, or the bracket
names a known action in the attribute that selects it. Anything else is left as it is. The
names and what each action reads are given (:class:`Vocabulary`): this module knows the tag
syntax only; the engine knows its actions.

The stage mends a reply before its tags are read, so the player's text and the saved chat hold
the tag in its proper form, and a replay reads what was answered live.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from tagparse.scanner import scan

JUNK: Final = 2
"""Characters a model may put before a head (``[RInventory:``, ``[Agive:``): more is a word."""

# A head may be two words (``[B Equip:``): the first is then the stray letters.
_BRACKET: Final = re.compile(
    r"\[[ \t]*([A-Za-z_][A-Za-z0-9_]*(?:[ \t]+[A-Za-z_][A-Za-z0-9_]*)?)[ \t]*:([^\[\]\n\r]*)\]")


@dataclass(frozen=True, slots=True)
class Vocabulary:
    """The tags there are: for each ``(kind, action)`` (action None for a kind without one)
    the attributes it reads; and for each kind with actions, the attribute naming the action
    (``action`` for inventory, ``op`` for combat)."""

    reads: Mapping[tuple[str, str | None], frozenset[str]]
    selector: Mapping[str, str]

    def kinds(self) -> set[str]:
        return {kind for kind, _ in self.reads}

    def actions(self) -> dict[str, list[tuple[str, str]]]:
        """Each action's name and the kinds that have it (with their selector attribute)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for kind, action in self.reads:
            if action is not None and kind in self.selector:
                found.setdefault(action, []).append((kind, self.selector[kind]))
        return found


@dataclass(frozen=True, slots=True)
class Mend:
    """One bracket read as a tag: ``wrote`` as the model wrote it, ``read`` as it now stands."""

    start: int
    end: int
    wrote: str
    read: str


def _reads(vocabulary: Vocabulary, kind: str) -> frozenset[str]:
    """What any tag of ``kind`` reads."""
    return frozenset().union(*(r for (k, _), r in vocabulary.reads.items() if k == kind))


def _attributes(body: str) -> list[str] | None:
    """The attribute names of a bracket's body when it reads as a well-formed tag's, else
    None (prose, a state line, a broken quote)."""
    found = scan(f"[loot: {body.strip()}]")
    if len(found.tags) != 1 or found.tags[0].malformed is not None:
        return None
    names = [name for name, _ in found.tags[0].attrs]
    return names or None


def _meant(head: str, names: list[str], body: str,
           vocabulary: Vocabulary) -> tuple[str, str | None] | None:
    """The kind, and the action to write first (None: the body names it), that a bracket
    with ``head`` and attributes ``names`` stands for; None when it is not one tag for sure."""
    word = "".join(head.split()).casefold()
    actions = vocabulary.actions()
    for kind in sorted(vocabulary.kinds(), key=len, reverse=True):
        if word.endswith(kind) and len(word) - len(kind) <= JUNK:
            return (kind, None) if set(names) <= _reads(vocabulary, kind) else None
    for action, owners in sorted(actions.items(), key=lambda item: -len(item[0])):
        if len(owners) == 1 and word.endswith(action) and len(word) - len(action) <= JUNK:
            kind, selector = owners[0]
            if selector in names:
                return None  # [Pay: action="earn"]: which is meant is not sure
            return (kind, action) if set(names) <= vocabulary.reads[(kind, action)] else None
    for selector in sorted(set(vocabulary.selector.values())):
        if selector not in names:
            continue
        value = scan(f"[loot: {body.strip()}]").tags[0].get(selector) or ""
        owners = actions.get(value.strip().casefold(), [])
        kinds = [kind for kind, chosen in owners if chosen == selector]
        if len(kinds) == 1 and set(names) <= vocabulary.reads[(kinds[0],
                                                               value.strip().casefold())]:
            return (kinds[0], None)
    return None


def mend(text: str, vocabulary: Vocabulary) -> tuple[str, list[Mend]]:
    """``text`` with each bracket that stands for one tag under a wrong head rewritten as that
    tag (its attributes as written), and what was rewritten."""
    known = vocabulary.kinds()
    pieces: list[str] = []
    mends: list[Mend] = []
    at = 0
    inside: list[tuple[int, int]] | None = None  # the spans of the tags gmtags reads already
    for found in _BRACKET.finditer(text):
        head, body = found.group(1), found.group(2)
        if "".join(head.split()).casefold() in known:
            continue
        if inside is None:
            inside = [(tag.start, tag.end) for tag in scan(text).tags]
        if any(start < found.end() and found.start() < end for start, end in inside):
            continue  # a bracket written in a tag's quoted value is that value's text
        names = _attributes(body)
        if names is None:
            continue
        meant = _meant(head, names, body, vocabulary)
        if meant is None:
            continue
        kind, action = meant
        first = f'{vocabulary.selector[kind]}="{action}" ' if action is not None else ""
        read = f"[{kind}: {first}{body.strip()}]"
        pieces += [text[at:found.start()], read]
        mends.append(Mend(found.start(), found.end(), found.group(), read))
        at = found.end()
    if not mends:
        return text, []
    pieces.append(text[at:])
    return "".join(pieces), mends
