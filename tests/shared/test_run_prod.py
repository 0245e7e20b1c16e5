"""`make run-prod` (scripts/run_prod.sh) serves both services through nginx over TLS from the
shipped configs, on any port (absolute links and the admin's CSRF check use the port the
client asked on), holds slow clients (tests/news/serving/slow_clients.py) and a burst of clients
(tests/shared/burst_checks.py), answers what nginx refuses itself on /api/v1 in its envelope,
and Ctrl-C stops every process it started.
"""

import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.conftest import REPO_ROOT
from tests.news.serving.slow_clients import KINDS, slow_clients_cannot_take_the_service_down
from tests.run_prod import (
    STOP_SECONDS,
    Stack,
    alive,
    command,
    descendants,
    run_prod_stack,
    wait_ready,
)
from tests.shared.burst_checks import a_burst_gets_only_fast_refusals_and_bounded_connections

ADMIN_PASSWORD = "correct horse battery staple"
# Through nginx a request has its headers within client_header_timeout (10 s) and then its
# body within NEWS_REQUEST_BODY_SECONDS (10 s) of reaching the application, as shipped.
REQUEST_DEADLINE = 10 + 10


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    with run_prod_stack(tmp_path) as running:
        yield running


def _serves_both_services_through_nginx(stack: Stack) -> set[int]:
    """The checks of the serving stack; returns its processes."""
    certificate = stack.run_dir / "localhost.pem"
    # Requests come from 127.0.0.2, so the address the applications log can only be the one
    # nginx forwarded, not the peer they see (nginx, on 127.0.0.1).
    transport = httpx.HTTPTransport(local_address="127.0.0.2", verify=False)
    with httpx.Client(transport=transport, timeout=10) as boot:
        wait_ready(stack, boot)
    processes = descendants(stack.process.pid)
    commands = " ".join(command(pid) for pid in processes)
    for program in ("nginx: master", "nginx: worker", "gunicorn/news.py", "gunicorn/compliance.py"):
        assert program in commands
    assert "news_site db_worker" in commands
    trust = ssl.create_default_context(cafile=str(certificate))
    transport = httpx.HTTPTransport(local_address="127.0.0.2", verify=trust)
    with httpx.Client(transport=transport, timeout=10) as client:
        for site in ("news", "compliance"):
            health = client.get(stack.url(site, "/healthz"))
            assert health.status_code == 200
            assert health.json() == {"status": "ok"}

            css = client.get(stack.url(site, "/static/admin/css/base.css"))
            # With DEBUG off Django serves no static files: this is nginx, from STATIC_ROOT.
            assert css.status_code == 200
            assert css.headers["content-type"] == "text/css"
            assert css.headers["cache-control"] == "max-age=604800"

        # The first read of a public list fills nginx's cache, the second is served from it.
        first = client.get(stack.url("news", "/api/v1/entries?per_page=2"))
        assert first.status_code == 200
        assert first.headers["x-cache-status"] == "MISS"
        assert len(first.json()["data"]) == 2
        second = client.get(stack.url("news", "/api/v1/entries?per_page=2"))
        assert second.headers["x-cache-status"] == "HIT"
        assert second.content == first.content
        # A parameter no view reads: nginx keys the request on the parameters the surface reads
        # (news_site/cache_keys.py), so its copy answers (tests/shared/test_run_prod_cache_keys.py
        # has the rest). X-Accel-Expires, the application's word to nginx, is not passed on.
        busted = [
            client.get(stack.url("news", f"/api/v1/entries?per_page=2&_=busted{n}"))
            for n in range(2)
        ]
        assert [r.headers["x-cache-status"] for r in busted] == ["HIT", "HIT"]
        assert all(r.content == first.content for r in busted)
        assert all("x-accel-expires" not in r.headers for r in busted)
        # Requests with a cookie or credentials go past the cache.
        with_cookie = client.get(
            stack.url("news", "/api/v1/entries?per_page=2"), headers={"Cookie": "sessionid=x"}
        )
        assert with_cookie.status_code == 200
        assert with_cookie.headers["x-cache-status"] == "BYPASS"
        with_token = client.get(
            stack.url("news", "/api/v1/entries?per_page=2"),
            headers={"Authorization": "Bearer nws_unknown"},
        )
        assert with_token.status_code == 401
        assert with_token.headers["x-cache-status"] == "BYPASS"

        initialize = client.post(
            stack.url("news", "/mcp"),
            headers={"Accept": "application/json, text/event-stream"},
            json={
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {
                    "protocolVersion": "2025-06-18",
                    "capabilities": {},
                    "clientInfo": {"name": "run-prod-test", "version": "1"},
                },
            },
        )
        assert initialize.status_code == 200, initialize.text
        assert initialize.json()["result"]["serverInfo"]["name"]
        assert "x-cache-status" not in initialize.headers

        # A client's own X-Forwarded-For is replaced by nginx, never believed.
        flags = client.get(
            stack.url("compliance", "/api/v1/compliance/review_flags"),
            headers={"X-Forwarded-For": "203.0.113.9"},
        )
        # SECURE_SSL_REDIRECT is on: a 200 also shows the service believed X-Forwarded-Proto.
        assert flags.status_code == 200, flags.text
        assert "flagged" in flags.json()["data"]
        assert flags.headers["x-ratelimit-limit"] == "30"

        plain = client.get(
            f"http://127.0.0.1:{stack.ports['news_http']}/healthz", follow_redirects=False
        )
        assert plain.status_code == 301
        assert plain.headers["location"] == stack.url("news", "/healthz")

    # nginx's request id reaches the application, which logs it with the forwarded address.
    request_id = flags.headers["x-request-id"]
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    assert f"request_id={request_id}" in (stack.run_dir / "compliance.access.log").read_text()
    logged = [json.loads(line) for line in stack.output().splitlines() if line.startswith("{")]
    (access,) = [entry for entry in logged if entry.get("request_id") == request_id]
    assert access["path"] == "/api/v1/compliance/review_flags"
    assert access["client_ip"] == "127.0.0.2"
    assert any(entry.get("request_id") == initialize.headers["x-request-id"] for entry in logged)
    return processes


def _stops_cleanly(stack: Stack, processes: set[int]) -> None:
    # Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
    os.killpg(stack.process.pid, signal.SIGINT)
    stack.process.wait(timeout=STOP_SECONDS)
    assert "run-prod: stopping" in stack.output()
    assert not [command(pid) for pid in processes if alive(pid)]


def _create_superuser(stack: Stack, project: str, db_env: str, database: str) -> None:
    subprocess.run(
        [
            *(sys.executable, "-m", project, "createsuperuser", "--noinput"),
            *("--username", "editor", "--email", "editor@example.se"),
        ],
        cwd=REPO_ROOT,
        env={
            # Each entry point names its own settings module.
            **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
            db_env: f"{stack.server}/{database}",
            "DJANGO_SUPERUSER_PASSWORD": ADMIN_PASSWORD,
        },
        check=True,
        capture_output=True,
    )


def _admin_login(client: httpx.Client, origin: str) -> httpx.Response:
    """As a browser does it: the form sets the CSRF cookie, the POST carries its token, the
    Origin of the page and its Referer."""
    form = client.get(f"{origin}/admin/login/")
    assert form.status_code == 200, form.text
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', form.text)[1]
    return client.post(
        f"{origin}/admin/login/?next=/admin/",
        data={
            "csrfmiddlewaretoken": token,
            "username": "editor",
            "password": ADMIN_PASSWORD,
            "next": "/admin/",
        },
        headers={"Origin": origin, "Referer": f"{origin}/admin/login/"},
    )


def _links_and_admin_login_carry_the_port_the_client_asked_on(stack: Stack) -> None:
    with httpx.Client(transport=httpx.HTTPTransport(verify=False), timeout=10) as boot:
        wait_ready(stack, boot)
    _create_superuser(stack, "news_site", "NEWS_DATABASE_URL", stack.databases[0])
    _create_superuser(stack, "compliance_site", "COMPLIANCE_DATABASE_URL", stack.databases[1])
    trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
    news = f"https://localhost:{stack.ports['news']}"
    with httpx.Client(verify=trust, timeout=10) as client:
        llms = client.get(f"{news}/llms.txt")
        assert llms.status_code == 200
        assert f"({news}/index.md)" in llms.text
        assert "https://localhost/" not in llms.text

        rss = client.get(f"{news}/entries.rss")
        assert f"<link>{news}/</link>" in rss.text
        assert f'href="{news}/entries.rss"' in rss.text
        entry_id = client.get(f"{news}/api/v1/entries?per_page=1").json()["data"][0]["id"]
        markdown = client.get(f"{news}/entries/{entry_id}.md")
        assert markdown.status_code == 200
        assert f"{news}/entries/{entry_id}" in markdown.text
        stories = client.get(f"{news}/api/v1/stories").json()["data"]
        assert stories, "the demo data has stories"
        assert all(story["url"].startswith(f"{news}/") for story in stories)

        for site in ("news", "compliance"):
            origin = f"https://localhost:{stack.ports[site]}"
            login = _admin_login(client, origin)
            assert login.status_code == 302, (site, login.status_code, login.text[:500])
            assert login.headers["location"] == "/admin/"
            index = client.get(f"{origin}/admin/")
            assert index.status_code == 200
            assert "editor" in index.text


def _slow_clients_through_nginx(stack: Stack) -> None:
    trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
    attack = slow_clients_cannot_take_the_service_down(
        stack.url("news", ""), deadline=REQUEST_DEADLINE, seconds=REQUEST_DEADLINE, tls=trust
    )
    # Headers that never end get nginx's close. A body that stops gets the application's 408,
    # passed on, or nginx's close when its own gap between two reads (client_body_timeout) runs
    # out first; either way within the deadline, which the attack checked.
    for kind in KINDS:
        lines = {slow.status_line for slow in attack.slow if slow.kind == kind}
        if kind == "headers":
            assert lines == {b""}, lines
        else:
            assert lines and lines <= {b"", b"HTTP/1.1 408 Request Timeout"}, lines


def _edge_refusals_on_api_v1_are_json(stack: Stack) -> None:
    """What nginx refuses before the application sees it, in /api/v1's envelope there."""
    trust = ssl.create_default_context(cafile=str(stack.run_dir / "localhost.pem"))
    transport = httpx.HTTPTransport(local_address="127.0.0.4", verify=trust)
    with httpx.Client(transport=transport, timeout=10) as client:
        too_large = client.post(stack.url("news", "/api/v1/auth/login"), content=b"x" * (3 << 20))
        plain = client.post(stack.url("news", "/admin/login/"), content=b"x" * (3 << 20))
    assert too_large.status_code == 413, too_large.text
    assert too_large.headers["content-type"] == "application/json"
    assert too_large.json() == {
        "error": {"type": "payload_too_large", "message": "the request body is too large"},
        "meta": {"api_version": "v1"},
    }
    assert plain.status_code == 413
    assert plain.headers["content-type"].startswith("text/plain")
    # A transfer encoding nginx does not implement (no HTTP client library sends one).
    request = b"GET /api/v1/entries HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: gzip\r\n\r\n"
    with (
        socket.create_connection(("127.0.0.1", stack.ports["news"]), timeout=10) as raw,
        trust.wrap_socket(raw, server_hostname="127.0.0.1") as tls,
    ):
        tls.sendall(request)
        answer = b""
        while chunk := tls.recv(4096):
            answer += chunk
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 501"), head
    assert b"application/json" in head
    assert json.loads(body)["meta"] == {"api_version": "v1"}


def test_run_prod_serves_both_services_holds_a_burst_and_stops_cleanly(stack: Stack):
    # One stack for every check: its start migrates and loads the demo data of both services.
    # The burst comes after the checks of single requests (its clients fill nginx's cache and
    # the limiters' counts), stopping the stack last.
    processes = _serves_both_services_through_nginx(stack)
    _links_and_admin_login_carry_the_port_the_client_asked_on(stack)
    _edge_refusals_on_api_v1_are_json(stack)
    _slow_clients_through_nginx(stack)
    a_burst_gets_only_fast_refusals_and_bounded_connections(stack)
    _stops_cleanly(stack, processes)
