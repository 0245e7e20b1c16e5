"""Reads of the accounts app.

The caller behind a Bearer token and the sources it follows are read on every request, so each
process keeps its own copy of them (the `process` cache) for COPY_SECONDS at most. A copy is
used only while the account's generation in the shared cache is still the one it was made
under; a logout, a deleted account, a follow and an unfollow change it (services.
account_changed), so every process sees them on its next request. That costs one read of the
shared cache per request instead of database queries. While the shared cache cannot be
reached no copy is used, and every request reads the database as before.
"""

from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from news_site.accounts.models import Account, ApiToken, Follow
from news_site.accounts.services import account_generation_key, token_hash
from shared import cache as shared_cache

# The bound on a copy when a change could not reach the shared cache (a write during an
# outage of it).
COPY_SECONDS = 60


def account_generation(*, account_id: int) -> int | None:
    """The account's generation, or None when the shared cache cannot be reached."""
    return shared_cache.generation(account_generation_key(account_id))


def _token_read(digest: str) -> ApiToken | None:
    return (
        ApiToken.objects.select_related("account")
        .filter(token_hash=digest, expires_at__gt=timezone.now())
        .first()
    )


# A copy holds the rows' values: unpickling model instances cost more than the rest of the
# check. Every concrete field, so that a field added later is in the copy too.
_TOKEN_FIELDS = [field.attname for field in ApiToken._meta.concrete_fields]
_ACCOUNT_FIELDS = [field.attname for field in Account._meta.concrete_fields]


def _copy(token: ApiToken, generation: int) -> tuple:
    return (
        tuple(getattr(token, name) for name in _TOKEN_FIELDS),
        tuple(getattr(token.account, name) for name in _ACCOUNT_FIELDS),
        generation,
    )


def _from_copy(copy: tuple) -> tuple[ApiToken, int]:
    token_values, account_values, generation = copy
    token = ApiToken.from_db(DEFAULT_DB_ALIAS, _TOKEN_FIELDS, token_values)
    token.account = Account.from_db(DEFAULT_DB_ALIAS, _ACCOUNT_FIELDS, account_values)
    return token, generation


def token_authenticate(*, raw: str) -> ApiToken | None:
    """The live token whose hash matches, with its account. Its `generation` is the account's
    generation this call read (None: unknown), for the caller's other reads of the account.

    From this process's copy when the account's generation has not changed; else from the
    database (one query, two when a copy is made)."""
    digest = token_hash(raw)
    key = f"token:{digest}"
    copy = caches["process"].get(key)
    token: ApiToken | None
    if copy is not None:
        token, made_under = _from_copy(copy)
        generation = account_generation(account_id=token.account_id)
        if generation == made_under and token.expires_at > timezone.now():
            # Not a field: read by the caller's other reads of the account (issue 22 makes it a
            # declared value).
            token.generation = generation  # type: ignore[attr-defined]
            return token
    token = _token_read(digest)
    if token is None:
        return None
    # The account is known only now. Its generation is read before the token is read again,
    # so a logout committed in between is either in that read or changes the generation.
    generation = account_generation(account_id=token.account_id)
    if generation is not None:
        token = _token_read(digest)
        if token is None:
            return None
        caches["process"].set(key, _copy(token, generation), COPY_SECONDS)
    token.generation = generation  # type: ignore[attr-defined]
    return token


def followed_feed_ids(*, account_id: int, generation: int | None = None) -> set[int]:
    """The ids of the sources the account follows. `generation`: the account's generation
    read earlier in this request (token_authenticate), which spares reading it again."""
    if generation is None:
        generation = account_generation(account_id=account_id)
    key = f"follows:{account_id}"
    copy = caches["process"].get(key) if generation is not None else None
    if copy is not None and copy[1] == generation:
        return copy[0]
    ids = set(Follow.objects.filter(account_id=account_id).values_list("feed_id", flat=True))
    if generation is not None:
        caches["process"].set(key, (ids, generation), COPY_SECONDS)
    return ids
