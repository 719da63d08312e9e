"""Where the snapshot cache keeps its entries: one small protocol (:class:`Store`) and its
backends, an in-process LRU bounded in bytes, Redis (also Cluster and Sentinel) shared by every
process, and the in-process layer in front of Redis (docs/design.md "State, snapshots and
scale"). A store that is down is logged once and left alone for a while: the fold recomputes,
so a request never fails because of the cache."""

from __future__ import annotations

import logging
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Protocol
from urllib.parse import unquote, urlsplit

log = logging.getLogger("gmtags.cache")

PREFIX = "gmtags:"
AMBIGUOUS = b"*"  # a window's value once it was seen at two different places
DEFAULT_CACHE_MB = 256  # the in-process store's bound, in MiB of keys and values
ENTRY_OVERHEAD = 200  # bytes an entry of the in-process store costs besides the characters of
# its key and value: the str and bytes headers (~80) and the ordered dict's slot and node (~100)
DEFAULT_NEAR_MB = 32  # with Redis: the in-process layer in front of it, per process
DEFAULT_TTL = 7 * 24 * 3600  # seconds a Redis entry lives after it was last written
RETRY_AFTER = 5.0  # seconds a store that failed is left alone before it is tried again


def claimed(held: bytes | None, value: bytes) -> bytes:
    """What a window key holds once ``value`` is claimed for it while it holds ``held``."""
    return value if held is None or held == value else AMBIGUOUS


class Store(Protocol):
    """Where snapshots live: bytes by string key. Misses are ``None``; nothing here raises."""

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]: ...

    def put_many(self, items: Mapping[str, bytes]) -> None: ...

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        """Set each key that is missing to its value; a key that holds another value becomes
        :data:`AMBIGUOUS` (so a window seen at two places stays known as such)."""


class MemoryStore:
    """The default store: a thread-safe in-process LRU bounded in bytes (keys, values and
    :data:`ENTRY_OVERHEAD` per entry), least recently used first out."""

    def __init__(self, max_bytes: int = DEFAULT_CACHE_MB * 1024 * 1024) -> None:
        self.max_bytes = max_bytes
        self.size = 0  # bytes held now, as counted against max_bytes
        self._items: OrderedDict[str, bytes] = OrderedDict()
        self._lock = threading.Lock()

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        found: list[bytes | None] = []
        with self._lock:
            for key in keys:
                value = self._items.get(key)
                if value is not None:
                    self._items.move_to_end(key)
                found.append(value)
        return found

    def _set(self, key: str, value: bytes) -> None:
        old = self._items.get(key)
        if old is not None:
            self.size -= len(old)
        else:
            self.size += len(key) + ENTRY_OVERHEAD
        self._items[key] = value
        self._items.move_to_end(key)
        self.size += len(value)

    def _trim(self) -> None:
        while self.size > self.max_bytes and self._items:
            key, value = self._items.popitem(last=False)
            self.size -= len(key) + len(value) + ENTRY_OVERHEAD

    def put_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                self._set(key, value)
            self._trim()

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        with self._lock:
            for key, value in items.items():
                old = self._items.get(key)
                self._set(key, claimed(old, value))
            self._trim()

    def clear(self) -> None:
        """Forget everything (a restarted server)."""
        with self._lock:
            self._items.clear()
            self.size = 0

    def usage(self) -> dict[str, int]:
        """Bytes held now (as counted against the bound), the bound, and entries."""
        with self._lock:
            return {"bytes": self.size, "maxBytes": self.max_bytes,
                    "entries": len(self._items)}

    def __len__(self) -> int:
        return len(self._items)


CLUSTER_SCHEME = "redis+cluster"
SENTINEL_SCHEME = "redis+sentinel"


def redis_client(url: str, timeout: float) -> Any:
    """A redis-py client for ``url``, through redis-py's own clients:

    - ``redis://``, ``rediss://``, ``unix://``: one server (``Redis.from_url``);
    - ``redis+cluster://[user:password@]host:port[,host:port...]``: a Redis Cluster
      (``RedisCluster``, those nodes its startup nodes; it finds the others itself);
    - ``redis+sentinel://[user:password@]host:port[,host:port...]/service[/db]``: the master
      the Sentinels name ``service`` (``Sentinel.master_for``, which follows a failover); the
      user and password are the master's.

    Nothing connects here: a cluster's client is made on first use (its constructor asks the
    nodes for the slots)."""
    import redis  # lazy: only the Redis backend needs the package

    scheme, nodes, path, options = _many_hosts(url)
    if scheme not in (CLUSTER_SCHEME, SENTINEL_SCHEME):
        return redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    options = {**options, "socket_timeout": timeout, "socket_connect_timeout": timeout}
    if scheme == CLUSTER_SCHEME:
        from redis.cluster import ClusterNode, RedisCluster

        startup = [ClusterNode(host, port) for host, port in nodes]  # type: ignore[no-untyped-call]
        return RedisCluster(startup_nodes=startup, **options)
    from redis.sentinel import Sentinel

    service, _, db = path.strip("/").partition("/")
    sentinels = Sentinel(  # type: ignore[no-untyped-call]
        nodes, socket_timeout=timeout, socket_connect_timeout=timeout)
    return sentinels.master_for(service, db=int(db or 0), **options)  # type: ignore[no-untyped-call]


def _many_hosts(url: str) -> tuple[str, list[tuple[str, int]], str, dict[str, Any]]:
    """(scheme, hosts, path, user and password) of a ``redis+cluster://`` or
    ``redis+sentinel://`` URL; raises ValueError when it is malformed. Any other URL is
    (scheme, [], "", {}): redis-py reads it."""
    scheme, _, rest = url.partition("://")
    if scheme not in (CLUSTER_SCHEME, SENTINEL_SCHEME):
        return scheme, [], "", {}
    netloc, _, path = rest.partition("/")
    credentials, _, hosts = netloc.rpartition("@")
    username, _, password = credentials.partition(":")
    nodes = [_host_port(host) for host in hosts.split(",") if host]
    if not nodes:
        raise ValueError(f"{scheme}:// needs at least one host:port")
    if scheme == SENTINEL_SCHEME:
        service, _, db = path.strip("/").partition("/")
        if not service:
            raise ValueError(f"{scheme}://hosts/<service> names the master's service")
        if db and not db.isdigit():
            raise ValueError(f"{scheme}://hosts/{service}/<db>: the db is a number, not {db!r}")
    return scheme, nodes, path, {"username": unquote(username) or None,
                                 "password": unquote(password) or None}


def _host_port(text: str) -> tuple[str, int]:
    """``host:port`` (``[::1]:port`` for IPv6; the port defaults to 6379, 26379 is a
    Sentinel's: give it) as (host, port)."""
    parsed = urlsplit(f"//{text}")
    if parsed.hostname is None:
        raise ValueError(f"{text!r} is not host:port")
    return parsed.hostname, parsed.port or 6379


class RedisStore:
    """Redis, shared by every gmtags process; entries expire ``ttl`` seconds after writing.

    One server, a Sentinel-watched master or a Redis Cluster (:func:`redis_client`). In a
    cluster no command spans two hash slots: lookups go through ``mget_nonatomic`` (one MGET
    per slot) and writes are pipelines of one-key commands, so the keys need no hash tags and
    spread over every node (a chat's positions are hashes: they fall on any slot).

    Redis being down is never an error: the first failure is logged (without the URL, which may
    hold a password), lookups miss and writes are dropped; the server is tried again after
    :data:`RETRY_AFTER` seconds, and its return is logged too.
    """

    def __init__(self, url: str, ttl: int = DEFAULT_TTL, timeout: float = 0.5,
                 clock: Callable[[], float] | None = None) -> None:
        import redis  # lazy: only the Redis backend needs the package
        from redis.exceptions import RedisClusterException

        self._errors: tuple[type[BaseException], ...] = (
            redis.RedisError, RedisClusterException, OSError)
        self._url = url
        self._timeout = timeout
        self._client: Any = None
        self.cluster = _many_hosts(url)[0] == CLUSTER_SCHEME  # raises for a malformed URL
        if not self.cluster:
            self._client = redis_client(url, timeout)
        self.ttl = ttl
        self._clock = clock or (lambda: time.monotonic())  # looked up per call: freezegun
        self._down_since: float | None = None
        self._lock = threading.Lock()

    @property
    def client(self) -> Any:
        """The redis-py client (made on first use for a cluster; raises when none answers)."""
        if self._client is None:
            self._client = redis_client(self._url, self._timeout)
        return self._client

    @property
    def down(self) -> bool:
        return self._down_since is not None

    def _usable(self) -> bool:
        with self._lock:
            return self._down_since is None or self._clock() - self._down_since >= RETRY_AFTER

    def _failed(self, error: BaseException) -> None:
        with self._lock:
            if self._down_since is None:
                log.warning("snapshot cache: Redis unavailable (%s); recomputing from the "
                            "transcript until it is back", type(error).__name__)
            self._down_since = self._clock()

    def _worked(self) -> None:
        if self._down_since is not None:
            with self._lock:
                if self._down_since is not None:
                    log.warning("snapshot cache: Redis is back")
                self._down_since = None

    def _mget(self, keys: list[str]) -> list[Any]:
        client = self.client
        values: list[Any] = client.mget_nonatomic(keys) if self.cluster else client.mget(keys)
        return values

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        if not keys or not self._usable():
            return [None] * len(keys)
        try:
            values = self._mget(list(keys))
        except self._errors as error:
            self._failed(error)
            return [None] * len(keys)
        self._worked()
        return [v if isinstance(v, bytes) else None for v in values]

    def get_lasting(self, keys: Sequence[str]) -> list[tuple[bytes, float] | None]:
        """Each key's value and the seconds it has left in Redis (GET and PTTL), or None."""
        if not keys or not self._usable():
            return [None] * len(keys)
        try:
            pipe = self.client.pipeline(transaction=False)
            for key in keys:
                pipe.get(key)
                pipe.pttl(key)
            replies = pipe.execute()
        except self._errors as error:
            self._failed(error)
            return [None] * len(keys)
        self._worked()
        found: list[tuple[bytes, float] | None] = []
        for value, left in zip(replies[::2], replies[1::2], strict=True):
            # PTTL -1: no expiry (written by something else); -2: gone since the GET
            lasting = isinstance(value, bytes) and isinstance(left, int) and left != -2
            found.append((value, self.ttl if left == -1 else left / 1000) if lasting else None)
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        if not items or not self._usable():
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for key, value in items.items():
                pipe.set(key, value, ex=self.ttl)
            pipe.execute()
        except self._errors as error:
            self._failed(error)
            return
        self._worked()

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        """SET NX each key; where another value is there, it becomes AMBIGUOUS (two writers of
        two values race only to the same AMBIGUOUS)."""
        if not items or not self._usable():
            return
        try:
            pipe = self.client.pipeline(transaction=False)
            for key, value in items.items():
                pipe.set(key, value, ex=self.ttl, nx=True)
            taken = pipe.execute()
            held = [key for key, done in zip(items, taken, strict=True) if not done]
            if held:
                values = self._mget(held)
                pipe = self.client.pipeline(transaction=False)
                for key, value in zip(held, values, strict=True):
                    if value == items[key]:
                        pipe.expire(key, self.ttl)
                    else:
                        pipe.set(key, AMBIGUOUS, ex=self.ttl)
                pipe.execute()
        except self._errors as error:
            self._failed(error)
            return
        self._worked()


def _lasting(key: str) -> bool:
    """Whether a key's value, once written, is the only value it ever holds: a snapshot (named
    by its chain position, a reply's too) or a state (named by its digest). Windows become
    AMBIGUOUS and ``next`` marks are read only to decide a re-anchoring, so those are always
    Redis's."""
    return key.startswith((f"{PREFIX}snap:", f"{PREFIX}state:", f"{PREFIX}reply:"))


class LayeredStore:
    """Redis with a small in-process LRU of this process in front of it (each worker's own).

    Only :func:`_lasting` keys are kept near, each no longer than Redis keeps it (its PTTL when
    read from Redis, the TTL when written), so a near hit is a value Redis holds too (unless
    Redis lost it: a restart without persistence, a write while it was down). A snapshot is
    the fold of the prefix its key names, so a hit only saves folding again; windows and
    ``next`` marks, which decide re-anchoring, are always Redis's. Which worker answers thus
    changes how much is reused, never the answer. With Redis down, the near layer still
    answers and takes what is written.
    """

    def __init__(self, far: RedisStore, near_bytes: int,
                 clock: Callable[[], float] | None = None) -> None:
        self.far = far
        self.near = MemoryStore(near_bytes)
        self._clock = clock or (lambda: time.monotonic())

    def _keep(self, items: Mapping[str, tuple[bytes, float]]) -> None:
        now = self._clock()
        self.near.put_many({key: struct.pack("<d", now + left) + value
                            for key, (value, left) in items.items()})

    def get_many(self, keys: Sequence[str]) -> list[bytes | None]:
        found: list[bytes | None] = [None] * len(keys)
        lasting = [at for at, key in enumerate(keys) if _lasting(key)]
        now = self._clock()
        for at, held in zip(lasting, self.near.get_many([keys[at] for at in lasting]),
                            strict=True):
            if held is not None and struct.unpack_from("<d", held)[0] > now:
                found[at] = held[8:]
        missing = [at for at in lasting if found[at] is None]
        if missing:
            read = self.far.get_lasting([keys[at] for at in missing])
            for at, value in zip(missing, read, strict=True):
                if value is not None:
                    found[at] = value[0]
            self._keep({keys[at]: value for at, value in zip(missing, read, strict=True)
                        if value is not None})
        others = [at for at, key in enumerate(keys) if not _lasting(key)]
        if others:
            for at, raw in zip(others, self.far.get_many([keys[at] for at in others]),
                               strict=True):
                found[at] = raw
        return found

    def put_many(self, items: Mapping[str, bytes]) -> None:
        self._keep({key: (value, self.far.ttl) for key, value in items.items()
                    if _lasting(key)})
        self.far.put_many(items)

    def claim_many(self, items: Mapping[str, bytes]) -> None:
        self.far.claim_many(items)


def store_usage(store: Store) -> dict[str, Any]:
    """What ``store`` holds in this process: ``{"store": "memory" or "redis", "bytes",
    "maxBytes", "entries"}`` of the in-process LRU (with Redis, the layer in front of it;
    Redis's own memory is Redis's to report)."""
    if isinstance(store, LayeredStore):
        return {"store": "redis", **store.near.usage()}
    if isinstance(store, MemoryStore):
        return {"store": "memory", **store.usage()}
    return {"store": type(store).__name__}


def open_store(redis_url: str | None, ttl: int = DEFAULT_TTL,
               cache_mb: int | None = None) -> Store:
    """Without a URL, the in-process LRU of ``cache_mb`` MiB (default
    :data:`DEFAULT_CACHE_MB`); else Redis at ``redis_url`` behind an in-process layer of
    ``cache_mb`` MiB (default :data:`DEFAULT_NEAR_MB`)."""
    if redis_url is None:
        return MemoryStore((cache_mb or DEFAULT_CACHE_MB) * 1024 * 1024)
    return LayeredStore(RedisStore(redis_url, ttl=ttl),
                        (cache_mb or DEFAULT_NEAR_MB) * 1024 * 1024)

