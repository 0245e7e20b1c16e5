"""Writes of webhook endpoints: register, rotate the secret, re-enable, delete, redeliver.

Every function that makes deliveries due wakes the task worker after its transaction commits
(tasks.py), so nothing waits for the next periodic sweep.
"""

import ipaddress
from datetime import datetime

import httpx
from django.db import transaction

from compliance_site.access.models import ApiKey
from compliance_site.records.selectors import change_feed_high_water
from compliance_site.webhooks import tasks
from compliance_site.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint
from compliance_site.webhooks.signing import secret_generate
from shared.fetch import is_public_address

MAX_ENDPOINTS_PER_KEY = 20


class WebhookRefused(Exception):
    """A registration the service will not accept; the message says why."""


class WebhookLimitReached(Exception):
    """The key has as many webhooks as it may have."""


def webhook_url_check(*, url: str, allow_private: bool) -> None:
    """Refuse what can never be delivered to. Host names are checked when a delivery connects
    (shared/fetch.py resolves once and vets every address), which also defeats a name that
    resolves to a public address now and to a private one later."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError) as exc:
        raise WebhookRefused("url: not a valid URL") from exc
    if parsed.scheme not in ("http", "https") or not parsed.host:
        raise WebhookRefused("url: only http and https URLs with a host")
    if parsed.userinfo:
        raise WebhookRefused("url: credentials in the URL are not accepted; verify signatures")
    if allow_private:
        return
    try:
        address = ipaddress.ip_address(parsed.host)
    except ValueError:
        if parsed.host.lower() == "localhost" or parsed.host.lower().endswith(".localhost"):
            raise WebhookRefused("url: not a public address") from None
        return
    if not is_public_address(address):
        raise WebhookRefused("url: not a public address")


@transaction.atomic
def webhook_create(
    *, api_key: ApiKey, url: str, resource_types: list[str], allow_private: bool
) -> tuple[WebhookEndpoint, str]:
    """Register an endpoint; returns it with its signing secret (shown to the owner once). It
    receives every change event published from now on."""
    webhook_url_check(url=url, allow_private=allow_private)
    # Locks the key's row so that two concurrent registrations cannot both pass the cap.
    ApiKey.objects.select_for_update().get(pk=api_key.pk)
    if WebhookEndpoint.objects.filter(api_key=api_key).count() >= MAX_ENDPOINTS_PER_KEY:
        raise WebhookLimitReached(
            f"a key can register at most {MAX_ENDPOINTS_PER_KEY} webhooks; delete one first"
        )
    secret = secret_generate()
    endpoint = WebhookEndpoint.objects.create(
        api_key=api_key,
        url=url,
        resource_types=sorted(set(resource_types)),
        secret=secret,
        start_sequence=change_feed_high_water(),
    )
    return endpoint, secret


def webhook_rotate_secret(*, endpoint: WebhookEndpoint) -> str:
    """A new secret at once: deliveries signed from now on use it, the old one stops working."""
    endpoint.secret = secret_generate()
    endpoint.save(update_fields=["secret"])
    return endpoint.secret


@transaction.atomic
def webhook_enable(*, endpoint: WebhookEndpoint, now: datetime) -> WebhookEndpoint:
    """The owner's answer to a disabled endpoint: its waiting deliveries are due now, in order,
    with a fresh backoff."""
    endpoint.enabled = True
    endpoint.disabled_at = None
    endpoint.disabled_reason = ""
    endpoint.failing_since = None
    endpoint.save(update_fields=["enabled", "disabled_at", "disabled_reason", "failing_since"])
    endpoint.deliveries.exclude(status=DeliveryStatus.DELIVERED).update(
        next_attempt_at=now, failures=0
    )
    tasks.endpoint_flush_soon(endpoint_id=endpoint.pk)
    return endpoint


def webhook_delete(*, endpoint: WebhookEndpoint) -> None:
    endpoint.delete()


@transaction.atomic
def delivery_redeliver(*, delivery: WebhookDelivery, now: datetime) -> WebhookDelivery:
    """Send the event again (the same delivery id, so receivers can tell it is a repeat). It
    goes out after any earlier undelivered event of the same resource, like every delivery."""
    delivery.status = DeliveryStatus.PENDING
    delivery.next_attempt_at = now
    delivery.failures = 0
    delivery.delivered_at = None
    delivery.save(update_fields=["status", "next_attempt_at", "failures", "delivered_at"])
    tasks.endpoint_flush_soon(endpoint_id=delivery.endpoint_id)
    return delivery


def webhook_pause(*, endpoint: WebhookEndpoint, now: datetime) -> None:
    endpoint.enabled = False
    endpoint.disabled_at = now
    endpoint.disabled_reason = "paused by its owner"
    endpoint.save(update_fields=["enabled", "disabled_at", "disabled_reason"])
