"""The content generation: one counter for everything the public lists show (entries, sources,
tags). Ingest and editors' saves change it (content_changed); rendered pages are kept under it
(news_site.api.pages). Each process keeps its own copy of the counter for at most
CONTENT_GENERATION_SECONDS, so a page request costs no read of the shared cache within that.
"""

from django.core.cache import caches
from django.db import transaction

from shared import cache as shared_cache

CONTENT_GENERATION_KEY = "news:content-generation"
CONTENT_GENERATION_SECONDS = 1


def content_generation() -> int | None:
    """The current content generation; None when the shared cache cannot be reached (then no
    copy made under any generation is used)."""
    memo = caches["process"].get(CONTENT_GENERATION_KEY)
    if memo is not None:
        return memo
    generation = shared_cache.generation_read(CONTENT_GENERATION_KEY)
    if generation is not None:
        caches["process"].set(CONTENT_GENERATION_KEY, generation, CONTENT_GENERATION_SECONDS)
    return generation


def content_changed() -> None:
    """What the public lists show may have changed: no process uses a page rendered before.
    This process sees it at once, the others within CONTENT_GENERATION_SECONDS."""
    shared_cache.generation_changed(CONTENT_GENERATION_KEY)
    caches["process"].delete(CONTENT_GENERATION_KEY)
    if transaction.get_connection().in_atomic_block:
        transaction.on_commit(lambda: caches["process"].delete(CONTENT_GENERATION_KEY))
