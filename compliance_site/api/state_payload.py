"""The state payload in the OpenAPI document, typed from the JSON Schemas payloads are validated
against at reindex (records/schemas/state.v<major>.schema.json): one component per major, and
`data` any of them (a version keeps the major it was written under).

JSON Schema 2020-12 and OpenAPI 3.0's schema object differ only where these files use
`$id`/`$schema` (dropped) and a type list with "null" (`type` plus `nullable`)."""

import json
from typing import Any

from compliance_site.records.documents import schema_path, schema_versions


def component_name(major: str) -> str:
    return f"StatePayloadV{major}"


def _openapi(node: Any) -> Any:
    if isinstance(node, list):
        return [_openapi(item) for item in node]
    if not isinstance(node, dict):
        return node
    converted = {
        key: value if key in ("properties", "enum") else _openapi(value)
        for key, value in node.items()
        if key not in ("$id", "$schema")
    }
    if "properties" in converted:
        converted["properties"] = {
            name: _openapi(schema) for name, schema in converted["properties"].items()
        }
    kinds = converted.get("type")
    if isinstance(kinds, list):
        others = [kind for kind in kinds if kind != "null"]
        if len(others) != 1:
            raise ValueError(f"a type list OpenAPI 3.0 cannot say: {kinds}")
        converted["type"] = others[0]
        if "null" in kinds:
            converted["nullable"] = True
    return converted


def state_payload_components() -> dict[str, dict[str, Any]]:
    return {
        component_name(major): _openapi(json.loads(schema_path(major).read_text()))
        for major in schema_versions()
    }


def state_payload_schema() -> dict[str, Any]:
    refs = [{"$ref": f"#/components/schemas/{component_name(m)}"} for m in schema_versions()]
    return {
        "anyOf": refs,
        "description": "The state payload, valid under the state schema major that "
        "`payload_schema_version` names (GET /schemas/state.v<major>.json).",
    }


def type_state_payloads(components: dict[str, Any]) -> None:
    """Add the payload components and type the envelopes' `data` with them."""
    components.update(state_payload_components())
    components["StateEnvelope"]["properties"]["data"] = state_payload_schema()
    dataset = components["StateDatasetEnvelope"]["properties"]["data"]
    dataset["items"] = state_payload_schema()
