"""The shared cache's copy of the /review-flags report: one room for its key, its lifetime,
how it is read and how a change of a flag (raised, edited, cleared) retires it.

Fail-open: with the cache unreachable the report is computed for each request, and a change
that cannot retire the copy is seen once the copy expires (REVIEW_REPORT_SECONDS)."""

from collections.abc import Callable
from typing import Any

from shared import cache

REVIEW_REPORT_SECONDS = 300
_KEY = "compliance:review_flags:v1"


def review_report_cached(make: Callable[[], Any]) -> Any:
    """The cached report body, or make()'s, then kept for REVIEW_REPORT_SECONDS."""
    body = cache.value_read(_KEY)
    if body is None:
        body = make()
        cache.value_keep(_KEY, body, REVIEW_REPORT_SECONDS)
    return body


def review_report_forget() -> None:
    """A flag changed: the next request computes the report again."""
    cache.value_forget(_KEY)
