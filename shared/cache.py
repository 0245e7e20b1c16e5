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

`alias` picks another entry of the CACHES setting. Rate limits count through django-ratelimit
and fail open in shared/ratelimit.py.
"""

import logging
from typing import Any

from django.core.cache import caches
from redis.exceptions import RedisError

logger = logging.getLogger(__name__)

# What an unreachable cache raises: redis-py's errors (ConnectionError, TimeoutError, ...)
# and the socket errors a client can let through.
UNREACHABLE = (RedisError, OSError)


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


def _warn(operation: str, key: str, exc: Exception) -> None:
    logger.warning(
        "cache %s of %r skipped, the cache is unreachable: %s: %s",
        operation,
        key,
        type(exc).__name__,
        exc,
    )
