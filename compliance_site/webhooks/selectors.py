"""Reads of webhook endpoints and deliveries, always through the API key that owns them: a key
never learns whether another key's endpoint or delivery exists."""

from datetime import datetime

from django.db.models import QuerySet

from compliance_site.access.models import ApiKey
from compliance_site.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint


class WebhookNotFound(Exception):
    code = "webhook_not_found"


class DeliveryNotFound(Exception):
    code = "delivery_not_found"


def webhook_list(*, api_key: ApiKey) -> QuerySet[WebhookEndpoint]:
    return WebhookEndpoint.objects.filter(api_key=api_key).order_by("id")


def webhook_get(*, api_key: ApiKey, webhook_id: int) -> WebhookEndpoint:
    endpoint = WebhookEndpoint.objects.filter(api_key=api_key, pk=webhook_id).first()
    if endpoint is None:
        raise WebhookNotFound(f"no webhook {webhook_id} for this key")
    return endpoint


def delivery_list(
    *, endpoint: WebhookEndpoint, limit: int, status: str | None = None, before: int | None = None
) -> list[WebhookDelivery]:
    """Newest first; `before` (a delivery id) pages back."""
    deliveries = endpoint.deliveries.select_related("event").order_by("-id")
    if status:
        deliveries = deliveries.filter(status=status)
    if before is not None:
        deliveries = deliveries.filter(id__lt=before)
    return list(deliveries[:limit])


def delivery_get(*, api_key: ApiKey, delivery_id: int) -> WebhookDelivery:
    delivery = (
        WebhookDelivery.objects.select_related("endpoint", "event")
        .filter(endpoint__api_key=api_key, pk=delivery_id)
        .first()
    )
    if delivery is None:
        raise DeliveryNotFound(f"no delivery {delivery_id} for this key")
    return delivery


def endpoints_with_due_deliveries(*, now: datetime) -> list[int]:
    return list(
        WebhookDelivery.objects.filter(endpoint__enabled=True, next_attempt_at__lte=now)
        .exclude(status=DeliveryStatus.DELIVERED)
        .values_list("endpoint_id", flat=True)
        .distinct()
        .order_by("endpoint_id")
    )
