"""Text still arriving: where the first tag that more text could change begins (the HTTP
stage holds back the text from there)."""

from __future__ import annotations

import pytest

import tagparse


@pytest.mark.parametrize(("text", "expected"), [
    ("plain", 5), ("a [", 2), ("a [inv", 2), ("a [sighs", 8), ("a [inventory ", 2),
    ("a [inventory: x", 2), ('a [inventory: x="1"] b', 22), ("a [ski", 2), ("a [zz", 5),
    ('a [inventory: item="unclosed\nnext', 33),
])
def test_what_is_held_back(text: str, expected: int) -> None:
    assert tagparse.unfinished_tag(text) == expected
