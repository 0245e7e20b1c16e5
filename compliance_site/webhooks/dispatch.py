"""Sending deliveries: claim the next one that may go, POST it signed, record the answer.

Order per resource: a delivery may go only when every earlier delivery of the same resource
to the same endpoint has been delivered. A claim takes the row lock (skipping rows another
worker holds) and leases the delivery by moving its next_attempt_at past the send's deadline,
so two workers never send the same delivery at once and a worker that dies mid-send leaves
it to be retried when the lease runs out (at least once).

Retries back off exponentially from RETRY_FIRST_SECONDS, doubling up to RETRY_CAP_SECONDS; a
delivery is never given up on by itself. Its endpoint is disabled once it has failed without
a single success for COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS, and the backlog waits for the
owner to re-enable it.
"""

import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta

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
# Longer than any send may take, so a lease never runs out under a live send.
LEASE_SECONDS = 120
# Enough of the receiver's answer to read its status; the body is not kept.
MAX_RESPONSE_BYTES = 64 * 1024


@dataclass
class FlushReport:
    delivered: int = 0
    failed: int = 0


def retry_delay(failures: int) -> timedelta:
    """The wait after the `failures`-th failure in a row: 1 min, 2, 4, ... 4 h, then every 4 h."""
    exponent = min(failures - 1, 20)
    return timedelta(seconds=min(RETRY_FIRST_SECONDS * 2**exponent, RETRY_CAP_SECONDS))


def delivery_body(*, delivery: WebhookDelivery, event: dict) -> bytes:
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
    """Send every delivery of the endpoint that may go now, oldest first, until none is left
    (those that fail wait for their retry time). `clock` is the test's handle on time."""
    report = FlushReport()
    while True:
        now = clock()
        claimed = _claim_next(endpoint_id, now)
        if claimed is None:
            return report
        delivery, endpoint = claimed
        if _attempt(delivery, endpoint, now):
            report.delivered += 1
        else:
            report.failed += 1


def _claim_next(endpoint_id: int, now: datetime) -> tuple[WebhookDelivery, WebhookEndpoint] | None:
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
        delivery = (
            WebhookDelivery.objects.filter(endpoint_id=endpoint_id, next_attempt_at__lte=now)
            .exclude(status=DeliveryStatus.DELIVERED)
            .filter(~Exists(earlier_waiting))
            .order_by("sequence")
            .select_for_update(skip_locked=True)
            .first()
        )
        if delivery is None:
            return None
        delivery.next_attempt_at = now + timedelta(seconds=LEASE_SECONDS)
        delivery.save(update_fields=["next_attempt_at"])
    return delivery, endpoint


def _attempt(delivery: WebhookDelivery, endpoint: WebhookEndpoint, now: datetime) -> bool:
    event = ResourceVersion.objects.values(*CHANGE_EVENT_COLUMNS).get(pk=delivery.event_id)
    body = delivery_body(delivery=delivery, event=event)
    headers = {
        "Content-Type": "application/json",
        HEADER: signature_header(secret=endpoint.secret, timestamp=int(now.timestamp()), body=body),
    }
    status, error = None, ""
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
        status = result.status_code
        if not 200 <= status < 300:
            error = f"the endpoint answered {status}"
    except FetchError as exc:
        error = f"{exc.code}: {exc.message}"
    if error:
        _record_failure(delivery, endpoint, now, status, error)
        return False
    _record_success(delivery, endpoint, now, status)
    return True


def _record_success(
    delivery: WebhookDelivery, endpoint: WebhookEndpoint, now: datetime, status: int | None
) -> None:
    delivery.status = DeliveryStatus.DELIVERED
    delivery.attempts += 1
    delivery.failures = 0
    delivery.next_attempt_at = None
    delivery.last_attempt_at = delivery.delivered_at = now
    delivery.response_status = status
    delivery.last_error = ""
    delivery.save()
    WebhookEndpoint.objects.filter(pk=endpoint.pk, failing_since__isnull=False).update(
        failing_since=None
    )


def _record_failure(
    delivery: WebhookDelivery,
    endpoint: WebhookEndpoint,
    now: datetime,
    status: int | None,
    error: str,
) -> None:
    delivery.status = DeliveryStatus.RETRYING
    delivery.attempts += 1
    delivery.failures += 1
    delivery.next_attempt_at = now + retry_delay(delivery.failures)
    delivery.last_attempt_at = now
    delivery.response_status = status
    delivery.last_error = error[:300]
    delivery.save()
    with transaction.atomic():
        endpoint = WebhookEndpoint.objects.select_for_update().get(pk=endpoint.pk)
        if endpoint.failing_since is None:
            endpoint.failing_since = now
            endpoint.save(update_fields=["failing_since"])
        disable_after = timedelta(hours=settings.COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS)
        if endpoint.enabled and now - endpoint.failing_since >= disable_after:
            _disable(endpoint, now, error)


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
