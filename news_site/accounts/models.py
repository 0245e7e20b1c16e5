"""Accounts of the mobile apps' users: how they log in, their Bearer tokens and their follows.

These are not Django staff users: app users never reach the admin, and keeping them apart
means a leaked app token can never carry staff rights.
"""

from django.db import models
from django.utils import timezone
from django.utils.translation import gettext_lazy as _

from news_site.news.models import Feed


class Provider(models.TextChoices):
    EMAIL = "email", _("Email (one-time code)")
    APPLE = "apple", "Sign in with Apple"
    GOOGLE = "google", "Google"


class Account(models.Model):
    email = models.EmailField(blank=True, verbose_name=_("email address"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))
    # Raised with every logout, follow and unfollow (news_site.accounts.generation): the
    # processes' copies of the account's tokens and follows are made under it.
    generation = models.BigIntegerField(default=0, editable=False, verbose_name=_("generation"))

    # DRF's request.user protocol: an Account is only ever the authenticated caller.
    is_authenticated = True
    is_anonymous = False

    class Meta:
        verbose_name = _("account")
        verbose_name_plural = _("accounts")

    def __str__(self) -> str:
        return self.email or f"account {self.pk}"


class Identity(models.Model):
    """One way into an account: an email address, or a provider's stable subject (`sub`)."""

    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="identities", verbose_name=_("account")
    )
    provider = models.CharField(max_length=10, choices=Provider, verbose_name=_("sign-in provider"))
    subject = models.CharField(max_length=255, verbose_name=_("user id at the provider"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))

    class Meta:
        verbose_name = _("sign-in identity")
        verbose_name_plural = _("sign-in identities")
        constraints = [
            models.UniqueConstraint(fields=["provider", "subject"], name="identity_unique"),
        ]

    def __str__(self) -> str:
        return f"{self.provider}:{self.subject}"


class ApiToken(models.Model):
    """A Bearer token. Only the SHA-256 of the token is stored: 256 random bits need no slow
    hash, and a database leak gives nobody a usable token."""

    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="tokens", verbose_name=_("account")
    )
    token_hash = models.CharField(max_length=64, unique=True, verbose_name=_("token hash"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))
    expires_at = models.DateTimeField(verbose_name=_("valid until"))

    class Meta:
        verbose_name = _("API token")
        verbose_name_plural = _("API tokens")

    def __str__(self) -> str:
        return f"token {self.pk} of account {self.account_id}"


class LoginCode(models.Model):
    """A pending email one-time code. The code itself is stored as a keyed hash."""

    email = models.EmailField(unique=True, verbose_name=_("email address"))
    code_hash = models.CharField(max_length=64, verbose_name=_("code hash"))
    expires_at = models.DateTimeField(verbose_name=_("valid until"))
    attempts = models.PositiveSmallIntegerField(default=0, verbose_name=_("attempts"))
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))

    class Meta:
        verbose_name = _("sign-in code")
        verbose_name_plural = _("sign-in codes")

    def __str__(self) -> str:
        return f"code for {self.email}"


class Follow(models.Model):
    account = models.ForeignKey(
        Account, on_delete=models.CASCADE, related_name="follows", verbose_name=_("account")
    )
    feed = models.ForeignKey(
        Feed, on_delete=models.CASCADE, related_name="followers", verbose_name=_("feed")
    )
    created_at = models.DateTimeField(default=timezone.now, verbose_name=_("created"))

    class Meta:
        verbose_name = _("followed source")
        constraints = [
            models.UniqueConstraint(fields=["account", "feed"], name="follow_unique"),
        ]
        verbose_name_plural = _("followed sources")

    def __str__(self) -> str:
        return f"{self.account_id} follows {self.feed_id}"
