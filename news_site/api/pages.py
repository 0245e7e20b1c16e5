"""The pages /api/v1 keeps in each process.

A page whose content is the same for every caller who asks for it (a list of entries has no
per-user field; a list that shows what the caller follows is named by the set it follows) is
made once and kept in this process's `pages` cache under the content generation
(news_site.news.generation), as long as the anonymous response cache keeps whole responses: an
editor's change or an ingest shows at once, a view count or a story's source count within
NEWS_RESPONSE_CACHE_SECONDS, and a Bearer request (which no response cache may answer) costs
its token check instead of queries and JSON.

page_bytes keeps the rendered body with its validators (ETag, Last-Modified), served to every
caller as it is. A page of a list named by no `shared_as` is made for each request.
"""

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, cast

from django.conf import settings
from django.db.models import QuerySet
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.views import APIView

from news_site.api.envelopes import KeysetRows, PageNumberEnvelope
from news_site.news.generation import content_generation
from shared import cache as shared_cache
from shared.conditional import body_etag, first_answered

# A list's query set, or its rows read by a statement of their own.
ItemsQuery = Callable[[], QuerySet | KeysetRows]


@dataclass(frozen=True)
class RenderedPage:
    """A rendered page and, for a named list, its validators: made with the body, so that a
    kept page is served without hashing it or asking the shared cache when it was first
    answered (shared.conditional does both for a response that has neither)."""

    body: bytes
    etag: str | None = None
    # When the named page was first this body, in seconds since the epoch.
    first_answered: int | None = None


def page_bytes(
    *,
    view: APIView,
    request: Request,
    items: ItemsQuery,
    serializer: type[serializers.Serializer],
    params: dict[str, Any],
    shared_as: str | None = None,
    context: dict[str, Any] | None = None,
) -> RenderedPage:
    """The rendered page of `items()`, a query set built only when the page is not kept
    (building one costs more than serving a kept page). `shared_as`: a name for the list that
    holds everything its content depends on besides the parameters."""

    def render() -> bytes:
        paginator = page_paginator(params, request)
        data = _serialized(view, request, paginator, items, serializer, params, context)
        response = paginator.get_paginated_response(data)
        # JSONRenderer, the API's only renderer (settings), renders bytes.
        return cast(
            bytes,
            request.accepted_renderer.render(
                response.data, request.accepted_media_type, view.get_renderer_context()
            ),
        )

    if not shared_as:
        return RenderedPage(render())
    name = _page_name(request, f"bytes:{shared_as}", params)

    def make() -> tuple[bytes, str, int]:
        body = render()
        etag = body_etag(body)
        # Named by what the page shows, not by who asked: one date for every caller of it.
        return (body, etag, first_answered(name, etag))

    return RenderedPage(*_kept(_page_key(name), make))


def page_paginator(params: dict[str, Any], request: Request) -> PageNumberEnvelope:
    # A cursor is bound to the list's path (and its order: news_site.api.cursors).
    return PageNumberEnvelope(
        page=params["page"],
        per_page=params["per_page"],
        lang=params.get("lang"),
        cursor=params.get("cursor") or None,
        list_name=request.path,
    )


def _serialized(
    view: APIView,
    request: Request,
    paginator: PageNumberEnvelope,
    items: ItemsQuery,
    serializer: type[serializers.Serializer],
    params: dict[str, Any],
    context: dict[str, Any] | None,
) -> Any:
    rows = paginator.paginate_queryset(items(), request, view)
    context = {"request": request, "lang": params.get("lang"), **(context or {})}
    return serializer(rows, many=True, context=context).data


def _kept(key: str | None, make: Callable[[], tuple[bytes, str, int]]) -> tuple[bytes, str, int]:
    """The page `make` makes, kept under `key`. Kept as a tuple of bytes, text and a number,
    never as an instance of a class of ours: the shared cache's copy may be read by a process
    of the next release."""
    if key is None:
        return make()
    # One thread of the process makes a page that is missing; the others wait for it. A page
    # past its seconds is answered for half as long again while a background thread makes it
    # anew: with a page per followed set, the renders of pages that were only old had been
    # the slowest of all answers (docs/api-performance.md).
    # Kept in this process and in Redis: a page one worker made is read by the others (a
    # reader's page, whichever worker answers them, is made once per content). Without Redis
    # (one process) a second copy would only crowd the cache of generations and counters.
    seconds = settings.NEWS_RESPONSE_CACHE_SECONDS
    return shared_cache.value_read_or_refresh(
        key,
        make,
        seconds,
        stale_seconds=max(1, seconds // 2),
        alias="pages",
        shared_alias="default" if shared_cache.reaches_every_process() else None,
    )


def _page_key(name: str) -> str | None:
    """Where the page called `name` is kept; None when it must be made (caching off, or the
    content generation unknown because the shared cache is unreachable)."""
    if settings.NEWS_RESPONSE_CACHE_SECONDS <= 0:
        return None
    generation = content_generation()
    if generation is None:
        return None
    return f"{name}:{generation}"


def _page_name(request: Request, shared_as: str, params: dict[str, Any]) -> str:
    """The page of the list `shared_as` that these parameters ask for, whatever the content."""
    # The accepted media type carries the client's `indent`, which changes the bytes. It and a
    # cursor are text the client sent (`application/json; indent=2` has a space, which the
    # cache refuses in a key): hashed, so that no character of theirs reaches the key.
    return f"{shared_as}:{params['page']}:{params['per_page']}:{params.get('lang')}:" + ":".join(
        _hashed(params.get("cursor") or "", request.accepted_media_type)
    )


def _hashed(*texts: str) -> list[str]:
    return [
        hashlib.blake2b(text.encode(), digest_size=16).hexdigest() if text else "" for text in texts
    ]
