"""Fixed-window rate limits counted by django-ratelimit on the shared cache, with the headers
clients read: `X-RateLimit-*` and the IETF `RateLimit` / `RateLimit-Policy` fields."""

import logging
import time
from dataclasses import dataclass

from django.http import HttpRequest, HttpResponseBase
from django_ratelimit.core import get_usage
from redis.exceptions import RedisError

from shared.metrics import RATE_LIMIT_REJECTIONS, RATE_LIMIT_UNCOUNTED

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class Usage:
    policy: str
    limit: int
    window_seconds: int
    count: int
    reset_in: int

    @property
    def exceeded(self) -> bool:
        return self.count > self.limit

    @property
    def remaining(self) -> int:
        return max(0, self.limit - self.count)


def usage_count(
    request: HttpRequest, *, group: str, bucket: str, limit: int, window_seconds: int, policy: str
) -> Usage | None:
    """Count this request in `bucket` and say where the bucket stands; None when the shared
    cache cannot be reached.

    Limits fail open: the data is public and read-only, so a Redis outage serves requests
    unlimited (and logs each one) rather than turning a cache outage into a full outage.
    """
    try:
        usage = get_usage(
            request,
            group=group,
            key=lambda _group, _request: bucket,
            rate=(limit, window_seconds),
            increment=True,
        )
    except RedisError as exc:
        logger.warning("rate limit not counted, the shared cache is unreachable: %s", exc)
        RATE_LIMIT_UNCOUNTED.labels(policy=policy).inc()
        return None
    result = Usage(
        policy=policy,
        limit=limit,
        window_seconds=window_seconds,
        count=usage["count"],
        reset_in=max(1, int(usage["time_left"])),
    )
    if result.exceeded:
        # Every caller refuses an exceeded request with 429, so this counts the refusals.
        RATE_LIMIT_REJECTIONS.labels(policy=policy).inc()
    return result


def apply_headers(response: HttpResponseBase, usage: Usage) -> None:
    response["X-RateLimit-Limit"] = str(usage.limit)
    response["X-RateLimit-Remaining"] = str(usage.remaining)
    response["X-RateLimit-Reset"] = str(int(time.time()) + usage.reset_in)
    response["RateLimit-Policy"] = f'"{usage.policy}";q={usage.limit};w={usage.window_seconds}'
    response["RateLimit"] = f'"{usage.policy}";r={usage.remaining};t={usage.reset_in}'
    if usage.exceeded:
        response["Retry-After"] = str(usage.reset_in)
