"""Answers the schemathesis run (test_schemathesis.py) cannot provoke, checked against
the served OpenAPI schema with schemathesis' own response checks (status, content type, headers,
body): a 429, a 406 and a failed precondition. Also the defects that run found, now fixed."""

from urllib.parse import quote

import httpx
import pytest
import schemathesis

from compliance_site.access.keys import api_key_create
from tests.compliance.builders import ESA, state_payload
from tests.support.inprocess import wsgi_application

pytestmark = pytest.mark.django_db

STATE = "/api/v1/compliance/states/{abbr}"
PINNED = "/api/v1/compliance/states/{abbr}/versions/{number}"
CHANGES = "/api/v1/compliance/changes"


@pytest.fixture
def schema(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    data_repo.write("FL", state_payload("FL"))
    data_repo.commit("Seed")
    run_reindex()
    return schemathesis.openapi.from_wsgi("/api/v1/compliance/schema", wsgi_application)


def validated(schema, path: str, response: httpx.Response, **path_parameters) -> httpx.Response:
    """The response, after schemathesis found it as the schema documents it."""
    case = schema[path]["GET"].Case(path_parameters=path_parameters)
    # The key is ours, not generated: ignored_auth probes the URL without it and with a bad one.
    key = {"Authorization": response.request.headers["Authorization"]}
    case.validate_response(response, headers=key)
    return response


def test_a_rate_limited_answer_is_documented(schema, anonymous, one_window):
    _key, raw = api_key_create(name="one a minute", rate_limit_per_minute=1)
    headers = {"Authorization": f"Bearer {raw}"}
    assert anonymous.get("/states/TX", headers=headers).status_code == 200
    response = validated(schema, STATE, anonymous.get("/states/TX", headers=headers), abbr="TX")
    assert response.status_code == 429
    assert int(response.headers["Retry-After"]) == response.json()["error"]["retry_after"]
    assert response.headers["X-RateLimit-Remaining"] == "0"


def test_not_acceptable_is_documented(schema, api):
    response = api.get("/states/TX", headers={"Accept": "text/html"})
    validated(schema, STATE, response, abbr="TX")
    assert response.status_code == 406
    assert response.json()["error"]["code"] == "not_acceptable"


def test_a_failed_precondition_is_an_error_envelope(schema, api):
    # It was Django's empty text/html 412.
    response = api.get("/states/TX/versions/1", headers={"If-Match": '"TX-v9"'})
    validated(schema, PINNED, response, abbr="TX", number=1)
    assert response.status_code == 412
    assert response.headers["Content-Type"] == "application/json"
    assert response.json()["error"]["code"] == "precondition_failed"
    matching = api.get("/states/TX/versions/1", headers={"If-Match": '"TX-v1"'})
    assert validated(schema, PINNED, matching, abbr="TX", number=1).status_code == 200


def test_a_matching_etag_gives_a_documented_304(schema, api):
    response = api.get("/states/TX/versions/1", headers={"If-None-Match": '"TX-v1"'})
    validated(schema, PINNED, response, abbr="TX", number=1)
    assert response.status_code == 304
    assert response.content == b""


def test_since_outside_the_utc_years_1_to_9999_selects_everything_or_nothing(schema, api):
    # Both were 500s: the database compares in UTC, where these instants overflow.
    everything = api.get("/changes", params={"since": "0001-01-01T00:00:00+01:00"})
    assert validated(schema, CHANGES, everything).status_code == 200
    assert everything.json()["meta"]["count"] == api.get("/changes").json()["meta"]["count"] > 0
    nothing = api.get("/changes", params={"since": "9999-12-31T23:59:59-01:00"})
    assert validated(schema, CHANGES, nothing).status_code == 200
    assert nothing.json()["data"] == []


def test_an_abbreviation_is_two_ascii_letters(schema, api):
    assert api.get("/states/fl").json()["data"]["abbreviation"] == "FL"
    # "\ufb02".upper() == "FL": the ligature used to serve Florida.
    response = api.get(f"/states/{quote(chr(0xFB02))}")
    assert response.status_code == 404
    assert response.json()["error"]["code"] == "state_not_found"
