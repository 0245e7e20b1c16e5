"""`load_demo`: the quick start's data, offline, with monitoring snapshots for every state."""

import io

import pytest
from django.core.management import call_command

from compliance_site.monitoring.models import MonitoredSource, SourceSnapshot
from compliance_site.records.documents import JURISDICTIONS

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.every_backend]


def test_load_demo_publishes_every_state_with_recent_snapshots(tmp_path, settings, client):
    settings.COMPLIANCE_DATA_REPO = tmp_path / "demo-data"
    out = io.StringIO()

    call_command("load_demo", stdout=out, stderr=io.StringIO())

    raw_key = out.getvalue().strip().splitlines()[-1]
    auth = {"HTTP_AUTHORIZATION": f"Bearer {raw_key}"}
    for abbreviation in sorted(JURISDICTIONS):
        response = client.get(f"/api/v1/compliance/citations/{abbreviation}", **auth)
        assert response.status_code == 200, abbreviation
        data = response.json()["data"]
        snapshots = data["recent_snapshots"]
        assert snapshots, abbreviation
        assert all(snapshot["successful"] for snapshot in snapshots)
        # Snapshots name the state's own source URLs, not the local stand-in pages.
        assert {s["url"] for s in snapshots} <= {s["url"] for s in data["source_urls"]}
    assert not MonitoredSource.objects.exclude(last_error="").exists()
    flagged = client.get("/api/v1/compliance/review_flags").json()["data"]["flagged"]
    assert [state["abbreviation"] for state in flagged] == ["OH"]

    # A second load changes no page, so it records snapshots but flags nothing new.
    snapshots_before = SourceSnapshot.objects.count()
    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    assert SourceSnapshot.objects.count() == 2 * snapshots_before
    assert client.get("/api/v1/compliance/review_flags").json()["meta"]["count_flagged"] == 1
