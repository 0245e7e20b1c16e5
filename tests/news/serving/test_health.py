"""Liveness and readiness of the news service, with the ingest worker's last run."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.support.news_factories import IngestRunFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def _finished_run(minutes_ago: int) -> None:
    IngestRunFactory(finished=timezone.now() - timedelta(minutes=minutes_ago))


def test_liveness_answers_ok(http):
    assert http.get("/healthz").json() == {"status": "ok"}


def test_readiness_checks_database_and_cache_and_reports_a_worker_that_never_ran(http):
    response = http.get("/readyz")

    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "ok"
    assert body["checks"]["database"]["ok"] and body["checks"]["cache"]["ok"]
    assert body["worker"] == {"ok": False, "last_successful_run": None}


def test_readiness_reports_the_workers_last_successful_run(http, settings):
    settings.NEWS_WORKER_STALE_MINUTES = 30
    _finished_run(minutes_ago=45)
    assert http.get("/readyz").json()["worker"]["ok"] is False

    _finished_run(minutes_ago=5)
    worker = http.get("/readyz").json()["worker"]

    assert worker["ok"] is True
    assert worker["last_successful_run"] is not None
