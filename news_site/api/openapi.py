"""The OpenAPI description of each /api/v1 operation, applied to the views by name
(`@openapi.ENTRY_LIST_GET`), so that the views module holds only what runs.

The error envelope, the Bearer scheme and the legacy endpoints are added by `schema.postprocess`.
"""

from drf_spectacular.utils import (
    OpenApiExample,
    OpenApiParameter,
    OpenApiResponse,
    PolymorphicProxySerializer,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers

from news_site.api import serializers as shapes
from news_site.api.cursors import MAX_CURSOR_LENGTH

# Shared pieces ---------------------------------------------------------------------------

META = inline_serializer(
    "Meta",
    {
        "api_version": serializers.CharField(),
        "lang": serializers.ChoiceField(choices=shapes.LANGUAGES, required=False),
    },
)
PAGINATION = inline_serializer(
    "Pagination",
    {
        "page": serializers.IntegerField(
            allow_null=True, help_text="The page number; null on a page read by `cursor`."
        ),
        "per_page": serializers.IntegerField(),
        "has_more": serializers.BooleanField(help_text="Whether a next page has items."),
        "next_page": serializers.IntegerField(
            allow_null=True,
            help_text="page + 1 when it has items; null on the last page and on pages read "
            "by `cursor`.",
        ),
        "next_cursor": serializers.CharField(
            allow_null=True,
            help_text="Opaque: send it as `cursor` for the items after this page, which stay "
            "right while items are added (unlike page numbers). Null on the last page.",
        ),
    },
)


def list_schema(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    return inline_serializer(
        f"{name}List", {"data": item(many=True), "pagination": PAGINATION, "meta": META}
    )


def item_schema(name: str, item: type[serializers.Serializer]) -> serializers.Serializer:
    return inline_serializer(f"{name}Envelope", {"data": item(), "meta": META})


PAGE_PARAMS = [
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
    OpenApiParameter(
        "cursor",
        {"type": "string", "maxLength": MAX_CURSOR_LENGTH},
        description="`pagination.next_cursor` of the previous page: the items after it. "
        "Not with `page`; a cursor of another list or sort order is a 400.",
    ),
]
LANG_PARAM = OpenApiParameter(
    "lang", str, enum=shapes.LANGUAGES, description="Language of `content.translated`."
)


SEARCH_META = inline_serializer(
    "SearchMeta",
    {
        "api_version": serializers.CharField(),
        "mode": serializers.ChoiceField(choices=["semantic", "keyword"]),
        "count": serializers.IntegerField(),
    },
)


FOLLOW_RESPONSE = item_schema("FollowState", shapes.FollowSerializer)


# Operations ------------------------------------------------------------------------------

INDEX_GET = extend_schema(
    operation_id="api_index",
    responses=item_schema("ApiIndex", shapes.ApiIndexSerializer),
    summary="What the API offers",
    description="Links to the reference, every collection and the service's other surfaces.",
)

ENTRY_LIST_GET = extend_schema(
    operation_id="entries_list",
    parameters=[
        *PAGE_PARAMS,
        LANG_PARAM,
        OpenApiParameter("sort", str, enum=["latest", "popular"]),
    ],
    responses=list_schema("Entry", shapes.EntrySerializer),
    description=(
        "Relevant entries, newest first (or most viewed first with sort=popular). The "
        "page is the same for every caller, with or without a token, and may be up to "
        "NEWS_RESPONSE_CACHE_SECONDS (10 s) old, as anonymous responses may."
    ),
)

ENTRY_POPULAR_GET = extend_schema(
    parameters=[*PAGE_PARAMS, LANG_PARAM],
    responses=list_schema("PopularEntry", shapes.EntrySerializer),
    description="Relevant entries, most viewed first.",
)

ENTRY_FOLLOWS_GET = extend_schema(
    parameters=[*PAGE_PARAMS, LANG_PARAM],
    responses=list_schema("FollowedEntry", shapes.EntrySerializer),
    description="Entries of the sources the caller follows, newest first. Bearer only.",
)

ENTRY_DETAIL_GET = extend_schema(
    parameters=[LANG_PARAM],
    responses=item_schema("EntryDetail", shapes.EntrySerializer),
    description=(
        "One relevant entry. This is the article view behind `click_count` and popularity: "
        "counted once per caller (account, else client address) and entry a day."
    ),
)

ENTRY_SEARCH_GET = extend_schema(
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
        {"data": shapes.EntrySerializer(many=True), "meta": SEARCH_META},
    ),
    description=(
        "A ranked top list (no pagination). Semantic search when embeddings are available "
        "and find something, else keyword search; `meta.mode` says which. `lang` is ignored. "
        "30 calls per 10 minutes per client address, then 429 with Retry-After."
    ),
)

FEED_LIST_GET = extend_schema(
    operation_id="feeds_list",
    parameters=PAGE_PARAMS,
    responses=list_schema("Feed", shapes.FeedSerializer),
    description=(
        "Active sources. `entries_count` counts relevant entries (counted at most a "
        "minute ago); `is_following` is true only for the authenticated caller's follows "
        "(always current)."
    ),
)

FEED_DETAIL_GET = extend_schema(
    responses=item_schema("FeedDetail", shapes.FeedSerializer),
    description="One active source, as the list shows it.",
)

FEED_ENTRIES_GET = extend_schema(
    parameters=[*PAGE_PARAMS, LANG_PARAM],
    responses=list_schema("FeedEntry", shapes.EntrySerializer),
    description="The source's relevant entries, newest first.",
)

FEED_FOLLOW_POST = extend_schema(
    request=None,
    responses=FOLLOW_RESPONSE,
    description="Follow the source (idempotent): 200 with `is_following: true`.",
)

FEED_FOLLOW_DELETE = extend_schema(
    request=None,
    # Explicit status: drf-spectacular would document a DELETE as 204.
    responses={200: FOLLOW_RESPONSE},
    description="Unfollow the source (idempotent): 200 with `is_following: false`.",
)

TAG_LIST_GET = extend_schema(
    operation_id="tags_list",
    parameters=PAGE_PARAMS,
    responses=list_schema("Tag", shapes.TagSerializer),
    description="Tags that have relevant entries, by name.",
)

TAG_DETAIL_GET = extend_schema(
    responses=item_schema("TagDetail", shapes.TagSerializer),
    description="One tag by its slug, with its count of relevant entries.",
)

TAG_ENTRIES_GET = extend_schema(
    parameters=[*PAGE_PARAMS, LANG_PARAM],
    responses=list_schema("TagEntry", shapes.EntrySerializer),
    description="The tag's relevant entries, newest first.",
)

STORY_LIST_GET = extend_schema(
    operation_id="stories_list",
    parameters=[
        *PAGE_PARAMS,
        OpenApiParameter("status", str, enum=["active", "dormant"]),
    ],
    responses=list_schema("Story", shapes.StorySerializer),
    description="Stories, most recently updated first.",
)

STORY_DETAIL_GET = extend_schema(
    parameters=[LANG_PARAM],
    responses=item_schema("StoryDetail", shapes.StoryDetailSerializer),
    description="`:id` is the id or `<id>-<slug>` (the slug is not checked).",
)

EPISODE_LIST_GET = extend_schema(
    operation_id="podd_episodes_list",
    parameters=PAGE_PARAMS,
    responses=list_schema("Episode", shapes.EpisodeSerializer),
    description="Podcast episodes, newest first.",
)

EPISODE_DETAIL_GET = extend_schema(
    parameters=[
        OpenApiParameter("include_transcript", bool),
        OpenApiParameter(
            "Location",
            str,
            OpenApiParameter.HEADER,
            response=[301],
            required=True,
            description="The episode's path, with the request's query string.",
        ),
    ],
    responses={
        200: item_schema("EpisodeDetail", shapes.EpisodeDetailSerializer),
        301: OpenApiResponse(
            description="The path named the episode by its feed GUID (the id before path-safe "
            "ids): the episode is at `Location`."
        ),
    },
    description=(
        "`:id` is the episode_id. A path that names an episode by its feed `guid` (an old link) "
        "answers 301 to the episode_id's path. With include_transcript=true, `transcript` holds "
        "the stored transcript text (null until it has been fetched)."
    ),
)

LOGIN_POST = extend_schema(
    request=PolymorphicProxySerializer(
        component_name="Login",
        serializers=[shapes.EmailLogin, shapes.IdTokenLogin],
        resource_type_field_name=None,
    ),
    # "Try it out" starts from the first example: the first call, which asks for a code.
    examples=[
        OpenApiExample(
            "Ask for a code",
            value={"provider": "email", "email": "anna@example.se"},
            request_only=True,
        ),
        OpenApiExample(
            "Sign in with the code",
            value={"provider": "email", "email": "anna@example.se", "code": "123456"},
            request_only=True,
        ),
    ],
    responses={
        200: item_schema("LoginToken", shapes.TokenSerializer),
        202: item_schema("LoginCodeSent", shapes.CodeSentSerializer),
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

LOGOUT_POST = extend_schema(
    request=None,
    responses={204: None},
    description="Invalidates the token of this request (other devices stay logged in).",
)

ACCOUNT_DELETE = extend_schema(
    responses={204: None},
    description="Deletes the account, its logins, tokens and follows for good.",
)
