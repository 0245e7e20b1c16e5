"""Reads of the news service. Every list is bounded and fetches its relations up front."""

import functools
from collections.abc import Iterable
from datetime import datetime
from typing import TypedDict

from django.db import connection
from django.db.models import Case, Count, F, Prefetch, Q, QuerySet, Value, When
from django.db.models.functions import Coalesce, Lower

from news_site.news.models import (
    Entry,
    Feed,
    FeedKind,
    ProductGuide,
    SummaryState,
    Tag,
)
from shared.sql import column, table

MAX_SUMMARY_ATTEMPTS = 3
_RELEVANT = Q(entries__platform_relevant=True)


def feeds_due(*, now: datetime) -> QuerySet[Feed]:
    return Feed.objects.filter(
        is_active=True, paused_at__isnull=True, next_check_at__lte=now
    ).order_by("next_check_at")


def entries_due_for_summary(*, now: datetime) -> QuerySet[Entry]:
    """Entries the model should summarise: never summarised by it, asked again by an editor,
    or changed since. An editor's own summary is left alone unless they ask."""
    needs_model = (
        Q(summary_state=SummaryState.EXTRACTED, summary_attempts__lt=MAX_SUMMARY_ATTEMPTS)
        | Q(resummarise_requested=True)
        | (
            Q(summary_state=SummaryState.TRANSLATED, summary_attempts__lt=MAX_SUMMARY_ATTEMPTS)
            & ~Q(summary_fingerprint=F("content_fingerprint"))
        )
    )
    return (
        Entry.objects.filter(needs_model)
        .filter(Q(summary_lease_until__isnull=True) | Q(summary_lease_until__lt=now))
        .select_related("feed")
        .order_by("-listed_at", "-id")
    )


# What public surfaces show of an entry and its feed; the rest (hashes, summary bookkeeping)
# would only cost transfer and model building on the hottest paths.
_PUBLIC_FIELDS = (
    "id",
    "title",
    "url",
    "image_url",
    "language",
    "published_at",
    "listed_at",
    "summary_original",
    "summary_translated",
    "summary_state",
    "platform_relevant",
    "view_count",
    "source_count",
    # The reader's pages show an entry of a story as its story's card.
    "story",
    "feed__id",
    "feed__title",
)


def _with_relations(entries: QuerySet[Entry]) -> QuerySet[Entry]:
    return (
        entries.select_related("feed")
        .only(*_PUBLIC_FIELDS)
        .prefetch_related(
            Prefetch(
                "tags",
                queryset=Tag.objects.only("id", "name", "slug").order_by(Lower("name"), "id"),
            )
        )
    )


class EntryRow(TypedDict):
    """An entry as the /api/v1 lists show it, read as a plain row (entry_rows)."""

    id: int
    url: str
    image_url: str
    language: str
    title: str
    summary_original: str
    summary_translated: str
    # When it was published or, for older records without that time, when we first listed it.
    published: datetime
    platform_relevant: bool
    view_count: int
    source_count: int
    feed_id: int
    feed_title: str


class TagRef(TypedDict):
    id: int
    name: str


def entry_rows(entries: QuerySet[Entry]) -> QuerySet[Entry, EntryRow]:
    """`entries` (one of the lists above, its order kept) as EntryRow rows, without their
    tags (entry_tag_refs). A page of 50 models with their tags prefetched cost more CPU than
    everything else in the request together: a model per entry, per source and per tag, and a
    related manager and query set per entry for its prefetched tags."""
    return entries.prefetch_related(None).values(
        "id",
        "url",
        "image_url",
        "language",
        "title",
        "summary_original",
        "summary_translated",
        "platform_relevant",
        "view_count",
        "source_count",
        "feed_id",
        published=Coalesce("published_at", "listed_at"),
        feed_title=F("feed__title"),
    )


def entry_tag_refs(*, entry_ids: list[int]) -> dict[int, list[TagRef]]:
    """The tags of each of these entries (an entry without tags is missing), in one query and
    in the order every surface shows them (_with_relations: the lower-cased name, then id)."""
    if not entry_ids:
        return {}
    tags: dict[int, list[TagRef]] = {}
    with connection.cursor() as cursor:
        cursor.execute(_tag_refs_sql(len(entry_ids)), entry_ids)
        for entry_id, tag_id, name in cursor.fetchall():
            tags.setdefault(entry_id, []).append({"id": tag_id, "name": name})
    return tags


@functools.cache
def _tag_refs_sql(count: int) -> str:
    """entry_tag_refs's statement for `count` entries. Written as SQL: every page of a list
    runs it, and the ORM's building of it cost more CPU than the rest of the page's rows
    (docs/api-performance.md)."""
    links = Entry.tags.through
    entry, tag = column(links, "entry"), column(links, "tag")
    tag_id, tag_name = column(Tag, "pk"), column(Tag, "name")
    placeholders = ", ".join(["%s"] * count)
    return (
        f"SELECT l.{entry}, t.{tag_id}, t.{tag_name} "  # noqa: S608
        f"FROM {table(links)} l JOIN {table(Tag)} t ON t.{tag_id} = l.{tag} "
        f"WHERE l.{entry} IN ({placeholders}) ORDER BY LOWER(t.{tag_name}), t.{tag_id}"
    )


def _public() -> QuerySet[Entry]:
    """The one visibility rule for entries on every surface (/api/v1, legacy JSON, markdown,
    RSS, MCP): vendor-relevant articles only; the rest is stored but never served."""
    return Entry.objects.filter(platform_relevant=True)


def entry_list(*, feed: Feed | None = None, tag: Tag | None = None) -> QuerySet[Entry]:
    """Newest first (by listed_at, then id so that pages are stable)."""
    entries = _public()
    if feed is not None:
        entries = entries.filter(feed=feed)
    if tag is not None:
        entries = entries.filter(tags=tag)
    return _with_relations(entries.order_by("-listed_at", "-id"))


def entry_popular() -> QuerySet[Entry]:
    """Most viewed first; among equals, newest first."""
    return _with_relations(_public().order_by("-view_count", "-listed_at", "-id"))


def entry_get(*, entry_id: int) -> Entry | None:
    return _with_relations(_public().filter(pk=entry_id)).first()


def feed_list() -> QuerySet[Feed]:
    """Active news sources (the podcast feed is not a source)."""
    return Feed.objects.filter(is_active=True, kind=FeedKind.ARTICLES).order_by(
        Lower("title"), "id"
    )


def feed_get(*, feed_id: int) -> Feed | None:
    return feed_list().filter(pk=feed_id).first()


def tag_list() -> QuerySet[Tag]:
    # Case-insensitive, so the order is the same on every database collation.
    return Tag.objects.order_by(Lower("name"), "id")


def feed_entry_counts() -> dict[int, int]:
    """Relevant entries per source id (sources without any are missing). Reads the
    entry_relevant_feed index alone; news_site.news.counts keeps the result a minute."""
    rows = _public().values("feed_id").annotate(count=Count("*")).order_by()
    return {row["feed_id"]: row["count"] for row in rows}


def tag_list_with_entries() -> QuerySet[Tag]:
    """Tags that label at least one relevant entry, each with that count."""
    return (
        Tag.objects.annotate(entries_count=Count("entries", filter=_RELEVANT))
        .filter(entries_count__gt=0)
        .order_by(Lower("name"), "id")
    )


def entry_followed_list(*, feed_ids: Iterable[int]) -> QuerySet[Entry]:
    """Relevant entries of these sources (the ones an account follows), newest first."""
    return entry_list().filter(feed_id__in=feed_ids)


def entry_none() -> QuerySet[Entry]:
    """The empty list of entries (of no source), without a query."""
    return _with_relations(Entry.objects.none())


def tag_get(*, tag_id: int) -> Tag | None:
    return Tag.objects.filter(pk=tag_id).first()


def tag_get_by_slug(*, slug: str) -> Tag | None:
    return Tag.objects.filter(slug=slug).first()


def guide_list(*, page_type: str | None = None) -> QuerySet[ProductGuide]:
    guides = ProductGuide.objects.filter(is_published=True)
    if page_type:
        guides = guides.filter(page_type=page_type)
    return guides.order_by("page_type", Lower("title"), "id")


def guide_get(*, slug: str) -> ProductGuide | None:
    return ProductGuide.objects.filter(is_published=True, slug=slug).first()


def feed_state_counts() -> dict[str, int]:
    """Active feeds by the outcome of their last fetch, paused feeds counted as `paused`."""
    state = Case(When(paused_at__isnull=False, then=Value("paused")), default=F("last_outcome"))
    rows = (
        Feed.objects.filter(is_active=True)
        .annotate(state=state)
        .values("state")
        .annotate(count=Count("id"))
        .order_by()
    )
    return {row["state"]: row["count"] for row in rows}
