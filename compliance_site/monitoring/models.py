"""Monitoring snapshots of the states' government pages, and review flags."""

from django.db import models


class SourceSnapshot(models.Model):
    """One fetch of one monitored URL. A failed fetch is kept too (`successful=False`)."""

    state_abbreviation = models.CharField(max_length=2)
    url = models.URLField(max_length=2000)
    fetched_at = models.DateTimeField()
    content_hash = models.CharField(max_length=80, blank=True)
    successful = models.BooleanField()
    status_code = models.PositiveSmallIntegerField(null=True, blank=True)
    error = models.CharField(max_length=500, blank=True)
    # Which normaliser made content_hash (normalize.NORMALIZER_VERSION). Hashes are compared
    # only between snapshots of one version, so a new normaliser re-baselines every page
    # instead of flagging every state whose text it reads differently.
    normalizer_version = models.PositiveSmallIntegerField(default=1)
    # What a reviewer reads: the normalised text, one paragraph a line (bounded, see
    # services.SNAPSHOT_TEXT_MAX_CHARS), kept on the latest successful snapshot of each URL
    # only; and, on a snapshot that changed, the unified diff against the one before it.
    text = models.TextField(blank=True)
    diff = models.TextField(blank=True)

    class Meta:
        indexes = [
            models.Index(fields=["state_abbreviation", "-fetched_at"]),
            models.Index(fields=["url", "-fetched_at"]),
        ]
        get_latest_by = "fetched_at"

    def __str__(self) -> str:
        return f"{self.url} at {self.fetched_at:%Y-%m-%d %H:%M}"


class FlagOrigin(models.TextChoices):
    MONITOR = "monitor"
    EDITOR = "editor"


class ReviewFlag(models.Model):
    """A request to re-verify a state. Open until `cleared_at` is set.

    A flag clears when reindex publishes a state version whose `last_verified_at` is on or after
    the day the flag was raised (someone re-verified the record after the flag), or when an
    editor clears it in admin.
    """

    state_abbreviation = models.CharField(max_length=2)
    reason = models.TextField()
    origin = models.CharField(max_length=16, choices=FlagOrigin.choices, default=FlagOrigin.EDITOR)
    snapshot = models.ForeignKey(
        SourceSnapshot, null=True, blank=True, on_delete=models.SET_NULL, related_name="+"
    )
    created_at = models.DateTimeField()
    created_by = models.CharField(max_length=150, blank=True)
    cleared_at = models.DateTimeField(null=True, blank=True)
    cleared_reason = models.CharField(max_length=500, blank=True)

    class Meta:
        indexes = [models.Index(fields=["state_abbreviation", "cleared_at"])]

    def __str__(self) -> str:
        status = "cleared" if self.cleared_at else "open"
        return f"{self.state_abbreviation}: {self.reason[:60]} ({status})"


class MonitoredSource(models.Model):
    """How the monitor is doing with one source URL of one state: the readable reason of its
    last failure, and when it is tried again. A source that keeps failing is backed off."""

    state_abbreviation = models.CharField(max_length=2)
    # Any length: the URL comes from a data file, and a URL too long to fetch is recorded here.
    url = models.TextField()
    url_hash = models.CharField(max_length=64, help_text="SHA-256 of the URL, for lookups.")
    name = models.CharField(max_length=255, blank=True)
    consecutive_failures = models.PositiveIntegerField(default=0)
    last_error = models.TextField(blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    last_success_at = models.DateTimeField(null=True, blank=True)
    # Backed off until then; None means "at the next run".
    next_attempt_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(
                fields=["state_abbreviation", "url_hash"], name="unique_monitored_source"
            )
        ]

    def __str__(self) -> str:
        return f"{self.state_abbreviation} {self.url[:80]}"
