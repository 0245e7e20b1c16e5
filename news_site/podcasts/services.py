"""Writes of the podcasts app: storing a podcast feed's episodes (called by the feeds step)
and the ingest's transcript step."""

import json
import logging
from dataclasses import dataclass

from django.utils import timezone

from news_site.news.models import Feed
from news_site.news.parsing import ParsedEpisode
from news_site.news.services import URL_MAX_LENGTH, Fetcher, http_fetch
from news_site.podcasts.models import EpisodeTranscript, PodcastEpisode
from news_site.podcasts.selectors import episodes_without_transcript
from shared.fetch import FetchError

logger = logging.getLogger(__name__)

_CHAPTERS_MAX_BYTES = 512 * 1024


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


def episodes_store(feed: Feed, episodes: list[ParsedEpisode], *, fetcher: Fetcher) -> int:
    """The feeds step's episode store (news.services.EpisodesStore): upserts each episode by
    its id and loads its chapters once; returns how many were new."""
    created = 0
    for episode in episodes:
        values = {
            "feed": feed,
            "title": episode.title,
            "description": episode.description,
            "published_on": episode.published_on,
            "duration_seconds": episode.duration_seconds,
            "page_url": episode.page_url[:URL_MAX_LENGTH],
            "audio_url": episode.audio_url[:URL_MAX_LENGTH],
            "cover_url": episode.cover_url[:URL_MAX_LENGTH],
            "cover_thumb_url": episode.cover_url[:URL_MAX_LENGTH],
            "chapters_url": episode.chapters_url[:URL_MAX_LENGTH],
            "transcript_url": episode.transcript_url[:URL_MAX_LENGTH],
            "sources": episode.sources,
        }
        stored, was_created = PodcastEpisode.objects.update_or_create(
            episode_id=episode.episode_id, defaults=values
        )
        created += was_created
        if episode.chapters_url and (was_created or not stored.chapters):
            _episode_chapters_load(stored, episode, fetcher=fetcher)
    return created


def _episode_chapters_load(
    stored: PodcastEpisode, episode: ParsedEpisode, *, fetcher: Fetcher
) -> None:
    """Podcasting 2.0 chapters JSON ({"chapters": [{"startTime", "title", "url"?}]})."""
    try:
        result = fetcher(
            episode.chapters_url,
            headers={"Accept": "application/json+chapters, application/json"},
            max_bytes=_CHAPTERS_MAX_BYTES,
        )
        data = json.loads(result.body) if result.status_code == 200 else {}
    except (FetchError, ValueError) as exc:
        logger.info("chapters of episode %s unreadable: %s", stored.pk, exc)
        return
    chapters = [
        {
            "start_seconds": int(chapter["startTime"]),
            "title": str(chapter.get("title", ""))[:300],
            "url": str(chapter.get("url", ""))[:URL_MAX_LENGTH],
        }
        for chapter in (data.get("chapters", []) if isinstance(data, dict) else [])
        if isinstance(chapter, dict) and isinstance(chapter.get("startTime"), int | float)
    ]
    if chapters:
        stored.chapters = chapters
        stored.save(update_fields=["chapters"])
