"""The webhooks in the admin: the delivery log with its state, a disabled endpoint's reason,
never a secret, and the redeliver and re-enable actions."""

import re

import httpx
import pytest
from django.utils import timezone

from compliance_site.access.keys import api_key_create
from compliance_site.webhooks.dispatch import endpoint_flush
from compliance_site.webhooks.fanout import deliveries_fan_out
from compliance_site.webhooks.models import WebhookDelivery, WebhookEndpoint
from compliance_site.webhooks.services import webhook_create, webhook_pause
from tests.support.inprocess import BASE_URL, DjangoTransport
from tests.support.shared_factories import UserFactory

pytestmark = pytest.mark.django_db


def _csrf(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]


@pytest.fixture
def operator(served_queries):
    UserFactory(username="operator", password="pass phrase", superuser=True)
    client = httpx.Client(
        transport=DjangoTransport(served_queries), base_url=BASE_URL, follow_redirects=True
    )
    login = client.get("/admin/login/")
    client.post(
        "/admin/login/?next=/admin/",
        data={
            "username": "operator",
            "password": "pass phrase",
            "csrfmiddlewaretoken": _csrf(login.text),
            "next": "/admin/",
        },
        headers={"Referer": BASE_URL + "/admin/login/"},
    )
    yield client
    client.close()


def _action(client: httpx.Client, changelist: str, action: str, pk: int) -> httpx.Response:
    page = client.get(changelist)
    return client.post(
        changelist,
        data={
            "action": action,
            "_selected_action": [str(pk)],
            "csrfmiddlewaretoken": _csrf(page.text),
        },
        headers={"Referer": str(page.url)},
    )


def test_the_admin_shows_the_log_redelivers_and_re_enables(
    operator, data_repo, run_reindex, receivers
):
    key, _raw = api_key_create(name="owner")
    endpoint, secret = webhook_create(
        api_key=key, url=receivers.url("/admin-hook"), resource_types=["State"], allow_private=True
    )
    data_repo.seed("TX")
    run_reindex()
    deliveries_fan_out(now=timezone.now())
    endpoint_flush(endpoint_id=endpoint.pk)
    delivery = WebhookDelivery.objects.get()

    log = operator.get("/admin/webhooks/webhookdelivery/")
    assert log.status_code == 200
    assert "delivered" in log.text and "TX" in log.text

    _action(operator, "/admin/webhooks/webhookdelivery/", "redeliver", delivery.pk)
    delivery.refresh_from_db()
    assert delivery.status == "pending"

    webhook_pause(endpoint=endpoint, now=timezone.now())
    page = operator.get(f"/admin/webhooks/webhookendpoint/{endpoint.pk}/change/")
    assert "paused by its owner" in page.text
    assert secret not in page.text
    _action(operator, "/admin/webhooks/webhookendpoint/", "enable", endpoint.pk)
    assert WebhookEndpoint.objects.get().enabled
    endpoint_flush(endpoint_id=endpoint.pk)
    assert [r.json["id"] for r in receivers.received("/admin-hook")] == [delivery.pk] * 2


def test_an_operator_registers_for_a_key_and_rotates_the_secret_shown_once(operator):
    key, _raw = api_key_create(name="owner")
    add = operator.get("/admin/webhooks/webhookendpoint/add/")
    refused = operator.post(
        "/admin/webhooks/webhookendpoint/add/",
        data={
            "api_key": str(key.pk),
            "url": "http://127.0.0.1/hook",
            "resource_types": ["State"],
            "csrfmiddlewaretoken": _csrf(add.text),
        },
        headers={"Referer": str(add.url)},
    )
    assert "not a public address" in refused.text
    assert not WebhookEndpoint.objects.exists()

    added = operator.post(
        "/admin/webhooks/webhookendpoint/add/",
        data={
            "api_key": str(key.pk),
            "url": "https://hooks.example/compliance",
            "resource_types": ["State", "Citation"],
            "csrfmiddlewaretoken": _csrf(add.text),
        },
        headers={"Referer": str(add.url)},
    )
    endpoint = WebhookEndpoint.objects.get()
    assert (endpoint.api_key, endpoint.resource_types) == (key, ["Citation", "State"])
    assert endpoint.secret in added.text  # the message after the save, once
    assert endpoint.secret not in operator.get("/admin/webhooks/webhookendpoint/").text

    rotated = _action(operator, "/admin/webhooks/webhookendpoint/", "rotate_secret", endpoint.pk)
    old = endpoint.secret
    endpoint.refresh_from_db()
    assert endpoint.secret != old and endpoint.secret in rotated.text
