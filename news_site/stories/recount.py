"""Recounting stories from their members (counts, time span, image, status) and letting quiet
stories go dormant."""

from collections import defaultdict
from collections.abc import Iterable
from datetime import datetime, timedelta

from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min

from news_site.news.models import Entry, Story, StoryStatus
from news_site.stories.rows import rows_update

# Stories recounted per round of bulk statements.
_RECOUNT_CHUNK = 500


def story_refresh(*, story: Story, now: datetime) -> Story:
    """Recount one story from its members (see stories_refresh)."""
    stories_refresh(story_ids=[story.pk], now=now)
    story.refresh_from_db()
    return story


@transaction.atomic
def stories_refresh(*, story_ids: Iterable[int], now: datetime) -> None:
    """Recount stories from their members: counts, time span, image, status, and every
    member's `source_count` (distinct sources; a syndicated copy is already one entry). A few
    statements per 500 stories."""
    ids = sorted(story_ids)
    for start in range(0, len(ids), _RECOUNT_CHUNK):
        chunk = ids[start : start + _RECOUNT_CHUNK]
        stats = {
            row["story_id"]: row
            for row in Entry.objects.filter(story_id__in=chunk)
            .values("story_id")
            .annotate(
                entries=Count("id"),
                sources=Count("feed", distinct=True),
                first=Min("listed_at"),
                last=Max("listed_at"),
            )
            .order_by()
        }
        images: dict[int, str] = {}
        for story_id, image_url in (
            Entry.objects.filter(story_id__in=chunk)
            .exclude(image_url="")
            .order_by("story_id", "listed_at", "id")
            .values_list("story_id", "image_url")
        ):
            images.setdefault(story_id, image_url)
        stories = [story for story in Story.objects.filter(pk__in=chunk) if story.pk in stats]
        by_sources: dict[int, list[int]] = defaultdict(list)
        for story in stories:
            row = stats[story.pk]
            story.entries_count = row["entries"]
            story.source_count = row["sources"]
            story.first_entry_published_at = row["first"]
            story.last_entry_published_at = row["last"]
            # "Updated" means the story last had news: its newest member, not when we
            # recomputed it.
            story.updated_at = row["last"]
            story.image_url = images.get(story.pk, "")
            story.status = _status(last=row["last"], now=now)
            by_sources[story.source_count].append(story.pk)
        rows_update(
            Story,
            stories,
            [
                "entries_count",
                "source_count",
                "first_entry_published_at",
                "last_entry_published_at",
                "updated_at",
                "image_url",
                "status",
            ],
        )
        for count, members_of in by_sources.items():
            Entry.objects.filter(story_id__in=members_of).exclude(source_count=count).update(
                source_count=count
            )


def stories_status_update(*, now: datetime) -> int:
    """Stories without a new member for the quiet period become dormant; returns how many."""
    quiet_since = now - timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    return Story.objects.filter(
        status=StoryStatus.ACTIVE, last_entry_published_at__lt=quiet_since
    ).update(status=StoryStatus.DORMANT)


def _status(*, last: datetime, now: datetime) -> str:
    quiet = timedelta(hours=settings.NEWS_STORY_QUIET_HOURS)
    return StoryStatus.DORMANT if now - last > quiet else StoryStatus.ACTIVE
