"""Ingestion results for /metrics (METRICS_COLLECTORS), read from the database at scrape time.

Ingest runs in the task workers, on any host, and each run's counts stay in its task result,
so any web process can report them. These are the last runs' figures (gauges), the way
Prometheus watches batch jobs: alert on the age of the last success and on failed feeds.
"""

from collections.abc import Iterator

from prometheus_client.core import GaugeMetricFamily, Metric

from news_site.news import selectors
from news_site.news.models import FetchOutcome

_FEED_RESULTS = {
    "fetched": "feeds_fetched",
    "not_modified": "feeds_not_modified",
    "failed": "feeds_failed",
}
_ENTRY_RESULTS = {
    "new": "entries_new",
    "summarised": "entries_summarised",
    "summary_failed": "summaries_failed",
}


class IngestCollector:
    def collect(self) -> Iterator[Metric]:
        last, last_success = selectors.ingest_runs_latest()
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
        # Runs from before the task returned its counts returned a line of text.
        counts = last_success.return_value if last_success else None
        if isinstance(counts, dict):
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
        states = selectors.feed_state_counts()
        feeds = GaugeMetricFamily(
            "news_feeds",
            "Active feeds by the outcome of their last fetch (paused: failing for days).",
            labels=["state"],
        )
        for state in [*FetchOutcome.values, "paused"]:
            feeds.add_metric([state], states.get(state, 0))
        yield feeds


def _by_result(
    name: str, documentation: str, counts: dict, keys: dict[str, str]
) -> GaugeMetricFamily:
    family = GaugeMetricFamily(name, documentation, labels=["result"])
    for result, key in keys.items():
        family.add_metric([result], counts.get(key, 0))
    return family
