"""The account generation: a counter on the account's row that every change to its tokens and
follows raises in the same transaction (news_site.accounts.signals; a deleted account takes
its row with it), so every process drops its copies of that account's tokens and follows
(news_site.accounts.tokens) on its next request.

It lives in the database, not in the shared cache: a change made while Redis could not be
reached (a partition, a Redis that hangs) never reaches Redis, and once Redis answered again
every process would trust its old copies, so a logged-out token would work again. The row is
the authority that every change is committed to (docs/decisions.md, "Revocations survive a
Redis partition")."""

import functools

from django.db import connection
from django.db.models import F

from news_site.accounts.models import Account
from shared.sql import column, table


def account_generation(*, account_id: int) -> int | None:
    """The account's generation; None when the account no longer exists. One query by primary
    key."""
    with connection.cursor() as cursor:
        cursor.execute(_generation_sql(), [account_id])
        row = cursor.fetchone()
    return None if row is None else int(row[0])


@functools.cache
def _generation_sql() -> str:
    """Written as SQL: every Bearer request runs it, and the ORM's building of even this query
    cost about 40% of the CPU of answering a kept page (docs/api-performance.md)."""
    generation, key = column(Account, "generation"), column(Account, "pk")
    return f"SELECT {generation} FROM {table(Account)} WHERE {key} = %s"  # noqa: S608


def account_changed(*, account_id: int) -> None:
    """Tell every process that its copies of this account's tokens and follows are out of date.
    Inside the caller's transaction, so the change and the new generation commit together."""
    Account.objects.filter(pk=account_id).update(generation=F("generation") + 1)
