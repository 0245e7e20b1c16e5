"""`python -m news_site embed_entries`: the embedding step of ingestion, runnable alone."""

from django.core.management.base import BaseCommand

from news_site.search.embeddings import embeddings_available
from news_site.search.services import entries_embed


class Command(BaseCommand):
    help = "Embed relevant entries for semantic search (new, changed, or from another model)."

    def add_arguments(self, parser):
        parser.add_argument("--limit", type=int, default=None)

    def handle(self, *args, **options):
        if not embeddings_available():
            self.stdout.write("semantic search is not available: nothing embedded")
            return
        self.stdout.write(f"entries embedded: {entries_embed(limit=options['limit'])}")
