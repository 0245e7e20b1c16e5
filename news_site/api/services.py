"""Writes of the API: what counts as an article view, and stored podcast transcripts."""

import hashlib
import logging

from django.core.cache import cache
from django.utils import timezone
from redis.exceptions import RedisError

from news_site.api.models import EpisodeTranscript
from news_site.api.selectors import episodes_without_transcript
from news_site.news.services import Fetcher, entry_view_record, http_fetch
from shared.fetch import FetchError

logger = logging.getLogger(__name__)

_DAY_SECONDS = 24 * 3600


def entry_view_register(*, entry_id: int, viewer: str) -> bool:
    """Count a view of the entry's detail (an app opening the article), once per viewer (an
    account, or else a client address) and entry a day, so refreshes and retries do not inflate
    popularity. Returns whether this view counted."""
    day = timezone.localdate()
    viewer_key = hashlib.sha256(viewer.encode()).hexdigest()[:32]
    try:
        first = cache.add(f"entry-view:{day}:{entry_id}:{viewer_key}", 1, _DAY_SECONDS)
    except RedisError as exc:
        # The article is still served; while Redis is down every open counts.
        logger.warning(
            "view counted without its once-a-day mark, the cache is unreachable: %s", exc
        )
        first = True
    if not first:
        return False
    entry_view_record(entry_id=entry_id, day=day)
    return True


def episode_transcripts_fetch(*, fetcher: Fetcher = http_fetch) -> int:
    """Fetch and store the transcripts not fetched yet; one failing episode does not stop the
    rest (it is tried again next run). Returns how many were stored."""
    stored = 0
    for episode in episodes_without_transcript():
        try:
            result = fetcher(episode.transcript_url, headers={"Accept": "text/*, application/*"})
        except FetchError as exc:
            logger.info("transcript of episode %s not fetched: %s", episode.pk, exc.message)
            continue
        if result.status_code != 200:
            logger.info("transcript of episode %s: HTTP %s", episode.pk, result.status_code)
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
    return stored
