"""The compliance API. Views only translate HTTP to selector calls and shapes to JSON; their
OpenAPI documentation is in compliance_site/api/schema.py, and "no such state" versus "no such
version" is decided by records.selectors.resource_read (the error handler renders it)."""

from typing import Any, NoReturn, cast

from django.conf import settings
from django.http import HttpResponse
from django.utils import timezone
from rest_framework.exceptions import NotAuthenticated
from rest_framework.permissions import BasePermission
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer
from rest_framework.views import APIView

from compliance_site.api import schema
from compliance_site.api import serializers as shapes
from compliance_site.api.conditional import conditional_response
from compliance_site.api.errors import ApiError, InvalidParameter, NotFound
from compliance_site.monitoring.review_cache import REVIEW_REPORT_SECONDS, review_report_cached
from compliance_site.monitoring.selectors import recent_snapshots, review_report
from compliance_site.records import selectors
from compliance_site.records.changefeed import (
    FeedFilters,
    InvalidToken,
    change_page,
    sync_token_decode,
)
from compliance_site.records.models import ResourceType, ResourceVersion

_LIVE_CACHE = "private, no-cache"
_PINNED_CACHE = "private, max-age=31536000, immutable"


class HasApiKey(BasePermission):
    """Set by ApiAccessMiddleware, which already answered 401 for a key that is not valid."""

    def has_permission(self, request: Request, view: APIView) -> bool:
        return getattr(request._request, "api_key", None) is not None

    message = "this endpoint needs an API key: send 'Authorization: Bearer <API_KEY>'"


class KeyedView(APIView):
    permission_classes = [HasApiKey]

    def permission_denied(
        self, request: Request, message: str | None = None, code: str | None = None
    ) -> NoReturn:
        raise NotAuthenticated(HasApiKey.message)

    def get_authenticate_header(self, request: Request) -> str:
        # Without it DRF turns a missing credential into 403.
        return 'Bearer realm="compliance"'


def _envelope(data: Any, **meta: Any) -> dict[str, Any]:
    return {"data": data, "meta": {"api_version": shapes.API_VERSION, **meta}}


def _params(serializer_class: type[Serializer[Any]], request: Request) -> dict[str, Any]:
    params = serializer_class(data=request.query_params)
    if not params.is_valid():
        raise InvalidParameter(_first_error(params.errors))
    validated: dict[str, Any] = params.validated_data
    return validated


def _first_error(errors: dict[str, Any]) -> str:
    field, messages = next(iter(errors.items()))
    message = messages[0] if isinstance(messages, list) else str(messages)
    return str(message) if field == "non_field_errors" else f"{field}: {message}"


def _state_response(request: Request, version: ResourceVersion, cache_control: str) -> HttpResponse:
    response = Response(_envelope(version.payload, **shapes.version_meta(version)))
    response["Cache-Control"] = cache_control
    response["Vary"] = "Authorization"
    return conditional_response(
        request,
        response,
        etag=f'"{version.resource_key}-v{version.version}"',
        last_modified=version.committed_at,
    )


class MetaView(KeyedView):
    @schema.META
    def get(self, request: Request) -> Response:
        data = shapes.DatasetMetadataSerializer(selectors.dataset_metadata()).data
        return Response(_envelope(data))


class StateView(KeyedView):
    @schema.STATE
    def get(self, request: Request, abbr: str) -> HttpResponse:
        key = selectors.jurisdiction_key(abbr)
        params = _params(shapes.StateReadParams, request)
        version = selectors.resource_read(
            resource_type=ResourceType.STATE,
            key=key,
            version=params.get("version"),
            day=params.get("as_of"),
        )
        pinned = "version" in params
        return _state_response(request, version, _PINNED_CACHE if pinned else _LIVE_CACHE)


class StateVersionListView(KeyedView):
    @schema.STATE_VERSIONS
    def get(self, request: Request, abbr: str) -> Response:
        key = selectors.jurisdiction_key(abbr)
        rows = selectors.resource_versions(resource_type=ResourceType.STATE, key=key).values(
            *shapes.CHANGE_EVENT_COLUMNS, "payload_schema_version"
        )
        data = [shapes.version_list_item_shape(row) for row in rows]
        if not data:
            raise selectors.UnknownState(f"no published record for {key}")
        return Response(_envelope(data, count=len(data)))


class StateVersionView(KeyedView):
    @schema.STATE_VERSION
    def get(self, request: Request, abbr: str, number: str) -> HttpResponse:
        key = selectors.jurisdiction_key(abbr)
        if not number.isascii() or not number.isdigit():
            raise InvalidParameter("the version must be a positive integer")
        version = selectors.resource_read(
            resource_type=ResourceType.STATE, key=key, version=int(number[:20])
        )
        return _state_response(request, version, _PINNED_CACHE)


class EsaProgramListView(KeyedView):
    @schema.ESA_PROGRAMS
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
    @schema.ESA_PROGRAM
    def get(self, request: Request, abbr: str) -> Response:
        key = selectors.jurisdiction_key(abbr)
        state = selectors.resource_read(resource_type=ResourceType.STATE, key=key)
        program = selectors.resource_live(resource_type=ResourceType.ESA_PROGRAM, key=key)
        if program is None or program.payload is None:
            raise NotFound(f"{key} has no ESA program", code="esa_program_not_found")
        data = shapes.esa_program_shape(program, cast(dict[str, Any], state.payload)["name"])
        return Response(_envelope(data, **shapes.version_meta(program)))


class CitationView(KeyedView):
    @schema.CITATION
    def get(self, request: Request, abbr: str) -> Response:
        key = selectors.jurisdiction_key(abbr)
        citation = selectors.resource_read(resource_type=ResourceType.CITATION, key=key)
        record = {
            "state_abbreviation": key,
            "state_name": selectors.state_names([key]).get(key, ""),
            "source_urls": cast(dict[str, Any], citation.payload)["source_urls"],
            "recent_snapshots": recent_snapshots(state_abbreviation=key),
        }
        data = shapes.CitationSerializer(record).data
        return Response(_envelope(data, **shapes.version_meta(citation)))


class ChangeFeedView(KeyedView):
    @schema.CHANGES
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
        response = Response(_envelope(data, **meta))
        if page.next_cursor:
            response["Link"] = f'<{_with_cursor(request, page.next_cursor)}>; rel="next"'
        # Pollers revalidate every answer (the ETag is the body's), and wait this long between
        # passes that found nothing new (docs/compliance-integrators.md).
        response["Cache-Control"] = _LIVE_CACHE
        response["X-Poll-Interval"] = str(settings.COMPLIANCE_POLL_INTERVAL_SECONDS)
        return response

    # A 304 is Django's HttpResponseNotModified, not a DRF Response; dispatch returns either.
    def finalize_response(  # type: ignore[override]
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> HttpResponse:
        response = super().finalize_response(request, response, *args, **kwargs)
        if response.status_code != 200:
            return response
        # The ETag is the hash of the rendered page, so it changes exactly when the page would.
        response.render()
        return conditional_response(request, response)


def _with_cursor(request: Request, cursor: str) -> str:
    query = request.GET.copy()
    query["cursor"] = cursor
    return request.build_absolute_uri(f"{request.path}?{query.urlencode()}")


class ReviewFlagsView(APIView):
    @schema.REVIEW_FLAGS
    def get(self, request: Request) -> Response:
        response = Response(review_report_cached(_review_report_body))
        response["Cache-Control"] = f"public, max-age={REVIEW_REPORT_SECONDS}"
        return response


def _review_report_body() -> dict[str, Any]:
    report = shapes.ReviewReportSerializer(review_report(now=timezone.now())).data
    return _envelope(report, count_flagged=len(report["flagged"]), count_stale=len(report["stale"]))
