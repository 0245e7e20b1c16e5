"""Rate limits count in fixed one-minute windows, each bucket with its own offset. A test that
counts requests up to a limit must not straddle the end of its bucket's window, or the count
restarts halfway; these helpers start such a test early in a fresh window."""

import time

import httpx
import redis as redis_client
from django.core.cache import cache

_MARGIN_SECONDS = 20


def fresh_window(client: httpx.Client, path: str, headers: dict[str, str] | None = None) -> None:
    """Wait out the bucket's window if it ends soon, then forget every count (this process's
    cache is the live server's)."""
    _wait(client.get(path, headers=headers or {}))
    cache.clear()


def fresh_shared_window(url: str, headers: dict[str, str], redis_url: str) -> None:
    """The same for servers in other processes that count in Redis."""
    _wait(httpx.get(url, headers=headers, timeout=10))
    redis_client.Redis.from_url(redis_url).flushdb()


def _wait(response: httpx.Response) -> None:
    left = int(response.headers["X-RateLimit-Reset"]) - time.time()
    if left < _MARGIN_SECONDS:
        time.sleep(max(0.0, left) + 1.0)
