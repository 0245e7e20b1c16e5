"""Writes of the accounts app: logins, tokens, account deletion and follows."""

import hashlib
import hmac
import logging
import secrets
from datetime import timedelta

from django.conf import settings
from django.core.mail import send_mail
from django.db import IntegrityError, transaction
from django.db.models import F
from django.utils import timezone

from news_site.accounts.models import (
    Account,
    ApiToken,
    Follow,
    Identity,
    LoginCode,
    Provider,
)
from news_site.news.models import Feed
from shared.ratelimit import identity_normalize

logger = logging.getLogger(__name__)

# The longest address RFC 5321 lets a mail relay accept (and the length of the email columns).
EMAIL_MAX_LENGTH = 254

# Tokens carry a recognisable prefix so that secret scanners can spot leaked ones.
TOKEN_PREFIX = "nws_"  # noqa: S105 - a public marker, not a secret


class LoginFailed(Exception):
    """A login that cannot succeed; `code` is the API's error type."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


class MailUnavailable(Exception):
    """The login code could not be handed to the mail relay; nothing was stored."""


def token_hash(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


def token_issue(*, account: Account) -> tuple[str, ApiToken]:
    """A new token for `account`; the raw value exists only in the return value."""
    raw = TOKEN_PREFIX + secrets.token_urlsafe(32)
    token = ApiToken.objects.create(
        account=account,
        token_hash=token_hash(raw),
        expires_at=timezone.now() + timedelta(days=settings.NEWS_TOKEN_LIFETIME_DAYS),
    )
    return raw, token


@transaction.atomic
def token_revoke(*, token: ApiToken) -> None:
    ApiToken.objects.filter(pk=token.pk).delete()


def _code_hash(email: str, code: str) -> str:
    # Keyed, so a leaked table of six-digit codes cannot be reversed by trying all million.
    message = f"{email}\n{code}".encode()
    return hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()


def email_normalize(email: str) -> str:
    """One spelling per address for codes, identities and limits (NFKC + casefold): a
    fullwidth or differently cased address is the same mailbox and the same account."""
    return identity_normalize(email)


def login_code_send(*, email: str) -> None:
    """Mail a fresh six-digit code; it replaces any earlier one for the address.

    The code is stored only once the mail relay has taken the message, so a mail failure
    (MailUnavailable) leaves the address's earlier code, and its guesses, as they were."""
    email = email_normalize(email)
    code = f"{secrets.randbelow(10**6):06d}"
    minutes = settings.NEWS_LOGIN_CODE_SECONDS // 60
    try:
        send_mail(
            subject=f"Din inloggningskod: {code}",
            message=(
                f"Din kod till {settings.NEWS_SITE_NAME} är {code}.\n"
                f"Den gäller i {minutes} minuter och kan användas en gång."
            ),
            from_email=settings.DEFAULT_FROM_EMAIL,
            recipient_list=[email],
        )
    except OSError as exc:  # smtplib's errors, refused connections and timeouts alike
        # One line with the kind of failure only: some smtplib errors carry the recipients.
        logger.warning("login code not sent, the mail relay failed: %s", type(exc).__name__)
        raise MailUnavailable(str(exc)) from exc
    LoginCode.objects.update_or_create(
        email=email,
        defaults={
            "code_hash": _code_hash(email, code),
            "expires_at": timezone.now() + timedelta(seconds=settings.NEWS_LOGIN_CODE_SECONDS),
            "attempts": 0,
            "created_at": timezone.now(),
        },
    )


def login_code_verify(*, email: str, code: str) -> Account:
    """The account of `email` when `code` is its current code. A code works once, expires, and
    dies after NEWS_LOGIN_CODE_MAX_ATTEMPTS wrong guesses (a million codes, five guesses)."""
    email = email_normalize(email)
    with transaction.atomic():
        pending = LoginCode.objects.select_for_update().filter(email=email).first()
        if pending is None or pending.expires_at <= timezone.now():
            failure = "no valid code for this address: request a new one"
        elif not hmac.compare_digest(pending.code_hash, _code_hash(email, code)):
            failure = "wrong code"
            if pending.attempts + 1 >= settings.NEWS_LOGIN_CODE_MAX_ATTEMPTS:
                pending.delete()
            else:
                LoginCode.objects.filter(pk=pending.pk).update(attempts=F("attempts") + 1)
        else:
            failure = ""
            pending.delete()
    # Raised after the commit, so that a wrong guess is counted.
    if failure:
        raise LoginFailed("invalid_code", failure)
    return account_for_identity(provider=Provider.EMAIL, subject=email, email=email)


def account_for_id_token_claims(*, provider: str, claims: dict) -> Account:
    """The account behind verified OpenID Connect claims. Their email is kept only when the
    provider says it verified it: Apple sends the string "true", and "false" (a non-empty
    string) is not verified."""
    verified = claims.get("email_verified") in (True, "true")
    email = str(claims.get("email", "")) if verified else ""
    return account_for_identity(provider=provider, subject=str(claims["sub"]), email=email)


def account_for_identity(*, provider: str, subject: str, email: str = "") -> Account:
    """The account behind (provider, subject), created on first login. Accounts are never
    merged by email: Apple hides addresses behind relays, and an unverified address must not
    open someone else's account. An address too long to be deliverable is not kept."""
    if len(email) > EMAIL_MAX_LENGTH:
        email = ""
    identity = Identity.objects.select_related("account").filter(provider=provider, subject=subject)
    found = identity.first()
    if found is not None:
        return found.account
    try:
        with transaction.atomic():
            account = Account.objects.create(email=email)
            Identity.objects.create(account=account, provider=provider, subject=subject)
            return account
    except IntegrityError:
        # A concurrent first login of the same identity won the race.
        return identity.get().account


@transaction.atomic
def account_delete(*, account: Account) -> None:
    """Delete the account with its identities, tokens and follows (cascades), and any pending
    email code, so nothing personal remains. The account's row, and with it its generation,
    is gone: every process's copies of its tokens and follows stop being used."""
    emails = list(
        Identity.objects.filter(account=account, provider=Provider.EMAIL).values_list(
            "subject", flat=True
        )
    )
    LoginCode.objects.filter(email__in=emails).delete()
    account.delete()


@transaction.atomic
def follow_create(*, account: Account, feed: Feed) -> None:
    Follow.objects.get_or_create(account=account, feed=feed)


@transaction.atomic
def follow_delete(*, account: Account, feed: Feed) -> None:
    Follow.objects.filter(account=account, feed=feed).delete()
