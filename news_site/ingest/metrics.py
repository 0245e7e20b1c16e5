"""Ingestion results for /metrics (METRICS_COLLECTORS), read from the database at scrape time.

Ingest runs in the task workers, on any host, and each run's counts stay in its task result,
so any web process can report them. These are the last runs' figures (gauges), the way
Prometheus watches batch jobs: alert on the age of the last success and on failed feeds.
"""

from collections.abc import Iterator
from dataclasses import fields

from django_tasks_db.models import DBTaskResult
from prometheus_client.core import GaugeMetricFamily, Metric

from news_site.ingest.selectors import ingest_processing_latest, ingest_runs_latest
from news_site.news.feeds import FeedsReport
from news_site.news.models import FetchOutcome
from news_site.news.selectors import feed_state_counts

_FEED_RESULTS = {
    "fetched": "feeds_fetched",
    "not_modified": "feeds_not_modified",
    "failed": "feeds_failed",
}
_TRANSCRIPT_RESULTS = {"stored": "transcripts_stored", "failed": "transcripts_failed"}
_STORY_RESULTS = {
    "entries_assigned": "stories_entries_assigned",
    "created": "stories_created",
    "joined": "stories_joined",
    "reopened": "stories_reopened",
    "linked": "stories_linked",
    "written": "stories_written",
    "written_by_model": "stories_written_by_model",
    "failed": "stories_failed",
}
_ENTRY_RESULTS = {
    "new": "entries_new",
    "summarised": "entries_summarised",
    "summary_failed": "summaries_failed",
}


class IngestCollector:
    def collect(self) -> Iterator[Metric]:
        last, last_success = ingest_runs_latest()
        yield GaugeMetricFamily(
            "news_ingest_last_success_timestamp_seconds",
            "When the last successful ingest run finished (0: none in the kept task results).",
            value=last_success.finished_at.timestamp() if last_success else 0,
        )
        if last is not None:
            yield GaugeMetricFamily(
                "news_ingest_last_run_timestamp_seconds",
                "When the last ingest run finished, successful or not.",
                value=last.finished_at.timestamp(),
            )
            yield GaugeMetricFamily(
                "news_ingest_last_run_success",
                "1 if the last ingest run succeeded, 0 if it failed.",
                value=1 if last.status == "SUCCESSFUL" else 0,
            )
            if last.started_at is not None:
                yield GaugeMetricFamily(
                    "news_ingest_last_run_duration_seconds",
                    "How long the last ingest run took.",
                    value=(last.finished_at - last.started_at).total_seconds(),
                )
        if last_success is not None:
            counts = _merged_counts(last_success.return_value, ingest_processing_latest())
            yield _by_result(
                "news_ingest_last_success_feeds",
                "Feeds in the last successful ingest run, by result.",
                counts,
                _FEED_RESULTS,
            )
            yield _by_result(
                "news_ingest_last_success_entries",
                "Entries in the last successful ingest run: new, summarised, summary failed.",
                counts,
                _ENTRY_RESULTS,
            )
            yield GaugeMetricFamily(
                "news_ingest_last_success_podcast_episodes",
                "New podcast episodes in the last successful ingest run.",
                value=counts.get("episodes_new", 0),
            )
            yield GaugeMetricFamily(
                "news_ingest_last_success_entries_embedded",
                "Entries embedded for semantic search in the last successful ingest run.",
                value=counts.get("entries_embedded", 0),
            )
            yield _by_result(
                "news_ingest_last_success_transcripts",
                "Podcast transcripts in the last successful ingest run: stored, failed.",
                counts,
                _TRANSCRIPT_RESULTS,
            )
            yield _by_result(
                "news_ingest_last_success_stories",
                "Story clustering in the last successful ingest run, by what it did.",
                counts,
                _STORY_RESULTS,
            )
            yield GaugeMetricFamily(
                "news_ingest_last_success_stories_skipped_locked",
                "1 if clustering in the last successful run was skipped: another run held it.",
                value=1 if counts.get("stories_skipped_locked") else 0,
            )
        states = feed_state_counts()
        feeds = GaugeMetricFamily(
            "news_feeds",
            "Active feeds by the outcome of their last fetch (paused: failing for days).",
            labels=["state"],
        )
        for state in [*FetchOutcome.values, "paused"]:
            feeds.add_metric([state], states.get(state, 0))
        yield feeds


# The counts of the feeds step; the processing pass reports the others.
_FEEDS_COUNTS = frozenset(item.name for item in fields(FeedsReport))


def _merged_counts(run: dict, processed: DBTaskResult | None) -> dict:
    """The run's feed counts with the last processing pass's counts of the later steps (a run
    of every step, as `ingest` without --enqueue makes, reports them all itself)."""
    if processed is None or not isinstance(processed.return_value, dict):
        return run
    later = {
        name: value
        for name, value in processed.return_value.items()
        if name not in _FEEDS_COUNTS and name != "steps"
    }
    return {**run, **later}


def _by_result(
    name: str, documentation: str, counts: dict, keys: dict[str, str]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["result"])
    for result, key in keys.items():
        family.add_metric([result], counts.get(key, 0))
    return family
