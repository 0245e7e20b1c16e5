"""Whole-dataset reads: every state in one answer, live, `as_of` a day, or as the change feed
stood at a `sync_token` (docs/compliance-integrators.md, "Whole-dataset reads").

JSON (the envelope, `data` a list of the payloads the single state read answers) or NDJSON
(`Accept: application/x-ndjson` or `?format=ndjson`: one line per state, each line exactly the
body of `GET /states/:abbr` at the same moment). One request, counted once by the per-key
limiter like any other; an ETag over the versions served answers 304 on a match.
"""

import hashlib
import json
from collections.abc import Mapping
from typing import Any

from django.http import Http404, HttpResponse
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import renderers, serializers
from rest_framework.exceptions import NotAcceptable
from rest_framework.request import Request
from rest_framework.response import Response

from compliance_site.api import schema
from compliance_site.api import serializers as shapes
from compliance_site.api.conditional import conditional_response
from compliance_site.api.errors import ApiError, InvalidParameter
from compliance_site.api.views import KeyedView
from compliance_site.records import selectors
from compliance_site.records.changefeed import InvalidToken, sync_token_decode, sync_token_encode
from compliance_site.records.models import ResourceType, ResourceVersion

NDJSON = "application/x-ndjson"


class NdjsonRenderer(renderers.BaseRenderer):
    media_type = NDJSON
    format = "ndjson"
    charset = None

    def render(
        self,
        data: Any,
        accepted_media_type: str | None = None,
        renderer_context: Mapping[str, Any] | None = None,
    ) -> bytes:
        lines = data if isinstance(data, list) else [data]
        return b"".join(
            json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"
            for line in lines
        )


class DatasetReadParams(serializers.Serializer[Any]):
    as_of = serializers.DateField(
        required=False,
        input_formats=["iso-8601"],
        help_text="Each state's highest version released on or before this day (what "
        "`GET /states/:abbr?as_of=` answers); states with none are left out.",
    )
    sync_token = serializers.CharField(
        required=False,
        max_length=512,
        trim_whitespace=False,
        help_text="`meta.sync_token` of a change-feed page or of an earlier whole-dataset read: "
        "the dataset as it stood when that token was issued.",
    )


def _etag(versions: list[ResourceVersion], media: str) -> str:
    served = ",".join(f"{v.resource_key}-v{v.version}" for v in versions)
    digest = hashlib.sha256(f"{media}|{served}".encode()).hexdigest()[:32]
    return f'"states-{digest}"'


class _VersionItemSerializer(serializers.Serializer[Any]):
    version = serializers.IntegerField()
    released_at = serializers.DateField()
    git_sha = serializers.CharField()
    payload_schema_version = serializers.CharField(
        help_text="The state schema major the payload was written under."
    )


STATES_DATASET = extend_schema(
    operation_id="states_dataset",
    parameters=[
        DatasetReadParams,
        OpenApiParameter(
            "format",
            {"type": "string", "enum": ["json", "ndjson"]},
            description="`ndjson`: one line per state (same as `Accept: application/x-ndjson`).",
        ),
        schema.CONDITIONAL_REQUEST_HEADERS[0],
    ],
    responses={
        (200, "application/json"): OpenApiResponse(
            inline_serializer(
                "StateDatasetEnvelope",
                {
                    "data": serializers.ListField(
                        child=serializers.DictField(), help_text="The state payloads by key."
                    ),
                    "meta": inline_serializer(
                        "StateDatasetMeta",
                        {
                            "api_version": serializers.CharField(),
                            "count": serializers.IntegerField(),
                            "as_of": serializers.DateField(required=False),
                            "sync_token": serializers.CharField(
                                required=False,
                                help_text="Live and sync_token reads: the change-feed "
                                "position this answer reflects.",
                            ),
                            "versions": serializers.DictField(
                                child=_VersionItemSerializer(),
                                help_text="Each state's version, by abbreviation.",
                            ),
                        },
                    ),
                },
            ),
            description="`data`: the payloads `GET /states/:abbr` answers; `meta.versions`: "
            "what that read's meta says for each.",
        ),
        (200, NDJSON): OpenApiResponse(
            schema.STATE_RESPONSE,
            description="One line per state, each exactly the body of `GET /states/:abbr`.",
        ),
        **schema.NOT_MODIFIED,
        **schema.errors(400),
    },
    description="Every state in one answer (counted as one request): live, `as_of` a day, "
    "as the change feed stood at a `sync_token`, or both (the versions released by that day "
    "and published by that token). ETag over the versions served; 304 on match.",
)


class StateDatasetView(KeyedView):
    renderer_classes = [renderers.JSONRenderer, NdjsonRenderer]

    @STATES_DATASET
    def get(self, request: Request) -> HttpResponse:
        params = DatasetReadParams(data=request.query_params)
        if not params.is_valid():
            field, messages = next(iter(params.errors.items()))
            raise InvalidParameter(f"{field}: {messages[0]}")
        day = params.validated_data.get("as_of")
        token = params.validated_data.get("sync_token")
        try:
            sequence = sync_token_decode(token) if token is not None else None
        except InvalidToken as exc:
            raise ApiError(str(exc), code="invalid_cursor") from exc
        if day is None and sequence is None:
            # Pinned to the feed's high-water mark, so meta.sync_token names exactly this set.
            sequence = selectors.change_feed_high_water()
        versions = selectors.resources_at(
            resource_type=ResourceType.STATE, day=day, sequence=sequence
        )
        media = request.accepted_renderer.media_type
        if media == NDJSON:
            body: Any = [{"data": v.payload, "meta": shapes.version_meta(v)} for v in versions]
        else:
            meta: dict[str, Any] = {"count": len(versions)}
            if day is not None:
                meta["as_of"] = day.isoformat()
            if sequence is not None:
                meta["sync_token"] = sync_token_encode(sequence)
            meta["versions"] = {v.resource_key: _version_item(v) for v in versions}
            body = {
                "data": [v.payload for v in versions],
                "meta": {"api_version": shapes.API_VERSION, **meta},
            }
        response = Response(body)
        response["Cache-Control"] = "private, no-cache"
        response["Vary"] = "Accept, Authorization"
        last = max((v.committed_at for v in versions), default=None)
        if last is None:
            return response
        return conditional_response(
            request, response, etag=_etag(versions, media), last_modified=last
        )

    def perform_content_negotiation(
        self, request: Request, force: bool = False
    ) -> tuple[renderers.BaseRenderer, str]:
        try:
            return super().perform_content_negotiation(request, force)
        except Http404 as exc:
            # DRF answers an unknown ?format= with 404; the resource exists, the form does not.
            raise NotAcceptable("format must be json or ndjson") from exc

    def finalize_response(
        self, request: Request, response: Response, *args: Any, **kwargs: Any
    ) -> Response:
        # Errors are the API's JSON envelope whatever was negotiated for the data.
        if response.status_code >= 400 and getattr(request, "accepted_renderer", None):
            request.accepted_renderer = renderers.JSONRenderer()
            request.accepted_media_type = "application/json"
        return super().finalize_response(request, response, *args, **kwargs)


def _version_item(version: ResourceVersion) -> dict[str, Any]:
    meta = shapes.version_meta(version)
    del meta["api_version"]
    return meta
