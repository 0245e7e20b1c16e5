"""Who is calling: the caller behind a Bearer token and the sources it follows.

Both are read on every request, so each process keeps its own copy of them (the `process`
cache) for COPY_SECONDS at most. A copy is used only while the account's generation
(news_site.accounts.generation, a column of the account's row) is still the one it was made
under; a logout, a follow and an unfollow raise it in their own transaction, and a deleted
account has none, so every process sees them on its next request whether or not Redis could
be reached. That costs one query by primary key per request instead of the token's join and
the follows query.
"""

from dataclasses import dataclass

from django.core.cache import caches
from django.db import DEFAULT_DB_ALIAS
from django.utils import timezone

from news_site.accounts import selectors
from news_site.accounts.generation import account_generation
from news_site.accounts.models import Account, ApiToken
from news_site.accounts.services import token_hash

# How long a copy stays in this process (it is checked against the generation on every use).
COPY_SECONDS = 60


@dataclass(frozen=True)
class Caller:
    """An authenticated caller (DRF's `request.auth`; `request.user` is its account)."""

    account: Account
    token: ApiToken
    # The account's generation read when the token was checked; the caller's other copies are
    # kept under it.
    generation: int


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
    token. From this process's copy when the account's generation has not changed (one query);
    else from the database (one query, which reads the generation with the token)."""
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
    # One statement read the token and its account's generation together: a logout committed
    # later raises the generation past this copy's.
    generation = token.account.generation
    caches["process"].set(key, _copy(token, generation), COPY_SECONDS)
    return Caller(account=token.account, token=token, generation=generation)


def caller_followed_feed_ids(*, caller: Caller) -> set[int]:
    """The ids of the sources the caller follows, from this process's copy when the account's
    generation read with the token is still the copy's. Read after the generation: a follow
    committed in between is in this read, and its raised generation retires the copy."""
    account_id = caller.account.pk
    key = f"follows:{account_id}"
    copy = caches["process"].get(key)
    if copy is not None and copy[1] == caller.generation:
        return copy[0]
    ids = selectors.follow_feed_ids(account_id=account_id)
    caches["process"].set(key, (ids, caller.generation), COPY_SECONDS)
    return ids
