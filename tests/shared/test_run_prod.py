"""`make run-prod` (scripts/run_prod.sh) serves both services through nginx over TLS from the
shipped configs, and Ctrl-C stops every process it started.

The script runs with its own ports, databases (created by the script, dropped afterwards),
Redis database and folder for nginx's files. It needs PostgreSQL, so it runs in the PostgreSQL
pass of `make test`; a missing nginx, openssl or PostgreSQL fails the run under CI.
"""

import json
import os
import re
import shutil
import signal
import ssl
import subprocess
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import httpx
import psycopg
import pytest
from psycopg import sql

from tests.conftest import REPO_ROOT, free_port, redis_url_or_skip

STARTUP_SECONDS = 70
STOP_SECONDS = 30


def _missing(what: str) -> None:
    if os.environ.get("CI"):
        pytest.fail(f"{what} (.ci/run provides it)")
    pytest.skip(what)


def _postgres_server() -> str:
    url = os.environ.get("COMPLIANCE_DATABASE_URL", "")
    if not url.startswith("postgres"):
        pytest.skip("run-prod needs PostgreSQL: it runs in the PostgreSQL pass")
    server = url.rsplit("/", 1)[0]
    try:
        psycopg.connect(f"{server}/postgres", connect_timeout=3).close()
    except psycopg.Error:
        _missing(f"PostgreSQL is not reachable at {server}")
    return server


def _descendants(root: int) -> set[int]:
    """Every live process under `root` (from /proc: the script's children and theirs)."""
    children: dict[int, list[int]] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue  # gone meanwhile
        children.setdefault(int(fields[1]), []).append(int(stat.parent.name))
    found, todo = set(), [root]
    while todo:
        for child in children.get(todo.pop(), []):
            found.add(child)
            todo.append(child)
    return found


def _command(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


@dataclass
class Stack:
    process: subprocess.Popen
    log: Path
    run_dir: Path
    ports: dict[str, int]

    def url(self, site: str, path: str) -> str:
        return f"https://127.0.0.1:{self.ports[site]}{path}"

    def output(self) -> str:
        return self.log.read_text(errors="replace")


@pytest.fixture
def stack(tmp_path: Path) -> Iterator[Stack]:
    for program in ("nginx", "openssl"):
        if not (shutil.which(program) or Path(f"/usr/sbin/{program}").exists()):
            _missing(f"{program} is not installed")
    server = _postgres_server()
    redis_url = redis_url_or_skip()
    suffix = uuid.uuid4().hex[:8]
    databases = [f"runprod_news_{suffix}", f"runprod_compliance_{suffix}"]
    sites = ("news", "compliance", "news_http", "compliance_http", "news_app", "compliance_app")
    ports = {name: free_port() for name in sites}
    # Under the checkout, not the test's private temp folder: nginx's workers run as an
    # unprivileged user when the tests run as root, and write the cache here.
    run_dir = REPO_ROOT / "var" / f"run-prod-test-{suffix}"
    log = tmp_path / "run_prod.log"
    env = {
        **os.environ,
        "PG_URL": server,
        "RUN_PROD_NEWS_DB": databases[0],
        "RUN_PROD_COMPLIANCE_DB": databases[1],
        "RUN_PROD_REDIS_URL": redis_url,
        "RUN_PROD_NEWS_HTTPS_PORT": str(ports["news"]),
        "RUN_PROD_COMPLIANCE_HTTPS_PORT": str(ports["compliance"]),
        "RUN_PROD_NEWS_HTTP_PORT": str(ports["news_http"]),
        "RUN_PROD_COMPLIANCE_HTTP_PORT": str(ports["compliance_http"]),
        "RUN_PROD_NEWS_APP_PORT": str(ports["news_app"]),
        "RUN_PROD_COMPLIANCE_APP_PORT": str(ports["compliance_app"]),
        "RUN_PROD_DIR": str(run_dir),
        # One worker each and no embedding model keep the start-up short; the rest is as
        # shipped.
        "WEB_CONCURRENCY": "1",
        "NEWS_EMBEDDING_MODEL": "off",
    }
    with log.open("wb") as sink:
        # A session of its own, so that Ctrl-C can be sent to its process group as a terminal
        # would.
        process = subprocess.Popen(
            ["bash", "scripts/run_prod.sh"],
            cwd=REPO_ROOT,
            env=env,
            stdout=sink,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    try:
        yield Stack(process, log, run_dir, ports)
    finally:
        if process.poll() is None:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()
        shutil.rmtree(run_dir, ignore_errors=True)
        with psycopg.connect(f"{server}/postgres", autocommit=True) as connection:
            for name in databases:
                connection.execute(
                    sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(sql.Identifier(name))
                )


def _wait_ready(stack: Stack, client: httpx.Client) -> None:
    deadline = time.monotonic() + STARTUP_SECONDS
    pending = {"news", "compliance"}
    while pending and time.monotonic() < deadline:
        if stack.process.poll() is not None:
            pytest.fail(f"run_prod.sh exited with {stack.process.returncode}:\n{stack.output()}")
        for site in list(pending):
            try:
                if client.get(stack.url(site, "/healthz")).status_code == 200:
                    pending.discard(site)
            except httpx.TransportError:
                pass
        time.sleep(0.5)
    assert not pending, f"{pending} not ready in {STARTUP_SECONDS} s:\n{stack.output()[-3000:]}"


def test_run_prod_serves_both_services_through_nginx_and_stops_cleanly(stack: Stack):
    certificate = stack.run_dir / "localhost.pem"
    # Requests come from 127.0.0.2, so the address the applications log can only be the one
    # nginx forwarded, not the peer they see (nginx, on 127.0.0.1).
    transport = httpx.HTTPTransport(local_address="127.0.0.2", verify=False)
    with httpx.Client(transport=transport, timeout=10) as boot:
        _wait_ready(stack, boot)
    processes = _descendants(stack.process.pid)
    commands = " ".join(_command(pid) for pid in processes)
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

    # Ctrl-C: the terminal sends SIGINT to the whole foreground process group.
    os.killpg(stack.process.pid, signal.SIGINT)
    stack.process.wait(timeout=STOP_SECONDS)
    assert "run-prod: stopping" in stack.output()
    assert not [_command(pid) for pid in processes if _alive(pid)]
