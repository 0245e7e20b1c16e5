"""Reads of the accounts app. The two that a Bearer request makes (its token, its follows) are
written as SQL: the ORM's building of each cost more CPU than the database's answer, on every
request that finds no copy in its process (news_site.accounts.tokens keeps those copies)."""

import functools
from typing import Any

from django.db import DEFAULT_DB_ALIAS, connection
from django.db.models import Field, Model
from django.utils import timezone

from news_site.accounts.models import Account, ApiToken, Follow
from shared.sql import column, table


def token_live(*, digest: str) -> ApiToken | None:
    """The unexpired token with this hash, with its account: one statement reads both rows."""
    now = connection.ops.adapt_datetimefield_value(timezone.now())
    with connection.cursor() as cursor:
        cursor.execute(_token_sql(), [digest, now])
        row = cursor.fetchone()
    if row is None:
        return None
    token_fields, account_fields = _fields(ApiToken), _fields(Account)
    split = len(token_fields)
    token = _model_from_row(ApiToken, token_fields, row[:split])
    token.account = _model_from_row(Account, account_fields, row[split:])
    return token


def follow_feed_ids(*, account_id: int) -> set[int]:
    """The ids of the sources the account follows."""
    with connection.cursor() as cursor:
        cursor.execute(_follows_sql(), [account_id])
        return {feed_id for (feed_id,) in cursor.fetchall()}


def _fields(model: type[Model]) -> list[Field]:
    # Every concrete field, so that a field added later is read too.
    return list(model._meta.concrete_fields)


def _model_from_row(model: type[Model], fields: list[Field], values: tuple[Any, ...]) -> Any:
    """The model instance of a row read as SQL, its values converted as the ORM converts them
    (SQLite hands back naive date-times, for one)."""
    converted = []
    for field, value in zip(fields, values, strict=True):
        column, converters = _converters(field)
        for converter in converters:
            value = converter(value, column, connection)
        converted.append(value)
    return model.from_db(DEFAULT_DB_ALIAS, [field.attname for field in fields], converted)


@functools.cache
def _converters(field: Field) -> tuple[Any, list[Any]]:
    """The field's column expression and what the ORM converts its values with."""
    column = field.get_col(field.model._meta.db_table)
    return column, [*connection.ops.get_db_converters(column), *field.get_db_converters(connection)]


@functools.cache
def _token_sql() -> str:
    def columns(alias: str, model: type[Model]) -> str:
        return ", ".join(f"{alias}.{column(model, field.name)}" for field in _fields(model))

    return (
        f"SELECT {columns('t', ApiToken)}, {columns('a', Account)} "  # noqa: S608
        f"FROM {table(ApiToken)} t JOIN {table(Account)} a "
        f"ON a.{column(Account, 'pk')} = t.{column(ApiToken, 'account')} "
        f"WHERE t.{column(ApiToken, 'token_hash')} = %s AND t.{column(ApiToken, 'expires_at')} > %s"
    )


@functools.cache
def _follows_sql() -> str:
    feed, account = column(Follow, "feed"), column(Follow, "account")
    return f"SELECT {feed} FROM {table(Follow)} WHERE {account} = %s"  # noqa: S608
