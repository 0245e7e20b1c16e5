"""Fail-open access to the shared cache (Redis in production).

Everything these services keep in the cache can be computed again (a rendered report, a
counter that may reset), so a cache outage must cost speed, never a failed request, a failed
batch job or a rolled-back transaction. Every cache read, write and delete goes through the
functions here: each does what Django's cache API does when the cache answers, and when it does
not (connection refused, timeout, any Redis error) logs one warning, counts nothing and returns
what "not cached" means:

    value_read(key)                 -> the value, or `default` when missing or unreachable
    value_keep(key, value, seconds) -> True when stored, False when unreachable
    value_forget(key)               -> True when the call reached the cache (whether or not the
                                       key existed), False when unreachable
    value_read_or_make(key, make, seconds)
                                    -> the value, or make()'s, then kept; while one thread of
                                       the process makes a missing value, the others wait for it
    value_read_or_refresh(key, make, seconds, stale_seconds)
                                    -> the same, and for `stale_seconds` past `seconds` the old
                                       value while one background thread makes it again; with
                                       `shared_alias`, made once for every process
    reaches_every_process(alias)    -> whether that cache is shared by every process (Redis)
    counter_add(key, delta, seconds)
                                    -> the new count (starting the key at `delta` with a
                                       timeout when absent), or None when unreachable
    generation_read(key)            -> the current value of a generation counter, or None when
                                       unreachable (so: trust no copy made under any generation)
    generation_bump(key)            -> a new value for it; False when unreachable
    generation_changed(key)         -> generation_bump now and again when the transaction commits
    mark_once(key, seconds)         -> True when this call set the mark (absent before), False
                                       when it was there, None when unreachable
    lock_held(name, seconds)        -> a context manager: True while this call holds the lock
                                       across hosts, False when another holder has it or it is
                                       unreachable

`alias` picks another entry of the CACHES setting. Rate limits count through django-ratelimit
and fail open in shared/ratelimit.py.

Both projects configure django-redis's backend with one client and pool per process
(shared/settings_base.py, shared/cache_connection.py).
"""

import logging
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any, cast

from django.core.cache import caches
from django.db import connections, transaction
from django.urls import get_script_prefix, get_urlconf, set_script_prefix, set_urlconf
from django.utils import timezone, translation
from django_redis import get_redis_connection
from django_redis.cache import RedisCache
from redis.exceptions import LockError, RedisError

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors (ConnectionError, TimeoutError, ...), which
# django-redis passes on, and the socket errors a client can let through.
UNREACHABLE = (RedisError, OSError)


def value_read(key: str, default: Any = None, *, alias: str = "default") -> Any:
    try:
        return caches[alias].get(key, default)
    except UNREACHABLE as exc:
        _warn("get", key, exc)
        return default


def value_keep(key: str, value: Any, seconds: int | None, *, alias: str = "default") -> bool:
    """`seconds=None` keeps the value until it is deleted or evicted."""
    try:
        caches[alias].set(key, value, seconds)
    except UNREACHABLE as exc:
        _warn("set", key, exc)
        return False
    return True


def value_forget(key: str, *, alias: str = "default") -> bool:
    try:
        caches[alias].delete(key)
    except UNREACHABLE as exc:
        _warn("delete", key, exc)
        return False
    return True


def counter_add(
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


def value_read_or_make(
    key: str, make: Callable[[], Any], seconds: int | None, *, alias: str = "default"
) -> Any:
    """Django's get_or_set, except that only one thread of this process makes a missing value
    and the others wait for it and read it: a value that expires under load is made once, not
    by every request arriving while it is being made (their queries and CPU make the tail of
    the latency). A lock per key, so that a make may itself ask for another key (a page and
    the counts it shows). `make` returns a value that is not None; its errors reach the
    caller."""
    value = value_read(key, alias=alias)
    if value is not None:
        return value
    with _making_guard:
        lock = _making.setdefault(key, threading.Lock())
    with lock:
        try:
            value = value_read(key, alias=alias)
            if value is None:
                value = make()
                value_keep(key, value, seconds, alias=alias)
        finally:
            with _making_guard:
                if _making.get(key) is lock:
                    del _making[key]
    return value


# Values made again in the background (value_read_or_refresh), one at a time per process: a
# refresh takes at most one thread's share of the process from the requests it serves.
_refresher = ThreadPoolExecutor(max_workers=1, thread_name_prefix="cache-refresh")
# The keys being made again at this moment (guarded by _making_guard).
_refreshing: set[str] = set()


def value_read_or_refresh(
    key: str,
    make: Callable[[], Any],
    seconds: int,
    *,
    stale_seconds: int,
    alias: str = "default",
    shared_alias: str | None = None,
) -> Any:
    """value_read_or_make, except that a value older than `seconds` is still answered for
    `stale_seconds` more while one background thread of the process makes it again
    (stale-while-revalidate): a request waits for a value that is missing, never for one that
    is only old. `make` runs in the caller's context (its language and time zone) on a thread
    with its own database connection, given back when it is done; a make that fails leaves the
    old value until it expires.

    With `shared_alias` (a cache every process reads), a value this process is missing is
    taken from there when another process made it, and every value made is kept there too,
    with the moment it stops being fresh: each value is made by one process, not by each."""
    timeout = seconds + stale_seconds

    def fresh() -> tuple[Any, float]:
        return (make(), time.time() + seconds)

    made = _shared_first(key, fresh, timeout, stale_seconds, shared_alias)
    value, fresh_until = value_read_or_make(key, made, timeout, alias=alias)
    if time.time() >= fresh_until + stale_seconds:
        # Taken from the shared cache late in its life, this process's copy outlived it: made
        # now, as a missing value is, so that no value is answered older than its seconds
        # and stale_seconds.
        value_forget(key, alias=alias)
        value, fresh_until = value_read_or_make(key, made, timeout, alias=alias)
    if time.time() >= fresh_until:
        with _making_guard:
            started = key not in _refreshing
            _refreshing.add(key)
        if started:
            # Made again unless another process already did: an old shared value is no better.
            again = _shared_first(
                key,
                _in_callers_context(fresh),
                timeout,
                stale_seconds,
                shared_alias,
                fresh_only=True,
            )
            _refresher.submit(_refresh, key, again, timeout, alias)
    return value


def _shared_first(
    key: str,
    fresh: Callable[[], tuple[Any, float]],
    timeout: int,
    stale_seconds: int,
    shared_alias: str | None,
    *,
    fresh_only: bool = False,
) -> Callable[[], tuple[Any, float]]:
    """`fresh`, or the (value, fresh until) the cache `shared_alias` holds for `key` while it
    may still be answered (while it is fresh, with `fresh_only`)."""
    if shared_alias is None:
        return fresh

    def made() -> tuple[Any, float]:
        shared = value_read(key, alias=shared_alias)
        if shared is not None:
            until = shared[1] if fresh_only else shared[1] + stale_seconds
            if time.time() < until:
                return cast(tuple[Any, float], shared)
        value = fresh()
        value_keep(key, value, timeout, alias=shared_alias)
        return value

    return made


def reaches_every_process(alias: str = "default") -> bool:
    """Whether the cache `alias` is one every process reads (Redis), not a process's own."""
    return isinstance(caches[alias], RedisCache)


def _in_callers_context(make: Callable[[], Any]) -> Callable[[], Any]:
    """`make`, to run on another thread as it would have on this one: in this request's
    language, time zone, URL prefix and URL configuration. Copying the contextvars does not
    carry them: Django keeps them in one mutable mapping per context, which the request undoes
    as it ends."""
    language, zone = translation.get_language(), timezone.get_current_timezone()
    prefix, urlconf = get_script_prefix(), get_urlconf()

    def made() -> Any:
        set_script_prefix(prefix)
        set_urlconf(urlconf)
        try:
            with translation.override(language), timezone.override(zone):
                return make()
        finally:
            set_urlconf(None)

    return made


def _refresh(key: str, made: Callable[[], tuple[Any, float]], timeout: int, alias: str) -> None:
    try:
        value_keep(key, made(), timeout, alias=alias)
    except Exception:
        logger.exception("making %r again failed; the old value stays until it expires", key)
    finally:
        with _making_guard:
            _refreshing.discard(key)
        # This thread's connections (to the pool, when there is one).
        connections.close_all()


# Generations: a counter per kind of data that every writer of that data bumps and every
# process compares with the one its own copies were made under; a copy made under another
# value is not used. A counter the cache does not hold (never bumped, evicted, lost in a
# restart) starts at a random value, so that it never comes back to a value old copies were
# made under.


def _generation_start() -> int:
    return secrets.randbits(62)


def generation_read(key: str, *, alias: str = "default") -> int | None:
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
_local_locks = threading.Lock()


@contextmanager
def lock_held(name: str, *, seconds: int, alias: str = "default") -> Iterator[bool]:
    """Hold the lock `name` for the block, at most `seconds` (a holder that dies lets it go
    then): True when this call took it, False when another holder has it or the cache is
    unreachable (a lock that cannot be checked is not held)."""
    backend = caches[alias]
    key = backend.make_key(name)
    token = secrets.token_hex(16)
    if reaches_every_process(alias):
        lock = get_redis_connection(alias).lock(key, timeout=seconds, blocking=False)
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
