"""The compliance client an integrator generates with `openapi-python-client` from the served
schema, against a live server: it pages /changes by `next_cursor` while reindex publishes
between pages, and reads exactly the events that were there when it began, each once; the
pass's `sync_token` then returns exactly the events published meanwhile."""

import importlib
from pathlib import Path

import pytest

from compliance_site.records.models import ResourceVersion
from tests.compliance.builders import state_payload
from tests.support.generated_clients import generated_client

# The live server reads what the test commits; the keyset runs on both databases.
pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]

STATES = ["AL", "AK", "AZ", "CA", "CO", "FL", "NY", "OH", "TX", "UT", "WA", "WY"]


def _events() -> set[tuple[str, str, int]]:
    return set(ResourceVersion.objects.values_list("resource_type", "resource_key", "version"))


def test_the_generated_client_pages_changes_by_cursor_across_reindexes(
    live_server, data_repo, run_reindex, api_key, tmp_path: Path
):
    for abbr in STATES:
        data_repo.write(abbr, state_payload(abbr))
    data_repo.commit("Seed twelve states")
    assert run_reindex().ok
    before = _events()
    schema_url = f"{live_server.url}/api/v1/compliance/schema"

    with generated_client(schema_url, "compliance_client", tmp_path) as package:
        changes = importlib.import_module("compliance_client.api.changes.changes_list")
        client = package.AuthenticatedClient(
            base_url=live_server.url, token=api_key, raise_on_unexpected_status=True
        )
        seen: list[tuple[str, str, int]] = []
        page = changes.sync(client=client, limit=5)
        sync_token = page.meta.sync_token
        edits = iter(STATES)
        while True:
            assert isinstance(page, package.models.ChangeFeedEnvelope), page
            seen += [(e.resource_type, e.resource_key, e.version) for e in page.data]
            cursor = page.meta.next_cursor
            if not isinstance(cursor, str):
                break
            # Reindex publishes a new version between two pages of the walk.
            data_repo.update(next(edits), summary=f"Edited during page {len(seen) // 5}")
            assert run_reindex().ok
            page = changes.sync(client=client, limit=5, cursor=cursor)

        published_meanwhile = _events() - before
        assert published_meanwhile
        assert len(seen) == len(set(seen)), "an event was read twice"
        assert set(seen) == before, "the walk skipped an event or read a later one"

        later: list[tuple[str, str, int]] = []
        page = changes.sync(client=client, limit=500, sync_token=sync_token)
        later += [(e.resource_type, e.resource_key, e.version) for e in page.data]
        assert set(later) == published_meanwhile
        assert len(later) == len(published_meanwhile)
