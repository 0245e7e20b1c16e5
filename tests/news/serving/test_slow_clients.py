"""Slow clients straight on the application server as deployed (deploy/gunicorn/news.py, no
proxy in front): 100 connections trickling bodies or headers, or never sending a body, cannot
keep the worker from serving, readiness tells when it cannot, and each is closed within
NEWS_REQUEST_BODY_SECONDS of its first byte (tests/news/serving/slow_clients.py). Through
nginx: tests/shared/test_run_prod.py."""

from collections.abc import Iterator

import pytest
from django.conf import settings as django_settings

from tests.conftest import database_url_for_subprocess
from tests.deployed import DeployedGunicorn
from tests.news.serving.slow_clients import KINDS, slow_clients_cannot_take_the_service_down

pytestmark = pytest.mark.django_db(transaction=True)

DEADLINE = 4


@pytest.fixture
def server(django_db_setup, tmp_path, make_feed, make_entry) -> Iterator[DeployedGunicorn]:
    feed = make_feed()
    for n in range(5):
        make_entry(feed, title=f"Nyhet {n}")
    env = {
        "NEWS_DATABASE_URL": database_url_for_subprocess(django_settings.DATABASES["default"]),
        "SECRET_KEY": "test-secret",
        "SECURE_SSL_REDIRECT": "false",
        "NEWS_REQUEST_BODY_SECONDS": str(DEADLINE),
        "MCP_RATE_LIMIT": "100000/m",
        "NEWS_EMBEDDING_MODEL": "off",
    }
    # One worker: the slow clients and the prober all meet the same slots.
    deployed = DeployedGunicorn("news", env, tmp_path, workers=1)
    try:
        deployed.wait_ready("/readyz")
        deployed.wait_for_lines("Application startup complete.", count=1)
        yield deployed
    finally:
        deployed.stop()


def test_slow_clients_straight_on_gunicorn_are_closed_and_cannot_take_its_slots(server):
    attack = slow_clients_cannot_take_the_service_down(
        server.url, deadline=DEADLINE, seconds=3 * DEADLINE
    )

    # Each kind is answered 408 by the server, not dropped by the client.
    for kind in KINDS:
        lines = {slow.status_line for slow in attack.slow if slow.kind == kind}
        assert lines == {b"HTTP/1.1 408 Request Timeout"}, (kind, lines)
