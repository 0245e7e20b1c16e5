"""Every request gets an id, one JSON access line and one observation in the latency histogram.

The layer that receives a request first does this: `ObservedASGI` in front of the whole news
application (so that `/mcp` and answers from the in-memory response cache count too), else
`RequestObservabilityMiddleware`, the first of Django's middleware. When Django runs inside
`ObservedASGI`, the middleware only records which URL pattern answered.
"""

import functools
import logging
import time
from collections.abc import Callable

from django.contrib.admindocs.views import simplify_regex
from django.http import HttpRequest, HttpResponse
from django.urls import Resolver404, resolve
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from shared.http import client_address, client_ip
from shared.logs import REQUEST_ID_HEADER, RequestContext, current_request, request_id_from, serving
from shared.metrics import UNMATCHED_ROUTE, request_observe

access_logger = logging.getLogger("access")

_REQUEST_ID_HEADER_BYTES = REQUEST_ID_HEADER.lower().encode("latin-1")


@functools.lru_cache(maxsize=4096)
def route_for_path(path: str) -> str:
    """The URL pattern `path` resolves to, for requests answered before Django resolved them
    (a rate-limit refusal, a redirect, a response-cache hit)."""
    try:
        return readable_route(resolve(path).route)
    except Resolver404:
        return UNMATCHED_ROUTE


def _request_route(request: HttpRequest) -> str:
    match = getattr(request, "resolver_match", None)
    if match is None:
        return route_for_path(request.path_info)
    return readable_route(match.route)


@functools.lru_cache(maxsize=512)
def readable_route(route: str) -> str:
    """Django's own route of the matched pattern as a metric label, from the root:
    `/api/v1/entries/<id:entry_id>`. The services' patterns are path()s with converters; the
    few regular expressions of Django's admin are simplified by Django's own admindocs helper
    (`/admin/<app_label>/`)."""
    return simplify_regex(route)


def request_record(
    *, method: str, path: str, route: str, status: int, seconds: float, client: str
) -> None:
    request_observe(method=method, route=route, status=status, seconds=seconds)
    # The path without its query string: queries carry search terms and cursors.
    access_logger.info(
        "%s %s %s",
        method,
        path,
        status,
        extra={
            "method": method,
            "path": path,
            "route": route,
            "status": status,
            "duration_ms": round(seconds * 1000, 2),
            "client_ip": client,
        },
    )


class RequestObservabilityMiddleware:
    """First in MIDDLEWARE. Under WSGI it owns the request (id, access line, metrics); the
    duration ends when the response is handed to the server."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        outer = current_request()
        if outer is not None:
            request.request_id = outer.request_id  # type: ignore[attr-defined]
            response = self.get_response(request)
            outer.route = outer.route or _request_route(request)
            return response
        started = time.perf_counter()
        context = RequestContext(request_id_from(request.headers.get(REQUEST_ID_HEADER)))
        # For the lines Django logs about the response after this middleware has returned.
        request.request_id = context.request_id  # type: ignore[attr-defined]
        with serving(context):
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = context.request_id
            request_record(
                method=request.method or "",
                path=request.path,
                route=context.route or _request_route(request),
                status=response.status_code,
                seconds=time.perf_counter() - started,
                client=client_ip(request),
            )
        return response


class ObservedASGI:
    """The outermost layer of an ASGI application: the duration runs to the last byte sent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        headers = dict(scope["headers"])
        context = RequestContext(
            request_id_from(headers.get(_REQUEST_ID_HEADER_BYTES, b"").decode("latin-1"))
        )
        request_id = context.request_id.encode("latin-1")
        # What the client gets when the application fails before it starts a response.
        status = 500

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                message = {
                    **message,
                    "headers": [
                        *message.get("headers", []),
                        (_REQUEST_ID_HEADER_BYTES, request_id),
                    ],
                }
            await send(message)

        with serving(context):
            try:
                await self.app(scope, receive, send_with_id)
            finally:
                peer = scope.get("client") or ("", 0)
                request_record(
                    method=scope["method"],
                    path=scope["path"],
                    route=context.route or route_for_path(scope["path"]),
                    status=status,
                    seconds=time.perf_counter() - started,
                    client=client_address(
                        peer[0],
                        forwarded_for=headers.get(b"x-forwarded-for", b"").decode("latin-1"),
                        real_ip=headers.get(b"x-real-ip", b"").decode("latin-1"),
                    ),
                )
