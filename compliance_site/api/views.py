"""The compliance API. Views only translate HTTP to selector calls and shapes to JSON."""

from typing import Any

from django.utils import timezone
from drf_spectacular.utils import OpenApiParameter, extend_schema, inline_serializer
from rest_framework import serializers
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from compliance_site.api import serializers as shapes
from compliance_site.api.conditional import conditional_response
from compliance_site.api.errors import ApiError, InvalidParameter, NotFound
from compliance_site.api.schema import (
    ABBR,
    CONDITIONAL_REQUEST_HEADERS,
    CONDITIONAL_RESPONSE_HEADERS,
    KEY_OPTIONAL,
    NOT_MODIFIED,
    VERSION_NUMBER,
    errors,
)
from compliance_site.monitoring.selectors import recent_snapshots, review_report
from compliance_site.monitoring.services import REVIEW_REPORT_CACHE_KEY
from compliance_site.records import selectors
from compliance_site.records.changefeed import (
    FeedFilters,
    InvalidToken,
    change_page,
    sync_token_decode,
)
from compliance_site.records.documents import SCHEMA_VERSION
from compliance_site.records.models import ResourceType, ResourceVersion
from shared import cache

REVIEW_REPORT_SECONDS = 300
_LIVE_CACHE = "private, no-cache"
_PINNED_CACHE = "private, max-age=31536000, immutable"


class HasApiKey(BasePermission):
    """Set by ApiAccessMiddleware, which already answered 401 for a key that is not valid."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return getattr(request._request, "api_key", None) is not None

    message = "this endpoint needs an API key: send 'Authorization: Bearer <API_KEY>'"


class KeyedView(APIView):
    permission_classes = [HasApiKey]

    def permission_denied(self, request: Request, message: str | None = None, code=None):
        raise NotAuthenticated(HasApiKey.message)

    def get_authenticate_header(self, request: Request) -> str:
        # Without it DRF turns a missing credential into 403.
        return 'Bearer realm="compliance"'


def _envelope(data: Any, **meta: Any) -> dict:
    return {"data": data, "meta": {"api_version": shapes.API_VERSION, **meta}}


def _params(serializer_class, request: Request) -> dict:
    params = serializer_class(data=request.query_params)
    if not params.is_valid():
        raise InvalidParameter(_first_error(params.errors))
    return params.validated_data


def _first_error(errors: dict) -> str:
    field, messages = next(iter(errors.items()))
    message = messages[0] if isinstance(messages, list) else str(messages)
    return str(message) if field == "non_field_errors" else f"{field}: {message}"


def _jurisdiction(abbr: str) -> str:
    # ASCII first: str.upper() maps some letters to two ("\ufb02" gives "FL").
    key = selectors.jurisdiction_normalize(abbr) if abbr.isascii() else None
    if key is None:
        raise NotFound(
            f"no jurisdiction with the abbreviation '{abbr[:10]}'", code="state_not_found"
        )
    return key


def _live(resource_type: str, key: str) -> ResourceVersion:
    version = selectors.resource_live(resource_type=resource_type, key=key)
    if version is None:
        raise NotFound(f"no published record for {key}", code="state_not_found")
    return version


def _state_response(request: Request, version: ResourceVersion, cache_control: str) -> Response:
    response = Response(_envelope(version.payload, **shapes.version_meta(version)))
    response["Cache-Control"] = cache_control
    response["Vary"] = "Authorization"
    return conditional_response(
        request,
        response,
        etag=f'"{version.resource_key}-v{version.version}"',
        last_modified=version.committed_at,
    )


_API_META = inline_serializer("ApiMeta", {"api_version": serializers.CharField()})
_STATE_RESPONSE = inline_serializer(
    "StateEnvelope",
    {
        "data": serializers.DictField(help_text="The state payload (see the state schema)."),
        "meta": shapes.VersionMetaSerializer(),
    },
)


class MetaView(KeyedView):
    @extend_schema(
        responses=inline_serializer(
            "MetaEnvelope",
            {"data": shapes.DatasetMetadataSerializer(), "meta": _API_META},
        )
    )
    def get(self, request: Request) -> Response:
        metadata = selectors.dataset_metadata()
        data = shapes.DatasetMetadataSerializer({**metadata, "schema_version": SCHEMA_VERSION}).data
        return Response(_envelope(data))


class StateView(KeyedView):
    @extend_schema(
        parameters=[
            ABBR,
            shapes.StateReadParams,
            *CONDITIONAL_REQUEST_HEADERS,
            *CONDITIONAL_RESPONSE_HEADERS,
        ],
        responses={200: _STATE_RESPONSE, **NOT_MODIFIED, **errors(400, 404, 412)},
        description=(
            "The live record, a pinned `version`, or the record `as_of` a date (the highest "
            "version released on or before that day). Sending both is a 400. The abbreviation "
            "is case-insensitive. A pinned version is served `Cache-Control: immutable`. "
            "Conditional reads follow RFC 9110: `If-None-Match` / `If-Modified-Since` give 304, "
            "a failed `If-Match` / `If-Unmodified-Since` 412."
        ),
    )
    def get(self, request: Request, abbr: str) -> Response:
        key = _jurisdiction(abbr)
        params = _params(shapes.StateReadParams, request)
        if "version" in params:
            version = selectors.resource_version(
                resource_type=ResourceType.STATE, key=key, version=params["version"]
            )
            if version is None:
                _live(ResourceType.STATE, key)
                raise NotFound(
                    f"{key} has no version {params['version']}", code="version_not_found"
                )
            return _state_response(request, version, _PINNED_CACHE)
        if "as_of" in params:
            version = selectors.resource_as_of(
                resource_type=ResourceType.STATE, key=key, day=params["as_of"]
            )
            if version is None:
                _live(ResourceType.STATE, key)
                raise NotFound(
                    f"{key} had no published version on {params['as_of'].isoformat()}",
                    code="version_not_found",
                )
            return _state_response(request, version, _LIVE_CACHE)
        return _state_response(request, _live(ResourceType.STATE, key), _LIVE_CACHE)


class StateVersionListView(KeyedView):
    @extend_schema(
        operation_id="states_versions_list",
        parameters=[ABBR],
        responses={
            200: inline_serializer(
                "VersionListEnvelope",
                {
                    "data": shapes.VersionListItemSerializer(many=True),
                    "meta": inline_serializer(
                        "VersionListMeta",
                        {
                            "api_version": serializers.CharField(),
                            "count": serializers.IntegerField(),
                        },
                    ),
                },
            ),
            **errors(404),
        },
    )
    def get(self, request: Request, abbr: str) -> Response:
        key = _jurisdiction(abbr)
        rows = selectors.resource_versions(resource_type=ResourceType.STATE, key=key).values(
            *shapes.CHANGE_EVENT_COLUMNS, "payload_schema_version"
        )
        data = [shapes.version_list_item_shape(row) for row in rows]
        if not data:
            raise NotFound(f"no published record for {key}", code="state_not_found")
        return Response(_envelope(data, count=len(data)))


class StateVersionView(KeyedView):
    @extend_schema(
        parameters=[
            ABBR,
            VERSION_NUMBER,
            *CONDITIONAL_REQUEST_HEADERS,
            *CONDITIONAL_RESPONSE_HEADERS,
        ],
        responses={200: _STATE_RESPONSE, **NOT_MODIFIED, **errors(400, 404, 412)},
    )
    def get(self, request: Request, abbr: str, number: str) -> Response:
        key = _jurisdiction(abbr)
        if not number.isascii() or not number.isdigit():
            raise InvalidParameter(
                "the version must be a positive integer", code="invalid_parameter"
            )
        wanted = int(number)
        version = None
        if 1 <= wanted <= shapes.MAX_INT:
            version = selectors.resource_version(
                resource_type=ResourceType.STATE, key=key, version=wanted
            )
        if version is None:
            _live(ResourceType.STATE, key)
            raise NotFound(f"{key} has no version {number[:20]}", code="version_not_found")
        return _state_response(request, version, _PINNED_CACHE)


class EsaProgramListView(KeyedView):
    @extend_schema(
        operation_id="esa_programs_list",
        responses=inline_serializer(
            "EsaProgramListEnvelope",
            {
                "data": shapes.EsaProgramSerializer(many=True),
                "meta": inline_serializer(
                    "EsaListMeta",
                    {"api_version": serializers.CharField(), "count": serializers.IntegerField()},
                ),
            },
        ),
    )
    def get(self, request: Request) -> Response:
        programs = [
            resource.current
            for resource in selectors.live_resources(resource_type=ResourceType.ESA_PROGRAM)
            if resource.current.payload is not None
        ]
        names = selectors.state_names([program.resource_key for program in programs])
        data = [shapes.esa_program_shape(p, names.get(p.resource_key, "")) for p in programs]
        return Response(_envelope(data, count=len(data)))


class EsaProgramView(KeyedView):
    @extend_schema(
        parameters=[ABBR],
        responses={
            200: inline_serializer(
                "EsaProgramEnvelope",
                {"data": shapes.EsaProgramSerializer(), "meta": shapes.VersionMetaSerializer()},
            ),
            **errors(404),
        },
        description="404 `esa_program_not_found` when the state exists but has no ESA program.",
    )
    def get(self, request: Request, abbr: str) -> Response:
        key = _jurisdiction(abbr)
        state = _live(ResourceType.STATE, key)
        program = selectors.resource_live(resource_type=ResourceType.ESA_PROGRAM, key=key)
        if program is None or program.payload is None:
            raise NotFound(f"{key} has no ESA program", code="esa_program_not_found")
        data = shapes.esa_program_shape(program, state.payload["name"])
        return Response(_envelope(data, **shapes.version_meta(program)))


class CitationView(KeyedView):
    @extend_schema(
        parameters=[ABBR],
        responses={
            200: inline_serializer(
                "CitationEnvelope",
                {"data": shapes.CitationSerializer(), "meta": shapes.VersionMetaSerializer()},
            ),
            **errors(404),
        },
    )
    def get(self, request: Request, abbr: str) -> Response:
        key = _jurisdiction(abbr)
        citation = _live(ResourceType.CITATION, key)
        names = selectors.state_names([key])
        record = {
            "state_abbreviation": key,
            "state_name": names.get(key, ""),
            "source_urls": citation.payload["source_urls"],
            "recent_snapshots": recent_snapshots(state_abbreviation=key),
        }
        data = shapes.CitationSerializer(record).data
        return Response(_envelope(data, **shapes.version_meta(citation)))


class ChangeFeedView(KeyedView):
    @extend_schema(
        parameters=[
            shapes.ChangeFeedParams,
            OpenApiParameter(
                "since",
                {"type": "string", "format": "date-time", "maxLength": 64},
                description="Keeps events with committed_at >= since. An ISO 8601 timestamp "
                "(without an offset: UTC; a `+` decoded to a space is repaired).",
            ),
        ],
        responses={
            200: inline_serializer(
                "ChangeFeedEnvelope",
                {
                    "data": shapes.ChangeEventSerializer(many=True),
                    "meta": inline_serializer(
                        "ChangeFeedMeta",
                        {
                            "api_version": serializers.CharField(),
                            "count": serializers.IntegerField(help_text="Events in this page."),
                            "next_cursor": serializers.CharField(required=False),
                            "sync_token": serializers.CharField(),
                        },
                    ),
                },
            ),
            **errors(400),
        },
    )
    def get(self, request: Request) -> Response:
        params = _params(shapes.ChangeFeedParams, request)
        try:
            after = sync_token_decode(params["sync_token"]) if "sync_token" in params else None
            filters = FeedFilters(
                since=params.get("since"),
                resource_type=params.get("resource_type"),
                after_sequence=after,
            )
            page = change_page(
                filters=filters,
                limit=params["limit"],
                columns=shapes.CHANGE_EVENT_COLUMNS,
                cursor=params.get("cursor"),
            )
        except InvalidToken as exc:
            raise ApiError(str(exc), code="invalid_cursor") from exc
        data = [shapes.change_event_shape(row) for row in page.events]
        meta: dict[str, Any] = {"count": len(data), "sync_token": page.sync_token}
        if page.next_cursor:
            meta["next_cursor"] = page.next_cursor
        return Response(_envelope(data, **meta))


class ReviewFlagsView(APIView):
    @extend_schema(
        auth=KEY_OPTIONAL,
        responses=inline_serializer(
            "ReviewFlagsEnvelope",
            {
                "data": shapes.ReviewReportSerializer(),
                "meta": inline_serializer(
                    "ReviewFlagsMeta",
                    {
                        "api_version": serializers.CharField(),
                        "count_flagged": serializers.IntegerField(),
                        "count_stale": serializers.IntegerField(),
                    },
                ),
            },
        ),
        description="Public: no key needed, but a key that is sent must be valid (else 401). "
        "Cached for 5 minutes.",
    )
    def get(self, request: Request) -> Response:
        body = cache.get(REVIEW_REPORT_CACHE_KEY)
        if body is None:
            report = shapes.ReviewReportSerializer(review_report(now=timezone.now())).data
            body = _envelope(
                report, count_flagged=len(report["flagged"]), count_stale=len(report["stale"])
            )
            cache.set(REVIEW_REPORT_CACHE_KEY, body, REVIEW_REPORT_SECONDS)
        response = Response(body)
        response["Cache-Control"] = f"public, max-age={REVIEW_REPORT_SECONDS}"
        return response
