"""Conditional reads (RFC 9110) for versioned records.

Django's `get_conditional_response` implements the precedence rules (If-None-Match over
If-Modified-Since), entity-tag lists, `*`, and weak comparison, so a `W/` tag added by a
compressing proxy still matches; its 304 repeats ETag, Cache-Control, Vary and Last-Modified.
A failed If-Match / If-Unmodified-Since is 412 in the API's error envelope.
"""

from datetime import datetime

from django.http import HttpResponse
from django.utils.cache import get_conditional_response
from django.utils.http import http_date
from rest_framework.request import Request

from compliance_site.api.errors import error_response


def conditional_response(
    request: Request, response: HttpResponse, *, etag: str, last_modified: datetime
) -> HttpResponse:
    response["ETag"] = etag
    response["Last-Modified"] = http_date(last_modified.timestamp())
    result = get_conditional_response(
        request._request,
        etag=etag,
        last_modified=int(last_modified.timestamp()),
        response=response,
    )
    # Never None: with a response given, Django answers that one when no condition fails.
    assert result is not None
    if result.status_code == 412:
        # Django answers an empty text/html 412; errors of this API are JSON envelopes.
        return error_response(
            412, "precondition_failed", "the If-Match or If-Unmodified-Since condition failed"
        )
    return result
