"""Reads of the accounts app."""

from django.utils import timezone

from news_site.accounts.models import ApiToken, Follow
from news_site.accounts.services import token_hash


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token whose hash matches, with its account, in one query."""
    return (
        ApiToken.objects.select_related("account")
        .filter(token_hash=token_hash(raw), expires_at__gt=timezone.now())
        .first()
    )


def followed_feed_ids(*, account_id: int) -> set[int]:
    return set(Follow.objects.filter(account_id=account_id).values_list("feed_id", flat=True))
