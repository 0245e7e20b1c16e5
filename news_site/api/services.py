"""Writes of the API: what counts as an article view."""

import hashlib
import logging

from django.utils import timezone

from news_site.news.entries import entry_view_record
from shared import cache as shared_cache

logger = logging.getLogger(__name__)

_DAY_SECONDS = 24 * 3600


def entry_view_register(*, entry_id: int, viewer: str) -> bool:
    """Count a view of the entry's detail (an app opening the article), once per viewer (an
    account, or else a client address) and entry a day, so refreshes and retries do not inflate
    popularity. Returns whether this view counted."""
    day = timezone.localdate()
    viewer_key = hashlib.sha256(viewer.encode()).hexdigest()[:32]
    first = shared_cache.mark_once(f"entry-view:{day}:{entry_id}:{viewer_key}", _DAY_SECONDS)
    if first is None:
        # The article is still served; while Redis is down every open counts.
        logger.warning("view counted without its once-a-day mark, the cache is unreachable")
        first = True
    if not first:
        return False
    entry_view_record(entry_id=entry_id, day=day)
    return True
