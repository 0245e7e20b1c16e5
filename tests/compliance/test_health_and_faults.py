"""Liveness, readiness, and what the service does when Redis is down."""

import httpx
import pytest
from django.conf import settings as django_settings

from compliance_site.access.keys import api_key_create
from tests.compliance.builders import state_payload
from tests.conftest import Gunicorn, database_url_for_subprocess, free_port

pytestmark = pytest.mark.django_db


# Readiness asks the database with raw SQL.
@pytest.mark.every_backend
def test_liveness_and_readiness(http):
    live = http.get("/healthz")
    ready = http.get("/readyz")

    assert live.json() == {"status": "ok"}
    assert ready.status_code == 200
    assert ready.json()["status"] == "ok"
    assert set(ready.json()["checks"]) == {"database", "cache"}
    assert "no-cache" in ready.headers["Cache-Control"]


@pytest.fixture
def without_redis(data_repo, run_reindex):
    """The service on gunicorn, its REDIS_URL pointing at a port where nothing listens."""
    data_repo.write("TX", state_payload("TX"))
    data_repo.commit("Seed")
    run_reindex()
    env = {
        "COMPLIANCE_DATABASE_URL": database_url_for_subprocess(
            django_settings.DATABASES["default"]
        ),
        "REDIS_URL": f"redis://127.0.0.1:{free_port()}/0",
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
    }
    server = Gunicorn("compliance_site.wsgi", env, workers=1)
    try:
        server.wait_ready("/healthz")
        yield server
    finally:
        server.stop()


# gunicorn, in another process, reads what the test wrote: committed rows, not a transaction.
@pytest.mark.django_db(transaction=True)
def test_with_redis_down_reads_are_served_unlimited_and_readiness_says_so(without_redis):
    _key, raw = api_key_create(name="outage", rate_limit_per_minute=1)
    headers = {"Authorization": f"Bearer {raw}"}
    base = without_redis.url

    reads = [httpx.get(f"{base}/api/v1/compliance/states/TX", headers=headers) for _ in range(3)]
    report = httpx.get(f"{base}/api/v1/compliance/review_flags")
    ready = httpx.get(f"{base}/readyz")

    assert [r.status_code for r in reads] == [200, 200, 200]
    assert "X-RateLimit-Limit" not in reads[0].headers
    assert report.status_code == 200
    assert ready.status_code == 503
    assert ready.json()["checks"]["cache"]["ok"] is False
    assert ready.json()["checks"]["database"]["ok"] is True
    # A bad key is still refused: authentication does not depend on Redis.
    refused = httpx.get(f"{base}/api/v1/compliance/meta", headers={"Authorization": "Bearer x"})
    assert refused.status_code == 401
