"""`python -m news_site fetch_transcripts`: store the podcast transcripts not fetched yet."""

from django.core.management.base import BaseCommand

from news_site.podcasts.services import episode_transcripts_fetch


class Command(BaseCommand):
    help = "Fetch and store podcast transcripts (each once), for include_transcript=true."

    def handle(self, *args, **options):
        report = episode_transcripts_fetch()
        self.stdout.write(f"transcripts stored: {report.transcripts_stored}")
