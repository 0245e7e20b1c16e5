"""The news service as deployed (deploy/gunicorn/news.py, two uvicorn workers): every request
gets an id, a JSON access line and a place in the latency histogram, including the answers
of the in-memory response cache and the MCP tool server, which never reach Django."""

import re
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.conf import settings as django_settings

from tests.conftest import database_url_for_subprocess
from tests.deployed import DeployedGunicorn
from tests.prometheus import sample, scrape

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def stack(django_db_setup, tmp_path_factory) -> Iterator[DeployedGunicorn]:
    """One deployed service for the module (two workers take seconds to start): each test reads
    series and lines of its own route, so what another test asked for never counts in them."""
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_RESPONSE_CACHE_SECONDS": "60",
        "MCP_RATE_LIMIT": "100000/m",
        # Each worker would load the embedding model before serving; not under test here.
        "NEWS_EMBEDDING_MODEL": "off",
    }
    server = DeployedGunicorn("news", env, tmp_path_factory.mktemp("logs"), workers=2)
    try:
        server.wait_ready("/healthz")
        server.wait_for_lines("Application startup complete.", count=2)
        yield server
    finally:
        server.stop()


@pytest.fixture
def deployed(stack, make_feed, make_entry) -> DeployedGunicorn:
    make_entry(make_feed(), title="Första nyheten")
    return stack


def test_answers_from_the_response_cache_have_their_own_ids_lines_and_counts(deployed):
    with ThreadPoolExecutor(max_workers=4) as pool:
        responses = list(pool.map(lambda _: httpx.get(f"{deployed.url}/entries.json"), range(24)))

    ids = [response.headers["X-Request-ID"] for response in responses]
    hits = [response for response in responses if "age" in response.headers]
    # The access lines come after the observations, so once they are all written the
    # histogram holds every request.
    lines = deployed.access_lines(ids)
    counts = {
        sample(
            scrape(deployed.url),
            "http_request_duration_seconds_count",
            method="GET",
            route="/entries.json",
            status="200",
        )
        for _ in range(6)
    }
    assert all(response.status_code == 200 for response in responses)
    assert hits, "no answer came from the response cache"
    assert len(set(ids)) == 24
    assert all(lines[request_id]["route"] == "/entries.json" for request_id in ids)
    assert len({lines[request_id]["pid"] for request_id in ids}) == 2
    assert counts == {24}


def test_mcp_calls_are_logged_and_counted_under_mcp(deployed):
    call = httpx.post(
        f"{deployed.url}/mcp",
        json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"},
        headers={"Accept": "application/json, text/event-stream", "X-Request-ID": "mcp-call-1"},
    )

    assert call.status_code == 200
    assert call.headers["X-Request-ID"] == "mcp-call-1"
    line = deployed.access_lines(["mcp-call-1"])["mcp-call-1"]
    assert (line["method"], line["route"], line["status"]) == ("POST", "/mcp", 200)
    labels = {"method": "POST", "route": "/mcp", "status": "200"}
    assert sample(scrape(deployed.url), "http_request_duration_seconds_count", **labels) == 1


def test_djangos_own_lines_inside_the_asgi_app_carry_the_request_id(deployed):
    missing = httpx.get(f"{deployed.url}/entries/999999999.json")

    request_id = missing.headers["X-Request-ID"]
    assert missing.status_code == 404
    assert re.fullmatch(r"[0-9a-f]{32}", request_id)
    access = deployed.access_lines([request_id])[request_id]
    mine = [entry for entry in deployed.log_entries() if entry.get("request_id") == request_id]
    assert {entry["logger"] for entry in mine} == {"access", "django.request"}
    assert access["route"] == "/entries/<id:entry_id>.json"


def test_a_refused_host_is_one_warning_line_without_a_traceback(deployed):
    refused = httpx.get(
        f"{deployed.url}/api/v1/entries",
        headers={"Host": "scanner.invalid", "X-Request-ID": "refused-host-1"},
    )

    deployed.access_lines(["refused-host-1"])
    lines = [
        entry
        for entry in deployed.log_entries()
        if entry.get("request_id") == "refused-host-1" and entry["logger"] != "access"
    ]
    assert refused.status_code == 400
    assert refused.json()["error"]["type"] == "invalid_request"
    assert [entry["logger"] for entry in lines] == ["django.security.DisallowedHost"]
    assert lines[0]["level"] == "WARNING"
    assert "scanner.invalid" in lines[0]["message"]
    assert "exception" not in lines[0]
