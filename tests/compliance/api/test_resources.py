"""GET /meta, /esa_programs, /esa_programs/:abbr and /citations/:abbr."""

from datetime import timedelta

import pytest
from django.utils import timezone

from tests.compliance.builders import ESA, state_payload
from tests.support.compliance_factories import SourceSnapshotFactory

pytestmark = pytest.mark.django_db


@pytest.fixture
def records(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    data_repo.write("FL", state_payload("FL", esa_program={**ESA, "program_name": "FES-EO"}))
    data_repo.write("CA", state_payload("CA"))
    data_repo.commit("Seed")
    data_repo.update("TX", esa_program={**ESA, "amount_cents": 1_200_000})
    run_reindex()
    return data_repo


def test_meta_describes_the_dataset(api, records):
    body = api.get("/meta").json()

    assert body["meta"] == {"api_version": "v1"}
    assert body["data"]["state_count"] == 3
    assert body["data"]["schema_version"] == "1"
    published = body["data"]["latest_snapshot_at"]
    assert published is not None
    assert abs(timezone.now() - timezone.datetime.fromisoformat(published)) < timedelta(minutes=5)


def test_meta_on_an_empty_dataset(api):
    body = api.get("/meta").json()

    assert body["data"] == {"state_count": 0, "schema_version": "1", "latest_snapshot_at": None}


def test_esa_index_lists_only_states_with_a_program(api, records):
    body = api.get("/esa_programs").json()

    assert body["meta"] == {"api_version": "v1", "count": 2}
    assert [p["state_abbreviation"] for p in body["data"]] == ["FL", "TX"]
    texas = body["data"][1]
    assert texas == {
        "state_abbreviation": "TX",
        "state_name": "Texas",
        "program_name": ESA["program_name"],
        "amount_cents": 1_200_000,
        "eligibility": ESA["eligibility"],
        "url": ESA["url"],
    }


def test_esa_detail_has_its_own_version(api, records):
    body = api.get("/esa_programs/tx").json()

    assert body["data"]["amount_cents"] == 1_200_000
    assert body["meta"]["version"] == 2
    assert body["meta"]["api_version"] == "v1"


def test_esa_detail_404s(api, records):
    no_program = api.get("/esa_programs/CA")
    unknown = api.get("/esa_programs/ZZ")
    unpublished = api.get("/esa_programs/NY")

    assert no_program.status_code == 404
    assert no_program.json()["error"]["code"] == "esa_program_not_found"
    assert unknown.json()["error"]["code"] == "state_not_found"
    assert unpublished.json()["error"]["code"] == "state_not_found"


def test_a_removed_program_leaves_the_index(api, records, run_reindex):
    records.update("FL", esa_program=None)
    run_reindex()

    assert [p["state_abbreviation"] for p in api.get("/esa_programs").json()["data"]] == ["TX"]
    assert api.get("/esa_programs/FL").status_code == 404


def test_citation_record_has_sources_and_the_five_latest_snapshots(api, records):
    now = timezone.now()
    for days in range(7):
        SourceSnapshotFactory(
            state_abbreviation="TX",
            url="https://law.example/tx",
            fetched_at=now - timedelta(days=days),
            content_hash=f"sha256:{days}" if days != 1 else "",
            successful=days != 1,
            error="timeout" if days == 1 else "",
        )

    body = api.get("/citations/TX").json()

    assert body["meta"]["version"] == 1
    data = body["data"]
    assert data["state_abbreviation"] == "TX"
    assert data["state_name"] == "Texas"
    assert data["source_urls"] == [{"name": "TX education code", "url": "https://law.example/tx"}]
    snapshots = data["recent_snapshots"]
    assert len(snapshots) == 5
    assert [s["content_hash"] for s in snapshots] == [
        f"sha256:{d}" if d != 1 else "" for d in range(5)
    ]
    assert snapshots[1]["successful"] is False
    assert set(snapshots[0]) == {"url", "fetched_at", "content_hash", "successful"}


def test_citation_of_an_unknown_state_is_404(api, records):
    assert api.get("/citations/NY").json()["error"]["code"] == "state_not_found"


def test_list_endpoints_cost_a_fixed_number_of_queries(api, records, served_queries):
    with served_queries.at_most(3):
        assert api.get("/esa_programs").status_code == 200
    with served_queries.at_most(4):
        assert api.get("/citations/TX").status_code == 200
    with served_queries.at_most(4):
        assert api.get("/meta").status_code == 200
