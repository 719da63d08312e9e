"""Layers a game plays with: entries they hide and coins they take out of play."""

from __future__ import annotations

from .game import Game
from .state import State


def hidden_items(game: Game, state: State | None) -> frozenset[str]:
    """Catalog references (``<catalog>/<entry>``) the game's layers hide (ITM-INV-5)."""
    if state is None or not state.layers:
        return frozenset()
    return frozenset(ref for layer in game.ruleset.layers if layer.id in state.layers
                     for ref in layer.hides)


def removed_coins(game: Game, state: State | None) -> frozenset[str]:
    """Coins the game's layers take out of play (ITM-LOOT-10, v1.64)."""
    if state is None or not state.layers:
        return frozenset()
    return frozenset(coin for layer in game.ruleset.layers if layer.id in state.layers
                     for coin in layer.coins)
