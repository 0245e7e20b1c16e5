"""Accounts of the mobile apps' users: how they log in, their Bearer tokens and their follows.

These are not Django staff users: app users never reach the admin, and keeping them apart
means a leaked app token can never carry staff rights.
"""

from django.db import models
from django.utils import timezone

from news_site.news.models import Feed


class Provider(models.TextChoices):
    EMAIL = "email", "E-post (engångskod)"
    APPLE = "apple", "Sign in with Apple"
    GOOGLE = "google", "Google"


class Account(models.Model):
    email = models.EmailField(blank=True)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return self.email or f"account {self.pk}"

    # DRF's request.user protocol: an Account is only ever the authenticated caller.
    is_authenticated = True
    is_anonymous = False


class Identity(models.Model):
    """One way into an account: an email address, or a provider's stable subject (`sub`)."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="identities")
    provider = models.CharField(max_length=10, choices=Provider)
    subject = models.CharField(max_length=255)
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        verbose_name_plural = "identities"
        constraints = [
            models.UniqueConstraint(fields=["provider", "subject"], name="identity_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.subject}"


class ApiToken(models.Model):
    """A Bearer token. Only the SHA-256 of the token is stored: 256 random bits need no slow
    hash, and a database leak gives nobody a usable token."""

    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="tokens")
    token_hash = models.CharField(max_length=64, unique=True)
    created_at = models.DateTimeField(default=timezone.now)
    expires_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"token {self.pk} of account {self.account_id}"


class LoginCode(models.Model):
    """A pending email one-time code. The code itself is stored as a keyed hash."""

    email = models.EmailField(unique=True)
    code_hash = models.CharField(max_length=64)
    expires_at = models.DateTimeField()
    attempts = models.PositiveSmallIntegerField(default=0)
    created_at = models.DateTimeField(default=timezone.now)

    def __str__(self) -> str:
        return f"code for {self.email}"


class Follow(models.Model):
    account = models.ForeignKey(Account, on_delete=models.CASCADE, related_name="follows")
    feed = models.ForeignKey(Feed, on_delete=models.CASCADE, related_name="followers")
    created_at = models.DateTimeField(default=timezone.now)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["account", "feed"], name="follow_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.account_id} follows {self.feed_id}"
