"""Shapes and inputs of the webhook endpoints (compliance_site/webhooks), with their OpenAPI
documentation: one decorator per operation at the end, as in api/schema.py."""

from collections.abc import Iterable
from typing import Any

from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    inline_serializer,
)
from rest_framework import serializers

from compliance_site.api.schema import errors
from compliance_site.api.serializers import API_VERSION
from compliance_site.records.models import ResourceType
from compliance_site.webhooks.models import DeliveryStatus, WebhookDelivery, WebhookEndpoint

MAX_ID = 2**63 - 1


class WebhookSerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField()
    url = serializers.URLField()
    resource_types = serializers.ListField(child=serializers.ChoiceField(ResourceType.values))
    enabled = serializers.BooleanField(
        help_text="False once every delivery has failed for 24 hours (or the owner paused it): "
        'nothing is sent until `PATCH {"enabled": true}`; events keep queueing meanwhile.'
    )
    disabled_at = serializers.DateTimeField(allow_null=True)
    disabled_reason = serializers.CharField(allow_blank=True)
    created_at = serializers.DateTimeField()


class WebhookWithSecretSerializer(WebhookSerializer):
    secret = serializers.CharField(
        help_text="The signing secret, shown only in this answer (create, rotate_secret)."
    )


class WebhookCreateSerializer(serializers.Serializer[Any]):
    url = serializers.URLField(
        max_length=2000, help_text="http(s); a private or loopback address is refused."
    )
    resource_types = serializers.ListField(
        child=serializers.ChoiceField(ResourceType.values),
        min_length=1,
        max_length=len(ResourceType.values),
        help_text="The change events to deliver.",
    )


class StrictBooleanField(serializers.BooleanField):
    """JSON true or false only: DRF's BooleanField also takes 1, "yes" and "on", which the
    schema's `boolean` does not allow."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class WebhookUpdateSerializer(serializers.Serializer[Any]):
    enabled = StrictBooleanField(
        required=False,
        help_text="true re-enables a disabled endpoint: its waiting deliveries go out in order; "
        "false pauses it. Absent: no change.",
    )


class DeliveryEventSerializer(serializers.Serializer[Any]):
    resource_type = serializers.ChoiceField(ResourceType.values)
    resource_key = serializers.CharField()
    version = serializers.IntegerField()


class DeliverySerializer(serializers.Serializer[Any]):
    id = serializers.IntegerField(help_text="Also the `id` of the delivered body.")
    event = DeliveryEventSerializer()
    status = serializers.ChoiceField(DeliveryStatus.values)
    attempts = serializers.IntegerField()
    response_status = serializers.IntegerField(
        allow_null=True, help_text="The HTTP status of the last attempt's answer, if any."
    )
    last_error = serializers.CharField(allow_blank=True)
    next_attempt_at = serializers.DateTimeField(
        allow_null=True, help_text="When the next attempt is due; null once delivered."
    )
    last_attempt_at = serializers.DateTimeField(allow_null=True)
    delivered_at = serializers.DateTimeField(allow_null=True)
    created_at = serializers.DateTimeField()


class DeliveryListParams(serializers.Serializer[Any]):
    status = serializers.ChoiceField(required=False, choices=DeliveryStatus.values)
    before = serializers.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_ID,
        help_text="meta.next_before of the previous page: older deliveries.",
    )
    limit = serializers.IntegerField(required=False, default=50, min_value=1, max_value=200)


def webhook_shape(endpoint: WebhookEndpoint, secret: str | None = None) -> dict[str, Any]:
    data = WebhookSerializer(endpoint).data
    return data if secret is None else {**data, "secret": secret}


def delivery_shape(delivery: WebhookDelivery) -> dict[str, Any]:
    event = delivery.event
    # Iterating a serializer's fields yields their names (the stubs say the fields).
    names: Iterable[str] = DeliverySerializer().fields
    record: dict[str, Any] = {
        **{name: getattr(delivery, name) for name in names},
        "event": {
            "resource_type": event.resource_type,
            "resource_key": event.resource_key,
            "version": event.version,
        },
    }
    return DeliverySerializer(record).data


def envelope(data: Any, **meta: Any) -> dict[str, Any]:
    return {"data": data, "meta": {"api_version": API_VERSION, **meta}}


# OpenAPI documentation, one decorator per operation. ----------------------------------------

_META = inline_serializer("WebhookMeta", {"api_version": serializers.CharField()})
_LIST_META = inline_serializer(
    "WebhookListMeta",
    {"api_version": serializers.CharField(), "count": serializers.IntegerField()},
)
_DELIVERY_LIST_META = inline_serializer(
    "DeliveryListMeta",
    {
        "api_version": serializers.CharField(),
        "count": serializers.IntegerField(help_text="Deliveries in this page."),
        "next_before": serializers.IntegerField(
            required=False, help_text="Send as `before` for the next (older) page."
        ),
    },
)


def _envelope(
    name: str,
    data: serializers.Field[Any, Any, Any, Any],
    meta: serializers.Serializer[Any] = _META,
) -> serializers.Serializer[Any]:
    return inline_serializer(name, {"data": data, "meta": meta})


WEBHOOK_ID = OpenApiParameter(
    "webhook_id",
    {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    OpenApiParameter.PATH,
    description="A webhook of the calling key; any other id is 404 `webhook_not_found`.",
)
DELIVERY_ID = OpenApiParameter(
    "delivery_id",
    {"type": "integer", "minimum": 1, "maximum": MAX_ID},
    OpenApiParameter.PATH,
    description="A delivery to a webhook of the calling key; else 404 `delivery_not_found`.",
)
_WEBHOOK = _envelope("WebhookEnvelope", WebhookSerializer())
_WEBHOOK_WITH_SECRET = _envelope("WebhookWithSecretEnvelope", WebhookWithSecretSerializer())
_DELIVERY = _envelope("DeliveryEnvelope", DeliverySerializer())

WEBHOOK_LIST = extend_schema(
    operation_id="webhooks_list",
    responses=_envelope("WebhookListEnvelope", WebhookSerializer(many=True), _LIST_META),
    description="The calling key's webhooks (never their secrets).",
)
WEBHOOK_CREATE = extend_schema(
    operation_id="webhooks_create",
    request=WebhookCreateSerializer,
    responses={201: _WEBHOOK_WITH_SECRET, **errors(400, 409, 415)},
    description="Register an endpoint for the calling key. It receives every change event of "
    "its resource types published from now on, as a signed POST (docs/compliance-integrators"
    ".md). The `secret` is shown only in this answer. A key has at most 20 webhooks (409 "
    "`webhook_limit_reached`).",
)
WEBHOOK_READ = extend_schema(
    operation_id="webhooks_retrieve",
    parameters=[WEBHOOK_ID],
    responses={200: _WEBHOOK, **errors(404)},
)
WEBHOOK_UPDATE = extend_schema(
    operation_id="webhooks_partial_update",
    parameters=[WEBHOOK_ID],
    request=WebhookUpdateSerializer,
    responses={200: _WEBHOOK, **errors(400, 404, 415)},
    description='`{"enabled": true}` re-enables a disabled endpoint: its waiting deliveries '
    "are sent in order with a fresh backoff.",
)
WEBHOOK_DELETE = extend_schema(
    operation_id="webhooks_destroy",
    parameters=[WEBHOOK_ID],
    responses={204: OpenApiResponse(description="Deleted, with its delivery log."), **errors(404)},
)
WEBHOOK_ROTATE = extend_schema(
    operation_id="webhooks_rotate_secret",
    parameters=[WEBHOOK_ID],
    request=None,
    responses={200: _WEBHOOK_WITH_SECRET, **errors(404)},
    description="A new secret, shown only in this answer; deliveries are signed with it from "
    "now on and the old one stops working.",
)
DELIVERY_LIST = extend_schema(
    operation_id="webhooks_deliveries_list",
    parameters=[WEBHOOK_ID, DeliveryListParams],
    responses={
        200: _envelope("DeliveryListEnvelope", DeliverySerializer(many=True), _DELIVERY_LIST_META),
        **errors(400, 404),
    },
    description="The endpoint's delivery log, newest first.",
)
DELIVERY_REDELIVER = extend_schema(
    operation_id="deliveries_redeliver",
    parameters=[DELIVERY_ID],
    request=None,
    responses={202: _DELIVERY, **errors(404)},
    description="Send the event again (same delivery id), after any earlier undelivered event "
    "of the same resource.",
)
