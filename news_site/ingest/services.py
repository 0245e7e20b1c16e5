"""The ingest run: each step, in order, and one report of what the run did.

The steps live with the data they write: feeds and summaries in `news` (a podcast feed's
episodes stored by `podcasts`, passed in), embeddings in `search`,
transcripts in `podcasts`, stories in `stories`. This module only calls them and merges their
reports, so the apps below know nothing of the run. Each step isolates its own items (one
broken feed, entry or episode never stops the rest).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from news_site.news.feeds import feeds_refresh_due
from news_site.news.fetching import Fetcher, http_fetch
from news_site.news.progress import Progress
from news_site.news.summaries import entries_summarise
from news_site.news.summarise import ChatModel
from news_site.podcasts.services import episode_transcripts_fetch, episodes_store
from news_site.search.services import entries_embed
from news_site.stories.clustering import ClusterReport, stories_cluster


class Step(StrEnum):
    FEEDS = "feeds"
    SUMMARIES = "summaries"
    EMBEDDINGS = "embeddings"
    TRANSCRIPTS = "transcripts"
    STORIES = "stories"


ALL_STEPS: tuple[Step, ...] = tuple(Step)


@dataclass
class IngestReport:
    """The run's counts, flat so the task result (JSON) and /metrics read them by name."""

    feeds_fetched: int = 0
    feeds_not_modified: int = 0
    feeds_failed: int = 0
    entries_new: int = 0
    episodes_new: int = 0
    items_skipped: int = 0
    entries_summarised: int = 0
    summaries_failed: int = 0
    entries_embedded: int = 0
    transcripts_stored: int = 0
    transcripts_failed: int = 0
    stories_entries_assigned: int = 0
    stories_created: int = 0
    stories_joined: int = 0
    stories_reopened: int = 0
    stories_linked: int = 0
    stories_written: int = 0
    stories_written_by_model: int = 0
    stories_failed: int = 0
    stories_skipped_locked: bool = False
    # The steps that ran, in order.
    steps: list[str] = field(default_factory=list)

    def line(self) -> str:
        parts = [
            f"feeds: {self.feeds_fetched} fetched, {self.feeds_not_modified} not modified, "
            f"{self.feeds_failed} failed, {self.items_skipped} items skipped; "
            f"entries: {self.entries_new} new, "
            f"{self.entries_summarised} summarised, {self.summaries_failed} summaries failed; "
            f"podcast episodes: {self.episodes_new} new"
        ]
        if Step.EMBEDDINGS in self.steps:
            parts.append(f"embeddings: {self.entries_embedded} entries embedded")
        if Step.TRANSCRIPTS in self.steps:
            parts.append(
                f"transcripts: {self.transcripts_stored} stored, {self.transcripts_failed} failed"
            )
        if Step.STORIES in self.steps:
            parts.append(
                ClusterReport(
                    entries_assigned=self.stories_entries_assigned,
                    stories_created=self.stories_created,
                    stories_joined=self.stories_joined,
                    stories_reopened=self.stories_reopened,
                    stories_linked=self.stories_linked,
                    stories_written=self.stories_written,
                    stories_written_by_model=self.stories_written_by_model,
                    failed=self.stories_failed,
                    skipped_locked=self.stories_skipped_locked,
                ).line()
            )
        return "; ".join(parts)


def ingest_run(
    *,
    fetcher: Fetcher = http_fetch,
    model: ChatModel | None = None,
    progress: Progress | None = None,
    steps: Iterable[Step] = ALL_STEPS,
) -> IngestReport:
    """One pass of the chosen steps, in pipeline order. Summaries need a model; without one
    the offline extracts stored by the feeds step stand."""
    chosen = set(steps)
    report = IngestReport()
    if Step.FEEDS in chosen:
        feeds = feeds_refresh_due(store_episodes=episodes_store, fetcher=fetcher, progress=progress)
        report.feeds_fetched = feeds.feeds_fetched
        report.feeds_not_modified = feeds.feeds_not_modified
        report.feeds_failed = feeds.feeds_failed
        report.entries_new = feeds.entries_new
        report.episodes_new = feeds.episodes_new
        report.items_skipped = feeds.items_skipped
        report.steps.append(Step.FEEDS)
    if Step.SUMMARIES in chosen and model is not None:
        summaries = entries_summarise(model=model, fetcher=fetcher, progress=progress)
        report.entries_summarised = summaries.entries_summarised
        report.summaries_failed = summaries.summaries_failed
        report.steps.append(Step.SUMMARIES)
    if Step.EMBEDDINGS in chosen:
        report.entries_embedded = entries_embed()
        report.steps.append(Step.EMBEDDINGS)
    if Step.TRANSCRIPTS in chosen:
        transcripts = episode_transcripts_fetch(fetcher=fetcher)
        report.transcripts_stored = transcripts.transcripts_stored
        report.transcripts_failed = transcripts.transcripts_failed
        report.steps.append(Step.TRANSCRIPTS)
    if Step.STORIES in chosen:
        stories = stories_cluster(model=model)
        report.stories_entries_assigned = stories.entries_assigned
        report.stories_created = stories.stories_created
        report.stories_joined = stories.stories_joined
        report.stories_reopened = stories.stories_reopened
        report.stories_linked = stories.stories_linked
        report.stories_written = stories.stories_written
        report.stories_written_by_model = stories.stories_written_by_model
        report.stories_failed = stories.failed
        report.stories_skipped_locked = stories.skipped_locked
        report.steps.append(Step.STORIES)
    return report
