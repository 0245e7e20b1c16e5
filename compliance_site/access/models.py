"""API keys. Only a SHA-256 digest of a key is stored; the raw key is shown once at creation."""

from django.conf import settings
from django.db import models


def _default_rate() -> int:
    return settings.COMPLIANCE_DEFAULT_KEY_RATE_PER_MINUTE


class ApiKey(models.Model):
    name = models.CharField(max_length=200)
    # The public part of the key, used to find the row without comparing secrets in SQL.
    prefix = models.CharField(max_length=16, unique=True, editable=False)
    key_hash = models.CharField(max_length=64, editable=False)
    rate_limit_per_minute = models.PositiveIntegerField(default=_default_rate)
    is_active = models.BooleanField(default=True)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "API key"

    def __str__(self) -> str:
        return f"{self.name} ({self.prefix})"
