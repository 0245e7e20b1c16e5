"""Cluster new entries into stories once: `python -m news_site cluster_stories`.

`ingest` runs the same step after fetching and summarising; this command runs it alone.
"""

from django.core.management.base import BaseCommand

from news_site.news.summarise import ChatModel
from news_site.stories.services import stories_cluster


class Command(BaseCommand):
    help = "Assign new entries to stories, refresh them, write their texts, update statuses."

    def handle(self, *args, **options):
        model = ChatModel.from_settings()
        if model is None and options["verbosity"] >= 1:
            self.stderr.write("no model configured (NEWS_LLM_*): offline story texts only")
        try:
            report = stories_cluster(model=model)
        finally:
            if model is not None:
                model.close()
        if options["verbosity"] >= 1:
            self.stdout.write(report.line())
