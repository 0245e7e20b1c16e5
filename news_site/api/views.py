"""The /api/v1 operations. They only translate HTTP to selector and service calls and shapes;
what they share is news_site.api.base, the pages they keep news_site.api.pages."""

import functools
import hashlib
from collections.abc import Iterable
from typing import Any, cast

from django.conf import settings
from django.http import HttpResponse, QueryDict
from django.utils.cache import patch_cache_control
from django.utils.functional import SimpleLazyObject
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from news_site.accounts import services as accounts
from news_site.accounts.models import Account
from news_site.accounts.tokens import Caller, caller_followed_feed_ids
from news_site.api import openapi
from news_site.api import serializers as shapes
from news_site.api.base import AccountView, ApiView
from news_site.api.envelopes import item_response
from news_site.api.errors import InvalidParameter, NotFound, first_error
from news_site.api.filters import StoryFilter
from news_site.api.services import entry_view_register
from news_site.news import selectors
from news_site.news.counts import feed_entry_counts_kept
from news_site.news.entry_rows import EntryListing
from news_site.news.selectors import entry_get
from news_site.podcasts import selectors as podcast_selectors
from news_site.podcasts.links import episode_moved
from news_site.search.selectors import entries_search
from news_site.stories import selectors as story_selectors
from shared.env import Rate
from shared.http import client_ip, client_network


def _params(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    """The request's query parameters, validated by `serializer_class`; a refused one is a 400
    `invalid_parameter`. Only the parameters the serializer declares are read (others are
    ignored, and so is their presence for the response cache's key: shared/query_reads.py)."""
    query = request.query_params
    given = tuple(
        (name, tuple(query.getlist(name)))
        for name in _field_names(serializer_class)
        if name in query
    )
    return dict(_validated(serializer_class, given))


@functools.cache
def _field_names(serializer_class: type[serializers.Serializer]) -> tuple[str, ...]:
    return tuple(serializer_class().fields)


# A query's parameters are validated once per process (a serializer builds its fields anew for
# every instance, which cost as much as serving a kept page); apps send the same few queries
# over and over. A refused one is not kept.
@functools.lru_cache(maxsize=256)
def _validated(
    serializer_class: type[serializers.Serializer], given: tuple[tuple[str, tuple[str, ...]], ...]
) -> dict:
    data = QueryDict(mutable=True)
    for name, values in given:
        data.setlist(name, list(values))
    params = serializer_class(data=data)
    # DRF reads an empty value of an optional query field as absent (its default); the API says
    # any value but a valid one is a 400, `page=` included.
    for name, values in given:
        if "" in values:
            raise InvalidParameter(f"{name}: must not be empty")
    if not params.is_valid():
        raise InvalidParameter(first_error(params.errors))
    return params.validated_data


# Entries ---------------------------------------------------------------------------------


class EntryListView(ApiView):
    @openapi.ENTRY_LIST_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.EntryListParams, request)
        return self.page(
            request,
            functools.partial(EntryListing, order=params["sort"]),
            shapes.EntrySerializer,
            params,
            shared_as=f"entries:{params['sort']}",
        )


class EntryPopularView(ApiView):
    @openapi.ENTRY_POPULAR_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.ListParams, request)
        return self.page(
            request,
            functools.partial(EntryListing, order="popular"),
            shapes.EntrySerializer,
            params,
            shared_as="entries:popular",
        )


class EntryFollowsView(AccountView):
    @openapi.ENTRY_FOLLOWS_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.ListParams, request)
        # The caller's own part is which sources it follows; the page of those sources'
        # entries is the same for anyone following exactly them, so it is shared like the
        # other lists, under a name made of the sources.
        feed_ids = tuple(sorted(_followed(request)))
        if not feed_ids:
            return self.page(
                request,
                functools.partial(EntryListing, feed_ids=()),
                shapes.EntrySerializer,
                params,
            )
        return self.page(
            request,
            functools.partial(EntryListing, feed_ids=feed_ids),
            shapes.EntrySerializer,
            params,
            shared_as=f"follows:{_follow_set_name(feed_ids)}",
        )


class EntryDetailView(ApiView):
    @openapi.ENTRY_DETAIL_GET
    def get(self, request: Request, entry_id: int) -> Response:
        params = _params(shapes.LangParams, request)
        entry = entry_get(entry_id=entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id}")
        viewer = f"account:{request.user.pk}" if request.user else f"ip:{client_ip(request)}"
        entry_view_register(entry_id=entry.pk, viewer=viewer)
        data = shapes.EntrySerializer(entry, context={"lang": params["lang"]}).data
        response = item_response(data, lang=params["lang"])
        # Every open must reach us to be counted, so no shared cache may answer it.
        patch_cache_control(response, private=True, no_cache=True)
        return response


class EntrySearchView(ApiView):
    @openapi.ENTRY_SEARCH_GET
    def get(self, request: Request) -> Response:
        self.limit(
            request,
            group="news-search",
            bucket=client_network(request),
            rate=Rate.parse(settings.NEWS_SEARCH_RATE_LIMIT),
            policy="search",
            refusal="too many searches: try again later",
        )
        params = _params(shapes.SearchParams, request)
        entries, mode = entries_search(query=params["q"], limit=params["limit"])
        data = shapes.EntrySerializer(entries, many=True, context={"lang": "sv"}).data
        response = item_response(data, mode=mode, count=len(data))
        # Every search must reach us to be counted, and the limit headers are one client's:
        # no shared cache (ours per process, nginx) may answer it.
        patch_cache_control(response, private=True, no_cache=True)
        return response


# Feeds -----------------------------------------------------------------------------------


def _followed(request: Request) -> set[int]:
    if request.auth is None:
        return set()
    # BearerAuthentication (news_site.accounts.authentication) sets a Caller.
    return caller_followed_feed_ids(caller=cast(Caller, request.auth))


def _follow_set_name(feed_ids: Iterable[int]) -> str:
    """A name for a set of followed sources, the same for every caller following exactly them."""
    return hashlib.blake2b(repr(sorted(feed_ids)).encode(), digest_size=16).hexdigest()


def _feed(feed_id: int):
    feed = selectors.feed_get(feed_id=feed_id)
    if feed is None:
        raise NotFound(f"no source {feed_id}")
    return feed


def _feed_context(request: Request) -> dict[str, Any]:
    # The counts are everyone's (cached for a minute); the follows are only this caller's.
    return {"followed": _followed(request), "entries_counts": feed_entry_counts_kept()}


class FeedListView(ApiView):
    @openapi.FEED_LIST_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.PageParams, request)
        followed = _followed(request)
        # The sources with their counts, and which of them are followed: the same page for
        # every caller following exactly these sources, so it is kept under a name made of
        # them, as /entries/follows is.
        return self.page(
            request,
            selectors.feed_list,
            shapes.FeedSerializer,
            params,
            shared_as=f"feeds:{_follow_set_name(followed)}",
            followed=followed,
            # Read only when the page is rendered.
            entries_counts=SimpleLazyObject(feed_entry_counts_kept),
        )


class FeedDetailView(ApiView):
    @openapi.FEED_DETAIL_GET
    def get(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        data = shapes.FeedSerializer(feed, context=_feed_context(request)).data
        return item_response(data)


class FeedEntriesView(ApiView):
    @openapi.FEED_ENTRIES_GET
    def get(self, request: Request, feed_id: int) -> HttpResponse:
        params = _params(shapes.ListParams, request)
        feed = _feed(feed_id)
        return self.page(
            request,
            functools.partial(EntryListing, feed_ids=(feed.pk,)),
            shapes.EntrySerializer,
            params,
            shared_as=f"feed:{feed.pk}",
        )


class FeedFollowView(AccountView):
    @openapi.FEED_FOLLOW_POST
    def post(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_create(account=cast(Account, request.user), feed=feed)
        return item_response({"feed_id": feed.pk, "is_following": True})

    @openapi.FEED_FOLLOW_DELETE
    def delete(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_delete(account=cast(Account, request.user), feed=feed)
        return item_response({"feed_id": feed.pk, "is_following": False})


# Tags ------------------------------------------------------------------------------------


def _tag(slug: str):
    tag = selectors.tag_list_with_entries().filter(slug=slug).first()
    if tag is None:
        raise NotFound(f"no tag '{slug[:60]}' with articles")
    return tag


class TagListView(ApiView):
    @openapi.TAG_LIST_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.PageParams, request)
        return self.page(request, selectors.tag_list_with_entries, shapes.TagSerializer, params)


class TagDetailView(ApiView):
    @openapi.TAG_DETAIL_GET
    def get(self, request: Request, slug: str) -> Response:
        return item_response(shapes.TagSerializer(_tag(slug)).data)


class TagEntriesView(ApiView):
    @openapi.TAG_ENTRIES_GET
    def get(self, request: Request, slug: str) -> HttpResponse:
        params = _params(shapes.ListParams, request)
        tag = _tag(slug)
        return self.page(
            request,
            functools.partial(EntryListing, tag_id=tag.pk),
            shapes.EntrySerializer,
            params,
            shared_as=f"tag:{tag.pk}",
        )


# Stories ---------------------------------------------------------------------------------


class StoryListView(ApiView):
    @openapi.STORY_LIST_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.PageParams, request)
        stories = StoryFilter(request.query_params, queryset=story_selectors.story_list())
        if not stories.is_valid():
            raise InvalidParameter(first_error(stories.errors))
        return self.page(request, lambda: stories.qs, shapes.StorySerializer, params)


class StoryDetailView(ApiView):
    @openapi.STORY_DETAIL_GET
    def get(self, request: Request, story_id: int) -> Response:
        params = _params(shapes.LangParams, request)
        story = story_selectors.story_get(story_id=story_id)
        if story is None:
            raise NotFound(f"no story {story_id}")
        context = {
            "request": request,
            "lang": params["lang"],
            "successors": story_selectors.story_successors(story=story),
            "entries": story_selectors.story_entries(story=story),
        }
        data = shapes.StoryDetailSerializer(story, context=context).data
        return item_response(data, lang=params["lang"])


# Podcast ---------------------------------------------------------------------------------


class EpisodeListView(ApiView):
    @openapi.EPISODE_LIST_GET
    def get(self, request: Request) -> HttpResponse:
        params = _params(shapes.PageParams, request)
        return self.page(request, podcast_selectors.episode_list, shapes.EpisodeSerializer, params)


class EpisodeDetailView(ApiView):
    @openapi.EPISODE_DETAIL_GET
    def get(self, request: Request, episode_id: str) -> HttpResponse:
        params = _params(shapes.EpisodeParams, request)
        episode = podcast_selectors.episode_get(episode_id=episode_id)
        if episode is None:
            moved = episode_moved(request, old_id=episode_id, route="api-episode")
            if moved is None:
                raise NotFound(f"no episode '{episode_id[:100]}'")
            return moved
        if params["include_transcript"]:
            # Read by EpisodeDetailSerializer.transcript (source="transcript_text").
            transcript = podcast_selectors.episode_transcript(episode=episode)
            setattr(episode, "transcript_text", transcript)  # noqa: B010 (not a model field)
            return item_response(shapes.EpisodeDetailSerializer(episode).data)
        return item_response(shapes.EpisodeDetailWithoutTranscriptSerializer(episode).data)
