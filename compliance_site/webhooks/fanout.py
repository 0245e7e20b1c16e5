"""The outbox: change events become deliveries, in publication order, from a stored mark.

Reindex knows nothing of webhooks. It publishes change events with increasing `sequence` in
one transaction per run; this step reads the events above the mark, creates one delivery per
subscribed endpoint and moves the mark, all in one transaction under the mark's row lock, so
two workers running it at once cannot both fan out the same events. It is idempotent (one
delivery per endpoint and event), so running it too often costs a query and nothing else.
"""

from datetime import datetime

from django.db import transaction

from compliance_site.records.models import ResourceVersion
from compliance_site.webhooks.models import FanOutMark, WebhookDelivery, WebhookEndpoint

BATCH = 1000


def deliveries_fan_out(*, now: datetime) -> int:
    """Create the deliveries of every event published since the last fan-out; returns how
    many were created."""
    created = 0
    while True:
        with transaction.atomic():
            count, more = _fan_out_batch(now)
        created += count
        if not more:
            return created


def _fan_out_batch(now: datetime) -> tuple[int, bool]:
    FanOutMark.objects.get_or_create(name="default")
    mark = FanOutMark.objects.select_for_update().get(name="default")
    events = list(
        ResourceVersion.objects.filter(sequence__gt=mark.last_sequence)
        .order_by("sequence")
        .values("id", "sequence", "resource_type", "resource_key")[:BATCH]
    )
    if not events:
        return 0, False
    endpoints = list(WebhookEndpoint.objects.values("id", "resource_types", "start_sequence"))
    deliveries = [
        WebhookDelivery(
            endpoint_id=endpoint["id"],
            event_id=event["id"],
            resource_type=event["resource_type"],
            resource_key=event["resource_key"],
            sequence=event["sequence"],
            next_attempt_at=now,
            created_at=now,
        )
        for event in events
        for endpoint in endpoints
        if event["resource_type"] in endpoint["resource_types"]
        and event["sequence"] > endpoint["start_sequence"]
    ]
    WebhookDelivery.objects.bulk_create(deliveries, batch_size=BATCH, ignore_conflicts=True)
    mark.last_sequence = events[-1]["sequence"]
    mark.save(update_fields=["last_sequence"])
    return len(deliveries), len(events) == BATCH
