"""Snapshots of the fold, so a new reply folds only what is new (docs/design.md "State, snapshots
and scale").

A chat is a chain of turns (player and GM messages; system messages never change the state).
Position ``i`` of a chat has a chain hash: the hash of (engine version, ruleset digest, game seed,
start state) for position 0, and ``H(chain[i-1], turn i)`` after it, so a chain hash names a whole
transcript prefix. At each position the cache keeps a snapshot: the state, how many GM replies the
prefix holds (the turn number of the next reply) and the answers of the latest GM reply.

The store behind it is one small protocol (:class:`Store`): an in-process LRU by default, or
Redis, shared by every process. A missing, corrupt or stale entry is only a miss; a store that is
down is logged once and the fold recomputes, so a request never fails because of the cache.

Re-anchoring: chat front ends drop the oldest messages once the context is full. A chat's state
must never come from another chat (docs/design.md "Interfaces"), so a chat whose front is missing
continues from an earlier chat only on evidence that another chat cannot give by sharing a line:
the cache remembers, per game, each *window* of a chat (the fewest consecutive turns from a turn
on that hold at least :data:`WINDOW_TURNS` turns and :data:`WINDOW_REPLIES` GM replies) with the
chain hash before it, or that it was seen at two different places; and, for each position, that a
turn followed it. A request re-anchors where one of its first windows was seen at exactly one
place, when the earlier chat holds every turn of the request from there on but its last
:data:`TAIL_TURNS`, and ended where the request goes on. Anything weaker is folded from the party
file. Whether a chat is ``anchored`` is read from the chat itself: its GM replies' recorded answer
parts must be what the fold gives them, else its front (or the ruleset) is not what they were
answered with.

One module per job, each importing only those before it: :mod:`~replay.cache.stores` (where
entries are kept), :mod:`~replay.cache.positions` (chain hashes and windows),
:mod:`~replay.cache.snapshots` (the snapshot cache) and :mod:`~replay.cache.incremental` (the
fold from the longest cached prefix, and re-anchoring). Their public names are importable from
here.
"""

from .incremental import Budget, FoldOutcome, OverBudget, fold_turns
from .positions import LOOKUP_BATCH, PositionKeys, SharedPrefixSequence, common_prefix, game_scope
from .snapshots import MAX_PENDING, Snapshot, SnapshotCache, reply_position
from .stores import (
    AMBIGUOUS,
    DEFAULT_CACHE_MB,
    DEFAULT_NEAR_MB,
    DEFAULT_TTL,
    ENTRY_OVERHEAD,
    RETRY_AFTER,
    LayeredStore,
    MemoryStore,
    RedisStore,
    Store,
    open_store,
    redis_client,
    store_usage,
)

__all__ = [
    "AMBIGUOUS", "DEFAULT_CACHE_MB", "DEFAULT_NEAR_MB", "DEFAULT_TTL", "ENTRY_OVERHEAD",
    "LOOKUP_BATCH", "MAX_PENDING", "RETRY_AFTER", "Budget", "FoldOutcome", "LayeredStore",
    "MemoryStore", "OverBudget", "PositionKeys", "RedisStore", "SharedPrefixSequence", "Snapshot",
    "SnapshotCache", "Store", "common_prefix", "fold_turns", "game_scope", "open_store",
    "redis_client", "reply_position", "store_usage",
]
