"""Conditional reads (RFC 9110) for versioned records.

Django's `get_conditional_response` implements the precedence rules (If-None-Match over
If-Modified-Since), entity-tag lists, `*`, and weak comparison, so a `W/` tag added by a
compressing proxy still matches; its 304 repeats ETag, Cache-Control, Vary and Last-Modified.
"""

from datetime import datetime

from django.http import HttpResponseBase
from django.utils.cache import get_conditional_response
from django.utils.http import http_date
from rest_framework.request import Request


def conditional_response(
    request: Request, response: HttpResponseBase, *, etag: str, last_modified: datetime
) -> HttpResponseBase:
    response["ETag"] = etag
    response["Last-Modified"] = http_date(last_modified.timestamp())
    return get_conditional_response(
        request._request,
        etag=etag,
        last_modified=int(last_modified.timestamp()),
        response=response,
    )
