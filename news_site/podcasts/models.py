"""Podcast data beyond the feed's episodes: transcripts, fetched by the ingest's transcript step."""

from django.db import models
from django.utils import timezone

from news_site.news.models import PodcastEpisode


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
