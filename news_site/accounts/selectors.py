"""Reads of the accounts app: plain queries (news_site.accounts.tokens keeps per-process copies
of what every request reads)."""

from django.utils import timezone

from news_site.accounts.models import ApiToken, Follow


def token_live(*, digest: str) -> ApiToken | None:
    """The unexpired token with this hash, with its account."""
    return (
        ApiToken.objects.select_related("account")
        .filter(token_hash=digest, expires_at__gt=timezone.now())
        .first()
    )


def follow_feed_ids(*, account_id: int) -> set[int]:
    """The ids of the sources the account follows."""
    return set(Follow.objects.filter(account_id=account_id).values_list("feed_id", flat=True))
