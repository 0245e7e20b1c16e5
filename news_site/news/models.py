"""The news service's data: sources, their entries, and what editors publish around them.

An entry keeps the original article's metadata and our summaries only. The article's full text
is read while summarising and then dropped: no field holds it, so no surface can leak it.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone
from django.utils.translation import gettext_lazy as _


class FeedKind(models.TextChoices):
    ARTICLES = "articles", _("News source")
    PODCAST = "podcast", _("Podcast (the service's own)")


class FetchOutcome(models.TextChoices):
    NEVER = "never", _("Never fetched")
    OK = "ok", _("OK")
    NOT_MODIFIED = "not_modified", _("Unchanged (304)")
    UNCHANGED = "unchanged", _("Unchanged (same content)")
    FAILED = "failed", _("Failed")


class Feed(models.Model):
    """A source: a news site's RSS/Atom feed, or the service's own podcast feed."""

    title = models.CharField(max_length=200, verbose_name=_("title"))
    url = models.URLField(max_length=2000, unique=True, verbose_name=_("address"))
    site_url = models.URLField(max_length=2000, blank=True, verbose_name=_("website"))
    language = models.CharField(
        max_length=12,
        default="en",
        help_text=_("ISO 639-1, e.g. sv, en."),
        verbose_name=_("language"),
    )
    kind = models.CharField(
        max_length=16, choices=FeedKind, default=FeedKind.ARTICLES, verbose_name=_("kind")
    )
    is_active = models.BooleanField(
        default=True, help_text=_("Listed and fetched."), verbose_name=_("active")
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))

    # Conditional GET state; the body hash catches servers that ignore conditional headers.
    etag = models.CharField(max_length=500, blank=True, verbose_name=_("ETag"))
    last_modified = models.CharField(max_length=100, blank=True, verbose_name=_("Last-Modified"))
    body_hash = models.CharField(max_length=64, blank=True, verbose_name=_("content hash"))

    # Health, shown to editors in the admin.
    last_fetched_at = models.DateTimeField(null=True, blank=True, verbose_name=_("last fetched"))
    last_outcome = models.CharField(
        max_length=16,
        choices=FetchOutcome,
        default=FetchOutcome.NEVER,
        verbose_name=_("last outcome"),
    )
    last_http_status = models.PositiveSmallIntegerField(
        null=True, blank=True, verbose_name=_("last HTTP status")
    )
    error_count = models.PositiveIntegerField(default=0, verbose_name=_("errors in a row"))
    last_error = models.TextField(blank=True, verbose_name=_("last error"))
    failing_since = models.DateTimeField(null=True, blank=True, verbose_name=_("failing since"))
    paused_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text=_("Set after days of failure; clear it to resume fetching."),
        verbose_name=_("paused"),
    )
    # When the editors were last told this source paused (news.health): once per pause.
    pause_notified_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name=_("pause notified")
    )
    next_check_at = models.DateTimeField(default=timezone.now, verbose_name=_("next fetch"))
    check_interval_seconds = models.PositiveIntegerField(
        default=3600, verbose_name=_("fetch interval (seconds)")
    )

    class Meta:
        verbose_name = _("feed")
        ordering = ["title"]
        indexes = [models.Index(fields=["next_check_at"], name="feed_due")]
        verbose_name_plural = _("feeds")

    def __str__(self) -> str:
        return self.title


class Tag(models.Model):
    name = models.CharField(max_length=60, unique=True, verbose_name=_("name"))
    slug = models.SlugField(max_length=60, unique=True, verbose_name=_("slug"))

    class Meta:
        verbose_name = _("tag")
        ordering = ["name"]
        verbose_name_plural = _("tags")

    def __str__(self) -> str:
        return self.name


class StoryStatus(models.TextChoices):
    ACTIVE = "active", _("Active")
    DORMANT = "dormant", _("Dormant")


class Story(models.Model):
    """A running story: entries from several sources about the same event (clustered later)."""

    title = models.CharField(max_length=300, verbose_name=_("title"))
    slug = models.SlugField(max_length=300, blank=True, verbose_name=_("slug"))
    lead = models.TextField(blank=True, verbose_name=_("lead"))
    body = models.TextField(blank=True, verbose_name=_("body"))
    status = models.CharField(
        max_length=10, choices=StoryStatus, default=StoryStatus.ACTIVE, verbose_name=_("status")
    )
    predecessor = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="successors",
        verbose_name=_("predecessor"),
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))
    updated_at = models.DateTimeField(default=timezone.now, verbose_name=_("updated"))
    # Kept by news_site.stories (clustering); denormalised so lists need no aggregation.
    image_url = models.URLField(max_length=2000, blank=True, verbose_name=_("image address"))
    entries_count = models.PositiveIntegerField(default=0, verbose_name=_("article count"))
    source_count = models.PositiveIntegerField(default=0, verbose_name=_("source count"))
    first_entry_published_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("first article published")
    )
    last_entry_published_at = models.DateTimeField(
        null=True, blank=True, verbose_name=_("last article published")
    )
    # Sum of the members' term vectors ({term: weight}) and the members' entities.
    centroid = models.JSONField(default=dict, blank=True, verbose_name=_("centroid (vector)"))
    entities = models.JSONField(default=list, blank=True, verbose_name=_("names and products"))
    # Which members the title, lead and body were written from, and whether a model wrote them
    # (False: the offline text built from member summaries).
    text_fingerprint = models.CharField(
        max_length=64, blank=True, verbose_name=_("text fingerprint")
    )
    written_by_model = models.BooleanField(default=False, verbose_name=_("written by the model"))

    class Meta:
        # Swedish "nyhetstråd", not "händelse": Django's Swedish admin calls its recent-actions
        # box "Senaste händelser" (news_site/locale).
        verbose_name = _("story")
        ordering = ["-updated_at"]
        verbose_name_plural = _("stories")
        indexes = [
            models.Index(fields=["-updated_at", "-id"], name="story_latest"),
            models.Index(fields=["last_entry_published_at"], name="story_last_entry"),
        ]

    def __str__(self) -> str:
        return self.title


class SummaryState(models.TextChoices):
    EXTRACTED = "extracted", _("Excerpt (not translated yet)")
    TRANSLATED = "translated", _("Summarised by AI")
    EDITED = "edited", _("Edited by an editor")


class Entry(models.Model):
    feed = models.ForeignKey(
        Feed, on_delete=models.CASCADE, related_name="entries", verbose_name=_("feed")
    )
    # The feed's GUID (or our fallback when the feed's GUIDs are unusable), hashed with the
    # feed id: GUIDs are only unique within one feed.
    guid = models.TextField(verbose_name=_("GUID"))
    guid_hash = models.CharField(max_length=64, unique=True, verbose_name=_("GUID hash"))
    url = models.URLField(max_length=2000, verbose_name=_("address"))
    # Tracking parameters stripped; the same article from two feeds is stored once.
    canonical_url = models.URLField(max_length=2000, verbose_name=_("canonical address"))
    canonical_url_hash = models.CharField(
        max_length=64, unique=True, verbose_name=_("canonical address hash")
    )
    title = models.CharField(max_length=500, verbose_name=_("title"))
    author = models.CharField(max_length=200, blank=True, verbose_name=_("author"))
    image_url = models.URLField(max_length=2000, blank=True, verbose_name=_("image address"))
    language = models.CharField(max_length=12, default="en", verbose_name=_("language"))
    published_at = models.DateTimeField(null=True, blank=True, verbose_name=_("published"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))
    # What lists sort by: the publication time, never later than when we first saw the entry
    # (feeds post-date and future-date items), or that first sighting when there is none.
    listed_at = models.DateTimeField(default=timezone.now, verbose_name=_("listed"))

    # Hash of the title and text the feed gave; a new value means the article really changed.
    content_fingerprint = models.CharField(max_length=64, verbose_name=_("content fingerprint"))
    summary_original = models.TextField(
        blank=True,
        help_text=_("In the source's language."),
        verbose_name=_("summary (source language)"),
    )
    summary_translated = models.TextField(
        blank=True, help_text=_("In Swedish."), verbose_name=_("summary (Swedish)")
    )
    summary_state = models.CharField(
        max_length=12,
        choices=SummaryState,
        default=SummaryState.EXTRACTED,
        verbose_name=_("summary state"),
    )
    # The content fingerprint the current model summary was written from.
    summary_fingerprint = models.CharField(
        max_length=64, blank=True, verbose_name=_("summary fingerprint")
    )
    resummarise_requested = models.BooleanField(
        default=False,
        help_text=_("Ask the model for a new summary on the next run."),
        verbose_name=_("summarise again"),
    )
    summary_attempts = models.PositiveSmallIntegerField(
        default=0, verbose_name=_("summary attempts")
    )
    summary_error = models.TextField(blank=True, verbose_name=_("summary error"))
    summarised_at = models.DateTimeField(null=True, blank=True, verbose_name=_("summarised"))
    # An editor approved the model's summary as of this time; a newer summary needs review again.
    summary_reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name=_("reviewed"))
    # Held by the run that is summarising this entry, so overlapping runs do not both pay.
    summary_lease_until = models.DateTimeField(
        null=True, blank=True, verbose_name=_("leased for summarising until")
    )

    platform_relevant = models.BooleanField(
        default=False, verbose_name=_("relevant to the platform")
    )
    tags = models.ManyToManyField(Tag, blank=True, related_name="entries", verbose_name=_("tags"))
    story = models.ForeignKey(
        Story,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="entries",
        verbose_name=_("story"),
    )
    # Why clustering could not assign this entry; while set, clustering skips it (an editor
    # clears it to try again).
    story_error = models.TextField(blank=True, verbose_name=_("story assignment error"))
    # An editor placed this entry (in a story, or in none): clustering never moves it again
    # (news_site.stories.curation).
    story_pinned = models.BooleanField(default=False, verbose_name=_("placed by an editor"))
    # Distinct sources covering this entry's story (1 when no other source has it).
    source_count = models.PositiveIntegerField(default=1, verbose_name=_("source count"))
    # Sum of EntryView counts, kept alongside so popularity sorts on an index.
    view_count = models.PositiveIntegerField(default=0, verbose_name=_("views"))

    class Meta:
        verbose_name = _("article")
        verbose_name_plural = _("articles")
        indexes = [
            models.Index(
                fields=["-listed_at", "-id"],
                condition=Q(platform_relevant=True),
                name="entry_relevant_latest",
            ),
            models.Index(
                fields=["-view_count", "-listed_at"],
                condition=Q(platform_relevant=True),
                name="entry_relevant_popular",
            ),
            # Counting a source's relevant entries reads this index alone (no table rows).
            models.Index(
                fields=["feed"], condition=Q(platform_relevant=True), name="entry_relevant_feed"
            ),
            models.Index(fields=["feed", "-listed_at"], name="entry_feed_latest"),
            models.Index(fields=["-listed_at", "-id"], name="entry_latest"),
        ]

    def __str__(self) -> str:
        return self.title

    @property
    def is_translated(self) -> bool:
        return bool(self.summary_translated)

    @property
    def swedish_summary(self) -> str:
        """The Swedish summary, or the source-language excerpt until a translation exists."""
        return self.summary_translated or self.summary_original


class SummaryReview(Entry):
    """The editors' review queue of the model's summaries (its own admin page)."""

    class Meta:
        proxy = True
        verbose_name = _("AI summary to review")
        verbose_name_plural = _("review AI summaries")


class EntryView(models.Model):
    """Article views per entry and day: the data behind popularity and `click_count`."""

    entry = models.ForeignKey(
        Entry, on_delete=models.CASCADE, related_name="views", verbose_name=_("article")
    )
    day = models.DateField(verbose_name=_("day"))
    count = models.PositiveIntegerField(default=0, verbose_name=_("count"))

    class Meta:
        verbose_name = _("article view")
        constraints = [
            models.UniqueConstraint(fields=["entry", "day"], name="entry_view_per_day"),
        ]
        verbose_name_plural = _("article views")

    def __str__(self) -> str:
        return f"{self.entry_id} on {self.day}: {self.count}"


class GuidePageType(models.TextChoices):
    PRODUCT_HUB = "product_hub", _("Product guide")
    FAMILY_HUB = "family_hub", _("Family page")
    GENERATION_HUB = "generation_hub", _("Generation page")
    RUMOR = "rumor", _("Rumours")


class ProductGuide(models.Model):
    slug = models.SlugField(max_length=100, unique=True, verbose_name=_("slug"))
    title = models.CharField(max_length=200, verbose_name=_("title"))
    page_type = models.CharField(max_length=20, choices=GuidePageType, verbose_name=_("page type"))
    description = models.CharField(
        max_length=300,
        blank=True,
        help_text=_("One line, shown in /llms.txt."),
        verbose_name=_("description"),
    )
    body = models.TextField(help_text=_("Markdown."), verbose_name=_("body"))
    is_published = models.BooleanField(default=True, verbose_name=_("published"))
    updated_at = models.DateTimeField(default=timezone.now, verbose_name=_("updated"))

    class Meta:
        verbose_name = _("product guide")
        ordering = ["page_type", "title"]
        constraints = [
            # /index.md is the entry list, so no guide may take that slug.
            models.CheckConstraint(condition=~Q(slug="index"), name="guide_slug_not_index"),
        ]
        verbose_name_plural = _("product guides")

    def __str__(self) -> str:
        return self.title
