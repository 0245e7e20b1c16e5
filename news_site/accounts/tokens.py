"""Who is calling: the caller behind a Bearer token and the sources it follows.

Both are read on every request, so each process keeps its own copy of them (the `process`
cache) for COPY_SECONDS at most. A copy is used only while the account's generation
(news_site.accounts.generation) is still the one it was made under; a logout, a deleted
account, a follow and an unfollow change it, so every process sees them on its next request.
That costs one read of the shared cache per request instead of database queries. While the
shared cache cannot be reached no copy is used, and every request reads the database.
"""

from dataclasses import dataclass

from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from news_site.accounts import selectors
from news_site.accounts.generation import account_generation
from news_site.accounts.models import Account, ApiToken
from news_site.accounts.services import token_hash

# The bound on a copy when a change could not reach the shared cache (a write during an
# outage of it).
COPY_SECONDS = 60


@dataclass(frozen=True)
class Caller:
    """An authenticated caller (DRF's `request.auth`; `request.user` is its account)."""

    account: Account
    token: ApiToken
    # The account's generation read when the token was checked (None: unknown, the shared
    # cache was unreachable); the caller's other copies are kept under it.
    generation: int | None


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


def caller_authenticate(*, raw: str) -> Caller | None:
    """The caller whose live token hashes like `raw`; None for an unknown, expired or revoked
    token. From this process's copy when the account's generation has not changed; else from
    the database (one query, two when a copy is made)."""
    digest = token_hash(raw)
    key = f"token:{digest}"
    copy = caches["process"].get(key)
    token: ApiToken | None
    if copy is not None:
        token, made_under = _from_copy(copy)
        generation = account_generation(account_id=token.account_id)
        if generation == made_under and token.expires_at > timezone.now():
            return Caller(account=token.account, token=token, generation=generation)
    token = selectors.token_live(digest=digest)
    if token is None:
        return None
    # The account is known only now. Its generation is read before the token is read again,
    # so a logout committed in between is either in that read or changes the generation.
    generation = account_generation(account_id=token.account_id)
    if generation is not None:
        token = selectors.token_live(digest=digest)
        if token is None:
            return None
        caches["process"].set(key, _copy(token, generation), COPY_SECONDS)
    return Caller(account=token.account, token=token, generation=generation)


def caller_followed_feed_ids(*, caller: Caller) -> set[int]:
    """The ids of the sources the caller follows, from this process's copy when the account's
    generation read with the token is still the copy's."""
    account_id = caller.account.pk
    key = f"follows:{account_id}"
    if caller.generation is not None:
        copy = caches["process"].get(key)
        if copy is not None and copy[1] == caller.generation:
            return copy[0]
    ids = selectors.follow_feed_ids(account_id=account_id)
    if caller.generation is not None:
        caches["process"].set(key, (ids, caller.generation), COPY_SECONDS)
    return ids
