"""URL-level error handlers: JSON in the compliance error envelope."""

from django.http import HttpRequest, JsonResponse

from compliance_site.api.errors import error_response


def not_found(request: HttpRequest, exception: Exception) -> JsonResponse:
    return error_response(404, "not_found", "no such endpoint")


def server_error(request: HttpRequest) -> JsonResponse:
    return error_response(500, "internal_error", "an unexpected error occurred")
