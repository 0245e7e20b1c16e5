"""The /api/v1 prefix and its schema as a client meets them: an index of links at the prefix,
and the schema's errors in the API's JSON envelope whatever format was asked for."""

import pytest

pytestmark = pytest.mark.django_db


def test_the_prefix_answers_an_index_of_links_that_answer(http):
    redirected = http.get("/api/v1")
    index = http.get("/api/v1/")

    assert redirected.status_code == 301
    assert redirected.headers["Location"] == "/api/v1/"
    assert index.status_code == 200
    assert index.headers["Content-Type"] == "application/json"
    links = {link["rel"]: link["href"] for link in index.json()["data"]["links"]}
    assert {"docs", "schema", "entries", "stories", "feeds", "tags", "mcp", "llms_txt"} <= set(
        links
    )
    for rel, href in links.items():
        if rel in ("mcp", "login"):
            continue  # MCP speaks JSON-RPC over POST; login is a POST
        assert http.get(href).status_code == 200, rel


@pytest.mark.parametrize("value", ["xml", "", "JSON"])
def test_a_schema_format_it_does_not_have_is_a_400_in_json(http, value):
    response = http.get("/api/v1/schema", params={"format": value})

    assert response.status_code == 400
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["type"] == "invalid_parameter"


def test_an_unsafe_method_on_the_schema_is_a_405_in_json_with_allow(http):
    response = http.delete("/api/v1/schema")

    assert response.status_code == 405
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["type"] == "method_not_allowed"
    assert "GET" in response.headers["Allow"]
    for value in ("yaml", "json"):
        assert http.get("/api/v1/schema", params={"format": value}).status_code == 200
