"""Reads behind /api/v1 that the news core's selectors do not already provide."""

from django.db.models import Count, Q, QuerySet
from django.db.models.functions import Lower

from news_site.api.models import EpisodeTranscript
from news_site.news.models import Entry, PodcastEpisode, Story, Tag
from news_site.news.selectors import MAX_ID, entry_list, feed_list

_RELEVANT = Q(entries__platform_relevant=True)
# A story detail lists at most this many member articles (newest first).
STORY_ENTRIES_MAX = 100


def feed_list_counted() -> QuerySet:
    return feed_list().annotate(entries_count=Count("entries", filter=_RELEVANT))


def tag_list_with_entries() -> QuerySet[Tag]:
    return (
        Tag.objects.annotate(entries_count=Count("entries", filter=_RELEVANT))
        .filter(entries_count__gt=0)
        .order_by(Lower("name"), "id")
    )


def entry_followed_list(*, account_id: int) -> QuerySet[Entry]:
    return entry_list().filter(feed__followers__account_id=account_id)


def story_list() -> QuerySet[Story]:
    """Stories with members, most recently updated first (filtered by api.filters)."""
    return (
        Story.objects.filter(entries_count__gt=0)
        .defer("centroid", "entities", "body")
        .order_by("-updated_at", "-id")
    )


def story_get(*, story_id: int) -> Story | None:
    if not 0 < story_id <= MAX_ID:
        return None
    return (
        Story.objects.filter(pk=story_id, entries_count__gt=0)
        .defer("centroid", "entities")
        .select_related("predecessor")
        .first()
    )


def story_successors(*, story: Story) -> QuerySet[Story]:
    return story.successors.only("id", "title", "slug", "status").order_by("id")


def story_entries(*, story: Story) -> QuerySet[Entry]:
    return entry_list().filter(story=story)[:STORY_ENTRIES_MAX]


def episode_list() -> QuerySet[PodcastEpisode]:
    return PodcastEpisode.objects.order_by("-published_on", "-id")


def episode_get(*, episode_id: str) -> PodcastEpisode | None:
    return PodcastEpisode.objects.filter(episode_id=episode_id).first()


def episode_transcript(*, episode: PodcastEpisode) -> str | None:
    """The stored transcript, None until `fetch_transcripts` has fetched it."""
    return EpisodeTranscript.objects.filter(episode=episode).values_list("text", flat=True).first()


def episodes_without_transcript() -> QuerySet[PodcastEpisode]:
    return PodcastEpisode.objects.exclude(transcript_url="").filter(transcript__isnull=True)
