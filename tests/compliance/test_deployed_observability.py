"""The compliance service as deployed (deploy/gunicorn/compliance.py, two sync workers, HTTPS
enforced behind a proxy): JSON log lines with request ids, and metrics that add up every
worker's requests whichever worker answers the scrape."""

from collections import Counter
from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
from django.conf import settings as django_settings

from tests.conftest import database_url_for_subprocess
from tests.deployed import DeployedGunicorn
from tests.prometheus import sample, scrape

# The server in another process writes nothing the test reads and reads nothing the test
# writes: the test database without a flush afterwards.
pytestmark = pytest.mark.django_db

# What nginx sends with every request it passes on.
PROXIED = {"Host": "compliance.example", "X-Forwarded-Proto": "https"}
META_ROUTE = "/api/v1/compliance/meta"


# One server for the module's tests (django_db_setup: the test database exists before it
# starts); each test reads only the log lines and counts its own requests add.
@pytest.fixture(scope="module")
def deployed(django_db_setup, tmp_path_factory):
    env = {
        "COMPLIANCE_DATABASE_URL": database_url_for_subprocess(
            django_settings.DATABASES["default"]
        ),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "true",
        "ALLOWED_HOSTS": "compliance.example",
        "COMPLIANCE_ANONYMOUS_RATE_LIMIT": "100000/m",
    }
    server = DeployedGunicorn("compliance", env, tmp_path_factory.mktemp("deployed"), workers=2)
    try:
        server.wait_ready("/metrics")
        server.wait_for_workers(2)
        yield server
    finally:
        server.stop()


def test_every_line_is_json_and_a_requests_lines_carry_its_id(deployed):
    response = httpx.get(
        f"{deployed.url}{META_ROUTE}", headers={**PROXIED, "X-Request-ID": "nginx-7f3a"}
    )

    assert response.status_code == 401
    assert response.headers["X-Request-ID"] == "nginx-7f3a"
    entries = deployed.log_entries()
    mine = [entry for entry in entries if entry.get("request_id") == "nginx-7f3a"]
    [access] = [entry for entry in mine if entry["logger"] == "access"]
    assert access["service"] == "compliance"
    assert (access["method"], access["path"], access["route"]) == ("GET", META_ROUTE, META_ROUTE)
    assert access["status"] == 401
    assert access["duration_ms"] >= 0
    assert access["client_ip"] == "127.0.0.1"
    # Django's own line about the 401, logged after the middleware returned.
    assert any(entry["logger"] == "django.request" for entry in mine)
    # gunicorn's lines are JSON too, and it writes no access lines of its own.
    assert any(entry["logger"] == "gunicorn.error" for entry in entries)
    assert not any(entry["logger"] == "gunicorn.access" for entry in entries)


def test_a_scrape_of_either_worker_counts_the_requests_of_both(deployed):
    requests = 40
    labels = {"method": "GET", "route": META_ROUTE, "status": "401"}
    counted_before = sample(scrape(deployed.url), "http_request_duration_seconds_count", **labels)
    lines_before = len(deployed.log_entries())
    with ThreadPoolExecutor(max_workers=8) as pool:
        statuses = list(
            pool.map(
                lambda _: httpx.get(f"{deployed.url}{META_ROUTE}", headers=PROXIED).status_code,
                range(requests),
            )
        )

    counts = [
        sample(scrape(deployed.url), "http_request_duration_seconds_count", **labels)
        for _ in range(6)
    ]
    served_by = Counter(
        entry["pid"]
        for entry in deployed.log_entries()[lines_before:]
        if entry["logger"] == "access" and entry["route"] == META_ROUTE
    )
    assert statuses == [401] * requests
    assert len(served_by) == 2, served_by
    assert counts == [counted_before + requests] * 6


def test_metrics_answer_plain_http_by_address_while_everything_else_needs_the_proxy(deployed):
    direct_api = httpx.get(f"{deployed.url}{META_ROUTE}")
    plain_http_api = httpx.get(f"{deployed.url}{META_ROUTE}", headers={"Host": PROXIED["Host"]})
    metrics = httpx.get(f"{deployed.url}/metrics")

    assert direct_api.status_code == 400  # not one of ALLOWED_HOSTS
    assert plain_http_api.status_code == 301  # HTTPS enforced
    assert metrics.status_code == 200
    assert "http_request_duration_seconds_bucket" in metrics.text
