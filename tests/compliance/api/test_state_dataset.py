"""GET /states: every state in one answer equals the 51 single reads at the same moment, live,
as_of a day and at a sync token; ETag, NDJSON, and one request on the limiter."""

import json
from pathlib import Path

import pytest

from compliance_site.records.demo import build_demo_repository
from compliance_site.records.reindex import reindex

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def demo(tmp_path: Path, settings) -> Path:
    path = tmp_path / "demo"
    build_demo_repository(path)
    settings.COMPLIANCE_DATA_REPO = path
    reindex(repo_path=str(path))
    return path


def _single_reads(api, query: str = "") -> dict[str, dict]:
    meta = api.get("/meta").json()["data"]
    assert meta["state_count"] == 51
    abbreviations = [item["abbreviation"] for item in api.get("/states").json()["data"]]
    bodies = {}
    for abbr in abbreviations:
        response = api.get(f"/states/{abbr}{query}")
        if response.status_code == 200:
            bodies[abbr] = response.json()
    return bodies


def _as_singles(dataset: dict) -> dict[str, dict]:
    versions = dataset["meta"]["versions"]
    return {
        payload["abbreviation"]: {
            "data": payload,
            "meta": {"api_version": "v1", **versions[payload["abbreviation"]]},
        }
        for payload in dataset["data"]
    }


def test_the_live_dataset_equals_the_51_single_reads(api, demo):
    dataset = api.get("/states")

    singles = _single_reads(api)
    assert dataset.status_code == 200
    body = dataset.json()
    assert len(singles) == 51
    assert body["meta"]["count"] == 51
    assert _as_singles(body) == singles


@pytest.mark.parametrize("day", ["2026-01-01", "2026-03-10", "2026-07-01"])
def test_an_as_of_dataset_equals_the_single_reads_of_that_day(api, demo, day):
    dataset = api.get(f"/states?as_of={day}").json()

    singles = _single_reads(api, f"?as_of={day}")
    assert dataset["meta"]["as_of"] == day
    assert dataset["meta"]["count"] == len(singles) == 51
    assert _as_singles(dataset) == singles
    live = _as_singles(api.get("/states").json())
    # The chosen days fall inside the demo history: some states read differently from today.
    assert _as_singles(dataset) != live


def test_ndjson_lines_are_the_single_read_bodies(api, demo):
    by_header = api.get("/states", headers={"Accept": "application/x-ndjson"})
    by_format = api.get("/states?format=ndjson")

    singles = _single_reads(api)
    assert by_header.headers["Content-Type"].startswith("application/x-ndjson")
    lines = [json.loads(line) for line in by_header.text.splitlines()]
    assert {line["data"]["abbreviation"]: line for line in lines} == singles
    assert by_format.content == by_header.content


def test_a_sync_token_pins_the_dataset_as_the_feed_stood(api, demo, data_repo_commit):
    before = api.get("/states").json()
    token = before["meta"]["sync_token"]
    data_repo_commit()

    pinned = api.get("/states", params={"sync_token": token}).json()
    live = api.get("/states").json()

    assert pinned["data"] == before["data"]
    assert live["data"] != before["data"]
    changes = api.get("/changes", params={"sync_token": token}).json()["data"]
    states = [e for e in changes if e["resource_type"] == "State"]
    published = {(e["resource_key"], e["version"]) for e in states}
    assert published == {
        (key, meta["version"])
        for key, meta in live["meta"]["versions"].items()
        if before["meta"]["versions"][key] != meta
    }


@pytest.fixture
def data_repo_commit(demo: Path):
    def commit() -> None:
        import git
        import yaml

        path = demo / "states" / "OH.yaml"
        text = path.read_text()
        document = yaml.safe_load(text)
        document["summary"] = document["summary"] + " Updated after review."
        header = "".join(line for line in text.splitlines(keepends=True) if line.startswith("#"))
        path.write_text(header + yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
        with git.Repo(demo) as repo:
            repo.index.add(["states/OH.yaml"])
            repo.index.commit("Clarify the Ohio summary")
        reindex(repo_path=str(demo))

    return commit


def test_an_etag_match_is_304_and_each_read_counts_once(api, demo):
    first = api.get("/states")
    again = api.get("/states", headers={"If-None-Match": first.headers["ETag"]})
    ndjson = api.get("/states?format=ndjson")

    assert again.status_code == 304
    assert again.content == b""
    assert ndjson.headers["ETag"] != first.headers["ETag"]
    remaining = [int(r.headers["X-RateLimit-Remaining"]) for r in (first, again, ndjson)]
    assert remaining == [remaining[0], remaining[0] - 1, remaining[0] - 2]


@pytest.mark.parametrize(
    "query", ["as_of=2026-13-01", "as_of=yesterday", "sync_token=forged", "format=xml"]
)
def test_bad_parameters_are_clear_errors(api, demo, query):
    response = api.get(f"/states?{query}")

    assert response.status_code in (400, 406)
    assert response.headers["Content-Type"] == "application/json"
    codes = ("invalid_parameter", "invalid_cursor", "not_acceptable")
    assert response.json()["error"]["code"] in codes


@pytest.mark.parametrize("query", ["", "?as_of=2026-03-10", "?format=ndjson"])
def test_the_whole_dataset_costs_the_same_few_queries_as_one_state(
    api, demo, served_queries, query
):
    with served_queries.at_most(3):
        response = api.get(f"/states{query}")

    assert response.status_code == 200
