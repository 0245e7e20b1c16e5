"""Reads of story watch: clustering's inputs, and the story reads of every surface.

Visibility, one rule for /api/v1, MCP and any other surface: a story is public while it has
members (`entries_count > 0`, kept by clustering; members are relevant articles). A story
emptied by editors is gone everywhere, list and detail alike.
"""

from datetime import datetime

from django.db.models import Exists, OuterRef, Q, QuerySet

from news_site.news.models import Entry, FeedKind, Story
from news_site.news.selectors import entry_list

# A story detail lists at most this many member articles (newest first).
STORY_ENTRIES_MAX = 100
# Enough recent entries for stable document frequencies, few enough to read on every run.
IDF_SAMPLE_SIZE = 5000


def entries_due_for_story() -> QuerySet[Entry]:
    """Vendor-relevant articles not in a story yet, oldest first, so stories grow in the order
    their events unfolded. An entry whose assignment failed (`story_error`) waits until an
    editor clears the error; one an editor took out of its story (`story_pinned`) stays out."""
    return (
        Entry.objects.filter(
            story__isnull=True,
            story_pinned=False,
            story_error="",
            platform_relevant=True,
            feed__kind=FeedKind.ARTICLES,
        )
        .select_related("feed")
        .order_by("listed_at", "id")
    )


def entries_for_idf() -> QuerySet[Entry]:
    return Entry.objects.filter(platform_relevant=True).order_by("-listed_at")[:IDF_SAMPLE_SIZE]


def stories_since(*, moment: datetime) -> QuerySet[Story]:
    """Stories whose newest member is at or after `moment`: the candidates of one run."""
    return Story.objects.filter(last_entry_published_at__gte=moment).order_by("id")


def stories_members(*, story_ids: list[int]) -> QuerySet[Entry]:
    """The members of several stories, each story's in order (group them by story_id)."""
    return (
        Entry.objects.filter(story_id__in=story_ids)
        .select_related("feed")
        .order_by("listed_at", "id")
    )


def stories_member_texts(
    *, story_ids: list[int]
) -> QuerySet[Entry, tuple[int, int, str, str, str]]:
    """(story_id, id, title, summary_original, summary_translated) of the members of several
    stories, each story's in members' order: what a story's text is written from, read without
    building an entry per row."""
    return (
        Entry.objects.filter(story_id__in=story_ids)
        .order_by("listed_at", "id")
        .values_list("story_id", "id", "title", "summary_original", "summary_translated")
    )


def entry_text(entry: Entry) -> str:
    """What clustering reads of an entry: its title and both summaries."""
    return "\n".join(
        part for part in (entry.title, entry.summary_original, entry.summary_translated) if part
    )


def story_list() -> QuerySet[Story]:
    """Visible stories, most recently updated first."""
    return (
        Story.objects.filter(entries_count__gt=0)
        .defer("centroid", "entities", "body")
        .order_by("-updated_at", "-id")
    )


def story_get(*, story_id: int) -> Story | None:
    return (
        Story.objects.filter(pk=story_id, entries_count__gt=0)
        .defer("centroid", "entities")
        .select_related("predecessor")
        .first()
    )


def story_successors(*, story: Story) -> QuerySet[Story]:
    # predecessor too: the related manager sets it on every row it returns, and a deferred
    # predecessor_id would cost one query per successor.
    return story.successors.only("id", "title", "slug", "status", "predecessor").order_by("id")


def story_entries(*, story: Story) -> QuerySet[Entry]:
    """The story's public articles, newest first, at most STORY_ENTRIES_MAX."""
    return entry_list().filter(story=story)[:STORY_ENTRIES_MAX]


def card_entries() -> QuerySet[Entry]:
    """One public entry per card of the reader's pages, newest first: every entry without a
    story, and of each story only its newest public member (the story's card takes that place
    in the list), so two articles of one story are never two cards."""
    newer_member = (
        entry_list()
        .order_by()
        .filter(story_id=OuterRef("story_id"))
        .filter(
            Q(listed_at__gt=OuterRef("listed_at"))
            | Q(listed_at=OuterRef("listed_at"), id__gt=OuterRef("id"))
        )
    )
    return entry_list().filter(Q(story__isnull=True) | ~Exists(newer_member))


def stories_by_id(*, story_ids: list[int]) -> dict[int, Story]:
    """Visible stories by id, for the cards of a page of card_entries()."""
    return story_list().in_bulk(story_ids)
