"""Writes of the podcasts app: the ingest's transcript step."""

import logging
from dataclasses import dataclass

from django.utils import timezone

from news_site.news.services import Fetcher, http_fetch
from news_site.podcasts.models import EpisodeTranscript
from news_site.podcasts.selectors import episodes_without_transcript
from shared.fetch import FetchError

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class TranscriptReport:
    transcripts_stored: int = 0
    transcripts_failed: int = 0


def episode_transcripts_fetch(*, fetcher: Fetcher = http_fetch) -> TranscriptReport:
    """Fetch and store the transcripts not fetched yet; one failing episode does not stop the
    rest (it is tried again next run)."""
    stored = failed = 0
    for episode in episodes_without_transcript():
        try:
            result = fetcher(episode.transcript_url, headers={"Accept": "text/*, application/*"})
        except FetchError as exc:
            logger.info("transcript of episode %s not fetched: %s", episode.pk, exc.message)
            failed += 1
            continue
        if result.status_code != 200:
            logger.info("transcript of episode %s: HTTP %s", episode.pk, result.status_code)
            failed += 1
            continue
        EpisodeTranscript.objects.update_or_create(
            episode=episode,
            defaults={
                "text": result.body.decode("utf-8", errors="replace"),
                "content_type": result.headers.get("Content-Type", "")[:100],
                "fetched_at": timezone.now(),
            },
        )
        stored += 1
    return TranscriptReport(transcripts_stored=stored, transcripts_failed=failed)
