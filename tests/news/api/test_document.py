"""The news OpenAPI document as a reader and a client generator meet it: every operation named
readably with a summary and a description, components without doubled suffixes, each error
status with its own example, "Try it out" starting from a call that works (asking for a login
code), and a valid OpenAPI 3.0 document."""

import re

import pytest
from openapi_spec_validator import validate

pytestmark = pytest.mark.django_db


@pytest.fixture
def document(http) -> dict:
    return http.get("/api/v1/schema", params={"format": "json"}).json()


def _operations(document: dict):
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            yield method, path, operation


def test_every_operation_has_a_readable_name_summary_and_description(document):
    validate(document)
    ids = [operation["operationId"] for _m, _p, operation in _operations(document)]
    assert len(ids) == len(set(ids))
    for method, path, operation in _operations(document):
        name = operation["operationId"]
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name), name
        # drf-spectacular's verbs read wrong on lists and actions.
        assert not name.endswith(("_retrieve", "_create", "_destroy")), (method, path, name)
        assert operation.get("summary"), (method, path)
        assert len(operation.get("description", "")) > 20, (method, path)


def test_component_names_read_once(document):
    for name in document["components"]["schemas"]:
        assert not re.search(r"(Request){2}|(Envelope){2}", name), name
    assert {"LoginRequest", "EmailLoginRequest", "IdTokenLoginRequest"} <= set(
        document["components"]["schemas"]
    )


def test_each_error_status_has_its_own_example(document):
    for _method, path, operation in _operations(document):
        if not path.startswith("/api/v1/"):
            continue
        types = set()
        for status, response in operation["responses"].items():
            if int(status) < 400:
                continue
            example = response["content"]["application/json"]["example"]
            types.add(example["error"]["type"])
            assert (
                example["error"]["type"]
                in document["components"]["schemas"]["ErrorEnvelope"]["properties"]["error"][
                    "properties"
                ]["type"]["enum"]
            )
        assert len(types) >= 8, path


def test_the_login_examples_work_when_tried(http, document, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    body = document["paths"]["/api/v1/auth/login"]["post"]["requestBody"]
    first = next(iter(body["content"]["application/json"]["examples"].values()))["value"]

    assert "code" not in first
    assert http.post("/api/v1/auth/login", json=first).status_code == 202
