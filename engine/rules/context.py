"""What the engine knows about the turn it answers: the game seed and the turn's key."""

from __future__ import annotations

from dataclasses import dataclass

from ..dice import Stream


@dataclass(frozen=True, slots=True)
class TurnContext:
    """One GM reply's place in the game, and which tag of the reply is being answered.

    ``turn_key`` is (session index, GM-reply index) — plus the swipe index when the game rolls
    ``dice: per-swipe`` — so the k-th check of a turn rolls the same dice on every swipe
    (docs/design.md#determinism).
    """

    seed: str
    turn_key: tuple[int, ...]
    ordinal: int = 0  # the tag's position among the reply's tags of the same kind

    @property
    def turn_label(self) -> str:
        return ".".join(str(part) for part in self.turn_key)

    def for_tag(self, ordinal: int) -> TurnContext:
        if ordinal == self.ordinal:  # the first tag of a kind, in most replies the only one
            return self
        return TurnContext(self.seed, self.turn_key, ordinal)  # dataclasses.replace is slow

    def stream(self, kind: str, purpose: str) -> Stream:
        """The dice for ``purpose`` of the ``ordinal``-th tag of ``kind`` in this turn."""
        return Stream(self.seed, self.turn_key, f"{kind}/{self.ordinal}/{purpose}")
