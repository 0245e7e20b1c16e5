"""OpenAPI additions for the compliance API, so that the schema describes every answer.

Each view's own documentation (parameters with the bounds their validators apply, its error
statuses, the conditional-read headers, its envelope) is one `@extend_schema` decorator at the
end of this module, so the views hold only their behaviour.
The hook `postprocess` adds what every operation shares: the error envelope components, the Bearer
scheme, 401/406/429/500/503, the rate-limit headers that ApiAccessMiddleware puts on every answer,
and `allowEmptyValue` on query parameters (an empty value counts as an absent one).
"""

from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers

from compliance_site.api import serializers as shapes
from compliance_site.api.errors import ERROR_CODES
from compliance_site.api.operations import name_operations
from compliance_site.api.polling_schema import CHANGES_CONDITIONAL_HEADERS
from compliance_site.api.serializers import MAX_INT
from compliance_site.api.state_payload import type_state_payloads
from compliance_site.records.documents import JURISDICTIONS

BEARER = "bearerAuth"
# Security requirement objects, which drf-spectacular takes though its hint says names.
KEY_REQUIRED: list[Any] = [{BEARER: []}]
# review_flags: no key needed, but a key that is presented must be valid (else 401).
KEY_OPTIONAL: list[Any] = [{}, {BEARER: []}]

_ERROR_REF = {"$ref": "#/components/schemas/ErrorEnvelope"}
_RATE_LIMIT_ERROR_REF = {"$ref": "#/components/schemas/RateLimitErrorEnvelope"}

# What each status means, with its codes. The views pick the ones they can answer.
ERRORS: dict[int, str] = {
    400: "Invalid parameter (`invalid_parameter`), cursor or sync token (`invalid_cursor`), or a "
    "request refused before any view, such as a host name not served (`bad_request`).",
    401: "Missing key where one is needed (`missing_api_key`), or a presented key that is "
    "unknown, revoked or malformed (`invalid_api_key`); sent with `WWW-Authenticate: Bearer`.",
    404: "Not a jurisdiction or no published record (`state_not_found`), no such version "
    "(`version_not_found`), no ESA program (`esa_program_not_found`), no webhook of this key "
    "(`webhook_not_found`), no delivery of this key's webhooks (`delivery_not_found`).",
    406: "The `Accept` header excludes JSON (`not_acceptable`).",
    409: "The key already has as many webhooks as it may have (`webhook_limit_reached`).",
    412: "An `If-Match` / `If-Unmodified-Since` precondition failed (`precondition_failed`).",
    415: "The request body is not JSON (`unsupported_media_type`).",
    413: "The request body is larger than the service accepts (`payload_too_large`).",
    429: "Rate limit exceeded (`rate_limit_exceeded`); `retry_after` and `Retry-After` say when "
    "to come back.",
    500: "Unexpected error (`internal_error`).",
    503: "The database cannot be reached (`service_unavailable`); retry after `Retry-After`.",
}
# Every operation can answer these (the body size, the key check and the limits run before any
# view).
_SHARED_ERRORS = (401, 406, 413, 429, 500, 503)


def errors(*statuses: int) -> dict[int, OpenApiResponse]:
    """The view's own error responses, for `@extend_schema(responses={200: ..., **errors(...)})`."""
    return {status: OpenApiResponse(_ERROR_REF, description=ERRORS[status]) for status in statuses}


NOT_MODIFIED = {
    304: OpenApiResponse(
        description="`If-None-Match` matches the ETag (or, without it, `If-Modified-Since` is "
        "not older than Last-Modified): no body; repeats ETag, Last-Modified, Cache-Control and "
        "Vary, and counts against the rate limit."
    )
}

ABBR = OpenApiParameter(
    "abbr",
    {"type": "string", "pattern": "^[A-Za-z]{2}$", "example": "TX"},
    OpenApiParameter.PATH,
    description=(
        "Jurisdiction abbreviation, case-insensitive: one of "
        + ", ".join(sorted(JURISDICTIONS))
        + ". Anything else is 404 `state_not_found`."
    ),
)
VERSION_NUMBER = OpenApiParameter(
    "number",
    {"type": "integer", "minimum": 1, "maximum": MAX_INT, "example": 1},
    OpenApiParameter.PATH,
    description="The version number. Not ASCII digits: 400 `invalid_parameter`; a number that is "
    "not one of the state's versions (0 and numbers above 2^31-1 included): 404.",
)
# Conditional reads of state records (compliance_site/api/conditional.py).
CONDITIONAL_REQUEST_HEADERS = [
    OpenApiParameter(
        "If-None-Match",
        # No example: "Try it out" would send it and read version 1 as an empty 304.
        {"type": "string"},
        OpenApiParameter.HEADER,
        description='ETags seen before (`"TX-v3"`, a list, `*`, weak `W/` tags): 304 on a match.',
    ),
    OpenApiParameter(
        "If-Modified-Since",
        str,
        OpenApiParameter.HEADER,
        description="An HTTP date; ignored when `If-None-Match` is sent or the date is invalid.",
    ),
]
CONDITIONAL_RESPONSE_HEADERS = [
    OpenApiParameter(
        "ETag",
        {"type": "string", "pattern": '^"[A-Z]{2}-v[0-9]+"$'},
        OpenApiParameter.HEADER,
        required=True,
        description='`"<ABBR>-v<version>"`.',
        response=[200, 304],
    ),
    OpenApiParameter(
        "Last-Modified",
        str,
        OpenApiParameter.HEADER,
        required=True,
        description="The version's committed_at as an HTTP date.",
        response=[200, 304],
    ),
    OpenApiParameter(
        "Cache-Control",
        {"type": "string", "enum": ["private, no-cache", "private, max-age=31536000, immutable"]},
        OpenApiParameter.HEADER,
        required=True,
        description="`private, no-cache` for live and `as_of` reads (revalidate with the ETag); "
        "`private, max-age=31536000, immutable` for a pinned version.",
        response=[200, 304],
    ),
]

_INTEGER = {"type": "integer"}
_RATE_LIMIT_HEADERS = {
    "X-RateLimit-Limit": (
        "The limit per minute of the key, or of the client IP without one.",
        _INTEGER,
    ),
    "X-RateLimit-Remaining": ("Requests left in the current one-minute window.", _INTEGER),
    "X-RateLimit-Reset": ("When the window ends, in Unix epoch seconds.", _INTEGER),
    "RateLimit-Policy": ('IETF form of the policy: `"per-key";q=60;w=60`.', {"type": "string"}),
    "RateLimit": ('IETF form of the usage: `"per-key";r=59;t=42`.', {"type": "string"}),
}
_RETRY_AFTER = {
    "description": "Seconds to wait before trying again.",
    "required": True,
    "schema": {"type": "integer", "minimum": 0},
}


def _error_schemas() -> dict[str, Any]:
    detail = {
        "type": "object",
        "required": ["code", "message"],
        "properties": {
            "code": {"type": "string", "enum": list(ERROR_CODES)},
            "message": {"type": "string"},
        },
    }
    rate_limited = {
        "type": "object",
        "required": ["code", "message", "retry_after"],
        "properties": {
            "code": {"type": "string", "enum": ["rate_limit_exceeded"]},
            "message": {"type": "string"},
            "retry_after": {"type": "integer", "minimum": 0, "description": "Seconds."},
        },
    }
    return {
        "ErrorEnvelope": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": detail},
            "description": "The body of every error answer.",
        },
        "RateLimitErrorEnvelope": {
            "type": "object",
            "required": ["error"],
            "properties": {"error": rate_limited},
        },
    }


def _shared_error(status: int) -> dict[str, Any]:
    response: dict[str, Any] = {
        "description": ERRORS[status],
        "content": {
            "application/json": {"schema": _RATE_LIMIT_ERROR_REF if status == 429 else _ERROR_REF}
        },
    }
    if status in (429, 503):
        response["headers"] = {"Retry-After": dict(_RETRY_AFTER)}
    if status == 401:
        response["headers"] = {
            "WWW-Authenticate": {
                "description": 'Bearer realm="compliance"',
                "required": True,
                "schema": {"type": "string", "pattern": "^Bearer "},
            }
        }
    return response


def postprocess(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    components = result.setdefault("components", {})
    components.setdefault("schemas", {}).update(_error_schemas())
    type_state_payloads(components["schemas"])
    name_operations(result.get("paths", {}))
    components.setdefault("securitySchemes", {})[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "An API key (`Authorization: Bearer <API_KEY>`). Requests without a valid "
        "key are limited per client IP; a key that is presented but not valid is 401.",
    }
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            operation.setdefault("security", KEY_REQUIRED)
            for parameter in operation.get("parameters", []):
                if parameter["in"] == "query":
                    # The views read `?limit=` like no `limit` at all (DRF, required=False).
                    parameter["allowEmptyValue"] = True
            responses = operation.setdefault("responses", {})
            for status in _SHARED_ERRORS:
                responses.setdefault(str(status), _shared_error(status))
            for response in responses.values():
                # Missing only while the shared cache is down (the limits fail open).
                headers = response.setdefault("headers", {})
                for name, (description, schema) in _RATE_LIMIT_HEADERS.items():
                    headers.setdefault(name, {"description": description, "schema": schema})
    return result


# Per-operation documentation, one decorator per view (compliance_site/api/views.py). ---------

_API_META = inline_serializer("ApiMeta", {"api_version": serializers.CharField()})
STATE_RESPONSE = inline_serializer(
    "StateEnvelope",
    {
        "data": serializers.DictField(help_text="The state payload (see the state schema)."),
        "meta": shapes.VersionMetaSerializer(),
    },
)


META = extend_schema(
    responses=inline_serializer(
        "MetaEnvelope",
        {"data": shapes.DatasetMetadataSerializer(), "meta": _API_META},
    )
)
STATE = extend_schema(
    parameters=[
        ABBR,
        shapes.StateReadParams,
        *CONDITIONAL_REQUEST_HEADERS,
        *CONDITIONAL_RESPONSE_HEADERS,
    ],
    responses={200: STATE_RESPONSE, **NOT_MODIFIED, **errors(400, 404, 412)},
    description=(
        "The live record, a pinned `version`, or the record `as_of` a date (the highest "
        "version released on or before that day). Sending both is a 400. The abbreviation "
        "is case-insensitive. A pinned version is served `Cache-Control: immutable`. "
        "Conditional reads follow RFC 9110: `If-None-Match` / `If-Modified-Since` give 304, "
        "a failed `If-Match` / `If-Unmodified-Since` 412."
    ),
)
STATE_VERSIONS = extend_schema(
    operation_id="states_versions_list",
    parameters=[ABBR],
    responses={
        200: inline_serializer(
            "VersionListEnvelope",
            {
                "data": shapes.VersionListItemSerializer(many=True),
                "meta": inline_serializer(
                    "VersionListMeta",
                    {"api_version": serializers.CharField(), "count": serializers.IntegerField()},
                ),
            },
        ),
        **errors(404),
    },
)
STATE_VERSION = extend_schema(
    parameters=[
        ABBR,
        VERSION_NUMBER,
        *CONDITIONAL_REQUEST_HEADERS,
        *CONDITIONAL_RESPONSE_HEADERS,
    ],
    responses={200: STATE_RESPONSE, **NOT_MODIFIED, **errors(400, 404, 412)},
)
ESA_PROGRAMS = extend_schema(
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
ESA_PROGRAM = extend_schema(
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
CITATION = extend_schema(
    parameters=[ABBR],
    responses={
        200: inline_serializer(
            "CitationEnvelope",
            {"data": shapes.CitationSerializer(), "meta": shapes.VersionMetaSerializer()},
        ),
        **errors(404),
    },
)
CHANGES = extend_schema(
    parameters=[
        shapes.ChangeFeedParams,
        *CHANGES_CONDITIONAL_HEADERS,
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
        **NOT_MODIFIED,
        **errors(400),
    },
)
REVIEW_FLAGS = extend_schema(
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
