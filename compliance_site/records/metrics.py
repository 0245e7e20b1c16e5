"""Reindex results for /metrics (METRICS_COLLECTORS), read from the database at scrape time.

Reindex runs in its own short-lived process (at deploy, from a timer), so it leaves its results
in ReindexRun rows and the web processes report them: alert on a last run that did not end
`ok`, on invalid files, and on the age of the last clean run.
"""

from collections.abc import Iterator

from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric

from compliance_site.records import selectors
from compliance_site.records.models import ReindexOutcome


class ReindexCollector:
    def collect(self) -> Iterator[Metric]:
        last, last_ok = selectors.reindex_runs_latest()
        yield GaugeMetricFamily(
            "compliance_reindex_last_success_timestamp_seconds",
            "When the last reindex run that ended ok finished (0: none yet).",
            value=last_ok.finished_at.timestamp() if last_ok else 0,
        )
        if last is not None:
            yield GaugeMetricFamily(
                "compliance_reindex_last_run_timestamp_seconds",
                "When the last reindex run finished, whatever its outcome.",
                value=last.finished_at.timestamp(),
            )
            outcome = GaugeMetricFamily(
                "compliance_reindex_last_run_outcome",
                "1 for the outcome of the last reindex run: ok, invalid_files (the valid rest "
                "is published), refused (rewritten history) or failed (nothing published).",
                labels=["outcome"],
            )
            for value in ReindexOutcome.values:
                outcome.add_metric([value], 1 if last.outcome == value else 0)
            yield outcome
            yield GaugeMetricFamily(
                "compliance_reindex_last_run_duration_seconds",
                "How long the last reindex run took.",
                value=(last.finished_at - last.started_at).total_seconds(),
            )
            yield GaugeMetricFamily(
                "compliance_reindex_last_run_commits_read",
                "Commits the last reindex run read.",
                value=last.commits_read,
            )
            yield GaugeMetricFamily(
                "compliance_reindex_last_run_versions_published",
                "Versions (State, Citation, EsaProgram) the last reindex run published.",
                value=last.versions_published,
            )
        yield GaugeMetricFamily(
            "compliance_reindex_invalid_files",
            "Files of the data repository that are invalid at the indexed head.",
            value=selectors.reindex_invalid_files(),
        )
        # Versions are never deleted or renumbered, so their number only grows.
        yield CounterMetricFamily(
            "compliance_published_versions",
            "Versions published since the service began.",
            value=selectors.published_versions(),
        )
