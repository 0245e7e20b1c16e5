"""The first pages of /entries/follows, merged from each followed source's newest entries.

Every distinct set of followed sources is a page of its own, so with many readers most of
those pages are made rather than read, and each kept page is made again after every ingest.
A source's newest entries are the same for every reader, though: each process keeps, per
source, its newest SOURCE_DEPTH entries as the JSON the page shows them in, and a reader's
page is those of its sources merged in the list's order (newest listed first, then the highest
id), with no query and no serializing. The bytes are the ones the database's page would have
(tests/news/api/test_followed_pages.py compares them for generated follow sets and pages).
Deeper pages, pages by cursor, indented JSON, and everything while pages are not kept go to
the database as before.
"""

import functools
import heapq
import itertools
from dataclasses import dataclass
from typing import Any

from rest_framework.request import Request
from rest_framework.views import APIView

from news_site.api import cursors
from news_site.api.pages import (
    RenderedPage,
    kept_body,
    kept_value,
    page_paginator,
    pages_kept,
    rendered_json,
)
from news_site.api.serializers import EntrySerializer
from news_site.news import selectors

# A source's newest entries kept for merging: enough for a first page of 50 and whether there
# is another after it (the apps' page), or two pages of 25.
SOURCE_DEPTH = 51
# A merged page and the sources' entries it is made of are each kept for half the pages'
# time, so that together they are no older than any other kept page.
_SHARE = 0.5
# How the rendered envelope of a page opens: its list of entries comes first.
_LIST_START = b'{"data":['


@dataclass(frozen=True)
class SourceEntries:
    """A source's newest entries, in the list's order: each one's order keys (listed_at, id)
    and its JSON."""

    keys: list[tuple[Any, ...]]
    items: list[bytes]


def followed_first_page(
    *,
    view: APIView,
    request: Request,
    feed_ids: list[int],
    params: dict[str, Any],
    shared_as: str,
) -> RenderedPage | None:
    """The page of /entries/follows for these sources, made by merging; None when this page
    must come from the database (see the module's text)."""
    deepest = params["page"] * params["per_page"] + 1
    plain_json = request.accepted_media_type == request.accepted_renderer.media_type
    if params.get("cursor") or deepest > SOURCE_DEPTH or not plain_json or not pages_kept():
        return None
    return kept_body(
        request, params, shared_as, lambda: _merged(view, request, feed_ids, params), share=_SHARE
    )


def _source_entries(
    view: APIView, request: Request, feed_id: int, params: dict[str, Any]
) -> SourceEntries:
    def make() -> SourceEntries:
        rows = selectors.entry_rows(selectors.entry_followed_list(feed_ids=[feed_id]))
        keys = cursors.order_keys(rows)
        newest = list(cursors.with_keys(rows, keys)[:SOURCE_DEPTH])
        context = {"request": request, "lang": params.get("lang")}
        data = EntrySerializer(newest, many=True, context=context).data
        return SourceEntries(
            keys=[tuple(cursors.row_values(row, keys)) for row in newest],
            items=[rendered_json(view, request, item) for item in data],
        )

    source_params = {"page": 1, "per_page": SOURCE_DEPTH, "lang": params.get("lang")}
    # Made here and not kept if the pages stopped being kept since the caller asked.
    kept = kept_value(request, f"source-entries:{feed_id}", source_params, make, share=_SHARE)
    return kept or make()


@functools.cache
def _list_order() -> list[cursors.OrderKey]:
    """The order keys of /entries/follows, whatever the sources (read once per process)."""
    keys = cursors.order_keys(selectors.entry_followed_list(feed_ids=[]))
    # The merge orders by (listed_at, id), newest first: it must be the list's order.
    assert [(repr(key.expression), key.descending) for key in keys] == [
        ("F(listed_at)", True),
        ("F(id)", True),
    ]
    return keys


def _merged(view: APIView, request: Request, feed_ids: list[int], params: dict[str, Any]) -> bytes:
    keys = _list_order()
    sources = [_source_entries(view, request, feed_id, params) for feed_id in feed_ids]
    page, per_page = params["page"], params["per_page"]
    newest_first = heapq.merge(
        *(zip(source.keys, source.items, strict=True) for source in sources),
        key=lambda pair: pair[0],
        reverse=True,
    )
    start = (page - 1) * per_page
    shown = list(itertools.islice(newest_first, start, start + per_page + 1))
    paginator = page_paginator(params, request)
    paginator.has_more = len(shown) > per_page
    shown = shown[:per_page]
    if paginator.has_more:
        identity = cursors.list_identity(request.path, keys)
        paginator.next_cursor = cursors.cursor_encode(identity, list(shown[-1][0]))
    envelope = rendered_json(view, request, paginator.get_paginated_response([]).data)
    # The envelope of an empty page opens with its (empty) list: the items go there.
    assert envelope.startswith(_LIST_START + b"]")
    return _LIST_START + b",".join(item for _key, item in shown) + envelope[len(_LIST_START) :]
