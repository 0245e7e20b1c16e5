"""`load_demo`: the quick start's data, offline, with monitoring snapshots for every state."""

import io

import pytest
from django.core.management import CommandError, call_command

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


def test_a_demo_key_given_to_load_demo_keeps_working_across_loads(tmp_path, settings, client):
    """The quick start's demo key (its env file's) is the same at every start: an integrator's
    saved key keeps working; a fresh load without it revokes the old demo key."""
    settings.COMPLIANCE_DATA_REPO = tmp_path / "demo-data"
    demo_key = "cdk_0123456789ab_" + "k" * 43
    auth = {"HTTP_AUTHORIZATION": f"Bearer {demo_key}"}

    for _ in range(2):
        out = io.StringIO()
        call_command("load_demo", "--api-key", demo_key, stdout=out, stderr=io.StringIO())
        assert out.getvalue().strip().splitlines()[-1] == demo_key
        assert client.get("/api/v1/compliance/states/TX", **auth).status_code == 200

    call_command("load_demo", stdout=io.StringIO(), stderr=io.StringIO())
    assert client.get("/api/v1/compliance/states/TX", **auth).status_code == 401


@pytest.mark.parametrize("value", ["not-a-key", "cdk_short_secret", "cdk_0123456789ab_"])
def test_load_demo_refuses_a_demo_key_not_of_our_format(tmp_path, settings, value):
    settings.COMPLIANCE_DATA_REPO = tmp_path / "demo-data"
    with pytest.raises(CommandError, match="--api-key"):
        call_command("load_demo", "--api-key", value, stdout=io.StringIO())
