"""Search over the public entries: semantic when embeddings are available and find something,
keyword otherwise (PostgreSQL full-text search in Swedish, or a simple match on SQLite)."""

import re
from typing import Literal

from django.conf import settings
from django.db import connection
from django.db.models import BooleanField, FloatField, Q
from django.db.models.expressions import RawSQL

from news_site.news.models import Entry
from news_site.news.selectors import entry_list
from news_site.search.embeddings import embeddings_available, texts_embed

SearchMode = Literal["semantic", "keyword"]

# The same expression as the GIN index of migration search/0002, or PostgreSQL cannot use it.
PG_DOCUMENT = (
    "to_tsvector('swedish'::regconfig, "
    "news_entry.title || ' ' || news_entry.summary_translated || ' ' "
    "|| news_entry.summary_original)"
)
# All of the words first (the index intersects their posting lists, which is cheap and
# precise); when nothing has all of them, any of them (ranked by how well each matches), so
# that a short app query finds something rather than nothing.
_PG_ALL_WORDS = "websearch_to_tsquery('swedish'::regconfig, %s)"
_PG_ANY_WORD = (
    "to_tsquery('swedish'::regconfig, "
    "replace(websearch_to_tsquery('swedish'::regconfig, %s)::text, ' & ', ' | '))"
)
_WORD = re.compile(r"\w{2,}")
# Keyword search ranks the newest this many matches.
KEYWORD_CANDIDATES = 200


def entries_search(*, query: str, limit: int) -> tuple[list[Entry], SearchMode]:
    """The best `limit` public entries for `query`, and the mode that found them."""
    if embeddings_available():
        found = entries_semantic_search(query=query, limit=limit)
        if found:
            return found, "semantic"
    return entries_keyword_search(query=query, limit=limit), "keyword"


def entries_semantic_search(*, query: str, limit: int) -> list[Entry]:
    """Nearest entries by meaning above the score floor. Needs embeddings_available()."""
    from news_site.search.vector_index import INDEX

    vector = texts_embed([query])[0]
    # Over-fetch: an entry can have lost its relevance since it was embedded.
    hits = [
        (entry_id, score)
        for entry_id, score in INDEX.nearest(vector, limit * 2)
        if score >= settings.NEWS_SEMANTIC_MIN_SCORE
    ]
    entries = entry_list().filter(pk__in=[entry_id for entry_id, _ in hits]).in_bulk()
    return [entries[entry_id] for entry_id, _ in hits if entry_id in entries][:limit]


def entries_keyword_search(*, query: str, limit: int) -> list[Entry]:
    """Full-text search on PostgreSQL (Swedish), a plain word match on SQLite."""
    if connection.vendor == "postgresql":
        return _postgresql_search(query, limit, _PG_ALL_WORDS) or _postgresql_search(
            query, limit, _PG_ANY_WORD
        )
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(query)))
    if not words:
        return []
    any_word = Q()
    for word in words:
        any_word |= (
            Q(title__icontains=word)
            | Q(summary_translated__icontains=word)
            | Q(summary_original__icontains=word)
        )
    candidates = list(entry_list().filter(any_word)[:KEYWORD_CANDIDATES])

    def score(entry: Entry) -> int:
        title = entry.title.lower()
        text = f"{entry.summary_translated} {entry.summary_original}".lower()
        return sum(2 * (word in title) + (word in text) for word in words)

    # Stable sort: among equal scores the newest stays first.
    return sorted(candidates, key=score, reverse=True)[:limit]


def _postgresql_search(query: str, limit: int, tsquery: str) -> list[Entry]:
    # The SQL is constant; the query goes in as a parameter.
    matches = RawSQL(f"{PG_DOCUMENT} @@ {tsquery}", [query], output_field=BooleanField())  # noqa: S611
    rank = RawSQL(f"ts_rank({PG_DOCUMENT}, {tsquery})", [query], output_field=FloatField())  # noqa: S611
    # Ranking every match of a common word costs seconds at 100,000 entries; news readers want
    # the recent ones, so the newest matches are ranked. Two queries, not a subquery: Django
    # renames the table inside a subquery, which the raw SQL (written for the GIN index's
    # expression) cannot follow.
    newest = list(
        Entry.objects.filter(platform_relevant=True)
        .filter(matches)
        .order_by("-listed_at", "-id")
        .values_list("id", flat=True)[:KEYWORD_CANDIDATES]
    )
    if not newest:
        return []
    return list(
        entry_list()
        .filter(pk__in=newest)
        .annotate(rank=rank)
        .order_by("-rank", "-listed_at", "-id")[:limit]
    )
