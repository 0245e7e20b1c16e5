"""Run the ingestion pipeline once: fetch due feeds, store entries, summarise, embed, fetch
transcripts, cluster stories. `--fetch-only` and `--summarise-only` run just that step.

Prints a progress bar on a terminal and a one-line summary. `--enqueue` hands the run to the
task workers instead (what the periodic schedule does).
"""

import sys

from django.core.management.base import BaseCommand

from news_site.ingest.services import ALL_STEPS, Step, ingest_run
from news_site.ingest.tasks import ingest_task
from news_site.news.llm import model_from_settings


class TerminalProgress:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    WIDTH = 30

    def __init__(self, stream) -> None:
        self.stream = stream
        self.label = ""
        self.total = 0
        self.done = 0

    def start(self, label: str, total: int) -> None:
        self.label, self.total, self.done = label, total, 0
        self._draw()

    def advance(self) -> None:
        self.done += 1
        self._draw()
        if self.done >= self.total:
            self.stream.write("\n")

    def _draw(self) -> None:
        if not self.total:
            return
        filled = self.WIDTH * self.done // self.total
        bar = "#" * filled + "-" * (self.WIDTH - filled)
        self.stream.write(f"\r{self.label:<10} [{bar}] {self.done}/{self.total}")
        self.stream.flush()


class Command(BaseCommand):
    help = "Run every ingest step once: feeds, summaries, embeddings, transcripts, stories."
    # A run is repeated every few minutes by a schedule; the system checks belong to deploying
    # (`migrate`, `check --deploy`), and importing every URL and admin module to run them was
    # a fifth of a run that found nothing new.
    requires_system_checks: list[str] = []

    def add_arguments(self, parser):
        parser.add_argument(
            "--enqueue", action="store_true", help="Queue the run for the task workers."
        )
        steps = parser.add_mutually_exclusive_group()
        steps.add_argument(
            "--fetch-only", action="store_true", help="Only fetch and store (the feeds step)."
        )
        steps.add_argument(
            "--summarise-only", action="store_true", help="Only summarise (the summaries step)."
        )

    def handle(self, *args, **options):
        if options["enqueue"]:
            result = ingest_task.enqueue()
            self.stdout.write(f"queued ingest task {result.id}")
            return
        steps = ALL_STEPS
        if options["fetch_only"]:
            steps = (Step.FEEDS,)
        elif options["summarise_only"]:
            steps = (Step.SUMMARIES,)
        interactive = options["verbosity"] >= 1 and sys.stderr.isatty()
        progress = TerminalProgress(sys.stderr) if interactive else None
        with model_from_settings() as model:
            if model is None and options["verbosity"] >= 1:
                self.stderr.write("no summary model configured (NEWS_LLM_*): offline extracts only")
            report = ingest_run(model=model, progress=progress, steps=steps)
        if options["verbosity"] >= 1:
            self.stdout.write(report.line())
