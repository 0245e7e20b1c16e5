"""Reads of the news service. Every list is bounded and fetches its relations up front."""

from datetime import datetime

from django.db.models import Case, Count, F, Prefetch, Q, QuerySet, Value, When
from django.db.models.functions import Lower

from news_site.news.entry_rows import ORDERS
from news_site.news.models import (
    Entry,
    Feed,
    FeedKind,
    ProductGuide,
    SummaryState,
    Tag,
)

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
    return _with_relations(entries.order_by(*ORDERS["latest"]))


def entry_popular() -> QuerySet[Entry]:
    """Most viewed first; among equals, newest first."""
    return _with_relations(_public().order_by(*ORDERS["popular"]))


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
