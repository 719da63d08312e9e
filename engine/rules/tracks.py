"""Health and wound tracks on the sheet (docs/rules/items.md#1-glossary "track", ITM-OUT-3,
ITM-OUT-11, ITM-ABIL-6): how full a track is, the wound penalty it gives, and what a heal mends.

A character's ``tracks`` hold points for a ``health`` track and marks taken for a ``wounds``
track; a track the character never set is full (health) or unmarked (wounds). Every read holds
the stored number to ``0..max``, so a party file or an old state can never push a track past
its bounds.
"""

from __future__ import annotations

import math
from collections.abc import Iterator

from ..ruleset.sheet import MAX_TRACK, Pool, Track, WoundPenalty
from .game import Game
from .sheet import SheetView
from .state import Character, State


def track_max(game: Game, character: Character, state: State | None, track: Track) -> int:
    """ITM-ABIL-6: the track's max, from the sheet alone (no item shifts it), 0..1000."""
    value = SheetView(game, character, state, items_apply=False).value(track.max)
    return min(max(math.floor(value), 0), MAX_TRACK)


def track_value(game: Game, character: Character, state: State | None, track: Track) -> int:
    """Points on a health track or marks on a wound track, held to ``0..max``; unset: full
    health, no marks."""
    most = track_max(game, character, state, track)
    stored = character.tracks.get(track.id)
    if stored is None:
        return most if track.kind == "health" else 0
    return min(max(stored, 0), most)


def penalty_for(track: Track, marks: int) -> WoundPenalty | None:
    """ITM-OUT-11: the wound penalty of ``marks`` — the row with the highest ``atLeast`` met."""
    met = [row for row in track.penalties if row.at_least <= marks]
    return max(met, key=lambda row: row.at_least) if met else None


def wound_penalties(game: Game, state: State,
                    character: Character) -> Iterator[tuple[Track, WoundPenalty]]:
    """Every wound track of the character with the penalty its marks give (a character
    without marks has none, and nothing is computed for it)."""
    if not character.tracks:
        return
    for track in game.ruleset.live.tracks:
        if track.kind != "wounds" or not track.penalties or not character.tracks.get(track.id):
            continue
        row = penalty_for(track, track_value(game, character, state, track))
        if row is not None:
            yield track, row


def health_pool(game: Game) -> Pool | None:
    """The ruleset's health pool, if it has one (at most one, checked at load)."""
    return next((p for p in game.ruleset.live.pools if p.health), None)


def health_bar(game: Game) -> Pool | Track | None:
    """ITM-OUT-3: what a heal mends — the health pool, else the health track, else the first
    wound track (at most one health pool or health track, checked at load)."""
    live = game.ruleset.live
    pool = health_pool(game)
    if pool is not None:
        return pool
    health = next((t for t in live.tracks if t.kind == "health"), None)
    return health or next((t for t in live.tracks if t.kind == "wounds"), None)

