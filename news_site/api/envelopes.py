"""The /api/v1 envelopes: `{data, meta}` for one item, `{data, pagination, meta}` for a page."""

from collections.abc import Sequence
from typing import Any

from django.db.models import QuerySet
from rest_framework.pagination import BasePagination
from rest_framework.request import Request
from rest_framework.response import Response

from news_site.api.errors import API_VERSION


def meta(**extra: Any) -> dict[str, Any]:
    return {"api_version": API_VERSION, **extra}


def item_response(data: Any, *, status: int = 200, **extra_meta: Any) -> Response:
    """One item (or a top list without pages) in the `{data, meta}` envelope."""
    return Response({"data": data, "meta": meta(**extra_meta)}, status=status)


class PageNumberEnvelope(BasePagination):
    """1-based pages of validated `page`/`per_page` parameters (the list params serializers
    bound them). One row more than the page tells whether there is a next page, so no list
    runs a COUNT."""

    def __init__(self, *, page: int, per_page: int, lang: str | None = None) -> None:
        self.page = page
        self.per_page = per_page
        self.lang = lang
        self.has_more = False

    def paginate_queryset(
        self, queryset: QuerySet[Any] | Sequence[Any], request: Request, view: Any = None
    ) -> list[Any]:
        start = (self.page - 1) * self.per_page
        rows = list(queryset[start : start + self.per_page + 1])
        self.has_more = len(rows) > self.per_page
        return rows[: self.per_page]

    def get_paginated_response(self, data: Any) -> Response:
        return Response(
            {
                "data": data,
                "pagination": {
                    "page": self.page,
                    "per_page": self.per_page,
                    "has_more": self.has_more,
                    "next_page": self.page + 1 if self.has_more else None,
                },
                "meta": meta(**({"lang": self.lang} if self.lang else {})),
            }
        )
