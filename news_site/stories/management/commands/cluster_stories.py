"""Cluster new entries into stories once: `python -m news_site cluster_stories`.

`ingest` runs the same step after fetching and summarising; this command runs it alone.
"""

from django.core.management.base import BaseCommand

from news_site.news.llm import model_from_settings
from news_site.stories.clustering import stories_cluster


class Command(BaseCommand):
    help = "Assign new entries to stories, refresh them, write their texts, update statuses."

    def handle(self, *args, **options):
        with model_from_settings() as model:
            if model is None and options["verbosity"] >= 1:
                self.stderr.write("no model configured (NEWS_LLM_*): offline story texts only")
            report = stories_cluster(model=model)
        if options["verbosity"] >= 1:
            self.stdout.write(report.line())
