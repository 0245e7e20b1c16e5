"""The compliance API's prefix and OpenAPI document as an integrator meets them: an index of
links at the prefix (no key needed), the schema's errors in the JSON envelope, every operation
named readably with a summary and a description, the state payload typed from its JSON Schemas,
and no example that answers an empty 304 when tried."""

import re

import pytest
from openapi_spec_validator import validate

from compliance_site.records.documents import schema_versions

pytestmark = pytest.mark.django_db


def test_the_prefix_answers_an_index_of_links(client) -> None:
    redirected = client.get("/api/v1/compliance")
    index = client.get("/api/v1/compliance/")

    assert redirected.status_code == 301
    assert redirected["Location"] == "/api/v1/compliance/"
    assert index.status_code == 200
    assert index["Content-Type"] == "application/json"
    links = {link["rel"]: link["href"] for link in index.json()["data"]["links"]}
    assert {"docs", "schema", "meta", "states", "changes", "review_flags"} <= set(links)
    # The public ones answer without a key (the others say 401 in the envelope).
    for rel in ("docs", "schema", "review_flags", "state_schema"):
        assert client.get(links[rel]).status_code == 200, rel
    assert client.get(links["meta"]).json()["error"]["code"] == "missing_api_key"


@pytest.mark.parametrize("value", ["xml", "", "YAML"])
def test_a_schema_format_it_does_not_have_is_a_400_in_json(client, value) -> None:
    answer = client.get("/api/v1/compliance/schema", {"format": value})

    assert answer.status_code == 400
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["code"] == "invalid_parameter"


def test_an_unsafe_method_on_the_schema_is_a_405_in_json(client) -> None:
    answer = client.delete("/api/v1/compliance/schema")

    assert answer.status_code == 405
    assert answer["Content-Type"] == "application/json"
    assert answer.json()["error"]["code"] == "method_not_allowed"
    assert "GET" in answer["Allow"]


def test_the_document_names_types_and_exemplifies_what_works(client) -> None:
    document = client.get("/api/v1/compliance/schema", {"format": "json"}).json()
    validate(document)

    ids = []
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            ids.append(operation["operationId"])
            assert re.fullmatch(r"[a-z][a-z0-9_]*", operation["operationId"])
            assert not operation["operationId"].endswith(
                ("_retrieve", "_destroy", "_partial_update")
            )
            assert operation.get("summary"), (method, path)
            assert len(operation.get("description", "")) > 20, (method, path)
            for parameter in operation.get("parameters", []):
                if parameter["name"] == "If-None-Match":
                    assert "example" not in parameter["schema"], path
    assert len(ids) == len(set(ids))
    schemas = document["components"]["schemas"]
    assert {f"StatePayloadV{major}" for major in schema_versions()} <= set(schemas)
    state_data = schemas["StateEnvelope"]["properties"]["data"]
    assert [ref["$ref"].rsplit("/", 1)[1] for ref in state_data["anyOf"]] == [
        f"StatePayloadV{major}" for major in schema_versions()
    ]
    error_codes = schemas["ErrorEnvelope"]["properties"]["error"]["properties"]["code"]["enum"]
    assert "bad_request" in error_codes and "invalid_request" not in error_codes
