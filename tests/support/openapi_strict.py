"""Strict validation of answers against the OpenAPI document that describes them, with
openapi-core, for the schemathesis runs and the hand-written flows of both services.

Strict means more than openapi-core's defaults (which already check statuses, media types,
required headers, `nullable` the OpenAPI 3.0 way, formats and enums):

- an object schema that lists its `properties` allows no others (`additionalProperties: false`
  unless it says otherwise), so a field the document forgets (a generated client would drop it)
  fails;
- a status the operation does not document fails, even where a `default` would take it.

`check_strictly` is also registered as a schemathesis check: it validates against the
document the case came from, so it serves both services' runs.
"""

import copy
import json
from collections.abc import Mapping
from functools import cache
from typing import Any
from urllib.parse import parse_qsl, urlsplit

import schemathesis
from openapi_core import OpenAPI
from openapi_core.exceptions import OpenAPIError
from openapi_core.testing import MockRequest, MockResponse


def closed(document: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of `document` in which every object schema with `properties` refuses others.

    Members of an `allOf` stay open: each of them sees the whole instance, whose other
    properties belong to the other members."""
    closed_document = copy.deepcopy(dict(document))

    def close(node: Any, in_all_of: bool = False) -> None:
        if isinstance(node, list):
            for item in node:
                close(item, in_all_of)
            return
        if not isinstance(node, dict):
            return
        if "properties" in node and "additionalProperties" not in node and not in_all_of:
            node["additionalProperties"] = False
        for key, value in node.items():
            # `properties` maps names to schemas; a property named like a keyword is no keyword.
            if key == "properties" and isinstance(value, dict):
                for schema in value.values():
                    close(schema)
            else:
                close(value, in_all_of=key == "allOf")

    close(closed_document.get("components", {}).get("schemas", {}))
    close(closed_document.get("paths", {}))
    return closed_document


@cache
def _openapi(document_json: str) -> OpenAPI:
    return OpenAPI.from_dict(closed(json.loads(document_json)))


def validate(
    document: Mapping[str, Any],
    *,
    method: str,
    url: str,
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    operation_path: str | None = None,
) -> None:
    """Raise if the answer `status`/`headers`/`body` to `method url` breaks `document`.

    `operation_path` (the document's path template) is only used to check that the status is
    documented; openapi-core finds the operation from the URL itself."""
    openapi = _openapi(json.dumps(document, sort_keys=True))
    parts = urlsplit(url)
    request = MockRequest(
        f"{parts.scheme}://{parts.netloc}",
        method.lower(),
        parts.path,
        args=_query(parts.query),
    )
    content_type = headers.get("content-type", headers.get("Content-Type", ""))
    response = MockResponse(
        body,
        status_code=status,
        headers=dict(headers),
        content_type=content_type.split(";")[0].strip() or None,
    )
    if operation_path is not None:
        documented = document["paths"][operation_path][method.lower()]["responses"]
        assert str(status) in documented, f"{method} {url}: status {status} is not documented"
    try:
        openapi.validate_response(request, response)
    except OpenAPIError as exc:
        # openapi-core keeps the schema errors on the cause; the message alone says "InvalidData".
        cause = exc.__cause__
        details = [error.message for error in getattr(cause, "schema_errors", ())]
        problem = f"{method.upper()} {url} -> {status}: {exc!r} {cause!r} {details}"
        raise AssertionError(problem) from exc


def _query(query: str) -> dict[str, str]:
    return dict(parse_qsl(query, keep_blank_values=True))


@schemathesis.check
def openapi_core_strict(ctx: Any, response: Any, case: Any) -> bool | None:
    """Every answer schemathesis receives, validated strictly by openapi-core. A method the
    path does not have is left to schemathesis' own check (405 with `Allow`)."""
    if case.method.lower() not in case.operation.schema.raw_schema["paths"][case.operation.path]:
        return None
    request = response.request
    validate(
        case.operation.schema.raw_schema,
        method=case.method,
        url=str(request.url),
        status=response.status_code,
        headers={name: ", ".join(values) for name, values in response.headers.items()},
        body=response.content or b"",
        operation_path=case.operation.path,
    )
    return None
