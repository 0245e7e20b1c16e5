"""The /api/v1 views. They only translate HTTP to selector and service calls and shapes."""

import logging
from typing import Any

from django.conf import settings
from django.core.cache import cache
from django.db.models import QuerySet
from django.utils.cache import patch_cache_control, patch_vary_headers
from drf_spectacular.utils import (
    OpenApiParameter,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from redis.exceptions import RedisError
from rest_framework import serializers
from rest_framework.permissions import AllowAny, BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from news_site.accounts import services as accounts
from news_site.accounts.oidc import id_token_verify
from news_site.accounts.selectors import followed_feed_ids
from news_site.api import serializers as shapes
from news_site.api.errors import API_VERSION, ApiError, InvalidParameter, NotFound, first_error
from news_site.api.filters import StoryFilter
from news_site.api.services import entry_view_register
from news_site.news import selectors
from news_site.news.http import public
from news_site.news.selectors import entry_get, entry_list, entry_popular
from news_site.podcasts import selectors as podcast_selectors
from news_site.search.selectors import entries_search
from news_site.stories import selectors as story_selectors
from shared.http import client_ip
from shared.ratelimit import Usage, apply_headers, usage_check, usage_count

logger = logging.getLogger(__name__)


class HasAccount(BasePermission):
    message = "this endpoint needs 'Authorization: Bearer <token>'"

    def has_permission(self, request: Request, view: APIView) -> bool:
        return request.user is not None


# Schema pieces ---------------------------------------------------------------------------

_Meta = inline_serializer(
    "Meta",
    {
        "api_version": serializers.CharField(),
        "lang": serializers.ChoiceField(choices=shapes.LANGUAGES, required=False),
    },
)
_Pagination = inline_serializer(
    "Pagination",
    {
        "page": serializers.IntegerField(),
        "per_page": serializers.IntegerField(),
        "has_more": serializers.BooleanField(help_text="Whether page + 1 has items."),
        "next_page": serializers.IntegerField(allow_null=True),
    },
)


def _list_schema(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    return inline_serializer(
        f"{name}List", {"data": item(many=True), "pagination": _Pagination, "meta": _Meta}
    )


def _item_schema(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    return inline_serializer(f"{name}Envelope", {"data": item(), "meta": _Meta})


_PAGE_PARAMS = [
    # Bounds in the schema too, so that clients (and schemathesis) know what is refused.
    OpenApiParameter(
        "page",
        {"type": "integer", "minimum": 1, "maximum": 10_000, "default": 1},
        description="1-based page number (at most 10,000).",
    ),
    OpenApiParameter(
        "per_page",
        {"type": "integer", "minimum": 1, "maximum": 100, "default": 20},
        description="Items per page, 1-100 (default 20).",
    ),
]
_LANG_PARAM = OpenApiParameter(
    "lang", str, enum=shapes.LANGUAGES, description="Language of `content.translated`."
)


# Plumbing --------------------------------------------------------------------------------

# Pages of entries that are the same for every caller (their content has no per-user field)
# are kept in the shared cache as briefly as the anonymous response cache keeps whole
# responses, so that a Bearer request (which no response cache may answer) gets no staler
# data than an anonymous one and costs its token lookup instead of the page's queries.
_PAGE_KEY = "news:api-page:v1:"


def _page_cached(key: str) -> tuple[list, bool] | None:
    try:
        return cache.get(_PAGE_KEY + key)
    except RedisError as exc:
        logger.warning("page served without the cache: %s", exc)
        return None


def _page_keep(key: str, page: tuple[list, bool]) -> None:
    try:
        cache.set(_PAGE_KEY + key, page, settings.NEWS_RESPONSE_CACHE_SECONDS)
    except RedisError as exc:
        logger.warning("page not cached: %s", exc)


def _params(serializer_class: type[serializers.Serializer], request: Request) -> dict[str, Any]:
    params = serializer_class(data=request.query_params)
    if not params.is_valid():
        raise InvalidParameter(first_error(params.errors))
    return params.validated_data


def _meta(**extra: Any) -> dict[str, Any]:
    return {"api_version": API_VERSION, **extra}


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
        limit: int,
        window_seconds: int,
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
            limit=limit,
            window_seconds=window_seconds,
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
        items: QuerySet,
        serializer: type[serializers.Serializer],
        params: dict[str, Any],
        *,
        shared_as: str | None = None,
        **context: Any,
    ) -> Response:
        """One page of `items`. With `shared_as` (a name for the list that holds everything
        its content depends on besides the parameters), the page is kept for
        NEWS_RESPONSE_CACHE_SECONDS in the shared cache and served to every caller asking for
        it."""
        page, per_page = params["page"], params["per_page"]
        lang = params.get("lang")
        key = None
        if shared_as is not None and settings.NEWS_RESPONSE_CACHE_SECONDS > 0:
            key = f"{shared_as}:{page}:{per_page}:{lang}"
            cached = _page_cached(key)
        if key is None or cached is None:
            start = (page - 1) * per_page
            # One row more than the page tells whether there is a next page without a COUNT.
            rows = list(items[start : start + per_page + 1])
            has_more = len(rows) > per_page
            data = serializer(
                rows[:per_page], many=True, context={"request": request, "lang": lang, **context}
            ).data
            if key is not None:
                _page_keep(key, (list(data), has_more))
        else:
            data, has_more = cached
        return Response(
            {
                "data": data,
                "pagination": {
                    "page": page,
                    "per_page": per_page,
                    "has_more": has_more,
                    "next_page": page + 1 if has_more else None,
                },
                "meta": _meta(**({"lang": lang} if lang else {})),
            }
        )


class AccountView(ApiView):
    permission_classes = [HasAccount]


# Entries ---------------------------------------------------------------------------------


class EntryListView(ApiView):
    @extend_schema(
        operation_id="entries_list",
        parameters=[
            *_PAGE_PARAMS,
            _LANG_PARAM,
            OpenApiParameter("sort", str, enum=["latest", "popular"]),
        ],
        responses=_list_schema("Entry", shapes.EntrySerializer),
        description=(
            "Relevant entries, newest first (or most viewed first with sort=popular). The "
            "page is the same for every caller, with or without a token, and may be up to "
            "NEWS_RESPONSE_CACHE_SECONDS (10 s) old, as anonymous responses may."
        ),
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.EntryListParams, request)
        entries = entry_popular() if params["sort"] == "popular" else entry_list()
        return self.paginated(
            request, entries, shapes.EntrySerializer, params, shared_as=f"entries:{params['sort']}"
        )


class EntryPopularView(ApiView):
    @extend_schema(
        parameters=[*_PAGE_PARAMS, _LANG_PARAM],
        responses=_list_schema("PopularEntry", shapes.EntrySerializer),
        description="Relevant entries, most viewed first.",
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.ListParams, request)
        return self.paginated(
            request, entry_popular(), shapes.EntrySerializer, params, shared_as="entries:popular"
        )


class EntryFollowsView(AccountView):
    @extend_schema(
        parameters=[*_PAGE_PARAMS, _LANG_PARAM],
        responses=_list_schema("FollowedEntry", shapes.EntrySerializer),
        description="Entries of the sources the caller follows, newest first. Bearer only.",
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.ListParams, request)
        # One query with the follows joined in (indexed on account and feed); the page is the
        # caller's own, so it is never shared.
        entries = selectors.entry_followed_list(account_id=request.user.pk)
        return self.paginated(request, entries, shapes.EntrySerializer, params)


class EntryDetailView(ApiView):
    @extend_schema(
        parameters=[_LANG_PARAM],
        responses=_item_schema("EntryDetail", shapes.EntrySerializer),
        description=(
            "One relevant entry. This is the article view behind `click_count` and popularity: "
            "counted once per caller (account, else client address) and entry a day."
        ),
    )
    def get(self, request: Request, entry_id: int) -> Response:
        params = _params(shapes.LangParams, request)
        entry = entry_get(entry_id=entry_id)
        if entry is None:
            raise NotFound(f"no entry {entry_id}")
        viewer = f"account:{request.user.pk}" if request.user else f"ip:{client_ip(request)}"
        entry_view_register(entry_id=entry.pk, viewer=viewer)
        data = shapes.EntrySerializer(entry, context={"lang": params["lang"]}).data
        response = Response({"data": data, "meta": _meta(lang=params["lang"])})
        # Every open must reach us to be counted, so no shared cache may answer it.
        patch_cache_control(response, private=True, no_cache=True)
        return response


_SearchMeta = inline_serializer(
    "SearchMeta",
    {
        "api_version": serializers.CharField(),
        "mode": serializers.ChoiceField(choices=["semantic", "keyword"]),
        "count": serializers.IntegerField(),
    },
)


class EntrySearchView(ApiView):
    @extend_schema(
        parameters=[
            OpenApiParameter(
                "q",
                {"type": "string", "maxLength": 200, "pattern": r"^[^\x00]*[^\x00\s][^\x00]*$"},
                required=True,
                description="The query (1-200 chars, not only spaces, no NUL).",
            ),
            OpenApiParameter(
                "limit",
                {"type": "integer", "minimum": 1, "maximum": 50, "default": 20},
                description="1-50, default 20.",
            ),
        ],
        responses=inline_serializer(
            "SearchResult",
            {"data": shapes.EntrySerializer(many=True), "meta": _SearchMeta},
        ),
        description=(
            "A ranked top list (no pagination). Semantic search when embeddings are available "
            "and find something, else keyword search; `meta.mode` says which. `lang` is ignored. "
            "30 calls per 10 minutes per client address, then 429 with Retry-After."
        ),
    )
    def get(self, request: Request) -> Response:
        self.limit(
            request,
            group="news-search",
            bucket=client_ip(request),
            limit=settings.NEWS_SEARCH_RATE_LIMIT,
            window_seconds=settings.NEWS_SEARCH_RATE_WINDOW_SECONDS,
            policy="search",
            refusal="too many searches: try again later",
        )
        params = _params(shapes.SearchParams, request)
        entries, mode = entries_search(query=params["q"], limit=params["limit"])
        data = shapes.EntrySerializer(entries, many=True, context={"lang": "sv"}).data
        response = Response({"data": data, "meta": _meta(mode=mode, count=len(data))})
        # Every search must reach us to be counted, and the limit headers are one client's:
        # no shared cache (ours per process, nginx) may answer it.
        patch_cache_control(response, private=True, no_cache=True)
        return response


# Feeds -----------------------------------------------------------------------------------


def _followed(request: Request) -> set[int]:
    return followed_feed_ids(account_id=request.user.pk) if request.user else set()


def _feed(feed_id: int):
    feed = selectors.feed_get(feed_id=feed_id)
    if feed is None:
        raise NotFound(f"no source {feed_id}")
    return feed


def _feed_context(request: Request) -> dict[str, Any]:
    # The counts are everyone's (cached for a minute); the follows are only this caller's.
    return {"followed": _followed(request), "entries_counts": selectors.feed_entry_counts()}


class FeedListView(ApiView):
    @extend_schema(
        operation_id="feeds_list",
        parameters=_PAGE_PARAMS,
        responses=_list_schema("Feed", shapes.FeedSerializer),
        description=(
            "Active sources. `entries_count` counts relevant entries (counted at most a "
            "minute ago); `is_following` is true only for the authenticated caller's follows "
            "(always current)."
        ),
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        feeds = selectors.feed_list()
        return self.paginated(
            request, feeds, shapes.FeedSerializer, params, **_feed_context(request)
        )


class FeedDetailView(ApiView):
    @extend_schema(responses=_item_schema("FeedDetail", shapes.FeedSerializer))
    def get(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        data = shapes.FeedSerializer(feed, context=_feed_context(request)).data
        return Response({"data": data, "meta": _meta()})


class FeedEntriesView(ApiView):
    @extend_schema(
        parameters=[*_PAGE_PARAMS, _LANG_PARAM],
        responses=_list_schema("FeedEntry", shapes.EntrySerializer),
    )
    def get(self, request: Request, feed_id: int) -> Response:
        params = _params(shapes.ListParams, request)
        feed = _feed(feed_id)
        return self.paginated(
            request,
            entry_list(feed=feed),
            shapes.EntrySerializer,
            params,
            shared_as=f"feed:{feed.pk}",
        )


_FOLLOW_RESPONSE = _item_schema("FollowState", shapes.FollowSerializer)


class FeedFollowView(AccountView):
    @extend_schema(
        request=None,
        responses=_FOLLOW_RESPONSE,
        description="Follow the source (idempotent): 200 with `is_following: true`.",
    )
    def post(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_create(account=request.user, feed=feed)
        return Response({"data": {"feed_id": feed.pk, "is_following": True}, "meta": _meta()})

    @extend_schema(
        request=None,
        # Explicit status: drf-spectacular would document a DELETE as 204.
        responses={200: _FOLLOW_RESPONSE},
        description="Unfollow the source (idempotent): 200 with `is_following: false`.",
    )
    def delete(self, request: Request, feed_id: int) -> Response:
        feed = _feed(feed_id)
        accounts.follow_delete(account=request.user, feed=feed)
        return Response({"data": {"feed_id": feed.pk, "is_following": False}, "meta": _meta()})


# Tags ------------------------------------------------------------------------------------


def _tag(slug: str):
    tag = selectors.tag_list_with_entries().filter(slug=slug).first()
    if tag is None:
        raise NotFound(f"no tag '{slug[:60]}' with articles")
    return tag


class TagListView(ApiView):
    @extend_schema(
        operation_id="tags_list",
        parameters=_PAGE_PARAMS,
        responses=_list_schema("Tag", shapes.TagSerializer),
        description="Tags that have relevant entries, by name.",
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        tags = selectors.tag_list_with_entries()
        return self.paginated(request, tags, shapes.TagSerializer, params)


class TagDetailView(ApiView):
    @extend_schema(responses=_item_schema("TagDetail", shapes.TagSerializer))
    def get(self, request: Request, slug: str) -> Response:
        return Response({"data": shapes.TagSerializer(_tag(slug)).data, "meta": _meta()})


class TagEntriesView(ApiView):
    @extend_schema(
        parameters=[*_PAGE_PARAMS, _LANG_PARAM],
        responses=_list_schema("TagEntry", shapes.EntrySerializer),
    )
    def get(self, request: Request, slug: str) -> Response:
        params = _params(shapes.ListParams, request)
        tag = _tag(slug)
        return self.paginated(
            request, entry_list(tag=tag), shapes.EntrySerializer, params, shared_as=f"tag:{tag.pk}"
        )


# Stories ---------------------------------------------------------------------------------


class StoryListView(ApiView):
    @extend_schema(
        operation_id="stories_list",
        parameters=[
            *_PAGE_PARAMS,
            OpenApiParameter("status", str, enum=["active", "dormant"]),
        ],
        responses=_list_schema("Story", shapes.StorySerializer),
        description="Stories, most recently updated first.",
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        stories = StoryFilter(request.query_params, queryset=story_selectors.story_list())
        if not stories.is_valid():
            raise InvalidParameter(first_error(stories.errors))
        return self.paginated(request, stories.qs, shapes.StorySerializer, params)


class StoryDetailView(ApiView):
    @extend_schema(
        parameters=[_LANG_PARAM],
        responses=_item_schema("StoryDetail", shapes.StoryDetailSerializer),
        description="`:id` is the id or `<id>-<slug>` (the slug is not checked).",
    )
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
        return Response({"data": data, "meta": _meta(lang=params["lang"])})


# Podcast ---------------------------------------------------------------------------------


class EpisodeListView(ApiView):
    @extend_schema(
        operation_id="podd_episodes_list",
        parameters=_PAGE_PARAMS,
        responses=_list_schema("Episode", shapes.EpisodeSerializer),
        description="Podcast episodes, newest first.",
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.PageParams, request)
        episodes = podcast_selectors.episode_list()
        return self.paginated(request, episodes, shapes.EpisodeSerializer, params)


class EpisodeDetailView(ApiView):
    @extend_schema(
        parameters=[OpenApiParameter("include_transcript", bool)],
        responses=_item_schema("EpisodeDetail", shapes.EpisodeDetailSerializer),
        description=(
            "`:id` is the episode_id. With include_transcript=true, `transcript` holds the "
            "stored transcript text (null until it has been fetched)."
        ),
    )
    def get(self, request: Request, episode_id: str) -> Response:
        params = _params(shapes.EpisodeParams, request)
        episode = podcast_selectors.episode_get(episode_id=episode_id)
        if episode is None:
            raise NotFound(f"no episode '{episode_id[:100]}'")
        data = shapes.EpisodeDetailSerializer(episode).data
        if params["include_transcript"]:
            data["transcript"] = podcast_selectors.episode_transcript(episode=episode)
        return Response({"data": data, "meta": _meta()})


# Authentication --------------------------------------------------------------------------


# A mail relay that refused a code is usually back within the minute.
MAIL_RETRY_AFTER_SECONDS = 30


class LoginView(ApiView):
    @extend_schema(
        request=PolymorphicProxySerializer(
            component_name="LoginRequest",
            serializers=[shapes.EmailLoginRequest, shapes.IdTokenLoginRequest],
            resource_type_field_name=None,
        ),
        responses={
            200: _item_schema("LoginToken", shapes.TokenSerializer),
            202: _item_schema("LoginCodeSent", shapes.CodeSentSerializer),
        },
        description=(
            "`provider=email`: the first call (`email`) emails a six-digit code and answers 202; "
            "the second (`email` + `code`) answers 200 with a token. Codes expire after 10 "
            "minutes, work once, and die after 5 wrong tries. `provider=apple|google`: "
            "`id_token` is the provider's OpenID Connect ID token. At most 30 calls per 10 "
            "minutes per client address and 5 codes per hour per address (counted in the "
            "database while the shared cache is down), then 429 with Retry-After. A code the "
            "mail relay refuses is a 503 `service_unavailable` with Retry-After and does not "
            "count. Addresses are compared NFKC-normalised and case-folded."
        ),
    )
    def post(self, request: Request) -> Response:
        # Per client IP first, so one address cannot spray codes or guesses over many emails.
        self.limit(
            request,
            group="news-login",
            bucket=client_ip(request),
            limit=settings.NEWS_LOGIN_RATE_LIMIT,
            window_seconds=settings.NEWS_LOGIN_RATE_WINDOW_SECONDS,
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
        return Response({"data": data, "meta": _meta()})

    def _send_code(self, request: Request, email: str) -> Response:
        budget = {
            "group": "news-login-code",
            "bucket": accounts.email_normalize(email),
            "limit": settings.NEWS_LOGIN_CODES_PER_HOUR,
            "window_seconds": 3600,
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
        return Response({"data": data, "meta": _meta()}, status=202)


class LogoutView(AccountView):
    @extend_schema(
        request=None,
        responses={204: None},
        description="Invalidates the token of this request (other devices stay logged in).",
    )
    def post(self, request: Request) -> Response:
        accounts.token_revoke(token=request.auth)
        return Response(status=204)


class AccountDeleteView(AccountView):
    @extend_schema(
        responses={204: None},
        description="Deletes the account, its logins, tokens and follows for good.",
    )
    def delete(self, request: Request) -> Response:
        accounts.account_delete(account=request.user)
        return Response(status=204)
