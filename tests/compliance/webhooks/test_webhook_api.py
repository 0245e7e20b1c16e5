"""The webhook endpoints of the API: registered per key (another key gets 404), the secret shown
once, hostile input answered 400/404/415 in the error envelope, the delivery log and redeliver,
and the OpenAPI schema describing exactly what they answer."""

import pytest
from django.utils import timezone

from compliance_site.access.keys import api_key_create
from compliance_site.records.models import ResourceVersion
from compliance_site.webhooks.dispatch import endpoint_flush
from compliance_site.webhooks.fanout import deliveries_fan_out
from compliance_site.webhooks.models import WebhookEndpoint

pytestmark = pytest.mark.django_db

WEBHOOK_FIELDS = {
    "id",
    "url",
    "resource_types",
    "enabled",
    "disabled_at",
    "disabled_reason",
    "created_at",
}


@pytest.fixture
def other(http):
    _key, raw = api_key_create(name="someone else", rate_limit_per_minute=1000)
    http.headers["Authorization"] = f"Bearer {raw}"
    return http


def _create(api, url="https://hooks.example/compliance", types=("State",)):
    return api.post("/webhooks", json={"url": url, "resource_types": list(types)})


def test_registering_shows_the_secret_once_and_lists_without_it(api):
    answer = _create(api, types=["State", "Citation", "State"])
    assert answer.status_code == 201
    created = answer.json()["data"]
    assert set(created) == WEBHOOK_FIELDS | {"secret"}
    assert created["secret"].startswith("whsec_") and len(created["secret"]) > 40
    assert created["resource_types"] == ["Citation", "State"]
    assert created["enabled"] is True

    listed = api.get("/webhooks").json()
    assert listed["meta"]["count"] == 1
    assert listed["data"] == [{k: v for k, v in created.items() if k != "secret"}]
    read = api.get(f"/webhooks/{created['id']}").json()["data"]
    assert "secret" not in read


def test_another_key_sees_none_of_it(api, other):
    created = _create(api).json()["data"]
    assert other.get("/api/v1/compliance/webhooks").json()["data"] == []
    for method, path in [
        ("GET", f"/webhooks/{created['id']}"),
        ("DELETE", f"/webhooks/{created['id']}"),
        ("POST", f"/webhooks/{created['id']}/rotate_secret"),
        ("GET", f"/webhooks/{created['id']}/deliveries"),
    ]:
        answer = other.request(method, "/api/v1/compliance" + path)
        assert answer.status_code == 404, path
        assert answer.json()["error"]["code"] == "webhook_not_found"
    patch = other.patch(f"/api/v1/compliance/webhooks/{created['id']}", json={"enabled": False})
    assert patch.status_code == 404
    assert WebhookEndpoint.objects.get().enabled


def test_rotating_replaces_the_secret_and_delete_removes_the_endpoint(api):
    created = _create(api).json()["data"]
    rotated = api.post(f"/webhooks/{created['id']}/rotate_secret")
    assert rotated.status_code == 200
    new_secret = rotated.json()["data"]["secret"]
    assert new_secret != created["secret"]
    assert WebhookEndpoint.objects.get().secret == new_secret

    assert api.delete(f"/webhooks/{created['id']}").status_code == 204
    assert api.get(f"/webhooks/{created['id']}").status_code == 404
    assert not WebhookEndpoint.objects.exists()


@pytest.mark.parametrize(
    ("body", "message"),
    [
        ({"url": "ftp://hooks.example/", "resource_types": ["State"]}, "url"),
        ({"url": "http://127.0.0.1:8080/", "resource_types": ["State"]}, "public"),
        ({"url": "http://[::1]/", "resource_types": ["State"]}, "public"),
        ({"url": "http://10.1.2.3/", "resource_types": ["State"]}, "public"),
        ({"url": "http://localhost/", "resource_types": ["State"]}, "public"),
        ({"url": "https://user:pw@hooks.example/", "resource_types": ["State"]}, "credentials"),
        ({"url": "https://hooks.example/", "resource_types": []}, "resource_types"),
        ({"url": "https://hooks.example/", "resource_types": ["Planet"]}, "resource_types"),
        ({"url": "https://hooks.example/" + "a" * 2001, "resource_types": ["State"]}, "url"),
        ({"resource_types": ["State"]}, "url"),
        (["not", "an", "object"], ""),
    ],
)
def test_a_bad_registration_is_a_400_that_says_why(api, body, message):
    answer = api.post("/webhooks", json=body)
    assert answer.status_code == 400
    assert answer.json()["error"]["code"] == "invalid_parameter"
    assert message in answer.json()["error"]["message"]
    assert not WebhookEndpoint.objects.exists()


def test_enabled_must_be_a_json_boolean_and_an_empty_patch_changes_nothing(api):
    created = _create(api).json()["data"]
    for value in (0, 1, "true", None):
        answer = api.patch(f"/webhooks/{created['id']}", json={"enabled": value})
        assert answer.status_code == 400, value
    unchanged = api.patch(f"/webhooks/{created['id']}", json={})
    assert unchanged.status_code == 200 and unchanged.json()["data"]["enabled"] is True
    paused = api.patch(f"/webhooks/{created['id']}", json={"enabled": False}).json()["data"]
    assert paused["enabled"] is False and paused["disabled_reason"] == "paused by its owner"


def test_bodies_that_are_not_json_are_refused_and_ids_out_of_range_are_404(api):
    assert (
        api.post("/webhooks", content=b"{", headers={"Content-Type": "application/json"}).json()[
            "error"
        ]["code"]
        == "bad_request"
    )
    form = api.post("/webhooks", data={"url": "https://hooks.example/"})
    assert form.status_code == 415
    assert form.json()["error"]["code"] == "unsupported_media_type"
    assert api.get(f"/webhooks/{2**63}").status_code == 404
    assert (
        api.post(f"/deliveries/{2**70}/redeliver").json()["error"]["code"] == "delivery_not_found"
    )
    assert api.get("/webhooks/abc").status_code == 404


def test_a_key_can_register_at_most_twenty(api):
    for n in range(20):
        assert _create(api, url=f"https://hooks.example/{n}").status_code == 201
    refused = _create(api, url="https://hooks.example/21")
    assert refused.status_code == 409
    assert refused.json()["error"]["code"] == "webhook_limit_reached"
    assert "at most 20" in refused.json()["error"]["message"]


def test_the_delivery_log_pages_and_redeliver_sends_again(
    api, data_repo, run_reindex, receivers, django_capture_on_commit_callbacks, served_queries
):
    created = _create(api, url=receivers.url("/log"), types=["State"]).json()["data"]
    data_repo.seed("TX", "CA", "OH")
    run_reindex()
    deliveries_fan_out(now=timezone.now())
    endpoint_flush(endpoint_id=created["id"])

    # A fixed number of queries whatever the page size (the key, the webhook, the page).
    with served_queries.at_most(3):
        first = api.get(f"/webhooks/{created['id']}/deliveries", params={"limit": 2}).json()
    assert first["meta"]["count"] == 2
    with served_queries.at_most(3):
        rest = api.get(
            f"/webhooks/{created['id']}/deliveries",
            params={"before": first["meta"]["next_before"]},
        ).json()
    log = first["data"] + rest["data"]
    states = ResourceVersion.objects.filter(resource_type="State").order_by("-sequence")
    newest_first = states.values_list("resource_key", flat=True)
    assert [d["event"]["resource_key"] for d in log] == list(newest_first)
    assert "next_before" not in rest["meta"]
    for item in log:
        assert item["status"] == "delivered"
        assert item["attempts"] == 1 and item["response_status"] == 200
        assert item["next_attempt_at"] is None and item["delivered_at"]

    with django_capture_on_commit_callbacks() as callbacks:
        answer = api.post(f"/deliveries/{log[0]['id']}/redeliver")
    assert answer.status_code == 202
    assert answer.json()["data"]["status"] == "pending"
    # Redeliver wakes the worker after the commit.
    assert len(callbacks) == 1
    endpoint_flush(endpoint_id=created["id"])
    ids = [r.json["id"] for r in receivers.received("/log")]
    assert ids.count(log[0]["id"]) == 2
    pending = api.get(f"/webhooks/{created['id']}/deliveries", params={"status": "pending"})
    assert pending.json()["data"] == []


def test_the_openapi_schema_describes_the_webhook_operations_exactly(anonymous):
    schema = anonymous.get("/schema", params={"format": "json"}).json()
    paths = schema["paths"]
    prefix = "/api/v1/compliance"
    assert set(paths[f"{prefix}/webhooks"]) == {"get", "post"}
    assert set(paths[f"{prefix}/webhooks/{{webhook_id}}"]) == {"get", "patch", "delete"}
    assert set(paths[f"{prefix}/webhooks/{{webhook_id}}/rotate_secret"]) == {"post"}
    assert set(paths[f"{prefix}/webhooks/{{webhook_id}}/deliveries"]) == {"get"}
    assert set(paths[f"{prefix}/deliveries/{{delivery_id}}/redeliver"]) == {"post"}
    components = schema["components"]["schemas"]
    created = paths[f"{prefix}/webhooks"]["post"]["responses"]["201"]
    ref = created["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    data_ref = components[ref]["properties"]["data"]["$ref"].rsplit("/", 1)[1]
    assert set(components[data_ref]["properties"]) == WEBHOOK_FIELDS | {"secret"}
    assert set(components[data_ref]["required"]) == WEBHOOK_FIELDS | {"secret"}
    request = paths[f"{prefix}/webhooks"]["post"]["requestBody"]["content"]["application/json"]
    body = components[request["schema"]["$ref"].rsplit("/", 1)[1]]
    assert set(body["required"]) == {"url", "resource_types"}
    log = paths[f"{prefix}/webhooks/{{webhook_id}}/deliveries"]["get"]["responses"]["200"]
    ref = log["content"]["application/json"]["schema"]["$ref"].rsplit("/", 1)[1]
    item_ref = components[ref]["properties"]["data"]["items"]["$ref"].rsplit("/", 1)[1]
    assert set(components[item_ref]["required"]) == {
        "id",
        "event",
        "status",
        "attempts",
        "response_status",
        "last_error",
        "next_attempt_at",
        "last_attempt_at",
        "delivered_at",
        "created_at",
    }
    assert components[item_ref]["properties"]["status"]["$ref"].endswith("StatusEnum")
