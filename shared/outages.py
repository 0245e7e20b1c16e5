"""What both services answer while their database cannot be reached: 503 with Retry-After.

A restart, failover or network blip makes the driver raise OperationalError (cannot connect,
connection lost) or InterfaceError (connection already closed). Neither is a bug of the request,
so clients are told to come back shortly instead of getting a 500. Django drops the broken
connection at the end of the request and CONN_HEALTH_CHECKS tests a reused one before its first
query, so the first request after the database is back succeeds without a restart of the app.

The APIs render this in their own envelopes (their DRF exception handlers and `handler500`);
`DatabaseOutageMiddleware` covers every other view with a plain-text 503.
"""

import logging
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse

logger = logging.getLogger(__name__)

DATABASE_ERRORS = (OperationalError, InterfaceError)
# A restart or failover takes seconds; this tells clients when a retry is worth it.
RETRY_AFTER_SECONDS = 5
MESSAGE = "the service is temporarily unavailable: try again shortly"


def is_database_outage(exc: BaseException | None) -> bool:
    return isinstance(exc, DATABASE_ERRORS)


def log_outage(request: HttpRequest, exc: BaseException) -> None:
    # One line, no traceback: an outage fails many requests at once for the same reason.
    logger.warning("database unavailable for %s %s: %s", request.method, request.path, exc)


def plain_unavailable_response() -> HttpResponse:
    response = HttpResponse(MESSAGE + "\n", status=503, content_type="text/plain; charset=utf-8")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
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
        return plain_unavailable_response()
