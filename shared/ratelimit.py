"""Every rate limit of both services is counted here. django-ratelimit (`get_usage`) counts
on the shared cache (Redis, atomic INCR) in fixed windows; this module adds the headers clients
read (`X-RateLimit-*` and the IETF `RateLimit` / `RateLimit-Policy` fields) and what happens
while Redis cannot be reached, which depends on what the limit guards:
- reads (searches, MCP, the compliance API) fail open: the data is public and read-only, so a
  cache outage serves them unlimited (and counts that in a metric) rather than becoming a full
  outage;
- authentication (login codes, code guesses, admin passwords; `fail_closed=True`) is counted in
  the database instead (`shared.limits.models.Counter`), in windows of the same length. An
  outage of the cache must not open the door to guessing, and django-ratelimit has no second
  store, so this fallback is ours. If the database is down as well, the error propagates and
  the request gets its surface's 503.

Work that may fail after it was admitted (mailing a login code) is checked first without being
counted (`usage_check`) and counted once it has happened (`usage_count`), so a failure uses up
nothing. docs/auth-and-limits.md lists the limits.
"""

import hashlib
import logging
import time
import unicodedata
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import TYPE_CHECKING

from django.db import models, transaction
from django.db.models import F
from django.http import HttpRequest, HttpResponseBase
from django_ratelimit.core import get_usage
from redis.exceptions import RedisError

from shared.env import Rate
from shared.metrics import RATE_LIMIT_DATABASE_COUNTED, RATE_LIMIT_REJECTIONS, RATE_LIMIT_UNCOUNTED

if TYPE_CHECKING:
    from shared.limits.models import Counter

logger = logging.getLogger(__name__)


# The limit django-ratelimit sees; it never decides anything here (see _cache_count).
_COUNTER_KEY_LIMIT = 1


class _CacheUncounted(Exception):
    """django-ratelimit could not read or write its counter (it answers `limit` 0 then)."""


@dataclass(frozen=True)
class Usage:
    policy: str
    limit: int
    window_seconds: int
    # Calls counted in the window so far.
    count: int
    reset_in: int
    # Calls asked for but not counted yet (`usage_check`): they count towards `exceeded`.
    pending: int = 0

    @property
    def exceeded(self) -> bool:
        return self.count + self.pending > self.limit

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
    rate: Rate,
    policy: str,
    fail_closed: bool = False,
    cost: int = 1,
) -> Usage | None:
    """Count `cost` calls of `request` in `bucket` and say where the bucket stands.

    With the shared cache unreachable: None (fail open), or with `fail_closed` the count kept
    in the database. `bucket` is hashed into the key, so it may be any text (an address)."""
    return _usage(request, group, bucket, rate, policy, fail_closed, cost, True)


def usage_check(
    request: HttpRequest,
    *,
    group: str,
    bucket: str,
    rate: Rate,
    policy: str,
    fail_closed: bool = False,
    cost: int = 1,
) -> Usage | None:
    """Say whether `cost` more calls would go over the limit, without counting them; count
    them with `usage_count` once the work they pay for has happened.

    Requests checked at the same moment may each pass before any of them is counted, so
    concurrent work can exceed the limit by the number of requests in flight for one bucket;
    for login codes (a handful per address and hour, each a mail) that is the price of not
    charging a code the relay refused."""
    return _usage(request, group, bucket, rate, policy, fail_closed, cost, False)


def _usage(
    request: HttpRequest,
    group: str,
    bucket: str,
    rate: Rate,
    policy: str,
    fail_closed: bool,
    cost: int,
    increment: bool,
) -> Usage | None:
    limit, window_seconds = rate.limit, rate.window_seconds
    try:
        counted = _cache_count(request, group, bucket, window_seconds, cost, increment)
        if counted is None:  # django-ratelimit's RATELIMIT_ENABLE = False: no limits at all
            return None
        count, reset_in = counted
    except (RedisError, _CacheUncounted) as exc:
        if not fail_closed:
            logger.warning("rate limit not counted, the shared cache is unreachable: %s", exc)
            RATE_LIMIT_UNCOUNTED.labels(policy=policy).inc()
            return None
        logger.warning(
            "rate limit %s kept in the database, the shared cache is unreachable (%s %s): %s",
            policy,
            request.method,
            request.path,
            exc,
        )
        RATE_LIMIT_DATABASE_COUNTED.labels(policy=policy).inc()
        now = time.time()
        window_start = int(now // window_seconds) * window_seconds
        digest = hashlib.sha256(f"{group}\n{bucket}\n{window_start}".encode()).hexdigest()
        reset_in = max(1, int(window_start + window_seconds - now))
        if increment:
            count = _database_count(digest, window_start + window_seconds, cost)
        else:
            count = _database_read(digest)
    usage = Usage(
        policy=policy,
        limit=limit,
        window_seconds=window_seconds,
        count=count,
        reset_in=reset_in,
        pending=0 if increment else cost,
    )
    if usage.exceeded:
        # Every caller refuses an exceeded request with 429, so this counts the refusals.
        RATE_LIMIT_REJECTIONS.labels(policy=policy).inc()
    return usage


def _cache_count(
    request: HttpRequest,
    group: str,
    bucket: str,
    window_seconds: int,
    cost: int,
    increment: bool,
) -> tuple[int, int] | None:
    """The count of `bucket` after django-ratelimit counted `cost` calls (none unless
    `increment`), and the seconds until its window resets."""
    # get_usage counts one call at a time; a batch of several MCP tool calls is the only cost
    # above one, and each of its increments is Redis' atomic INCR.
    for _ in range(cost if increment else 1):
        usage = get_usage(
            request,
            group=group,
            key=lambda _group, _request: bucket,
            # django-ratelimit puts the rate into its counter's key, so a limit changed
            # mid-window (a key's rate_limit_per_minute) would start a fresh count. The key
            # names the window only; Usage compares the count with the limit.
            rate=(_COUNTER_KEY_LIMIT, window_seconds),
            increment=increment,
        )
        if usage is None:
            return None
        if usage["limit"] == 0:
            raise _CacheUncounted(f"django-ratelimit could not count group {group}")
    return usage["count"], max(1, int(usage["time_left"]))


def _database_counters() -> "models.Manager[Counter]":
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
    return int(counter.hits)


def _database_read(digest: str) -> int:
    hits = (
        _database_counters()
        .filter(key=digest, expires_at__gt=datetime.now(UTC))
        .values_list("hits", flat=True)
        .first()
    )
    return hits or 0


def apply_headers(response: HttpResponseBase, usage: Usage) -> None:
    response["X-RateLimit-Limit"] = str(usage.limit)
    response["X-RateLimit-Remaining"] = str(usage.remaining)
    response["X-RateLimit-Reset"] = str(int(time.time()) + usage.reset_in)
    response["RateLimit-Policy"] = f'"{usage.policy}";q={usage.limit};w={usage.window_seconds}'
    response["RateLimit"] = f'"{usage.policy}";r={usage.remaining};t={usage.reset_in}'
    if usage.exceeded:
        response["Retry-After"] = str(usage.reset_in)
