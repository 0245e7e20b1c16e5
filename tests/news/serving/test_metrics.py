"""What /metrics says about ingestion (from the task results the workers leave) and about
refused searches, from the application in-process (its counters are this process's)."""

from datetime import timedelta

import pytest
from django.utils import timezone
from django_tasks_db.models import DBTaskResult

from news_site.news.models import FetchOutcome
from tests.prometheus import sample, scrape
from tests.support.news_factories import IngestRunFactory

pytestmark = pytest.mark.django_db


def _ingest_run(*, minutes_ago: int, status: str, counts: dict | None = None) -> DBTaskResult:
    finished = timezone.now() - timedelta(minutes=minutes_ago)
    return IngestRunFactory(
        finished=finished,
        status=status,
        started_at=finished - timedelta(seconds=30),
        return_value=counts,
    )


def test_before_any_run_only_the_missing_success_is_reported(http):
    text = scrape(http)

    assert sample(text, "news_ingest_last_success_timestamp_seconds") == 0
    assert "news_ingest_last_run_success" not in text


def test_the_last_run_and_the_last_successful_runs_counts_are_reported(http):
    succeeded = _ingest_run(
        minutes_ago=20,
        status="SUCCESSFUL",
        counts={
            "feeds_fetched": 7,
            "feeds_not_modified": 30,
            "feeds_failed": 2,
            "entries_new": 12,
            "episodes_new": 1,
            "entries_summarised": 11,
            "summaries_failed": 1,
            "entries_embedded": 9,
            "transcripts_stored": 1,
            "transcripts_failed": 3,
            "stories_entries_assigned": 10,
            "stories_created": 4,
            "stories_skipped_locked": False,
        },
    )
    failed = _ingest_run(minutes_ago=5, status="FAILED")

    text = scrape(http)

    assert sample(text, "news_ingest_last_run_success") == 0
    assert sample(text, "news_ingest_last_run_timestamp_seconds") == pytest.approx(
        failed.finished_at.timestamp()
    )
    assert sample(text, "news_ingest_last_run_duration_seconds") == pytest.approx(30)
    assert sample(text, "news_ingest_last_success_timestamp_seconds") == pytest.approx(
        succeeded.finished_at.timestamp()
    )
    assert sample(text, "news_ingest_last_success_feeds", result="fetched") == 7
    assert sample(text, "news_ingest_last_success_feeds", result="failed") == 2
    assert sample(text, "news_ingest_last_success_entries", result="new") == 12
    assert sample(text, "news_ingest_last_success_entries", result="summary_failed") == 1
    assert sample(text, "news_ingest_last_success_podcast_episodes") == 1
    assert sample(text, "news_ingest_last_success_entries_embedded") == 9
    assert sample(text, "news_ingest_last_success_transcripts", result="stored") == 1
    assert sample(text, "news_ingest_last_success_transcripts", result="failed") == 3
    assert sample(text, "news_ingest_last_success_stories", result="entries_assigned") == 10
    assert sample(text, "news_ingest_last_success_stories", result="created") == 4
    assert sample(text, "news_ingest_last_success_stories", result="joined") == 0
    assert sample(text, "news_ingest_last_success_stories_skipped_locked") == 0


def test_feeds_are_reported_by_the_outcome_of_their_last_fetch(http, make_feed):
    make_feed(last_outcome=FetchOutcome.OK)
    make_feed(last_outcome=FetchOutcome.OK)
    make_feed(last_outcome=FetchOutcome.FAILED)
    make_feed(last_outcome=FetchOutcome.FAILED, paused_at=timezone.now())
    make_feed(last_outcome=FetchOutcome.FAILED, is_active=False)

    text = scrape(http)

    assert sample(text, "news_feeds", state="ok") == 2
    assert sample(text, "news_feeds", state="failed") == 1
    assert sample(text, "news_feeds", state="paused") == 1
    assert sample(text, "news_feeds", state="never") == 0


def test_refused_searches_are_counted(http, settings, one_window):
    settings.NEWS_EMBEDDING_MODEL = "off"
    settings.NEWS_SEARCH_RATE_LIMIT = "2/10m"
    before = sample(scrape(http), "ratelimit_rejections_total", policy="search")

    statuses = [
        http.get("/api/v1/entries/search", params={"q": "iphone"}).status_code for _ in range(4)
    ]
    after = sample(scrape(http), "ratelimit_rejections_total", policy="search")

    assert statuses.count(429) >= 1
    assert after - before == statuses.count(429)
