"""The /api/v1 envelopes: `{data, meta}` for one item, `{data, pagination, meta}` for a page."""

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from django.db.models import QuerySet
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response

from news_site.api import cursors
from news_site.api.errors import API_VERSION, InvalidParameter


def meta(**extra: Any) -> dict[str, Any]:
    return {"api_version": API_VERSION, **extra}


def item_response(data: Any, *, status: int = 200, **extra_meta: Any) -> Response:
    """One item (or a top list without pages) in the `{data, meta}` envelope."""
    return Response({"data": data, "meta": meta(**extra_meta)}, status=status)


@runtime_checkable
class KeysetRows(Protocol):
    """A list read as plain rows by its own statement (news_site.news.entry_rows.EntryListing)
    rather than through a query set: ordered by the fields `order_by`, each of which its rows
    hold under the field's name."""

    @property
    def order_by(self) -> tuple[str, ...]: ...

    def rows(self, *, after: list[Any] | None, offset: int, limit: int) -> Sequence[Any]: ...


class PageNumberEnvelope(BasePagination):
    """Pages of validated `page`/`per_page`/`cursor` parameters (the list params serializers
    bound them): 1-based page numbers, or the items after a `cursor` (news_site.api.cursors),
    whose `next_cursor` stays right while items are added. One row more than the page tells
    whether there is a next page, so no list runs a COUNT. `list_name` names the list a cursor
    is bound to."""

    def __init__(
        self,
        *,
        page: int,
        per_page: int,
        lang: str | None = None,
        cursor: str | None = None,
        list_name: str = "",
    ) -> None:
        self.page = page
        self.per_page = per_page
        self.lang = lang
        self.cursor = cursor
        self.list_name = list_name
        self.has_more = False
        self.next_cursor: str | None = None

    def paginate_queryset(
        self,
        queryset: QuerySet[Any] | KeysetRows | Sequence[Any],
        request: Request,
        view: Any = None,
    ) -> list[Any]:
        start = (self.page - 1) * self.per_page
        if isinstance(queryset, QuerySet):
            keys: Sequence[cursors.OrderKey] = cursors.order_keys(queryset)
        elif isinstance(queryset, KeysetRows):
            keys = cursors.named_order_keys(queryset.order_by)
        else:
            rows = list(queryset[start : start + self.per_page + 1])
            self.has_more = len(rows) > self.per_page
            return rows[: self.per_page]
        identity = cursors.list_identity(self.list_name, keys)
        position = None
        if self.cursor:
            try:
                position = cursors.cursor_decode(self.cursor, identity, keys)
            except cursors.InvalidCursor as exc:
                raise InvalidParameter(str(exc)) from exc
        if isinstance(queryset, QuerySet):
            rows = _queryset_rows(queryset, keys, position, start, self.per_page + 1)
        else:
            rows = list(queryset.rows(after=position, offset=start, limit=self.per_page + 1))
        self.has_more = len(rows) > self.per_page
        rows = rows[: self.per_page]
        if self.has_more:
            self.next_cursor = cursors.cursor_encode(identity, cursors.row_values(rows[-1], keys))
        return rows

    def get_paginated_response(self, data: Any) -> Response:
        # Paged by cursor, the page has no number: `page` and `next_page` are null.
        numbered = not self.cursor
        return Response(
            {
                "data": data,
                "pagination": {
                    "page": self.page if numbered else None,
                    "per_page": self.per_page,
                    "has_more": self.has_more,
                    "next_page": self.page + 1 if self.has_more and numbered else None,
                    "next_cursor": self.next_cursor,
                },
                "meta": meta(**({"lang": self.lang} if self.lang else {})),
            }
        )


def _queryset_rows(
    queryset: QuerySet[Any],
    keys: Sequence[cursors.OrderKey],
    position: list[Any] | None,
    start: int,
    limit: int,
) -> list[Any]:
    queryset = cursors.with_keys(queryset, keys)
    if position is not None:
        return list(cursors.after(queryset, keys, position)[:limit])
    return list(queryset[start : start + limit])
