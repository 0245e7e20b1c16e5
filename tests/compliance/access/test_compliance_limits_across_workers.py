"""Rate limits hold across several gunicorn worker processes that share Redis."""

from concurrent.futures import ThreadPoolExecutor

import httpx
import pytest
import redis
from django.conf import settings as django_settings

from compliance_site.access.keys import api_key_create
from tests.compliance.windows import fresh_shared_window
from tests.conftest import Gunicorn, database_url_for_subprocess, redis_url_or_skip

pytestmark = pytest.mark.django_db(transaction=True)


@pytest.fixture
def gunicorn_pair():
    """Two gunicorn masters with two workers each: four processes, one Redis."""
    redis_url = redis_url_or_skip()
    redis.Redis.from_url(redis_url).flushdb()
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
