"""The MCP tool server as an ASGI app, for the requests to `/mcp` and the lifespan events
(news_site/router.py sends it those; the SDK's app starts its session manager's task group in
its lifespan).

In front of the tool server sit the checks every request to `/mcp` passes: the body is read
(at most DATA_UPLOAD_MAX_MEMORY_SIZE, else 413) and the request counted first, so every request
counts: a `tools/call` against MCP_RATE_LIMIT, anything else (initialize, notifications,
tools/list, pings, other methods) against the generous MCP_PROTOCOL_RATE_LIMIT, since a client
such as the MCP Inspector sends several of those for each tool call; over either, the 429's body
is a JSON-RPC error carrying `retry_after`. Then `GET` and other
methods are answered 405, and `Host` and `Origin` are checked against ALLOWED_HOSTS (DNS
rebinding).
"""

import io
import json
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from asgiref.sync import sync_to_async
from django.conf import settings
from django.core.exceptions import DisallowedHost
from django.core.handlers.asgi import ASGIRequest
from django.http import HttpResponse
from django.http.request import validate_host
from mcp.server.transport_security import TransportSecuritySettings
from starlette.responses import JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from news_site.mcp.tools import BASE_URL_SCOPE_KEY, server
from shared.env import Rate
from shared.http import client_network, payload_too_large_message
from shared.logs import current_request
from shared.ratelimit import Usage, apply_headers, usage_count

MCP_PATH = "/mcp"


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


def _messages(body: bytes) -> list[dict[str, Any]]:
    """The JSON-RPC messages of a body (one, or a batch); none when it is not JSON, which the
    tool server answers with its own parse error."""
    try:
        parsed = json.loads(body)
    except (ValueError, RecursionError):  # RecursionError: nesting deeper than Python's stack
        return []
    items = parsed if isinstance(parsed, list) else [parsed]
    return [item for item in items if isinstance(item, dict)]


def admit(scope: Scope, body: bytes, too_large: bool) -> Admission:
    """Count the request and decide whether the tool server may see it (blocking: cache I/O)."""
    request = ASGIRequest(scope, io.BytesIO())
    messages = [] if too_large or request.method != "POST" else _messages(body)
    calls = [message for message in messages if message.get("method") == "tools/call"]
    if calls:
        rate = Rate.parse(settings.MCP_RATE_LIMIT)
        group, policy = "mcp", "mcp"
    else:
        rate = Rate.parse(settings.MCP_PROTOCOL_RATE_LIMIT)
        group, policy = "mcp-protocol", "mcp-protocol"
    usage = usage_count(
        request,
        group=group,
        bucket=client_network(request),
        rate=rate,
        policy=policy,
        cost=max(1, len(calls)),
    )
    if usage is not None and usage.exceeded:
        return Admission(usage, _rate_limited(messages, usage))
    if request.method != "POST":
        # Stateless: no event stream to open with GET and no session to end with DELETE.
        return Admission(
            usage,
            PlainTextResponse("Method Not Allowed", status_code=405, headers={"Allow": "POST"}),
        )
    if too_large:
        return Admission(usage, PlainTextResponse(payload_too_large_message(), status_code=413))
    try:
        request.get_host()
    except DisallowedHost:
        return Admission(usage, PlainTextResponse("Invalid Host header", status_code=421))
    origin = request.headers.get("Origin")
    if origin is not None and not _origin_allowed(origin):
        return Admission(usage, PlainTextResponse("Invalid Origin header", status_code=403))
    return Admission(usage, None, base_url=request.build_absolute_uri("/").rstrip("/"))


# JSON-RPC's range for server-defined errors; the official SDK client surfaces a JSON-RPC error
# carried by a non-2xx answer as that error (with its data), where a plain-text 429 became a
# generic "internal error" with nothing to wait for.
RATE_LIMITED_CODE = -32029


def _rate_limited(messages: list[dict[str, Any]], usage: Usage) -> Response:
    """The contract's 429, its body a JSON-RPC error whose data says when to come back."""
    ids = [message["id"] for message in messages if "id" in message]
    error = {
        "code": RATE_LIMITED_CODE,
        "message": f"Rate limit exceeded: retry in {usage.reset_in} s.",
        "data": {"retry_after": usage.reset_in, "limit": usage.limit},
    }
    body = {"jsonrpc": "2.0", "id": ids[0] if len(ids) == 1 else None, "error": error}
    return JSONResponse(body, status_code=429)


async def _read_body(receive: Receive, limit: int | None) -> tuple[bytes, bool]:
    """The request body, and whether it went over `limit` (then reading stops there)."""
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] != "http.request":  # the client went away
            return b"".join(chunks), False
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return b"", True
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks), False


def _replaying(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the tool server the body already read, then the client's events."""
    pending = [{"type": "http.request", "body": body, "more_body": False}]

    async def replay() -> Message:
        if pending:
            return pending.pop()
        return await receive()

    return replay


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


def mcp_application() -> ASGIApp:
    tool_server = server.streamable_http_app(
        streamable_http_path=MCP_PATH,
        stateless_http=True,
        json_response=True,
        # `admit` checks Host and Origin with Django's ALLOWED_HOSTS semantics (`.example.com`
        # covers subdomains, which the SDK's exact-match lists cannot express).
        transport_security=TransportSecuritySettings(enable_dns_rebinding_protection=False),
    )

    async def application(scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await tool_server(scope, receive, send)
            return
        context = current_request()
        if context is not None:
            context.route = MCP_PATH
        body, too_large = await _read_body(receive, settings.DATA_UPLOAD_MAX_MEMORY_SIZE)
        admission = await sync_to_async(admit, thread_sensitive=False)(scope, body, too_large)
        headers = _limit_headers(admission.usage)
        receive = _replaying(body, receive)

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
