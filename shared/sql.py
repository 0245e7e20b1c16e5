"""Quoted names for the few statements written as SQL rather than built by the ORM: reads that
every request makes (a Bearer caller's token, follows and generation; the tags of a page of
entries), where building the query through the ORM cost more CPU than the database's answer
(docs/api-performance.md). Names come from the models' metadata and are quoted; values are
always parameters."""

from typing import Any, cast

from django.db import connection
from django.db.backends.utils import CursorWrapper
from django.db.models import Field, Model


def table(model: type[Model]) -> str:
    return connection.ops.quote_name(model._meta.db_table)


def column(model: type[Model], name: str) -> str:
    """The quoted column of the concrete field `name` ("pk" for the primary key)."""
    meta = model._meta
    field = meta.pk if name == "pk" else meta.get_field(name)
    return connection.ops.quote_name(cast(str, cast("Field[Any, Any]", field).column))


def dates_loaded_natively(cursor: CursorWrapper) -> None:
    """On PostgreSQL, this cursor's timestamptz values loaded by psycopg's own loader (in C,
    with psycopg-binary) instead of the one Django registers on every connection: a Python
    subclass of it that only sets the time zone, and about a tenth of the CPU of a page of 50
    entries (two dates each; docs/api-performance.md). Either gives aware datetimes of the
    same moment: the connection's time zone is UTC."""
    if connection.vendor == "postgresql":
        from psycopg.types.datetime import TimestamptzLoader

        cursor.cursor.adapters.register_loader("timestamptz", TimestamptzLoader)
