"""Rate limits and the cached review report hold across several gunicorn worker processes that
share Redis."""

from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, date, datetime

import httpx
import pytest
import redis
from django.conf import settings as django_settings

from compliance_site.access.keys import api_key_create
from compliance_site.monitoring.services import flag_raise
from tests.compliance.builders import state_payload
from tests.compliance.windows import fresh_shared_window
from tests.conftest import Gunicorn, database_url_for_subprocess, redis_url_or_skip
from tests.support.compliance_factories import ReviewFlagFactory

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture(scope="module")
def running_pair(django_db_setup):
    """Two gunicorn masters with two workers each: four processes, one Redis; started once for
    the module's tests (they read what each test commits)."""
    redis_url = redis_url_or_skip()
    env = {
        "COMPLIANCE_DATABASE_URL": database_url_for_subprocess(
            django_settings.DATABASES["default"]
        ),
        "REDIS_URL": redis_url,
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "DEBUG": "false",
    }
    servers = [Gunicorn("compliance_site.wsgi", env, workers=2) for _ in range(2)]
    try:
        for server in servers:
            server.wait_ready("/api/v1/compliance/review_flags")
        yield servers, redis_url
    finally:
        for server in servers:
            server.stop()


@pytest.fixture
def gunicorn_pair(running_pair):
    """The pair, with nothing counted or cached in its Redis yet."""
    _servers, redis_url = running_pair
    redis.Redis.from_url(redis_url).flushdb()
    return running_pair


def fan_out(urls: list[str], headers: dict[str, str]) -> list[int]:
    def one(url: str) -> int:
        # A fresh connection per request, so requests spread over the workers.
        return httpx.get(url, headers=headers, timeout=10).status_code

    with ThreadPoolExecutor(max_workers=8) as pool:
        return list(pool.map(one, urls))


def test_a_key_limit_holds_across_processes(gunicorn_pair):
    servers, redis_url = gunicorn_pair
    _key, raw = api_key_create(name="shared", rate_limit_per_minute=12)
    urls = [f"{s.url}/api/v1/compliance/meta" for s in servers] * 10
    fresh_shared_window(urls[0], {"Authorization": f"Bearer {raw}"}, redis_url)

    statuses = fan_out(urls, {"Authorization": f"Bearer {raw}"})

    assert statuses.count(200) == 12
    assert statuses.count(429) == 8


def test_the_anonymous_ip_limit_holds_across_processes(gunicorn_pair):
    servers, redis_url = gunicorn_pair
    urls = [f"{s.url}/api/v1/compliance/review_flags" for s in servers] * 20
    fresh_shared_window(urls[0], {}, redis_url)

    statuses = fan_out(urls, {})

    assert statuses.count(200) == 30
    assert statuses.count(429) == 10


def test_the_review_report_is_one_shared_copy_that_a_new_flag_refreshes(
    gunicorn_pair, data_repo, run_reindex
):
    servers, _redis_url = gunicorn_pair
    if not django_settings.CACHES["default"]["BACKEND"].endswith("RedisCache"):
        pytest.skip("flag_raise here must clear the servers' Redis (the PostgreSQL pass)")
    data_repo.write("TX", state_payload("TX", last_verified_at=date.today().isoformat()))
    data_repo.commit("Seed", when=datetime.now(UTC))
    run_reindex()
    first, second = (f"{s.url}/api/v1/compliance/review_flags" for s in servers)

    def flagged(url: str) -> list[str]:
        return [f["abbreviation"] for f in httpx.get(url, timeout=10).json()["data"]["flagged"]]

    assert flagged(first) == []  # computed by the first master and kept in Redis
    # A row written behind the services' back: the second master answers from the copy the
    # first one stored, which shows the cache is shared, not per process.
    ReviewFlagFactory(state_abbreviation="TX", reason="Unseen.")
    assert flagged(second) == []
    # A flag raised through the service drops the shared copy: every process sees it at once.
    flag_raise(state_abbreviation="TX", reason="Editor asked for a check.")
    assert flagged(second) == ["TX"]
    assert flagged(first) == ["TX"]
