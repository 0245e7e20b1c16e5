"""Conditional GETs (RFC 9110) for every surface a client polls: a strong `ETag` and a
`Last-Modified` on each answer, and `304 Not Modified` when the client's copy is current.

The ETag is the view's own (a record's version) or a hash of the body, so it changes exactly
when the body would. Last-Modified is the view's own time, or else the time this service first
answered the current body for this URL (kept in the shared cache under a hash of the URL and of
the request headers the answer varies on): it moves forward whenever the body changes and never
otherwise, so `If-Modified-Since` is as exact as `If-None-Match`, at HTTP's one-second grain (a
body that changes twice in a second is dated a second later). When the shared cache cannot be
reached or has forgotten the URL, the date is now: a client then downloads the page once more,
never misses a change.

Django's `get_conditional_response` applies the precedence rules (If-None-Match over
If-Modified-Since), entity-tag lists, `*`, and weak comparison for If-None-Match (so a `W/` tag
added by a compressing proxy still matches); its 304 repeats ETag, Cache-Control, Vary and
Last-Modified. Cache-Control is each surface's own (docs).
"""

import hashlib
import time
from collections.abc import Callable
from datetime import datetime

from django.http import HttpRequest, HttpResponse, HttpResponseBase
from django.utils.cache import get_conditional_response
from django.utils.http import http_date, parse_http_date_safe, quote_etag

from shared import cache

# Headers a 304 repeats besides the ones Django's does (ETag, Last-Modified, Cache-Control,
# Vary, Expires, Date, Content-Location): a poller reads its interval from every answer.
_REPEATED_ON_304 = ("X-Poll-Interval",)
# How long a URL's body is remembered; past it (or evicted) the next answer is dated anew.
OBSERVED_SECONDS = 7 * 24 * 3600
_KEY = "conditional:observed:{}"


def body_etag(body: bytes) -> str:
    """The strong ETag of a body (Django's set_response_etag makes the same): made here for a
    response, and with a kept page for every answer of it (news_site.api.pages)."""
    return quote_etag(hashlib.md5(body, usedforsecurity=False).hexdigest())


def conditional_response(
    request: HttpRequest,
    response: HttpResponse,
    *,
    etag: str | None = None,
    last_modified: datetime | None = None,
) -> HttpResponse:
    """`response` with its validators, or the 304/412 the request's conditions call for."""
    if etag is not None:
        response["ETag"] = etag
    elif not response.has_header("ETag") and response.content:
        response["ETag"] = body_etag(response.content)
    if last_modified is not None:
        response["Last-Modified"] = http_date(last_modified.timestamp())
    elif not response.has_header("Last-Modified") and response.has_header("ETag"):
        response["Last-Modified"] = http_date(_observed(request, response))
    result = get_conditional_response(
        request,
        etag=response.get("ETag"),
        last_modified=parse_http_date_safe(response["Last-Modified"]),
        response=response,
    )
    # Never None: with a response given, Django answers that one when no condition fails.
    assert result is not None
    if result.status_code == 304:
        for name in _REPEATED_ON_304:
            if response.has_header(name):
                result[name] = response[name]
    return result


def _observed(request: HttpRequest, response: HttpResponse) -> int:
    """When this URL first answered the body `response` carries (its ETag), in whole seconds."""
    varied = sorted(
        name.strip().lower() for name in response.get("Vary", "").split(",") if name.strip()
    )
    headers = "\n".join(f"{name}:{request.headers.get(name, '')}" for name in varied)
    # The query string read as the plain dict it is (not through request.META's recording of
    # what the view read, shared/query_reads.py): this bookkeeping does not shape the body, so
    # it must not make every parameter part of the response cache's key.
    query = dict.get(request.META, "QUERY_STRING", "")
    return first_answered(
        f"{request.get_host()}{request.path}?{query}\n{headers}", response["ETag"]
    )


def first_answered(name: str, etag: str) -> int:
    """When the answer called `name` (a URL with the headers it varies on, or any name that
    identifies one answer) was first `etag`, in whole seconds: now for a new body."""
    key = _KEY.format(hashlib.blake2b(name.encode(), digest_size=16).hexdigest())
    now = int(time.time())
    seen = cache.value_read(key)
    if isinstance(seen, tuple) and seen[0] == etag:
        return int(seen[1])
    # A new body is dated after the one it replaces, even within the same second.
    since = max(now, int(seen[1]) + 1) if isinstance(seen, tuple) else now
    cache.value_keep(key, (etag, since), OBSERVED_SECONDS)
    return since


class ConditionalGetMiddleware:
    """Validators and 304s for every successful GET that may be stored: what Django's
    ConditionalGetMiddleware does, plus Last-Modified. A `no-store` answer (personal, or one
    that must reach the server every time) gets none."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        response = self.get_response(request)
        if request.method not in ("GET", "HEAD") or response.status_code != 200:
            return response
        # A streamed body (HttpResponseBase, not HttpResponse) cannot be hashed.
        if not isinstance(response, HttpResponse):
            return response
        if "no-store" in response.get("Cache-Control", ""):
            return response
        return conditional_response(request, response)
