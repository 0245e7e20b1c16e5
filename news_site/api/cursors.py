"""Opaque /api/v1 list cursors: the keyset position of a page's last item, signed.

A list's order is its query set's `order_by` (every list ends on `id`, so the order is total).
A cursor holds the values of those keys for the last item shown, and the next page is the items
strictly after them in that order; an item inserted before the position (a new entry at the top
of a newest-first list) never shifts what the next page holds, so paging while entries arrive
repeats and skips nothing that was there when paging began.

A list ordered by something that changes with time (`popular` by view count, stories by their
last update) is walked by each item's key as it is when each page is read: an item whose key
moves past the position between two pages is shown twice or not at all (docs/mobile-api.md).

Cursors are signed with the service's secret (django.core.signing, which also accepts those
signed under SECRET_KEY_FALLBACKS, so a key rotation does not end a saved scroll position) and
bound to the list they were issued for: a cursor sent to another list is refused.
"""

import functools
import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from django.core import signing
from django.db.models import F, Q, QuerySet
from django.db.models.expressions import OrderBy

CURSOR_VERSION = 1
# Signed keys of the longest list key (a 200-character source title) stay well under this.
MAX_CURSOR_LENGTH = 1024
_SALT = "news.api.cursor"
_ALIAS = "cursor_key_{}"


class InvalidCursor(Exception):
    """A cursor that is forged, garbled, of another version or issued for another list."""


@dataclass(frozen=True)
class OrderKey:
    alias: str
    expression: Any  # an F() or any query expression (Lower("name"))
    descending: bool
    # Where NULLs sort, "first" or "last": a nullable key must say (databases disagree when
    # it is not said); None for a key that is never NULL.
    nulls: str | None = None


def order_keys(queryset: QuerySet[Any]) -> list[OrderKey]:
    """The keys `queryset` is ordered by, each as an expression the cursor filter can use."""
    keys = []
    for index, term in enumerate(queryset.query.order_by):
        alias = _ALIAS.format(index)
        if isinstance(term, str):
            keys.append(OrderKey(alias, F(term.lstrip("-")), term.startswith("-")))
        elif isinstance(term, OrderBy):
            keys.append(OrderKey(alias, term.expression, term.descending, _nulls(term)))
        else:
            keys.append(OrderKey(alias, term, False))
    return keys


@functools.cache
def named_order_keys(order_by: tuple[str, ...]) -> tuple[OrderKey, ...]:
    """The keys of a list of plain rows (news_site.news.entry_rows) ordered by these fields,
    each read from the row under its field's name. A cursor of such a list is the same as one
    of a query set ordered by the same fields (list_identity reads only the expressions)."""
    return tuple(
        OrderKey(name.lstrip("-"), F(name.lstrip("-")), name.startswith("-")) for name in order_by
    )


def _nulls(term: OrderBy) -> str | None:
    if term.nulls_first:
        return "first"
    return "last" if term.nulls_last else None


def list_identity(list_name: str, keys: Sequence[OrderKey]) -> str:
    """What a cursor is bound to: the list and its order (a `sort` parameter changes it)."""
    order = "|".join(f"{'-' if key.descending else ''}{key.expression!r}" for key in keys)
    return hashlib.sha256(f"{list_name}|{order}".encode()).hexdigest()[:16]


def with_keys(queryset: QuerySet[Any], keys: Sequence[OrderKey]) -> QuerySet[Any]:
    """`queryset` with its order keys selected, so the last row tells the next position."""
    return queryset.annotate(**{key.alias: key.expression for key in keys})


def after(queryset: QuerySet[Any], keys: Sequence[OrderKey], values: list[Any]) -> QuerySet[Any]:
    """The rows of `queryset` (made by with_keys) strictly after `values` in its order."""
    condition = Q()
    for index, key in enumerate(keys):
        step = _beyond(key, values[index])
        for earlier, value in zip(keys[:index], values[:index], strict=True):
            step &= Q(**{earlier.alias: value}) if value is not None else _null(earlier)
        condition |= step
    return queryset.filter(condition)


def _beyond(key: OrderKey, value: Any) -> Q:
    """The rows whose `key` comes strictly after `value`."""
    if value is None:
        # NULLs first: every value comes after; NULLs last: nothing does.
        return ~_null(key) if key.nulls == "first" else Q(pk__in=[])
    lookup = "lt" if key.descending else "gt"
    beyond = Q(**{f"{key.alias}__{lookup}": value})
    return beyond | _null(key) if key.nulls == "last" else beyond


def _null(key: OrderKey) -> Q:
    return Q(**{f"{key.alias}__isnull": True})


def row_values(row: Any, keys: Sequence[OrderKey]) -> list[Any]:
    """The key values of `row`: a model, or a plain row of a values() query set."""
    if isinstance(row, dict):
        return [row[key.alias] for key in keys]
    return [getattr(row, key.alias) for key in keys]


def cursor_encode(identity: str, values: list[Any]) -> str:
    return signing.Signer(salt=_SALT).sign_object(
        {"v": CURSOR_VERSION, "l": identity, "k": [_encoded(value) for value in values]},
        compress=True,
    )


def cursor_decode(token: str, identity: str, keys: Sequence[OrderKey]) -> list[Any]:
    if len(token) > MAX_CURSOR_LENGTH:
        raise InvalidCursor("cursor: too long to be one of ours")
    try:
        data = signing.Signer(salt=_SALT).unsign_object(token)
    except (signing.BadSignature, ValueError, UnicodeDecodeError) as exc:
        raise InvalidCursor("cursor: not valid; start again without a cursor") from exc
    if not isinstance(data, dict) or data.get("v") != CURSOR_VERSION:
        raise InvalidCursor("cursor: of an unknown version; start again without a cursor")
    if data.get("l") != identity:
        raise InvalidCursor("cursor: issued for another list or sort order")
    values = data.get("k")
    if not isinstance(values, list) or len(values) != len(keys):
        raise InvalidCursor("cursor: not valid; start again without a cursor")
    try:
        return [_decoded(value) for value in values]
    except (TypeError, ValueError, KeyError) as exc:
        raise InvalidCursor("cursor: not valid; start again without a cursor") from exc


def _encoded(value: Any) -> Any:
    # JSON has no dates; the tag says which type to read back.
    if isinstance(value, datetime):
        return {"dt": value.isoformat()}
    if isinstance(value, date):
        return {"d": value.isoformat()}
    return value


def _decoded(value: Any) -> Any:
    if isinstance(value, dict):
        if "dt" in value:
            return datetime.fromisoformat(value["dt"])
        return date.fromisoformat(value["d"])
    if value is None or isinstance(value, bool | int | str):
        return value
    raise TypeError("not a key value")
