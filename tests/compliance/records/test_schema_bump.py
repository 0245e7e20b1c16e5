"""A schema major bump, end to end, on a real git repository: v1 history, a commit that declares
major 2 in `schema.yaml` and renames `notes` to `remarks` in every file, more v2 commits, and a
commit that mixes a v1 file in after the bump."""

from datetime import date

import pytest
import yaml

from compliance_site.records.models import ReindexProblem, ResourceVersion
from tests.compliance.builders import state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]

STATES = ("TX", "CA", "OH")


def v1(abbr: str, note: str, **overrides) -> dict:
    return state_payload(abbr, notes=[note], **overrides)


def v2(abbr: str, note: str, **overrides) -> dict:
    return state_payload(abbr, remarks=[note], **overrides)


def declare(repo, major: int | str) -> None:
    target = repo.path / "schema.yaml"
    target.write_text(yaml.safe_dump({"state_schema_version": major}))
    repo.repo.index.add(["schema.yaml"])


def historical_reads(api) -> dict[str, bytes]:
    """Every published version of every state, by number and by as_of on its release day,
    as the bytes the API answers."""
    reads = {}
    for version in ResourceVersion.objects.filter(resource_type="State"):
        key, number = version.resource_key, version.version
        reads[f"{key}/versions/{number}"] = api.get(f"/states/{key}/versions/{number}").content
        reads[f"{key}?version={number}"] = api.get(
            f"/states/{key}", params={"version": number}
        ).content
    for key in STATES:
        for day in (date(2026, 1, 6), date(2026, 1, 7), date(2026, 1, 8)):
            response = api.get(f"/states/{key}", params={"as_of": day.isoformat()})
            reads[f"{key}?as_of={day}"] = response.content
    return reads


@pytest.fixture
def v1_history(data_repo, run_reindex):
    for abbr in STATES:
        data_repo.write(abbr, v1(abbr, f"{abbr} first note."))
    data_repo.commit("Seed")
    data_repo.write("TX", v1("TX", "TX second note."))
    data_repo.commit("Edit TX")
    data_repo.write("CA", v1("CA", "CA second note.", summary="Edited."))
    data_repo.commit("Edit CA")
    assert run_reindex().ok
    return data_repo


def test_a_schema_bump_keeps_every_v1_read_and_publishes_v2(api, v1_history, run_reindex):
    assert api.get("/meta").json()["data"]["schema_version"] == "1"
    before = historical_reads(api)
    assert all(b'"payload_schema_version":"1"' in body for body in before.values())

    declare(v1_history, 2)
    v1_history.write("TX", v2("TX", "TX second note."))
    v1_history.write("CA", v2("CA", "CA second note.", summary="Edited."))
    v1_history.write("OH", v2("OH", "OH first note."))
    bump = v1_history.commit("Schema major 2: notes is now remarks")
    v1_history.write("OH", v2("OH", "OH second remark."))
    v1_history.commit("Edit OH under v2")
    v1_history.write("TX", v2("TX", "TX third remark."))
    v1_history.commit("Edit TX under v2")

    report = run_reindex()

    assert report.ok, report.problems
    assert api.get("/meta").json()["data"]["schema_version"] == "2"
    for abbr in STATES:
        live = api.get(f"/states/{abbr}").json()
        assert live["meta"]["payload_schema_version"] == "2"
        assert "remarks" in live["data"] and "notes" not in live["data"]
    # Every earlier read answers byte for byte as before the bump.
    after = historical_reads(api)
    assert {key: after[key] for key in before} == before
    # The bump's change events show the rename.
    for event in api.get("/changes", params={"resource_type": "State", "limit": 500}).json()[
        "data"
    ]:
        if event["git_sha"] == bump[:12]:
            assert event["diff"]["added_keys"] == ["remarks"]
            assert event["diff"]["removed_keys"] == ["notes"]
    bumped = ResourceVersion.objects.filter(commit_sha=bump, resource_type="State")
    assert sorted(bumped.values_list("resource_key", flat=True)) == sorted(STATES)
    assert set(bumped.values_list("payload_schema_version", flat=True)) == {"2"}
    # Both schema files are served.
    assert api.get("/schemas/state.v1.json").json()["properties"]["notes"]
    assert api.get("/schemas/state.v2.json").json()["properties"]["remarks"]

    # A v1 file after the bump is refused, per file; the other file of the commit publishes.
    v1_history.write("TX", v1("TX", "Written the old way."))
    v1_history.write("CA", v2("CA", "CA under v2.", summary="Edited."))
    mixed = v1_history.commit("Mixes a v1 file in")

    report = run_reindex()

    [problem] = report.problems
    assert (problem.path, problem.commit_sha) == ("states/TX.yaml", mixed)
    assert "notes" in problem.message
    assert api.get("/states/TX").json()["data"]["remarks"] == ["TX third remark."]
    assert api.get("/states/CA").json()["data"]["remarks"] == ["CA under v2."]


def test_a_file_the_bump_commit_leaves_in_v1_is_refused(v1_history, run_reindex):
    declare(v1_history, 2)
    v1_history.write("TX", v2("TX", "Converted."))
    v1_history.write("CA", v2("CA", "Converted.", summary="Edited."))
    bump = v1_history.commit("Bump, forgetting OH")

    report = run_reindex()

    [problem] = report.problems
    assert (problem.path, problem.commit_sha) == ("states/OH.yaml", bump)
    oh = ResourceVersion.objects.filter(resource_type="State", resource_key="OH")
    assert list(oh.values_list("payload_schema_version", flat=True)) == ["1"]


@pytest.mark.parametrize("declared", [3, "two", 1.5, True])
def test_an_unknown_major_is_reported_and_the_major_stays(api, v1_history, run_reindex, declared):
    declare(v1_history, declared)
    v1_history.write("OH", v1("OH", "Still v1."))
    sha = v1_history.commit("Declares a major the service does not have")

    report = run_reindex()

    [problem] = report.problems
    assert (problem.path, problem.commit_sha) == ("schema.yaml", sha)
    assert "major 1 stays in force" in problem.message
    assert api.get("/meta").json()["data"]["schema_version"] == "1"
    assert api.get("/states/OH").json()["data"]["notes"] == ["Still v1."]
    assert ReindexProblem.objects.filter(path="schema.yaml").exists()
    # Fixed in a later commit: the problem is cleared.
    declare(v1_history, 1)
    v1_history.commit("Back to a declared major")
    assert run_reindex().ok
    assert not ReindexProblem.objects.exists()
