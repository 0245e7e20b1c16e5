"""GET /review_flags: the public report of flagged and stale states."""

from datetime import date, timedelta

import pytest
from django.utils import timezone

from compliance_site.monitoring.models import ReviewFlag
from compliance_site.monitoring.selectors import months_before
from compliance_site.monitoring.services import flag_raise
from tests.compliance.builders import state_payload
from tests.support.compliance_factories import ReviewFlagFactory, SourceSnapshotFactory

pytestmark = [pytest.mark.django_db, pytest.mark.every_backend]


@pytest.fixture
def states(data_repo, run_reindex):
    today = timezone.now().date()
    # Commits dated from today: a record cannot be verified after its commit.
    data_repo.clock = timezone.now()
    data_repo.write("TX", state_payload("TX", last_verified_at=today.isoformat()))
    data_repo.write("OH", state_payload("OH", last_verified_at="2020-01-01"))
    data_repo.write("CA", state_payload("CA", last_verified_at="2020-01-01"))
    data_repo.write("FL", state_payload("FL", last_verified_at=months_before(today, 6).isoformat()))
    data_repo.write(
        "NY",
        state_payload(
            "NY", last_verified_at=(months_before(today, 6) + timedelta(days=1)).isoformat()
        ),
    )
    data_repo.commit("Seed")
    run_reindex()
    return data_repo


def test_the_report_is_public_and_lists_flagged_and_stale_states(anonymous, states):
    flag_raise(state_abbreviation="TX", reason="First note.")
    snapshot = SourceSnapshotFactory(
        state_abbreviation="TX",
        url="https://law.example/tx",
        fetched_at=timezone.now(),
        content_hash="sha256:new",
        successful=True,
    )
    flag_raise(state_abbreviation="TX", reason="The statute page changed.", snapshot=snapshot)
    flag_raise(state_abbreviation="CA", reason="Editor asked for a check.")

    response = anonymous.get("/review_flags")

    assert response.status_code == 200
    assert response.headers["Cache-Control"] == "public, max-age=300"
    body = response.json()
    assert body["meta"] == {"api_version": "v1", "count_flagged": 2, "count_stale": 2}
    flagged = body["data"]["flagged"]
    assert [f["abbreviation"] for f in flagged] == ["CA", "TX"]
    texas = flagged[1]
    assert texas["flagged_reason"] == "The statute page changed."
    assert texas["changed_url"] == "https://law.example/tx"
    assert texas["changed_at"] is not None
    assert texas["yaml_path"] == "states/TX.yaml"
    assert set(texas) == {
        "abbreviation",
        "name",
        "yaml_path",
        "last_verified_at",
        "flagged_reason",
        "changed_url",
        "changed_at",
        # Beyond the contract's fields: where a reviewer reads what changed.
        "diff_url",
    }
    assert texas["diff_url"] == f"/admin/monitoring/sourcesnapshot/{snapshot.pk}/change/"
    assert flagged[0]["changed_url"] is None
    assert flagged[0]["diff_url"] is None
    # OH is stale; CA is stale too but flagged, so listed once, as flagged. FL is exactly six
    # months old (stale); NY a day younger (not stale).
    stale = body["data"]["stale"]
    assert [s["abbreviation"] for s in stale] == ["FL", "OH"]
    assert set(stale[0]) == {"abbreviation", "name", "yaml_path", "last_verified_at"}
    assert body["data"]["generated_at"]


def test_the_report_is_cached_for_five_minutes(anonymous, states):
    first = anonymous.get("/review_flags").json()
    ReviewFlagFactory(
        state_abbreviation="OH",
        reason="Written behind the service's back.",
        created_at=timezone.now(),
    )

    second = anonymous.get("/review_flags").json()

    assert second == first


def test_a_later_verified_edit_clears_the_flag(anonymous, states, run_reindex):
    flag_raise(state_abbreviation="OH", reason="Check the notice rules.")
    assert anonymous.get("/review_flags").json()["meta"]["count_flagged"] == 1

    states.update("OH", last_verified_at=timezone.now().date().isoformat())
    run_reindex()

    body = anonymous.get("/review_flags").json()
    assert body["meta"]["count_flagged"] == 0
    flag = ReviewFlag.objects.get(state_abbreviation="OH")
    assert flag.cleared_at is not None
    assert "version 2" in flag.cleared_reason


def test_an_edit_verified_before_the_flag_does_not_clear_it(anonymous, states, run_reindex):
    flag_raise(state_abbreviation="OH", reason="Check the notice rules.")

    states.update("OH", summary="Typo fix.", last_verified_at="2020-02-01")
    run_reindex()

    assert ReviewFlag.objects.get(state_abbreviation="OH").cleared_at is None


def test_a_key_is_not_needed_but_a_bad_key_is_still_refused(anonymous, states):
    response = anonymous.get("/review_flags", headers={"Authorization": "Bearer nope"})

    assert response.status_code == 401


def test_months_before_handles_month_ends():
    assert months_before(date(2026, 8, 31), 6) == date(2026, 2, 28)
    assert months_before(date(2026, 11, 22), 6) == date(2026, 5, 22)
    assert months_before(date(2026, 3, 15), 6) == date(2025, 9, 15)
