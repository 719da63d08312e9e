"""The canonical tag form (see tags.lark): written by ``render``, read fast by ``read_pairs``.

The scanner's canonical shortcut (a ``CANONICAL_TAG`` match read by ``read_pairs``) is for the
common clean tag. It must give exactly what the grammar gives for the same span;
tests/tagparse/test_tag_properties.py checks that differentially.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Final

from tagparse.grammar import TAG_KINDS
from tagparse.model import Tag

Pairs = tuple[tuple[str, str], ...]

_KEY: Final = re.compile(r"[a-z_][a-z0-9_]*")
# The five escapes the writer uses (tags.lark, CANONICAL FORM).
_ESCAPES: Final = str.maketrans({"\\": "\\\\", '"': '\\"', "[": "\\[", "\n": "\\n", "\r": "\\r"})
# What a backslash pair reads as; \] is accepted too. Other pairs are repairs (Lark path only).
UNESCAPES: Final[dict[str, str]] = {"\\": "\\", '"': '"', "[": "[", "]": "]", "n": "\n", "r": "\r"}

_VALUE: Final = r'(?:[^"\\\n\r\[]++|\\[\\"\[\]nr])*+'
_ATTRIBUTES: Final = rf'(?: [a-z_][a-z0-9_]*="{_VALUE}")*+'
_KINDS: Final = "|".join(sorted(TAG_KINDS))
CANONICAL_REST: Final = rf"({_KINDS}):({_ATTRIBUTES})(?: \|({_ATTRIBUTES}))?\]"
"""A canonical tag after its "["; groups: kind, request attributes, answer attributes (or None)."""
CANONICAL_TAG: Final = r"\[" + CANONICAL_REST
"""A whole canonical tag, with the groups of ``CANONICAL_REST``."""
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

