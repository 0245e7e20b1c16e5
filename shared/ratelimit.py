"""Every rate limit of both services is counted here: fixed windows on the shared cache (Redis,
atomic INCRBY), with the headers clients read (`X-RateLimit-*` and the IETF `RateLimit` /
`RateLimit-Policy` fields). docs/auth-and-limits.md lists the limits.

What happens while Redis cannot be reached depends on what the limit guards:
- reads (searches, MCP, the compliance API) fail open: the data is public and read-only, so a
  cache outage serves them unlimited (and counts that in a metric) rather than becoming a full
  outage;
- authentication (login codes, code guesses, admin passwords; `fail_closed=True`) is counted in
  the database instead (`shared.limits.models.Counter`), with the same keys and windows. If the
  database is down as well, the error propagates and the request gets its surface's 503.

The counting is our own (a dozen lines on Django's cache API) rather than django-ratelimit's
`get_usage`, because authentication needs what it lacks: the same key in a second store and
a refund when the counted work did not happen (a login code that could not be mailed).
"""

import hashlib
import logging
import time
import unicodedata
from dataclasses import dataclass, replace
from datetime import UTC, datetime

from django.core.cache import caches
from django.db import transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponseBase
from redis.exceptions import RedisError

from shared.metrics import RATE_LIMIT_DATABASE_COUNTED, RATE_LIMIT_REJECTIONS, RATE_LIMIT_UNCOUNTED

logger = logging.getLogger(__name__)

# Redis keeps a counter a little past its window, so a late INCR never recreates a stale one.
_EXPIRY_SLACK_SECONDS = 5


@dataclass(frozen=True)
class Usage:
    policy: str
    limit: int
    window_seconds: int
    count: int
    reset_in: int
    # Where the count lives, so that it can be refunded: the cache key, and whether the
    # database fallback held it.
    key: str = ""
    in_database: bool = False

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)


def identity_normalize(value: str) -> str:
    """The form of a username or email address that is counted (and, for emails, stored):
    NFKC folds compatibility forms (fullwidth letters U+FF41.. are ASCII, as Django's login form
    reads it) and casefold folds case beyond ASCII, so that no spelling of one identity gets a
    counter of its own."""
    return unicodedata.normalize("NFKC", value).casefold().strip()


def usage_count(
    request: HttpRequest,
    *,
    group: str,
    bucket: str,
    limit: int,
    window_seconds: int,
    policy: str,
    fail_closed: bool = False,
    cost: int = 1,
) -> Usage | None:
    """Count `cost` calls of `request` in `bucket` and say where the bucket stands.

    With the shared cache unreachable: None (fail open), or with `fail_closed` the count kept
    in the database. `bucket` is hashed into the key, so it may be any text (an address)."""
    now = time.time()
    window_start = int(now // window_seconds) * window_seconds
    digest = hashlib.sha256(f"{group}\n{bucket}\n{window_start}".encode()).hexdigest()
    key = f"rl:{group}:{digest}"
    reset_in = max(1, int(window_start + window_seconds - now))
    in_database = False
    try:
        count = _cache_count(key, window_seconds, cost)
    except RedisError as exc:
        if not fail_closed:
            logger.warning("rate limit not counted, the shared cache is unreachable: %s", exc)
            RATE_LIMIT_UNCOUNTED.labels(policy=policy).inc()
            return None
        logger.warning(
            "rate limit %s counted in the database, the shared cache is unreachable (%s %s): %s",
            policy,
            request.method,
            request.path,
            exc,
        )
        RATE_LIMIT_DATABASE_COUNTED.labels(policy=policy).inc()
        count = _database_count(digest, window_start + window_seconds, cost)
        in_database = True
    usage = Usage(
        policy=policy,
        limit=limit,
        window_seconds=window_seconds,
        count=count,
        reset_in=reset_in,
        key=key,
        in_database=in_database,
    )
    if usage.exceeded:
        # Every caller refuses an exceeded request with 429, so this counts the refusals.
        RATE_LIMIT_REJECTIONS.labels(policy=policy).inc()
    return usage


def usage_refund(usage: Usage, cost: int = 1) -> Usage:
    """Take back `cost` calls counted by `usage_count` when the work they paid for did not
    happen. Best effort: a refund that cannot be made leaves the call counted."""
    try:
        if usage.in_database:
            _database_counters().filter(key=usage.key.rsplit(":", 1)[1]).update(
                hits=F("hits") - cost
            )
        else:
            caches["default"].decr(usage.key, cost)
    except (RedisError, ValueError) as exc:  # ValueError: the counter has expired meanwhile
        logger.warning("rate limit %s not refunded: %s", usage.policy, exc)
        return usage
    return replace(usage, count=max(0, usage.count - cost))


def _cache_count(key: str, window_seconds: int, cost: int) -> int:
    cache = caches["default"]
    for _ in range(2):
        cache.add(key, 0, window_seconds + _EXPIRY_SLACK_SECONDS)
        try:
            return cache.incr(key, cost)
        except ValueError:
            # The counter expired between ADD and INCR: start the new window's counter.
            continue
    raise RedisError(f"counter {key} expired twice while being counted")


def _database_counters():
    # Imported here: this module is imported while settings load (ASGI front), before apps are.
    from shared.limits.models import Counter

    return Counter.objects


def _database_count(digest: str, window_end: float, cost: int) -> int:
    counters = _database_counters()
    now = datetime.now(UTC)
    with transaction.atomic():
        # The row lock (PostgreSQL) or the write transaction (SQLite) makes the increment and
        # its read one step, so concurrent attempts each see their own count.
        counter, created = counters.select_for_update().get_or_create(
            key=digest,
            defaults={"hits": cost, "expires_at": datetime.fromtimestamp(window_end, UTC)},
        )
        if not created:
            counters.filter(key=digest).update(hits=F("hits") + cost)
            counter.refresh_from_db(fields=["hits"])
        counters.filter(expires_at__lt=now).delete()
    return counter.hits


def apply_headers(response: HttpResponseBase, usage: Usage) -> None:
    response["X-RateLimit-Limit"] = str(usage.limit)
    response["X-RateLimit-Remaining"] = str(usage.remaining)
    response["X-RateLimit-Reset"] = str(int(time.time()) + usage.reset_in)
    response["RateLimit-Policy"] = f'"{usage.policy}";q={usage.limit};w={usage.window_seconds}'
    response["RateLimit"] = f'"{usage.policy}";r={usage.remaining};t={usage.reset_in}'
    if usage.exceeded:
        response["Retry-After"] = str(usage.reset_in)
