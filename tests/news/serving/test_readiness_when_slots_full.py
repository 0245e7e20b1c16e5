"""Readiness goes through the same slots as real requests, so it says unready exactly while the
worker cannot serve. A worker whose slots are all taken by renders that cannot finish (each
blocked on a table lock the test holds): its reads fail, and /readyz, asked at that moment, is
unready too; once the renders finish, both are served again. Two kinds of slot: the bound on
requests at once (refused at once with 503) and the Django threads (a request waits for one,
and the client gives up)."""

import threading
import time

import httpx
import psycopg
import pytest
from django.conf import settings as django_settings

from news_site.news.models import Entry
from tests.conftest import STARTUP_BOUND_SECONDS, database_url_for_subprocess, news_served
from tests.private_services import postgres_pass_only
from tests.support.table_locks import wait_until_waiting_on_locks

pytestmark = pytest.mark.django_db(transaction=True)

SLOTS = 2
# How long the prober and the readiness probe wait for an answer while the slots are taken,
# as an orchestrator's probe would (a worker without a free thread never answers at all).
PROBE_TIMEOUT = 2.0

BOUNDS = {
    "concurrency bound": {"NEWS_MAX_CONCURRENT_REQUESTS": str(SLOTS)},
    "Django threads": {"NEWS_WEB_THREADS": str(SLOTS)},
}


@pytest.fixture(params=list(BOUNDS))
def served(request, make_feed, make_entry):
    postgres_pass_only(django_settings.DATABASES["default"])
    make_entry(make_feed(), title="Första nyheten")
    with news_served(
        {
            **BOUNDS[request.param],
            # Connections to spare: the renders hold theirs while they wait for the lock.
            "DB_POOL_MAX_SIZE": str(SLOTS + 2),
            # Every read reaches Django and the database.
            "NEWS_RESPONSE_CACHE_SECONDS": "0",
            # No index refresh of the worker's own reads the locked table.
            "NEWS_EMBEDDING_MODEL": "off",
        },
        ready="/readyz",
    ) as server:
        yield server


def _served(url: str) -> bool:
    try:
        return httpx.get(url, timeout=PROBE_TIMEOUT).status_code == 200
    except httpx.TimeoutException:
        return False


def _wait_until_ready(base: str) -> None:
    deadline = time.monotonic() + STARTUP_BOUND_SECONDS
    while time.monotonic() < deadline:
        if _served(f"{base}/readyz"):
            return
        time.sleep(0.1)
    pytest.fail("/readyz never came back")


def test_readiness_is_unready_while_the_slots_are_full_and_ready_after(served):
    url = database_url_for_subprocess(django_settings.DATABASES["default"])
    base = served.url
    # Ready before the slots fill: the server's first answers may still be busy with its start
    # (on a loaded machine a probe can miss PROBE_TIMEOUT), so wait rather than assert once.
    _wait_until_ready(base)
    renders: list[int] = []
    with psycopg.connect(url) as lock:
        lock.execute(f"LOCK TABLE {Entry._meta.db_table} IN ACCESS EXCLUSIVE MODE")
        holders = [
            threading.Thread(
                target=lambda n=n: renders.append(
                    httpx.get(f"{base}/api/v1/entries?per_page={n + 1}", timeout=60).status_code
                )
            )
            for n in range(SLOTS)
        ]
        for holder in holders:
            holder.start()
        wait_until_waiting_on_locks(url, SLOTS)
        read_while_full = _served(f"{base}/api/v1/entries?per_page=9")
        ready_while_full = _served(f"{base}/readyz")
        lock.rollback()
    for holder in holders:
        holder.join(timeout=60)

    assert not read_while_full
    assert not ready_while_full
    # The renders that held the slots finish once the lock goes, and the worker is ready and
    # serving again.
    assert renders == [200] * SLOTS
    _wait_until_ready(base)
    assert _served(f"{base}/api/v1/entries?per_page=9")
