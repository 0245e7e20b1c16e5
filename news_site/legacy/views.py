"""Legacy JSON endpoints: `.json` paths only, vendor-relevant entries only, no authentication."""

from django.http import Http404, HttpRequest, JsonResponse
from django.utils import timezone
from django.views.decorators.http import require_safe

from news_site.legacy.params import items_param
from news_site.legacy.shapes import legacy_entry, legacy_feed, legacy_tag
from news_site.news import selectors
from news_site.news.http import public


def _entries_response(request: HttpRequest, entries) -> JsonResponse:
    now = timezone.now()
    limit = items_param(request.GET)
    payload = {"entries": [legacy_entry(entry, now=now) for entry in entries[:limit]]}
    return public(JsonResponse(payload, json_dumps_params={"ensure_ascii": False}))


@require_safe
def entries(request: HttpRequest) -> JsonResponse:
    return _entries_response(request, selectors.entry_list())


@require_safe
def entries_popular(request: HttpRequest) -> JsonResponse:
    return _entries_response(request, selectors.entry_popular())


@require_safe
def entry_detail(request: HttpRequest, entry_id: int) -> JsonResponse:
    entry = selectors.entry_get(entry_id=entry_id)
    if entry is None:
        raise Http404("no such entry")
    payload = legacy_entry(entry, now=timezone.now())
    return public(JsonResponse(payload, json_dumps_params={"ensure_ascii": False}))


@require_safe
def feeds(request: HttpRequest) -> JsonResponse:
    payload = {"feeds": [legacy_feed(feed) for feed in selectors.feed_list()]}
    return public(JsonResponse(payload, json_dumps_params={"ensure_ascii": False}))


@require_safe
def feed_entries(request: HttpRequest, feed_id: int) -> JsonResponse:
    feed = selectors.feed_get(feed_id=feed_id)
    if feed is None:
        raise Http404("no such feed")
    return _entries_response(request, selectors.entry_list(feed=feed))


@require_safe
def tags(request: HttpRequest) -> JsonResponse:
    payload = {"tags": [legacy_tag(tag) for tag in selectors.tag_list()]}
    return public(JsonResponse(payload, json_dumps_params={"ensure_ascii": False}))


@require_safe
def tag_entries(request: HttpRequest, tag_id: int) -> JsonResponse:
    tag = selectors.tag_get(tag_id=tag_id)
    if tag is None:
        raise Http404("no such tag")
    return _entries_response(request, selectors.entry_list(tag=tag))
