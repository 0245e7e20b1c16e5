"""The news service's data: sources, their entries, and what editors publish around them.

An entry keeps the original article's metadata and our summaries only. The article's full text
is read while summarising and then dropped: no field holds it, so no surface can leak it.
"""

from django.db import models
from django.db.models import Q
from django.utils import timezone


class FeedKind(models.TextChoices):
    ARTICLES = "articles", "Nyhetskälla"
    PODCAST = "podcast", "Podd (tjänstens egen)"


class FetchOutcome(models.TextChoices):
    NEVER = "never", "Aldrig hämtad"
    OK = "ok", "OK"
    NOT_MODIFIED = "not_modified", "Oförändrad (304)"
    UNCHANGED = "unchanged", "Oförändrad (samma innehåll)"
    FAILED = "failed", "Fel"


class Feed(models.Model):
    """A source: a news site's RSS/Atom feed, or the service's own podcast feed."""

    title = models.CharField(max_length=200, verbose_name="titel")
    url = models.URLField(max_length=2000, unique=True, verbose_name="adress")
    site_url = models.URLField(max_length=2000, blank=True, verbose_name="webbplats")
    language = models.CharField(
        max_length=12, default="en", help_text="ISO 639-1, t.ex. sv, en.", verbose_name="språk"
    )
    kind = models.CharField(
        max_length=16, choices=FeedKind, default=FeedKind.ARTICLES, verbose_name="typ"
    )
    is_active = models.BooleanField(
        default=True, help_text="Listas och hämtas.", verbose_name="aktiv"
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name="skapad")

    # Conditional GET state; the body hash catches servers that ignore conditional headers.
    etag = models.CharField(max_length=500, blank=True, verbose_name="ETag")
    last_modified = models.CharField(max_length=100, blank=True, verbose_name="Last-Modified")
    body_hash = models.CharField(max_length=64, blank=True, verbose_name="innehållets hash")

    # Health, shown to editors in the admin.
    last_fetched_at = models.DateTimeField(null=True, blank=True, verbose_name="senast hämtad")
    last_outcome = models.CharField(
        max_length=16,
        choices=FetchOutcome,
        default=FetchOutcome.NEVER,
        verbose_name="senaste utfall",
    )
    last_http_status = models.PositiveSmallIntegerField(
        null=True, blank=True, verbose_name="senaste HTTP-status"
    )
    error_count = models.PositiveIntegerField(default=0, verbose_name="antal fel i rad")
    last_error = models.TextField(blank=True, verbose_name="senaste fel")
    failing_since = models.DateTimeField(null=True, blank=True, verbose_name="fel sedan")
    paused_at = models.DateTimeField(
        null=True,
        blank=True,
        help_text="Set after days of failure; clear it to resume fetching.",
        verbose_name="pausad",
    )
    # When the editors were last told this source paused (news.health): once per pause.
    pause_notified_at = models.DateTimeField(
        null=True, blank=True, editable=False, verbose_name="paus meddelad"
    )
    next_check_at = models.DateTimeField(default=timezone.now, verbose_name="nästa hämtning")
    check_interval_seconds = models.PositiveIntegerField(
        default=3600, verbose_name="hämtintervall (sekunder)"
    )

    class Meta:
        verbose_name = "flöde"
        ordering = ["title"]
        indexes = [models.Index(fields=["next_check_at"], name="feed_due")]
        verbose_name_plural = "flöden"

    def __str__(self) -> str:
        return self.title


class Tag(models.Model):
    name = models.CharField(max_length=60, unique=True, verbose_name="namn")
    slug = models.SlugField(max_length=60, unique=True, verbose_name="slug")

    class Meta:
        verbose_name = "tagg"
        ordering = ["name"]
        verbose_name_plural = "taggar"

    def __str__(self) -> str:
        return self.name


class StoryStatus(models.TextChoices):
    ACTIVE = "active", "Aktiv"
    DORMANT = "dormant", "Vilande"


class Story(models.Model):
    """A running story: entries from several sources about the same event (clustered later)."""

    title = models.CharField(max_length=300, verbose_name="titel")
    slug = models.SlugField(max_length=300, blank=True, verbose_name="slug")
    lead = models.TextField(blank=True, verbose_name="ingress")
    body = models.TextField(blank=True, verbose_name="brödtext")
    status = models.CharField(
        max_length=10, choices=StoryStatus, default=StoryStatus.ACTIVE, verbose_name="status"
    )
    predecessor = models.ForeignKey(
        "self",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="successors",
        verbose_name="föregångare",
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name="skapad")
    updated_at = models.DateTimeField(default=timezone.now, verbose_name="uppdaterad")
    # Kept by news_site.stories (clustering); denormalised so lists need no aggregation.
    image_url = models.URLField(max_length=2000, blank=True, verbose_name="bildadress")
    entries_count = models.PositiveIntegerField(default=0, verbose_name="antal artiklar")
    source_count = models.PositiveIntegerField(default=0, verbose_name="antal källor")
    first_entry_published_at = models.DateTimeField(
        null=True, blank=True, verbose_name="första artikeln publicerad"
    )
    last_entry_published_at = models.DateTimeField(
        null=True, blank=True, verbose_name="senaste artikeln publicerad"
    )
    # Sum of the members' term vectors ({term: weight}) and the members' entities.
    centroid = models.JSONField(default=dict, blank=True, verbose_name="tyngdpunkt (vektor)")
    entities = models.JSONField(default=list, blank=True, verbose_name="namn och produkter")
    # Which members the title, lead and body were written from, and whether a model wrote them
    # (False: the offline text built from member summaries).
    text_fingerprint = models.CharField(
        max_length=64, blank=True, verbose_name="textens fingeravtryck"
    )
    written_by_model = models.BooleanField(default=False, verbose_name="skriven av modellen")

    class Meta:
        # Not "händelse": Django's Swedish admin calls its recent-actions box "Senaste händelser".
        verbose_name = "nyhetstråd"
        ordering = ["-updated_at"]
        verbose_name_plural = "nyhetstrådar"
        indexes = [
            models.Index(fields=["-updated_at", "-id"], name="story_latest"),
            models.Index(fields=["last_entry_published_at"], name="story_last_entry"),
        ]

    def __str__(self) -> str:
        return self.title


class SummaryState(models.TextChoices):
    EXTRACTED = "extracted", "Utdrag (ej översatt ännu)"
    TRANSLATED = "translated", "AI-sammanfattad"
    EDITED = "edited", "Redigerad av redaktör"


class Entry(models.Model):
    feed = models.ForeignKey(
        Feed, on_delete=models.CASCADE, related_name="entries", verbose_name="flöde"
    )
    # The feed's GUID (or our fallback when the feed's GUIDs are unusable), hashed with the
    # feed id: GUIDs are only unique within one feed.
    guid = models.TextField(verbose_name="GUID")
    guid_hash = models.CharField(max_length=64, unique=True, verbose_name="GUID-hash")
    url = models.URLField(max_length=2000, verbose_name="adress")
    # Tracking parameters stripped; the same article from two feeds is stored once.
    canonical_url = models.URLField(max_length=2000, verbose_name="kanonisk adress")
    canonical_url_hash = models.CharField(
        max_length=64, unique=True, verbose_name="hash av kanonisk adress"
    )
    title = models.CharField(max_length=500, verbose_name="titel")
    author = models.CharField(max_length=200, blank=True, verbose_name="författare")
    image_url = models.URLField(max_length=2000, blank=True, verbose_name="bildadress")
    language = models.CharField(max_length=12, default="en", verbose_name="språk")
    published_at = models.DateTimeField(null=True, blank=True, verbose_name="publicerad")
    created_at = models.DateTimeField(default=timezone.now, verbose_name="skapad")
    # What lists sort by: the publication time, never later than when we first saw the entry
    # (feeds post-date and future-date items), or that first sighting when there is none.
    listed_at = models.DateTimeField(default=timezone.now, verbose_name="listad")

    # Hash of the title and text the feed gave; a new value means the article really changed.
    content_fingerprint = models.CharField(max_length=64, verbose_name="innehållets fingeravtryck")
    summary_original = models.TextField(
        blank=True, help_text="På källans språk.", verbose_name="sammanfattning (källans språk)"
    )
    summary_translated = models.TextField(
        blank=True, help_text="På svenska.", verbose_name="sammanfattning (svenska)"
    )
    summary_state = models.CharField(
        max_length=12,
        choices=SummaryState,
        default=SummaryState.EXTRACTED,
        verbose_name="sammanfattningens läge",
    )
    # The content fingerprint the current model summary was written from.
    summary_fingerprint = models.CharField(
        max_length=64, blank=True, verbose_name="sammanfattningens fingeravtryck"
    )
    resummarise_requested = models.BooleanField(
        default=False,
        help_text="Ask the model for a new summary on the next run.",
        verbose_name="sammanfatta igen",
    )
    summary_attempts = models.PositiveSmallIntegerField(
        default=0, verbose_name="försök att sammanfatta"
    )
    summary_error = models.TextField(blank=True, verbose_name="fel vid sammanfattning")
    summarised_at = models.DateTimeField(null=True, blank=True, verbose_name="sammanfattad")
    # An editor approved the model's summary as of this time; a newer summary needs review again.
    summary_reviewed_at = models.DateTimeField(null=True, blank=True, verbose_name="granskad")
    # Held by the run that is summarising this entry, so overlapping runs do not both pay.
    summary_lease_until = models.DateTimeField(
        null=True, blank=True, verbose_name="sammanfattas av en process till"
    )

    platform_relevant = models.BooleanField(default=False, verbose_name="relevant för plattformen")
    tags = models.ManyToManyField(Tag, blank=True, related_name="entries", verbose_name="taggar")
    story = models.ForeignKey(
        Story,
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="entries",
        verbose_name="nyhetstråd",
    )
    # Why clustering could not assign this entry; while set, clustering skips it (an editor
    # clears it to try again).
    story_error = models.TextField(blank=True, verbose_name="fel vid indelning i nyhetstråd")
    # An editor placed this entry (in a story, or in none): clustering never moves it again
    # (news_site.stories.curation).
    story_pinned = models.BooleanField(default=False, verbose_name="placerad av redaktör")
    # Distinct sources covering this entry's story (1 when no other source has it).
    source_count = models.PositiveIntegerField(default=1, verbose_name="antal källor")
    # Sum of EntryView counts, kept alongside so popularity sorts on an index.
    view_count = models.PositiveIntegerField(default=0, verbose_name="visningar")

    class Meta:
        verbose_name = "artikel"
        verbose_name_plural = "artiklar"
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
        verbose_name = "AI-sammanfattning att granska"
        verbose_name_plural = "granska AI-sammanfattningar"


class EntryView(models.Model):
    """Article views per entry and day: the data behind popularity and `click_count`."""

    entry = models.ForeignKey(
        Entry, on_delete=models.CASCADE, related_name="views", verbose_name="artikel"
    )
    day = models.DateField(verbose_name="dag")
    count = models.PositiveIntegerField(default=0, verbose_name="antal")

    class Meta:
        verbose_name = "artikelvisning"
        constraints = [
            models.UniqueConstraint(fields=["entry", "day"], name="entry_view_per_day"),
        ]
        verbose_name_plural = "artikelvisningar"

    def __str__(self) -> str:
        return f"{self.entry_id} on {self.day}: {self.count}"


class GuidePageType(models.TextChoices):
    PRODUCT_HUB = "product_hub", "Produktguide"
    FAMILY_HUB = "family_hub", "Familjesida"
    GENERATION_HUB = "generation_hub", "Generationssida"
    RUMOR = "rumor", "Rykten"


class ProductGuide(models.Model):
    slug = models.SlugField(max_length=100, unique=True, verbose_name="slug")
    title = models.CharField(max_length=200, verbose_name="titel")
    page_type = models.CharField(max_length=20, choices=GuidePageType, verbose_name="sidtyp")
    description = models.CharField(
        max_length=300,
        blank=True,
        help_text="One line, shown in /llms.txt.",
        verbose_name="beskrivning",
    )
    body = models.TextField(help_text="Markdown.", verbose_name="brödtext")
    is_published = models.BooleanField(default=True, verbose_name="publicerad")
    updated_at = models.DateTimeField(default=timezone.now, verbose_name="uppdaterad")

    class Meta:
        verbose_name = "produktguide"
        ordering = ["page_type", "title"]
        constraints = [
            # /index.md is the entry list, so no guide may take that slug.
            models.CheckConstraint(condition=~Q(slug="index"), name="guide_slug_not_index"),
        ]
        verbose_name_plural = "produktguider"

    def __str__(self) -> str:
        return self.title
