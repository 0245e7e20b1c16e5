"""When every connection of a worker's pool is lent out, the next request waits DB_POOL_TIMEOUT
at most and gets a 503 with `Retry-After: 1` in its surface's shape; as soon as a connection
comes back, requests succeed again. A worker with a pool of one connection, whose only
connection is held by a request blocked on a table lock the test takes."""

import threading
import time

import httpx
import psycopg
import pytest
from django.conf import settings as django_settings

from news_site.news.models import Entry
from tests.conftest import database_url_for_subprocess, news_served
from tests.private_services import postgres_pass_only
from tests.support.table_locks import wait_until_waiting_on_locks

pytestmark = pytest.mark.django_db(transaction=True)

POOL_TIMEOUT = 1


@pytest.fixture
def served(make_feed, make_entry):
    postgres_pass_only(django_settings.DATABASES["default"])
    make_entry(make_feed(), title="Första nyheten")
    with news_served(
        {
            "DB_POOL_MAX_SIZE": "1",
            "DB_POOL_MIN_SIZE": "1",
            "DB_POOL_TIMEOUT": str(POOL_TIMEOUT),
            # Every read reaches Django and the database.
            "NEWS_RESPONSE_CACHE_SECONDS": "0",
        },
        ready="/entries.json",
    ) as server:
        yield server


def test_an_exhausted_pool_answers_a_fast_503_and_recovers_at_once(served):
    url = database_url_for_subprocess(django_settings.DATABASES["default"])
    blocked: dict[str, httpx.Response] = {}
    with psycopg.connect(url) as lock:
        # The request below holds the worker's one connection while it waits for this lock.
        lock.execute(f"LOCK TABLE {Entry._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        holder = threading.Thread(
            target=lambda: blocked.update(
                first=httpx.get(f"{served.url}/api/v1/entries?per_page=1", timeout=30)
            )
        )
        holder.start()
        # On a busy machine the first request may take longer to get there than any fixed
        # pause (then the next request took the connection first, and the first one got the
        # 503).
        wait_until_waiting_on_locks(url, 1)
        started = time.monotonic()
        api = httpx.get(f"{served.url}/api/v1/entries?per_page=2", timeout=30)
        legacy = httpx.get(f"{served.url}/entries.json", timeout=30)
        waited = time.monotonic() - started
        lock.rollback()
    holder.join(timeout=30)
    after = httpx.get(f"{served.url}/api/v1/entries?per_page=3", timeout=30)

    assert api.status_code == 503, api.text
    assert api.headers["retry-after"] == "1"
    assert api.json() == {
        "error": {"type": "service_unavailable", "message": api.json()["error"]["message"]},
        "meta": {"api_version": "v1"},
    }
    assert legacy.status_code == 503
    assert legacy.headers["retry-after"] == "1"
    assert legacy.headers["content-type"].startswith("text/plain")
    # Each waited for the pool's timeout, not for the lock.
    assert waited < 2 * POOL_TIMEOUT + 2
    # Whatever held the connection finished once the lock went, and the next request got the
    # connection back. The holder is the first request, or a query of the worker's own (the
    # semantic index's refresh reads the same table), in which case the first request was
    # refused quickly like the others.
    assert blocked["first"].status_code in (200, 503)
    assert after.status_code == 200
