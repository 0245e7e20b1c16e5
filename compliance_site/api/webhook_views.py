"""The webhook endpoints of the compliance API: HTTP to the webhooks app's selectors and
services, and back. A key sees only its own webhooks and deliveries; any other id is 404."""

from typing import Any, Protocol, cast

from django.conf import settings
from django.utils import timezone
from rest_framework.parsers import JSONParser
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.serializers import Serializer

from compliance_site.access.models import ApiKey
from compliance_site.api import webhook_serializers as shapes
from compliance_site.api.errors import ApiError, InvalidParameter, NotFound, known_code
from compliance_site.api.views import KeyedView, _first_error, _params
from compliance_site.webhooks import selectors, services
from compliance_site.webhooks.models import WebhookEndpoint


class _KeyedRequest(Protocol):
    """The request as ApiAccessMiddleware leaves it; a KeyedView sees only ones with a key."""

    api_key: ApiKey


def _api_key(request: Request) -> ApiKey:
    return cast(_KeyedRequest, request._request).api_key


def _owned_webhook(request: Request, webhook_id: int) -> WebhookEndpoint:
    try:
        if webhook_id > shapes.MAX_ID:
            raise selectors.WebhookNotFound(f"no webhook {webhook_id} for this key")
        return selectors.webhook_get(api_key=_api_key(request), webhook_id=webhook_id)
    except selectors.WebhookNotFound as exc:
        raise NotFound(str(exc), code=known_code(exc.code)) from exc


def _body(serializer_class: type[Serializer[Any]], request: Request) -> dict[str, Any]:
    body = serializer_class(data=request.data)
    if not body.is_valid():
        raise InvalidParameter(_first_error(body.errors))
    validated: dict[str, Any] = body.validated_data
    return validated


class WebhookListView(KeyedView):
    parser_classes = [JSONParser]

    @shapes.WEBHOOK_LIST
    def get(self, request: Request) -> Response:
        endpoints = selectors.webhook_list(api_key=_api_key(request))
        data = [shapes.webhook_shape(endpoint) for endpoint in endpoints]
        return Response(shapes.envelope(data, count=len(data)))

    @shapes.WEBHOOK_CREATE
    def post(self, request: Request) -> Response:
        body = _body(shapes.WebhookCreateSerializer, request)
        try:
            endpoint, secret = services.webhook_create(
                api_key=_api_key(request),
                url=body["url"],
                resource_types=body["resource_types"],
                allow_private=settings.FETCH_ALLOW_PRIVATE_NETWORKS,
            )
        except services.WebhookLimitReached as exc:
            raise ApiError(str(exc), code="webhook_limit_reached", status=409) from exc
        except services.WebhookRefused as exc:
            raise InvalidParameter(str(exc)) from exc
        return Response(shapes.envelope(shapes.webhook_shape(endpoint, secret)), status=201)


class WebhookView(KeyedView):
    parser_classes = [JSONParser]

    @shapes.WEBHOOK_READ
    def get(self, request: Request, webhook_id: int) -> Response:
        endpoint = _owned_webhook(request, webhook_id)
        return Response(shapes.envelope(shapes.webhook_shape(endpoint)))

    @shapes.WEBHOOK_UPDATE
    def patch(self, request: Request, webhook_id: int) -> Response:
        endpoint = _owned_webhook(request, webhook_id)
        body = _body(shapes.WebhookUpdateSerializer, request)
        if body.get("enabled") is True and not endpoint.enabled:
            endpoint = services.webhook_enable(endpoint=endpoint, now=timezone.now())
        elif body.get("enabled") is False and endpoint.enabled:
            services.webhook_pause(endpoint=endpoint, now=timezone.now())
        return Response(shapes.envelope(shapes.webhook_shape(endpoint)))

    @shapes.WEBHOOK_DELETE
    def delete(self, request: Request, webhook_id: int) -> Response:
        services.webhook_delete(endpoint=_owned_webhook(request, webhook_id))
        return Response(status=204)


class WebhookRotateSecretView(KeyedView):
    @shapes.WEBHOOK_ROTATE
    def post(self, request: Request, webhook_id: int) -> Response:
        endpoint = _owned_webhook(request, webhook_id)
        secret = services.webhook_rotate_secret(endpoint=endpoint)
        return Response(shapes.envelope(shapes.webhook_shape(endpoint, secret)))


class DeliveryListView(KeyedView):
    @shapes.DELIVERY_LIST
    def get(self, request: Request, webhook_id: int) -> Response:
        endpoint = _owned_webhook(request, webhook_id)
        params = _params(shapes.DeliveryListParams, request)
        deliveries = selectors.delivery_list(
            endpoint=endpoint,
            limit=params["limit"],
            status=params.get("status"),
            before=params.get("before"),
        )
        data = [shapes.delivery_shape(delivery) for delivery in deliveries]
        meta = {"count": len(data)}
        if len(data) == params["limit"]:
            meta["next_before"] = deliveries[-1].pk
        return Response(shapes.envelope(data, **meta))


class DeliveryRedeliverView(KeyedView):
    @shapes.DELIVERY_REDELIVER
    def post(self, request: Request, delivery_id: int) -> Response:
        try:
            if delivery_id > shapes.MAX_ID:
                raise selectors.DeliveryNotFound(f"no delivery {delivery_id} for this key")
            delivery = selectors.delivery_get(api_key=_api_key(request), delivery_id=delivery_id)
        except selectors.DeliveryNotFound as exc:
            raise NotFound(str(exc), code=known_code(exc.code)) from exc
        delivery = services.delivery_redeliver(delivery=delivery, now=timezone.now())
        return Response(shapes.envelope(shapes.delivery_shape(delivery)), status=202)
