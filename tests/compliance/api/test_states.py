"""GET /states/:abbr (live, version, as_of), its versions, and conditional reads."""

from datetime import datetime, timedelta, timezone

import pytest

from tests.compliance.builders import state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

EASTERN = timezone(timedelta(hours=-5))


@pytest.fixture
def texas(data_repo, run_reindex):
    """TX with three versions on 2026-01-06, -07 and -08 (Eastern), and CA with one."""
    data_repo.seed("TX", "CA")
    data_repo.update("TX", summary="Second.")
    data_repo.update("TX", summary="Third.", notice=None)
    run_reindex()
    return data_repo


def test_live_read_returns_the_payload_and_version_meta(api, texas):
    response = api.get("/states/TX")

    assert response.status_code == 200
    body = response.json()
    assert body["data"]["abbreviation"] == "TX"
    assert body["data"]["name"] == "Texas"
    assert body["data"]["summary"] == "Third."
    assert set(body["meta"]) == {
        "api_version",
        "version",
        "released_at",
        "git_sha",
        "payload_schema_version",
    }
    assert body["meta"]["payload_schema_version"] == "1"
    assert body["meta"]["api_version"] == "v1"
    assert body["meta"]["version"] == 3
    assert body["meta"]["released_at"] == "2026-01-08"
    assert body["meta"]["git_sha"] == texas.repo.head.commit.hexsha[:12]
    assert response.headers["ETag"] == '"TX-v3"'
    assert response.headers["Last-Modified"] == "Thu, 08 Jan 2026 14:00:00 GMT"
    assert response.headers["Cache-Control"] == "private, no-cache"


def test_a_pinned_version_is_the_historical_payload_and_immutable(api, texas):
    response = api.get("/states/TX", params={"version": 2})

    assert response.status_code == 200
    assert response.json()["data"]["summary"] == "Second."
    assert response.json()["meta"]["version"] == 2
    assert response.headers["ETag"] == '"TX-v2"'
    assert "immutable" in response.headers["Cache-Control"]
    assert api.get("/states/TX/versions/2").json() == response.json()


def test_as_of_returns_the_version_live_at_the_end_of_that_day(api, texas):
    assert api.get("/states/TX", params={"as_of": "2026-01-07"}).json()["meta"]["version"] == 2
    assert api.get("/states/TX", params={"as_of": "2026-01-08"}).json()["meta"]["version"] == 3
    assert api.get("/states/TX", params={"as_of": "2030-01-01"}).json()["meta"]["version"] == 3
    before = api.get("/states/TX", params={"as_of": "2026-01-05"})
    assert before.status_code == 404
    assert before.json()["error"]["code"] == "version_not_found"


def test_the_three_reads_share_one_envelope_shape(api, texas):
    shapes = [
        api.get("/states/TX").json(),
        api.get("/states/TX", params={"version": 1}).json(),
        api.get("/states/TX", params={"as_of": "2026-01-06"}).json(),
    ]
    assert {tuple(sorted(s)) for s in shapes} == {("data", "meta")}
    assert {tuple(sorted(s["meta"])) for s in shapes} == {
        ("api_version", "git_sha", "payload_schema_version", "released_at", "version")
    }


def test_abbreviations_are_case_insensitive(api, texas):
    response = api.get("/states/tx")

    assert response.status_code == 200
    assert response.json()["data"]["abbreviation"] == "TX"
    assert response.headers["ETag"] == '"TX-v3"'


@pytest.mark.parametrize(
    ("path", "params", "status", "code"),
    [
        ("/states/TX", {"version": "abc"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "0"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "-1"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "1.5"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "99999999999999999999"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "9"}, 404, "version_not_found"),
        ("/states/TX", {"as_of": "2026-02-30"}, 400, "invalid_parameter"),
        ("/states/TX", {"as_of": "yesterday"}, 400, "invalid_parameter"),
        ("/states/TX", {"version": "1", "as_of": "2026-01-07"}, 400, "invalid_parameter"),
        ("/states/ZZ", {}, 404, "state_not_found"),
        ("/states/NY", {}, 404, "state_not_found"),
        ("/states/" + "X" * 5000, {}, 404, "state_not_found"),
        ("/states/TX/versions/abc", {}, 400, "invalid_parameter"),
        ("/states/TX/versions/0", {}, 404, "version_not_found"),
        ("/states/TX/versions/99999999999999999999999", {}, 404, "version_not_found"),
        ("/states/TX/versions/%D9%A3", {}, 400, "invalid_parameter"),
        ("/states/ZZ/versions", {}, 404, "state_not_found"),
        ("/nothing/here", {}, 404, "not_found"),
    ],
)
def test_bad_input_gets_a_clear_error_never_a_500(api, texas, path, params, status, code):
    response = api.get(path, params=params)

    assert response.status_code == status
    assert response.headers["Content-Type"] == "application/json"
    body = response.json()
    assert body["error"]["code"] == code
    assert isinstance(body["error"]["message"], str) and body["error"]["message"]


def test_both_version_and_as_of_is_rejected_with_a_reason(api, texas):
    response = api.get("/states/TX", params={"version": 1, "as_of": "2026-01-07"})

    assert "either version or as_of" in response.json()["error"]["message"]


def test_writes_are_not_allowed(api, texas):
    response = api.post("/states/TX", json={})

    assert response.status_code == 405
    assert response.json()["error"]["code"] == "method_not_allowed"
    assert "GET" in response.headers["Allow"]


def test_version_list_is_newest_first_with_change_metadata(api, texas):
    response = api.get("/states/TX/versions")

    assert response.status_code == 200
    body = response.json()
    assert body["meta"]["count"] == 3
    assert [item["version"] for item in body["data"]] == [3, 2, 1]
    newest = body["data"][0]
    assert set(newest) == {
        "resource_type",
        "resource_key",
        "version",
        "released_at",
        "git_sha",
        "committed_at",
        "git_committed_at",
        "committed_by",
        "change_summary",
        "source",
        "diff",
        "payload_schema_version",
    }
    assert newest["committed_at"] == "2026-01-08T09:00:00-05:00"
    assert newest["committed_by"] == "Ada Editor"
    assert newest["diff"] == {
        "added_keys": [],
        "removed_keys": ["notice"],
        "changed_keys": ["summary"],
    }


class TestConditionalReads:
    def test_a_matching_etag_gets_304_with_an_empty_body_and_the_validators(self, api, texas):
        response = api.get("/states/TX", headers={"If-None-Match": '"TX-v3"'})

        assert response.status_code == 304
        assert response.content == b""
        assert response.headers["ETag"] == '"TX-v3"'
        assert response.headers["Cache-Control"] == "private, no-cache"
        assert "Authorization" in response.headers["Vary"]
        assert "X-RateLimit-Remaining" in response.headers

    def test_a_stale_etag_gets_the_new_version(self, api, texas):
        response = api.get("/states/TX", headers={"If-None-Match": '"TX-v2"'})

        assert response.status_code == 200
        assert response.json()["meta"]["version"] == 3

    def test_lists_star_and_weak_tags_match(self, api, texas):
        for header in ['"TX-v1", "TX-v3"', "*", 'W/"TX-v3"']:
            assert api.get("/states/TX", headers={"If-None-Match": header}).status_code == 304

    def test_if_none_match_takes_precedence_over_if_modified_since(self, api, texas):
        response = api.get(
            "/states/TX",
            headers={
                "If-None-Match": '"TX-v1"',
                "If-Modified-Since": "Fri, 01 Jan 2100 00:00:00 GMT",
            },
        )

        assert response.status_code == 200

    def test_if_modified_since_alone_is_honoured(self, api, texas):
        later = api.get(
            "/states/TX", headers={"If-Modified-Since": "Fri, 09 Jan 2026 00:00:00 GMT"}
        )
        earlier = api.get(
            "/states/TX", headers={"If-Modified-Since": "Wed, 07 Jan 2026 00:00:00 GMT"}
        )

        assert later.status_code == 304
        assert earlier.status_code == 200

    def test_a_304_counts_as_a_request(self, api, texas, one_window):
        first = api.get("/states/TX", headers={"If-None-Match": '"TX-v3"'})
        second = api.get("/states/TX", headers={"If-None-Match": '"TX-v3"'})

        remaining = int(first.headers["X-RateLimit-Remaining"])
        assert int(second.headers["X-RateLimit-Remaining"]) == remaining - 1


def test_a_read_costs_a_fixed_number_of_queries(api, texas, served_queries):
    with served_queries.at_most(3):
        assert api.get("/states/TX").status_code == 200
    with served_queries.at_most(3):
        assert api.get("/states/TX/versions").status_code == 200


def test_committed_at_keeps_the_commit_offset(api, data_repo, run_reindex):
    data_repo.write("CA", state_payload("CA"))
    data_repo.commit("Seed", when=datetime(2026, 3, 1, 23, 30, tzinfo=timezone(timedelta(hours=9))))
    run_reindex()

    item = api.get("/states/CA/versions").json()["data"][0]

    assert item["committed_at"] == "2026-03-01T23:30:00+09:00"
    assert item["released_at"] == "2026-03-01"
