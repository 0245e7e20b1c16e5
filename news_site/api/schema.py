"""OpenAPI additions: the Bearer scheme, the error envelope on every /api/v1 operation, and
the legacy JSON endpoints (plain Django views, which drf-spectacular cannot see)."""

from typing import Any

from drf_spectacular.extensions import OpenApiAuthenticationExtension

from news_site.api.errors import ERROR_TYPES, ErrorType
from news_site.api.operations import name_operations


class BearerScheme(OpenApiAuthenticationExtension):
    target_class = "news_site.accounts.authentication.BearerAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema) -> dict[str, str]:
        return {"type": "http", "scheme": "bearer", "description": "An opaque token."}


_ERRORS = {
    "400": "Invalid parameter or body (`invalid_parameter`, `invalid_request`, "
    "`token_in_query`, `provider_not_configured`).",
    "401": "Missing, malformed, unknown, expired or revoked token, or a failed login "
    "(`not_authenticated`, `invalid_token`, `invalid_code`, `invalid_id_token`); "
    "sent with `WWW-Authenticate: Bearer`.",
    "404": "Unknown resource or path (`not_found`).",
    "405": "Method not allowed (`method_not_allowed`).",
    "406": "Not acceptable (`not_acceptable`).",
    "413": "Request body larger than the service accepts (`payload_too_large`).",
    "415": "Unsupported media type (`unsupported_media_type`).",
    "429": "Rate limit exceeded (`rate_limited`), with `Retry-After`.",
    "500": "Unexpected error (`internal_error`).",
    "503": "The login provider's keys are unavailable (`provider_unavailable`), or the mail "
    "relay refused a login code or the database is unreachable (`service_unavailable`); "
    "with `Retry-After`.",
}
# Each status's example answer (without one, the reference shows the enum's first value,
# `invalid_parameter`, under every status).
_ERROR_EXAMPLES: dict[str, tuple[ErrorType, str]] = {
    "400": ("invalid_parameter", "per_page: Ensure this value is less than or equal to 100."),
    "401": ("not_authenticated", "this endpoint needs 'Authorization: Bearer <token>'"),
    "404": ("not_found", "no entry 12345"),
    "405": ("method_not_allowed", 'Method "PUT" not allowed.'),
    "406": ("not_acceptable", "Could not satisfy the request Accept header."),
    "413": ("payload_too_large", "request body larger than 1048576 bytes"),
    "415": ("unsupported_media_type", 'Unsupported media type "text/plain" in request.'),
    "429": ("rate_limited", "too many searches; retry after the time in Retry-After"),
    "500": ("internal_error", "an unexpected error occurred"),
    "503": ("service_unavailable", "the service is briefly unavailable; retry shortly"),
}
_ERROR_SCHEMA = {
    "type": "object",
    "required": ["error", "meta"],
    "properties": {
        "error": {
            "type": "object",
            "required": ["type", "message"],
            "properties": {
                "type": {"type": "string", "enum": list(ERROR_TYPES)},
                "message": {"type": "string"},
            },
        },
        "meta": {
            "type": "object",
            "required": ["api_version"],
            "properties": {"api_version": {"type": "string"}},
        },
    },
}


def _legacy_entry() -> dict[str, Any]:
    text = {"type": "string"}
    return {
        "type": "object",
        "required": ["id", "title", "url", "image", "summary", "source", "source_id"],
        "properties": {
            "id": {"type": "integer"},
            "title": text,
            "url": text,
            "image": text,
            "summary": text,
            "source": text,
            "source_id": {"type": "integer"},
            "posted": {"type": "string", "nullable": True},
            "published_at": {"type": "string", "format": "date-time", "nullable": True},
        },
    }


def _legacy_paths() -> dict[str, Any]:
    entries = {
        "type": "object",
        "required": ["entries"],
        "properties": {
            "entries": {"type": "array", "items": {"$ref": "#/components/schemas/LegacyEntry"}}
        },
    }
    items = {
        "name": "items",
        "in": "query",
        "schema": {"type": "string"},
        "description": "Integer, at most 100 (default 30); invalid values give the default.",
    }

    def named_list(key: str, name_field: str) -> dict[str, Any]:
        item = {
            "type": "object",
            "properties": {"id": {"type": "integer"}, name_field: {"type": "string"}},
        }
        return {"type": "object", "properties": {key: {"type": "array", "items": item}}}

    def operation(summary: str, body: dict, params: list, id_name: str | None = None) -> dict:
        parameters = list(params)
        if id_name:
            parameters.append(
                {
                    "name": id_name,
                    "in": "path",
                    "required": True,
                    "schema": {"type": "string", "pattern": "^[0-9]{1,20}$"},
                }
            )
        return {
            "get": {
                "operationId": "legacy_" + summary.lower().replace(" ", "_"),
                "summary": summary,
                "description": f"{summary}: the legacy JSON, kept for existing clients "
                "(/api/v1 is the current API).",
                "tags": ["legacy"],
                "parameters": parameters,
                "responses": {
                    "200": {"description": "OK", "content": {"application/json": {"schema": body}}},
                    "404": {"description": "Unknown id: Django's HTML 404."},
                },
            }
        }

    return {
        "/entries.json": operation("Latest entries", entries, [items]),
        "/entries/popular.json": operation("Popular entries", entries, [items]),
        "/entries/{id}.json": operation(
            "One entry", {"$ref": "#/components/schemas/LegacyEntry"}, [], "id"
        ),
        "/feeds.json": operation("Sources", named_list("feeds", "title"), []),
        "/feeds/{id}.json": operation("Entries of a source", entries, [items], "id"),
        "/tags.json": operation("Tags", named_list("tags", "name"), []),
        "/tags/{id}.json": operation("Entries of a tag", entries, [items], "id"),
    }


def _nullable_refs(node: Any) -> None:
    """drf-spectacular writes a nullable reference as `allOf: [ref]` + `nullable: true`, which
    OpenAPI 3.0 does not make nullable (`nullable` only widens a `type` beside it, and there is
    none), so strict validators refuse null. 3.0.3's own idiom: one of the reference or null."""
    if isinstance(node, list):
        for item in node:
            _nullable_refs(item)
    elif isinstance(node, dict):
        all_of = node.get("allOf")
        if node.get("nullable") and isinstance(all_of, list) and len(all_of) == 1:
            del node["allOf"], node["nullable"]
            node["oneOf"] = [*all_of, {"type": "object", "nullable": True, "enum": [None]}]
        for value in node.values():
            _nullable_refs(value)


def postprocess(result: dict[str, Any], generator, request, public) -> dict[str, Any]:
    components = result.setdefault("components", {}).setdefault("schemas", {})
    _nullable_refs(components)
    components["ErrorEnvelope"] = _ERROR_SCHEMA
    components["LegacyEntry"] = _legacy_entry()
    error_ref = {"$ref": "#/components/schemas/ErrorEnvelope"}
    for path, operations in result.get("paths", {}).items():
        if not path.startswith("/api/v1/"):
            continue
        for operation in operations.values():
            responses = operation.setdefault("responses", {})
            for status, description in _ERRORS.items():
                error_type, message = _ERROR_EXAMPLES[status]
                example = {"error": {"type": error_type, "message": message}}
                responses.setdefault(
                    status,
                    {
                        "description": description,
                        "content": {
                            "application/json": {
                                "schema": error_ref,
                                "example": {**example, "meta": {"api_version": "v1"}},
                            }
                        },
                    },
                )
            body = operation.get("requestBody")
            # drf-spectacular leaves a body of alternatives (LoginRequest) optional; each
            # alternative has required fields, so the body is required too.
            if body and "oneOf" in _body_schema(result, body):
                body["required"] = True
    name_operations(result.get("paths", {}))
    result["paths"].update(_legacy_paths())
    return result


def _body_schema(result: dict[str, Any], body: dict[str, Any]) -> dict[str, Any]:
    schema = body.get("content", {}).get("application/json", {}).get("schema", {})
    if "$ref" in schema:
        return result["components"]["schemas"][schema["$ref"].rsplit("/", 1)[-1]]
    return schema
