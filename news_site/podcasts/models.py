"""The service's own podcast: episodes (stored from its feed by the feeds step) and their
transcripts (fetched by the ingest's transcript step)."""

from django.db import models
from django.utils import timezone


class PodcastEpisode(models.Model):
    feed = models.ForeignKey(
        "news.Feed",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="episodes",
        verbose_name="flöde",
    )
    # The id in paths and links (podcasts/identifiers.py), assigned when the episode is first
    # stored and never changed; the feed's GUID, which a path cannot hold, is `guid`.
    episode_id = models.CharField(max_length=200, unique=True, verbose_name="avsnitts-id")
    guid = models.CharField(max_length=200, unique=True, verbose_name="GUID i flödet")
    title = models.CharField(max_length=300, verbose_name="titel")
    description = models.TextField(blank=True, verbose_name="beskrivning")
    published_on = models.DateField(null=True, blank=True, verbose_name="publiceringsdag")
    duration_seconds = models.PositiveIntegerField(
        null=True, blank=True, verbose_name="längd (sekunder)"
    )
    page_url = models.URLField(max_length=2000, blank=True, verbose_name="avsnittets sida")
    audio_url = models.URLField(max_length=2000, blank=True, verbose_name="ljudfil")
    cover_url = models.URLField(max_length=2000, blank=True, verbose_name="omslagsbild")
    cover_thumb_url = models.URLField(
        max_length=2000, blank=True, verbose_name="omslagsbild (liten)"
    )
    chapters_url = models.URLField(max_length=2000, blank=True, verbose_name="kapitelfil")
    chapters = models.JSONField(default=list, blank=True, verbose_name="kapitel")
    sources = models.JSONField(default=list, blank=True, verbose_name="källor")
    transcript_url = models.URLField(
        max_length=2000, blank=True, verbose_name="transkriptionens adress"
    )
    # The transcript step's failures: after TRANSCRIPT_MAX_ATTEMPTS the episode is left alone
    # until an editor clears the count (the reason stays here, shown in the admin).
    transcript_attempts = models.PositiveSmallIntegerField(
        default=0, verbose_name="försök att hämta transkriptionen"
    )
    transcript_error = models.TextField(blank=True, verbose_name="senaste fel för transkriptionen")
    created_at = models.DateTimeField(default=timezone.now, verbose_name="skapad")

    class Meta:
        # The table kept its name when the model moved here from the news app.
        db_table = "news_podcastepisode"
        ordering = ["-published_on", "-id"]
        verbose_name = "poddavsnitt"
        verbose_name_plural = "poddavsnitt"

    def __str__(self) -> str:
        return self.title


class EpisodeTranscript(models.Model):
    """An episode's transcript text, fetched once from its `transcript_url` by the
    `fetch_transcripts` step, so a request never waits on the network."""

    episode = models.OneToOneField(
        PodcastEpisode,
        on_delete=models.CASCADE,
        primary_key=True,
        related_name="transcript",
        verbose_name="avsnitt",
    )
    text = models.TextField(verbose_name="text")
    content_type = models.CharField(max_length=100, blank=True, verbose_name="innehållstyp")
    fetched_at = models.DateTimeField(default=timezone.now, verbose_name="hämtad")

    class Meta:
        verbose_name = "transkription"
        verbose_name_plural = "transkriptioner"
        # The table kept its name when the model moved here from the api app.
        db_table = "api_episodetranscript"

    def __str__(self) -> str:
        return f"transcript of {self.episode_id}"
