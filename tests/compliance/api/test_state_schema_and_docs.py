"""The state files' JSON Schema and the browsable API reference, served by the service."""

import json

import pytest

from compliance_site.records.documents import schema_path

pytestmark = pytest.mark.django_db

URL = "/api/v1/compliance/schema/state.v1.json"


@pytest.mark.parametrize(
    ("url", "major"),
    [
        (URL, "1"),
        ("/api/v1/compliance/schemas/state.v1.json", "1"),
        ("/api/v1/compliance/schemas/state.v2.json", "2"),
    ],
)
def test_each_state_schema_is_served_as_the_file_holds_it(client, url, major) -> None:
    answer = client.get(url)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/schema+json"
    assert answer.content == schema_path(major).read_bytes()
    again = client.get(url, HTTP_IF_NONE_MATCH=answer["ETag"])
    assert again.status_code == 304


def test_a_schema_major_the_service_does_not_have_is_not_found(client) -> None:
    assert client.get("/api/v1/compliance/schemas/state.v3.json").status_code == 404


def test_the_state_schema_is_served_as_the_file_holds_it(client) -> None:
    answer = client.get(URL)
    assert answer.status_code == 200
    assert answer["Content-Type"] == "application/schema+json"
    assert json.loads(answer.content) == json.loads(schema_path("1").read_text())
    assert json.loads(answer.content)["additionalProperties"] is False
    again = client.get(URL, HTTP_IF_NONE_MATCH=answer["ETag"])
    assert again.status_code == 304
    assert client.post(URL).status_code == 405


def test_the_reference_page_is_served(client) -> None:
    page = client.get("/api/v1/compliance/docs")
    assert page.status_code == 200
    assert "swagger-ui-bundle.js" in page.content.decode()
    assert "script-src 'self'" in page["Content-Security-Policy"]


def test_a_host_not_served_gets_the_error_envelope(client) -> None:
    answer = client.get("/api/v1/compliance/meta", HTTP_HOST="evil.example")
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "bad_request"
