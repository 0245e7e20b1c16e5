"""Writes of the podcasts app: storing a podcast feed's episodes (called by the feeds step)
and the ingest's transcript step."""

import json
import logging
from dataclasses import dataclass

from django.db import DatabaseError, transaction
from django.db.models import F
from django.utils import timezone

from news_site.news.cleaning import clean_int, clean_text, clean_url
from news_site.news.fetching import Fetcher, http_fetch
from news_site.news.models import Feed
from news_site.news.parsing import MAX_DURATION_SECONDS, ParsedEpisode
from news_site.podcasts.identifiers import episode_id_for
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
    rest. A failure is counted and its reason kept on the episode; after
    TRANSCRIPT_MAX_ATTEMPTS failures the episode is no longer tried."""
    stored = failed = 0
    for episode in list(episodes_without_transcript()):
        error = _episode_transcript_fetch(episode, fetcher=fetcher)
        if error is None:
            stored += 1
            continue
        failed += 1
        logger.info("transcript of episode %s not stored: %s", episode.pk, error)
        PodcastEpisode.objects.filter(pk=episode.pk).update(
            transcript_attempts=F("transcript_attempts") + 1, transcript_error=error[:1000]
        )
    return TranscriptReport(transcripts_stored=stored, transcripts_failed=failed)


def _episode_transcript_fetch(episode: PodcastEpisode, *, fetcher: Fetcher) -> str | None:
    """Store one episode's transcript; the reason it failed, or None."""
    try:
        result = fetcher(episode.transcript_url, headers={"Accept": "text/*, application/*"})
    except FetchError as exc:
        return f"{exc.code}: {exc.message}"
    if result.status_code != 200:
        return f"HTTP {result.status_code}"
    try:
        with transaction.atomic():
            EpisodeTranscript.objects.update_or_create(
                episode=episode,
                defaults={
                    "text": clean_text(
                        _decode(result.body, result.headers.get("Content-Type", ""))
                    ),
                    "content_type": clean_text(
                        result.headers.get("Content-Type", ""), max_length=100
                    ),
                    "fetched_at": timezone.now(),
                },
            )
    except DatabaseError as exc:
        return f"not stored: {type(exc).__name__}: {exc}"
    return None


def _decode(body: bytes, content_type: str) -> str:
    """The transcript's text: the charset the server names, else a BOM (UTF-16 transcripts
    carry one), else UTF-8; undecodable bytes become U+FFFD, never an error."""
    charset = ""
    for parameter in content_type.split(";")[1:]:
        name, _, value = parameter.strip().partition("=")
        if name.lower() == "charset":
            charset = value.strip().strip('"')
    if body.startswith((b"\xff\xfe", b"\xfe\xff")):
        charset = "utf-16"
    elif body.startswith(b"\xef\xbb\xbf"):
        charset = "utf-8-sig"
    try:
        return body.decode(charset or "utf-8", errors="replace")
    except LookupError:
        # A charset Python does not know, or a codec that is not text (rot13, base64).
        return body.decode("utf-8", errors="replace")


def episodes_store(feed: Feed, episodes: list[ParsedEpisode], *, fetcher: Fetcher) -> int:
    """The feeds step's episode store (news.feeds.EpisodesStore): upserts each episode by
    its GUID and loads its chapters once; returns how many were new."""
    created = 0
    for episode in episodes:
        try:
            # A savepoint per episode: one the database refuses leaves the others stored.
            with transaction.atomic():
                created += _episode_store(feed, episode, fetcher=fetcher)
        except (DatabaseError, ValueError) as exc:
            logger.warning("feed %s: episode %s not stored: %s", feed.pk, episode.guid, exc)
    return created


def _episode_store(feed: Feed, episode: ParsedEpisode, *, fetcher: Fetcher) -> bool:
    """Upsert one episode (its values already cleaned by the parser); True when new."""
    values = {
        "feed": feed,
        "title": episode.title,
        "description": episode.description,
        "published_on": episode.published_on,
        "duration_seconds": episode.duration_seconds,
        "page_url": episode.page_url,
        "audio_url": episode.audio_url,
        "cover_url": episode.cover_url,
        "cover_thumb_url": episode.cover_url,
        "chapters_url": episode.chapters_url,
        "transcript_url": episode.transcript_url,
        "sources": episode.sources,
    }
    # The path id is given once, on creation: a later title leaves links as they were.
    path_id = episode_id_for(guid=episode.guid, title=episode.title)
    stored, was_created = PodcastEpisode.objects.update_or_create(
        guid=episode.guid, defaults=values, create_defaults={**values, "episode_id": path_id}
    )
    if episode.chapters_url and (was_created or not stored.chapters):
        _episode_chapters_load(stored, episode, fetcher=fetcher)
    return was_created


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
    # NaN, Infinity and absurd start times drop their chapter; text and URLs are cleaned.
    chapters = [
        {
            "start_seconds": start,
            "title": clean_text(chapter.get("title", ""), max_length=300),
            "url": clean_url(chapter.get("url", ""), base=result.url or episode.chapters_url),
        }
        for chapter in (data.get("chapters", []) if isinstance(data, dict) else [])[:1000]
        if isinstance(chapter, dict)
        and not isinstance(chapter.get("startTime"), bool)
        and isinstance(chapter.get("startTime"), int | float)
        and (start := clean_int(chapter["startTime"], high=MAX_DURATION_SECONDS)) is not None
    ]
    if chapters:
        stored.chapters = chapters
        stored.save(update_fields=["chapters"])
