"""The news service while its Redis (a private redis-server, so the test may kill it) is down:
limits on reads fail open, limits on authentication are counted in the database instead, and
everything else keeps working, because nothing but counters, marks and caches lives there;
once Redis is back the limits count there again, without a restart."""

from collections.abc import Iterator
from dataclasses import dataclass

import httpx
import pytest
from django.conf import settings as django_settings

from news_site.accounts.models import ApiToken
from tests.conftest import Gunicorn, database_url_for_subprocess
from tests.news.accounts.test_oidc_login import AUDIENCES, Provider
from tests.private_services import RedisServer, postgres_pass_only
from tests.support.localserver import LocalServer
from tests.support.smtpsink import SmtpSink

pytestmark = pytest.mark.django_db(transaction=True)

LIMIT = 3
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "test", "version": "1"},
    },
}


@dataclass
class Served:
    redis: RedisServer
    client: httpx.Client
    mail: SmtpSink
    apple: Provider


@pytest.fixture
def served(local_server: LocalServer, smtp_sink: SmtpSink) -> Iterator[Served]:
    postgres_pass_only(django_settings.DATABASES["default"])
    redis = RedisServer()
    redis.start()
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "REDIS_URL": redis.url,
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_EMBEDDING_MODEL": "off",
        "NEWS_SEARCH_RATE_LIMIT": f"{LIMIT}/10m",
        "MCP_RATE_LIMIT": f"{LIMIT}/10m",
        "MCP_PROTOCOL_RATE_LIMIT": f"{LIMIT}/10m",
        "NEWS_LOGIN_CODE_RATE_LIMIT": f"{LIMIT}/h",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(smtp_sink.port),
        "NEWS_APPLE_AUDIENCE": AUDIENCES["apple"],
        "NEWS_APPLE_JWKS_URL": local_server.url("/apple/keys"),
    }
    server = Gunicorn(
        "news_site.asgi:application", env, workers=1, worker_class="uvicorn_worker.UvicornWorker"
    )
    try:
        server.wait_ready("/healthz")
        with httpx.Client(base_url=server.url, timeout=10) as client:
            yield Served(redis, client, smtp_sink, Provider("apple", local_server))
    finally:
        server.stop()
        redis.kill()


def searches(served: Served, count: int) -> list[httpx.Response]:
    return [served.client.get("/api/v1/entries/search", params={"q": "ipad"}) for _ in range(count)]


def mcp_calls(served: Served, count: int) -> list[int]:
    headers = {"Accept": "application/json, text/event-stream"}
    return [
        served.client.post("/mcp", json=INITIALIZE, headers=headers).status_code
        for _ in range(count)
    ]


def email_login(served: Served, email: str) -> httpx.Response:
    sent = served.client.post("/api/v1/auth/login", json={"provider": "email", "email": email})
    assert sent.status_code == 202
    code = served.mail.login_code()
    login = {"provider": "email", "email": email, "code": code}
    return served.client.post("/api/v1/auth/login", json=login)


def test_with_redis_down_read_limits_fail_open_login_limits_hold_and_the_rest_works(
    served, make_feed, make_entry
):
    feed = make_feed(title="9to5Mac")
    entry = make_entry(feed)
    assert [r.status_code for r in searches(served, LIMIT + 1)] == [200] * LIMIT + [429]
    assert mcp_calls(served, LIMIT + 1) == [200] * LIMIT + [429]

    served.redis.kill()

    # Limits fail open: more calls than the limit, all served, without limit headers.
    opened = searches(served, LIMIT + 2)
    assert [r.status_code for r in opened] == [200] * (LIMIT + 2)
    assert "X-RateLimit-Limit" not in opened[0].headers
    assert mcp_calls(served, 2) == [200, 200]
    # Login codes live in the database, and their per-address limit is counted there.
    for _ in range(LIMIT):
        login = email_login(served, "a@example.se")
        assert login.status_code == 200
    refused = served.client.post(
        "/api/v1/auth/login", json={"provider": "email", "email": "A@example.se"}
    )
    assert refused.status_code == 429
    assert refused.json()["error"]["type"] == "rate_limited"
    assert len(served.mail.messages) == LIMIT
    token = {"Authorization": f"Bearer {login.json()['data']['token']}"}
    apple = served.client.post(
        "/api/v1/auth/login", json={"provider": "apple", "id_token": served.apple.token()}
    )
    assert apple.status_code == 200, apple.text
    # Reads, the article view (its once-a-day mark lives in Redis), follows and logout.
    assert served.client.get("/api/v1/entries").status_code == 200
    assert served.client.get(f"/api/v1/entries/{entry.pk}").status_code == 200
    assert served.client.get("/entries.json").status_code == 200
    assert served.client.post(f"/api/v1/feeds/{feed.pk}/follow", headers=token).status_code == 200
    follows = served.client.get("/api/v1/entries/follows", headers=token)
    assert [item["id"] for item in follows.json()["data"]] == [entry.pk]
    assert served.client.post("/api/v1/auth/logout", headers=token).status_code == 204
    assert served.client.get("/api/v1/entries/follows", headers=token).status_code == 401
    # Readiness says what is wrong; liveness does not restart a process that can serve.
    ready = served.client.get("/readyz")
    assert ready.status_code == 503
    assert ready.json()["checks"]["cache"]["ok"] is False
    assert served.client.get("/healthz").status_code == 200

    served.redis.start()  # the same port, empty

    assert [r.status_code for r in searches(served, LIMIT + 1)] == [200] * LIMIT + [429]
    assert mcp_calls(served, LIMIT + 1) == [200] * LIMIT + [429]
    assert served.client.get("/readyz").status_code == 200
    # Tokens live in the database: the logged-out one is gone, the others stay.
    assert ApiToken.objects.count() == LIMIT
