"""The canonical tag form (see tags.lark): written by ``render``, read fast by ``read_pairs``.

The scanner's canonical shortcut (a ``CANONICAL_TAG`` match read by ``read_pairs``) is for the
common clean tag. It must give exactly what the grammar gives for the same span;
tests/tagparse/test_tag_properties.py checks that differentially.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from functools import lru_cache
from typing import TYPE_CHECKING, Final

from tagparse.grammar import TAG_KINDS

if TYPE_CHECKING:
    from tagparse.model import Tag

Pairs = tuple[tuple[str, str], ...]

_KEY: Final = re.compile(r"[a-z_][a-z0-9_]*")
# The six escapes the writer uses (tags.lark, CANONICAL FORM).
_ESCAPES: Final = str.maketrans({"\\": "\\\\", '"': '\\"', "[": "\\[", "]": "\\]", "\n": "\\n",
                                 "\r": "\\r"})
# What a backslash pair reads as. Other pairs are repairs (Lark path only).
UNESCAPES: Final[dict[str, str]] = {"\\": "\\", '"': '"', "[": "[", "]": "]", "n": "\n", "r": "\r"}

# Unrolled ("normal* (special normal*)*"): one possessive run per stretch between escapes.
_VALUE: Final = r'[^"\\\n\r\[]*+(?:\\[\\"\[\]nr][^"\\\n\r\[]*+)*+'
_ATTRIBUTES: Final = rf'(?: [a-z_][a-z0-9_]*="{_VALUE}")*+'
_KINDS: Final = "|".join(sorted(TAG_KINDS))
CANONICAL_REST: Final = rf"({_KINDS}):({_ATTRIBUTES})(?: \|({_ATTRIBUTES}))?\]"
"""A canonical tag after its "["; groups: kind, request attributes, answer attributes (or None)."""
CANONICAL_TAG: Final = r"\[" + CANONICAL_REST
"""A whole canonical tag, with the groups of ``CANONICAL_REST``."""
# The most attributes a section (request or answer) may have for the scanner's shortcut, which
# proves with back-references that no key repeats; a longer tag takes the regex reader.
_MOST_ATTRIBUTES: Final = 8


def _distinct_attributes(first_group: int) -> str:
    """Up to ``_MOST_ATTRIBUTES`` canonical attributes, each key a group numbered from
    ``first_group`` that a negative look-ahead keeps unlike every earlier key of the section."""
    pattern = ""
    for index in reversed(range(_MOST_ATTRIBUTES)):
        earlier = "|".join(rf"\{first_group + j}=" for j in range(index))
        guard = f"(?!{earlier})" if earlier else ""
        pattern = f'(?: {guard}([a-z_][a-z0-9_]*+)="{_VALUE}"{pattern})?+'
    return pattern


DISTINCT_CANONICAL_REST: Final = (
    rf"({_KINDS}):{_distinct_attributes(2)}"
    rf"(?: \|{_distinct_attributes(2 + _MOST_ATTRIBUTES)})?\]"
)
"""A canonical tag after its "[" that reads without any diagnostic: no key repeats within
the request or the answer. Group 1 is the kind; the other groups are internal."""
_CANONICAL: Final = re.compile(CANONICAL_TAG)
_ATTRIBUTE: Final = re.compile(rf' ([a-z_][a-z0-9_]*)="({_VALUE})"')
_ESCAPE: Final = re.compile(r"\\(.)")


def escape(value: str) -> str:
    """Write ``value`` for the inside of a double-quoted attribute value."""
    return value.translate(_ESCAPES)


def _unescape_pair(pair: re.Match[str]) -> str:
    return UNESCAPES[pair.group(1)]


def render(
    kind: str, attrs: Iterable[tuple[str, str]], answer: Iterable[tuple[str, str]] | None = None
) -> str:
    """Write a tag in canonical form, e.g. ``[inventory: action="add" item="Hand axe"]``.

    Raises ValueError for a kind outside TAG_KINDS or a key that is not ``[a-z_][a-z0-9_]*``,
    since such a tag could not be read back.
    """
    if kind not in TAG_KINDS:
        raise ValueError(f"unknown tag kind {kind!r}")
    parts = ["[", kind, ":"]
    _write_pairs(parts, attrs)
    if answer is not None:
        parts.append(" |")
        _write_pairs(parts, answer)
    parts.append("]")
    return "".join(parts)


def _write_pairs(parts: list[str], pairs: Iterable[tuple[str, str]]) -> None:
    for key, value in pairs:
        if _KEY.fullmatch(key) is None:
            raise ValueError(f"attribute key {key!r} is not [a-z_][a-z0-9_]*")
        parts += (" ", key, '="', value.translate(_ESCAPES), '"')


def render_tag(tag: Tag) -> str:
    """The canonical form of a read tag; a malformed tag has none and keeps its raw text."""
    if tag.malformed is not None:
        return tag.raw
    return render(tag.kind, tag.attrs, tag.answer)


def read_pairs(source: str) -> Pairs | None:
    """Attribute pairs of a canonical attribute list, or None when a key repeats."""
    if not source:
        return ()
    pairs = _ATTRIBUTE.findall(source)
    if len(pairs) > 1 and len(dict(pairs)) < len(pairs):
        return None  # duplicate-attribute is a repair: the grammar's reading reports it
    if "\\" in source:
        return tuple([(key, _ESCAPE.sub(_unescape_pair, value)) for key, value in pairs])
    return tuple(pairs)


@lru_cache(maxsize=4096)
def read_canonical(raw: str) -> tuple[Pairs, Pairs | None]:
    """Request and answer attributes of a whole canonical tag with no repeated key (one the
    scanner's shortcut matched), read when the engine first asks for them."""
    match = _CANONICAL.fullmatch(raw)
    assert match is not None, raw
    attrs = read_pairs(match.group(2))
    answer = None if match.group(3) is None else read_pairs(match.group(3))
    assert attrs is not None and (answer is not None or match.group(3) is None), raw
    return attrs, answer

