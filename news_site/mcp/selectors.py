"""Reads the tool server needs beyond the news core's selectors: stories and podcast episodes.
Every list is bounded and fetches its relations up front."""

from django.db.models import Count, Q, QuerySet

from news_site.news import selectors as news_selectors
from news_site.news.models import Entry, PodcastEpisode, Story


def story_list(*, limit: int) -> list[Story]:
    """Most recently updated stories that have at least one relevant entry."""
    return list(
        Story.objects.annotate(
            relevant_count=Count("entries", filter=Q(entries__platform_relevant=True))
        )
        .filter(relevant_count__gt=0)
        .order_by("-updated_at", "-id")[:limit]
    )


def story_get(*, story_id: int) -> Story | None:
    if not 0 < story_id <= news_selectors.MAX_ID:
        return None
    return Story.objects.filter(pk=story_id).first()


def story_entries(*, story: Story) -> list[Entry]:
    """The story's relevant entries, newest first."""
    return list(news_selectors.entry_list().filter(story=story))


def episode_list(*, limit: int) -> QuerySet[PodcastEpisode]:
    return PodcastEpisode.objects.order_by("-published_on", "-id")[:limit]


def episode_get(*, episode_id: str) -> PodcastEpisode | None:
    return PodcastEpisode.objects.filter(episode_id=episode_id).first()
