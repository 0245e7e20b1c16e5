"""A force push that drops commits: `reindex --allow-rewritten-history` leaves every state's live
record equal to what HEAD holds, publishing new versions where they differ, and never
renumbers or rewrites a published version."""

import io

import pytest
from django.core.management import CommandError, call_command

from compliance_site.records.documents import StateValidator, parse_state
from compliance_site.records.models import (
    ReindexProblem,
    Resource,
    ResourceType,
    ResourceVersion,
)
from tests.compliance.builders import ESA, state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def reindex_command(*args: str) -> tuple[int, str]:
    out, err = io.StringIO(), io.StringIO()
    try:
        call_command("reindex", *args, stdout=out, stderr=err)
    except CommandError as exc:
        return exc.returncode, err.getvalue() + str(exc)
    return 0, out.getvalue()


def head_payloads(repo) -> dict[str, dict]:
    """Each state file HEAD holds, parsed as reindex parses it."""
    checker = StateValidator()
    found = {}
    for blob in repo.repo.head.commit.tree["states"].blobs:
        document = parse_state(f"states/{blob.name}", blob.data_stream.read(), checker=checker)
        found[document.abbreviation] = document.payload
    return found


def live(resource_type: str) -> dict[str, object]:
    return {
        r.resource_key: r.current.payload
        for r in Resource.objects.select_related("current").filter(resource_type=resource_type)
    }


def test_after_a_force_push_every_live_record_equals_head(data_repo):
    for abbr in ("TX", "CA", "OH", "FL"):
        data_repo.write(abbr, state_payload(abbr))
    seed = data_repo.commit("Seed")
    assert reindex_command()[0] == 0
    # Commits that the force push will drop: edits, a new ESA program, a new state.
    data_repo.update("TX", summary="Only in the dropped history.")
    data_repo.update("CA", esa_program=ESA)
    data_repo.write("NY", state_payload("NY"))
    data_repo.commit("Add NY")
    data_repo.update(
        "CA", summary="Dropped too.", sources=[{"name": "x", "url": "https://x.example/"}]
    )
    assert reindex_command()[0] == 0
    published = list(
        ResourceVersion.objects.values_list("pk", "version", "payload_hash", "sequence")
    )

    data_repo.repo.git.reset("--hard", seed)
    data_repo.update("OH", summary="The new history's own edit.")
    head = data_repo.repo.head.commit.hexsha

    status, message = reindex_command()
    assert status == 2
    assert "rewritten" in message

    status, message = reindex_command("--allow-rewritten-history")

    at_head = head_payloads(data_repo)
    states = live(ResourceType.STATE)
    for abbr, payload in at_head.items():
        assert states[abbr] == payload, abbr
    citations = live(ResourceType.CITATION)
    for abbr, payload in at_head.items():
        assert citations[abbr] == {"source_urls": payload["sources"]}, abbr
    # CA's ESA program is not in HEAD: its removal is published.
    assert live(ResourceType.ESA_PROGRAM)["CA"] is None
    # The reconciling versions name HEAD as their commit.
    tx = Resource.objects.get(resource_type=ResourceType.STATE, resource_key="TX").current
    assert tx.commit_sha == head and tx.version == 3
    # NY is not in HEAD: published versions are never withdrawn, and it is not silent.
    problem = ReindexProblem.objects.get(path="states/NY.yaml")
    assert "not in" in problem.message and problem.commit_sha == head
    assert status == 1
    # Nothing published before was renumbered or rewritten.
    assert (
        list(
            ResourceVersion.objects.filter(pk__in=[row[0] for row in published]).values_list(
                "pk", "version", "payload_hash", "sequence"
            )
        )
        == published
    )
    # A later run has nothing left to reconcile, and NY coming back clears the problem.
    data_repo.write("NY", state_payload("NY", summary="Back in the new history."))
    data_repo.commit("NY again")
    assert reindex_command()[0] == 0
    assert live(ResourceType.STATE)["NY"] == state_payload("NY", summary="Back in the new history.")
    assert not ReindexProblem.objects.exists()
