"""The service's own podcast: episodes (stored from its feed by the feeds step) and their
transcripts (fetched by the ingest's transcript step)."""

from django.db import models
from django.utils import timezone


class PodcastEpisode(models.Model):
    feed = models.ForeignKey(
        "news.Feed", null=True, blank=True, on_delete=models.SET_NULL, related_name="episodes"
    )
    episode_id = models.CharField(max_length=200, unique=True)
    title = models.CharField(max_length=300)
    description = models.TextField(blank=True)
    published_on = models.DateField(null=True, blank=True)
    duration_seconds = models.PositiveIntegerField(null=True, blank=True)
    page_url = models.URLField(max_length=2000, blank=True)
    audio_url = models.URLField(max_length=2000, blank=True)
    cover_url = models.URLField(max_length=2000, blank=True)
    cover_thumb_url = models.URLField(max_length=2000, blank=True)
    chapters_url = models.URLField(max_length=2000, blank=True)
    chapters = models.JSONField(default=list, blank=True)
    sources = models.JSONField(default=list, blank=True)
    transcript_url = models.URLField(max_length=2000, blank=True)
    # The transcript step's failures: after TRANSCRIPT_MAX_ATTEMPTS the episode is left alone
    # until an editor clears the count (the reason stays here, shown in the admin).
    transcript_attempts = models.PositiveSmallIntegerField(default=0)
    transcript_error = models.TextField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # The table kept its name when the model moved here from the news app.
        db_table = "news_podcastepisode"
        ordering = ["-published_on", "-id"]

    def __str__(self) -> str:
        return self.title


class EpisodeTranscript(models.Model):
    """An episode's transcript text, fetched once from its `transcript_url` by the
    `fetch_transcripts` step, so a request never waits on the network."""

    episode = models.OneToOneField(
        PodcastEpisode, on_delete=models.CASCADE, primary_key=True, related_name="transcript"
    )
    text = models.TextField()
    content_type = models.CharField(max_length=100, blank=True)
    fetched_at = models.DateTimeField(default=timezone.now)

    class Meta:
        # The table kept its name when the model moved here from the api app.
        db_table = "api_episodetranscript"

    def __str__(self) -> str:
        return f"transcript of {self.episode_id}"
