"""The service's own podcast: episodes (stored from its feed by the feeds step) and their
transcripts (fetched by the ingest's transcript step)."""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class PodcastEpisode(models.Model):
    feed = models.ForeignKey(
        "news.Feed",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="episodes",
        verbose_name=_("feed"),
    )
    # The id in paths and links (podcasts/identifiers.py), assigned when the episode is first
    # stored and never changed; the feed's GUID, which a path cannot hold, is `guid`.
    episode_id = models.CharField(max_length=200, unique=True, verbose_name=_("episode id"))
    guid = models.CharField(max_length=200, unique=True, verbose_name=_("GUID in the feed"))
    title = models.CharField(max_length=300, verbose_name=_("title"))
    description = models.TextField(blank=True, verbose_name=_("description"))
    published_on = models.DateField(null=True, blank=True, verbose_name=_("publication day"))
    duration_seconds = models.PositiveIntegerField(
        null=True, blank=True, verbose_name=_("length (seconds)")
    )
    page_url = models.URLField(max_length=2000, blank=True, verbose_name=_("episode page"))
    audio_url = models.URLField(max_length=2000, blank=True, verbose_name=_("audio file"))
    cover_url = models.URLField(max_length=2000, blank=True, verbose_name=_("cover image"))
    cover_thumb_url = models.URLField(
        max_length=2000, blank=True, verbose_name=_("cover image (small)")
    )
    chapters_url = models.URLField(max_length=2000, blank=True, verbose_name=_("chapters file"))
    chapters = models.JSONField(default=list, blank=True, verbose_name=_("chapters"))
    sources = models.JSONField(default=list, blank=True, verbose_name=_("sources"))
    transcript_url = models.URLField(
        max_length=2000, blank=True, verbose_name=_("transcript address")
    )
    # The transcript step's failures: after TRANSCRIPT_MAX_ATTEMPTS the episode is left alone
    # until an editor clears the count (the reason stays here, shown in the admin).
    transcript_attempts = models.PositiveSmallIntegerField(
        default=0, verbose_name=_("transcript attempts")
    )
    transcript_error = models.TextField(blank=True, verbose_name=_("last transcript error"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))

    class Meta:
        # The table kept its name when the model moved here from the news app.
        db_table = "news_podcastepisode"
        ordering = ["-published_on", "-id"]
        verbose_name = _("podcast episode")
        verbose_name_plural = _("podcast episodes")

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
        verbose_name=_("episode"),
    )
    text = models.TextField(verbose_name=_("text"))
    content_type = models.CharField(max_length=100, blank=True, verbose_name=_("content type"))
    fetched_at = models.DateTimeField(default=timezone.now, verbose_name=_("fetched"))

    class Meta:
        verbose_name = _("transcript")
        verbose_name_plural = _("transcripts")
        # The table kept its name when the model moved here from the api app.
        db_table = "api_episodetranscript"

    def __str__(self) -> str:
        return f"transcript of {self.episode_id}"
