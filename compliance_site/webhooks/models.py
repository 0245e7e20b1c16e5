"""Webhook endpoints registered per API key, and one delivery row per (endpoint, change event).

A delivery is never given up on by itself: it waits (retrying with backoff) until its endpoint
answers, and the endpoint is disabled when it has failed for long enough (services.py). That
keeps "at least once, in order per resource" true across an outage: the owner re-enables the
endpoint and the backlog goes out in order.
"""

from django.db import models

from compliance_site.access.models import ApiKey
from compliance_site.records.models import ResourceVersion


class WebhookEndpoint(models.Model):
    api_key = models.ForeignKey(ApiKey, on_delete=models.CASCADE, related_name="webhooks")
    url = models.URLField(max_length=2000)
    # Resource types (records.models.ResourceType values) whose change events are delivered.
    resource_types = models.JSONField()
    # Kept as written, not hashed: signing needs the secret itself (docs/decisions.md,
    # "Webhook secrets"). Never shown after the answer that issued it, never logged.
    secret = models.CharField(max_length=100, editable=False)
    enabled = models.BooleanField(default=True)
    disabled_at = models.DateTimeField(null=True, blank=True)
    disabled_reason = models.TextField(blank=True)
    # The first failed attempt since the last success; the endpoint is disabled when this is
    # older than COMPLIANCE_WEBHOOK_DISABLE_AFTER_HOURS.
    failing_since = models.DateTimeField(null=True, blank=True)
    # Events up to this sequence were published before the endpoint existed: never delivered.
    start_sequence = models.BigIntegerField(default=0, editable=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        verbose_name = "webhook endpoint"

    def __str__(self) -> str:
        return f"#{self.pk} {self.url}"


class DeliveryStatus(models.TextChoices):
    PENDING = "pending"  # not tried yet, or queued again by redeliver
    RETRYING = "retrying"  # the last attempt failed; next_attempt_at says when the next one is
    DELIVERED = "delivered"


class WebhookDelivery(models.Model):
    endpoint = models.ForeignKey(
        WebhookEndpoint, on_delete=models.CASCADE, related_name="deliveries"
    )
    event = models.ForeignKey(ResourceVersion, on_delete=models.PROTECT, related_name="+")
    # Copied from the event: the per-resource ordering is decided on these without a join.
    resource_type = models.CharField(max_length=16)
    resource_key = models.CharField(max_length=2)
    sequence = models.BigIntegerField()
    status = models.CharField(
        max_length=16, choices=DeliveryStatus.choices, default=DeliveryStatus.PENDING
    )
    attempts = models.PositiveIntegerField(default=0)
    # Failed attempts since the last success or redeliver: the exponent of the backoff.
    failures = models.PositiveIntegerField(default=0)
    # When the delivery may next be tried (while one is in flight: when its lease runs out).
    next_attempt_at = models.DateTimeField(null=True, blank=True)
    last_attempt_at = models.DateTimeField(null=True, blank=True)
    response_status = models.PositiveSmallIntegerField(null=True, blank=True)
    last_error = models.CharField(max_length=300, blank=True)
    delivered_at = models.DateTimeField(null=True, blank=True)
    created_at = models.DateTimeField()

    class Meta:
        verbose_name_plural = "webhook deliveries"
        constraints = [
            models.UniqueConstraint(fields=["endpoint", "event"], name="one_delivery_per_event")
        ]
        indexes = [
            # The head of each (endpoint, resource) queue and the due deliveries of an endpoint.
            models.Index(
                fields=["endpoint", "resource_type", "resource_key", "sequence"],
                name="delivery_resource_queue",
            ),
            models.Index(fields=["status", "next_attempt_at"], name="delivery_due"),
        ]

    def __str__(self) -> str:
        return (
            f"delivery #{self.pk} of {self.resource_type} {self.resource_key} to {self.endpoint_id}"
        )


class FanOutMark(models.Model):
    """The outbox's high-water mark: change events up to `last_sequence` have deliveries."""

    name = models.CharField(max_length=32, unique=True, default="default")
    last_sequence = models.BigIntegerField(default=0)

    def __str__(self) -> str:
        return f"fanned out up to {self.last_sequence}"
