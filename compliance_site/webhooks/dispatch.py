"""Sending deliveries: claim the next one that may go, POST it signed, record the answer.

Order per resource: a delivery may go only when every earlier delivery of the same resource
to the same endpoint has been delivered. A claim takes the row locks (skipping rows another
worker holds) and leases the deliveries by moving their next_attempt_at past the sends'
deadline, so two workers never send the same delivery at once and a worker that dies
mid-send leaves it to be retried when the lease runs out (at least once).

Retries back off exponentially from RETRY_FIRST_SECONDS, doubling up to RETRY_CAP_SECONDS; a
delivery is never given up on by itself. Its endpoint is disabled once it has failed without
a single success for COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS, and the backlog waits for the
owner to re-enable it.
"""

import json
import logging
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from itertools import repeat
from typing import Any

from django.conf import settings
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from compliance_site.records.events import CHANGE_EVENT_COLUMNS, change_event_shape
from compliance_site.records.models import ResourceVersion
from compliance_site.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from compliance_site.webhooks.signing import HEADER, signature_header
from shared.fetch import FetchError, fetch

logger = logging.getLogger(__name__)

RETRY_FIRST_SECONDS = 60
RETRY_CAP_SECONDS = 4 * 3600
# Deliveries claimed at once (each the head of its resource's queue) and sent at once.
CLAIM_BATCH = 64
SEND_PARALLEL = 8
# Enough of the receiver's answer to read its status; the body is not kept.
MAX_RESPONSE_BYTES = 64 * 1024


@dataclass
class FlushReport:
    delivered: int = 0
    failed: int = 0


@dataclass(frozen=True)
class _Outcome:
    status: int | None
    error: str  # empty on success


def retry_delay(failures: int) -> timedelta:
    """The wait after the `failures`-th failure in a row: 1 min, 2, 4, ... 4 h, then every 4 h."""
    exponent = min(failures - 1, 20)
    return timedelta(seconds=min(RETRY_FIRST_SECONDS * 2**exponent, RETRY_CAP_SECONDS))


def delivery_body(*, delivery: WebhookDelivery, event: dict[str, Any]) -> bytes:
    envelope = {
        "id": delivery.pk,
        "type": "change",
        "created_at": delivery.created_at.isoformat(),
        "data": change_event_shape(event),
    }
    return json.dumps(envelope, separators=(",", ":"), ensure_ascii=False).encode()


def endpoint_flush(
    *, endpoint_id: int, clock: Callable[[], datetime] = timezone.now
) -> FlushReport:
    """Send every delivery of the endpoint that may go now, until none is left (those that
    fail wait for their retry time). `clock` is the test's handle on time.

    Each round claims the head of every resource's queue (at most one delivery per resource,
    so sending them at once keeps the order per resource) and sends them SEND_PARALLEL at a
    time: a round costs a few queries whatever its size, and one slow resource does not hold
    up the others."""
    report = FlushReport()
    while True:
        now = clock()
        claimed = _claim_heads(endpoint_id, now)
        if claimed is None:
            return report
        endpoint, deliveries = claimed
        events = {
            row["id"]: row
            for row in ResourceVersion.objects.filter(
                pk__in=[d.event_id for d in deliveries]
            ).values("id", *CHANGE_EVENT_COLUMNS)
        }
        rows = [events[delivery.event_id] for delivery in deliveries]
        with ThreadPoolExecutor(SEND_PARALLEL) as pool:
            outcomes = list(pool.map(_send, deliveries, repeat(endpoint), rows, repeat(now)))
        _record(endpoint, deliveries, outcomes, now)
        succeeded = sum(1 for outcome in outcomes if not outcome.error)
        report.delivered += succeeded
        report.failed += len(outcomes) - succeeded


def _claim_heads(
    endpoint_id: int, now: datetime
) -> tuple[WebhookEndpoint, list[WebhookDelivery]] | None:
    endpoint = WebhookEndpoint.objects.filter(pk=endpoint_id, enabled=True).first()
    if endpoint is None:
        return None
    earlier_waiting = WebhookDelivery.objects.filter(
        endpoint_id=endpoint_id,
        resource_type=OuterRef("resource_type"),
        resource_key=OuterRef("resource_key"),
        sequence__lt=OuterRef("sequence"),
    ).exclude(status=DeliveryStatus.DELIVERED)
    with transaction.atomic():
        deliveries = list(
            WebhookDelivery.objects.filter(endpoint_id=endpoint_id, next_attempt_at__lte=now)
            .exclude(status=DeliveryStatus.DELIVERED)
            .filter(~Exists(earlier_waiting))
            .order_by("sequence")
            .select_for_update(skip_locked=True)[:CLAIM_BATCH]
        )
        if not deliveries:
            return None
        rounds = -(-len(deliveries) // SEND_PARALLEL)
        lease = timedelta(seconds=settings.COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS * rounds + 60)
        WebhookDelivery.objects.filter(pk__in=[d.pk for d in deliveries]).update(
            next_attempt_at=now + lease
        )
    return endpoint, deliveries


def _send(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint, event: dict[str, Any], now: datetime
) -> _Outcome:
    """One POST; no database work here (it runs on the pool's threads)."""
    body = delivery_body(delivery=delivery, event=event)
    headers = {
        "Content-Type": "application/json",
        HEADER: signature_header(secret=endpoint.secret, timestamp=int(now.timestamp()), body=body),
    }
    try:
        result = fetch(
            endpoint.url,
            method="POST",
            content=body,
            headers=headers,
            user_agent=settings.COMPLIANCE_WEBHOOK_USER_AGENT,
            timeout=settings.COMPLIANCE_WEBHOOK_TIMEOUT_SECONDS,
            max_bytes=MAX_RESPONSE_BYTES,
            # A webhook is answered where it is sent; a redirect is a failure, not a new target.
            max_redirects=0,
        )
    except FetchError as exc:
        return _Outcome(None, f"{exc.code}: {exc.message}")
    if 200 <= result.status_code < 300:
        return _Outcome(result.status_code, "")
    return _Outcome(result.status_code, f"the endpoint answered {result.status_code}")


def _record(
    endpoint: WebhookEndpoint,
    deliveries: list[WebhookDelivery],
    outcomes: list[_Outcome],
    now: datetime,
) -> None:
    for delivery, outcome in zip(deliveries, outcomes, strict=True):
        delivery.attempts += 1
        delivery.last_attempt_at = now
        delivery.response_status = outcome.status
        delivery.last_error = outcome.error[:300]
        if outcome.error:
            delivery.status = DeliveryStatus.RETRYING
            delivery.failures += 1
            delivery.next_attempt_at = now + retry_delay(delivery.failures)
        else:
            delivery.status = DeliveryStatus.DELIVERED
            delivery.failures = 0
            delivery.next_attempt_at = None
            delivery.delivered_at = now
    with transaction.atomic():
        WebhookDelivery.objects.bulk_update(deliveries, _RECORDED_FIELDS)
        locked = WebhookEndpoint.objects.select_for_update().filter(pk=endpoint.pk).first()
        if locked is None:
            return  # deleted by its owner while the round was out
        errors = [outcome.error for outcome in outcomes if outcome.error]
        if len(errors) < len(outcomes):
            # One answer is enough to know the endpoint works.
            if locked.failing_since is not None:
                locked.failing_since = None
                locked.save(update_fields=["failing_since"])
            return
        if locked.failing_since is None:
            locked.failing_since = now
            locked.save(update_fields=["failing_since"])
        disable_after = timedelta(hours=settings.COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS)
        if locked.enabled and now - locked.failing_since >= disable_after:
            _disable(locked, now, errors[-1])


_RECORDED_FIELDS = [
    "status",
    "attempts",
    "failures",
    "next_attempt_at",
    "last_attempt_at",
    "response_status",
    "last_error",
    "delivered_at",
]


def _disable(endpoint: WebhookEndpoint, now: datetime, error: str) -> None:
    hours = settings.COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS
    endpoint.enabled = False
    endpoint.disabled_at = now
    endpoint.disabled_reason = (
        f"every delivery failed for {hours} hours (last: {error[:200]}); "
        'waiting deliveries resume when the owner sends PATCH {"enabled": true}'
    )
    endpoint.save(update_fields=["enabled", "disabled_at", "disabled_reason"])
    # The id only: the URL can carry the owner's tokens.
    logger.warning("webhook %s disabled after %s hours of failed deliveries", endpoint.pk, hours)
