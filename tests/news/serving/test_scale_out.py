"""Two news instances (gunicorn + uvicorn workers, different ports) on one PostgreSQL and one
Redis behave as one service: limits count across them, a login code sent by one is redeemed
on the other (once), logouts, deleted accounts and follows are seen by both at once, and the
per-process response cache lags the database by at most NEWS_RESPONSE_CACHE_SECONDS."""

import time
from collections.abc import Iterator

import httpx
import pytest
import redis
from django.conf import settings as django_settings

from news_site.news.models import Entry
from tests.conftest import Gunicorn, database_url_for_subprocess, redis_url_or_skip
from tests.private_services import postgres_pass_only
from tests.support.smtpsink import SmtpSink

pytestmark = pytest.mark.django_db(transaction=True)

SEARCH_LIMIT = 6
MCP_LIMIT = 4
RESPONSE_CACHE_SECONDS = 2
TOOL_CALL = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "tools/call",
    "params": {"name": "list_feeds", "arguments": {}},
}


class Pair:
    def __init__(self, servers: list[Gunicorn], mail: SmtpSink) -> None:
        self.a, self.b = (httpx.Client(base_url=s.url, timeout=30) for s in servers)
        self.mail = mail

    def alternate(self, count: int) -> Iterator[httpx.Client]:
        for n in range(count):
            yield self.a if n % 2 == 0 else self.b


@pytest.fixture(scope="module")
def pair(django_db_setup, django_db_blocker) -> Iterator[Pair]:
    postgres_pass_only(django_settings.DATABASES["default"])
    redis_url = redis_url_or_skip()
    mail = SmtpSink()
    mail.thread.start()
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "REDIS_URL": redis_url,
        # Every instance must share the secret: login codes are stored as an HMAC keyed by it.
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_SEARCH_RATE_LIMIT": f"{SEARCH_LIMIT}/10m",
        "MCP_RATE_LIMIT": f"{MCP_LIMIT}/10m",
        "NEWS_RESPONSE_CACHE_SECONDS": str(RESPONSE_CACHE_SECONDS),
        "NEWS_EMBEDDING_MODEL": "off",
        "EMAIL_HOST": "127.0.0.1",
        "EMAIL_PORT": str(mail.port),
    }
    servers = [
        Gunicorn(
            "news_site.asgi:application",
            env,
            workers=1,
            worker_class="uvicorn_worker.UvicornWorker",
        )
        for _ in range(2)
    ]
    try:
        for server in servers:
            server.wait_ready("/healthz")
        yield Pair(servers, mail)
    finally:
        for server in servers:
            server.stop()
        mail.server.shutdown()
        mail.server.server_close()


@pytest.fixture(autouse=True)
def _fresh_counts() -> None:
    # The rate-limit counters live in the instances' Redis, not in this process's cache.
    redis.Redis.from_url(redis_url_or_skip()).flushdb()


def test_the_search_limit_counts_across_instances(pair):
    answers = [
        client.get("/api/v1/entries/search", params={"q": "iphone"})
        for client in pair.alternate(SEARCH_LIMIT + 4)
    ]

    assert [a.status_code for a in answers] == [200] * SEARCH_LIMIT + [429] * 4
    assert [a.headers["X-RateLimit-Remaining"] for a in answers[:SEARCH_LIMIT]] == [
        str(SEARCH_LIMIT - n) for n in range(1, SEARCH_LIMIT + 1)
    ]
    refused = answers[-1]
    assert refused.json()["error"]["type"] == "rate_limited"
    assert int(refused.headers["Retry-After"]) > 0


def test_the_mcp_tool_call_limit_counts_across_instances(pair):
    headers = {"Accept": "application/json, text/event-stream"}
    answers = [
        client.post("/mcp", json=TOOL_CALL, headers=headers)
        for client in pair.alternate(MCP_LIMIT + 2)
    ]

    assert [a.status_code for a in answers] == [200] * MCP_LIMIT + [429] * 2
    assert "Retry-After" in answers[-1].headers


def test_a_login_code_sent_by_one_instance_works_once_on_the_other(pair):
    sent = pair.a.post("/api/v1/auth/login", json={"provider": "email", "email": "a@example.se"})
    code = pair.mail.login_code()
    login = {"provider": "email", "email": "a@example.se", "code": code}

    redeemed = pair.b.post("/api/v1/auth/login", json=login)
    replayed = pair.a.post("/api/v1/auth/login", json=login)

    assert sent.status_code == 202
    assert redeemed.status_code == 200
    assert replayed.status_code == 401
    assert replayed.json()["error"]["type"] == "invalid_code"
    token = {"Authorization": f"Bearer {redeemed.json()['data']['token']}"}
    assert pair.a.get("/api/v1/entries/follows", headers=token).status_code == 200


def test_a_logout_on_one_instance_holds_on_the_other(pair, make_account):
    _account, token = make_account()
    assert pair.b.get("/api/v1/entries/follows", headers=token).status_code == 200

    logout = pair.a.post("/api/v1/auth/logout", headers=token)

    assert logout.status_code == 204
    after = pair.b.get("/api/v1/entries/follows", headers=token)
    assert after.status_code == 401
    assert after.json()["error"]["type"] == "invalid_token"


def test_an_account_deleted_on_one_instance_is_gone_on_the_other(pair, make_account):
    _account, token = make_account()

    deleted = pair.a.delete("/api/v1/auth/account", headers=token)

    assert deleted.status_code == 204
    assert pair.b.get("/api/v1/entries/follows", headers=token).status_code == 401


def test_follows_written_on_one_instance_are_read_on_the_other(
    pair, make_account, make_feed, make_entry
):
    feed = make_feed(title="9to5Mac")
    entry = make_entry(feed, title="Följd nyhet")
    _account, token = make_account()

    followed = pair.a.post(f"/api/v1/feeds/{feed.pk}/follow", headers=token)
    seen = pair.b.get("/api/v1/entries/follows", headers=token)
    detail = pair.b.get(f"/api/v1/feeds/{feed.pk}", headers=token)
    unfollowed = pair.b.delete(f"/api/v1/feeds/{feed.pk}/follow", headers=token)
    gone = pair.a.get("/api/v1/entries/follows", headers=token)

    assert followed.status_code == 200
    assert [item["id"] for item in seen.json()["data"]] == [entry.pk]
    assert detail.json()["data"]["is_following"] is True
    assert unfollowed.json()["data"]["is_following"] is False
    assert gone.json()["data"] == []


def test_an_article_view_counts_once_whichever_instance_serves_it(pair, make_feed, make_entry):
    # The once-per-viewer-and-day mark is kept in the shared cache (Redis).
    entry = make_entry(make_feed())

    opened = [client.get(f"/api/v1/entries/{entry.pk}") for client in pair.alternate(4)]

    assert [o.status_code for o in opened] == [200] * 4
    entry.refresh_from_db()
    assert entry.view_count == 1


def test_each_instance_shows_a_change_within_its_response_cache_lifetime(
    pair, make_feed, make_entry
):
    feed = make_feed()
    make_entry(feed, title="Första nyheten")
    for client in (pair.a, pair.b):
        client.get("/entries.json")  # each process keeps its own copy

    make_entry(feed, title="Andra nyheten")
    changed_at = time.monotonic()
    # Counted from when each request left, not when its answer came: on a loaded machine the
    # answer itself may take seconds, and what is bounded is the age of the copy it carries.
    seen: set[str] = set()
    stale_after_lifetime = []
    while len(seen) < 2 and time.monotonic() - changed_at < RESPONSE_CACHE_SECONDS + 60:
        for name, client in (("a", pair.a), ("b", pair.b)):
            sent_after = time.monotonic() - changed_at
            titles = [e["title"] for e in client.get("/entries.json").json()["entries"]]
            if "Andra nyheten" in titles:
                seen.add(name)
            elif sent_after > RESPONSE_CACHE_SECONDS + 1:
                stale_after_lifetime.append((name, round(sent_after, 2)))
        time.sleep(0.1)

    assert seen == {"a", "b"}
    # The bound is the cache lifetime, plus the render that made the copy.
    assert stale_after_lifetime == []
    assert Entry.objects.count() == 2
