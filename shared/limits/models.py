"""The database copy of the rate-limit counters that guard authentication (shared/ratelimit.py).

Counters normally live in Redis. When Redis cannot be reached, the limits on login codes, code
guesses and admin passwords are counted here instead of being waived: an outage of the cache
must not open the door to guessing. Each service has this table in its own database.
"""

from django.db import models


class Counter(models.Model):
    # SHA-256 of the limit's group, its (normalised) bucket and the window's start: neither an
    # email address nor a username is stored in clear.
    key = models.CharField(max_length=64, primary_key=True)
    hits = models.PositiveIntegerField(default=0)
    expires_at = models.DateTimeField(db_index=True)

    class Meta:
        verbose_name = "räknare"
        verbose_name_plural = "räknare"

    def __str__(self) -> str:
        return f"{self.key[:12]}… {self.hits}"
