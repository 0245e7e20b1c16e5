"""What both services answer while their database cannot be reached: 503 with Retry-After.

A restart, failover or network blip makes the driver raise OperationalError (cannot connect,
connection lost) or InterfaceError (connection already closed). Neither is a bug of the request,
so clients are told to come back shortly instead of getting a 500. Django drops the broken
connection at the end of the request and CONN_HEALTH_CHECKS tests a reused one before its first
query, so the first request after the database is back succeeds without a restart of the app.

The same 503 answers a burst: when every connection of the process's pool is lent out and
none comes back within DB_POOL_TIMEOUT (psycopg_pool's PoolTimeout, or TooManyRequests when too
many requests already wait), the request is refused rather than queued. A burst ends as soon as
connections come back, so such a 503 says to retry after one second instead of five.

The APIs render this in their own envelopes (their DRF exception handlers and `handler500`);
`DatabaseOutageMiddleware` covers every other view with a plain-text 503.
"""

import contextlib
import logging
import threading
import time
from collections.abc import Callable

from django.db import DEFAULT_DB_ALIAS, InterfaceError, OperationalError, connections
from django.http import HttpRequest, HttpResponse
from psycopg_pool import PoolTimeout, TooManyRequests

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)
# A restart or failover takes seconds; this tells clients when a retry is worth it.
RETRY_AFTER_SECONDS = 5
# A full pool frees up within the time one request takes.
BUSY_RETRY_AFTER_SECONDS = 1
MESSAGE = "the service is temporarily unavailable: try again shortly"
# During a burst thousands of requests are refused for one reason: one line a second says how
# many, instead of one line each.
_BUSY_LOG_INTERVAL = 1.0
_busy_lock = threading.Lock()
_busy_refused = 0
_busy_logged_at = 0.0


def is_database_outage(exc: BaseException | None) -> bool:
    return isinstance(exc, DATABASE_ERRORS)


def is_pool_exhausted(exc: BaseException | None) -> bool:
    """Whether a database error means "all connections busy", not "database unreachable".

    Django wraps the pool's exception and keeps it as the cause. The pool times out in both
    cases (while the database is down it cannot open the connections it is asked for), so a
    timeout counts as busy only when the pool holds all the connections it may open."""
    while exc is not None:
        if isinstance(exc, TooManyRequests):
            return True
        if isinstance(exc, PoolTimeout):
            # The PostgreSQL backend's pool, which the stubs' base wrapper does not declare.
            pool = getattr(connections[DEFAULT_DB_ALIAS], "pool", None)
            if pool is None:
                return False
            return bool(pool.get_stats().get("pool_size", 0) >= pool.max_size)
        exc = exc.__cause__
    return False


def retry_after_seconds(exc: BaseException | None) -> int:
    return BUSY_RETRY_AFTER_SECONDS if is_pool_exhausted(exc) else RETRY_AFTER_SECONDS


def log_outage(request: HttpRequest, exc: BaseException) -> None:
    """Say why a request got its 503 and, for an outage, let the next request reconnect."""
    if is_pool_exhausted(exc):
        _log_busy()
        return
    # One line, no traceback: an outage fails many requests at once for the same reason.
    logger.warning("database unavailable for %s %s: %s", request.method, request.path, exc)
    restart_pool()


def restart_pool() -> None:
    """Replace the process's connection pool after a database outage.

    A pool that could not reach its database retries with a growing delay (1, 2, 4 ... seconds),
    so after an outage of some minutes it would notice the database is back only minutes later.
    Closing it makes the next request start a new pool, which connects at once: the first
    request after the database is back succeeds. Connections lent out meanwhile are closed when
    they come back."""
    connection = connections[DEFAULT_DB_ALIAS]
    if not connection.settings_dict.get("OPTIONS", {}).get("pool"):
        return
    # Another thread may replace it at the same moment.
    with contextlib.suppress(KeyError):
        connection.close_pool()  # type: ignore[attr-defined]  # PostgreSQL's wrapper only


def _log_busy() -> None:
    global _busy_refused, _busy_logged_at
    with _busy_lock:
        _busy_refused += 1
        now = time.monotonic()
        if now - _busy_logged_at < _BUSY_LOG_INTERVAL:
            return
        refused, _busy_refused, _busy_logged_at = _busy_refused, 0, now
    logger.warning("database connection pool exhausted: %d request(s) refused with 503", refused)


def plain_unavailable_response(exc: BaseException | None = None) -> HttpResponse:
    response = HttpResponse(MESSAGE + "\n", status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(retry_after_seconds(exc))
    response["Cache-Control"] = "no-store"
    return response


class DatabaseOutageMiddleware:
    """A database error raised by a view becomes a plain 503 with Retry-After (the legacy JSON,
    markdown, RSS and HTML surfaces). Views under an API handle their own errors first."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not is_database_outage(exception):
            return None
        log_outage(request, exception)
        return plain_unavailable_response(exception)
