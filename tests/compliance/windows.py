"""Rate limits count in fixed one-minute windows, each bucket with its own offset. A test that
counts requests up to a limit must not straddle the end of its bucket's window, or the count
restarts halfway.

In the test's own process the limiter's clock is held still (`one_window`, tests/conftest.py),
so every request of the test falls into one window. Servers in other processes keep the real
clock: `fresh_shared_window` waits out a window that ends soon."""

import time

import httpx
import redis as redis_client

_MARGIN_SECONDS = 20


def fresh_shared_window(url: str, headers: dict[str, str], redis_url: str) -> None:
    """Wait out the bucket's window if it ends soon, then forget every count in Redis."""
    response = httpx.get(url, headers=headers, timeout=10)
    left = int(response.headers["X-RateLimit-Reset"]) - time.time()
    if left < _MARGIN_SECONDS:
        time.sleep(max(0.0, left) + 1.0)
    redis_client.Redis.from_url(redis_url).flushdb()
