"""The per-source entry counts shown beside each source's name, kept in the shared cache.

Counting reads the entry_relevant_feed index alone (about 9 ms at 100,000 entries on
PostgreSQL; a scan of the table took 100 ms), still too much per request; the counts are the
same for every caller, and a minute behind is fine for a number shown beside a source's name.
"""

from news_site.news import selectors
from shared import cache as shared_cache

FEED_COUNTS_SECONDS = 60
_FEED_COUNTS_KEY = "news:feed-entry-counts:v1"


def feed_entry_counts_kept() -> dict[int, int]:
    """Relevant entries per source id (selectors.feed_entry_counts), at most
    FEED_COUNTS_SECONDS old. Shared by every caller: no per-user data is in it."""
    return shared_cache.value_read_or_make(
        _FEED_COUNTS_KEY, selectors.feed_entry_counts, FEED_COUNTS_SECONDS
    )
