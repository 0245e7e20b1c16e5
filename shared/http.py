"""Small pieces of HTTP plumbing both services use."""

import ipaddress
import re
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest, HttpResponse
from django.utils.module_loading import import_string
from django.views.decorators.csrf import csrf_exempt
from django.views.decorators.http import require_safe

_BEARER = re.compile(r"^Bearer ([A-Za-z0-9\-._~+/]+=*)$")


class MalformedAuthorization(Exception):
    """An Authorization header that is not `Bearer <token>`."""


def bearer_token(request: HttpRequest) -> str | None:
    """The Bearer token of the request, None when there is no Authorization header."""
    header = request.META.get("HTTP_AUTHORIZATION")
    if header is None:
        return None
    match = _BEARER.match(header.strip())
    if match is None or len(header) > 1024:
        raise MalformedAuthorization("the Authorization header must be 'Bearer <token>'")
    return match[1]


def client_ip(request: HttpRequest) -> str:
    """The client's address. Forwarded headers count only when the peer is a trusted proxy,
    so nobody can spoof their way around a per-IP limit."""
    return client_address(
        request.META.get("REMOTE_ADDR", ""),
        forwarded_for=request.META.get("HTTP_X_FORWARDED_FOR", ""),
        real_ip=request.META.get("HTTP_X_REAL_IP", ""),
    )


def client_network(request: HttpRequest) -> str:
    """What a per-address limit counts: the client's address (`client_ip`) as `limit_key`
    reads it."""
    return limit_key(client_ip(request))


def limit_key(address: str) -> str:
    """The block of addresses one client holds: an IPv4 address itself, an IPv6 address its
    /64 (one subscriber or host is handed a whole /64, so counting each of its 2^64 addresses
    apart would let one client multiply its limit at will), an IPv4-mapped IPv6 address the
    IPv4 address it maps. Text that is not an address is its own key."""
    try:
        parsed = ipaddress.ip_address(address)
    except ValueError:
        return address
    if isinstance(parsed, ipaddress.IPv6Address):
        if parsed.ipv4_mapped is not None:
            return str(parsed.ipv4_mapped)
        return str(ipaddress.IPv6Network((parsed, 64), strict=False))
    return str(parsed)


def client_address(peer: str, *, forwarded_for: str, real_ip: str) -> str:
    """`client_ip` from the peer's address and the two forwarding headers' values, for code
    that sees a request before Django does (the news service's ASGI front)."""
    trusted = settings.TRUSTED_PROXIES
    if peer not in trusted:
        return peer
    # The rightmost address not added by one of our proxies is the client.
    for candidate in reversed([part.strip() for part in forwarded_for.split(",") if part.strip()]):
        if candidate not in trusted and _is_ip(candidate):
            return candidate
    real_ip = real_ip.strip()
    return real_ip if _is_ip(real_ip) else peer


def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


class BodyTooLargeMiddleware:
    """A request whose Content-Length exceeds DATA_UPLOAD_MAX_MEMORY_SIZE is answered 413 before
    anything reads its body, in the error shape of the surface it was sent to: the project's
    PAYLOAD_TOO_LARGE_RESPONSE, a function of the request. (Otherwise Django raises
    RequestDataTooBig only once a view reads the body, deep inside code that does not expect it.)
    nginx refuses such bodies first in production; this holds for clients that reach the
    application server directly."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        try:
            length = int(request.META.get("CONTENT_LENGTH") or 0)
        except ValueError:
            length = 0
        if limit is not None and length > limit:
            too_large: Callable[[HttpRequest], HttpResponse]
            too_large = import_string(settings.PAYLOAD_TOO_LARGE_RESPONSE)
            return too_large(request)
        return self.get_response(request)


def payload_too_large_message() -> str:
    return f"the request body is larger than {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes"


def plain_payload_too_large(request: HttpRequest) -> HttpResponse:
    """413 for the surfaces without a JSON error envelope (admin, HTML, markdown)."""
    return HttpResponse(
        payload_too_large_message() + "\n", status=413, content_type="text/plain; charset=utf-8"
    )


def read_only(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    """A view of a read-only surface: POST, PUT, DELETE and the like answer 405 with `Allow:
    GET, HEAD`. The CSRF check is for forms, and none posts here; left in front, it answered
    every unsafe method with its 403 HTML page, which told a client nothing it could act on."""
    return csrf_exempt(require_safe(view))
