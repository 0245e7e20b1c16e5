"""The one place that turns errors into the compliance envelope `{error: {code, message}}`,
and the one list of its codes: raise sites, handlers and the OpenAPI enum (api/schema.py) all
take `ErrorCode`, so a code the schema does not list is a type error."""

from typing import Any, Literal, get_args

from django.http import Http404, HttpRequest, HttpResponse, JsonResponse
from rest_framework import exceptions
from rest_framework.response import Response

from compliance_site.records.selectors import RecordNotFound
from shared.http import payload_too_large_message, plain_payload_too_large
from shared.outages import MESSAGE, retry_after_seconds

ErrorCode = Literal[
    "invalid_parameter",
    "invalid_cursor",
    # A request refused before any view (a Host not served, a body that is not JSON).
    "bad_request",
    "missing_api_key",
    "invalid_api_key",
    "state_not_found",
    "version_not_found",
    "esa_program_not_found",
    "webhook_not_found",
    "delivery_not_found",
    "webhook_limit_reached",
    "not_found",
    "method_not_allowed",
    "not_acceptable",
    "precondition_failed",
    "unsupported_media_type",
    "payload_too_large",
    "rate_limit_exceeded",
    "internal_error",
    "service_unavailable",
]
ERROR_CODES: tuple[ErrorCode, ...] = get_args(ErrorCode)


def known_code(code: str) -> ErrorCode:
    """A code named by a lower layer (records, webhooks), which cannot import this list: one
    it does not hold is a bug, caught here rather than sent undocumented."""
    if code not in ERROR_CODES:
        raise ValueError(f"error code {code!r} is not in ErrorCode")
    return code


class ApiError(exceptions.APIException):
    """An error with a machine-readable code, raised by views and rendered by the handler."""

    status_code = 400
    code: ErrorCode = "bad_request"

    def __init__(self, message: str, *, code: ErrorCode | None = None, status: int | None = None):
        super().__init__(message)
        self.message = message
        if code is not None:
            self.code = code
        if status is not None:
            self.status_code = status


class InvalidParameter(ApiError):
    code: ErrorCode = "invalid_parameter"


class NotFound(ApiError):
    status_code = 404
    code: ErrorCode = "not_found"


def error_body(code: ErrorCode, message: str, **extra: Any) -> dict[str, Any]:
    return {"error": {"code": code, "message": message, **extra}}


def error_response(status: int, code: ErrorCode, message: str, **extra: Any) -> JsonResponse:
    """For code outside DRF views: middleware and the URL-level 404/500 handlers."""
    return JsonResponse(error_body(code, message, **extra), status=status)


def service_unavailable_response(exc: BaseException | None = None) -> JsonResponse:
    """While the database cannot be reached or its pool is exhausted (shared/outages.py):
    retry shortly."""
    response = error_response(503, "service_unavailable", MESSAGE)
    response["Retry-After"] = str(retry_after_seconds(exc))
    return response


_DRF_CODES: dict[type[exceptions.APIException], ErrorCode] = {
    exceptions.NotAuthenticated: "missing_api_key",
    exceptions.AuthenticationFailed: "invalid_api_key",
    exceptions.MethodNotAllowed: "method_not_allowed",
    exceptions.NotAcceptable: "not_acceptable",
    exceptions.ParseError: "bad_request",
    exceptions.UnsupportedMediaType: "unsupported_media_type",
    exceptions.NotFound: "not_found",
}


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    # Anything else (a bug, a database outage) goes on to handler500 (api/handlers.py).
    if isinstance(exc, Http404):
        exc = exceptions.NotFound()
    if isinstance(exc, RecordNotFound):
        exc = NotFound(exc.message, code=known_code(exc.code))
    code: ErrorCode
    if isinstance(exc, ApiError):
        code, message = exc.code, exc.message
    elif isinstance(exc, exceptions.APIException):
        code = next((c for cls, c in _DRF_CODES.items() if isinstance(exc, cls)), "bad_request")
        message = str(exc.detail) if not isinstance(exc.detail, dict | list) else "invalid request"
    else:
        return None
    response = Response(error_body(code, message), status=exc.status_code)
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        response["WWW-Authenticate"] = 'Bearer realm="compliance"'
    if isinstance(exc, exceptions.MethodNotAllowed):
        response["Allow"] = ", ".join(context["view"].allowed_methods)
    return response


def payload_too_large(request: HttpRequest) -> HttpResponse:
    """PAYLOAD_TOO_LARGE_RESPONSE (shared/http.py): the envelope under /api/."""
    if request.path_info.startswith("/api/"):
        return error_response(413, "payload_too_large", payload_too_large_message())
    return plain_payload_too_large(request)
