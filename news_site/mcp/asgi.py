"""The ASGI front of the news service: `/mcp` goes to the tool server, everything else to the
fallback (Django). The SDK's app needs its lifespan to run (it starts the session manager's
task group), which Django's ASGI handler does not do, so lifespan events go to it alone.

In front of the tool server sit the checks every request to `/mcp` passes: the rate limit
(counted first, so every request counts), `GET` and other methods answered 405, and the
DNS-rebinding check of `Host` and `Origin` against ALLOWED_HOSTS.
"""

import io
import re
from dataclasses import dataclass
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import DisallowedHost, ImproperlyConfigured
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.http.request import validate_host
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from news_site.mcp.tools import BASE_URL_SCOPE_KEY, server
from shared.http import client_ip
from shared.logs import current_request
from shared.ratelimit import Usage, apply_headers, usage_count

MCP_PATH = "/mcp"
_RATE = re.compile(r"^\s*(\d+)\s*/\s*(\d*)\s*([smhd])\s*$")
_PERIOD_SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


def parse_rate(value: str) -> tuple[int, int]:
    """`30/m`, `100/10m` ... as (calls, window seconds), the notation of django-ratelimit."""
    match = _RATE.match(value)
    if match is None or int(match[1]) < 1:
        raise ImproperlyConfigured(f"MCP_RATE_LIMIT must look like 30/m, got {value!r}")
    count, multiplier, unit = match.groups()
    return int(count), int(multiplier or 1) * _PERIOD_SECONDS[unit]


@dataclass(frozen=True)
class Admission:
    usage: Usage | None  # None while the shared cache is down (limits fail open)
    refusal: Response | None
    base_url: str = ""


def _allowed_hosts() -> list[str]:
    # The same list Django's own host check uses (HttpRequest.get_host).
    if settings.DEBUG and not settings.ALLOWED_HOSTS:
        return [".localhost", "127.0.0.1", "[::1]"]
    return settings.ALLOWED_HOSTS


def _origin_allowed(origin: str) -> bool:
    """A browser's Origin must name one of our own hosts ("null" and foreign sites do not)."""
    parts = urlsplit(origin)
    return parts.scheme in ("http", "https") and validate_host(
        parts.hostname or "", _allowed_hosts()
    )


def admit(scope: Scope) -> Admission:
    """Count the request and decide whether the tool server may see it (blocking: cache I/O)."""
    request = ASGIRequest(scope, io.BytesIO())
    limit, window = parse_rate(settings.MCP_RATE_LIMIT)
    usage = usage_count(
        request,
        group="mcp",
        bucket=f"mcp:{client_ip(request)}",
        limit=limit,
        window_seconds=window,
        policy="mcp",
    )
    if usage is not None and usage.exceeded:
        return Admission(usage, PlainTextResponse("Too Many Requests", status_code=429))
    if request.method != "POST":
        # Stateless: no event stream to open with GET and no session to end with DELETE.
        return Admission(
            usage,
            PlainTextResponse("Method Not Allowed", status_code=405, headers={"Allow": "POST"}),
        )
    try:
        request.get_host()
    except DisallowedHost:
        return Admission(usage, PlainTextResponse("Invalid Host header", status_code=421))
    origin = request.headers.get("Origin")
    if origin is not None and not _origin_allowed(origin):
        return Admission(usage, PlainTextResponse("Invalid Origin header", status_code=403))
    return Admission(usage, None, base_url=request.build_absolute_uri("/").rstrip("/"))


def _limit_headers(usage: Usage | None) -> list[tuple[bytes, bytes]]:
    if usage is None:
        return []
    carrier = HttpResponse()
    apply_headers(carrier, usage)
    return [
        (name.lower().encode("latin-1"), value.encode("latin-1"))
        for name, value in carrier.items()
        if name != "Content-Type"
    ]


def mcp_application(fallback: ASGIApp) -> ASGIApp:
    tool_server = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        # `admit` checks Host and Origin with Django's ALLOWED_HOSTS semantics (`.example.com`
        # covers subdomains, which the SDK's exact-match lists cannot express).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await tool_server(scope, receive, send)
            return
        if scope["type"] != "http" or scope["path"] != MCP_PATH:
            await fallback(scope, receive, send)
            return
        context = current_request()
        if context is not None:
            context.route = MCP_PATH
        admission = await sync_to_async(admit, thread_sensitive=False)(scope)
        headers = _limit_headers(admission.usage)

        async def send_with_limits(message: Message) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "headers": [*message.get("headers", []), *headers]}
            await send(message)

        if admission.refusal is not None:
            await admission.refusal(scope, receive, send_with_limits)
            return
        await tool_server(
            {**scope, BASE_URL_SCOPE_KEY: admission.base_url}, receive, send_with_limits
        )

    return application
