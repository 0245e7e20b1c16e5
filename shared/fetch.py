"""Outbound HTTP for URLs that users and data files control (feeds, government pages).

Those URLs are untrusted, so every fetch is guarded: only public addresses unless private
networks are allowed, a hard cap on the decoded body, a deadline for the whole exchange, and a
bounded number of redirects. Errors come out as one exception type with a machine-readable code
(shared/fetch_errors.py); the body is read and inflated under its cap in shared/fetch_body.py.
"""

import functools
import ipaddress
import logging
import socket
import ssl
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

import httpcore
import httpx

from shared.fetch_body import ACCEPT_ENCODING, read_capped
from shared.fetch_errors import FetchError as FetchError  # fetch()'s error, for its callers

_PERMANENT_REDIRECTS = frozenset({301, 308})
_CGNAT = ipaddress.IPv4Network("100.64.0.0/10")
# NAT64 gateways translate these to the embedded IPv4 address, which could be a private one.
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")


@dataclass(frozen=True)
class FetchResult:
    url: str
    status_code: int
    # As the server sent them: Content-Encoding and Content-Length describe the wire body.
    headers: httpx.Headers
    body: bytes
    permanent_redirect_url: str | None


class _RedactRequestLog(logging.Filter):
    """httpx logs every request's full URL at INFO, and feed URLs can carry passwords or
    tokens. Keep the origin and path in that line, drop userinfo and the query."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.args, tuple):
            record.args = tuple(
                arg.copy_with(username=None, password=None, query=None)
                if isinstance(arg, httpx.URL)
                else arg
                for arg in record.args
            )
        return True


# A filter on httpx's own logger, because fetch() has no say in what httpx.Client logs.
logging.getLogger("httpx").addFilter(_RedactRequestLog())


def is_public_address(ip: ipaddress.IPv4Address | ipaddress.IPv6Address) -> bool:
    """Whether `ip` is globally reachable. `is_global` alone is not enough: on Python 3.11 it
    is True for multicast, IPv6 site-local and 6to4/NAT64 wrappers of private IPv4 addresses."""
    if isinstance(ip, ipaddress.IPv6Address):
        embedded = ip.ipv4_mapped or ip.sixtofour
        if embedded is None and ip in _NAT64:
            embedded = ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
        if embedded is not None and not is_public_address(embedded):
            return False
        if ip.is_site_local:
            return False
    elif ip in _CGNAT:
        return False
    return ip.is_global and not (
        ip.is_private
        or ip.is_loopback
        or ip.is_link_local
        or ip.is_multicast
        or ip.is_reserved
        or ip.is_unspecified
    )


def fetch(
    url: str,
    *,
    user_agent: str,
    timeout: float,
    max_bytes: int,
    max_redirects: int = 5,
    headers: dict[str, str] | None = None,
    allow_private: bool | None = None,
    method: Literal["GET", "POST"] = "GET",
    content: bytes | None = None,
) -> FetchResult:
    """GET `url` (or POST `content` to it: webhooks) and return the final response whatever its
    status (304 and 5xx included).

    `timeout` bounds each network operation and also the whole exchange, redirects and body
    included, so a server dripping bytes cannot hold a worker. `allow_private=None` defers to
    the FETCH_ALLOW_PRIVATE_NETWORKS setting. Raises FetchError.
    """
    if allow_private is None:
        allow_private = _private_networks_allowed()
    deadline = time.monotonic() + timeout
    request_headers = httpx.Headers(headers or {})
    request_headers["User-Agent"] = user_agent
    request_headers["Accept-Encoding"] = ACCEPT_ENCODING
    target = _checked_url(url)

    backend = GuardedBackend(allow_private=allow_private, deadline=deadline)
    # A transport of our own also means httpx ignores HTTP(S)_PROXY from the environment: a
    # proxy would make the connect-time address check meaningless.
    with httpx.Client(
        transport=_GuardedTransport(backend), timeout=timeout, trust_env=False
    ) as client:
        request = client.build_request(method, target, headers=request_headers, content=content)
        redirects = 0
        all_permanent = True
        try:
            while True:
                response = client.send(request, stream=True)
                try:
                    # httpx fills next_request only for a redirect with a usable Location.
                    if response.next_request is None:
                        body = read_capped(response, max_bytes)
                        break
                finally:
                    response.close()
                if redirects >= max_redirects:
                    raise FetchError(
                        "too_many_redirects",
                        f"more than {max_redirects} redirects from {target.host}",
                    )
                redirects += 1
                all_permanent = all_permanent and response.status_code in _PERMANENT_REDIRECTS
                request = response.next_request
                _checked_url(str(request.url))
        except (httpx.TransportError, httpx.InvalidURL) as exc:
            raise _translate(exc, request.url.host) from exc

    final_url = str(response.url)
    return FetchResult(
        url=final_url,
        status_code=response.status_code,
        headers=response.headers,
        body=body,
        permanent_redirect_url=final_url if redirects and all_permanent else None,
    )


class GuardedBackend(httpcore.SyncBackend):
    """The network backend every connection of a fetch goes through, redirect hops included.

    The address check happens here, on the addresses actually connected to, rather than on
    the URL beforehand: a hostname can resolve to a public address when checked and to
    127.0.0.1 a moment later (DNS rebinding). We resolve once, vet every address, and connect
    to the vetted IP literal. TLS still verifies the URL's host name, because httpcore passes
    server_hostname from the request origin, not from what we connected to.
    """

    def __init__(self, *, allow_private: bool, deadline: float) -> None:
        self._allow_private = allow_private
        self._deadline = deadline

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[httpcore.SOCKET_OPTION] | None = None,
    ) -> httpcore.NetworkStream:
        error: Exception | None = None
        for address in self._vetted_addresses(host, port):
            try:
                stream = super().connect_tcp(
                    address,
                    port,
                    timeout=_clamp(timeout, self._deadline, httpcore.ConnectTimeout),
                    local_address=local_address,
                    socket_options=socket_options,
                )
            except (httpcore.ConnectError, httpcore.ConnectTimeout) as exc:
                error = exc
                continue
            return _DeadlineStream(stream, self._deadline)
        assert error is not None  # getaddrinfo never returns an empty list
        raise error

    def _vetted_addresses(self, host: str, port: int) -> list[str]:
        try:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        except (OSError, UnicodeError) as exc:
            raise httpcore.ConnectError(f"could not resolve {host}") from exc
        addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
        if not self._allow_private:
            # Refuse if any answer is private, not just the first: the OS might try the next.
            for address in addresses:
                if not is_public_address(ipaddress.ip_address(address)):
                    raise FetchError(
                        "blocked_address", f"{host} resolves to {address}, not a public address"
                    )
        return addresses


class _DeadlineStream(httpcore.NetworkStream):
    """Shrinks every socket timeout to the time left before the fetch's deadline. httpx's own
    timeouts apply per read, so without this a server sending one byte a second (in the
    headers or the body) would keep a fetch alive for as long as it liked."""

    def __init__(self, inner: httpcore.NetworkStream, deadline: float) -> None:
        self._inner = inner
        self._deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self._inner.read(max_bytes, _clamp(timeout, self._deadline, httpcore.ReadTimeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self._inner.write(buffer, _clamp(timeout, self._deadline, httpcore.WriteTimeout))

    def close(self) -> None:
        self._inner.close()

    def start_tls(
        self,
        ssl_context: ssl.SSLContext,
        server_hostname: str | None = None,
        timeout: float | None = None,
    ) -> httpcore.NetworkStream:
        tls_timeout = _clamp(timeout, self._deadline, httpcore.ConnectTimeout)
        inner = self._inner.start_tls(ssl_context, server_hostname, tls_timeout)
        return _DeadlineStream(inner, self._deadline)

    def get_extra_info(self, info: str) -> object:
        return self._inner.get_extra_info(info)


def _clamp(timeout: float | None, deadline: float, expired: type[Exception]) -> float:
    remaining = deadline - time.monotonic()
    if remaining <= 0:
        # A zero socket timeout would mean non-blocking, not "expired", so raise ourselves.
        raise expired("the fetch deadline has passed")
    return remaining if timeout is None else min(timeout, remaining)


class _GuardedTransport(httpx.HTTPTransport):
    def __init__(self, backend: GuardedBackend) -> None:
        super().__init__(verify=_ssl_context(), trust_env=False)
        # httpx has no public hook for httpcore's network backend, so replace the pool it just
        # built (no connection has been opened yet) with one that connects through ours.
        self._pool = httpcore.ConnectionPool(ssl_context=_ssl_context(), network_backend=backend)


@functools.cache
def _ssl_context() -> ssl.SSLContext:
    # Loading the CA bundle costs milliseconds; one verifying context serves every fetch.
    return httpx.create_ssl_context()


def _checked_url(url: str) -> httpx.URL:
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise FetchError("invalid_url", "not a valid URL") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise FetchError("invalid_url", "only http and https URLs with a host can be fetched")
    return parsed


def _translate(exc: httpx.TransportError | httpx.InvalidURL, host: str) -> FetchError:
    # Only connect failures quote the underlying error: those come from the socket or TLS
    # layer. Others (h11 protocol errors) can quote our own request headers back.
    if isinstance(exc, httpx.TimeoutException):
        return FetchError("timeout", f"timed out talking to {host}")
    if isinstance(exc, httpx.InvalidURL | httpx.UnsupportedProtocol):
        return FetchError("invalid_url", f"{host} redirected to an unusable URL")
    if isinstance(exc, httpx.ConnectError):
        if _caused_by_tls(exc):
            return FetchError("tls_error", f"TLS with {host} failed: {exc}")
        return FetchError("connection_error", f"could not connect to {host}: {exc}")
    return FetchError("connection_error", f"{host} broke the HTTP exchange ({type(exc).__name__})")


def _caused_by_tls(exc: BaseException) -> bool:
    cause: BaseException | None = exc
    while cause is not None:
        if isinstance(cause, ssl.SSLError):
            return True
        cause = cause.__cause__ or cause.__context__
    return False


def _private_networks_allowed() -> bool:
    # Imported here so the module works (and tests run) without configured Django settings.
    from django.conf import settings

    if not settings.configured:
        return False
    return bool(getattr(settings, "FETCH_ALLOW_PRIVATE_NETWORKS", False))
