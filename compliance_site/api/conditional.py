"""Conditional reads of the compliance API: shared.conditional's validators and 304s, with a
failed If-Match / If-Unmodified-Since answered 412 in the API's error envelope (Django answers
an empty text/html 412)."""

from datetime import datetime

from django.http import HttpRequest, HttpResponse
from rest_framework.request import Request

from compliance_site.api.errors import error_response
from shared.conditional import conditional_response as shared_conditional_response


def conditional_response(
    request: Request | HttpRequest,
    response: HttpResponse,
    *,
    etag: str | None = None,
    last_modified: datetime | None = None,
) -> HttpResponse:
    """`response` with its validators (the body's hash and first-seen date when not given),
    or the 304/412 the request's conditions call for."""
    django_request = request._request if isinstance(request, Request) else request
    result = shared_conditional_response(
        django_request, response, etag=etag, last_modified=last_modified
    )
    if result.status_code == 412:
        return error_response(
            412, "precondition_failed", "the If-Match or If-Unmodified-Since condition failed"
        )
    return result
