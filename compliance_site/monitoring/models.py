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
