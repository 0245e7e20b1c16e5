"""The ingest run: each step, in order, and one report of what the run did.

The steps live with the data they write: feeds and summaries in `news` (a podcast feed's
episodes stored by `podcasts`, passed in), embeddings in `search`,
transcripts in `podcasts`, stories in `stories`. This module only calls them and merges their
reports, so the apps below know nothing of the run. Each step isolates its own items (one
broken feed, entry or episode never stops the rest).
"""

from collections.abc import Iterable
from dataclasses import dataclass, field, fields
from enum import StrEnum
from typing import Any

from django.utils import timezone

from news_site.news.feeds import FeedsReport, feeds_refresh_due
from news_site.news.fetching import Fetcher, http_fetch
from news_site.news.health import paused_sources_notify
from news_site.news.progress import Progress
from news_site.news.summaries import SummaryReport, entries_summarise
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
# What follows the feeds step once entries are public (news_site/ingest/tasks.py).
PROCESS_STEPS: tuple[Step, ...] = tuple(step for step in Step if step != Step.FEEDS)


@dataclass
class IngestReport(FeedsReport, SummaryReport):
    """The run's counts, flat so the task result (JSON) and /metrics read them by name: the
    feeds and summaries steps' own fields (inherited), the other steps' counts copied in under
    their names, a clustering count prefixed `stories_`."""

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
            clustering = {
                item.name: getattr(self, _prefixed(item.name, _STORIES))
                for item in fields(ClusterReport)
            }
            parts.append(ClusterReport(**clustering).line())
        return "; ".join(parts)

    def add(self, step: Step, counts: Any, *, prefix: str = "") -> None:
        """Take a step's report: each of its counts under its name, `prefix`ed when the name
        lacks it."""
        for item in fields(counts):
            setattr(self, _prefixed(item.name, prefix), getattr(counts, item.name))
        self.steps.append(step)


_STORIES = "stories_"


def _prefixed(name: str, prefix: str) -> str:
    return name if name.startswith(prefix) else prefix + name


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
        report.add(Step.FEEDS, feeds)
        paused_sources_notify(now=timezone.now())
    if Step.SUMMARIES in chosen and model is not None:
        report.add(
            Step.SUMMARIES, entries_summarise(model=model, fetcher=fetcher, progress=progress)
        )
    if Step.EMBEDDINGS in chosen:
        report.entries_embedded = entries_embed()
        report.steps.append(Step.EMBEDDINGS)
    if Step.TRANSCRIPTS in chosen:
        report.add(Step.TRANSCRIPTS, episode_transcripts_fetch(fetcher=fetcher))
    if Step.STORIES in chosen:
        report.add(Step.STORIES, stories_cluster(model=model), prefix=_STORIES)
    return report
