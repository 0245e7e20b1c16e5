"""Reads of podcast episodes, the one visibility rule for every surface: every stored episode
is public (a podcast feed has no relevance filter), newest first."""

from django.db.models import F, QuerySet

from news_site.podcasts.models import EpisodeTranscript, PodcastEpisode


def episode_list() -> QuerySet[PodcastEpisode]:
    # Undated episodes last on every database (they disagree on where NULLs sort).
    return PodcastEpisode.objects.order_by(F("published_on").desc(nulls_last=True), "-id")


def episode_get(*, episode_id: str) -> PodcastEpisode | None:
    return PodcastEpisode.objects.filter(episode_id=episode_id).first()


def episode_get_by_guid(*, guid: str) -> PodcastEpisode | None:
    """The episode an old link names: before the path-safe ids, the GUID was the id."""
    return PodcastEpisode.objects.filter(guid=guid).first()


def episode_transcript(*, episode: PodcastEpisode) -> str | None:
    """The stored transcript, None until `fetch_transcripts` has fetched it."""
    return EpisodeTranscript.objects.filter(episode=episode).values_list("text", flat=True).first()


# An episode whose transcript failed this many times is no longer tried (see the admin).
TRANSCRIPT_MAX_ATTEMPTS = 5


def episodes_without_transcript() -> QuerySet[PodcastEpisode]:
    return (
        PodcastEpisode.objects.exclude(transcript_url="")
        .filter(transcript__isnull=True, transcript_attempts__lt=TRANSCRIPT_MAX_ATTEMPTS)
        .order_by("pk")
    )
