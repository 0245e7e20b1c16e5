"""Deliveries to real receivers on loopback: every change event arrives at least once, in
order per resource, signed so the documented code verifies it; failures (500, timeout, a
closed connection) are retried on the documented schedule (the clock is moved, never slept),
and an endpoint that fails for 24 hours is disabled until its owner re-enables it."""

import io
import itertools
from datetime import timedelta

import pytest
from django.core.management import call_command
from django_tasks_db.models import DBTaskResult

from compliance_site.access.keys import api_key_create
from compliance_site.records.models import ResourceType, ResourceVersion
from compliance_site.webhooks.dispatch import endpoint_flush, retry_delay
from compliance_site.webhooks.fanout import deliveries_fan_out
from compliance_site.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from compliance_site.webhooks.services import webhook_create
from tests.compliance.builders import ESA


def _register(url: str, types=("State", "EsaProgram", "Citation")) -> tuple[WebhookEndpoint, str]:
    key, _raw = api_key_create(name="receiver owner")
    return webhook_create(api_key=key, url=url, resource_types=list(types), allow_private=True)


def _publish_history(data_repo, run_reindex) -> None:
    """Three states, each changed more than once, one with an ESA program added later."""
    data_repo.seed("TX", "CA", "OH")
    data_repo.update("TX", summary="Second TX.")
    data_repo.update("CA", summary="Second CA.", esa_program=ESA)
    data_repo.update("TX", summary="Third TX.")
    run_reindex()


def _events_by_resource() -> dict[tuple[str, str], list[int]]:
    order: dict[tuple[str, str], list[int]] = {}
    for row in ResourceVersion.objects.order_by("sequence"):
        order.setdefault((row.resource_type, row.resource_key), []).append(row.version)
    return order


def _arrivals_by_resource(received) -> dict[tuple[str, str], list[int]]:
    order: dict[tuple[str, str], list[int]] = {}
    for item in received:
        data = item.json["data"]
        order.setdefault((data["resource_type"], data["resource_key"]), []).append(data["version"])
    return order


# The worker closes database connections between tasks, as in production, so this test
# commits for real instead of running inside one rolled-back transaction.
@pytest.mark.django_db(transaction=True)
@pytest.mark.every_backend
def test_the_task_worker_delivers_every_event_after_reindex_in_order_and_signed(
    data_repo, run_reindex, receivers, verify_signature, api
):
    _endpoint, secret = _register(receivers.url("/hook"))
    _publish_history(data_repo, run_reindex)
    assert DBTaskResult.objects.filter(task_path__endswith="webhooks_sweep").count() == 1

    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=io.StringIO())

    received = receivers.received("/hook")
    assert _arrivals_by_resource(received) == _events_by_resource()
    for item in received:
        assert verify_signature(secret, item.signature, item.body)
        assert not verify_signature("whsec_wrong", item.signature, item.body)
        assert item.json["type"] == "change"
    # The data is the change event exactly as /changes shows it.
    feed = {
        (e["resource_type"], e["resource_key"], e["version"]): e
        for e in api.get("/changes", params={"limit": 500}).json()["data"]
    }
    for item in received:
        data = item.json["data"]
        assert data == feed[(data["resource_type"], data["resource_key"], data["version"])]
    statuses = set(WebhookDelivery.objects.values_list("status", flat=True))
    assert statuses == {DeliveryStatus.DELIVERED}


@pytest.mark.django_db
def test_only_the_chosen_resource_types_and_events_after_registration_are_delivered(
    data_repo, run_reindex, receivers, clock
):
    data_repo.seed("TX")
    run_reindex()
    endpoint, _secret = _register(receivers.url("/states"), types=["State"])
    data_repo.update("TX", summary="After registration.", esa_program=ESA)
    run_reindex()

    deliveries_fan_out(now=clock())
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)

    sent = [
        (r.json["data"]["resource_type"], r.json["data"]["version"])
        for r in receivers.received("/states")
    ]
    assert sent == [(ResourceType.STATE, 2)]


@pytest.mark.django_db
@pytest.mark.parametrize("failure", ["fail", "slow", "close"])
def test_a_failing_receiver_is_retried_on_the_schedule_until_it_answers(
    data_repo, run_reindex, receivers, clock, failure, verify_signature, settings
):
    # Short, so that the receiver that answers too late costs a second per attempt.
    settings.COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS = 1
    endpoint, secret = _register(receivers.url("/flaky", failure), types=["State"])
    data_repo.seed("TX")
    run_reindex()
    deliveries_fan_out(now=clock())
    start = clock.now

    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts) == (DeliveryStatus.RETRYING, 1)
    expected_error = {"fail": "answered 500", "slow": "timeout", "close": "connection_error"}
    assert expected_error[failure] in delivery.last_error
    assert delivery.response_status == (500 if failure == "fail" else None)

    # Each retry falls due exactly when the schedule says, and not a second before.
    attempt_times = [start]
    for failures in range(1, 6):
        due = attempt_times[-1] + retry_delay(failures)
        assert WebhookDelivery.objects.get().next_attempt_at == due
        clock.now = due - timedelta(seconds=1)
        endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
        assert WebhookDelivery.objects.get().attempts == failures
        clock.now = due
        endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
        assert WebhookDelivery.objects.get().attempts == failures + 1
        attempt_times.append(due)
    gaps = [b - a for a, b in itertools.pairwise(attempt_times)]
    assert gaps == [timedelta(minutes=m) for m in (1, 2, 4, 8, 16)]

    receivers.set("/flaky", "ok")
    clock.now = attempt_times[-1] + retry_delay(6)
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    delivery = WebhookDelivery.objects.get()
    assert (delivery.status, delivery.attempts, delivery.response_status) == ("delivered", 7, 200)
    last = receivers.received("/flaky")[-1]
    # Every attempt is signed at its own time, and the same delivery id repeats.
    assert verify_signature(secret, last.signature, last.body, now=clock.now.timestamp())
    assert {r.json["id"] for r in receivers.received("/flaky")} == {delivery.pk}


def test_the_schedule_doubles_to_four_hours_and_covers_more_than_a_day():
    delays = [retry_delay(n) for n in range(1, 16)]
    assert delays[:4] == [timedelta(minutes=m) for m in (1, 2, 4, 8)]
    assert max(delays) == timedelta(hours=4)
    assert sum(delays, timedelta()) > timedelta(hours=24)


@pytest.mark.django_db
def test_a_failing_resource_holds_back_its_later_events_but_not_other_resources(
    data_repo, run_reindex, receivers, clock
):
    endpoint, _secret = _register(receivers.url("/hook"), types=["State"])
    data_repo.seed("TX", "CA")
    run_reindex()
    deliveries_fan_out(now=clock())
    tx_first = WebhookDelivery.objects.get(resource_key="TX")
    # Only TX v1 fails: the receiver is down exactly for that one attempt.
    receivers.set("/hook", "fail")
    claimed = endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    assert claimed.failed == 2  # CA v1 and TX v1 both failed on the 500
    receivers.set("/hook", "ok")
    data_repo.update("TX", summary="TX v2")
    data_repo.update("CA", summary="CA v2")
    run_reindex()
    deliveries_fan_out(now=clock())

    clock.move(seconds=30)
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    # Nothing of TX or CA may pass its failed first version.
    assert [r.json["data"]["version"] for r in receivers.received("/hook")] == [1, 1]
    clock.move(seconds=30)
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    arrivals = _arrivals_by_resource(receivers.received("/hook"))
    assert arrivals[("State", "TX")] == [1, 1, 2]
    assert arrivals[("State", "CA")] == [1, 1, 2]
    assert WebhookDelivery.objects.get(pk=tx_first.pk).status == DeliveryStatus.DELIVERED


@pytest.mark.django_db
def test_an_endpoint_failing_for_24_hours_is_disabled_and_its_owner_re_enables_it(
    data_repo, run_reindex, receivers, clock, http, settings
):
    key, raw = api_key_create(name="owner", rate_limit_per_minute=1000)
    owner = {"Authorization": f"Bearer {raw}"}
    endpoint, _secret = webhook_create(
        api_key=key,
        url=receivers.url("/down", "fail"),
        resource_types=["State"],
        allow_private=True,
    )
    data_repo.seed("TX")
    run_reindex()
    deliveries_fan_out(now=clock())
    start = clock.now
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    while clock.now - start < timedelta(hours=24):
        clock.now = WebhookDelivery.objects.get().next_attempt_at
        endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    endpoint.refresh_from_db()
    assert not endpoint.enabled
    assert "24 hours" in endpoint.disabled_reason
    attempts = WebhookDelivery.objects.get().attempts
    assert attempts > 10

    # Disabled: nothing is sent however late it gets; new events still queue, in order.
    data_repo.update("TX", summary="While disabled")
    run_reindex()
    deliveries_fan_out(now=clock())
    clock.move(days=2)
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    assert len(receivers.received("/down")) == attempts
    state = http.get(f"/api/v1/compliance/webhooks/{endpoint.pk}", headers=owner).json()["data"]
    assert state["enabled"] is False and state["disabled_reason"] == endpoint.disabled_reason

    receivers.set("/down", "ok")
    answer = http.patch(
        f"/api/v1/compliance/webhooks/{endpoint.pk}", json={"enabled": True}, headers=owner
    )
    assert answer.status_code == 200 and answer.json()["data"]["enabled"] is True
    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)
    delivered = receivers.received("/down")[attempts:]
    assert [r.json["data"]["version"] for r in delivered] == [1, 2]
    assert set(WebhookDelivery.objects.values_list("status", flat=True)) == {"delivered"}


@pytest.mark.django_db
def test_a_private_address_is_refused_when_the_delivery_connects(
    data_repo, run_reindex, receivers, clock, settings
):
    endpoint, _secret = _register(receivers.url("/inside"), types=["State"])
    settings.FETCH_ALLOW_PRIVATE_NETWORKS = False
    data_repo.seed("TX")
    run_reindex()
    deliveries_fan_out(now=clock())

    endpoint_flush(endpoint_id=endpoint.pk, clock=clock)

    assert receivers.received("/inside") == []
    assert WebhookDelivery.objects.get().last_error.startswith("blocked_address")


@pytest.mark.django_db(transaction=True)
def test_a_lost_wake_up_is_made_good_by_the_periodic_sweep(data_repo, run_reindex, receivers):
    endpoint, _secret = _register(receivers.url("/late"), types=["State"])
    data_repo.seed("TX", "CA")
    run_reindex()
    # The sweep the reindex queued is lost (a worker's database wiped, say).
    assert DBTaskResult.objects.all().delete()[0] == 1

    out = io.StringIO()
    call_command("webhooks_sweep", stdout=out)
    assert "2 deliveries created, 1 endpoints queued" in out.getvalue()
    call_command("webhooks_sweep", stdout=out)
    assert WebhookDelivery.objects.count() == 2  # the mark moved: nothing fanned out twice
    call_command("db_worker", "--batch", "--no-startup-delay", "--no-reload", stdout=io.StringIO())
    assert len(receivers.received("/late")) == 2
    assert endpoint.deliveries.filter(status=DeliveryStatus.DELIVERED).count() == 2

    call_command("webhooks_sweep", "--enqueue", stdout=out)
    queued = DBTaskResult.objects.filter(task_path__endswith="webhooks_sweep", status="READY")
    assert queued.count() == 1
