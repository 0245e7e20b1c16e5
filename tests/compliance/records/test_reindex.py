"""Reindex against real git repositories built in the test."""

from datetime import datetime, timedelta, timezone

import pytest
from django.utils.timezone import now as timezone_now

from compliance_site.records.models import (
    ReindexProblem,
    Resource,
    ResourceType,
    ResourceVersion,
)
from compliance_site.records.reindex import ReindexRefused
from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def versions(resource_type: str, key: str) -> list[ResourceVersion]:
    return list(
        ResourceVersion.objects.filter(resource_type=resource_type, resource_key=key).order_by(
            "version"
        )
    )


def test_first_load_publishes_version_one_of_each_resource(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX", esa_program=ESA))
    data_repo.write("CA", state_payload("CA"))
    sha = data_repo.commit("Seed")

    report = run_reindex()

    assert report.ok
    assert [v.version for v in versions(ResourceType.STATE, "TX")] == [1]
    assert [v.version for v in versions(ResourceType.CITATION, "TX")] == [1]
    assert [v.version for v in versions(ResourceType.ESA_PROGRAM, "TX")] == [1]
    assert versions(ResourceType.ESA_PROGRAM, "CA") == []
    first = versions(ResourceType.STATE, "TX")[0]
    assert first.git_sha == sha[:12]
    assert first.payload["name"] == "Texas"
    assert first.payload_schema_version == "1"
    assert first.source == "human"
    assert first.diff["added_keys"] == sorted(state_payload("TX", esa_program=ESA))
    assert first.committed_at.utcoffset() is not None
    assert first.committed_offset_minutes == -300


def test_each_change_to_a_file_adds_exactly_one_version(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.update("TX", summary="Changed once.")
    data_repo.update("TX", summary="Changed twice.")

    run_reindex()

    state_versions = versions(ResourceType.STATE, "TX")
    assert [v.version for v in state_versions] == [1, 2, 3]
    assert state_versions[2].payload["summary"] == "Changed twice."
    assert state_versions[2].diff == {
        "added_keys": [],
        "removed_keys": [],
        "changed_keys": ["summary"],
    }
    # The citation did not change, so its counter did not move.
    assert [v.version for v in versions(ResourceType.CITATION, "TX")] == [1]


def test_a_second_run_writes_nothing(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    run_reindex()
    before = ResourceVersion.objects.count()

    report = run_reindex()

    assert report.commits_read == 0
    assert sum(report.published.values()) == 0
    assert ResourceVersion.objects.count() == before


def test_an_incremental_run_reads_only_new_commits(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    run_reindex()
    data_repo.update("CA", summary="New text.")

    report = run_reindex()

    assert report.commits_read == 1
    assert report.published[ResourceType.STATE] == 1
    assert [v.version for v in versions(ResourceType.STATE, "CA")] == [1, 2]


def test_formatting_and_comment_changes_publish_nothing(data_repo, run_reindex):
    data_repo.seed("TX")
    run_reindex()
    path = data_repo.path / "states" / "TX.yaml"
    data_repo.write("TX", raw="# reviewed again, no content change\n" + path.read_text() + "\n\n")
    data_repo.commit("Reformat")

    report = run_reindex()

    assert report.commits_read == 1
    assert sum(report.published.values()) == 0
    assert len(versions(ResourceType.STATE, "TX")) == 1


def test_change_source_trailer_sets_the_event_source(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    data_repo.write("TX", state_payload("TX", summary="Drafted."))
    data_repo.commit(
        "Draft TX\n\nChange-Source: is how a line of the body may start.",
        trailer="Reviewed-by: Ada\nchange-source: llm_drafted",
    )
    data_repo.write("CA", state_payload("CA", summary="Synced."))
    data_repo.commit("Sync CA", trailer="Change-Source: automated_sync")
    data_repo.write("TX", state_payload("TX", summary="Unknown trailer."))
    data_repo.commit("Odd trailer", trailer="Change-Source: robots")

    run_reindex()

    tx = versions(ResourceType.STATE, "TX")
    assert [v.source for v in tx] == ["human", "llm_drafted", "human"]
    assert versions(ResourceType.STATE, "CA")[1].source == "automated_sync"
    # The trailer the source came from is not part of the summary; the body and other
    # trailers are.
    assert tx[1].change_summary == (
        "Draft TX\n\nChange-Source: is how a line of the body may start.\n\nReviewed-by: Ada"
    )
    assert versions(ResourceType.STATE, "CA")[1].change_summary == "Sync CA"


def test_an_invalid_file_publishes_nothing_and_keeps_the_last_good_version(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    data_repo.write("TX", state_payload("TX", esa_program={**ESA, "amount_cents": "lots"}))
    data_repo.write("CA", state_payload("CA", summary="Fine change."))
    bad_sha = data_repo.commit("Break TX, fix CA")

    report = run_reindex()

    assert not report.ok
    [problem] = report.problems
    assert problem.path == "states/TX.yaml"
    assert problem.commit_sha == bad_sha
    assert problem.schema_path == "properties/esa_program/properties/amount_cents/type"
    assert "esa_program/amount_cents" in problem.message
    # The other file in the same commit was published; TX stays at its last good version.
    assert len(versions(ResourceType.STATE, "CA")) == 2
    live = Resource.objects.get(resource_type=ResourceType.STATE, resource_key="TX").current
    assert live.version == 1
    assert ReindexProblem.objects.filter(path="states/TX.yaml").exists()


def test_malformed_yaml_and_impossible_dates_are_reported_with_the_commit(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    data_repo.write("TX", raw="abbreviation: TX\nname: [unclosed\n")
    data_repo.write("CA", state_payload("CA", last_verified_at="2026-02-30"))
    data_repo.commit("Two broken files")

    report = run_reindex()

    problems = {p.path: p for p in report.problems}
    assert "invalid YAML" in problems["states/TX.yaml"].message
    assert problems["states/CA.yaml"].schema_path == "properties/last_verified_at/format"
    assert len(versions(ResourceType.STATE, "TX")) == 1


def test_a_later_fix_publishes_the_next_version_and_clears_the_problem(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.write("TX", raw="not: [valid")
    data_repo.commit("Break")
    assert not run_reindex().ok

    data_repo.write("TX", state_payload("TX", summary="Fixed."))
    data_repo.commit("Fix")
    report = run_reindex()

    assert report.ok
    assert [v.version for v in versions(ResourceType.STATE, "TX")] == [1, 2]
    assert not ReindexProblem.objects.exists()


def test_a_run_with_nothing_new_still_fails_while_head_is_invalid(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.write("TX", raw="- a list, not a mapping\n")
    data_repo.commit("Break")
    run_reindex()

    report = run_reindex()

    assert report.problems == []
    assert [p.path for p in report.outstanding] == ["states/TX.yaml"]
    assert not report.ok


def test_abbreviation_must_match_the_file_name_and_be_a_jurisdiction(data_repo, run_reindex):
    data_repo.write("TX", state_payload("CA"), name="TX.yaml")
    data_repo.write("ZZ", state_payload("ZZ"))
    data_repo.write("ca", state_payload("CA"), name="ca.yaml")
    data_repo.commit("Wrong names")

    report = run_reindex()

    messages = {p.path: p.message for p in report.problems}
    assert "does not match the file name" in messages["states/TX.yaml"]
    assert "not one of the 51" in messages["states/ZZ.yaml"]
    assert "not one of the 51" in messages["states/ca.yaml"]
    assert not ResourceVersion.objects.exists()


def test_esa_program_versions_move_only_when_the_program_changes(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.update("TX", esa_program=ESA)
    data_repo.update("TX", summary="Unrelated edit.")
    data_repo.update("TX", esa_program={**ESA, "amount_cents": 1_100_000})
    data_repo.update("TX", esa_program=None)

    run_reindex()

    esa = versions(ResourceType.ESA_PROGRAM, "TX")
    assert [v.version for v in esa] == [1, 2, 3]
    assert esa[1].payload["amount_cents"] == 1_100_000
    assert esa[1].diff["changed_keys"] == ["amount_cents"]
    assert esa[2].payload is None
    assert esa[2].diff["removed_keys"] == sorted(ESA)
    assert len(versions(ResourceType.STATE, "TX")) == 5


def test_a_commit_touching_many_files_versions_each_file_once(data_repo, run_reindex):
    abbrs = ["TX", "CA", "OH", "FL", "NY"]
    data_repo.seed(*abbrs)
    for abbr in abbrs:
        data_repo.write(abbr, state_payload(abbr, last_verified_at="2026-01-07"))
    sha = data_repo.commit("Re-verify five states")

    run_reindex()

    latest = ResourceVersion.objects.filter(commit_sha=sha)
    assert sorted(v.resource_key for v in latest) == sorted(abbrs)
    assert {v.version for v in latest} == {2}
    assert len({v.sequence for v in latest}) == 5


def test_a_merge_commit_is_one_change_against_its_first_parent(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    repo = data_repo.repo
    repo.git.checkout("-b", "review")
    data_repo.update("TX", summary="Edit one on the branch.")
    data_repo.update("TX", summary="Edit two on the branch.")
    repo.git.checkout("main")
    data_repo.update("CA", summary="Meanwhile on main.")
    repo.git.merge(
        "--no-ff",
        "review",
        "-m",
        "Merge review: TX summary",
        env={
            "GIT_AUTHOR_DATE": "2026-02-01T10:00:00-05:00",
            "GIT_COMMITTER_DATE": "2026-02-01T10:00:00-05:00",
            "GIT_AUTHOR_NAME": "Merger",
            "GIT_AUTHOR_EMAIL": "m@example.org",
            "GIT_COMMITTER_NAME": "Merger",
            "GIT_COMMITTER_EMAIL": "m@example.org",
        },
    )

    run_reindex()

    tx = versions(ResourceType.STATE, "TX")
    assert [v.version for v in tx] == [1, 2]
    assert tx[1].payload["summary"] == "Edit two on the branch."
    assert tx[1].change_summary == "Merge review: TX summary"
    assert tx[1].git_sha == repo.head.commit.hexsha[:12]


def test_renaming_a_file_keeps_published_versions_and_the_new_name_counts(data_repo, run_reindex):
    data_repo.write("TX", state_payload("TX"), name="tx.yaml")
    data_repo.commit("Lower-case name by mistake")
    data_repo.rename("tx.yaml", "TX.yaml")
    data_repo.commit("Fix the file name")
    data_repo.write("CA", state_payload("CA"))
    data_repo.commit("Add CA")
    data_repo.rename("CA.yaml", "OH.yaml")
    data_repo.commit("Rename CA to OH (a mistake)")

    report = run_reindex()

    assert [v.version for v in versions(ResourceType.STATE, "TX")] == [1]
    # The renamed CA file still says CA, so under OH.yaml it is invalid; CA stays live.
    assert [v.version for v in versions(ResourceType.STATE, "CA")] == [1]
    assert any("renamed to states/OH.yaml" in n for n in report.notices)
    assert [p.path for p in report.outstanding] == ["states/OH.yaml"]


def test_a_deleted_file_keeps_its_last_version_live(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    data_repo.delete("CA")
    data_repo.commit("Remove CA")

    report = run_reindex()

    assert report.ok
    assert any("states/CA.yaml was deleted" in n for n in report.notices)
    assert Resource.objects.filter(resource_type=ResourceType.STATE, resource_key="CA").exists()


def test_a_rewritten_history_is_refused_unless_allowed(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.update("TX", summary="Version two.")
    run_reindex()
    published = {
        (v.resource_type, v.version): v.payload_hash for v in ResourceVersion.objects.all()
    }
    # Rewrite: drop the last commit and replace it with a different one.
    data_repo.repo.git.reset("--hard", "HEAD~1")
    data_repo.update("TX", summary="Rewritten version two.")

    with pytest.raises(ReindexRefused):
        run_reindex()
    report = run_reindex(allow_rewritten_history=True)

    assert report.rewritten_from
    tx = versions(ResourceType.STATE, "TX")
    assert [v.version for v in tx] == [1, 2, 3]
    assert tx[2].payload["summary"] == "Rewritten version two."
    # Nothing published before was renumbered or altered.
    for (resource_type, number), digest in published.items():
        assert (
            ResourceVersion.objects.get(
                resource_type=resource_type, resource_key="TX", version=number
            ).payload_hash
            == digest
        )


def test_a_rewrite_that_only_changes_commit_metadata_publishes_nothing(data_repo, run_reindex):
    data_repo.seed("TX")
    data_repo.update("TX", summary="Version two.")
    run_reindex()
    data_repo.repo.git.commit(
        "--amend",
        "-m",
        "Reworded message",
        env={"GIT_COMMITTER_NAME": "X", "GIT_COMMITTER_EMAIL": "x@e.org"},
    )

    report = run_reindex(allow_rewritten_history=True)

    assert sum(report.published.values()) == 0
    assert len(versions(ResourceType.STATE, "TX")) == 2


def test_commits_outside_states_are_ignored(data_repo, run_reindex):
    data_repo.seed("TX")
    (data_repo.path / "README.md").write_text("docs")
    data_repo.repo.index.add(["README.md"])
    data_repo.commit("Docs only")

    report = run_reindex()

    assert report.ok
    assert report.commits_read == 1


def test_sequences_follow_publication_order_even_for_backdated_commits(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    run_reindex()
    backdated = datetime(2025, 6, 1, 12, 0, tzinfo=timezone(timedelta(hours=2)))
    data_repo.write("CA", state_payload("CA", summary="Backdated.", last_verified_at="2025-06-01"))
    data_repo.commit("Backdated edit", when=backdated)

    run_reindex()

    latest = ResourceVersion.objects.order_by("-sequence").first()
    assert latest.resource_key == "CA"
    # Git's date is kept; the published one is not before the events published earlier, and
    # the version applies from the day of publication on (as_of for past days is unchanged).
    assert latest.git_committed_at == backdated
    earlier = ResourceVersion.objects.exclude(pk=latest.pk)
    assert all(latest.committed_at >= e.committed_at for e in earlier)
    assert latest.released_at == timezone_now().date()
