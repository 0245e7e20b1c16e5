"""URL-level error handlers: JSON in the compliance error envelope."""

import sys

from django.http import HttpRequest, JsonResponse

from compliance_site.api.errors import error_response, service_unavailable_response
from shared.outages import is_database_outage, log_outage


def not_found(request: HttpRequest, exception: Exception) -> JsonResponse:
    return error_response(404, "not_found", "no such endpoint")


def server_error(request: HttpRequest) -> JsonResponse:
    # Django calls this while the exception is being handled (WSGI: on the request's thread).
    exc = sys.exc_info()[1]
    if is_database_outage(exc):
        log_outage(request, exc)
        return service_unavailable_response(exc)
    return error_response(500, "internal_error", "an unexpected error occurred")
