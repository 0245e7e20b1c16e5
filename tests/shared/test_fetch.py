"""shared.fetch against real HTTP servers on the loopback interface (no mocked HTTP)."""

import gzip
import ipaddress
import logging
import socket
import time
import zlib
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler

import pytest

from shared.fetch import FetchError, GuardedBackend, fetch, is_public_address
from tests.support.localserver import LocalServer, Route


@pytest.fixture
def server(local_server: LocalServer) -> LocalServer:
    return local_server


def get(url: str, **overrides: object) -> object:
    options: dict = {
        "user_agent": "test-agent/1.0",
        "timeout": 5,
        "max_bytes": 1000,
        "allow_private": True,
    }
    options.update(overrides)
    return fetch(url, **options)


def fetch_error(url: str, **overrides: object) -> FetchError:
    with pytest.raises(FetchError) as caught:
        get(url, **overrides)
    return caught.value


@pytest.fixture
def closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


# Plain responses


def test_a_200_returns_status_headers_and_body(server: LocalServer) -> None:
    server.respond("/page", body=b"hello", headers={"Content-Type": "text/plain"})

    result = get(server.url("/page"))

    assert result.status_code == 200
    assert result.body == b"hello"
    assert result.headers["Content-Type"] == "text/plain"
    assert result.url == server.url("/page")
    assert result.permanent_redirect_url is None


def test_a_304_is_returned_and_the_server_saw_our_headers(server: LocalServer) -> None:
    server.respond("/feed", status=304, content_length=False)

    result = get(server.url("/feed"), headers={"If-None-Match": '"v1"'})

    assert result.status_code == 304
    assert result.body == b""
    headers = server.seen[0][2]
    assert headers["If-None-Match"] == '"v1"'
    assert headers["User-Agent"] == "test-agent/1.0"


def test_the_user_agent_argument_wins_over_a_user_agent_in_extra_headers(
    server: LocalServer,
) -> None:
    server.respond("/page", body=b"ok")

    get(server.url("/page"), headers={"user-agent": "other"})

    assert server.seen[0][2].get_all("User-Agent") == ["test-agent/1.0"]


def test_a_500_is_returned_as_a_result_not_raised(server: LocalServer) -> None:
    server.respond("/broken", status=500, body=b"oops")

    result = get(server.url("/broken"))

    assert result.status_code == 500
    assert result.body == b"oops"


# Address guard


def test_loopback_is_refused_when_private_networks_are_not_allowed(server: LocalServer) -> None:
    server.respond("/page", body=b"secret")

    error = fetch_error(server.url("/page"), allow_private=False)

    assert error.code == "blocked_address"
    assert server.seen == []


def test_loopback_is_reached_when_private_networks_are_allowed(server: LocalServer) -> None:
    server.respond("/page", body=b"internal")

    assert get(server.url("/page"), allow_private=True).body == b"internal"


def test_a_hostname_resolving_to_loopback_is_refused(server: LocalServer) -> None:
    server.respond("/page", body=b"secret")

    error = fetch_error(f"http://localhost:{server.port}/page", allow_private=False)

    assert error.code == "blocked_address"
    assert server.seen == []


def test_the_setting_decides_when_allow_private_is_not_given(
    server: LocalServer, settings: object
) -> None:
    server.respond("/page", body=b"ok")

    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    assert fetch_error(server.url("/page"), allow_private=None).code == "blocked_address"
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = True
    assert get(server.url("/page"), allow_private=None).body == b"ok"


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1", "169.254.169.254"])
def test_the_backend_refuses_to_connect_to_non_public_addresses(host: str) -> None:
    # Every connection, redirect hops included, goes through this method, so refusing here
    # is what stops a redirect (or a DNS answer that changed) from reaching internal hosts.
    backend = GuardedBackend(allow_private=False, deadline=time.monotonic() + 5)

    with pytest.raises(FetchError) as caught:
        backend.connect_tcp(host, 80, timeout=1)

    assert caught.value.code == "blocked_address"


@pytest.mark.parametrize(
    ("address", "public"),
    [
        ("10.0.0.1", False),
        ("172.16.0.1", False),
        ("192.168.1.1", False),
        ("127.0.0.1", False),
        ("169.254.169.254", False),
        ("::1", False),
        ("fe80::1", False),
        ("::ffff:127.0.0.1", False),
        ("100.64.0.1", False),
        ("0.0.0.0", False),  # noqa: S104 (an address under test, not a bind)
        ("224.0.0.1", False),
        ("fec0::1", False),
        ("2002:7f00:1::", False),  # 6to4 wrapping 127.0.0.1
        ("64:ff9b::a00:1", False),  # NAT64 wrapping 10.0.0.1
        ("8.8.8.8", True),
        ("2606:4700:4700::1111", True),
    ],
)
def test_is_public_address(address: str, public: bool) -> None:
    assert is_public_address(ipaddress.ip_address(address)) is public


# Redirects


def test_permanent_redirects_all_the_way_report_the_new_url(server: LocalServer) -> None:
    server.redirect("/a", 301, server.url("/b"))
    server.redirect("/b", 308, "/c")
    server.respond("/c", body=b"moved")

    result = get(server.url("/a"))

    assert result.body == b"moved"
    assert result.url == server.url("/c")
    assert result.permanent_redirect_url == server.url("/c")


def test_a_temporary_hop_means_no_permanent_redirect_url(server: LocalServer) -> None:
    server.redirect("/a", 301, "/b")
    server.redirect("/b", 302, "/c")
    server.respond("/c", body=b"here")

    result = get(server.url("/a"))

    assert result.url == server.url("/c")
    assert result.permanent_redirect_url is None


def redirect_chain(server: LocalServer, hops: int) -> str:
    for number in range(hops):
        server.redirect(f"/hop{number}", 301, f"/hop{number + 1}")
    server.respond(f"/hop{hops}", body=b"end")
    return server.url("/hop0")


def test_max_redirects_hops_are_followed(server: LocalServer) -> None:
    assert get(redirect_chain(server, 5), max_redirects=5).body == b"end"


def test_one_hop_more_than_max_redirects_is_refused(server: LocalServer) -> None:
    error = fetch_error(redirect_chain(server, 6), max_redirects=5)

    assert error.code == "too_many_redirects"


def test_a_redirect_to_another_scheme_is_an_invalid_url(server: LocalServer) -> None:
    server.redirect("/a", 302, "ftp://files.example.com/x")

    assert fetch_error(server.url("/a")).code == "invalid_url"


# Size cap


def test_a_declared_oversized_body_is_refused_before_reading(server: LocalServer) -> None:
    server.respond("/big", body=b"x" * 1001)

    assert fetch_error(server.url("/big"), max_bytes=1000).code == "too_large"


def test_an_undeclared_oversized_body_is_refused(server: LocalServer) -> None:
    server.respond("/big", body=b"x" * 5000, content_length=False)

    assert fetch_error(server.url("/big"), max_bytes=1000).code == "too_large"


def test_a_body_of_exactly_max_bytes_is_accepted(server: LocalServer) -> None:
    server.respond("/exact", body=b"x" * 1000, content_length=False)

    assert len(get(server.url("/exact"), max_bytes=1000).body) == 1000


def test_a_gzip_bomb_is_refused_by_its_decoded_size(server: LocalServer) -> None:
    bomb = gzip.compress(b"\0" * 50_000_000)
    assert len(bomb) < 100_000
    server.respond("/bomb", body=bomb, headers={"Content-Encoding": "gzip"})

    assert fetch_error(server.url("/bomb"), max_bytes=100_000).code == "too_large"


@pytest.mark.parametrize(
    ("encoding", "compress"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),
        # Some servers send raw deflate under "deflate"; browsers accept it, so do we.
        ("deflate", lambda data: zlib.compress(data)[2:-4]),
    ],
)
def test_compressed_bodies_are_decoded(
    server: LocalServer, encoding: str, compress: Callable[[bytes], bytes]
) -> None:
    text = b"a compressible body " * 40
    server.respond("/z", body=compress(text), headers={"Content-Encoding": encoding})

    result = get(server.url("/z"), max_bytes=len(text))

    assert result.body == text
    assert "gzip" in server.seen[0][2]["Accept-Encoding"]


def test_a_multi_member_gzip_body_is_read_whole(server: LocalServer) -> None:
    members = [b"first member, " * 20, b"second member, " * 20, b"third."]
    body = b"".join(gzip.compress(member) for member in members)
    server.respond("/members", body=body, headers={"Content-Encoding": "gzip"})

    assert get(server.url("/members"), max_bytes=2000).body == b"".join(members)


def test_gzip_members_split_across_network_reads_are_joined(server: LocalServer) -> None:
    first, second = gzip.compress(b"A" * 300), gzip.compress(b"B" * 300)

    def route(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Encoding", "gzip")
        request.send_header("Transfer-Encoding", "chunked")
        request.end_headers()
        # The second member's magic number arrives one byte at a time.
        for part in (first + second[:1], second[1:2], second[2:]):
            request.wfile.write(b"%x\r\n%s\r\n" % (len(part), part))
            request.wfile.flush()
        request.wfile.write(b"0\r\n\r\n")

    server.route("/split", route)

    assert get(server.url("/split"), max_bytes=1000).body == b"A" * 300 + b"B" * 300


def test_trailing_padding_after_the_last_gzip_member_is_ignored(server: LocalServer) -> None:
    server.respond(
        "/padded", body=gzip.compress(b"body") + b"\0" * 8, headers={"Content-Encoding": "gzip"}
    )

    assert get(server.url("/padded")).body == b"body"


def test_a_bomb_spread_over_many_gzip_members_is_refused(server: LocalServer) -> None:
    member = gzip.compress(b"\0" * 1_000_000)
    server.respond("/bombs", body=member * 60, headers={"Content-Encoding": "gzip"})

    assert fetch_error(server.url("/bombs"), max_bytes=2_500_000).code == "too_large"


def test_an_encoding_we_did_not_offer_is_a_connection_error(server: LocalServer) -> None:
    server.respond("/br", body=b"\x0b\x02\x80hi\x03", headers={"Content-Encoding": "br"})

    assert fetch_error(server.url("/br")).code == "connection_error"


# Time limits and connection failures


def drip_body(server: LocalServer) -> Route:
    def route(request: BaseHTTPRequestHandler) -> None:
        request.send_response(200)
        request.send_header("Content-Length", "300")
        request.end_headers()
        for _ in range(300):
            if server.stopping.wait(0.2):
                return
            request.wfile.write(b"x")

    return route


def drip_headers(server: LocalServer) -> Route:
    def route(request: BaseHTTPRequestHandler) -> None:
        request.wfile.write(b"HTTP/1.1 200 OK\r\nX-Slow: ")
        for _ in range(300):
            if server.stopping.wait(0.2):
                return
            request.wfile.write(b"x")

    return route


@pytest.mark.parametrize("drip", [drip_body, drip_headers])
def test_a_slow_drip_server_times_out_after_about_timeout_seconds(
    server: LocalServer, drip: Callable[[LocalServer], Route]
) -> None:
    server.routes["/slow"] = drip(server)

    started = time.monotonic()
    error = fetch_error(server.url("/slow"), timeout=1)

    assert error.code == "timeout"
    # A drip lasts a minute: a bound on the gap between reads alone would wait for all of it.
    # The slack is for a loaded machine, not part of the deadline.
    assert time.monotonic() - started < 15


def test_a_refused_connection_is_a_connection_error(closed_port: int) -> None:
    error = fetch_error(f"http://127.0.0.1:{closed_port}/")

    assert error.code == "connection_error"


def test_a_failed_tls_handshake_is_a_tls_error(server: LocalServer) -> None:
    # The server speaks plain HTTP, so the TLS handshake gets an HTTP error page back.
    error = fetch_error(f"https://127.0.0.1:{server.port}/")

    assert error.code == "tls_error"


def test_error_messages_do_not_repeat_credentials_from_the_url(closed_port: int) -> None:
    error = fetch_error(f"http://reader:hunter2@127.0.0.1:{closed_port}/feed?token=abc123")

    assert "hunter2" not in str(error)
    assert "abc123" not in str(error)


@pytest.mark.parametrize("url", ["ftp://x", "file:///etc/passwd", "http://", "not a url"])
def test_only_http_and_https_urls_are_fetched(url: str) -> None:
    assert fetch_error(url).code == "invalid_url"


def test_request_logs_do_not_repeat_credentials_from_the_url(
    server: LocalServer, caplog: pytest.LogCaptureFixture
) -> None:
    server.respond("/feed", body=b"ok")
    caplog.set_level(logging.INFO, logger="httpx")

    get(f"http://reader:hunter2@127.0.0.1:{server.port}/feed?token=abc123")

    assert f"127.0.0.1:{server.port}/feed" in caplog.text
    assert "hunter2" not in caplog.text
    assert "abc123" not in caplog.text
