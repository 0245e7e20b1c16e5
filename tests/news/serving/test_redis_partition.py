"""Revocations across a Redis partition: Redis stopped (SIGSTOP: it keeps its data and answers
nothing) behind a proxy that drops what is sent to it meanwhile (what a partition does to the
commands in flight). A logout and an unfollow made then take effect on every worker at its
next request once Redis answers again, with its old data, because the copies each worker
keeps of a token and its follows are checked against the account's generation in the
database, not in Redis; and while Redis hangs, requests answer within the bound its timeouts
set."""

import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import httpx
import pytest
from django.conf import settings as django_settings

from news_site.accounts.models import ApiToken
from shared.cache_connection import ANSWER_TIMEOUT_SECONDS
from tests.conftest import Gunicorn, database_url_for_subprocess
from tests.private_services import PartitionProxy, RedisServer, postgres_pass_only
from tests.support.news_factories import (
    AccountFactory,
    ApiTokenFactory,
    EntryFactory,
    FeedFactory,
    FollowFactory,
)

pytestmark = pytest.mark.django_db(transaction=True)

# Workers: each gunicorn runs one (as deployed, a uvicorn worker), so a request to its port
# reaches that worker and no other.
WORKERS = 2
# The longest a request may take while Redis hangs: a Redis call costs at most its answer
# timeout, and after one has timed out the process leaves Redis alone for a while
# (shared/cache_connection.py), so a request pays at most one, plus its own work on a busy
# machine. Without that, a logout paid three (6 s).
STOPPED_BOUND_SECONDS = ANSWER_TIMEOUT_SECONDS + 1.5


@dataclass
class Served:
    redis: RedisServer
    proxy: PartitionProxy
    workers: list[httpx.Client]

    @contextmanager
    def partitioned(self) -> Iterator[None]:
        self.proxy.cut.set()
        self.redis.pause()
        try:
            yield
        finally:
            self.redis.resume()
            self.proxy.cut.clear()


@pytest.fixture
def served() -> Iterator[Served]:
    postgres_pass_only(django_settings.DATABASES["default"])
    redis = RedisServer()
    redis.start()
    proxy = PartitionProxy(redis.port)
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "REDIS_URL": f"redis://127.0.0.1:{proxy.port}/0",
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_EMBEDDING_MODEL": "off",
    }
    servers = [
        Gunicorn(
            "news_site.asgi:application",
            env,
            workers=1,
            worker_class="uvicorn_worker.UvicornWorker",
        )
        for _ in range(WORKERS)
    ]
    clients = [httpx.Client(base_url=server.url, timeout=30) for server in servers]
    try:
        for server in servers:
            # Readiness, bounded only so that a worker that never comes up fails the test.
            server.wait_ready("/healthz", timeout=180)
        yield Served(redis, proxy, clients)
    finally:
        for client in clients:
            client.close()
        for server in servers:
            server.stop()
        proxy.close()
        redis.kill()


def followed_entry_ids(client: httpx.Client, header: dict[str, str]) -> set[int]:
    answer = client.get("/api/v1/entries/follows", headers=header)
    assert answer.status_code == 200, answer.text
    return {item["id"] for item in answer.json()["data"]}


def timed(call) -> tuple[httpx.Response, float]:
    began = time.monotonic()
    answer = call()
    return answer, time.monotonic() - began


def test_a_logout_and_an_unfollow_made_while_redis_hangs_reach_every_worker(served):
    kept, dropped = FeedFactory(title="Kept"), FeedFactory(title="Dropped")
    kept_entry, dropped_entry = EntryFactory(feed=kept), EntryFactory(feed=dropped)
    account = AccountFactory()
    for feed in (kept, dropped):
        FollowFactory(account=account, feed=feed)
    leaving, staying = ApiTokenFactory(account=account), ApiTokenFactory(account=account)
    # Every worker keeps copies of both tokens and of the follows.
    for worker in served.workers:
        for token in (leaving, staying):
            assert followed_entry_ids(worker, token.header) == {kept_entry.pk, dropped_entry.pk}

    with served.partitioned():
        logout, logout_seconds = timed(
            lambda: served.workers[0].post("/api/v1/auth/logout", headers=leaving.header)
        )
        unfollow, unfollow_seconds = timed(
            lambda: served.workers[1].delete(
                f"/api/v1/feeds/{dropped.pk}/follow", headers=staying.header
            )
        )
    assert logout.status_code == 204, logout.text
    assert unfollow.status_code == 200, unfollow.text
    assert not ApiToken.objects.filter(pk=leaving.pk).exists()

    # Redis answers again with the data it had: no worker's copy may be trusted for it.
    for worker in served.workers:
        refused = worker.get("/api/v1/entries/follows", headers=leaving.header)
        assert refused.status_code == 401, refused.text
        assert followed_entry_ids(worker, staying.header) == {kept_entry.pk}

    # Reads go on while Redis hangs, each within the bound: the follows, and an article, whose
    # once-a-day view mark lives in Redis (a worker's first call waits for its timeout, the
    # second is refused at once), and a search, whose limit counts there. (Apart from the
    # revocations above: with a timeout per call these took a minute, longer than the copies
    # live.)
    with served.partitioned():
        reads = [
            timed(lambda w=worker, path=path: w.get(path, headers=staying.header))
            for worker in served.workers
            for path in (
                "/api/v1/entries/follows",
                f"/api/v1/entries/{kept_entry.pk}",
                f"/api/v1/entries/{kept_entry.pk}",
                "/api/v1/entries/search?q=nyheter",
            )
        ]
    assert [answer.status_code for answer, _ in reads] == [200] * len(reads)
    seconds = [logout_seconds, unfollow_seconds, *(seconds for _, seconds in reads)]
    assert max(seconds) < STOPPED_BOUND_SECONDS, seconds
