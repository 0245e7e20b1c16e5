"""The one place that turns errors into the v1 envelope `{error: {type, message}, meta}`, and
the one list of its `type` values, `ErrorType` (documented in the OpenAPI schema and
docs/mobile-api.md).
"""

import logging
from typing import Any, Literal, get_args

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from django.views.decorators.csrf import csrf_exempt
from rest_framework import exceptions
from rest_framework.response import Response

from news_site.accounts.errors import BEARER_CHALLENGE
from shared.http import payload_too_large_message, plain_payload_too_large
from shared.outages import MESSAGE, is_database_outage, log_outage, retry_after_seconds

logger = logging.getLogger(__name__)

API_VERSION = "v1"
ErrorType = Literal[
    "invalid_parameter",
    "invalid_request",
    "token_in_query",
    "invalid_code",
    "invalid_id_token",
    "provider_not_configured",
    "provider_unavailable",
    "not_authenticated",
    "invalid_token",
    "not_found",
    "method_not_allowed",
    "unsupported_media_type",
    "not_acceptable",
    "payload_too_large",
    "rate_limited",
    "internal_error",
    "service_unavailable",
]
# The schema's enum (api/schema.py); raise sites and handlers take ErrorType, so mypy refuses a
# type the schema does not list.
ERROR_TYPES: tuple[ErrorType, ...] = get_args(ErrorType)


def known_type(error_type: str) -> ErrorType:
    """A type named by a lower app (accounts.errors), which cannot import this list: one it
    does not hold is a bug, caught here rather than sent undocumented."""
    if error_type not in ERROR_TYPES:
        raise ValueError(f"error type {error_type!r} is not in ErrorType")
    return error_type


class ApiError(exceptions.APIException):
    """An error with a machine-readable type, raised by views and rendered by the handler."""

    status_code = 400
    type: ErrorType = "invalid_request"

    def __init__(
        self,
        message: str,
        *,
        type: ErrorType | None = None,
        status: int | None = None,
        headers: dict[str, str] | None = None,
    ):
        super().__init__(message)
        self.message = message
        self.headers = headers or {}
        if type is not None:
            self.type = type
        if status is not None:
            self.status_code = status


class InvalidParameter(ApiError):
    type: ErrorType = "invalid_parameter"


class NotFound(ApiError):
    status_code = 404
    type: ErrorType = "not_found"


def error_body(error_type: ErrorType, message: str) -> dict[str, Any]:
    return {"error": {"type": error_type, "message": message}, "meta": {"api_version": API_VERSION}}


def first_error(errors: dict | list) -> str:
    """One readable line from a serializer's or FilterSet's errors."""
    if isinstance(errors, list):
        return str(errors[0]) if errors else "invalid request"
    field, messages = next(iter(errors.items()))
    if isinstance(messages, dict):
        return first_error(messages)
    message = messages[0] if isinstance(messages, list) and messages else messages
    return str(message) if field == "non_field_errors" else f"{field}: {message}"


_DRF_TYPES: dict[type[exceptions.APIException], ErrorType] = {
    exceptions.NotAuthenticated: "not_authenticated",
    exceptions.AuthenticationFailed: "invalid_token",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.NotFound: "not_found",
    exceptions.ValidationError: "invalid_request",
    exceptions.ParseError: "invalid_request",
    exceptions.Throttled: "rate_limited",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response:
    if isinstance(exc, Http404):
        exc = NotFound("not found")
    error_type: ErrorType
    if isinstance(exc, ApiError):
        error_type, message = exc.type, exc.message
    elif isinstance(exc, exceptions.APIException):
        # Lower apps' errors (accounts.errors) carry their own type; DRF's are mapped.
        own_type = getattr(exc, "type", None)
        error_type = (
            known_type(own_type)
            if own_type
            else next(
                (name for cls, name in _DRF_TYPES.items() if isinstance(exc, cls)),
                "invalid_request",
            )
        )
        detail = exc.detail
        message = first_error(detail) if isinstance(detail, dict | list) else str(detail)
    elif is_database_outage(exc):
        log_outage(context["request"], exc)
        response = Response(error_body("service_unavailable", MESSAGE), status=503)
        response["Retry-After"] = str(retry_after_seconds(exc))
        return response
    else:
        # Still the envelope for a bug, so clients parse every error the same way.
        logger.exception("unhandled error in %s", context.get("view"))
        return Response(error_body("internal_error", "an unexpected error occurred"), status=500)
    response = Response(error_body(error_type, message), status=exc.status_code)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        response["WWW-Authenticate"] = BEARER_CHALLENGE
    if isinstance(exc, exceptions.MethodNotAllowed):
        response["Allow"] = ", ".join(context["view"].allowed_methods)
    if isinstance(exc, ApiError):
        for name, value in exc.headers.items():
            response[name] = value
    return response


@csrf_exempt
def not_found_view(request: HttpRequest, path: str = "") -> JsonResponse:
    """Unknown paths under /api/v1, and ids no key can hold: the envelope, not the site's HTML
    404, for every method (no CSRF check: nothing here acts on a session)."""
    return JsonResponse(error_body("not_found", "no such endpoint"), status=404)


def payload_too_large(request: HttpRequest) -> HttpResponse:
    """PAYLOAD_TOO_LARGE_RESPONSE (shared/http.py): the envelope under /api/v1."""
    if request.path_info.startswith("/api/v1/"):
        body = error_body("payload_too_large", payload_too_large_message())
        return JsonResponse(body, status=413)
    return plain_payload_too_large(request)
