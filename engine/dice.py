"""Dice for the game: deterministic random streams and dice notation.

Every die gmtags rolls comes from a :class:`Stream` derived from ``(game seed, turn key,
stream name)`` with BLAKE2b in counter mode (docs/design.md#determinism). The derivation is part
of the replay contract: recorded games replay to the same numbers on every machine and Python
version, so the golden vectors in ``tests/engine/test_dice.py`` pin it and any change to this
module that moves a single number is a breaking change.

Derivation, version 1:

* each part (seed, every component of the turn key, the stream name) is UTF-8 encoded and
  prefixed with its length as 8 bytes big-endian; the parts are concatenated after the domain
  ``b"gmtags/dice/v1"`` and the part count (8 bytes big-endian);
* block *i* (0, 1, 2, ...) of the stream is ``blake2b(material + i as 8 bytes big-endian,
  digest_size=64)``; the stream is the concatenation of the blocks;
* ``below(n)`` takes ``ceil(bits(n-1) / 8)`` bytes big-endian, masks them to ``bits(n-1)`` bits
  and rejects values ``>= n`` (integer rejection sampling: exact, no floats, no modulo bias).
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass

_DOMAIN = b"gmtags/dice/v1"
_BLOCK = 64

# Limits on what a tag or a ruleset may ask the dice for; larger requests are refused, never
# rolled (nothing a model writes may make gmtags allocate or loop without bound).
MAX_DICE = 100
MAX_SIDES = 1000
MAX_MODIFIER = 1_000_000


def _material(parts: Sequence[str]) -> bytes:
    out = bytearray(_DOMAIN)
    out += len(parts).to_bytes(8, "big")
    for part in parts:
        encoded = part.encode("utf-8")
        out += len(encoded).to_bytes(8, "big")
        out += encoded
    return bytes(out)


class Stream:
    """An independent, reproducible sequence of dice for one purpose in one turn."""

    __slots__ = ("_buffer", "_counter", "_material", "_pos")

    def __init__(self, seed: str, turn_key: Sequence[str | int], name: str) -> None:
        self._material = _material([seed, *(str(part) for part in turn_key), name])
        self._counter = 0
        self._buffer = b""
        self._pos = 0

    def _take(self, count: int) -> bytes:
        while len(self._buffer) - self._pos < count:
            block = hashlib.blake2b(
                self._material + self._counter.to_bytes(8, "big"), digest_size=_BLOCK
            ).digest()
            self._counter += 1
            self._buffer = self._buffer[self._pos :] + block
            self._pos = 0
        chunk = self._buffer[self._pos : self._pos + count]
        self._pos += count
        return chunk

    def below(self, n: int) -> int:
        """A uniform whole number in ``0..n-1``."""
        if n < 1:
            raise ValueError(f"below() needs n >= 1, got {n}")
        if n == 1:
            return 0
        bits = (n - 1).bit_length()
        width = (bits + 7) // 8
        mask = (1 << bits) - 1
        while True:
            value = int.from_bytes(self._take(width), "big") & mask
            if value < n:
                return value

    def die(self, sides: int) -> int:
        """One die with faces ``1..sides``."""
        return self.below(sides) + 1

    def pick(self, weights: Sequence[int]) -> int:
        """The index of one entry, chosen with probability proportional to its whole weight."""
        total = sum(weights)
        if total < 1 or any(w < 0 for w in weights):
            raise ValueError("pick() needs non-negative weights with a positive total")
        point = self.below(total)
        for index, weight in enumerate(weights):
            if point < weight:
                return index
            point -= weight
        raise AssertionError("unreachable: point < total")


@dataclass(frozen=True, slots=True)
class DiceExpr:
    """``count`` dice of ``sides`` faces plus ``modifier``; ``count == 0`` is a constant."""

    count: int
    sides: int
    modifier: int = 0

    @property
    def lowest(self) -> int:
        return self.count + self.modifier

    @property
    def highest(self) -> int:
        return self.count * self.sides + self.modifier

    def __str__(self) -> str:
        if self.count == 0:
            return str(self.modifier)
        text = f"{self.count}d{self.sides}"
        if self.modifier > 0:
            text += f"+{self.modifier}"
        elif self.modifier < 0:
            text += f"-{-self.modifier}"
        return text


@dataclass(frozen=True, slots=True)
class DiceRoll:
    """What a dice expression rolled: the faces in the order drawn, and the total."""

    expr: DiceExpr
    faces: tuple[int, ...]
    total: int


_NOTATION = re.compile(
    r"\s*(?:(\d{1,7})?\s*[dD]\s*(\d{1,7})\s*(?:([+-])\s*(\d{1,8}))?|([+-]?\d{1,8}))\s*"
)


def parse_dice(text: str) -> DiceExpr | str:
    """Read ``NdS``, ``dS``, ``NdS+K``, ``NdS-K`` or a whole constant.

    Returns the expression, or a one-line reason why it is not dice gmtags will roll (bad
    notation, or beyond :data:`MAX_DICE` / :data:`MAX_SIDES` / :data:`MAX_MODIFIER`).
    """
    if len(text) > 64:
        return "dice notation is longer than 64 characters"
    match = _NOTATION.fullmatch(text)
    if match is None:
        return f'"{text}" is not dice notation (write e.g. 2d6, 1d8+1 or 3)'
    count_s, sides_s, sign, mod_s, const_s = match.groups()
    if const_s is not None:
        value = int(const_s)
        if abs(value) > MAX_MODIFIER:
            return f"a constant is at most {MAX_MODIFIER}"
        return DiceExpr(0, 1, value)
    count = int(count_s) if count_s is not None else 1
    sides = int(sides_s)
    modifier = int(mod_s or 0) * (-1 if sign == "-" else 1)
    if not 1 <= count <= MAX_DICE:
        return f"between 1 and {MAX_DICE} dice can be rolled at once, not {count}"
    if not 1 <= sides <= MAX_SIDES:
        return f"a die has between 1 and {MAX_SIDES} sides, not {sides}"
    if abs(modifier) > MAX_MODIFIER:
        return f"a modifier is at most {MAX_MODIFIER}"
    return DiceExpr(count, sides, modifier)


def roll(expr: DiceExpr, stream: Stream) -> DiceRoll:
    """Roll ``expr`` from ``stream``: faces drawn one die at a time, in order."""
    faces = tuple(stream.die(expr.sides) for _ in range(expr.count))
    return DiceRoll(expr, faces, sum(faces) + expr.modifier)
