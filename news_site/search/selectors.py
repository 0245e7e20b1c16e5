"""Search over the public entries: semantic when embeddings are available and find something,
keyword otherwise (PostgreSQL full-text search in Swedish, or a simple match on SQLite)."""

import re
from collections.abc import Sequence
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
# Entries with all of the words first (the index intersects their posting lists, which is
# cheap and precise), then, while the page has room, those with some of them (ranked by how
# well each matches): a reader's query is often worded differently from the one entry that
# has every word, and the others are what they were looking for too.
_PG_ALL_WORDS = "websearch_to_tsquery('swedish'::regconfig, %s)"
# The same query with its words made alternatives, written by _any_words_query.
_PG_ANY_WORD = "%s::tsquery"
# Migration search/0002's GIN index: PostgreSQL's statistics of its expression say which
# lexemes most entries hold.
_PG_INDEX = "search_entry_fulltext_sv"
# A word this many entries hold is no alternative of its own when the page is filled: finding
# the newest of the entries that have it reads every one of them (about 170 ms for 85,000 of
# 100,000), and it says little about which of them a reader wants ("Apple" in an Apple news
# service).
COMMON_WORD_ENTRIES = 1000
_WORD = re.compile(r"\w{2,}")
# A word the query excludes, as web search syntax writes it (and PostgreSQL reads it).
_EXCLUDED_WORD = re.compile(r"(?:^|(?<=\s))-(\w{2,})")
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
        found = _postgresql_search(query, limit, _PG_ALL_WORDS)
        relaxed = _any_words_query(query) if len(found) < limit else None
        if relaxed is not None:
            found += _postgresql_search(
                relaxed, limit - len(found), _PG_ANY_WORD, excluded=[entry.pk for entry in found]
            )
        return found
    unwanted = {word.lower() for word in _EXCLUDED_WORD.findall(query)}
    wanted = _EXCLUDED_WORD.sub(" ", query)
    words = list(dict.fromkeys(word.lower() for word in _WORD.findall(wanted)))
    if not words:
        return []
    any_word = Q()
    for word in words:
        any_word |= _holds(word)
    entries = entry_list().filter(any_word)
    for word in unwanted:
        entries = entries.exclude(_holds(word))
    candidates = list(entries[:KEYWORD_CANDIDATES])

    def score(entry: Entry) -> int:
        title = entry.title.lower()
        text = f"{entry.summary_translated} {entry.summary_original}".lower()
        return sum(2 * (word in title) + (word in text) for word in words)

    # Stable sort: among equal scores the newest stays first.
    return sorted(candidates, key=score, reverse=True)[:limit]


def _holds(word: str) -> Q:
    """Entries whose title or either summary holds `word` (SQLite's keyword match)."""
    return (
        Q(title__icontains=word)
        | Q(summary_translated__icontains=word)
        | Q(summary_original__icontains=word)
    )


def _any_words_query(query: str) -> str | None:
    """PostgreSQL's reading of `query` (websearch syntax, Swedish stems) with its words made
    alternatives, as tsquery text: `'airpod' & 'puls' & !'tran'` becomes
    `( 'airpod' | 'puls' ) & ( !'tran' )`. A word the query excludes stays excluded, a quoted
    phrase stays one alternative, and a word very many entries hold is none
    (COMMON_WORD_ENTRIES).
    None when there is nothing to add to the query as it was."""
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT {_PG_ALL_WORDS}::text", [query])
        (text,) = cursor.fetchone()
    # The query's top level is a conjunction ("&" binds tighter than "|", and websearch's
    # own "or" stays inside its part). A lexeme is quoted and never holds " & ".
    parts = text.split(" & ") if text else []
    wanted = [part for part in parts if not part.startswith("!")]
    if len(wanted) < 2:
        return None
    common = _common_lexemes()
    wanted = [part for part in wanted if part.strip("'") not in common]
    if not wanted:
        return None
    excluded = [f"( {part} )" for part in parts if part.startswith("!")]
    return " & ".join([f"( {' | '.join(wanted)} )", *excluded])


def _common_lexemes() -> set[str]:
    """Lexemes at least COMMON_WORD_ENTRIES entries hold, as PostgreSQL's last ANALYZE of the
    full-text index and of the entries' table estimated them (none before the first)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT s.most_common_elems::text::text[], s.most_common_elem_freqs, c.reltuples "
            "FROM pg_stats s, pg_class c WHERE s.schemaname = current_schema() "
            "AND s.tablename = %s AND c.oid = %s::regclass",
            [_PG_INDEX, Entry._meta.db_table],
        )
        row = cursor.fetchone()
    if row is None or row[0] is None:
        return set()
    lexemes, shares, entries = row
    # The shares end with three figures of their own (least, most, nulls): zip stops first.
    return {
        lexeme
        for lexeme, share in zip(lexemes, shares, strict=False)
        if share * entries >= COMMON_WORD_ENTRIES
    }


def _postgresql_search(
    query: str, limit: int, tsquery: str, *, excluded: Sequence[int] = ()
) -> list[Entry]:
    # The SQL is constant; the query goes in as a parameter.
    matches = RawSQL(f"{PG_DOCUMENT} @@ {tsquery}", [query], output_field=BooleanField())  # noqa: S611
    rank = RawSQL(f"ts_rank({PG_DOCUMENT}, {tsquery})", [query], output_field=FloatField())  # noqa: S611
    # Ranking every match of a common word costs seconds at 100,000 entries; news readers want
    # the recent ones, so the newest matches are ranked. Two queries, not a subquery: Django
    # renames the table inside a subquery, which the raw SQL (written for the GIN index's
    # expression) cannot follow.
    matching = Entry.objects.filter(platform_relevant=True).filter(matches)
    if excluded:
        matching = matching.exclude(pk__in=excluded)
    newest = list(
        matching.order_by("-listed_at", "-id").values_list("id", flat=True)[:KEYWORD_CANDIDATES]
    )
    if not newest:
        return []
    return list(
        entry_list()
        .filter(pk__in=newest)
        .annotate(rank=rank)
        .order_by("-rank", "-listed_at", "-id")[:limit]
    )
