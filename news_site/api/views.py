"""The /api/v1 views. They only translate HTTP to selector and service calls and shapes."""

import functools
import hashlib
from collections.abc import Callable
from typing import Any

from django.conf import settings
from django.db.models import QuerySet
from django.http import HttpResponse, QueryDict
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.functional import SimpleLazyObject
from rest_framework import serializers
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from news_site.accounts import services as accounts
from news_site.accounts.oidc import id_token_verify
from news_site.accounts.selectors import followed_feed_ids
from news_site.api import openapi
from news_site.api import serializers as shapes
from news_site.api.envelopes import PageNumberEnvelope, item_response
from news_site.api.errors import ApiError, InvalidParameter, NotFound, first_error
from news_site.api.filters import StoryFilter
from news_site.api.services import entry_view_register
from news_site.news import selectors
from news_site.news.counts import feed_entry_counts_kept
from news_site.news.generation import content_generation
from news_site.news.http import public
from news_site.news.selectors import entry_get, entry_list, entry_popular
from news_site.podcasts import selectors as podcast_selectors
from news_site.search.selectors import entries_search
from news_site.stories import selectors as story_selectors
from shared import cache as shared_cache
from shared.env import Rate
from shared.http import client_ip
from shared.ratelimit import Usage, apply_headers, usage_check, usage_count


class HasAccount(BasePermission):
    message = "this endpoint needs 'Authorization: Bearer <token>'"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.user is not None


# Plumbing --------------------------------------------------------------------------------

# A page whose content is the same for every caller who asks for it (a list of entries has no
# per-user field) is rendered once and its bytes kept in this process's `pages` cache under
# the content generation (news_site.news.generation), as long as the anonymous
# response cache keeps whole responses: an editor's change or an ingest shows at once, a view
# count or a story's source count within NEWS_RESPONSE_CACHE_SECONDS, and a Bearer request
# (which no response cache may answer) costs its token check instead of queries and JSON.


def _page_key(request: Request, shared_as: str, params: dict[str, Any]) -> str | None:
    """Where the page is kept; None when it must be rendered (caching off, or the content
    generation unknown because the shared cache is unreachable)."""
    if settings.NEWS_RESPONSE_CACHE_SECONDS <= 0:
        return None
    generation = content_generation()
    if generation is None:
        return None
    # The accepted media type carries the client's `indent`, which changes the bytes.
    return (
        f"{shared_as}:{params['page']}:{params['per_page']}:{params.get('lang')}:"
        f"{request.accepted_media_type}:{generation}"
    )


def _rendered(request: Request, body: bytes) -> HttpResponse:
    return HttpResponse(body, content_type=request.accepted_renderer.media_type)


def _params(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    return dict(_validated(serializer_class, request.META.get("QUERY_STRING", "")))


# A query string's parameters are validated once per process (a serializer builds its fields
# anew for every instance, which cost as much as serving a kept page); apps send the same few
# query strings over and over. A refused one is not kept.
@functools.lru_cache(maxsize=256)
def _validated(serializer_class: type[serializers.Serializer], query_string: str) -> dict:
    params = serializer_class(data=QueryDict(query_string))
    if not params.is_valid():
        raise InvalidParameter(first_error(params.errors))
    return params.validated_data


class ApiView(APIView):
    # Same as no permission at run time; it tells the schema that the token is optional here.
    permission_classes = [AllowAny]
    usage: Usage | None = None

    def get_authenticate_header(self, request: Request) -> str:
        # Always answer 401 (never 403) with a challenge when credentials are missing or bad.
        return 'Bearer realm="api"'

    def limit(
        self,
        request: Request,
        *,
        group: str,
        bucket: str,
        rate: Rate,
        policy: str,
        refusal: str,
        fail_closed: bool = False,
        count: bool = True,
    ) -> None:
        """Count this call in `bucket`; over the limit, a 429 `rate_limited` saying `refusal`.
        The count goes out in the rate-limit headers of whatever the view answers.
        `fail_closed`: counted in the database while Redis is down (shared/ratelimit.py).
        `count=False` only checks: the view counts with `usage_count` once the work is done."""
        self.usage = (usage_count if count else usage_check)(
            request,
            group=group,
            bucket=bucket,
            rate=rate,
            policy=policy,
            fail_closed=fail_closed,
        )
        if self.usage is not None and self.usage.exceeded:
            raise ApiError(refusal, type="rate_limited", status=429)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        patch_vary_headers(response, ["Authorization"])
        if self.usage is not None:
            apply_headers(response, self.usage)
        if "Cache-Control" not in response:
            personal = "HTTP_AUTHORIZATION" in request.META
            if request.method == "GET" and response.status_code == 200 and not personal:
                public(response)
            elif request.method == "GET" and response.status_code == 200:
                patch_cache_control(response, private=True, no_cache=True)
            else:
                patch_cache_control(response, no_store=True)
        return response

    def paginated(
        self,
        request: Request,
        items: Callable[[], QuerySet],
        serializer: type[serializers.Serializer],
        params: dict[str, Any],
        *,
        shared_as: str | None = None,
        personal: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
        **context: Any,
    ) -> HttpResponse:
        """One page of `items()`, a query set built only when the page is not kept (building
        one costs more than serving a kept page). With `shared_as` (a name for the list that
        holds everything its content depends on besides the parameters), the page is kept and
        served to every caller asking for it (see _page_key): rendered, or with `personal`
        (what each item shows the caller alone), as items `personal` completes per caller."""
        render = functools.partial(
            self._page, request, items, serializer, params, rendered=personal is None, **context
        )
        key = _page_key(request, shared_as, params) if shared_as is not None else None
        page = (
            render()
            if key is None
            # One thread of the process renders a page that is missing; the others wait for it.
            else shared_cache.get_or_make(
                key, render, settings.NEWS_RESPONSE_CACHE_SECONDS, alias="pages"
            )
        )
        if personal is None:
            return _rendered(request, page)
        data, has_more = page
        paginator = self._paginator(params)
        paginator.has_more = has_more
        return paginator.get_paginated_response([personal(item) for item in data])

    def _page(
        self,
        request: Request,
        items: Callable[[], QuerySet],
        serializer: type[serializers.Serializer],
        params: dict[str, Any],
        *,
        rendered: bool,
        **context: Any,
    ) -> bytes | tuple[list[dict[str, Any]], bool]:
        """The page's bytes, or (`rendered=False`) its items and whether a next page exists."""
        paginator = self._paginator(params)
        rows = paginator.paginate_queryset(items(), request, self)
        context = {"request": request, "lang": params.get("lang"), **context}
        data = serializer(rows, many=True, context=context).data
        if not rendered:
            return data, paginator.has_more
        response = paginator.get_paginated_response(data)
        return request.accepted_renderer.render(
            response.data, request.accepted_media_type, self.get_renderer_context()
        )

    @staticmethod
    def _paginator(params: dict[str, Any]) -> PageNumberEnvelope:
        return PageNumberEnvelope(
            page=params["page"], per_page=params["per_page"], lang=params.get("lang")
        )


class AccountView(ApiView):
    permission_classes = [HasAccount]


# Entries ---------------------------------------------------------------------------------


class EntryListView(ApiView):
    @openapi.ENTRY_LIST_GET
    def get(self, request: Request) -> Response:
        params = _params(shapes.EntryListParams, request)
        entries = entry_popular if params["sort"] == "popular" else entry_list
        return self.paginated(
            request, entries, shapes.EntrySerializer, params, shared_as=f"entries:{params['sort']}"
        )


class EntryPopularView(ApiView):
    @openapi.ENTRY_POPULAR_GET
    def get(self, request: Request) -> Response:
        params = _params(shapes.ListParams, request)
        return self.paginated(
            request, entry_popular, shapes.EntrySerializer, params, shared_as="entries:popular"
        )


class EntryFollowsView(AccountView):
    @openapi.ENTRY_FOLLOWS_GET
    def get(self, request: Request) -> Response:
        params = _params(shapes.ListParams, request)
        # The caller's own part is which sources it follows; the page of those sources'
        # entries is the same for anyone following exactly them, so it is shared like the
        # other lists, under a name made of the sources.
        feed_ids = sorted(_followed(request))
        if not feed_ids:
            return self.paginated(request, selectors.entry_none, shapes.EntrySerializer, params)
        name = hashlib.blake2b(repr(feed_ids).encode(), digest_size=16).hexdigest()
        return self.paginated(
            request,
            functools.partial(selectors.entry_followed_list, feed_ids=feed_ids),
            shapes.EntrySerializer,
            params,
            shared_as=f"follows:{name}",
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
            bucket=client_ip(request),
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
    if request.user is None:
        return set()
    # The account's generation was read when the token was checked.
    return followed_feed_ids(account_id=request.user.pk, generation=request.auth.generation)


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
        # The sources with their counts are everyone's page; whether the caller follows each
        # is added for the caller alone.
        return self.paginated(
            request,
            selectors.feed_list,
            shapes.FeedSerializer,
            params,
            shared_as="feeds",
            personal=lambda feed: {**feed, "is_following": feed["id"] in followed},
            followed=set(),
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
    def get(self, request: Request, feed_id: int) -> Response:
        params = _params(shapes.ListParams, request)
        feed = _feed(feed_id)
        return self.paginated(
            request,
            functools.partial(entry_list, feed=feed),
            shapes.EntrySerializer,
            params,
            shared_as=f"feed:{feed.pk}",
        )


class FeedFollowView(AccountView):
    @openapi.FEED_FOLLOW_POST
    def post(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_create(account=request.user, feed=feed)
        return item_response({"feed_id": feed.pk, "is_following": True})

    @openapi.FEED_FOLLOW_DELETE
    def delete(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_delete(account=request.user, feed=feed)
        return item_response({"feed_id": feed.pk, "is_following": False})


# Tags ------------------------------------------------------------------------------------


def _tag(slug: str):
    tag = selectors.tag_list_with_entries().filter(slug=slug).first()
    if tag is None:
        raise NotFound(f"no tag '{slug[:60]}' with articles")
    return tag


class TagListView(ApiView):
    @openapi.TAG_LIST_GET
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        return self.paginated(
            request, selectors.tag_list_with_entries, shapes.TagSerializer, params
        )


class TagDetailView(ApiView):
    @openapi.TAG_DETAIL_GET
    def get(self, request: Request, slug: str) -> Response:
        return item_response(shapes.TagSerializer(_tag(slug)).data)


class TagEntriesView(ApiView):
    @openapi.TAG_ENTRIES_GET
    def get(self, request: Request, slug: str) -> Response:
        params = _params(shapes.ListParams, request)
        tag = _tag(slug)
        return self.paginated(
            request,
            functools.partial(entry_list, tag=tag),
            shapes.EntrySerializer,
            params,
            shared_as=f"tag:{tag.pk}",
        )


# Stories ---------------------------------------------------------------------------------


class StoryListView(ApiView):
    @openapi.STORY_LIST_GET
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        stories = StoryFilter(request.query_params, queryset=story_selectors.story_list())
        if not stories.is_valid():
            raise InvalidParameter(first_error(stories.errors))
        return self.paginated(request, lambda: stories.qs, shapes.StorySerializer, params)


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
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        return self.paginated(
            request, podcast_selectors.episode_list, shapes.EpisodeSerializer, params
        )


class EpisodeDetailView(ApiView):
    @openapi.EPISODE_DETAIL_GET
    def get(self, request: Request, episode_id: str) -> Response:
        params = _params(shapes.EpisodeParams, request)
        episode = podcast_selectors.episode_get(episode_id=episode_id)
        if episode is None:
            raise NotFound(f"no episode '{episode_id[:100]}'")
        data = shapes.EpisodeDetailSerializer(episode).data
        if params["include_transcript"]:
            data["transcript"] = podcast_selectors.episode_transcript(episode=episode)
        return item_response(data)


# Authentication --------------------------------------------------------------------------


# A mail relay that refused a code is usually back within the minute.
MAIL_RETRY_AFTER_SECONDS = 30


class LoginView(ApiView):
    @openapi.LOGIN_POST
    def post(self, request: Request) -> Response:
        # Per client IP first, so one address cannot spray codes or guesses over many emails.
        self.limit(
            request,
            group="news-login",
            bucket=client_ip(request),
            rate=Rate.parse(settings.NEWS_LOGIN_RATE_LIMIT),
            policy="login",
            refusal="too many logins from this address: try again later",
            fail_closed=True,
        )
        body = shapes.LoginRequest(data=request.data)
        if not body.is_valid():
            raise InvalidParameter(first_error(body.errors))
        login = body.validated_data
        try:
            if login["provider"] == "email" and "code" not in login:
                return self._send_code(request, login["email"])
            if login["provider"] == "email":
                account = accounts.login_code_verify(email=login["email"], code=login["code"])
            else:
                claims = id_token_verify(
                    provider_name=login["provider"], id_token=login["id_token"]
                )
                # Apple sends the string "true"; "false" (a non-empty string) is not verified.
                verified = claims.get("email_verified") in (True, "true")
                email = str(claims.get("email", "")) if verified else ""
                account = accounts.account_for_identity(
                    provider=login["provider"], subject=str(claims["sub"]), email=email
                )
        except accounts.LoginFailed as exc:
            status = 503 if exc.code == "provider_unavailable" else 401
            if exc.code == "provider_not_configured":
                status = 400
            raise ApiError(exc.message, type=exc.code, status=status) from exc
        raw, token = accounts.token_issue(account=account)
        data = {
            "token": raw,
            "token_type": "Bearer",
            "expires_at": serializers.DateTimeField().to_representation(token.expires_at),
            "account_id": account.pk,
        }
        return item_response(data)

    def _send_code(self, request: Request, email: str) -> Response:
        budget = {
            "group": "news-login-code",
            "bucket": accounts.email_normalize(email),
            "rate": Rate.parse(settings.NEWS_LOGIN_CODE_RATE_LIMIT),
            "policy": "login-code",
            "fail_closed": True,
        }
        # Checked now and counted once the code is mailed: a code the relay refused does not
        # count against the address's codes (shared/ratelimit.py, usage_check).
        self.limit(
            request,
            refusal="too many codes for this address: try again later",
            count=False,
            **budget,
        )
        try:
            accounts.login_code_send(email=email)
        except accounts.MailUnavailable as exc:
            raise ApiError(
                "the login code could not be sent: try again shortly",
                type="service_unavailable",
                status=503,
                headers={"Retry-After": str(MAIL_RETRY_AFTER_SECONDS)},
            ) from exc
        self.usage = usage_count(request, **budget)
        data = {"status": "code_sent", "expires_in": settings.NEWS_LOGIN_CODE_SECONDS}
        return item_response(data, status=202)


class LogoutView(AccountView):
    @openapi.LOGOUT_POST
    def post(self, request: Request) -> Response:
        accounts.token_revoke(token=request.auth)
        return Response(status=204)


class AccountDeleteView(AccountView):
    @openapi.ACCOUNT_DELETE
    def delete(self, request: Request) -> Response:
        accounts.account_delete(account=request.user)
        return Response(status=204)
