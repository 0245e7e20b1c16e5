"""Fail-open access to the shared cache (Redis in production).

Everything these services keep in the cache can be computed again (a rendered report, a
counter that may reset), so a cache outage must cost speed, never a failed request, a failed
batch job or a rolled-back transaction. Every cache read, write and delete goes through the
functions here: each does what Django's cache API does when the cache answers, and when it does
not (connection refused, timeout, any Redis error) logs one warning, counts nothing and returns
what "not cached" means:

    get(key)                  -> the value, or `default` when missing or unreachable
    set(key, value, seconds)  -> True when stored, False when unreachable
    delete(key)               -> True when the call reached the cache (whether or not the key
                                 existed), False when unreachable
    incr(key, delta, seconds) -> the new count (starting the key at `delta` with a timeout
                                 when absent), or None when unreachable
    generation(key)           -> the current value of a generation counter, or None when
                                 unreachable (so: trust no copy made under any generation)
    generation_bump(key)      -> a new value for it; False when unreachable
    generation_changed(key)   -> generation_bump now and again when the transaction commits
    mark_once(key, seconds)   -> True when this call set the mark (absent before), False when
                                 it was there, None when unreachable
    lock_held(name, seconds)  -> a context manager: True while this call holds the lock across
                                 hosts, False when another holder has it or it is unreachable
    get_or_make(key, make, seconds)
                              -> the value, or make()'s, then kept; while one thread of the
                                 process makes a missing value, the others wait for it

`alias` picks another entry of the CACHES setting. Rate limits count through django-ratelimit
and fail open in shared/ratelimit.py.

`ProcessRedisCache` is the Redis backend both projects configure (shared/settings_base.py).
"""

import logging
import secrets
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import cached_property
from typing import Any, ClassVar

import redis
from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.redis import RedisCache, RedisCacheClient
from django.db import transaction
from redis.exceptions import LockError, RedisError

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors (ConnectionError, TimeoutError, ...)
# and the socket errors a client can let through.
UNREACHABLE = (RedisError, OSError)


class _ClientPerPool(RedisCacheClient):
    # Django builds a redis-py client for every command; building one (with its table of
    # response callbacks) cost more CPU than the command it sent. Clients are thread-safe.
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._clients: dict[int, Any] = {}

    def get_client(self, key: Any = None, *, write: bool = False) -> Any:
        # Django's RedisCacheClient members, which the stubs do not declare.
        pool = self._get_connection_pool(write)  # type: ignore[attr-defined]
        client = self._clients.get(id(pool))
        if client is None:
            client = self._clients[id(pool)] = self._client(connection_pool=pool)  # type: ignore[attr-defined]
        return client


class ProcessRedisCache(RedisCache):
    """Django's Redis cache with one client, so one connection pool, per process.

    Django keeps a cache object per thread and, under ASGI, per request context, and each of
    them built its own client and pool: every request of a uvicorn worker opened a new Redis
    connection (a TCP handshake, and redis-py reads its package metadata for each connection),
    about a fifth of the CPU of a request answered from the cache. redis-py's pools are
    thread-safe and re-create their connections after a fork, so one per process and
    configuration serves every context."""

    _clients: ClassVar[dict[str, RedisCacheClient]] = {}
    _clients_lock = threading.Lock()

    def __init__(self, server: str | list[str], params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._class = _ClientPerPool

    @cached_property
    def _cache(self) -> RedisCacheClient:
        # RedisCache's members, which the stubs do not declare.
        servers, options = self._servers, self._options  # type: ignore[attr-defined]
        key = repr((servers, sorted(options.items())))
        with self._clients_lock:
            client = self._clients.get(key)
            if client is None:
                client = self._clients[key] = self._class(servers, **options)
        return client


def get(key: str, default: Any = None, *, alias: str = "default") -> Any:
    try:
        return caches[alias].get(key, default)
    except UNREACHABLE as exc:
        _warn("get", key, exc)
        return default


def set(key: str, value: Any, seconds: int | None, *, alias: str = "default") -> bool:
    """`seconds=None` keeps the value until it is deleted or evicted."""
    try:
        caches[alias].set(key, value, seconds)
    except UNREACHABLE as exc:
        _warn("set", key, exc)
        return False
    return True


def delete(key: str, *, alias: str = "default") -> bool:
    try:
        caches[alias].delete(key)
    except UNREACHABLE as exc:
        _warn("delete", key, exc)
        return False
    return True


def incr(
    key: str, delta: int = 1, *, seconds: int | None = None, alias: str = "default"
) -> int | None:
    """Add `delta` to a counter; an absent counter starts at `delta` and expires after
    `seconds`. Two processes starting the same counter at once both count (add, then incr)."""
    backend = caches[alias]
    try:
        if backend.add(key, delta, seconds):
            return delta
        try:
            return backend.incr(key, delta)
        except ValueError:
            # The counter expired between add and incr: this call starts it again.
            backend.set(key, delta, seconds)
            return delta
    except UNREACHABLE as exc:
        _warn("incr", key, exc)
        return None


# The values being made in this process, each with the lock its makers hold: one entry per key
# being made at this moment, so never more than the process's threads.
_making: dict[str, threading.Lock] = {}
_making_guard = threading.Lock()


def get_or_make(
    key: str, make: Callable[[], Any], seconds: int | None, *, alias: str = "default"
) -> Any:
    """Django's get_or_set, except that only one thread of this process makes a missing value
    and the others wait for it and read it: a value that expires under load is made once, not
    by every request arriving while it is being made (their queries and CPU make the tail of
    the latency). A lock per key, so that a make may itself ask for another key (a page and
    the counts it shows). `make` returns a value that is not None; its errors reach the
    caller."""
    value = get(key, alias=alias)
    if value is not None:
        return value
    with _making_guard:
        lock = _making.setdefault(key, threading.Lock())
    with lock:
        try:
            value = get(key, alias=alias)
            if value is None:
                value = make()
                set(key, value, seconds, alias=alias)
        finally:
            with _making_guard:
                if _making.get(key) is lock:
                    del _making[key]
    return value


# Generations: a counter per kind of data that every writer of that data bumps and every
# process compares with the one its own copies were made under; a copy made under another
# value is not used. A counter the cache does not hold (never bumped, evicted, lost in a
# restart) starts at a random value, so that it never comes back to a value old copies were
# made under.


def _generation_start() -> int:
    return secrets.randbits(62)


def generation(key: str, *, alias: str = "default") -> int | None:
    backend = caches[alias]
    try:
        value: int | None = backend.get(key)
        if value is None:
            backend.add(key, _generation_start(), None)
            value = backend.get(key)
    except UNREACHABLE as exc:
        _warn("get", key, exc)
        return None
    return value


def generation_bump(key: str, *, alias: str = "default") -> bool:
    backend = caches[alias]
    try:
        try:
            backend.incr(key)
        except ValueError:
            # Absent: a new random start is as good a change as an increment.
            backend.set(key, _generation_start(), None)
    except UNREACHABLE as exc:
        _warn("incr", key, exc)
        return False
    return True


def generation_changed(key: str, *, alias: str = "default") -> None:
    """For a writer of the data `key` counts: bump now and, inside a transaction, once more
    when it commits. Until then other processes still read the old rows, and a copy of them
    made under the first bump would otherwise outlive the change."""
    generation_bump(key, alias=alias)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: generation_bump(key, alias=alias))


def _warn(operation: str, key: str, exc: Exception) -> None:
    logger.warning(
        "cache %s of %r skipped, the cache is unreachable: %s: %s",
        operation,
        key,
        type(exc).__name__,
        exc,
    )


def mark_once(key: str, seconds: int, *, alias: str = "default") -> bool | None:
    """Set a mark that expires after `seconds`: True when this call set it, False when it was
    set already, None when the cache is unreachable (the caller decides what that means)."""
    try:
        return caches[alias].add(key, 1, seconds)
    except UNREACHABLE as exc:
        _warn("add", key, exc)
        return None


# Locks. On Redis, redis-py's Lock: taken with SET NX PX, released by a script that deletes the
# key only while it still holds this holder's token, so a holder whose lock expired never
# releases the next holder's. Its key is the cache's own for the lock's name. The local-memory
# cache (the embedded default, one process) has no such script: a process lock makes its take
# and release atomic instead.
_redis_clients: dict[str, redis.Redis] = {}
_local_locks = threading.Lock()


@contextmanager
def lock_held(name: str, *, seconds: int, alias: str = "default") -> Iterator[bool]:
    """Hold the lock `name` for the block, at most `seconds` (a holder that dies lets it go
    then): True when this call took it, False when another holder has it or the cache is
    unreachable (a lock that cannot be checked is not held)."""
    backend = caches[alias]
    key = backend.make_key(name)
    token = secrets.token_hex(16)
    if isinstance(backend, RedisCache):
        lock = _redis_client(alias).lock(key, timeout=seconds, blocking=False)
        try:
            held = lock.acquire(token=token)
        except UNREACHABLE as exc:
            _warn("lock", key, exc)
            held = False
        try:
            yield held
        finally:
            if held:
                try:
                    lock.release()
                except (LockError, *UNREACHABLE) as exc:
                    # Expired (and perhaps taken by another run) or unreachable: the lock
                    # lapses after `seconds` in any case.
                    _warn("unlock", key, exc)
        return
    with _local_locks:
        held = backend.add(name, token, seconds)
    try:
        yield held
    finally:
        if held:
            with _local_locks:
                if backend.get(name) == token:
                    backend.delete(name)


def _redis_client(alias: str) -> redis.Redis:
    """A redis-py client on the cache's (first, writable) server, one per process and
    configuration, for what Django's cache API has no call for (locks)."""
    config = settings.CACHES[alias]
    location = config["LOCATION"]
    server = (location.split(",") if isinstance(location, str) else location)[0]
    options = {
        name: value
        for name, value in config.get("OPTIONS", {}).items()
        if name not in ("serializer", "pool_class", "parser_class")
    }
    identity = repr((server, sorted(options.items())))
    with _local_locks:
        client = _redis_clients.get(identity)
        if client is None:
            client = _redis_clients[identity] = redis.Redis.from_url(server, **options)
    return client
