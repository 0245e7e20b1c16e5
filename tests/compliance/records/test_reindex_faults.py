"""Reindex against damaged input: a corrupt object store, and arbitrary bytes as YAML."""

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compliance_site.records.documents import InvalidDocument, StateValidator, parse_state
from compliance_site.records.models import Resource, ResourceType, ResourceVersion
from tests.compliance.builders import state_payload

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


def test_a_corrupt_blob_is_reported_and_nothing_published_is_lost(data_repo, run_reindex):
    data_repo.seed("TX", "CA")
    run_reindex()
    published = list(ResourceVersion.objects.values_list("pk", "payload_hash"))
    data_repo.write("TX", state_payload("TX", summary="Will be corrupted on disk."))
    data_repo.write("CA", state_payload("CA", summary="Readable."))
    data_repo.commit("Edit both")
    blob = data_repo.repo.git.rev_parse("HEAD:states/TX.yaml")
    loose = data_repo.path / ".git" / "objects" / blob[:2] / blob[2:]
    loose.chmod(0o644)
    # Damage the compressed stream, as a bad disk would.
    damaged = loose.read_bytes()
    loose.write_bytes(damaged[:-6] + b"xxxxxx")

    report = run_reindex()

    assert not report.ok
    [problem] = report.problems
    assert problem.path == "states/TX.yaml"
    assert "unreadable blob" in problem.message
    assert (
        list(
            ResourceVersion.objects.filter(pk__in=[p for p, _ in published]).values_list(
                "pk", "payload_hash"
            )
        )
        == published
    )
    ca = Resource.objects.get(resource_type=ResourceType.STATE, resource_key="CA").current
    assert ca.version == 2


@settings(max_examples=200, deadline=None)
@given(content=st.binary(max_size=400) | st.text(max_size=400).map(str.encode))
def test_any_bytes_either_parse_or_raise_invalid_document(content):
    try:
        document = parse_state("states/TX.yaml", content, checker=StateValidator())
    except InvalidDocument as exc:
        assert exc.message.startswith("states/TX.yaml")
    else:
        assert document.abbreviation == "TX"
