"""URL-level error handlers: JSON in the compliance error envelope."""

import sys

from django.core.exceptions import DisallowedHost
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

from compliance_site.api.errors import error_response, service_unavailable_response
from shared.outages import is_database_outage, log_outage


def bad_request(request: HttpRequest, exception: Exception) -> HttpResponse:
    """A request Django refuses before any view (a Host not in ALLOWED_HOSTS...): JSON under
    the API, Django's page for admin."""
    if not request.path.startswith("/api/"):
        return defaults.bad_request(request, exception)
    if isinstance(exception, DisallowedHost):
        return error_response(400, "bad_request", "this host name is not served here")
    return error_response(400, "bad_request", "bad request")


def not_found(request: HttpRequest, exception: Exception) -> JsonResponse:
    return error_response(404, "not_found", "no such endpoint")


def server_error(request: HttpRequest) -> JsonResponse:
    # Django calls this while the exception is being handled (WSGI: on the request's thread).
    exc = sys.exc_info()[1]
    if exc is not None and is_database_outage(exc):
        log_outage(request, exc)
        return service_unavailable_response(exc)
    return error_response(500, "internal_error", "an unexpected error occurred")
